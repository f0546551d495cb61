"""A warm process keeps HEAD while no ref file changed (ragit.gitsnap.watch.WorktreeWatch.head).

Every read through the watch is compared with what git says now: keeping HEAD must never change
which snapshot a read selects, its branch or its warnings, only how often the ref files are read.
"""

from __future__ import annotations

import sys

import pytest

from ragit.gitsnap.context import PendingContext, _head_from_files
from ragit.gitsnap.git import Git
from ragit.gitsnap.watch import WorktreeWatch

pytestmark = pytest.mark.skipif(sys.platform != "linux", reason="inotify is Linux-only")


class _Counting:
    def __init__(self, root):
        self.root, self.reads = root, 0

    def __call__(self):
        self.reads += 1
        return _head_from_files(self.root)


def _read(repo, watch: WorktreeWatch):
    """One read's HEAD and branch through ``watch`` (and its re-read), checked against git."""
    pending = PendingContext(Git(repo.root), watch=watch)
    want = repo.git("rev-parse", "HEAD")
    branch = repo.git("symbolic-ref", "-q", "--short", "HEAD", check=False) or None
    assert (pending.head, pending.branch) == (want, branch)
    assert pending.reread_head() == want
    pending.result()
    return pending


@pytest.fixture
def repo(git_repo):
    git_repo.commit("one", {"a.md": "a\n"})
    git_repo.commit("two", {"a.md": "b\n"})
    return git_repo


def test_head_is_read_from_files_only_after_a_change(repo):
    watch = WorktreeWatch(repo.root)
    for _ in range(4):  # reads 1-2 set the watch up, 3 watches the ref's directories, 4 keeps HEAD
        _read(repo, watch)
    count = _Counting(repo.root)
    for _ in range(3):
        known, token = watch.head(count)
        assert token is not None and watch.unchanged(token)
        assert known.head == repo.head()
    assert count.reads == 0
    repo.write("a.md", "worktree only\n")  # an event too: HEAD is read again, and found the same
    known, token = watch.head(count)
    assert count.reads == 1 and known.head == repo.head()


def test_every_way_head_moves_is_seen(repo):
    watch = WorktreeWatch(repo.root)
    first = repo.git("rev-parse", "HEAD~1")
    for _ in range(4):
        _read(repo, watch)
    repo.commit("three", {"a.md": "c\n"})  # the branch's loose ref moves
    _read(repo, watch), _read(repo, watch)
    repo.git("update-ref", "refs/heads/main", first)  # only the ref file changes
    _read(repo, watch), _read(repo, watch)
    repo.git("branch", "feature/deep/x", "HEAD~0")
    repo.git("pack-refs", "--all")  # loose refs gone, packed-refs written
    _read(repo, watch), _read(repo, watch)
    repo.git("checkout", "-q", "feature/deep/x")  # HEAD names a branch whose directories do not exist
    _read(repo, watch), _read(repo, watch), _read(repo, watch)
    repo.commit("four", {"a.md": "d\n"})  # creates refs/heads/feature/deep/x below watched directories
    _read(repo, watch), _read(repo, watch)
    repo.git("update-ref", "refs/heads/feature/deep/x", first)
    _read(repo, watch), _read(repo, watch)
    repo.git("pack-refs", "--all")
    repo.git("update-ref", "refs/heads/feature/deep/x", repo.git("rev-parse", "main"))  # packed only
    _read(repo, watch), _read(repo, watch)
    repo.git("checkout", "-q", "--detach", first)
    _read(repo, watch), _read(repo, watch)
    repo.git("checkout", "-q", "main")
    _read(repo, watch), _read(repo, watch)
    repo.git("branch", "-D", "feature/deep/x")  # a watched directory removed
    _read(repo, watch), _read(repo, watch)
    repo.git("checkout", "-q", "-b", "feature/deep/y")
    repo.commit("five", {"a.md": "e\n"})
    _read(repo, watch), _read(repo, watch)


def test_head_moving_between_read_and_reread_is_seen(repo):
    watch = WorktreeWatch(repo.root)
    for _ in range(4):
        _read(repo, watch)
    pending = PendingContext(Git(repo.root), watch=watch)
    before = pending.head
    after = repo.commit("moved", {"a.md": "moved\n"})
    assert pending.reread_head() == after != before
    pending.cancel()


def test_a_rebuilt_watch_never_vouches_for_an_older_read(repo):
    watch = WorktreeWatch(repo.root)
    for _ in range(4):
        _read(repo, watch)
    known, token = watch.head(_Counting(repo.root))
    assert token is not None
    watch.close()  # events queued in the closed watch are lost
    watch._ready()
    assert not watch.unchanged(token)


def test_linked_worktree_head(repo, tmp_path):
    other = tmp_path / "linked"
    repo.git("worktree", "add", "-q", "-b", "side", str(other))
    from tests.conftest import GitRepo

    linked = GitRepo(other)
    watch = WorktreeWatch(other)
    for _ in range(4):
        _read(linked, watch)
    linked.commit("on side", {"a.md": "side\n"})
    _read(linked, watch), _read(linked, watch)
    repo.git("update-ref", "refs/heads/side", repo.git("rev-parse", "main~1"))  # moved from the other worktree
    _read(linked, watch), _read(linked, watch)


def _answer(result) -> dict:
    data = result.to_dict()
    data.pop("timing", None)
    data.pop("timings", None)
    return data


def _same_as_fresh(root, warm, question: str):
    """The warm Repo's answer (or error) equals a fresh process's."""
    from ragit.api import Repo
    from ragit.errors import RagitError

    def ask(repo):
        try:
            return _answer(repo.query(question))
        except RagitError as exc:
            return (exc.code, exc.details)

    fresh = ask(Repo.open(root))
    assert ask(warm) == fresh
    return fresh


def test_warm_repo_follows_head_as_a_fresh_process(indexed_repo, cli):
    from ragit.api import Repo
    from ragit.retrieve.query import DIRTY_WARNING

    root = indexed_repo.root
    warm = Repo.open(root)
    first = indexed_repo.head()
    for _ in range(4):
        answer = _same_as_fresh(root, warm, "token rotation")
    assert answer["snapshot"]["resolvedSha"] == first
    second = indexed_repo.commit("second", {"docs/new.md": "# Token rotation\n\nrotate tokens daily\n"})
    assert _same_as_fresh(root, warm, "token rotation")[0] == "SNAPSHOT_NOT_INDEXED"
    assert cli("ingest", "--cwd", str(root), "--format", "json").code == 0
    answer = _same_as_fresh(root, warm, "token rotation")
    assert answer["snapshot"]["resolvedSha"] == second
    _same_as_fresh(root, warm, "token rotation")
    indexed_repo.git("update-ref", "refs/heads/main", first)  # HEAD's ref moves back, the worktree does not
    answer = _same_as_fresh(root, warm, "token rotation")
    assert answer["snapshot"]["resolvedSha"] == first and DIRTY_WARNING in answer["warnings"]
    indexed_repo.git("reset", "-q", "--hard", first)
    answer = _same_as_fresh(root, warm, "token rotation")
    assert answer["snapshot"]["resolvedSha"] == first and DIRTY_WARNING not in answer["warnings"]
    indexed_repo.git("checkout", "-q", "--detach", second)
    answer = _same_as_fresh(root, warm, "token rotation")
    assert answer["snapshot"]["resolvedSha"] == second and answer["snapshot"]["detached"] is True
    indexed_repo.write("docs/new.md", "edited\n")
    answer = _same_as_fresh(root, warm, "token rotation")
    assert DIRTY_WARNING in answer["warnings"] and answer["snapshot"]["worktreeDirty"] is True


def test_warm_postings_reader_is_checked_again_only_after_a_write(indexed_repo, cli, monkeypatch):
    """The kept read store's data version vouches for the warm postings reader (no generation
    read of its own) until another connection commits; the answers stay a fresh process's."""
    from ragit.api import Repo
    from ragit.store.bm25 import CachingPostings

    calls = []
    current = CachingPostings.current
    monkeypatch.setattr(CachingPostings, "current", lambda self: calls.append(1) or current(self))
    root = indexed_repo.root
    warm = Repo.open(root)
    for _ in range(5):
        _same_as_fresh(root, warm, "token rotation")
    quiet = len(calls)
    for _ in range(3):
        _same_as_fresh(root, warm, "token rotation")
    assert len(calls) == quiet  # nothing written: the reader is not asked again
    second = indexed_repo.commit("second", {"docs/zebra.md": "# Zebra crossing\n\nzebra stripes\n"})
    assert cli("ingest", "--cwd", str(root), "--format", "json").code == 0
    answer = _same_as_fresh(root, warm, "zebra stripes")
    assert answer["snapshot"]["resolvedSha"] == second
    assert any(h["path"] == "docs/zebra.md" for h in answer["hits"])
    assert len(calls) > quiet
