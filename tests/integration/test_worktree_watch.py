"""A warm process reuses its dirty listing only while nothing changed (ragit.gitsnap.watch).

Every read through a watch is compared with a fresh ``git status`` of the same tree: reusing
the listing must never change an answer, only how often git runs.
"""

from __future__ import annotations

import os
import shutil
import sys

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from ragit.gitsnap.context import PendingContext
from ragit.gitsnap.dirty import dirty_paths
from ragit.gitsnap.git import Git
from ragit.gitsnap.watch import MAX_AGE_S, WorktreeWatch

pytestmark = pytest.mark.skipif(sys.platform != "linux", reason="inotify is Linux-only")


def _fresh(repo) -> list[str]:
    return dirty_paths(Git(repo.root))


def _watched(repo, watch: WorktreeWatch) -> list[str]:
    return PendingContext(Git(repo.root), watch=watch).result().dirty


def _check(repo, watch: WorktreeWatch) -> list[str]:
    seen = _watched(repo, watch)
    assert seen == _fresh(repo)
    return seen


@pytest.fixture
def repo(git_repo):
    git_repo.commit("one", {"a.md": "a\n", "src/b.py": "b = 1\n", ".gitignore": "build/\n*.log\n",
                            "deep/er/c.md": "c\n"})
    return git_repo


def test_unchanged_tree_runs_status_once_after_setup(repo):
    watch = WorktreeWatch(repo.root)
    for _ in range(5):
        assert _check(repo, watch) == []
    # read 1: no watch yet (one-shot processes never pay for it); read 2 sets it up and lists;
    # reads 3-5 reuse that listing
    assert watch.status_runs == 2


def test_every_kind_of_change_is_seen(repo):
    watch = WorktreeWatch(repo.root)
    _check(repo, watch), _check(repo, watch)
    repo.write("a.md", "changed\n")
    assert _check(repo, watch) == ["a.md"]
    repo.write("a.md", "a\n")
    assert _check(repo, watch) == []
    (repo.root / "new" / "nested").mkdir(parents=True)
    assert _check(repo, watch) == []  # empty directories are not listed
    repo.write("new/nested/file.md", "x\n")  # inside a directory created after the watch started
    assert _check(repo, watch) == ["new/nested/file.md"]
    os.rename(repo.root / "new", repo.root / "moved")
    assert _check(repo, watch) == ["moved/nested/file.md"]
    repo.write("moved/nested/file.md", "y\n")  # inside a directory moved in
    assert _check(repo, watch) == ["moved/nested/file.md"]
    shutil.rmtree(repo.root / "moved")
    repo.git("add", "src/b.py")
    assert _check(repo, watch) == []
    repo.write("src/b.py", "b = 2\n")
    repo.git("add", "src/b.py")  # staged: the index changes
    repo.write("src/b.py", "b = 1\n")
    assert _check(repo, watch) == ["src/b.py"]
    repo.git("commit", "-q", "-m", "two")  # HEAD moves
    assert _check(repo, watch) == ["src/b.py"]  # committed b = 2, the worktree still has b = 1
    repo.write("src/b.py", "b = 2\n")
    assert _check(repo, watch) == []
    os.chmod(repo.root / "a.md", 0o755)
    assert _check(repo, watch) == ["a.md"]
    os.chmod(repo.root / "a.md", 0o644)
    (repo.root / "deep" / "er" / "c.md").unlink()
    assert _check(repo, watch) == ["deep/er/c.md"]
    repo.git("checkout", "-q", "--", "deep/er/c.md")
    assert _check(repo, watch) == []


def test_ignore_rules_changing_rebuild_the_watches(repo):
    repo.write("build/out.md", "x\n")
    repo.write("debug.log", "x\n")
    watch = WorktreeWatch(repo.root)
    _check(repo, watch), _check(repo, watch)
    repo.write(".gitignore", "*.log\n")  # build/ is no longer ignored
    assert _check(repo, watch) == [".gitignore", "build/out.md"]
    repo.write("build/second.md", "x\n")  # a directory that was not watched before
    assert _check(repo, watch) == [".gitignore", "build/out.md", "build/second.md"]
    (repo.root / ".git" / "info").mkdir(exist_ok=True)
    (repo.root / ".git" / "info" / "exclude").write_text("build/\n")
    assert _check(repo, watch) == [".gitignore"]


def test_ragit_directory_never_invalidates(repo):
    watch = WorktreeWatch(repo.root)
    _check(repo, watch), _check(repo, watch)
    runs = watch.status_runs
    (repo.root / ".ragit" / "store").mkdir(parents=True)
    (repo.root / ".ragit" / "store" / "x.db").write_bytes(b"x")
    (repo.root / ".ragit" / "store" / "x.db").write_bytes(b"y")
    assert _check(repo, watch) == []
    assert watch.status_runs == runs + 1  # creating .ragit/ itself is a root event; then quiet
    (repo.root / ".ragit" / "store" / "x.db").write_bytes(b"z")
    assert _check(repo, watch) == []
    assert watch.status_runs == runs + 1


def test_listing_expires(repo):
    now = [1000.0]
    watch = WorktreeWatch(repo.root, clock=lambda: now[0])
    _check(repo, watch), _check(repo, watch), _check(repo, watch)
    assert watch.status_runs == 2
    now[0] += MAX_AGE_S + 1
    _check(repo, watch)
    assert watch.status_runs == 3


def test_without_inotify_every_read_asks_git(repo, monkeypatch):
    import inotify_simple

    def refuse(*args, **kwargs):
        raise OSError(24, "Too many open files")

    monkeypatch.setattr(inotify_simple, "INotify", refuse)
    watch = WorktreeWatch(repo.root)
    for i in range(4):
        repo.write("a.md", f"v{i}\n")
        assert _check(repo, watch) == ["a.md"]
    assert watch.status_runs == 4


def test_linked_worktree(repo, tmp_path):
    other = tmp_path / "linked"
    repo.git("worktree", "add", "-q", str(other))
    from tests.conftest import GitRepo

    linked = GitRepo(other)
    watch = WorktreeWatch(other)
    _check(linked, watch), _check(linked, watch)
    linked.write("a.md", "linked change\n")
    assert _check(linked, watch) == ["a.md"]
    repo.write("a.md", "main change\n")  # the other worktree's files are not ours
    assert _check(linked, watch) == ["a.md"]


_PATHS = ["a.md", "src/b.py", "deep/er/c.md", "src/new.py", "fresh/dir/d.md", "build/e.md", "x.log"]


@settings(max_examples=15, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.lists(st.tuples(st.sampled_from(["write", "delete", "stage", "commit", "restore"]),
                          st.sampled_from(_PATHS)), min_size=1, max_size=10))
def test_random_changes_never_change_the_answer(git_repo, ops):
    if not (git_repo.root / ".git" / "refs" / "heads" / "main").exists():
        git_repo.commit("one", {"a.md": "a\n", "src/b.py": "b = 1\n", ".gitignore": "build/\n*.log\n",
                                "deep/er/c.md": "c\n"})
    watch = WorktreeWatch(git_repo.root)
    _check(git_repo, watch)
    for n, (op, path) in enumerate(ops):
        target = git_repo.root / path
        if op == "write":
            git_repo.write(path, f"{n}\n")
        elif op == "delete" and target.exists():
            target.unlink()
        elif op == "stage":
            git_repo.git("add", "-A")
        elif op == "commit":
            git_repo.git("add", "-A")
            git_repo.git("commit", "-q", "--allow-empty", "-m", f"c{n}")
        elif op == "restore":
            git_repo.git("checkout", "-q", "HEAD", "--", ".")
        _check(git_repo, watch)
    watch.close()


def test_warm_repo_reports_a_change_made_between_queries(indexed_repo):
    from ragit.api import Repo
    from ragit.retrieve.query import DIRTY_WARNING

    repo = Repo.open(indexed_repo.root)
    for _ in range(3):
        assert DIRTY_WARNING not in repo.query("token rotation").warnings
    assert repo._watch.status_runs == 2
    indexed_repo.write("README.md", "# edited\n")
    result = repo.query("token rotation")
    assert DIRTY_WARNING in result.warnings
    assert result.to_dict()["snapshot"]["worktreeDirty"] is True
