"""A warm Repo keeps one read connection (ragit.store.held) and still sees every change: a new
snapshot published by another process, a store rebuilt from scratch, a store removed."""

from __future__ import annotations

import shutil

import pytest
from conftest import SAMPLE_FILES, write_placeholder_config

import ragit
from ragit.store.held import HeldStore


@pytest.fixture
def repo_root(git_repo, cli):
    write_placeholder_config(git_repo.root)
    git_repo.commit("initial", SAMPLE_FILES)
    assert cli("ingest", "--all", "--cwd", str(git_repo.root), "--format", "json").code == 0
    return git_repo


def _paths(result) -> list[str]:
    return [h.path for h in result.hits]


def test_first_read_is_not_held_later_reads_are(repo_root):
    repo = ragit.Repo.open(repo_root.root)
    held = HeldStore()
    first, owned = held.get(repo.root, repo.config)
    assert first is not None and owned  # a one-shot command closes its store as before
    default_cache = first.conn.execute("PRAGMA cache_size").fetchone()[0]
    first.close()
    second, owned = held.get(repo.root, repo.config)
    assert second is not None and not owned
    # only the kept connection of a long-lived process gets the larger page cache
    from ragit.store.sqlite import WARM_CACHE_KIB

    assert default_cache != -WARM_CACHE_KIB
    assert second.conn.execute("PRAGMA cache_size").fetchone()[0] == -WARM_CACHE_KIB
    third, owned = held.get(repo.root, repo.config)
    assert third is second and not owned
    held.close()
    assert held.get(repo.root, repo.config)[0] is not second


def test_warm_repo_sees_a_commit_ingested_by_another_process(repo_root, cli):
    repo = ragit.Repo.open(repo_root.root)
    for _ in range(3):
        before = repo.query("quokka migration ledger")
    assert "src/ledger.py" not in _paths(before)
    repo_root.commit("ledger", {"src/ledger.py": "def quokka_migration_ledger():\n    return 'quokka ledger'\n"})
    assert cli("ingest", "--cwd", str(repo_root.root), "--format", "json").code == 0
    after = repo.query("quokka migration ledger")
    assert after.retrieval.snapshot_sha == repo_root.head()
    assert _paths(after)[0] == "src/ledger.py"


def test_warm_repo_reopens_a_rebuilt_store(repo_root, cli):
    repo = ragit.Repo.open(repo_root.root)
    for _ in range(3):
        expected = repo.query("restore auth context")
    held = repo._held._store
    assert held is not None
    shutil.rmtree(repo_root.root / ".ragit" / "store")
    with pytest.raises(ragit.RagitError) as err:
        repo.query("restore auth context")
    assert err.value.code == "SNAPSHOT_STORE_UNAVAILABLE"
    assert repo._held._store is None
    assert cli("ingest", "--all", "--cwd", str(repo_root.root), "--format", "json").code == 0
    again = repo.query("restore auth context")
    again = repo.query("restore auth context")
    assert repo._held._store is not None and repo._held._store is not held
    assert _paths(again) == _paths(expected)


def test_close_releases_the_connection_and_leaves_no_wal(repo_root):
    repo = ragit.Repo.open(repo_root.root)
    for _ in range(3):
        repo.query("restore auth context")
    store_dir = repo_root.root / ".ragit" / "store"
    repo.close()
    assert repo._held._store is None
    assert not (store_dir / "ragit.db-wal").exists()
    assert _paths(repo.query("restore auth context"))  # reopens on demand


def test_warm_repo_checks_the_kept_store_again_after_another_connection_writes(repo_root):
    """The kept store passes its checks (schema, embedder, snapshot) again without running them
    only while no other connection wrote (SQLite's data_version): a snapshot removed behind its
    back is reported at the next read."""
    import sqlite3

    repo = ragit.Repo.open(repo_root.root)
    for _ in range(3):
        repo.query("restore auth context")
    head = repo_root.head()
    db = repo_root.root / ".ragit" / "store" / "ragit.db"
    with sqlite3.connect(db) as other:
        other.execute("UPDATE snapshots SET manifest_sha256 = 'elsewhere' WHERE commit_sha = ?", (head,))
    with pytest.raises(ragit.RagitError) as err:
        repo.query("restore auth context")
    assert err.value.code == "SNAPSHOT_STORE_UNAVAILABLE"
    assert err.value.details["reason"] == "snapshot_not_in_store"
