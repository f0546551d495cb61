"""A writing SQLite connection checkpoints its write-ahead log at a bounded size
(``WRITE_WAL_PAGES``, issue 15), and closing it still leaves no log behind."""

from __future__ import annotations

from ragit.store.sqlite import DB_NAME, WRITE_WAL_PAGES, SqliteStore


def test_writer_checkpoints_at_the_bounded_log_size_and_removes_the_log(tmp_path) -> None:
    store = SqliteStore.open_write(tmp_path)
    try:
        assert store.conn.execute("PRAGMA wal_autocheckpoint").fetchone()[0] == WRITE_WAL_PAGES
        assert store.conn.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
        store.conn.execute("BEGIN IMMEDIATE")
        store.conn.execute("INSERT OR REPLACE INTO meta VALUES('probe', 'x')")
        store.conn.execute("COMMIT")
        assert (tmp_path / (DB_NAME + "-wal")).exists()
    finally:
        store.close()
    assert not (tmp_path / (DB_NAME + "-wal")).exists()
    assert 1_000 < WRITE_WAL_PAGES <= 65_536  # above SQLite's default, and bounded (≤ 256 MB of 4 KB pages)
