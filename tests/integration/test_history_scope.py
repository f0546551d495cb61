"""`query --scope history` (knowledge §12.8): commit messages and masked hunks from the history
index that `ingest` keeps; found by message and by code, scoped to the snapshot, incremental,
read-only, secrets never stored or shown."""

from __future__ import annotations

import json
import sqlite3

import pytest
from conftest import tree_snapshot, write_placeholder_config

from ragit.gitsnap.git import Git
from ragit.history import index as history_index
from ragit.ingest.ids import citation_id

SECRET = "ghp_ABCDEFGHIJKLMNOPQRSTUVWXYZ987654"


def with_history(root) -> None:
    """The placeholder config plus ``history.index = true`` (the index is opt-in)."""
    write_placeholder_config(root)
    with (root / ".ragit" / "config.toml").open("a", encoding="utf-8") as fh:
        fh.write("\n[history]\nindex = true\n")


def ingest(cli, root) -> dict:
    r = cli("ingest", "--cwd", str(root), "--format", "json")
    assert r.code == 0, r
    return r.json["data"]


def query(cli, root, question, *extra):
    r = cli("query", question, "--scope", "history", "--cwd", str(root), "--format", "json", "--view", "full",
            *extra)
    assert r.code == 0, r
    return r.json["data"]


@pytest.fixture
def repo(git_repo, cli):
    with_history(git_repo.root)
    git_repo.commit("Add the billing ledger", {"billing.py": "def total(items):\n    return sum(items)\n"})
    git_repo.commit("Fix rounding of invoice totals in the ledger",
                    {"billing.py": "def total(items):\n    return round(sum(items), 2)\n\n\n"
                                   "def apply_discount(amount, percent):\n    return amount * (1 - percent / 100)\n"})
    git_repo.commit(f"Configure the deploy token {SECRET}",
                    {"deploy.env": f"REGION=eu\nDEPLOY_TOKEN={SECRET}\n", "notes.md": "# Notes\n\nNothing here.\n"})
    ingest(cli, git_repo.root)
    return git_repo


def test_finds_a_commit_by_its_message(repo, cli):
    sha = repo.git("rev-parse", "HEAD~1")
    data = query(cli, repo.root, "invoice rounding")
    assert data["scope"] == "history"
    top = data["hits"][0]
    assert top["path"] == sha[:12] and top["startLine"] is None
    assert top["sectionTitle"] == "Fix rounding of invoice totals in the ledger"
    assert (top["scope"], top["originType"], top["trust"], top["authority"]) == ("history", "commit", "repository",
                                                                                 "history")
    assert top["artifactId"] is None and top["artifactKind"] is None
    assert top["citation"] == {"id": citation_id("commit", sha, sha), "sourceType": "commit", "sourceId": sha,
                               "sourceVersion": sha, "sourceSha": sha}


def test_finds_a_hunk_by_its_code(repo, cli):
    sha = repo.git("rev-parse", "HEAD~1")
    data = query(cli, repo.root, "apply_discount percent")
    hunk = next(h for h in data["hits"] if h["path"] == "billing.py")
    assert hunk["citation"]["sourceVersion"] == sha and hunk["citation"]["sourceType"] == "commit"
    assert hunk["citation"]["sourceId"] == f"{sha}:billing.py:1"
    assert (hunk["startLine"], hunk["endLine"]) == (1, 6)  # the hunk's new side
    assert "+def apply_discount(amount, percent):" in hunk["text"]
    assert hunk["sectionTitle"] == "Fix rounding of invoice totals in the ledger"


def test_recency_comes_from_the_committer_time(repo, cli, monkeypatch):
    monkeypatch.setenv("RAGIT_NOW", "2026-03-20T10:00:00.000Z")  # 12 days after the fixture's commits
    r = cli("query", "invoice rounding", "--scope", "history", "--explain", "--cwd", str(repo.root),
            "--format", "json")
    b = r.json["data"]["hits"][0]["scoreBreakdown"]
    assert b["recency"]["score"] == pytest.approx(0.6) and b["authority"]["score"] == 0.6


def test_secrets_are_never_stored_or_shown(repo, cli):
    data = query(cli, repo.root, "deploy token region")
    assert data["hits"] and any(h["path"] == "deploy.env" for h in data["hits"])
    text = json.dumps(data)
    assert SECRET not in text and "DEPLOY_TOKEN=ghp_AB***" in text
    raw = history_index.index_file(repo.root).read_bytes()
    assert SECRET.encode() not in raw and SECRET[4:20].encode() not in raw


def test_reads_write_nothing(repo, cli):
    before = tree_snapshot(repo.root)
    query(cli, repo.root, "invoice rounding")
    assert cli("context", "pack", "invoice rounding", "--scope", "history", "--cwd", str(repo.root),
               "--format", "json").code == 0
    assert tree_snapshot(repo.root) == before


def test_incremental_one_new_commit_indexes_one(repo, cli, monkeypatch):
    assert history_index.indexed_commits(repo.root) == 3
    read = []
    real = history_index.read_commits
    monkeypatch.setattr(history_index, "read_commits", lambda git, shas: read.append(list(shas)) or real(git, shas))
    repo.commit("Teach the ledger about refunds", {"billing.py": "def refund(x):\n    return -x\n"})
    ingest(cli, repo.root)
    assert read == [[repo.head()]] and history_index.indexed_commits(repo.root) == 4
    ingest(cli, repo.root)  # nothing new: nothing read
    assert read == [[repo.head()]]
    assert any(h["path"] == repo.head()[:12] for h in query(cli, repo.root, "refunds")["hits"])


def test_scoped_to_the_snapshot_commit(repo, cli):
    old = repo.head()
    repo.commit("Teach the ledger about refunds", {"billing.py": "def refund(x):\n    return -x\n"})
    ingest(cli, repo.root)
    assert query(cli, repo.root, "refunds", "--at", old[:12])["hits"] == []
    assert query(cli, repo.root, "refunds")["hits"]


def test_absent_index_warns_and_finds_nothing(repo, cli):
    history_index.index_file(repo.root).unlink()
    data = query(cli, repo.root, "invoice rounding")
    assert data["hits"] == [] and data["warnings"] == [history_index.ABSENT]


def test_other_scopes_have_no_history(repo, cli):
    for scope in ("durable", "all"):
        r = cli("query", "invoice rounding", "--scope", scope, "--cwd", str(repo.root), "--format", "json")
        assert all(h["scope"] != "history" for h in r.json["data"]["hits"])


def test_masking_version_change_rebuilds(repo, monkeypatch):
    path = history_index.index_file(repo.root)
    db = sqlite3.connect(path)
    db.execute("UPDATE meta SET value = 'old' WHERE key = 'version'")
    db.commit()
    db.close()
    found = history_index.search(Git(repo.root), repo.root, repo.head(), ["ledger"])
    assert found.entries == [] and "another ragit version" in (found.warning or "")
    assert history_index.update_index(Git(repo.root), repo.root, repo.head()) == 3
    assert history_index.search(Git(repo.root), repo.root, repo.head(), ["ledger"]).entries


def test_large_commits_are_bounded(git_repo, monkeypatch):
    monkeypatch.setattr(history_index, "MAX_FILES", 2)
    files = {f"f{i}.py": "".join(f"x{j} = {j}\n" for j in range(100)) for i in range(4)}
    git_repo.commit("many files", files)
    history_index.update_index(Git(git_repo.root), git_repo.root, git_repo.head())
    db = sqlite3.connect(history_index.index_file(git_repo.root))
    rows = db.execute("SELECT kind, path, text FROM entries ORDER BY ordinal").fetchall()
    assert [(k, p) for k, p, _ in rows] == [("message", git_repo.head()[:12]), ("hunk", "f0.py"), ("hunk", "f1.py")]
    assert rows[1][2].split("\n")[-1] == f"... ({101 - history_index.MAX_HUNK_LINES} more lines)"


def test_describe_and_mcp_list_the_scope(cli):
    spec = json.loads(cli("describe", "query").out)["data"]["spec"]
    scope = {o["name"]: o for o in spec["options"]}["--scope"]
    assert "history" in scope["enum"]
    from ragit.contract.payloads import SCOPES

    assert "history" in SCOPES


def test_a_file_name_that_is_not_utf8_is_indexed_readably(git_repo, cli):
    import os

    with_history(git_repo.root)
    git_repo.write("a.md", "# A\n")
    with open(os.fsencode(git_repo.root) + b"/caf\xe9.py", "wb") as fh:
        fh.write(b"def brew():\n    return 'espresso'\n")
    git_repo.commit("add the coffee maker")
    ingest(cli, git_repo.root)
    hits = query(cli, git_repo.root, "espresso brew")["hits"]
    assert any(h["path"] == "caf\ufffd.py" for h in hits)
    r = cli("why", "a.md", "--cwd", str(git_repo.root), "--format", "json")
    assert r.code == 0


def test_the_index_is_opt_in(git_repo, cli):
    write_placeholder_config(git_repo.root)
    git_repo.commit("Add the billing ledger", {"billing.py": "def total(items):\n    return sum(items)\n"})
    ingest(cli, git_repo.root)
    assert not (git_repo.root / history_index.INDEX_DIR).exists()
    data = query(cli, git_repo.root, "billing ledger")
    assert data["hits"] == [] and data["warnings"] == [history_index.ABSENT]
