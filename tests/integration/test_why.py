"""`ragit why <path>[:Lx-Ly]` on real repositories (knowledge §22.3): line history newest first,
the introducing and last-changing commits, renames, masked hunks, typed errors, no writes."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest
from conftest import check_golden, tree_snapshot

from ragit.api import Repo
from ragit.errors import RagitError
from ragit.gitsnap.git import Git
from ragit.retrieve.why import parse_target, select_commits, why

BASE = "".join(f"line {i}\n" for i in range(1, 11))


def edit(text: str, line: int, new: str) -> str:
    rows = text.splitlines(keepends=True)
    rows[line - 1] = new + "\n"
    return "".join(rows)


@pytest.fixture
def history(git_repo):
    """app.py: added (c1), line 3 changed (c2), line 8 changed (c3), line 3 changed again (c4)."""
    r = git_repo
    c1 = r.commit("add app", {"app.py": BASE})
    t = edit(BASE, 3, "line three")
    c2 = r.commit("rename line three", {"app.py": t})
    t = edit(t, 8, "line eight")
    c3 = r.commit("touch line eight", {"app.py": t})
    t = edit(t, 3, "line 3 again")
    c4 = r.commit("restore line three", {"app.py": t})
    return r, (c1, c2, c3, c4)


def run(cli, root: Path, *args: str):
    return cli("why", *args, "--cwd", str(root), "--format", "json")


def test_range_gives_last_changed_then_introduced(history, cli):
    repo, (c1, c2, c3, c4) = history
    r = run(cli, repo.root, "app.py:L2-L4")
    assert r.code == 0, r
    data = r.json["data"]
    assert [c["sha"] for c in data["commits"]] == [c4, c2, c1]  # c3 never touched lines 2-4
    assert data["lastChanged"] == c4 and data["introduced"] == c1
    assert [c["subject"] for c in data["commits"]] == ["restore line three", "rename line three", "add app"]
    assert [c["message"] for c in data["commits"]] == ["restore line three", "rename line three", "add app"]
    assert "+line 3 again" in data["commits"][0]["hunk"] and "-line three" in data["commits"][0]["hunk"]
    assert data["commits"][0]["committedAt"] == "2026-03-08T10:00:00.000Z"
    assert (data["path"], data["startLine"], data["endLine"]) == ("app.py", 2, 4)
    assert data["memoryItems"] == [] and data["omitted"] == 0


def test_single_line_and_whole_file(history, cli):
    repo, (c1, c2, c3, c4) = history
    assert [c["sha"] for c in run(cli, repo.root, "app.py:L8").json["data"]["commits"]] == [c3, c1]
    whole = run(cli, repo.root, "app.py").json["data"]
    assert [c["sha"] for c in whole["commits"]] == [c4, c3, c2, c1]
    assert whole["startLine"] is None and whole["introduced"] == c1


def test_at_an_older_commit(history, cli):
    repo, (c1, c2, c3, c4) = history
    data = run(cli, repo.root, "app.py:L3-L3", "--at", c3[:12]).json["data"]
    assert data["sha"] == c3 and [c["sha"] for c in data["commits"]] == [c2, c1]


def test_limit_keeps_the_introducing_commit(history, cli):
    repo, (c1, c2, c3, c4) = history
    data = run(cli, repo.root, "app.py", "--limit", "2").json["data"]
    assert [c["sha"] for c in data["commits"]] == [c4, c1] and data["omitted"] == 2
    assert select_commits([1, 2, 3], 1) == ([1], 2)  # type: ignore[list-item]


def test_rename_is_followed(git_repo, cli):
    r = git_repo
    c1 = r.commit("add old", {"old.py": BASE})
    r.git("mv", "old.py", "new.py")
    c2 = r.commit("move to new.py")
    c3 = r.commit("edit after move", {"new.py": edit(BASE, 5, "line five")})
    ranged = run(cli, r.root, "new.py:L5-L5").json["data"]
    assert [c["sha"] for c in ranged["commits"]] == [c3, c1]
    assert [c["path"] for c in ranged["commits"]] == ["new.py", "old.py"]
    whole = run(cli, r.root, "new.py").json["data"]
    assert [c["sha"] for c in whole["commits"]] == [c3, c2, c1] and whole["introduced"] == c1


def test_secrets_in_hunks_and_subjects_are_masked(git_repo, cli):
    r = git_repo
    r.commit("add settings", {"settings.env": "DEBUG=1\n", "client.py": "x = 1\n"})
    token = "ghp_ABCDEFGHIJKLMNOPQRSTUVWXYZ123456"
    r.commit(f"wire the token {token}\n\nThe body names it again: {token}", {"settings.env": "DEBUG=1\nDB_PASSWORD=hunter2hunter2\n",
                                         "client.py": f'x = 1\nTOKEN = "{token}"\n'})
    for target in ("settings.env:L2", "client.py:L2", "client.py", "settings.env"):
        r_ = cli("why", target, "--cwd", str(r.root), "--format", "both")
        assert r_.code == 0, r_
        assert token not in r_.out and "hunter2hunter2" not in r_.out
    data = run(cli, r.root, "settings.env:L2").json["data"]
    assert "+DB_PASSWORD=***" in data["commits"][0]["hunk"]  # anchored rule sees the line without "+"
    assert data["redactionSummary"]["applied"] and data["redactionSummary"]["maskedCount"] >= 2
    assert "commits[0].subject" in data["redactionSummary"]["sources"]
    assert "commits[0].message" in data["redactionSummary"]["sources"]
    assert data["commits"][0]["message"].startswith("wire the token ghp_AB***\n\nThe body names it again: ghp_AB***")


@pytest.mark.parametrize("target,reason", [
    ("../outside.py", "path_outside_repo"), ("/etc/passwd", "path_outside_repo"), ("a/../../x.py", "path_outside_repo"),
    ("missing.py", "path_not_in_commit"), ("app.py:L9-L11", "lines_out_of_range"), ("app.py:L40", "lines_out_of_range"),
])
def test_not_found(history, cli, target, reason):
    repo, _ = history
    before = tree_snapshot(repo.root)
    r = run(cli, repo.root, target)
    assert r.code == 2, r
    err = r.json["error"]
    assert err["code"] == "CITATION_NOT_FOUND" and err["details"] == {"citation": target, "reason": reason}
    assert tree_snapshot(repo.root) == before


@pytest.mark.parametrize("args,field", [
    (["app.py:L5-L2"], "path"), (["app.py:L0"], "path"), (["  "], "path"), (["app.py", "--limit", "0"], "--limit"),
])
def test_invalid_input(history, cli, args, field):
    repo, _ = history
    r = run(cli, repo.root, *args)
    assert r.code == 2 and r.json["error"]["code"] == "INPUT_INVALID" and r.json["error"]["details"]["field"] == field


def test_bad_ref_is_typed(history, cli):
    repo, _ = history
    r = run(cli, repo.root, "app.py", "--at", "zzzz")
    assert r.code == 2 and r.json["error"]["code"] == "SNAPSHOT_REF_INVALID"
    r = run(cli, repo.root, "app.py", "--at", "main")
    assert r.code == 2 and r.json["error"]["details"]["resolvedSha"] == repo.head()


def test_reads_write_nothing_and_absolute_path_inside(history, cli):
    repo, (c1, c2, c3, c4) = history
    before = tree_snapshot(repo.root)
    r = run(cli, repo.root, str(repo.root / "app.py") + ":L3")
    assert r.code == 0 and r.json["data"]["path"] == "app.py"
    assert tree_snapshot(repo.root) == before


def test_dirty_worktree_warns(history, cli):
    repo, _ = history
    (repo.root / "app.py").write_text("changed\n")
    r = run(cli, repo.root, "app.py:L1")
    assert r.code == 0 and r.json["warnings"] == ["working tree has uncommitted changes; results exclude them"]


class FakeMemory:
    """A MemoryCitations: the higher layer's lookup of memory items citing the lines."""

    def __init__(self):
        self.calls = []

    def items_citing(self, path, start, end, sha):
        self.calls.append((path, start, end, sha))
        return [{"id": "dec-1", "kind": "decision", "stale": True},
                {"id": "note-2", "kind": "note", "stale": False, "summary": "uses TOKEN=abcdef123456"}]


def test_memory_items_come_from_the_caller(history):
    repo, (c1, c2, c3, c4) = history
    api = Repo.open(repo.root)
    assert api.why("app.py:L3")["memoryItems"] == []
    memory = FakeMemory()
    data = api.why("app.py:L2-L3", memory=memory)
    assert data["memoryItems"] == [{"id": "dec-1", "kind": "decision", "stale": True},
                                   {"id": "note-2", "kind": "note", "stale": False, "summary": "uses TOKEN: abcd***"}]
    assert data["redactionSummary"]["sources"] == ["memoryItems[1].summary"]
    assert memory.calls == [("app.py", 2, 3, c4)]


def test_bare_repository_by_commit(history, tmp_path):
    repo, (c1, c2, c3, c4) = history
    bare = tmp_path / "bare.git"
    subprocess.run(["git", "clone", "-q", "--bare", str(repo.root), str(bare)], check=True)
    data = why(Git(bare), "app.py:L3", commit=c4)
    assert [c["sha"] for c in data["commits"]] == [c4, c2, c1]


def test_parse_target():
    assert parse_target("./src/a.py:L3-L9") == parse_target("src/a.py:L3-L9")
    t = parse_target("a:b.py:L4")
    assert (t.path, t.start, t.end) == ("a:b.py", 4, 4)
    assert parse_target("notes:Lx").path == "notes:Lx"
    with pytest.raises(RagitError):
        parse_target("a.py:L3-L1")


def test_why_golden(history, cli):
    repo, _ = history
    r = cli("why", "app.py:L2-L4", "--cwd", str(repo.root), "--format", "json")
    assert r.code == 0
    check_golden("why_range.json", r.out.replace(str(repo.root), "<ROOT>"))
    r = cli("why", "app.py:L2-L4", "--cwd", str(repo.root), "--format", "text")
    check_golden("why_range.txt", r.out)
    assert json.loads(cli("describe", "why").out)["data"]["spec"]["mutating"] is False
