"""`.gitignore` append rules and config create/merge of `ragit init`."""

from __future__ import annotations

import tomllib

import pytest

from ragit.bootstrap import run_init
from ragit.bootstrap.configmerge import merged_config, render_new, wanted_config
from ragit.bootstrap.gitignore import updated_gitignore
from ragit.config import DEFAULTS


@pytest.mark.parametrize("before,after", [
    (None, ".ragit/store/\n.ragit/cache/\n.ragit/sessions/\n"),
    ("", ".ragit/store/\n.ragit/cache/\n.ragit/sessions/\n"),
    ("node_modules/\n.ragit/store/\n", "node_modules/\n.ragit/store/\n.ragit/cache/\n.ragit/sessions/\n"),
    ("dist", "dist\n.ragit/store/\n.ragit/cache/\n.ragit/sessions/\n"),
    ("/.ragit/store\n.ragit/cache/\n", "/.ragit/store\n.ragit/cache/\n.ragit/sessions/\n"),
    ("# .ragit/store/\n", "# .ragit/store/\n.ragit/store/\n.ragit/cache/\n.ragit/sessions/\n"),
])
def test_gitignore_appends_only_missing_lines(before, after):
    assert updated_gitignore(before) == after


def test_complete_gitignore_is_left_alone():
    assert updated_gitignore(".ragit/sessions/\n.ragit/cache/\n.ragit/store/") is None


def test_gitignore_files_on_disk(git_repo):
    path = git_repo.write(".gitignore", "node_modules/\n.ragit/store/\n")
    run_init(git_repo.root, yes=True)
    assert path.read_text() == "node_modules/\n.ragit/store/\n.ragit/cache/\n.ragit/sessions/\n"
    mtime = path.stat().st_mtime_ns
    run_init(git_repo.root, yes=True)
    assert path.stat().st_mtime_ns == mtime


def test_empty_gitignore_on_disk(git_repo):
    path = git_repo.write(".gitignore", "")
    run_init(git_repo.root, yes=True)
    assert path.read_text() == ".ragit/store/\n.ragit/cache/\n.ragit/sessions/\n"


def test_complete_gitignore_on_disk_is_not_rewritten(git_repo):
    path = git_repo.write(".gitignore", ".ragit/store/\n.ragit/cache/\n.ragit/sessions/\n")
    mtime = path.stat().st_mtime_ns
    run_init(git_repo.root, yes=True)
    assert path.stat().st_mtime_ns == mtime


WANTED = wanted_config("demo", "existing", "balanced")


def test_new_config_holds_every_default_key():
    parsed = tomllib.loads(render_new(WANTED))
    for section, table in DEFAULTS.items():
        assert set(parsed[section]) == set(table), section
    assert parsed["project"]["name"] == "demo"
    assert parsed["project"]["mode"] == "existing"


def test_merge_keeps_comments_and_values():
    text = "# mine\n\n[project]\nname = \"custom\"  # keep\n\n[retrieval]\nalpha = 0.5\n"
    merged = merged_config(text, WANTED)
    assert merged.startswith("# mine\n\n[project]\nname = \"custom\"  # keep\n")
    parsed = tomllib.loads(merged)
    assert parsed["project"] == {"name": "custom", "default_branch": "main", "mode": "existing"}
    assert parsed["retrieval"]["alpha"] == 0.5
    assert parsed["retrieval"]["top_k"] == 5
    assert parsed["sessions"]["dreaming"] is True
    assert merged_config(merged, WANTED) is None


def test_merge_keeps_unknown_sections():
    merged = merged_config("[team]\nowner = \"ops\"\n", WANTED)
    assert tomllib.loads(merged)["team"] == {"owner": "ops"}


def test_merge_falls_back_to_canonical_render_for_dotted_keys():
    merged = merged_config('project.name = "dotted"\n', WANTED)
    parsed = tomllib.loads(merged)
    assert parsed["project"]["name"] == "dotted"
    assert parsed["project"]["mode"] == "existing"


def test_existing_mode_in_config_is_not_replaced(git_repo):
    path = git_repo.write(".ragit/config.toml", '[project]\nmode = "docs-heavy"\n')
    run_init(git_repo.root, yes=True)
    assert tomllib.loads(path.read_text())["project"]["mode"] == "docs-heavy"
