"""The approximate path on PostgreSQL: a pgvector HNSW index gives the candidates of a large
snapshot and ragit.retrieve.search re-scores them exactly (knowledge §2.2, §11.4). The threshold
and candidate counts are lowered to scale, as in test_vector_index.py for the SQLite index."""

from __future__ import annotations

import numpy as np
import pytest
from conftest import SAMPLE_FILES, pg_rows, write_pg_config

from ragit import Repo
from ragit.embed.placeholder import PlaceholderEmbedder
from ragit.retrieve import search
from ragit.store import open_store_read, vectorindex
from ragit.store.pg_ann import index_name

from test_vector_index import _docs, _questions  # the same corpus and questions


@pytest.fixture
def big_pg_repo(git_repo, pg_dsn, monkeypatch):
    monkeypatch.setenv("RAGIT_DATABASE_URL", pg_dsn)
    monkeypatch.setattr(vectorindex, "APPROX_MIN_ROWS", 100)
    monkeypatch.setattr(search, "VECTOR_CANDIDATES", 64)
    monkeypatch.setattr(search, "KEYWORD_CANDIDATES", 64)
    write_pg_config(git_repo.root)
    git_repo.commit("corpus", _docs(120))
    repo = Repo.open(git_repo.root)
    repo.ingest(all=True)
    return repo


def _hits(root, questions, exact: bool, monkeypatch) -> list[list[tuple]]:
    monkeypatch.setattr(vectorindex, "APPROX_MIN_ROWS", 10**12 if exact else 100)
    repo = Repo.open(root)
    return [[(h.path, h.chunk_id, h.score_final, h.score_vector, h.score_keyword) for h in repo.query(q).hits]
            for q in questions]


def _open(repo: Repo):
    store = open_store_read(repo.root, repo.config)
    return store, repo.git.run("rev-parse", "HEAD").decode().strip()


def test_index_is_created_at_ingest_and_used(big_pg_repo, pg_dsn):
    emb = PlaceholderEmbedder()
    assert pg_rows(pg_dsn, "SELECT to_regclass(%s) IS NOT NULL", (index_name(emb.id),))[0][0]
    store, sha = _open(big_pg_repo)
    try:
        snap = search.load_matrix(store, sha, emb.id)
        assert snap.index is not None and snap.matrix is None  # the matrix is never gathered
        exact = search.vector_scores(snap, emb, "token session store", search.FILE_BLEND, search.PASSAGE_WORDS)
        rows, vector, _ = search.approximate_scores(snap, emb, "token session store", search.FILE_BLEND,
                                                 search.PASSAGE_WORDS, None)
        assert 0 < len(rows) < len(snap.rowids)  # only candidates (and their files' rows) were scored
        assert np.array_equal(vector, exact[rows])  # exactly as exact search scores them
    finally:
        store.close()


def test_approximate_recall_against_exact(big_pg_repo, monkeypatch):
    questions = _questions()
    approx = _hits(big_pg_repo.root, questions, False, monkeypatch)
    exact = _hits(big_pg_repo.root, questions, True, monkeypatch)
    recall = [len({h[:2] for h in a} & {h[:2] for h in e}) / len(e) for a, e in zip(approx, exact) if e]
    assert sum(recall) / len(recall) >= 0.98
    for a, e in zip(approx, exact):
        scores = {h[:2]: h[3:] for h in e}
        for h in a:
            if h[:2] in scores:
                assert h[3:] == scores[h[:2]]


def test_small_snapshots_stay_exact(git_repo, pg_dsn, monkeypatch):
    """Below the threshold no index is built and the snapshot goes through ``load_vectors``."""
    monkeypatch.setenv("RAGIT_DATABASE_URL", pg_dsn)
    write_pg_config(git_repo.root)
    git_repo.commit("corpus", _docs(10))
    repo = Repo.open(git_repo.root)
    repo.ingest(all=True)
    assert not pg_rows(pg_dsn, "SELECT 1 FROM pg_indexes WHERE indexname LIKE 'vectors_hnsw_%%'")
    store, sha = _open(repo)
    try:
        snap = search.load_matrix(store, sha, PlaceholderEmbedder().id)
        assert snap.index is None and snap.matrix is not None and len(snap.matrix) == len(snap.rowids)
    finally:
        store.close()


def test_warm_vector_reader_reads_each_slot_once(git_repo, cli, pg_dsn, monkeypatch):
    """The approximate path's vector reader keeps the vectors it read (a slot's vector never
    changes): a second request reads only new slots and returns the same floats, in order, with
    repeats; the cache stays within its bound."""
    import numpy as np

    from ragit.store import pg_ann, pg_connect
    from ragit.store.pg_ann import PgVectors, _Link
    from ragit.store.postgres import PostgresStore

    monkeypatch.setenv("RAGIT_DATABASE_URL", pg_dsn)
    write_pg_config(git_repo.root)
    git_repo.commit("initial", SAMPLE_FILES)
    assert cli("ingest", "--all", "--cwd", str(git_repo.root), "--format", "json").code == 0
    store = PostgresStore.open_read(pg_dsn, pg_rows(pg_dsn, "SELECT repo_id FROM repositories")[0][0])
    try:
        embedder_id, dims = pg_rows(pg_dsn, "SELECT embedder_id, dims FROM embedders")[0]
        slots = [r[0] for r in pg_rows(pg_dsn, "SELECT slot FROM vectors ORDER BY slot")]
        assert len(slots) >= 6
        reads = []
        real = pg_connect.gather
        monkeypatch.setattr(pg_connect, "gather", lambda conn, d, s, e: reads.append(list(s)) or real(conn, d, s, e))
        vectors = PgVectors(_Link(store), embedder_id, max(slots) + 1, dims)
        first = [slots[3], slots[0], slots[3]]
        got = vectors[first]
        assert np.array_equal(got, real(store.conn, dims, first, embedder_id))
        assert reads == [[slots[0], slots[3]]]
        second = [slots[5], slots[0], slots[1]]
        assert np.array_equal(vectors[second], real(store.conn, dims, second, embedder_id))
        assert reads[1] == [slots[1], slots[5]]
        vectors[first]
        assert len(reads) == 2  # every slot held: no read
        monkeypatch.setattr(pg_ann, "MAX_CACHED_VECTORS", 2)
        small = PgVectors(_Link(store), embedder_id, max(slots) + 1, dims)  # a ring of two rows
        small[[slots[0], slots[1]]]
        small[[slots[2]]]  # overwrites the oldest row (slots[0])
        assert small._keys.tolist() == sorted([slots[1], slots[2]])
        reads.clear()
        assert np.array_equal(small[[slots[2], slots[1], slots[2]]],
                              real(store.conn, dims, [slots[2], slots[1], slots[2]], embedder_id))
        assert reads == []
        assert np.array_equal(small[slots[:6]], real(store.conn, dims, slots[:6], embedder_id))
        assert len(small._keys) == 2
    finally:
        store.close()


def test_a_files_vectors_get_adjacent_slots(git_repo, cli, pg_dsn, monkeypatch):
    """Vectors are inserted in (blob, chunker, ordinal) order, so the rows the approximate path
    re-scores together (every chunk of a candidate file) sit on adjacent heap pages."""
    monkeypatch.setenv("RAGIT_DATABASE_URL", pg_dsn)
    write_pg_config(git_repo.root)
    long_doc = "\n\n".join(f"## Part {i}\n\n" + " ".join(f"word{i}x{j}" for j in range(400)) for i in range(6))
    git_repo.commit("initial", {**SAMPLE_FILES, "docs/long.md": "# Long\n\n" + long_doc + "\n"})
    assert cli("ingest", "--all", "--cwd", str(git_repo.root), "--format", "json").code == 0
    rows = pg_rows(pg_dsn, "SELECT c.blob_id, c.chunker_key, c.ordinal FROM vectors v"
                           " JOIN chunks c ON c.chunk_id = v.chunk_id ORDER BY v.slot")
    assert len(rows) > len(SAMPLE_FILES)  # some blob has several chunks
    assert rows == sorted(rows)
