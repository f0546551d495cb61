"""The packed keyword postings beside a SQLite store (ragit.store.packedpostings): the same pairs
as fts5vocab for every term, the same answers with and without the file, extended (not rebuilt)
after a small commit, and ignored when stale, damaged or below the size threshold."""

from __future__ import annotations

import random
import shutil

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from conftest import write_placeholder_config
from ragit import Repo
from ragit.store import packedpostings
from ragit.store.bm25 import PostingsReader
from ragit.store.packedpostings import PackedReader

WORDS = ("token session store snapshot vector index commit branch cache query rank fusion chunk file "
         "parser schema migrate config watch merge review budget window memory recall artifact packet "
         "mask secret blob heap graph table column filter cursor socket stream buffer thread signal "
         "Ünïcode café naïve").split()


def _docs(n: int, seed: int = 5, prefix: str = "d") -> dict[str, str]:
    rng = random.Random(seed)
    out = {}
    for i in range(n):
        parts = [f"# {prefix.upper()} {i} {' '.join(rng.sample(WORDS, 3))}\n"]
        for s in range(2):
            parts.append(f"## Part {s} {rng.choice(WORDS)}\n\n{' '.join(rng.choices(WORDS, k=30))} tokenStore_{i}\n")
        out[f"docs/{prefix}{i:03d}.md"] = "\n".join(parts)
    return out


QUESTIONS = ["token session store", "vector index commit", "café naïve", "merge review budget window",
             "TokenStore rotate", "socket stream buffer", "tokenStore_7", "nothing matches zzz"]


@pytest.fixture
def repo(git_repo, monkeypatch):
    monkeypatch.setattr(packedpostings, "MIN_ROWS", 1)
    write_placeholder_config(git_repo.root)
    git_repo.commit("corpus", _docs(40))
    r = Repo.open(git_repo.root)
    r.ingest(all=True)
    return git_repo


def _store(root):
    from ragit.store.sqlite import SqliteStore

    return SqliteStore.open_read(root / ".ragit" / "store")


def _all_terms(store) -> list[str]:
    return [t for (t,) in store.conn.execute("SELECT DISTINCT term FROM chunks_vocab")]


def _check_postings(root) -> None:
    """:func:`_same_postings` on the store of the repository at ``root``."""
    store = _store(root)
    try:
        _same_postings(store)
    finally:
        store.close()


def _same_postings(store) -> None:
    """Every term of the index reads the same (ids, weighted counts), dtype and bits, both ways."""
    packed = store.postings()
    assert isinstance(packed, PackedReader)
    plain = PostingsReader(store.conn, "chunks_vocab", "chunks_fts_data")
    terms = _all_terms(store)
    assert len(terms) > 40
    for term in terms + ["absent-term"]:
        a, b = packed(term), plain(term)
        assert a[0].dtype == b[0].dtype == np.int64 and a[1].dtype == b[1].dtype == np.float64
        assert a[0].tobytes() == b[0].tobytes() and a[1].tobytes() == b[1].tobytes(), term
        lo, hi = (int(a[0][len(a[0]) // 3]), int(a[0][-1]) - 1) if len(a[0]) else (1, 5)
        wa, wb = packed.within(term, lo, hi), plain.within(term, lo, hi)
        assert wa[0].tobytes() == wb[0].tobytes() and wa[1].tobytes() == wb[1].tobytes()


def _answers(root) -> list:
    r = Repo.open(root)
    return [[(h.path, h.chunk_id, h.score_final, h.score_vector, h.score_keyword) for h in r.query(q).hits]
            for q in QUESTIONS]


def test_built_at_ingest_with_fts5vocabs_pairs(repo):
    assert packedpostings.file_path(repo.root / ".ragit" / "store").is_file()
    _check_postings(repo.root)


def test_answers_are_identical_with_and_without_the_file(repo):
    path = packedpostings.file_path(repo.root / ".ragit" / "store")
    with_file = _answers(repo.root)
    path.unlink()
    store = _store(repo.root)
    try:
        assert isinstance(store.postings(), PostingsReader)
    finally:
        store.close()
    assert _answers(repo.root) == with_file
    assert any(hits for hits in with_file)


def test_extended_after_a_small_commit_equals_a_fresh_build(repo, tmp_path):
    repo.commit("more", {**_docs(3, seed=9, prefix="n"), "docs/d001.md": "# Changed\n\nsocket café rewritten\n"})
    r = Repo.open(repo.root)
    r.ingest()
    store = _store(repo.root)
    try:
        _same_postings(store)
        extended = {t: store.postings()(t) for t in _all_terms(store)}
        fresh = tmp_path / "fresh"
        fresh.mkdir()
        assert packedpostings.build(fresh, store.conn) == len(extended)
        rebuilt = packedpostings.open_packed(fresh, store.conn)
        assert rebuilt is not None
        for term, (ids, tf) in extended.items():
            again = rebuilt.get(term)
            assert again[0].tobytes() == ids.tobytes() and again[1].tobytes() == tf.tobytes(), term
        rebuilt.close()
    finally:
        store.close()
    assert packedpostings.refresh(repo.root / ".ragit" / "store", _store(repo.root).conn) == "kept"


def test_refresh_extends_rather_than_rebuilds(repo, monkeypatch):
    calls = []
    real = packedpostings.build
    monkeypatch.setattr(packedpostings, "build", lambda *a: calls.append(a) or real(*a))
    repo.commit("one file", {"docs/new.md": "# New\n\nsignal thread graph\n"})
    Repo.open(repo.root).ingest()
    assert calls == []
    _check_postings(repo.root)


def test_stale_file_is_ignored(repo, tmp_path):
    path = packedpostings.file_path(repo.root / ".ragit" / "store")
    shutil.copy(path, tmp_path / "old.db")
    before = _answers(repo.root)
    repo.commit("more", _docs(2, seed=4, prefix="s"))
    Repo.open(repo.root).ingest()
    shutil.copy(tmp_path / "old.db", path)  # the file of the previous index generation
    store = _store(repo.root)
    try:
        assert packedpostings.open_packed(path.parent, store.conn) is None
        assert isinstance(store.postings(), PostingsReader)
    finally:
        store.close()
    path.unlink()
    exact = _answers(repo.root)
    shutil.copy(tmp_path / "old.db", path)
    assert _answers(repo.root) == exact
    assert before  # (answers existed before the commit too)


def test_damaged_file_is_ignored_and_rebuilt(repo):
    path = packedpostings.file_path(repo.root / ".ragit" / "store")
    expected = _answers(repo.root)
    path.write_bytes(b"not a database" * 100)
    store = _store(repo.root)
    try:
        assert isinstance(store.postings(), PostingsReader)
    finally:
        store.close()
    assert _answers(repo.root) == expected
    from ragit.store.sqlite import SqliteStore

    writer = SqliteStore.open_write(repo.root / ".ragit" / "store")
    try:
        assert writer.refresh_keyword_postings() == "built"
    finally:
        writer.close()
    _check_postings(repo.root)


def test_small_store_keeps_no_file(git_repo, monkeypatch):
    write_placeholder_config(git_repo.root)
    git_repo.commit("corpus", _docs(5))
    Repo.open(git_repo.root).ingest(all=True)
    assert not packedpostings.file_path(git_repo.root / ".ragit" / "store").exists()


def test_appended_blobs_read_back_as_written():
    """An extension's packing (no numpy: a commit hook's ingest) reads back as appended, also
    when the counts outgrow uint16 (the whole row then float64)."""
    from ragit.store.packedpostings import PackedPostings, _append

    import sqlite3

    conn = sqlite3.connect(":memory:")
    conn.execute("CREATE TABLE postings(term TEXT PRIMARY KEY, ids BLOB, tfs BLOB)")
    blobs = _append(None, [1, 2], [1.0, 3.0], 4)
    blobs = _append(blobs, [5], [70000.0], 4)  # widens the counts to float64
    blobs = _append(blobs, [9], [0.5], 4)
    conn.execute("INSERT INTO postings VALUES('t', ?, ?)", blobs)
    ids, tf = PackedPostings(conn, 4).get("t")
    assert ids.tolist() == [1, 2, 5, 9] and tf.tolist() == [1.0, 3.0, 70000.0, 0.5]


def test_a_file_that_fails_after_opening_falls_back_per_term(repo):
    """A postings file that stops answering mid-query (its table gone under a reader: the case of
    a journal a read-only connection cannot roll back) costs speed, not answers."""
    import sqlite3

    store = _store(repo.root)
    try:
        reader = store.postings()
        assert isinstance(reader, PackedReader)
        plain = PostingsReader(store.conn, "chunks_vocab", "chunks_fts_data")
        writer = sqlite3.connect(packedpostings.file_path(repo.root / ".ragit" / "store"))
        writer.execute("DROP TABLE postings")
        writer.commit()
        writer.close()
        for term in ("token", "session", "absent-term"):
            assert reader(term)[0].tobytes() == plain(term)[0].tobytes()
            assert reader(term)[1].tobytes() == plain(term)[1].tobytes()
            got, want = reader.within(term, 2, 30), plain.within(term, 2, 30)
            assert got[0].tobytes() == want[0].tobytes() and got[1].tobytes() == want[1].tobytes()
    finally:
        store.close()


def test_a_replaced_store_drops_its_postings_file(tmp_path):
    """A store this version cannot read is replaced (knowledge §11.5) together with its postings."""
    from ragit.store.sqlite import DB_NAME, SqliteStore

    store_dir = tmp_path / "store"
    store_dir.mkdir()
    (store_dir / DB_NAME).write_bytes(b"not sqlite" * 200)
    packedpostings.file_path(store_dir).write_bytes(b"old postings")
    store = SqliteStore.open_write(store_dir)
    try:
        assert store.replaced
        assert not packedpostings.file_path(store_dir).exists()
    finally:
        store.close()


def test_a_file_of_the_old_layout_reads_and_extends_as_the_new(repo):
    """The postings table is a rowid table with its terms indexed (a WITHOUT ROWID table made a
    lookup compare whole records); a file written before, with the old layout, gives the same
    pairs and is extended in place after a small commit."""
    import sqlite3

    store_dir = repo.root / ".ragit" / "store"
    path = packedpostings.file_path(store_dir)
    conn = sqlite3.connect(path)
    assert "WITHOUT ROWID" not in conn.execute("SELECT sql FROM sqlite_master WHERE name = 'postings'").fetchone()[0]
    conn.executescript("""
        CREATE TABLE old(term TEXT PRIMARY KEY, ids BLOB NOT NULL, tfs BLOB NOT NULL) WITHOUT ROWID;
        INSERT INTO old SELECT term, ids, tfs FROM postings;
        DROP TABLE postings;
        ALTER TABLE old RENAME TO postings;
    """)
    conn.close()
    _check_postings(repo.root)
    repo.commit("more", _docs(2, seed=11, prefix="m"))
    Repo.open(repo.root).ingest()
    store = _store(repo.root)
    try:
        assert packedpostings.refresh(store_dir, store.conn) == "kept"
        _same_postings(store)
        layout = sqlite3.connect(path).execute("SELECT sql FROM sqlite_master WHERE name = 'postings'").fetchone()[0]
        assert "WITHOUT ROWID" in layout  # extended in place, not rebuilt
    finally:
        store.close()


_COUNTS = st.one_of(st.integers(0, 70_000).map(float), st.sampled_from([0.5, 2.25, 65_535.0, 65_536.0, -1.0]))


@settings(max_examples=200, deadline=None)
@given(st.lists(st.lists(st.tuples(st.integers(0, 2**40), _COUNTS), max_size=6), min_size=1, max_size=8),
       st.sampled_from([4, 8]))
def test_a_build_packs_a_batch_of_terms_as_it_packs_each_term(terms, id_bytes):
    """``build`` packs thousands of terms per call (``_pack_many``): the bytes of ``_pack`` term by
    term, small counts as uint16 exactly where every count of that term fits, float64 otherwise,
    and a term without rows as ``_pack`` writes it."""
    from ragit.store.packedpostings import _pack, _pack_many

    if id_bytes == 4:
        terms = [[(i % 2**31, c) for i, c in term] for term in terms]
    postings = [(np.array(sorted(i for i, _ in term), dtype=np.int64), np.array([c for _, c in term], dtype=np.float64))
                for term in terms]
    assert _pack_many(postings, id_bytes) == [_pack(ids, tf, id_bytes) for ids, tf in postings]


def _renamed(fields):
    text, title, path, length = fields
    return text.replace("signal", "signalx"), title, path, length


def _dropped(fields):
    text, title, path, length = fields
    return " ".join(t for t in text.split() if t != "signal"), title, path, length


@pytest.mark.parametrize("distort, outcome", [(None, "extended"), (_renamed, "built"), (_dropped, "built")])
def test_an_extension_that_disagrees_with_the_index_rebuilds(repo, monkeypatch, distort, outcome):
    """The new rows' postings are counted from their analysed fields and checked against the index:
    a term the index does not hold in exactly those rows (the same lengths), or lengths that do not
    add up, and the file is built again from the index instead; either way it reads as fts5vocab."""
    from ragit.store import bm25

    monkeypatch.setattr(packedpostings, "refresh", lambda *a: "kept")  # the ingest leaves the file behind
    repo.commit("two files", {"docs/new.md": "# New\n\nsignal thread graph signal\n",
                              "docs/other.md": "# Other\n\nsocket signal café\n"})
    Repo.open(repo.root).ingest()
    monkeypatch.undo()
    monkeypatch.setattr(packedpostings, "MIN_ROWS", 1)
    if distort is not None:
        real = bm25.index_fields
        monkeypatch.setattr(bm25, "index_fields", lambda *a, **k: distort(real(*a, **k)))
    store = _store(repo.root)
    try:
        assert packedpostings.refresh(repo.root / ".ragit" / "store", store.conn) == outcome
    finally:
        store.close()
    _check_postings(repo.root)


def test_only_terms_the_ascii_tokenizer_keeps_whole_are_counted_from_fields():
    from ragit.store.packedpostings import _one_token

    assert all(map(_one_token, ["abc", "a1", "2024", "café", "naïve", "ünïcode"]))
    assert not any(map(_one_token, ["", "Abc", "a_b", "a-b", "a b", 'a"b']))


def _tails(root, term: str) -> int:
    import sqlite3

    conn = sqlite3.connect(packedpostings.file_path(root / ".ragit" / "store"))
    try:
        return conn.execute("SELECT count(*) FROM tails WHERE term = ?", (term,)).fetchone()[0]
    finally:
        conn.close()


def test_commits_append_tails_that_merge_into_the_terms_row(repo, monkeypatch):
    """A commit's postings are tails of their terms (a common term's doclist is not rewritten per
    commit); a term's MAX_TAILS-th extension merges them into its row. Every read equals
    fts5vocab's throughout, and nothing is rebuilt."""
    calls = []
    real = packedpostings.build
    monkeypatch.setattr(packedpostings, "build", lambda *a: calls.append(a) or real(*a))
    monkeypatch.setattr(packedpostings, "MAX_TAILS", 3)
    seen = []
    for i in range(4):
        repo.commit(f"commit {i}", {f"docs/t{i}.md": f"# Tail {i}\n\nsignal thread graph signal {i}\n"})
        Repo.open(repo.root).ingest()
        seen.append(_tails(repo.root, "signal"))
        _check_postings(repo.root)
    assert seen == [1, 2, 0, 1] and calls == []


def test_a_file_of_format_1_is_built_again():
    """Format 1 files had no tails: a reader of that format would miss them, so the format changed
    and such a file no longer matches (the next refresh builds it)."""
    assert packedpostings.FORMAT == 2
    assert not packedpostings._matches({"format": "1", "generation": "g", "last": "5", "last_key": "k"}, ("g", 5, "k"))
    assert packedpostings._matches({"format": "2", "generation": "g", "last": "5", "last_key": "k"}, ("g", 5, "k"))


def test_a_tail_unpacks_to_what_was_appended():
    from ragit.store.packedpostings import _append, _unpack

    for id_bytes in (4, 8):
        for ids, tfs in (([1, 2, 9], [1.0, 3.0, 2.0]), ([5, 70], [70000.0, 0.5])):
            assert _unpack(*_append(None, ids, tfs, id_bytes), id_bytes) == (ids, tfs)


@settings(max_examples=100, deadline=None)
@given(st.lists(st.lists(_COUNTS, min_size=1, max_size=5), min_size=1, max_size=5), st.sampled_from([4, 8]))
def test_appending_at_once_gives_the_bytes_of_appending_one_batch_at_a_time(batches, id_bytes):
    """A merge appends a term's tails and new rows in one call: the bytes of appending them in turn
    (uint16 while every count fits, float64 for all once one does not)."""
    from ragit.store.packedpostings import _append

    batches = [[c for c in batch if c >= 0] or [1.0] for batch in batches]
    one_by_one, ids_all, tfs_all, next_id = None, [], [], 0
    for batch in batches:
        ids = list(range(next_id, next_id + len(batch)))
        next_id += len(batch)
        one_by_one = _append(one_by_one, ids, batch, id_bytes)
        ids_all += ids
        tfs_all += batch
    assert _append(None, ids_all, tfs_all, id_bytes) == one_by_one
