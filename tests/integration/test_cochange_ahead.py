"""Co-change mining started ahead by ``Repo.ingest`` (ragit.gitsnap.cochange.Mining): the git
processes run while the ingest chunks and embeds, and what is kept after publishing is exactly
what the sequential path keeps; any mismatch or failure falls back to it, a failed ingest writes
nothing, and a dry run or a configuration without the stage starts no mining."""

from __future__ import annotations

import gc
import threading

import pytest
from conftest import write_placeholder_config

from ragit.api import Repo
from ragit.errors import RagitError
from ragit.gitsnap import cochange
from ragit.gitsnap.git import Git, GitError

FILES = {
    "src/app.py": "def create_app(config):\n    return App(config)\n",
    "src/ctx.py": "class RequestContext:\n    stack = []\n",
    "src/util.py": "def slugify(text):\n    return text.lower()\n",
    "docs/guide.md": "# Guide\n\nHow the app starts.\n",
}


@pytest.fixture
def repo(git_repo):
    write_placeholder_config(git_repo.root)
    git_repo.commit("init", FILES)
    for i in range(3):
        git_repo.commit(f"app+ctx {i}", {"src/app.py": FILES["src/app.py"] + f"# {i}\n",
                                          "src/ctx.py": FILES["src/ctx.py"] + f"# {i}\n"})
    (git_repo.root / "src" / "text").mkdir()
    git_repo.git("mv", "src/util.py", "src/text/util.py")  # a rename the counts carry forward
    git_repo.commit("move util")
    git_repo.head_sha = git_repo.commit("util alone", {"src/text/util.py": FILES["src/util.py"] + "# u\n"})
    cochange._MEMO.clear()
    yield git_repo
    cochange._MEMO.clear()


def _cache(root):
    return root / ".ragit" / "cache" / "cochange"


def _kept(root) -> dict[str, bytes]:
    return {p.name: p.read_bytes() for p in sorted(_cache(root).glob("*.json"))}


def _sequential(root, sha) -> dict[str, bytes]:
    """What the sequential path keeps for ``sha``, mined afresh in this thread."""
    for p in _cache(root).glob("*.json"):
        p.unlink()
    cochange._MEMO.clear()
    cochange.cochange_at(Git(root), root, sha, keep_changes=True, keep_counts=True)
    return _kept(root)


def _spy_mining(monkeypatch) -> list:
    started = []
    real = cochange.Mining

    class Spy(real):
        def __init__(self, *args, **kwargs):
            started.append(args[2])
            super().__init__(*args, **kwargs)

    monkeypatch.setattr(cochange, "Mining", Spy)
    return started


def test_ingest_mines_ahead_and_keeps_what_the_sequential_path_keeps(repo, monkeypatch):
    started = _spy_mining(monkeypatch)
    result = Repo.open(repo.root).ingest(all=True)
    assert started == [repo.head_sha] == [result.commit_sha]
    kept = _kept(repo.root)
    assert set(kept) == {"changes.json", "said.json", f"counts-{repo.head_sha}.json"}
    assert kept == _sequential(repo.root, repo.head_sha)
    assert gc.isenabled()
    assert not [t for t in threading.enumerate() if t.name == "ragit-cochange"]


def test_ingest_at_another_commit_mines_that_commit(repo, monkeypatch):
    started = _spy_mining(monkeypatch)
    at = Git(repo.root).run("rev-parse", "HEAD~2").decode().strip()
    Repo.open(repo.root).ingest(all=True, at=at)
    assert started == [at]
    assert _kept(repo.root) == _sequential(repo.root, at)


def test_a_failed_mining_thread_falls_back_to_the_sequential_path(repo, monkeypatch):
    real = Git.run
    failed = []

    def flaky(self, *args, **kwargs):
        if args and args[0] == "rev-list" and threading.current_thread().name == "ragit-cochange":
            failed.append(args)
            raise GitError(list(args), 128, b"fatal: transient")
        return real(self, *args, **kwargs)

    monkeypatch.setattr(Git, "run", flaky)
    Repo.open(repo.root).ingest(all=True)
    assert failed  # the thread failed, the ingest mined again in its own thread
    kept = _kept(repo.root)
    monkeypatch.setattr(Git, "run", real)
    assert kept == _sequential(repo.root, repo.head_sha)


def test_mining_of_another_snapshot_is_not_used(repo):
    git = Git(repo.root)
    root_sha = git.run("rev-list", "--max-parents=0", "HEAD").decode().split()[0]
    other = cochange.Mining(git, repo.root, root_sha)
    assert not other.answers((str(repo.root), repo.head_sha, cochange.DEFAULT_LIMIT, cochange.MAX_FILES), repo.root)
    got = cochange.cochange_at(git, repo.root, repo.head_sha, ahead=other)
    cochange._MEMO.clear()
    assert got == cochange.cochange_at(git, None, repo.head_sha)
    assert got.commits == 6 and other.result().counts.commits == 1


def test_nothing_is_mined_ahead_when_counts_are_kept_already(repo, monkeypatch):
    Repo.open(repo.root).ingest(all=True)
    cochange._MEMO.clear()
    started = _spy_mining(monkeypatch)
    Repo.open(repo.root).ingest(all=True)
    assert started == []


def test_dry_run_and_stage_off_start_no_mining(repo, monkeypatch):
    started = _spy_mining(monkeypatch)
    Repo.open(repo.root).ingest(all=True, dry_run=True)
    assert started == [] and not _cache(repo.root).exists()
    (repo.root / ".ragit" / "config.toml").write_text(
        (repo.root / ".ragit" / "config.toml").read_text() + "\n[retrieval]\ncochange = false\n")
    Repo.open(repo.root).ingest(all=True)
    assert started == [] and not _cache(repo.root).exists()


@pytest.mark.parametrize(("workers", "fork_bytes", "mined"), [("1", None, True), ("2", None, True), ("2", 0, False)])
def test_a_failed_ingest_writes_no_cochange_files(repo, monkeypatch, workers, fork_bytes, mined):
    # one process, or too few bytes to fork for: mining starts at once; when workers may be
    # forked it starts only after the fork (ragit.ingest.workers), past the dirty check failing here
    from ragit.ingest import workers as ingest_workers

    monkeypatch.setenv("RAGIT_INGEST_WORKERS", workers)
    if fork_bytes is not None:
        monkeypatch.setattr(ingest_workers, "MIN_PARALLEL_BYTES", fork_bytes)
    started = _spy_mining(monkeypatch)
    (repo.root / "docs" / "guide.md").write_text("# Guide\n\nChanged, not committed.\n")
    with pytest.raises(RagitError) as err:
        Repo.open(repo.root).ingest(all=True)
    assert err.value.code == "INGEST_CANDIDATES_DIRTY"
    assert started == ([repo.head_sha] if mined else [])  # a started thread was waited for
    assert not _cache(repo.root).exists()
    assert not [t for t in threading.enumerate() if t.name == "ragit-cochange"]
    assert gc.isenabled()
