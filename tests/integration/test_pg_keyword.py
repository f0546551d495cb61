"""The PostgreSQL keyword postings packed per term (``keyword_segments``, migration 2): written
at ingest, converted from migration 1's one-row-per-posting table, and read by a warm reader that
stays current across ingests without rereading what it holds."""

from __future__ import annotations

import numpy as np

from conftest import SAMPLE_FILES, pg_rows, write_pg_config


def _postings_from_sqlite_layout(pairs: dict[int, float]):
    ids = np.array(sorted(pairs), dtype=np.int64)
    return ids, np.array([pairs[i] for i in ids], dtype=np.float64)


def test_migration_2_packs_migration_1_postings(pg_dsn):
    """A database at migration 1 (one row per (term, row)) reads back the same postings after
    ``ragit migrate`` packs them, across the segment boundaries of the conversion."""
    from ragit.store import pg_schema
    from ragit.store.pg_connect import connect
    from ragit.store.pg_keyword import PgPostings

    postings = {
        "alpha": {5: 1.0, 7: 3.0, (1 << 20) - 1: 2.0, 1 << 20: 5.0, 3_000_000: 1.0},
        "beta": {6: 2.0},
        "x\u00e9": {1: 4.0, 2: 1.0},
    }
    conn = connect(pg_dsn)
    try:
        with conn.transaction():
            conn.execute(pg_schema._LEDGER)
            conn.execute(pg_schema.MIGRATIONS[0].sql)
            conn.execute("INSERT INTO ragit_migrations(version, name) VALUES (1, 'initial')")
        with conn.cursor() as cur:
            cur.executemany("INSERT INTO keyword_postings VALUES (%s, %s, %s)",
                            [(t, r, tf) for t, rows in postings.items() for r, tf in rows.items()])
        assert [m.version for m in pg_schema.pending(conn)] == [2]
        assert pg_schema.apply_pending(conn) == [2]
        assert conn.execute("SELECT to_regclass('keyword_postings')").fetchone()[0] is None
        reader = PgPostings(conn)
        for term, rows in postings.items():
            ids, tfs = reader(term)
            want_ids, want_tfs = _postings_from_sqlite_layout(rows)
            assert ids.tolist() == want_ids.tolist() and tfs.tolist() == want_tfs.tolist()
        ids, tfs = reader.within("alpha", 7, 1 << 20)
        assert ids.tolist() == [7, (1 << 20) - 1, 1 << 20] and tfs.tolist() == [3.0, 2.0, 5.0]
        assert reader("gamma")[0].tolist() == []
        # the conversion made one segment per term and 2^20-row bucket
        assert conn.execute("SELECT COUNT(*) FROM keyword_segments WHERE term = 'alpha'").fetchone()[0] == 3
    finally:
        conn.close()


def _ingest(cli, root) -> None:
    r = cli("ingest", "--cwd", str(root), "--format", "json")
    assert r.code == 0, r


def test_warm_reader_stays_current_across_ingests(git_repo, cli, pg_dsn, monkeypatch):
    """A warm reader keeps its terms when another ingest publishes: it reads only the new segments
    of a term it holds, and its postings equal a fresh reader's after every publication."""
    from ragit.store.pg_connect import connect
    from ragit.store.pg_keyword import PgPostings

    monkeypatch.setenv("RAGIT_DATABASE_URL", pg_dsn)
    write_pg_config(git_repo.root)
    git_repo.commit("initial", SAMPLE_FILES)
    _ingest(cli, git_repo.root)
    warm = PgPostings(connect(pg_dsn), cache=True, owns_connection=True)
    try:
        before = warm("token")
        assert len(before[0]) > 0
        first_segments = set(warm._segments["token"])
        generation = warm.generation
        for i in range(2):
            git_repo.commit(f"more {i}", {f"src/more{i}.py": f"def refresh_token_{i}(token):\n    return token * {i}\n"})
            _ingest(cli, git_repo.root)
            assert warm.current()
            assert warm.generation != generation
            generation = warm.generation
            fresh = PgPostings(connect(pg_dsn), owns_connection=True)
            try:
                for term in ("token", "auth", "refresh"):
                    got, want = warm(term), fresh(term)
                    assert got[0].tolist() == want[0].tolist() and got[1].tolist() == want[1].tolist()
            finally:
                fresh.close()
        after = warm("token")
        assert len(after[0]) == len(before[0]) + 2
        assert first_segments < set(warm._segments["token"])  # the old segments kept, new ones added
        # a term held and unchanged costs no read of its segments while the generation stands
        calls = []
        original = warm._segments_of
        monkeypatch.setattr(warm, "_segments_of", lambda *a: calls.append(a) or original(*a))
        warm("token")
        assert calls == []
    finally:
        warm.close()
    # one segment per term and ingest batch: the first ingest's and one per later commit
    assert pg_rows(pg_dsn, "SELECT COUNT(*) FROM keyword_segments WHERE term = 'token'")[0][0] == 3
