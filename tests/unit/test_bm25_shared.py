"""Postings read once for many snapshots (ragit.store.bm25.SharedPostings, restrict and
PostingsReader.within): the scores must be the floats of reading every term per snapshot."""

from __future__ import annotations

import sqlite3

import numpy as np
import pytest

from ragit.store.bm25 import FIELDS, PostingsReader, SharedPostings, index_fields, restrict, snapshot_scores


def _sorted_unique(rng: np.random.Generator, size: int, high: int) -> np.ndarray:
    return np.unique(rng.integers(1, high, size=size)).astype(np.int64)


@pytest.mark.parametrize("n_ids, n_rows", [(0, 5), (5, 0), (3, 400), (400, 3), (200, 200), (1, 1)])
def test_restrict_keeps_exactly_the_rows_snapshot_scores_keeps(n_ids, n_rows):
    rng = np.random.default_rng(n_ids * 1000 + n_rows)
    ids = _sorted_unique(rng, n_ids, 1000) if n_ids else np.zeros(0, dtype=np.int64)
    tf = rng.integers(1, 9, size=len(ids)).astype(np.float64)
    rowids = _sorted_unique(rng, n_rows, 1000) if n_rows else np.zeros(0, dtype=np.int64)
    got_ids, got_tf = restrict((ids, tf), rowids)
    keep = np.isin(ids, rowids)
    assert got_ids.tolist() == ids[keep].tolist() and got_tf.tolist() == tf[keep].tolist()
    assert got_ids.dtype == np.int64 and got_tf.dtype == np.float64


def test_shared_postings_give_the_same_floats_and_read_each_term_once():
    rng = np.random.default_rng(7)
    store_rows = 3000
    vocab = [f"t{i}" for i in range(40)]
    index = {}
    for term in vocab:  # a store-wide doclist per term, row ids ascending
        ids = _sorted_unique(rng, int(rng.integers(0, 900)), store_rows)
        index[term] = (ids, rng.integers(1, 7, size=len(ids)).astype(np.float64))
    reads: list[tuple[str, int, int]] = []

    def within(term: str, first: int, last: int):
        reads.append((term, first, last))
        ids, tf = index[term]
        inside = (ids >= first) & (ids <= last)
        return ids[inside], tf[inside]

    asks = []
    for _ in range(12):  # snapshots overlapping like an evaluation store's commits
        start = int(rng.integers(1, 1500))
        rowids = np.unique(rng.integers(start, start + 1500, size=600)).astype(np.int64)
        terms = [vocab[int(i)] for i in rng.integers(0, len(vocab), size=15)] + ["absent"]
        asks.append((rowids, terms))
    index["absent"] = (np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.float64))
    asks.append((np.zeros(0, dtype=np.int64), ["t1"]))  # an empty snapshot asks nothing

    shared = SharedPostings(within, asks)
    assert sorted(t for t, _, _ in reads) == sorted({t for rowids, terms in asks if len(rowids) for t in terms})
    for term, first, last in reads:
        users = [rowids for rowids, terms in asks if term in terms and len(rowids)]
        assert first == min(int(r[0]) for r in users) and last == max(int(r[-1]) for r in users)
    assert len(shared.seconds) == len(asks) and all(s >= 0 for s in shared.seconds)

    for i, (rowids, terms) in enumerate(asks):
        lengths = rng.integers(1, 300, size=len(rowids)).astype(np.int32)
        expected = snapshot_scores(lambda t: index[t], terms, rowids, lengths)[0]
        got = snapshot_scores(shared.reader(i), terms, rowids, lengths)[0]
        assert got.tobytes() == expected.tobytes()


def _fts(rows: list[tuple[str, str, str]]) -> sqlite3.Connection:
    """An FTS5 index laid out like the store's (contentless, terms repeated per occurrence)."""
    conn = sqlite3.connect(":memory:")
    conn.execute(f"CREATE VIRTUAL TABLE chunks_fts USING fts5({', '.join(FIELDS)}, content='', tokenize='ascii',"
                 " columnsize=0)")
    conn.execute("CREATE VIRTUAL TABLE chunks_vocab USING fts5vocab(chunks_fts, instance)")
    for rowid, (text, title, path) in enumerate(rows, 1):
        conn.execute("INSERT INTO chunks_fts(rowid, text, title, path) VALUES (?, ?, ?, ?)",
                     (rowid, *index_fields(text, title, path)[:3]))
    return conn


def test_reader_within_is_the_doclist_cut_to_the_range():
    rows = [(f"parse the token {'token ' * (i % 4)} value {i}", "parse_token" if i % 3 == 0 else "other",
             f"src/token_{i % 5}.py") for i in range(60)]
    reader = PostingsReader(_fts(rows), "chunks_vocab", "chunks_fts_data")
    for term in ("token", "pars", "parse", "valu", "value", "absent"):
        ids, tf = reader(term)
        assert list(ids) == sorted(ids)
        for first, last in ((1, 60), (7, 33), (20, 20), (61, 90)):
            got_ids, got_tf = reader.within(term, first, last)
            inside = (ids >= first) & (ids <= last)
            assert got_ids.tolist() == ids[inside].tolist() and got_tf.tolist() == tf[inside].tolist()
    ids, tf = reader("token")
    assert len(ids) == 60 and len(set(tf.tolist())) > 3  # repeated occurrences and weighted fields count


def test_a_whole_index_read_gives_each_terms_own_postings():
    rows = [(f"parse the token {'token ' * (i % 4)} value {i} word{i % 7}", "parse_token" if i % 3 == 0 else "other",
             f"src/token_{i % 5}.py") for i in range(80)]
    conn = _fts(rows)
    terms = [t for (t,) in conn.execute("SELECT DISTINCT term FROM chunks_vocab")]
    single = PostingsReader(conn, "chunks_vocab", "chunks_fts_data")
    whole = PostingsReader(conn, "chunks_vocab", "chunks_fts_data", cache=True)
    whole.load_whole()
    reads = []
    whole._fetch = lambda term: reads.append(term)  # a loaded reader reads nothing more
    assert len(terms) > 20
    for term in terms + ["absent"]:
        ids, tf = single(term)
        got_ids, got_tf = whole(term)
        assert got_ids.dtype == ids.dtype and got_tf.dtype == tf.dtype
        assert got_ids.tobytes() == ids.tobytes() and got_tf.tobytes() == tf.tobytes()
    assert whole("token") is whole("token") and not reads


def test_doclists_decoded_together_equal_each_decoded_alone():
    texts = ["0,1,2,3,5,9", None, "30", "7,4,15,16,17", "12,13,14,12", ""]  # in order, empty, out of order
    for batch in (texts, [t for t in texts if t != "7,4,15,16,17"], [None], []):
        together = PostingsReader._decode_many(batch)
        assert len(together) == len(batch)
        for text, (ids, tf) in zip(batch, together):
            one_ids, one_tf = PostingsReader._decode(text)
            assert ids.dtype == one_ids.dtype and tf.dtype == one_tf.dtype
            assert ids.tolist() == one_ids.tolist() and tf.tobytes() == one_tf.tobytes()
