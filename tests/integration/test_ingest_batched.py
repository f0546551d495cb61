"""Batched ingest (issue 15): new blobs, chunks and vectors are committed in batches before the
snapshot is published. A failure midway leaves the published snapshots readable and only
unreferenced rows behind; a re-run then produces the store an uninterrupted ingest makes."""

from __future__ import annotations

import shutil
import sqlite3

import pytest

from ragit.api import Repo
from ragit.ingest import batches, pipeline
from ragit.maintenance.doctor import run_doctor
from ragit.store import sqlite as sqlite_store

from conftest import write_placeholder_config
from store_digest import store_digest as _digest


def _files(n: int, tag: str) -> dict[str, str]:
    files = {f"docs/{tag}-{i}.md": f"# {tag} guide {i}\n\n" + "\n\n".join(
        f"## Part {j}\n\nsection {j} of {tag} guide {i} explains token rotation {i * j}" for j in range(3))
        for i in range(n)}
    files.update({f"src/{tag}_{i}.py": f"def handler_{i}(value):\n    return value * {i}\n" for i in range(n)})
    files[f"docs/{tag}-same.md"] = files[f"docs/{tag}-copy.md"] = "# Same\n\nThe same bytes under two paths.\n"
    return files


@pytest.fixture
def small_batches(monkeypatch):
    """Many batches from a small repository: 3 texts per embedding call, a commit every 4 chunks."""
    monkeypatch.setattr(pipeline, "EMBED_BATCH", 3)
    monkeypatch.setattr(batches, "COMMIT_CHUNKS", 4)


def _two_commits(git_repo):
    write_placeholder_config(git_repo.root)
    first = git_repo.commit("first", _files(5, "alpha"))
    second = git_repo.commit("second", _files(6, "beta"))
    return first, second


def _fail_on_call(monkeypatch, owner, name: str, call: int, *, after: bool) -> list[int]:
    """Make ``owner.name`` raise on its ``call``-th call (after running it when ``after``)."""
    original = getattr(owner, name)
    calls = [0]

    def wrapped(*args, **kwargs):
        calls[0] += 1
        if calls[0] == call and not after:
            raise RuntimeError("injected failure")
        result = original(*args, **kwargs)
        if calls[0] == call:
            raise RuntimeError("injected failure")
        return result

    monkeypatch.setattr(owner, name, wrapped)
    return calls


@pytest.mark.parametrize("where", ["between_batches", "inside_batch"])
def test_failure_midway_keeps_snapshots_and_rerun_is_identical(git_repo, small_batches, monkeypatch, where):
    first, second = _two_commits(git_repo)
    root = git_repo.root
    # the uninterrupted store: ingest the first commit, then the second
    Repo.open(root).ingest(all=True, at=first)
    Repo.open(root).ingest(all=True)
    expected = _digest(root)
    shutil.rmtree(root / ".ragit" / "store")
    shutil.rmtree(root / ".ragit" / "manifest")

    Repo.open(root).ingest(all=True, at=first)
    before = _digest(root)
    answer = Repo.open(root).query("token rotation", at=first).to_dict()
    with monkeypatch.context() as m:
        if where == "between_batches":  # the third batch commit never starts
            calls = _fail_on_call(m, sqlite_store.SqliteStore, "write_batch", 3, after=False)
        else:  # the third batch appended its vectors to the heap, then failed before COMMIT
            calls = _fail_on_call(m, sqlite_store.SqliteStore, "_append_heap", 3, after=True)
        with pytest.raises(RuntimeError, match="injected"):
            Repo.open(root).ingest(all=True)
        assert calls[0] == 3
    # committed batches are there, unreferenced; the published snapshot is untouched
    db = sqlite3.connect(root / ".ragit" / "store" / "ragit.db")
    assert [r[0] for r in db.execute("SELECT commit_sha FROM snapshots")] == [first]
    assert db.execute("SELECT COUNT(*) FROM chunks").fetchone()[0] > 0
    db.close()
    after_failure = _digest(root)
    for table in ("fts_rows", "vocab", "snapshot_rows", "snapshot_docs", "snapshots", "blob_norms"):
        assert after_failure[table] == before[table], table
    assert after_failure["chunks"] != before["chunks"]  # batches were committed before the failure
    assert Repo.open(root).query("token rotation", at=first).to_dict() == answer
    _, report = run_doctor(root)
    hygiene = next(c for c in report["checks"] if c["name"] == "store.hygiene")
    assert hygiene["ok"], hygiene

    Repo.open(root).ingest(all=True)
    assert _digest(root) == expected


def test_batch_commits_do_not_change_the_store(git_repo, monkeypatch):
    """One commit per chunk, one text per embedding call, or everything at once: same store."""
    _two_commits(git_repo)
    root = git_repo.root
    Repo.open(root).ingest(all=True)
    expected = _digest(root)
    for embed_batch, commit in [(1, 1), (2, 7), (10_000, 10_000)]:
        shutil.rmtree(root / ".ragit" / "store")
        shutil.rmtree(root / ".ragit" / "manifest")
        monkeypatch.setattr(pipeline, "EMBED_BATCH", embed_batch)
        monkeypatch.setattr(batches, "COMMIT_CHUNKS", commit)
        Repo.open(root).ingest(all=True)
        assert _digest(root) == expected, (embed_batch, commit)


def test_batched_store_equals_the_single_transaction_store(git_repo, small_batches, monkeypatch):
    """Without ``write_batch`` every row goes into the one snapshot transaction (as before
    batching); the batched ingest must leave the very same tables and heap bytes."""
    _two_commits(git_repo)
    root = git_repo.root
    Repo.open(root).ingest(all=True)
    batched = _digest(root)
    shutil.rmtree(root / ".ragit" / "store")
    shutil.rmtree(root / ".ragit" / "manifest")
    calls = _fail_on_call(monkeypatch, sqlite_store.SqliteStore, "write_batch", 1, after=False)
    monkeypatch.delattr(sqlite_store.SqliteStore, "write_batch")
    Repo.open(root).ingest(all=True)
    assert calls == [0]
    assert _digest(root) == batched
