"""`ragit init` end to end on real directories and Git repositories (knowledge §13 checks)."""

from __future__ import annotations

import hashlib
import io
import json
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

from ragit.bootstrap import render_init_text, run_init
from ragit.errors import RagitError

TEMPLATE_NAMES = [
    "adr", "prd", "srs", "spec", "plan", "ddd", "glossary", "pbd", "_common",
]


def tree_state(root: Path) -> dict[str, tuple[bytes, int] | None]:
    """Every file (bytes, mtime) and directory (None) under ``root``."""
    state: dict[str, tuple[bytes, int] | None] = {}
    for path in sorted(root.rglob("*")):
        rel = path.relative_to(root).as_posix()
        state[rel] = None if path.is_dir() else (path.read_bytes(), path.stat().st_mtime_ns)
    return state


@pytest.fixture
def plain_dir(tmp_path, monkeypatch) -> Path:
    """A directory outside any Git repository."""
    monkeypatch.setenv("GIT_CEILING_DIRECTORIES", str(tmp_path))
    path = tmp_path / "plain"
    path.mkdir()
    return path


def init(root: Path, **kwargs):
    kwargs.setdefault("yes", True)
    return run_init(root, **kwargs)


# ---------------------------------------------------------------- repository checks

def test_empty_directory_with_git_init_is_initialised_as_empty(plain_dir):
    result = init(plain_dir, git_init=True)
    assert (plain_dir / ".git").is_dir()
    assert result.root == plain_dir.resolve()
    assert result.data["repositoryMode"] == "empty"
    assert result.data["bootstrap"]["git"] == {"wasRepository": False, "initialized": True}
    assert result.data["scan"]["gitDetected"] is True


def test_non_git_without_git_init_fails_and_writes_nothing(plain_dir):
    (plain_dir / "README.md").write_text("# Hi\n")
    before = tree_state(plain_dir)
    with pytest.raises(RagitError) as info:
        init(plain_dir)
    assert info.value.code == "GIT_REPOSITORY_REQUIRED"
    assert info.value.exit_code == 3
    assert info.value.details == {"cwd": str(plain_dir.resolve())}
    assert info.value.recovery == "ragit init --yes --git-init"
    assert tree_state(plain_dir) == before


def test_nested_cwd_is_anchored_at_the_git_root(git_repo):
    nested = git_repo.root / "src" / "deep"
    nested.mkdir(parents=True)
    result = init(nested)
    assert result.root == git_repo.root.resolve()
    assert (git_repo.root / ".ragit" / "config.toml").is_file()
    assert (git_repo.root / "AGENTS.md").is_file()
    assert not (nested / ".ragit").exists()


def test_missing_cwd_is_input_invalid(tmp_path):
    with pytest.raises(RagitError) as info:
        init(tmp_path / "nope")
    assert info.value.code == "INPUT_INVALID"
    assert info.value.details["reason"] == "file_not_found"


# ---------------------------------------------------------------- options and interaction

@pytest.mark.parametrize("field,kwargs", [("--mode", {"mode": "huge"}), ("--strategy", {"strategy": "max"})])
def test_bad_mode_or_strategy_is_input_invalid_before_any_write(git_repo, field, kwargs):
    before = tree_state(git_repo.root)
    with pytest.raises(RagitError) as info:
        init(git_repo.root, **kwargs)
    assert info.value.code == "INPUT_INVALID"
    assert info.value.details["field"] == field
    assert info.value.details["reason"] == "not_one_of"
    assert info.value.recovery == "ragit describe init"
    assert tree_state(git_repo.root) == before


def test_mode_and_strategy_are_trimmed_and_lower_cased(git_repo):
    result = init(git_repo.root, mode="  Monorepo ", strategy=" FULL", dry_run=True)
    assert result.data["repositoryMode"] == "monorepo"
    assert result.data["strategy"] == "full"


def test_interactive_without_terminal_is_tty_required(git_repo, monkeypatch):
    monkeypatch.setattr(sys, "stdin", io.StringIO(""))
    before = tree_state(git_repo.root)
    with pytest.raises(RagitError) as info:
        run_init(git_repo.root, yes=False)
    assert info.value.code == "INPUT_INVALID"
    assert info.value.details == {"field": "--yes", "reason": "tty_required"}
    assert info.value.recovery == "ragit init --yes"
    assert tree_state(git_repo.root) == before


def test_interactive_prompt_empty_answer_runs_git_init(plain_dir):
    asked = []
    result = run_init(plain_dir, yes=False, confirm=lambda q: asked.append(q) or "")
    assert asked == ["Not a Git repository. Run git init? [Y/n]"]
    assert result.data["executionMode"] == "interactive"
    assert result.data["bootstrap"]["git"]["initialized"] is True
    assert (plain_dir / ".git").is_dir()


@pytest.mark.parametrize("answer", ["n", "No", "maybe", False])
def test_interactive_prompt_declined_is_repository_required(plain_dir, answer):
    with pytest.raises(RagitError) as info:
        run_init(plain_dir, yes=False, confirm=lambda q: answer)
    assert info.value.code == "GIT_REPOSITORY_REQUIRED"
    assert list(plain_dir.iterdir()) == []


def test_interactive_in_a_repository_asks_nothing(git_repo):
    result = run_init(git_repo.root, yes=False, confirm=lambda q: pytest.fail(f"asked {q!r}"))
    assert result.data["executionMode"] == "interactive"


def test_progress_prints_the_eight_steps(git_repo):
    lines: list[str] = []
    init(git_repo.root, progress=lines.append)
    assert lines == [
        "[1/8] check repository", "[2/8] scan", "[3/8] detect mode", "[4/8] document census",
        "[5/8] knowledge map", "[6/8] plan", "[7/8] apply", "[8/8] report",
    ]


# ---------------------------------------------------------------- dry-run

def test_dry_run_creates_nothing_and_reports_the_plan(git_repo):
    git_repo.write("README.md", "# Demo\n")
    before = tree_state(git_repo.root)
    result = init(git_repo.root, dry_run=True)
    assert tree_state(git_repo.root) == before
    data = result.data
    assert [a["type"] for a in data["actions"]["planned"]] == ["create"] * 5
    assert [a["path"] for a in data["actions"]["planned"]] == [
        "RAGIT.md", "docs/workspace-map.md", "docs/ragit/ingestion-policy.md", "docs/known-gaps.md",
        "docs/adr/README.md",
    ]
    assert data["actions"]["created"] == []  # a dry run creates nothing, it only plans
    assert data["bootstrap"]["agents"] == {"path": "AGENTS.md", "mode": "planned", "sha256": None}
    assert data["bootstrap"]["storage"]["status"] == "planned"
    assert data["bootstrap"]["guide"]["createdFiles"] == []
    assert data["nextActions"] == ["rerun ragit init without --dry-run to apply changes"]


def test_dry_run_with_git_init_does_not_run_git_init(plain_dir):
    result = init(plain_dir, git_init=True, dry_run=True)
    assert list(plain_dir.iterdir()) == []
    assert result.data["bootstrap"]["git"] == {"wasRepository": False, "initialized": False}
    assert result.data["scan"]["gitDetected"] is False


def test_dry_run_after_a_real_run_reports_loaded_state(git_repo):
    init(git_repo.root, create_store=lambda d: (d / "ragit.db").write_bytes(b""))
    before = tree_state(git_repo.root)
    data = init(git_repo.root, dry_run=True).data
    assert tree_state(git_repo.root) == before
    agents = data["bootstrap"]["agents"]
    assert agents["mode"] == "loaded"
    assert agents["sha256"] == hashlib.sha256((git_repo.root / "AGENTS.md").read_bytes()).hexdigest()
    assert data["bootstrap"]["guide"]["createdFiles"] == []
    assert data["bootstrap"]["storage"]["status"] == "loaded"


# ---------------------------------------------------------------- reuse and plans

def test_existing_docs_are_reused_byte_identical(git_repo):
    originals = {
        "README.md": "# Shop\n\nSells things.\n",
        "CONTRIBUTING.md": "# Contributing\n\nRun `make test`.\n",
        "docs/architecture.md": "# Architecture\n\nThree services.\r\n",
    }
    for path, text in originals.items():
        (git_repo.root / path).parent.mkdir(parents=True, exist_ok=True)
        (git_repo.root / path).write_bytes(text.encode())
    git_repo.commit("docs")
    data = init(git_repo.root).data
    for path, text in originals.items():
        assert (git_repo.root / path).read_bytes() == text.encode()
    reused = data["actions"]["reused"]
    assert reused[:2] == ["CONTRIBUTING.md", "README.md"]
    assert "docs/architecture.md" in reused
    assert data["coverage"]["projectOverview"] == {"status": "sufficient", "sources": ["README.md"]}
    assert data["coverage"]["localDevelopmentGuide"] == {"status": "sufficient", "sources": ["CONTRIBUTING.md"]}
    assert data["coverage"]["architectureRationale"]["status"] == "sufficient"


def test_existing_foundation_doc_is_reused_not_overwritten(git_repo):
    git_repo.write("RAGIT.md", "# mine\n")
    data = init(git_repo.root).data
    first = data["actions"]["planned"][0]
    assert first["type"] == "reuse" and first["path"] == "RAGIT.md"
    assert data["actions"]["reused"][0] == "RAGIT.md"
    assert "RAGIT.md" not in data["actions"]["created"]
    assert (git_repo.root / "RAGIT.md").read_text() == "# mine\n"


def test_docs_heavy_repository_creates_at_most_two_files(git_repo):
    git_repo.commit("docs", {
        "README.md": "# Handbook\n",
        "CONTRIBUTING.md": "# Contributing\n",
        "docs/architecture.md": "# Architecture\n",
        "docs/adr/0001-use-sqlite.md": "# ADR 1: Use SQLite\n",
        "docs/workspace-map.md": "# Workspace\n",
        "docs/ingestion-policy.md": "# What we index\n",
        "docs/runbook.md": "# Runbook\n",
        "docs/glossary.md": "# Glossary\n",
        "docs/faq.md": "# FAQ\n",
        "tools/build.py": "print('build')\n",
    })
    data = init(git_repo.root).data
    assert data["repositoryMode"] == "docs-heavy"
    assert len(data["actions"]["created"]) <= 2
    for path in data["actions"]["created"]:
        assert (git_repo.root / path).is_file()


def test_monorepo_gets_a_workspace_map(git_repo):
    git_repo.commit("mono", {
        "package.json": json.dumps({"packageManager": "pnpm@9.0.0", "devDependencies": {"turbo": "2"}}),
        "pnpm-workspace.yaml": "packages:\n  - apps/*\n",
        "apps/web/index.ts": "export {}\n",
        "packages/ui/index.tsx": "export {}\n",
    })
    data = init(git_repo.root).data
    assert data["repositoryMode"] == "monorepo"
    assert data["scan"]["apps"] == ["apps/web"]
    assert data["scan"]["packages"] == ["packages/ui"]
    assert data["scan"]["packageManager"] == "pnpm"
    assert "docs/workspace-map.md" in data["actions"]["created"]
    workspace = next(a for a in data["actions"]["planned"] if a["path"] == "docs/workspace-map.md")
    assert workspace["confidence"] == "high"
    text = (git_repo.root / "docs/workspace-map.md").read_text()
    assert "- `apps/web`" in text and "- `packages/ui`" in text


def test_drafts_carry_the_draft_front_matter(git_repo):
    data = init(git_repo.root).data
    for action in data["actions"]["planned"]:
        text = (git_repo.root / action["path"]).read_text()
        assert text.startswith(
            "---\nstatus: draft\nsource: inferred-from-repository\n"
            f"confidence: {action['confidence']}\nlast_generated_by: ragit init\n---\n"
        )


def test_second_run_creates_nothing(git_repo):
    init(git_repo.root)
    before = {p: s for p, s in tree_state(git_repo.root).items() if p != ".ragit/guide/guide-index.json"}
    data = init(git_repo.root).data
    after = {p: s for p, s in tree_state(git_repo.root).items() if p != ".ragit/guide/guide-index.json"}
    assert after == before
    assert data["actions"]["created"] == []
    assert data["bootstrap"]["guide"]["createdFiles"] == []
    assert data["bootstrap"]["agents"]["mode"] == "loaded"


# ---------------------------------------------------------------- control plane

def test_control_plane_layout(git_repo):
    init(git_repo.root)
    ragit = git_repo.root / ".ragit"
    for rel in [
        "manifest", "memory/sessions", "memory/working", "artifacts/session", "artifacts/harness",
        "artifacts/evidence", "store", "cache", "sessions", "guide/templates",
    ]:
        assert (ragit / rel).is_dir(), rel
    assert sorted(p.name for p in (ragit / "guide/templates").iterdir()) == sorted(
        f"{name}.template.md" for name in TEMPLATE_NAMES
    )
    assert (git_repo.root / ".gitignore").read_text() == ".ragit/store/\n.ragit/cache/\n.ragit/sessions/\n"
    ignored = subprocess.run(
        ["git", "check-ignore", ".ragit/store/ragit.db", ".ragit/cache/x", ".ragit/sessions/sessions.db"],
        cwd=git_repo.root, capture_output=True, text=True, check=True,
    ).stdout.split()
    assert len(ignored) == 3


def test_config_is_created_with_detected_values(git_repo):
    data = init(git_repo.root, strategy="minimal").data
    config = tomllib.loads((git_repo.root / ".ragit/config.toml").read_text())
    assert config["project"]["name"] == git_repo.root.name
    assert config["project"]["mode"] == data["repositoryMode"]
    assert config["init"] == {"strategy": "minimal", "merge_existing": True}
    assert config["storage"]["backend"] == "sqlite"


def test_existing_config_keeps_edits_and_gains_missing_keys(git_repo):
    path = git_repo.write(".ragit/config.toml", '# team settings\n[retrieval]\ntop_k = 9  # more hits\n')
    init(git_repo.root)
    text = path.read_text()
    assert text.startswith("# team settings\n[retrieval]\ntop_k = 9  # more hits\n")
    config = tomllib.loads(text)
    assert config["retrieval"]["top_k"] == 9
    assert config["retrieval"]["alpha"] == 0.7
    assert config["project"]["name"] == git_repo.root.name
    mtime = path.stat().st_mtime_ns
    init(git_repo.root)
    assert path.read_text() == text and path.stat().st_mtime_ns == mtime


def test_invalid_config_fails_before_any_write(git_repo):
    git_repo.write(".ragit/config.toml", "[retrieval]\ntop_k = 'many'\n")
    before = tree_state(git_repo.root)
    with pytest.raises(RagitError) as info:
        init(git_repo.root)
    assert info.value.code == "CONFIG_INVALID"
    assert tree_state(git_repo.root) == before


def test_existing_agents_md_is_loaded_and_untouched(git_repo):
    seed = "## [B1] Custom\n## [B2] Another\n## [Rule 1] Rule"
    git_repo.write("AGENTS.md", seed)
    data = init(git_repo.root).data
    assert (git_repo.root / "AGENTS.md").read_text() == seed
    agents = data["bootstrap"]["agents"]
    assert agents["mode"] == "loaded"
    assert agents["sha256"] == hashlib.sha256(seed.encode()).hexdigest()
    index = json.loads((git_repo.root / ".ragit/guide/guide-index.json").read_text())
    assert [b["id"] for b in index["boundaries"]] == ["[B1]", "[B2]", "Rule 1"]
    assert index["source"] == {"path": "AGENTS.md", "mode": "loaded", "sha256": agents["sha256"]}


def test_created_agents_md_has_no_persona_and_indexed_boundaries(git_repo):
    data = init(git_repo.root).data
    text = (git_repo.root / "AGENTS.md").read_text()
    assert data["bootstrap"]["agents"]["mode"] == "created"
    assert "your name is" not in text.lower()
    index = json.loads((git_repo.root / ".ragit/guide/guide-index.json").read_text())
    assert index["boundaries"] and index["sections"]


def test_store_callback_and_status(git_repo):
    calls: list[Path] = []

    def create_store(store_dir: Path) -> None:
        calls.append(store_dir)
        (store_dir / "ragit.db").write_bytes(b"")

    first = init(git_repo.root, create_store=create_store).data["bootstrap"]["storage"]
    assert calls == [git_repo.root.resolve() / ".ragit" / "store"]
    assert first == {"backend": "sqlite", "status": "created", "searchReady": False, "migrationRequired": False}
    second = init(git_repo.root, create_store=create_store).data["bootstrap"]["storage"]
    assert second["status"] == "loaded"
    assert len(calls) == 1


def test_legacy_json_store_requires_migration(git_repo):
    git_repo.write(".ragit/store/index.json", json.dumps({"documents": {}, "chunks": {}}))
    data = init(git_repo.root).data
    assert data["bootstrap"]["storage"]["migrationRequired"] is True
    assert data["nextActions"] == ["ragit migrate from-json-store", "ragit hooks install", "ragit ingest --all"]


def test_default_next_actions(git_repo):
    assert init(git_repo.root).data["nextActions"] == [
        "commit the generated drafts", "ragit ingest --all", "ragit status",
        'ragit query "<question>"', "ragit hooks install",
    ]


# ---------------------------------------------------------------- output shape

def test_json_data_key_order(git_repo):
    data = init(git_repo.root).data
    assert list(data) == [
        "executionMode", "repositoryMode", "strategy", "scan", "coverage", "maturity",
        "knowledgeMap", "actions", "bootstrap", "nextActions",
    ]
    assert list(data["scan"]) == [
        "gitDetected", "packageManager", "languages", "frameworks", "monorepo", "workspaceFiles",
        "apps", "packages", "codeFileCount", "docFileCount", "existingDocs", "ciFiles", "infraFiles",
        "buildFiles",
    ]
    assert list(data["coverage"]) == [
        "projectOverview", "localDevelopmentGuide", "architectureRationale", "decisionRecords",
        "packageOwnershipMap", "ingestionPolicy",
    ]
    assert list(data["maturity"]) == [
        "discoverability", "architectureClarity", "operationalReadiness", "agentReadability",
    ]
    assert [e["slot"] for e in data["knowledgeMap"]] == [
        "project", "product", "architecture", "workspace", "rules", "decisions", "operations",
        "glossary", "ingestion-policy",
    ]
    assert list(data["actions"]) == ["mergeExisting", "planned", "created", "reused", "skipped"]
    assert list(data["actions"]["planned"][0]) == ["type", "path", "reason", "confidence", "sourcePaths"]
    bootstrap = data["bootstrap"]
    assert list(bootstrap) == ["git", "agents", "guide", "storage"]
    assert list(bootstrap["git"]) == ["wasRepository", "initialized"]
    assert list(bootstrap["agents"]) == ["path", "mode", "sha256"]
    assert list(bootstrap["guide"]) == ["indexPath", "createdFiles", "skippedFiles", "templates"]
    assert list(bootstrap["storage"]) == ["backend", "status", "searchReady", "migrationRequired"]
    json.dumps(data)  # plain JSON types only


def test_text_rendering_layout(git_repo):
    git_repo.write("README.md", "# Demo\n")
    text = render_init_text(init(git_repo.root, strategy="minimal").data)
    lines = text.split("\n")
    assert lines[:7] == [
        "# ragit init",
        "- execution_mode: non-interactive",
        "- repository_mode: empty",
        "- strategy: minimal",
        "- package_manager: unknown",
        "- monorepo: no",
        "- code_docs: 0/1",
    ]
    assert "## Coverage" in lines
    assert "- projectOverview: sufficient (README.md)" in lines
    assert "- packageOwnershipMap: missing (none)" in lines
    planned = lines[lines.index("## Planned Actions") + 1:lines.index("## Bootstrap")]
    assert "= README.md" in planned and "+ RAGIT.md" in planned
    assert lines.index("## Bootstrap") < lines.index("## Next Actions")
    assert lines[-1] == "- ragit hooks install"


def test_text_rendering_of_empty_action_lists(git_repo):
    init(git_repo.root)
    data = init(git_repo.root).data
    data["actions"]["reused"] = []
    lines = render_init_text(data).split("\n")
    planned = lines[lines.index("## Planned Actions") + 1:lines.index("## Bootstrap")]
    assert planned == ["= none", "+ none", ""]
