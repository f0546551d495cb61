"""`ragit ingest` on real repositories (knowledge §4, §7): modes, bases, dirty rules, reuse."""

from __future__ import annotations

import hashlib
import json

import pytest

from conftest import tree_snapshot, write_placeholder_config


def ingest(cli, repo, *args):
    return cli("ingest", *args, "--cwd", str(repo.root), "--format", "json")


def manifest(repo, sha):
    return json.loads((repo.root / ".ragit" / "manifest" / f"{sha}.json").read_text())


@pytest.fixture
def repo(git_repo):
    write_placeholder_config(git_repo.root)
    return git_repo


def test_full_then_since_adds_types(repo, cli):
    first = repo.commit("plan", {"docs/snapshot.plan.md": "---\ntype: plan\n---\n# Plan\n\nship it\n"})
    r = ingest(cli, repo, "--all")
    assert r.code == 0, r
    d = r.json["data"]
    assert list(d) == ["mode", "processed", "skipped", "masked", "commitSha", "baseSha", "manifestPath", "searchReady",
                       "plannedFiles", "deletedDocumentIds", "fullSnapshot", "dirtyCandidates", "wouldFail",
                       "reused", "chunked", "embeddedChunks", "skippedFiles", "warnings"]
    assert d["mode"] == "apply" and d["processed"] == 1 and d["searchReady"] is True and d["fullSnapshot"] is True
    repo.commit("more", {"docs/specs/cache.md": "# Cache Adapter\n\nspec body\n",
                         "docs/pbd/binding.md": "---\ntype: pbd\n---\n# Bindings\n\nphase body\n"})
    r = ingest(cli, repo, "--since", first)
    d = r.json["data"]
    assert d["processed"] == 2 and d["fullSnapshot"] is False
    types = {doc["path"]: doc["docType"] for doc in manifest(repo, repo.head())["docs"]}
    assert types == {"docs/snapshot.plan.md": "plan", "docs/specs/cache.md": "spec", "docs/pbd/binding.md": "pbd"}
    m = manifest(repo, repo.head())
    assert m["parentSha"] == first and m["ingest"] == {"mode": "since", "baseSha": first}


def test_delete_reports_document_id(repo, cli):
    repo.commit("two", {"docs/a.md": "# A\n\nalpha\n", "docs/b.md": "# B\n\nbeta\n"})
    ingest(cli, repo, "--all")
    prev = repo.head()
    repo.git("rm", "-q", "docs/b.md")
    repo.commit("drop b")
    d = ingest(cli, repo, "--since", prev).json["data"]
    assert d["deletedDocumentIds"] == [hashlib.sha1(b"docs/b.md").hexdigest()]
    assert [doc["path"] for doc in manifest(repo, repo.head())["docs"]] == ["docs/a.md"]


def test_dry_run_writes_nothing_and_creates_no_ragit_dir(git_repo, cli):
    git_repo.commit("doc", {"docs/plan.md": "# Plan\n\nship\n"})
    (git_repo.root / "ingest.json").write_text('{"all": true}')
    before = tree_snapshot(git_repo.root)
    r = cli("ingest", "--input", "ingest.json", "--dry-run", "--cwd", str(git_repo.root))
    assert r.code == 0, r
    d = r.json["data"]
    assert d["mode"] == "dry-run" and d["searchReady"] is False and d["embeddedChunks"] == 0
    assert "docs/plan.md" in d["plannedFiles"]
    assert not (git_repo.root / ".ragit").exists()
    assert tree_snapshot(git_repo.root) == before


def test_dirty_markdown_blocks_apply(repo, cli):
    repo.commit("plan", {"docs/snapshot.plan.md": "# Plan\n\nv1\n", "src/app.py": "x = 1\n"})
    repo.write("docs/snapshot.plan.md", "# Plan\n\nv2\n")
    before = tree_snapshot(repo.root)
    r = cli("ingest", "--all", "--cwd", str(repo.root))
    assert r.code == 3 and r.err == ""
    err = r.json["error"]
    assert err["code"] == "INGEST_CANDIDATES_DIRTY"
    assert err["details"] == {"dirtyCandidates": ["docs/snapshot.plan.md"]}
    assert err["recovery"] == {"command": "git status --short"}
    assert tree_snapshot(repo.root) == before
    t = cli("ingest", "--all", "--cwd", str(repo.root), "--format=text")
    assert t.out == "" and "INGEST_CANDIDATES_DIRTY" in t.err and "docs/snapshot.plan.md" in t.err
    dry = ingest(cli, repo, "--all", "--dry-run")
    assert dry.code == 0 and dry.json["data"]["wouldFail"] is True
    assert dry.json["data"]["dirtyCandidates"] == ["docs/snapshot.plan.md"]


def test_since_checks_only_changed_paths_for_dirt(repo, cli):
    """--since asks git about the changed paths only (literal pathspecs: spaces, globs)."""
    repo.commit("one", {"docs/a.md": "# A\n\nalpha\n", "docs/old.md": "# Old\n\nold\n"})
    assert ingest(cli, repo, "--all").code == 0
    base = repo.head()
    repo.commit("two", {"docs/new [x]*.md": "# New\n\nnew\n", "docs/a.md": "# A\n\nalpha 2\n"})
    repo.write("docs/old.md", "# Old\n\nedited, but not part of this change\n")
    repo.write("docs/anew.md", "# untracked, not part of this change\n")
    r = ingest(cli, repo, "--since", base)
    assert r.code == 0, r
    repo.write("docs/new [x]*.md", "# New\n\nedited\n")
    repo.commit("three", {"docs/a.md": "# A\n\nalpha 3\n"})
    repo.write("docs/a.md", "# A\n\nalpha 4\n")
    r = ingest(cli, repo, "--since", base)
    assert r.code == 3
    assert r.json["error"]["details"] == {"dirtyCandidates": ["docs/a.md"]}


def test_dirty_code_only_warns(repo, cli):
    repo.commit("code", {"docs/a.md": "# A\n\nalpha\n", "src/app.py": "x = 1\n"})
    repo.write("src/app.py", "x = 2\n")
    r = ingest(cli, repo, "--all")
    assert r.code == 0
    assert r.json["data"]["warnings"] == ["1 code file(s) have uncommitted changes; their committed content was indexed"]
    assert r.json["warnings"] == r.json["data"]["warnings"]


def test_dirty_ragit_dir_never_counts(repo, cli):
    repo.commit("doc", {"docs/a.md": "# A\n\nalpha\n"})
    (repo.root / ".ragit" / "memory").mkdir(parents=True)
    (repo.root / ".ragit" / "memory" / "x.md").write_text("# untracked\n")
    assert ingest(cli, repo, "--all").code == 0


def test_second_ingest_reuses_everything(repo, cli):
    repo.commit("doc", {"docs/a.md": "# A\n\nalpha\n", "src/app.py": "def f():\n    return 1\n"})
    first = ingest(cli, repo, "--all").json["data"]
    assert first["chunked"] == 2 and first["embeddedChunks"] > 0
    path = repo.root / ".ragit" / "manifest" / f"{repo.head()}.json"
    before = path.read_bytes()
    again = ingest(cli, repo, "--all").json["data"]
    assert again["reused"] == 2 and again["chunked"] == 0 and again["embeddedChunks"] == 0
    assert path.read_bytes() == before  # identical except createdAt → untouched


def test_blob_shared_across_branches_is_not_rechunked(repo, cli):
    repo.commit("doc", {"docs/a.md": "# A\n\nalpha\n"})
    ingest(cli, repo, "--all")
    repo.git("checkout", "-q", "-b", "other")
    repo.commit("copy", {"docs/copy.md": "# A\n\nalpha\n", "docs/new.md": "# N\n\nnew\n"})
    d = ingest(cli, repo, "--all").json["data"]
    assert d["processed"] == 3 and d["chunked"] == 1 and d["reused"] == 2


def test_unsupported_and_binary_files_are_skipped(repo, cli):
    repo.commit("mixed", {"docs/a.md": "# A\n\nalpha\n"})
    (repo.root / "docs" / "bin.md").write_bytes(b"# x\x00\x01binary")
    (repo.root / "docs" / "latin.md").write_bytes("# caf\xe9\n".encode("latin-1"))
    repo.commit("bad files")
    cli("config", "set", "ingest.supported_types", "adr,code", "--cwd", str(repo.root))
    repo.git("add", "-A")
    repo.commit("config")
    d = ingest(cli, repo, "--all").json["data"]
    reasons = {s["path"]: s["reason"] for s in d["skippedFiles"]}
    assert reasons == {"docs/a.md": "unsupported_type", "docs/bin.md": "binary", "docs/latin.md": "not_utf8"}
    assert d["processed"] == 0 and d["skipped"] == 3


def test_masking_counts_and_masks_store(repo, cli):
    repo.commit("secret", {"docs/keys.md": "# Keys\n\nAPI_KEY=abcdef123\nuse token=abcdef123456 here\n"})
    d = ingest(cli, repo, "--all").json["data"]
    assert d["masked"] == 2
    r = cli("query", "API_KEY token", "--cwd", str(repo.root), "--format", "json", "--view", "full")
    texts = " ".join(h["text"] for h in r.json["data"]["hits"])
    assert "abcdef" not in texts and "API_KEY=***" in texts


def test_since_requires_ancestor_and_indexed_base(repo, cli):
    repo.commit("a", {"docs/a.md": "# A\n\na\n"})
    base = repo.head()
    repo.commit("b", {"docs/b.md": "# B\n\nb\n"})
    r = ingest(cli, repo, "--since", base)
    assert r.code == 3 and r.json["error"]["code"] == "INGEST_BASE_NOT_INDEXED"
    assert r.json["error"]["details"] == {"mode": "since", "baseSha": base}
    repo.git("checkout", "-q", "--orphan", "island")
    repo.commit("island", {"docs/c.md": "# C\n\nc\n"})
    r = ingest(cli, repo, "--since", base)
    assert r.code == 2 and r.json["error"]["code"] == "INGEST_BASE_NOT_ANCESTOR"
    r = ingest(cli, repo, "--since", "HEAD~1")
    assert r.code == 2 and r.json["error"]["code"] == "SNAPSHOT_REF_INVALID"


def test_files_and_paths_modes(repo, cli):
    repo.commit("a", {"docs/a.md": "# A\n\na\n", "docs/b.md": "# B\n\nb\n"})
    ingest(cli, repo, "--all")
    repo.commit("edit", {"docs/a.md": "# A\n\nchanged\n", "docs/b.md": "# B\n\nchanged too\n"})
    d = ingest(cli, repo, "--files", "docs/a.*").json["data"]
    assert d["plannedFiles"] == ["docs/a.md"] and d["fullSnapshot"] is False
    m = manifest(repo, repo.head())
    assert m["ingest"]["mode"] == "files"
    d = ingest(cli, repo, "--path", "docs/b.md").json["data"]
    assert d["plannedFiles"] == ["docs/b.md"]


def test_files_and_paths_union(repo, cli):
    repo.commit("a", {"docs/a.md": "# A\n\na\n", "docs/b.md": "# B\n\nb\n", "docs/c.md": "# C\n\nc\n"})
    ingest(cli, repo, "--all")
    d = ingest(cli, repo, "--files", "docs/a.md", "--path", "docs/c.md").json["data"]
    assert d["plannedFiles"] == ["docs/a.md", "docs/c.md"]


@pytest.mark.parametrize(
    "args,reason",
    [
        (["--all", "--since", "abcd"], "mixed_input"),
        (["--since", "abcd", "--files", "*.md"], "mixed_input"),
        (["--files", "../**/*.md"], "glob_outside_repo"),
        (["--files", "/etc/*"], "glob_outside_repo"),
        (["--path", "../x.md"], "path_outside_repo"),
        (["--files", " , "], "empty"),
    ],
)
def test_ingest_input_errors(repo, cli, args, reason):
    repo.commit("a", {"docs/a.md": "# A\n\na\n"})
    before = tree_snapshot(repo.root)
    r = ingest(cli, repo, *args)
    assert r.code == 2 and r.json["error"]["details"]["reason"] == reason
    assert tree_snapshot(repo.root) == before


def test_ingest_payload_glob_outside_repo(repo, cli):
    repo.commit("a", {"docs/a.md": "# A\n\na\n"})
    (repo.root / "ingest.json").write_text('{"files": "../**/*.md"}')
    r = cli("ingest", "--input", "ingest.json", "--cwd", str(repo.root))
    assert r.code == 2 and r.json["error"]["details"]["reason"] == "glob_outside_repo"
    r = cli("ingest", "--input", "ingest.json", "--all", "--cwd", str(repo.root))
    assert r.json["error"]["details"]["reason"] == "mixed_input"


def test_unborn_head(repo, cli):
    r = ingest(cli, repo, "--all")
    assert r.code == 3 and r.json["error"]["code"] == "SNAPSHOT_NOT_INDEXED"
    assert r.json["error"]["recovery"]["command"] == "git status"


def test_outside_git(tmp_path, cli):
    r = cli("ingest", "--all", "--cwd", str(tmp_path))
    assert r.code == 3 and r.json["error"]["code"] == "GIT_REPOSITORY_REQUIRED"
    assert r.json["cwd"] == str(tmp_path)


def _force_added_ignored(repo) -> None:
    repo.commit("files", {".gitignore": "ignored/\n", "docs/a.md": "# A\n\na\n", ".github/notes.md": "# N\n",
                          "node_modules/pkg/readme.md": "# pkg\n"})
    (repo.root / "ignored").mkdir()
    (repo.root / "ignored" / "x.md").write_text("# x\n")
    (repo.root / "ignored" / "untracked.md").write_text("# u\n")
    repo.git("add", "-f", "ignored/x.md")
    repo.commit("force-add ignored")


def test_tracked_ignored_files_are_candidates_dot_paths_are_not(repo, cli):
    """Git never ignores a tracked file, so neither does ingest by default; untracked never count."""
    _force_added_ignored(repo)
    d = ingest(cli, repo, "--all").json["data"]
    assert d["plannedFiles"] == ["docs/a.md", "ignored/x.md"]


def test_respect_gitignore_drops_tracked_ignored_files(repo, cli):
    _force_added_ignored(repo)
    assert cli("config", "set", "ingest.respect_gitignore", "true", "--cwd", str(repo.root)).code == 0
    d = ingest(cli, repo, "--all").json["data"]
    assert d["plannedFiles"] == ["docs/a.md"]


def test_include_root_lists_that_part_and_the_gitignores_above_it(repo, cli):
    """Ingest lists only what ``ingest.include`` can reach, yet a ``.gitignore`` above it still
    judges it (with ``respect_gitignore``)."""
    repo.commit("files", {".gitignore": "sub/pkg/gen/\n", "sub/pkg/a.md": "# A\n\na\n", "sub/b.md": "# B\n",
                          "other/c.md": "# C\n", "sub/pkg/gen/d.md": "# D\n"})
    repo.git("add", "-f", "sub/pkg/gen/d.md")
    repo.commit("force-add generated")
    (repo.root / ".ragit" / "config.toml").write_text(
        (repo.root / ".ragit" / "config.toml").read_text() + '\n[ingest]\ninclude = ["sub/pkg/**"]\n')
    assert ingest(cli, repo, "--all", "--dry-run").json["data"]["plannedFiles"] == ["sub/pkg/a.md", "sub/pkg/gen/d.md"]
    assert cli("config", "set", "ingest.respect_gitignore", "true", "--cwd", str(repo.root)).code == 0
    assert ingest(cli, repo, "--all", "--dry-run").json["data"]["plannedFiles"] == ["sub/pkg/a.md"]


def test_crash_before_publication_keeps_previous_snapshot(repo, cli, monkeypatch):
    repo.commit("a", {"docs/a.md": "# A\n\nalpha\n"})
    ingest(cli, repo, "--all")
    old = repo.head()
    repo.commit("b", {"docs/b.md": "# B\n\nbeta\n"})
    import ragit.ingest.publish as publish

    def boom(*a, **k):
        raise RuntimeError("simulated crash")

    monkeypatch.setattr(publish, "publish_manifest", boom)
    r = ingest(cli, repo, "--all")
    assert r.code == 1 and r.json["error"]["code"] == "INTERNAL_ERROR"
    assert not (repo.root / ".ragit" / "manifest" / f"{repo.head()}.json").exists()
    monkeypatch.undo()
    r = cli("query", "alpha", "--at", old, "--cwd", str(repo.root), "--format", "json")
    assert r.code == 0 and r.json["data"]["hits"]
    assert not list((repo.root / ".ragit" / "manifest").glob("*.tmp"))


def test_since_and_full_answer_identically(repo, cli):
    """Incremental snapshots derive their packed rows from the base; the answers must not change."""
    repo.commit("a", {"docs/a.md": "# A\n\nalpha token rotation\n", "docs/b.md": "# B\n\nbeta store\n",
                      "src/x.py": "def rotate_token():\n    return 1\n"})
    ingest(cli, repo, "--all")
    base = repo.head()
    repo.git("rm", "-q", "docs/b.md")
    repo.commit("b", {"docs/a.md": "# A\n\nalpha token rotation changed\n", "docs/c.md": "# C\n\nnew token doc\n"})
    assert ingest(cli, repo, "--since", base).code == 0
    q = ["query", "token rotation store", "--cwd", str(repo.root), "--format", "json", "--explain", "--top-k", "10"]
    incremental = cli(*q).out
    # a full ingest of the same HEAD builds the rows from scratch over the same store content
    # (BM25 statistics cover the whole store, so the store must be the same to compare)
    assert ingest(cli, repo, "--all").code == 0
    assert cli(*q).out == incremental
