"""Keyword postings packed per term beside a large SQLite store: one blob read per query term.

The FTS5 index answers a term's postings through its ``fts5vocab`` instance table, one virtual
row per occurrence (ragit.store.bm25.PostingsReader): about 5 ms per common term at 1M chunks,
most of a warm query. This file holds the same postings, term → (row ids, weighted counts), as
two packed arrays per term, so a query reads each term with one B-tree lookup.

It is derived data, like the vector index (ragit.store.vectorindex): built from the FTS index
itself (one streaming pass over the vocabulary), never trusted unless it matches the index it was
built from, and without it every read goes through ``fts5vocab`` as before. It matches when its
recorded FTS generation (FTS5's averages and structure records, which every keyword write
changes) and last keyword row equal the store's. The postings it returns are exactly the pairs
``PostingsReader`` decodes (the same decoding of the same doclists), so scores keep their bits.

Layout: ``.ragit/store/postings.db``, an SQLite file of its own (the store's schema is
unchanged, and an older ragit ignores the file): ``meta(key, value)`` and
``postings(term PRIMARY KEY, ids, tfs)``; ``ids`` int32 (int64 when a row id needs it, as
``meta.id_bytes`` says), ``tfs`` uint16 when every weighted count of the term is an integer below
65,536 (always, with the field weights 1 and 2), else float64; the blob length tells which.
``postings`` is a rowid table, its terms in an index of their own: in a ``WITHOUT ROWID`` table
(files written before session 11, still read as they are) every key a lookup's binary search
compares against is a whole record, so finding one term read the whole doclists of the large
terms on its way (1M chunks: 1.1 ms of postings reads per question, 0.2 ms now).
``tails(term, ids, tfs)`` (format 2) holds postings appended since the term's row was written,
one row per extension in id order, each blob encoded as a row's; a term's postings are its row
followed by its tails.

Keyword rows are only ever appended (their ids grow), so after an ingest the file is extended by
the new rows' postings, counted from the new rows' fields (analysed as ingest analysed them) and
checked against the index: the counted occurrences must add up to the rows' recorded lengths,
and a full-text look-up of each term, seeking to the new id range, must find it in exactly the
rows counted. Otherwise (or when the new rows are many) the file is rebuilt from the index. Each
term's new postings become a tail, so a commit writes what it added, not the doclists of the
common terms it touches; a term's :data:`MAX_TAILS`-th extension merges its tails into its row.
"""

from __future__ import annotations

import os
import sqlite3
import sys
from pathlib import Path
from typing import TYPE_CHECKING

from .bm25 import CachingPostings

if TYPE_CHECKING:  # pragma: no cover
    import numpy as np

    from .bm25 import Postings

FORMAT = 2  # 2: the tails table (a file of format 1 is rebuilt on the next refresh)
FILE_NAME = "postings.db"
# Stores with fewer keyword rows read fts5vocab (a few ms per question at most); at and above,
# ingest keeps this file (bench/vector_scale.py: 100k and 1M chunks).
MIN_ROWS = 50_000
_FLUSH = 2_000  # terms written per executemany
# A term's postings appended after a commit are a tail row of their own: rewriting the term's row
# instead cost a common term's whole doclist per commit (at 1M chunks a one-file commit rewrote
# 153 MB). With this many tails, the next commit touching the term merges them into its row.
MAX_TAILS = 16
_READ_WITH_TAILS = ("SELECT 0 AS at, ids, tfs FROM postings WHERE term = ?1"
                    " UNION ALL SELECT rowid, ids, tfs FROM tails WHERE term = ?1 ORDER BY at")


def file_path(store_dir: Path) -> Path:
    return Path(store_dir) / FILE_NAME


def extend_limit(covered: int) -> int:
    """New keyword rows appended in place; more are cheaper to rebuild in one pass."""
    return max(20_000, covered // 20)


def fts_state(conn: sqlite3.Connection) -> tuple[str, int, str]:
    """(generation, last row id, last row key) of the store's FTS index, read in O(log n). The
    generation is FTS5's averages record (the row count and token totals: every keyword write
    changes it) and its structure record (every segment's id, size and row range: a store
    rebuilt with other rows lays out other segments); the last row names the content the ids
    point to."""
    blocks = dict(conn.execute("SELECT id, block FROM chunks_fts_data WHERE id IN (1, 10)").fetchall())
    gen = ":".join(bytes(blocks[i]).hex() if blocks.get(i) is not None else "" for i in (1, 10))
    last = conn.execute("SELECT COALESCE(MAX(rowid), 0) FROM fts_rows").fetchone()[0]
    key = conn.execute("SELECT path || char(0) || chunk_id FROM fts_rows WHERE rowid = ?", (last,)).fetchone()
    return gen, int(last), (key[0] if key else "")


def _row_count(conn: sqlite3.Connection, last: int | None = None, *, first: int | None = None) -> int:
    """Keyword rows with ids up to ``last`` (all when None), or from ``first`` on."""
    if first is not None:
        return int(conn.execute("SELECT COUNT(*) FROM fts_rows WHERE rowid >= ?", (first,)).fetchone()[0])
    sql = "SELECT COUNT(*) FROM fts_rows" + ("" if last is None else " WHERE rowid <= ?")
    return int(conn.execute(sql, () if last is None else (last,)).fetchone()[0])


def _meta(conn: sqlite3.Connection) -> dict[str, str]:
    return dict(conn.execute("SELECT key, value FROM meta").fetchall())


def _matches(meta: dict[str, str], state: tuple[str, int, str]) -> bool:
    gen, last, key = state
    return (meta.get("format") == str(FORMAT) and meta.get("generation") == gen and meta.get("last") == str(last)
            and meta.get("last_key") == key)


class PackedPostings:
    """An open, matching postings file: :meth:`get` is a term's postings (empty when absent)."""

    def __init__(self, conn: sqlite3.Connection, id_bytes: int):
        self.conn = conn
        self._ids = "<i4" if id_bytes == 4 else "<i8"
        # (a file just built has no tails: its terms are then read with one look-up each)
        try:
            self._tails = conn.execute("SELECT 1 FROM tails LIMIT 1").fetchone() is not None
        except sqlite3.OperationalError:  # no such table: nothing was ever appended
            self._tails = False

    def get(self, term: str) -> "Postings":
        import numpy as np

        if self._tails:  # the term's row, then the rows appended since (their ids follow), read in
            # one statement: one read transaction, so a merge committed meanwhile cannot drop a tail
            parts = [(ids, tfs) for _, ids, tfs in self.conn.execute(_READ_WITH_TAILS, (term,))]
        else:
            row = self.conn.execute("SELECT ids, tfs FROM postings WHERE term = ?", (term,)).fetchone()
            parts = [] if row is None else [row]
        if len(parts) == 1:  # (most terms)
            ids_blob, tfs = parts[0]
            ids = np.frombuffer(ids_blob, dtype=self._ids).astype(np.int64)
            tf = np.frombuffer(tfs, dtype="<u2" if len(tfs) == 2 * len(ids) else "<f8")
            return ids, tf.astype(np.float64)
        width = 4 if self._ids == "<i4" else 8
        sizes = [len(ids) // width for ids, _ in parts]
        # each part converted straight into its place (a common term's row is megabytes at 1M
        # chunks: converting it and then concatenating copied it twice)
        ids = np.empty(sum(sizes), dtype=np.int64)
        tf = np.empty(len(ids), dtype=np.float64)
        at = 0
        for (ids_blob, tfs), size in zip(parts, sizes):
            ids[at : at + size] = np.frombuffer(ids_blob, dtype=self._ids)
            tf[at : at + size] = np.frombuffer(tfs, dtype="<u2" if len(tfs) == 2 * size else "<f8")
            at += size
        return ids, tf

    def close(self) -> None:
        self.conn.close()


def open_packed(store_dir: Path, main: sqlite3.Connection) -> PackedPostings | None:
    """The store's postings file when it matches the FTS index ``main`` sees; None otherwise
    (missing, unreadable, stale: the caller reads fts5vocab)."""
    path = file_path(store_dir)
    if not path.is_file():
        return None
    try:
        conn = sqlite3.connect(f"file:{path}?mode=ro", uri=True, check_same_thread=False, isolation_level=None)
    except sqlite3.Error:
        return None
    try:
        meta = _meta(conn)
        if _matches(meta, fts_state(main)):
            return PackedPostings(conn, int(meta.get("id_bytes", "8")))
    except (sqlite3.Error, ValueError):
        pass
    conn.close()
    return None


def _code_sql() -> str:
    from .bm25 import FIELDS

    return f"doc * {len(FIELDS)} + CASE col " + " ".join(f"WHEN '{c}' THEN {i}" for i, c in enumerate(FIELDS)) + " END"


def _pack(ids: "np.ndarray", tf: "np.ndarray", id_bytes: int) -> tuple[bytes, bytes]:
    import numpy as np

    packed_ids = ids.astype("<i4" if id_bytes == 4 else "<i8").tobytes()
    small = tf.astype("<u2")
    if len(tf) and np.array_equal(small.astype(np.float64), tf):
        return packed_ids, small.tobytes()
    return packed_ids, tf.astype("<f8").tobytes()


def _pack_many(postings: "list[Postings]", id_bytes: int) -> list[tuple[bytes, bytes]]:
    """:func:`_pack` of each term's postings, converted and compared together (one numpy call
    per batch instead of several per term: thousands of small terms cost ~3 µs each alone). The
    same bytes: each term is small (``uint16``) exactly when every one of its counts is."""
    import numpy as np

    sizes = [len(ids) for ids, _ in postings]
    if not postings or not all(sizes):  # (a term without rows: one at a time, as _pack decides)
        return [_pack(ids, tf, id_bytes) for ids, tf in postings]
    ids = np.concatenate([ids for ids, _ in postings]).astype("<i4" if id_bytes == 4 else "<i8")
    tf = np.concatenate([tf for _, tf in postings])
    small = tf.astype("<u2")
    bounds = np.concatenate(([0], np.cumsum(sizes)))
    fits = np.logical_and.reduceat(small.astype(np.float64) == tf, bounds[:-1]).tolist()
    id_blob, small_blob, wide_blob = ids.tobytes(), small.tobytes(), None
    width = ids.itemsize
    out = []
    for a, b, fit in zip(bounds[:-1].tolist(), bounds[1:].tolist(), fits):
        if fit:
            counts = small_blob[2 * a:2 * b]
        else:
            if wide_blob is None:
                wide_blob = tf.astype("<f8").tobytes()
            counts = wide_blob[8 * a:8 * b]
        out.append((id_blob[width * a:width * b], counts))
    return out


def _open_out(path: Path) -> sqlite3.Connection:
    conn = sqlite3.connect(path, isolation_level=None)
    conn.execute("PRAGMA journal_mode = DELETE")
    conn.execute("CREATE TABLE IF NOT EXISTS meta(key TEXT PRIMARY KEY, value TEXT NOT NULL)")
    conn.execute("CREATE TABLE IF NOT EXISTS postings(term TEXT PRIMARY KEY, ids BLOB NOT NULL, tfs BLOB NOT NULL)")
    conn.execute("CREATE TABLE IF NOT EXISTS tails(term TEXT NOT NULL, ids BLOB NOT NULL, tfs BLOB NOT NULL)")
    conn.execute("CREATE INDEX IF NOT EXISTS tails_by_term ON tails(term)")
    return conn


def _write_meta(conn: sqlite3.Connection, state: tuple[str, int, str], rows: int, id_bytes: int) -> None:
    gen, last, key = state
    conn.executemany("INSERT OR REPLACE INTO meta VALUES(?, ?)", [
        ("format", str(FORMAT)), ("generation", gen), ("rows", str(rows)), ("last", str(last)),
        ("last_key", key), ("id_bytes", str(id_bytes))])


def build(store_dir: Path, main: sqlite3.Connection) -> int:
    """Write the postings of every term of ``main``'s FTS index (atomically replacing any old
    file); returns the number of terms."""
    from .bm25 import PostingsReader

    state = fts_state(main)
    rows = _row_count(main)
    id_bytes = 4 if state[1] < 2**31 else 8
    path = file_path(store_dir)
    tmp = path.with_name(f"{path.name}.tmp{os.getpid()}")
    tmp.unlink(missing_ok=True)
    terms = 0
    try:
        out = _open_out(tmp)
        try:
            out.execute("PRAGMA synchronous = OFF")
            out.execute("BEGIN")
            # one streaming pass: the vocabulary table yields terms in order, so GROUP BY needs no
            # sort; each batch of terms is decoded and packed together
            found = main.execute(f"SELECT term, group_concat({_code_sql()}) FROM chunks_vocab GROUP BY term")
            while batch := found.fetchmany(_FLUSH):
                packed = _pack_many(PostingsReader._decode_many([text for _, text in batch]), id_bytes)
                out.executemany("INSERT INTO postings VALUES(?, ?, ?)",
                                [(term, *blobs) for (term, _), blobs in zip(batch, packed)])
                terms += len(batch)
            _write_meta(out, state, rows, id_bytes)
            out.execute("COMMIT")
        finally:
            out.close()
        if fts_state(main) != state:  # the index changed while it was read: keep nothing
            return 0
        os.replace(tmp, path)
    finally:
        tmp.unlink(missing_ok=True)
    return terms


def _one_token(term: str) -> bool:
    """Whether the ``ascii`` tokenizer (ragit.store.sqlite.FTS_TOKENIZE) reads ``term`` as one token,
    exactly as written: lower-case ASCII letters and digits, and any non-ASCII character."""
    return bool(term) and all(not ch.isascii() or ch.islower() or ch.isdigit() for ch in term)


def _unpack(ids_blob: bytes, tfs_blob: bytes, id_bytes: int) -> tuple[list[int], list[float]]:
    """A tail's ids and counts as :func:`_append` takes them (no numpy, as the extension)."""
    from array import array

    ids = array("i" if id_bytes == 4 else "q")
    ids.frombytes(ids_blob)
    tfs = array("H" if len(tfs_blob) == 2 * len(ids) else "d")
    tfs.frombytes(tfs_blob)
    if sys.byteorder != "little":  # pragma: no cover - the file is little-endian
        ids.byteswap()
        tfs.byteswap()
    return ids.tolist(), [float(t) for t in tfs]


def _append(old: tuple[bytes, bytes] | None, ids: list[int], tfs: list[float], id_bytes: int) -> tuple[bytes, bytes]:
    """A term's packed blobs with ``ids``/``tfs`` (all after its old rows) appended."""
    from array import array

    def little(values: array) -> bytes:
        if sys.byteorder != "little":  # pragma: no cover - the file is little-endian
            values.byteswap()
        return values.tobytes()

    old_ids, old_tfs = old if old is not None else (b"", b"")
    count = len(old_ids) // id_bytes
    was_small = len(old_tfs) == 2 * count
    if was_small and all(t == int(t) and 0 <= t < 65536 for t in tfs):
        return old_ids + little(array("i" if id_bytes == 4 else "q", ids)), old_tfs + little(array("H", map(int, tfs)))
    if was_small and count:  # the term's counts no longer fit uint16: all of them as float64
        previous = array("H")
        previous.frombytes(old_tfs)
        if sys.byteorder != "little":  # pragma: no cover
            previous.byteswap()
        old_tfs = little(array("d", map(float, previous)))
    return old_ids + little(array("i" if id_bytes == 4 else "q", ids)), old_tfs + little(array("d", tfs))


def _extend(store_dir: Path, main: sqlite3.Connection, meta: dict[str, str], state: tuple[str, int, str],
            rows: int) -> bool:
    """Append the postings of the keyword rows after ``meta``'s last row; False when the index
    does not hold exactly what the new rows' analysis gives (the caller rebuilds).

    The new rows' postings are counted from their fields, analysed as ingest analysed them
    (:func:`ragit.store.bm25.index_fields`), and checked against the index itself: the rows'
    lengths must add up to the occurrences counted, every term must be one token of the index's
    tokenizer, and for every term the index must hold it in exactly the rows counted (a
    full-text look-up that seeks to the new rows: reading a term's ``fts5vocab`` rows walked its
    whole doclist, so a commit's refresh grew with the store)."""
    from .bm25 import FIELD_WEIGHTS, index_fields

    first, last = int(meta["last"]) + 1, state[1]
    id_bytes = int(meta["id_bytes"])
    if id_bytes == 4 and last >= 2**31:
        return False
    new = main.execute(
        "SELECT r.rowid, r.path, c.text, c.title, r.tokens FROM fts_rows r JOIN chunks c ON c.chunk_id = r.chunk_id"
        " WHERE r.rowid >= ? ORDER BY r.rowid", (first,)).fetchall()
    if len(new) != rows - int(meta["rows"]):
        return False
    counted: dict[str, tuple[list[int], list[float]]] = {}
    found = expected = 0
    for rowid, path, text, title, tokens in new:
        expected += int(tokens)
        weights: dict[str, float] = {}
        for field, weight in zip(index_fields(text, title, path)[:3], FIELD_WEIGHTS):
            for term in field.split():
                weights[term] = weights.get(term, 0.0) + weight
                found += 1
        for term, tf in weights.items():
            ids, tfs = counted.setdefault(term, ([], []))
            ids.append(rowid)
            tfs.append(tf)
    if found != expected or not all(map(_one_token, counted)):
        return False
    appended = []
    for term in sorted(counted):
        ids, tfs = counted[term]
        held = [r for (r,) in main.execute("SELECT rowid FROM chunks_fts WHERE chunks_fts MATCH ? AND rowid BETWEEN ? AND ?",
                                           ('"' + term + '"', first, last))]
        if held != ids:  # (both ascending)
            return False
        appended.append((term, ids, tfs))
    conn = _open_out(file_path(store_dir))
    try:
        conn.execute("BEGIN IMMEDIATE")
        if _meta(conn) != meta:
            conn.execute("ROLLBACK")
            return False
        for term, ids, tfs in appended:
            # (counted from the index alone: a tail's blobs are read only when it is merged)
            held = conn.execute("SELECT count(*) FROM tails WHERE term = ?", (term,)).fetchone()[0]
            if held + 1 < MAX_TAILS:
                conn.execute("INSERT INTO tails VALUES(?, ?, ?)", (term, *_append(None, ids, tfs, id_bytes)))
                continue
            # the term's row, its tails and these rows in one row again (appended at once: the
            # same bytes as one tail at a time, the row copied once)
            old = None
            more_ids: list[int] = []
            more_tfs: list[float] = []
            for at, part_ids, part_tfs in conn.execute(_READ_WITH_TAILS, (term,)).fetchall():
                if at == 0:  # the term's row
                    old = (bytes(part_ids), bytes(part_tfs))
                    continue
                tail_ids, tail_tfs = _unpack(bytes(part_ids), bytes(part_tfs), id_bytes)
                more_ids += tail_ids
                more_tfs += tail_tfs
            blobs = _append(old, more_ids + ids, more_tfs + tfs, id_bytes)
            conn.execute("DELETE FROM tails WHERE term = ?", (term,))
            conn.execute("INSERT OR REPLACE INTO postings VALUES(?, ?, ?)", (term, *blobs))
        _write_meta(conn, state, rows, id_bytes)
        conn.execute("COMMIT")
    except BaseException:
        if conn.in_transaction:
            conn.execute("ROLLBACK")
        raise
    finally:
        conn.close()
    return True


def refresh(store_dir: Path, main: sqlite3.Connection) -> str:
    """After a keyword write: keep, extend or build the postings file ("none" below
    :data:`MIN_ROWS`, "kept", "extended", "built", "failed"). A failure leaves no file (queries
    then read fts5vocab), never fails the ingest."""
    path = file_path(store_dir)
    try:
        state = fts_state(main)
        meta = _read_meta(path)
        if meta is not None and _matches(meta, state):
            return "kept"
        held = _held(main, meta, state) if meta is not None and meta.get("format") == str(FORMAT) else None
        # (one pass over the rows: those the file holds, counted for the check, plus the new ones)
        rows = _row_count(main) if held is None else held + _row_count(main, first=int(meta["last"]) + 1)
        if rows < MIN_ROWS:
            path.unlink(missing_ok=True)
            return "none"
        if held is not None:
            if rows - int(meta["rows"]) <= extend_limit(int(meta["rows"])) and _extend(store_dir, main, meta, state, rows):
                return "extended"
        build(store_dir, main)
        return "built"
    except Exception:  # noqa: BLE001 - an accelerator: without it queries read fts5vocab
        try:
            path.unlink(missing_ok=True)
        except OSError:
            pass
        return "failed"


def _read_meta(path: Path) -> dict[str, str] | None:
    if not path.is_file():
        return None
    try:
        conn = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
        try:
            return _meta(conn)
        finally:
            conn.close()
    except sqlite3.Error:
        return None


def _held(main: sqlite3.Connection, meta: dict[str, str], state: tuple[str, int, str]) -> int | None:
    """The index's rows up to the file's last row when the index only grew by rows after it since
    the file was written (as many rows there as the file recorded, the same last row), else None."""
    try:
        last, rows = int(meta["last"]), int(meta["rows"])
    except (KeyError, ValueError):
        return None
    if state[1] <= last:
        return None
    held = _row_count(main, last)
    key = main.execute("SELECT path || char(0) || chunk_id FROM fts_rows WHERE rowid = ?", (last,)).fetchone()
    return held if held == rows and key is not None and key[0] == meta.get("last_key") else None


# How much of a store's SQLite file a long-lived process's read connection maps (PRAGMA
# mmap_size): a page read is then a memory access instead of a read() system call and a copy.
# At 1M chunks a question's postings (a few hundred KB of blobs) took 3.7 ms through reads and
# 2.1 ms mapped; its ~180 chunk rows 7 ms and 2.1 ms (bench/vector_scale.py). Mapped pages are
# the page cache's own, shared and reclaimable; the file is never truncated under a reader.
WARM_MMAP_BYTES = 1 << 32


def keep_mapped(conn: sqlite3.Connection) -> None:
    """Map (up to :data:`WARM_MMAP_BYTES` of) a long-lived read connection's database file; a
    build of SQLite without memory mapping ignores it."""
    conn.execute(f"PRAGMA mmap_size = {WARM_MMAP_BYTES}")


class PackedReader(CachingPostings):
    """A postings reader (ragit.store.bm25.CachingPostings) over a matching postings file: the
    generation is the FTS index's, as for ``PostingsReader``, so a warm process drops it on the
    same writes. A term the file cannot give (it became unreadable after it was opened: a
    writer's crash left a journal a read-only connection cannot roll back) is read from
    fts5vocab, the same pairs."""

    def __init__(self, conn: sqlite3.Connection, packed: PackedPostings, cache: bool = False,
                 owns_connection: bool = False):
        self._packed = packed
        self._plain = None
        if cache:  # a warm process's reader: each new term's postings are a blob of many pages
            keep_mapped(packed.conn)
        super().__init__(conn, cache, owns_connection)

    def read_generation(self) -> bytes:
        row = self._conn.execute("SELECT block FROM chunks_fts_data WHERE id = 1").fetchone()
        return bytes(row[0]) if row else b""

    def _fallback(self):
        if self._plain is None:
            from .bm25 import PostingsReader

            self._plain = PostingsReader(self._conn, "chunks_vocab", "chunks_fts_data")
        return self._plain

    def _fetch(self, term: str) -> "Postings":
        try:
            return self._packed.get(term)
        except sqlite3.Error:
            return self._fallback()._fetch(term)

    def within(self, term: str, first: int, last: int) -> "Postings":
        import numpy as np

        try:
            ids, tf = self._packed.get(term)
        except sqlite3.Error:
            return self._fallback().within(term, first, last)
        lo, hi = np.searchsorted(ids, [first, last + 1])
        return ids[lo:hi], tf[lo:hi]

    def close(self) -> None:
        self._packed.close()
        super().close()
