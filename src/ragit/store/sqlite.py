"""The embedded default store: one SQLite file in WAL mode (knowledge §2.2).

Derived data only: chunks (masked text), an FTS5 index for BM25, float32 vectors and the
per-commit list of admitted documents. Everything here can be rebuilt from git objects plus
manifests, so a missing or stale store is a recoverable condition, never data loss.

Vectors live beside the database in one append-only heap file per embedder (fixed-size float32
rows); the ``vectors`` table maps a chunk to its slot. Each snapshot keeps two packed arrays:
its FTS row ids (sorted) and the heap slots of the same chunks. A read therefore loads two small
blobs and gathers its matrix from a memory-mapped heap, instead of joining one row per chunk.
"""

from __future__ import annotations

import hashlib
import json
import os
import sqlite3
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Iterable, Sequence

from .._version import __version__
from .bm25 import FIELDS, CachingPostings, PostingsReader, index_fields
from .base import SCHEMA_VERSION, ChunkRow

if TYPE_CHECKING:  # pragma: no cover
    from .records import BlobRecord, NewChunk, SnapshotWrite, StoreStats, StoredChunk

DB_NAME = "ragit.db"
WARM_CACHE_KIB = 65_536  # page cache of a warm process's kept read connection (SqliteStore.keep_warm)
# A warm postings reader of an index of at most this many keyword rows reads every term at once
# (bm25.CachingPostings.load_whole), once, then no read per new question term: ~130 ms at 5k chunks
# of C (libuv), where a new term cost ~60 µs each.
WHOLE_POSTINGS_ROWS = 10_000

# The keyword index (knowledge §11.4–11.5): per (path, chunk) row, the terms of ragit.lexical in
# three fields (text, the title's name, the path's words), stored as space-separated terms so the
# ``ascii`` tokenizer keeps each exactly; scores come from ragit.store.bm25 with each snapshot's own
# statistics, so FTS5's own ranking and column sizes are never used.
FTS_TOKENIZE = "ascii"
_FTS_DDL = ", ".join(FIELDS) + f", content='', tokenize='{FTS_TOKENIZE}', columnsize=0"


_SCHEMA = """
CREATE TABLE IF NOT EXISTS meta(key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS blobs(
  blob_id TEXT NOT NULL, profile TEXT NOT NULL, chunker TEXT NOT NULL, chunker_key TEXT NOT NULL,
  front_matter_type TEXT, heading_type TEXT, masked_count INTEGER NOT NULL, skip_reason TEXT,
  chunk_count INTEGER NOT NULL, PRIMARY KEY(blob_id, profile)) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS chunks(
  chunk_id TEXT PRIMARY KEY, blob_id TEXT NOT NULL, chunker_key TEXT NOT NULL, ordinal INTEGER NOT NULL,
  title TEXT NOT NULL, start_line INTEGER NOT NULL, end_line INTEGER NOT NULL, text TEXT NOT NULL,
  token_count INTEGER NOT NULL, citation_id TEXT NOT NULL);
CREATE INDEX IF NOT EXISTS chunks_by_blob ON chunks(blob_id, chunker_key, ordinal);
CREATE INDEX IF NOT EXISTS chunks_by_citation ON chunks(citation_id);
CREATE TABLE IF NOT EXISTS fts_rows(
  rowid INTEGER PRIMARY KEY, path TEXT NOT NULL, chunk_id TEXT NOT NULL, tokens INTEGER NOT NULL,
  UNIQUE(path, chunk_id));
CREATE VIRTUAL TABLE IF NOT EXISTS chunks_fts USING fts5({fts});
CREATE VIRTUAL TABLE IF NOT EXISTS chunks_vocab USING fts5vocab(chunks_fts, instance);
CREATE TABLE IF NOT EXISTS embedders(
  embedder_id TEXT PRIMARY KEY, dims INTEGER NOT NULL, heap TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS vectors(
  chunk_id TEXT NOT NULL, embedder_id TEXT NOT NULL, slot INTEGER NOT NULL,
  PRIMARY KEY(chunk_id, embedder_id)) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS blob_norms(
  blob_id TEXT NOT NULL, chunker_key TEXT NOT NULL, embedder_id TEXT NOT NULL, norm REAL NOT NULL,
  PRIMARY KEY(blob_id, chunker_key, embedder_id)) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS snapshot_rows(
  commit_sha TEXT NOT NULL, embedder_id TEXT NOT NULL, rowids BLOB NOT NULL, slots BLOB NOT NULL,
  files BLOB NOT NULL, lengths BLOB NOT NULL, file_norms BLOB NOT NULL,
  PRIMARY KEY(commit_sha, embedder_id)) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS snapshots(
  commit_sha TEXT PRIMARY KEY, manifest_sha256 TEXT NOT NULL, params TEXT NOT NULL, created_at TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS snapshot_docs(
  commit_sha TEXT NOT NULL, path TEXT NOT NULL, doc_type TEXT NOT NULL, blob_id TEXT NOT NULL,
  chunker_key TEXT NOT NULL, PRIMARY KEY(commit_sha, path)) WITHOUT ROWID;
"""


HEAP_PREFIX, HEAP_SUFFIX = "vectors-", ".f32"

# Page cache of a writing connection, in KiB (SQLite's default is 2 MiB). Chunk ids, citation ids
# and vector keys are hashes, so every insert lands on a random page of its index; once those
# indexes outgrow the cache, nearly every insert reads a page back and evicts a dirty one to the
# WAL. 100k chunks: 24.3 -> 20.4 s CPU for +51 MB; 300k chunks read 17.5 GB through pread with
# 2 MiB. The cache only grows as pages are touched, so a small store stays small.
WRITE_CACHE_KIB = 65_536
# Write-ahead log pages a writing connection lets accumulate before it checkpoints them into the
# database (SQLite's default is 1,000: 4 MB). Each batch commit of an ingest rewrites many of the
# same index pages, and a checkpoint copies (and syncs) each page the log holds once, so a longer
# log copies fewer pages: sympy's ~80 MB store checkpointed after nearly every batch. Bounded, so
# the log stays at most this many pages plus one transaction however large the store grows (a
# 1M-chunk ingest must not keep its whole store in the log); the last connection to close
# checkpoints the rest and removes the log, as before.
WRITE_WAL_PAGES = 16_384


def _is_heap_name(name: str) -> bool:
    return name.startswith(HEAP_PREFIX) and name.endswith(HEAP_SUFFIX)


def orphan_heap_files(store_dir: Path, known: set[str]) -> list[Path]:
    """Heap files in ``store_dir`` whose names are not in ``known`` (the embedders' heaps)."""
    try:
        names = os.listdir(store_dir)
    except OSError:
        return []
    return sorted(Path(store_dir) / n for n in names if _is_heap_name(n) and n not in known)


def connect_read(path: Path) -> sqlite3.Connection:
    """A query-only connection to an existing database, also on read-only storage.

    Read-write at the SQLite level when possible, so that closing it removes the WAL side files
    again; else read-only; and when the directory cannot hold the WAL index (a read-only mount,
    no write permission) and no WAL is pending, ``immutable``: nothing can change the file
    then, and the last published snapshots keep answering (knowledge §4.3).
    """
    wal = Path(f"{path}-wal")
    attempts = [f"file:{path}?mode=rw", f"file:{path}?mode=ro"]
    if not (wal.exists() and wal.stat().st_size):
        attempts.append(f"file:{path}?mode=ro&immutable=1")
    failure: sqlite3.Error | None = None
    for uri in attempts:
        try:
            conn = sqlite3.connect(uri, uri=True, timeout=30, check_same_thread=False, isolation_level=None)
        except sqlite3.Error as exc:
            failure = exc
            continue
        try:
            conn.execute("PRAGMA query_only = 1")
            conn.execute("SELECT COUNT(*) FROM sqlite_master").fetchone()
            return conn
        except sqlite3.Error as exc:
            conn.close()
            if (getattr(exc, "sqlite_errorcode", 0) & 0xFF) not in (8, 14):  # only READONLY, CANTOPEN retry
                raise
            failure = exc
    assert failure is not None
    raise failure


class StoreMissing(Exception):
    """The store file does not exist."""


class StoreUnreadable(Exception):
    """The store exists but cannot be used (corrupt file, foreign schema, missing rows)."""


def _read_heap_rows(path: Path, dims: int, slots: list[int]) -> list[list[float]]:
    """Rows ``slots`` of a heap file as lists of floats, without numpy (a few rows)."""
    from array import array

    row_bytes = dims * 4
    out = []
    try:
        with open(path, "rb") as fh:
            for slot in slots:
                data = os.pread(fh.fileno(), row_bytes, slot * row_bytes)
                if len(data) != row_bytes:
                    raise StoreUnreadable(f"vector heap {path.name} is shorter than the store says")
                row = array("f")
                row.frombytes(data)
                out.append(row.tolist())
    except OSError as exc:
        raise StoreUnreadable(f"vector heap {path.name} cannot be read: {exc}") from exc
    return out


# Keyword rows analysed and inserted per batch (their texts are read back per batch).
INDEX_BATCH = 4096

# Up to this many heap rows, file norms are computed in plain Python when numpy is not loaded.
PY_NORM_MAX_ROWS = 4096

# Heap rows gathered at a time to compute file norms (whole files per group).
NORM_BATCH_ROWS = 4096

# A snapshot row as packing needs it: (FTS row id, heap slot, path, blob id, chunker key, the
# blob's stored file norm or NULL, chunk ordinal, the row's length in keyword terms), from
# snapshot_docs ``d``; one ``?`` for the embedder id.
_ROW_COLUMNS = "r.rowid, v.slot, d.path, d.blob_id, d.chunker_key, n.norm, c.ordinal, r.tokens"
_ROW_JOINS = (
    " JOIN chunks c ON c.blob_id = d.blob_id AND c.chunker_key = d.chunker_key"
    " JOIN fts_rows r ON r.path = d.path AND r.chunk_id = c.chunk_id"
    " LEFT JOIN vectors v ON v.chunk_id = c.chunk_id AND v.embedder_id = ?"
    " LEFT JOIN blob_norms n ON n.blob_id = d.blob_id AND n.chunker_key = d.chunker_key"
    " AND n.embedder_id = v.embedder_id"
)


def _with_vectors(rows, write: SnapshotWrite):
    """``rows`` (a list, or a :class:`~ragit.store.packed.RowTable`) when every one has a heap
    slot, else StoreUnreadable (vectors must precede rows)."""
    missing = getattr(rows, "missing", None)
    if missing is None:
        missing = sum(1 for r in rows if r[1] is None)
    if missing:
        raise StoreUnreadable(f"{missing} chunk(s) of {write.commit_sha} have no vector for {write.embedder_id}")
    return rows


class SqliteStore:
    """SQLite implementation of :class:`ragit.store.base.Store`."""

    takes_keyword_fields = True  # SnapshotWrite.keyword_fields: rows analysed ahead are not analysed again

    def __init__(self, conn: sqlite3.Connection, path: Path, writable: bool):
        self.conn = conn
        self.path = path
        self.writable = writable
        self.replaced: str | None = None  # why open_write created the store afresh, if it did
        self._heap_undo: list[tuple[Path, int | None]] = []  # (heap, size before this write | None: new)

    # ------------------------------------------------------------ opening

    @classmethod
    def open_read(cls, store_dir: Path) -> "SqliteStore":
        """Open an existing store for reading; creates nothing (a missing file is StoreMissing).

        The connection is read-write at the SQLite level only so that closing it removes the
        WAL side files again; no statement ever writes.
        """
        path = Path(store_dir) / DB_NAME
        if not path.is_file():
            raise StoreMissing(str(path))
        try:
            conn = connect_read(path)
        except sqlite3.Error as exc:
            raise StoreUnreadable(str(exc)) from exc
        store = cls(conn, path, writable=False)
        try:  # connect_read already made the connection query-only
            store.schema_version()
        except sqlite3.DatabaseError as exc:
            conn.close()
            raise StoreUnreadable(str(exc)) from exc
        return store

    @classmethod
    def open_write(cls, store_dir: Path) -> "SqliteStore":
        """Open (creating if needed) the store for ingest or rebuild.

        A store of another schema version, or a file SQLite cannot read, is derived data this
        version cannot use (knowledge §11.5: a layout change rebuilds the store): its files are
        removed and the store is created afresh; ``replaced`` then says why.
        """
        from ..fsutil import writing

        try:
            return cls._open_write(store_dir)
        except StoreUnreadable as exc:
            with writing(store_dir):
                from .packedpostings import FILE_NAME as POSTINGS_FILE

                for name in os.listdir(store_dir):
                    if name.startswith(DB_NAME) or _is_heap_name(name) or name == POSTINGS_FILE:
                        os.unlink(Path(store_dir) / name)
            store = cls._open_write(store_dir)
            store.replaced = str(exc)
            return store

    @classmethod
    def _open_write(cls, store_dir: Path) -> "SqliteStore":
        """Open or create the database; a store that cannot be written (full, read-only, not
        permitted) is ``STORE_WRITE_FAILED``, never mistaken for an unreadable one (which
        :meth:`open_write` would replace)."""
        store_dir = Path(store_dir)
        from ..errors import storage_write_error
        from ..fsutil import ensure_ragit_gitignore, writing

        ensure_ragit_gitignore(store_dir)  # knowledge §2.1: never let `git add -A` stage the store
        path = store_dir / DB_NAME
        with writing(path):
            store_dir.mkdir(parents=True, exist_ok=True)
            conn = sqlite3.connect(path, timeout=30, check_same_thread=False, isolation_level=None)
        try:
            conn.execute("PRAGMA journal_mode=WAL")
            conn.execute("PRAGMA synchronous=NORMAL")
            conn.execute("PRAGMA temp_store=MEMORY")
            conn.execute(f"PRAGMA cache_size=-{WRITE_CACHE_KIB}")
            conn.execute(f"PRAGMA wal_autocheckpoint={WRITE_WAL_PAGES}")
            version = cls._read_version(conn)
            if version is not None and version != SCHEMA_VERSION:
                raise StoreUnreadable(f"store schema {version} is not {SCHEMA_VERSION}")
            conn.executescript(_SCHEMA.format(fts=_FTS_DDL))
            if version is None:
                conn.execute("BEGIN IMMEDIATE")
                conn.execute("INSERT OR REPLACE INTO meta VALUES('schema_version', ?)", (str(SCHEMA_VERSION),))
                conn.execute("INSERT OR REPLACE INTO meta VALUES('created_by', ?)", (f"ragit {__version__}",))
                conn.execute("COMMIT")
        except sqlite3.DatabaseError as exc:
            conn.close()
            failure = storage_write_error(exc, path)
            if failure is not None:
                raise failure from exc
            raise StoreUnreadable(str(exc)) from exc
        return cls(conn, path, writable=True)

    @staticmethod
    def _read_version(conn: sqlite3.Connection) -> int | None:
        has_meta = conn.execute("SELECT 1 FROM sqlite_master WHERE type='table' AND name='meta'").fetchone()
        if not has_meta:
            return None
        row = conn.execute("SELECT value FROM meta WHERE key='schema_version'").fetchone()
        return int(row[0]) if row else None

    def schema_version(self) -> int | None:
        return self._read_version(self.conn)

    def close(self) -> None:
        self.conn.close()

    # ------------------------------------------------------------ ingest side

    def get_blobs(self, keys: Iterable[tuple[str, str]]) -> dict[tuple[str, str], BlobRecord]:
        """Blob records with their chunk lists, for the (blob id, profile) keys that exist.

        A record whose chunk rows are not all there (a damaged store) is left out: the ingest
        then reads and chunks that blob again instead of publishing a document without chunks.
        """
        from .records import BlobRecord, StoredChunk

        keys = list(dict.fromkeys(keys))
        if not keys:
            return {}
        wanted = json.dumps([list(k) for k in keys])
        q = ("WITH q(blob_id, profile) AS (SELECT json_extract(value, '$[0]'), json_extract(value, '$[1]')"
             " FROM json_each(?))")
        rows = self.conn.execute(
            q + " SELECT b.blob_id, b.profile, b.chunker, b.chunker_key, b.front_matter_type, b.heading_type,"
            " b.masked_count, b.skip_reason, b.chunk_count FROM q JOIN blobs b ON b.blob_id = q.blob_id"
            " AND b.profile = q.profile",
            (wanted,),
        ).fetchall()
        chunk_rows = self.conn.execute(
            q + " SELECT c.blob_id, c.chunker_key, c.chunk_id, c.ordinal, c.title, c.start_line, c.end_line,"
            " c.token_count FROM q JOIN blobs b ON b.blob_id = q.blob_id AND b.profile = q.profile"
            " JOIN chunks c ON c.blob_id = b.blob_id AND c.chunker_key = b.chunker_key"
            " ORDER BY c.blob_id, c.chunker_key, c.ordinal",
            (wanted,),
        ).fetchall()
        chunks: dict[tuple[str, str], list[StoredChunk]] = {}
        for blob_id, chunker_key, chunk_id, ordinal, title, start, end, tokens in chunk_rows:
            chunks.setdefault((blob_id, chunker_key), []).append(
                StoredChunk(chunk_id, ordinal, title, start, end, tokens)
            )
        out: dict[tuple[str, str], BlobRecord] = {}
        for blob_id, profile, chunker, chunker_key, fm_type, heading_type, masked, skip, count in rows:
            stored = tuple(chunks.get((blob_id, chunker_key), ()))
            if len(stored) == count:
                out[(blob_id, profile)] = BlobRecord(
                    blob_id, profile, chunker, chunker_key, fm_type, heading_type, masked, skip, stored,
                )
        return out

    def missing_vectors(self, chunk_ids: Sequence[str], embedder_id: str) -> set[str]:
        present = self.chunks_present(chunk_ids, embedder_id)
        return {c for c in chunk_ids if c not in present}

    def chunks_present(self, chunk_ids: Sequence[str], embedder_id: str) -> set[str]:
        """Chunk ids that exist in ``chunks`` and have a vector for ``embedder_id`` that the
        heap file can serve (a truncated heap makes its lost rows missing, so an ingest
        re-embeds them and doctor reports them)."""
        ids = list(dict.fromkeys(chunk_ids))
        if not ids:
            return set()
        rows = self.conn.execute(
            "SELECT c.chunk_id FROM json_each(?) q JOIN chunks c ON c.chunk_id = q.value"
            " JOIN vectors v ON v.chunk_id = c.chunk_id AND v.embedder_id = ? AND v.slot < ?",
            (json.dumps(ids), embedder_id, self._heap_rows(embedder_id)),
        ).fetchall()
        return {r[0] for r in rows}

    def unservable_chunks(self, commit_sha: str, embedder_id: str) -> set[str]:
        """Chunks of a snapshot that its packed rows cannot serve: a slot past the heap file or
        other than the chunk's vector (left behind when lost vectors were re-embedded), or a
        chunk or document row the store lost. A row without its FTS row counts as
        ``fts-row:<id>``."""
        from .packed import PackedRows

        row = self.conn.execute(
            "SELECT rowids, slots, files, lengths, file_norms FROM snapshot_rows"
            " WHERE commit_sha = ? AND embedder_id = ?", (commit_sha, embedder_id)).fetchone()
        if row is None:
            return set()
        rows = PackedRows.from_blobs(*row)
        packed = dict(zip(rows.rowids.tolist(), rows.slots.tolist()))
        limit = self._heap_rows(embedder_id)
        current = self.conn.execute(
            "SELECT r.rowid, r.chunk_id, v.slot, c.chunk_id IS NOT NULL AND d.path IS NOT NULL"
            " FROM json_each(?) q JOIN fts_rows r ON r.rowid = q.value"
            " LEFT JOIN vectors v ON v.chunk_id = r.chunk_id AND v.embedder_id = ?"
            " LEFT JOIN chunks c ON c.chunk_id = r.chunk_id"
            " LEFT JOIN snapshot_docs d ON d.commit_sha = ? AND d.path = r.path AND d.blob_id = c.blob_id",
            (json.dumps(list(packed)), embedder_id, commit_sha)).fetchall()
        lost = {chunk for rowid, chunk, slot, whole in current
                if not whole or slot != packed[rowid] or packed[rowid] >= limit}
        found = {r[0] for r in current}
        return lost | {f"fts-row:{rowid}" for rowid in packed if rowid not in found}

    def _heap_rows(self, embedder_id: str) -> int:
        """Whole rows in an embedder's heap file (0 without one)."""
        try:
            dims, path = self._heap_file(self.conn, embedder_id)
            return os.path.getsize(path) // (dims * 4)
        except (StoreUnreadable, OSError):
            return 0

    def chunk_texts(self, chunk_ids: Sequence[str]) -> dict[str, tuple[str, str]]:
        """``chunk id -> (title, text)`` for re-embedding stored chunks under a new embedder."""
        out: dict[str, tuple[str, str]] = {}
        ids = list(dict.fromkeys(chunk_ids))
        for start in range(0, len(ids), 500):
            part = ids[start : start + 500]
            marks = ",".join("?" * len(part))
            for cid, title, text in self.conn.execute(
                f"SELECT chunk_id, title, text FROM chunks WHERE chunk_id IN ({marks})", part
            ):
                out[cid] = (title, text)
        return out

    def write_snapshot(self, write: SnapshotWrite) -> None:
        """Publish one snapshot's rows atomically (knowledge §4.3 step 1).

        On any failure the transaction is rolled back and the vector heap cut back to its size
        before this write, so nothing of it remains; a storage refusal (full, read-only, not
        permitted) is ``STORE_WRITE_FAILED``. Heap files left by a writer that died before
        committing are removed first (the caller holds the write lock).
        """
        self._guarded(self._write_snapshot, write)

    def _guarded(self, body, *args) -> None:
        """Run one write transaction ``body(*args)``: on any failure roll it back, cut the heaps
        back to their sizes before it, and turn a storage refusal into ``STORE_WRITE_FAILED``."""
        from ..errors import storage_write_error

        self._heap_undo = []
        try:
            body(*args)
        except BaseException as exc:
            self._rollback()
            self._undo_heap()
            failure = storage_write_error(exc, self.path) if isinstance(exc, Exception) else None
            if failure is not None:
                raise failure from exc
            raise
        self._heap_undo = []

    def _rollback(self) -> None:
        """Roll back the open transaction, if SQLite has not already (a failed COMMIT on a full
        disk may have); a rollback error never hides the failure that caused it."""
        try:
            if self.conn.in_transaction:
                self.conn.execute("ROLLBACK")
        except sqlite3.Error:
            pass

    def _undo_heap(self) -> None:
        """Cut each heap this write appended to back to its old size (remove one it created)."""
        for path, size in reversed(self._heap_undo):
            try:
                if size is None:
                    path.unlink(missing_ok=True)
                else:
                    os.truncate(path, size)
            except OSError:  # a heap left longer only holds unreferenced rows (never reused)
                pass
        self._heap_undo = []

    def orphan_heaps(self) -> list[Path]:
        """Vector heap files in the store directory that no embedder row names: left by a
        writer that died between appending vectors and committing them."""
        known = {r[0] for r in self.conn.execute("SELECT heap FROM embedders")}
        return orphan_heap_files(self.path.parent, known)

    def _write_snapshot(self, write: SnapshotWrite) -> None:
        conn = self.conn
        cur = conn.cursor()
        cur.execute("BEGIN IMMEDIATE")
        try:
            # inside the transaction: no other writer can be between its heap append and its commit
            for orphan in self.orphan_heaps():
                orphan.unlink(missing_ok=True)
            self._write_new_rows(cur, write.new_blobs, write.new_chunks, write.embedder_id, write.vector_ids,
                                 write.vectors, write.dims)
            self._write_docs(cur, write)
            self._index_rows(cur, write)
            self._write_rows(cur, write)
            cur.execute(
                "INSERT OR REPLACE INTO snapshots VALUES(?,?,?,?)",
                (write.commit_sha, write.manifest_sha256, json.dumps(write.params, sort_keys=True), write.created_at),
            )
            cur.execute("COMMIT")
        except BaseException:
            self._rollback()
            raise

    def write_batch(self, blobs: Sequence[BlobRecord], chunks: Sequence[NewChunk], embedder_id: str,
                    vector_ids: Sequence[str], vectors: bytes | None, dims: int) -> None:
        """Commit new blob, chunk and vector rows ahead of their snapshot (ingest writes them in
        batches so it holds only a batch of texts and vectors, issue 15).

        No snapshot references them until :meth:`write_snapshot` publishes one, so a crash in
        between leaves every published snapshot as it was, plus rows a later ingest reuses. On
        failure this batch is rolled back and its heap bytes cut off, as in ``write_snapshot``.
        """
        self._guarded(self._write_batch, blobs, chunks, embedder_id, vector_ids, vectors, dims)

    def _write_batch(self, blobs: Sequence[BlobRecord], chunks: Sequence[NewChunk], embedder_id: str,
                     vector_ids: Sequence[str], vectors: bytes | None, dims: int) -> None:
        cur = self.conn.cursor()
        cur.execute("BEGIN IMMEDIATE")
        for orphan in self.orphan_heaps():  # as write_snapshot: never append to a dead writer's file
            orphan.unlink(missing_ok=True)
        self._write_new_rows(cur, blobs, chunks, embedder_id, vector_ids, vectors, dims)
        cur.execute("COMMIT")

    def _write_new_rows(self, cur: sqlite3.Cursor, blobs: Sequence[BlobRecord], chunks: Sequence[NewChunk],
                        embedder_id: str, vector_ids: Sequence[str], vectors: bytes | None, dims: int) -> None:
        """Blob records, chunk rows (in order: their row ids follow it) and vectors appended to
        the embedder's heap with their slots."""
        cur.executemany(
            "INSERT OR REPLACE INTO blobs VALUES(?,?,?,?,?,?,?,?,?)",
            [
                (b.blob_id, b.profile, b.chunker, b.chunker_key, b.front_matter_type, b.heading_type,
                 b.masked_count, b.skip_reason, len(b.chunks))
                for b in blobs
            ],
        )
        cur.executemany("INSERT OR IGNORE INTO chunks VALUES(?,?,?,?,?,?,?,?,?,?)", chunks)  # NewChunk: the columns in order
        if vectors is not None and vector_ids:
            first = self._append_heap(cur, embedder_id, vectors, dims)
            cur.executemany(
                "INSERT OR REPLACE INTO vectors VALUES(?,?,?)",
                ((cid, embedder_id, first + i) for i, cid in enumerate(vector_ids)),
            )

    def _index_rows(self, cur: sqlite3.Cursor, write: SnapshotWrite) -> None:
        """Keyword rows for the snapshot's (path, chunk) pairs that have none yet: the analysed
        fields go to the FTS index, the row's length in terms to ``fts_rows``."""
        path_filter = ""
        if write.fts_paths is not None:
            cur.execute("CREATE TEMP TABLE IF NOT EXISTS q_paths(path TEXT PRIMARY KEY)")
            cur.execute("DELETE FROM temp.q_paths")
            cur.executemany("INSERT OR IGNORE INTO temp.q_paths VALUES(?)", ((p,) for p in write.fts_paths))
            path_filter = " AND d.path IN (SELECT path FROM temp.q_paths)"
        # the keys first (small), then the texts in batches: memory holds one batch of texts and
        # analysed fields, not the whole snapshot's
        fresh = cur.execute(
            "SELECT d.path, c.chunk_id FROM snapshot_docs d"
            " JOIN chunks c ON c.blob_id = d.blob_id AND c.chunker_key = d.chunker_key"
            " WHERE d.commit_sha = ?" + path_filter + " AND NOT EXISTS"
            " (SELECT 1 FROM fts_rows r WHERE r.path = d.path AND r.chunk_id = c.chunk_id)"
            " ORDER BY d.path, c.ordinal",
            (write.commit_sha,),
        ).fetchall()
        if not fresh:
            return
        made = write.keyword_fields or {}  # analysed ahead by ingest workers (the same fields)
        # the write lock and BEGIN IMMEDIATE make this transaction the only writer: row ids are ours
        first = cur.execute("SELECT COALESCE(MAX(rowid), 0) + 1 FROM fts_rows").fetchone()[0]
        fts_insert = f"INSERT INTO chunks_fts(rowid, {', '.join(FIELDS)}) VALUES (?, ?, ?, ?)"
        for start in range(0, len(fresh), INDEX_BATCH):
            part = fresh[start:start + INDEX_BATCH]
            need = [cid for path, cid in part if (path, cid) not in made]
            texts = {cid: (text, title) for cid, text, title in cur.execute(
                "SELECT c.chunk_id, c.text, c.title FROM json_each(?) q JOIN chunks c ON c.chunk_id = q.value",
                (json.dumps(list(dict.fromkeys(need))),))} if need else {}
            analysed = [made.get((path, cid)) or index_fields(*texts[cid], path) for path, cid in part]
            rowid = first + start
            cur.executemany("INSERT INTO fts_rows(rowid, path, chunk_id, tokens) VALUES (?, ?, ?, ?)",
                            ((rowid + i, row[0], row[1], fields[3]) for i, (row, fields) in enumerate(zip(part, analysed))))
            cur.executemany(fts_insert, ((rowid + i, *fields[:3]) for i, fields in enumerate(analysed)))

    def _write_docs(self, cur: sqlite3.Cursor, write: SnapshotWrite) -> None:
        """The snapshot's document rows. For an incremental write, the base's rows at paths not
        replaced are copied inside SQLite and ``write.docs`` holds the replaced paths' rows."""
        sha = write.commit_sha
        if write.base_sha is not None and write.replaced_paths is not None:
            replaced = json.dumps(write.replaced_paths)
            if write.base_sha == sha:
                cur.execute("DELETE FROM snapshot_docs WHERE commit_sha = ? AND path IN (SELECT value FROM json_each(?))",
                            (sha, replaced))
            else:
                cur.execute("DELETE FROM snapshot_docs WHERE commit_sha = ?", (sha,))
                cur.execute(
                    "INSERT INTO snapshot_docs SELECT ?, path, doc_type, blob_id, chunker_key FROM snapshot_docs"
                    " WHERE commit_sha = ? AND path NOT IN (SELECT value FROM json_each(?))",
                    (sha, write.base_sha, replaced))
        else:
            cur.execute("DELETE FROM snapshot_docs WHERE commit_sha = ?", (sha,))
        cur.executemany("INSERT INTO snapshot_docs VALUES(?,?,?,?,?)",
                        [(sha, d.path, d.doc_type, d.blob_id, d.chunker_key) for d in write.docs])

    def _heap_path(self, heap: str) -> Path:
        return self.path.parent / heap

    def _append_heap(self, cur: sqlite3.Cursor, embedder_id: str, vectors: bytes, dims: int) -> int:
        """Append ``vectors`` (packed float32 rows) to the embedder's heap file; returns the slot
        of the first row.

        The bytes are flushed before the slots are committed, so a committed slot always points
        at written data; a crash in between only leaves unreferenced bytes at the end.
        """
        row = cur.execute("SELECT dims, heap FROM embedders WHERE embedder_id = ?", (embedder_id,)).fetchone()
        if row is None:
            heap = HEAP_PREFIX + hashlib.sha1(embedder_id.encode("utf-8")).hexdigest()[:16] + HEAP_SUFFIX
            cur.execute("INSERT INTO embedders VALUES(?,?,?)", (embedder_id, dims, heap))
        else:
            if row[0] != dims:
                raise StoreUnreadable(f"{embedder_id} has {row[0]} dimensions in the store, got {dims}")
            heap = row[1]
        path = self._heap_path(heap)
        row_bytes = dims * 4
        # Slots are never handed out twice, even when the file lost rows (a truncated copy):
        # stale references then read zeros, which doctor reports, never another chunk's vector.
        key = f"next_slot:{embedder_id}"
        known = cur.execute("SELECT value FROM meta WHERE key = ?", (key,)).fetchone()
        next_slot = int(known[0]) if known else cur.execute(
            "SELECT COALESCE(MAX(slot) + 1, 0) FROM vectors WHERE embedder_id = ?", (embedder_id,)).fetchone()[0]
        existed = path.exists()
        with open(path, "ab") as fh:
            size = fh.seek(0, os.SEEK_END)
            self._heap_undo.append((path, size if existed else None))
            first = max(-(-size // row_bytes), next_slot)  # a torn tail is skipped, never reused
            if first * row_bytes != size:
                fh.write(b"\0" * (first * row_bytes - size))
            fh.write(vectors)
            fh.flush()
            os.fsync(fh.fileno())
        cur.execute("INSERT OR REPLACE INTO meta VALUES(?, ?)", (key, str(first + len(vectors) // row_bytes)))
        return first

    def _write_rows(self, cur: sqlite3.Cursor, write: SnapshotWrite) -> None:
        if write.base_sha is not None and write.replaced_paths is not None and self._derive_rows(cur, write):
            return
        self._build_rows(cur, write)

    def _derive_rows(self, cur: sqlite3.Cursor, write: SnapshotWrite) -> bool:
        """Incremental ingest: the base snapshot's packed rows minus the replaced paths' rows,
        plus the rows of this snapshot's documents at those paths. Cost grows with the change
        (and needs no numpy: :mod:`ragit.store.packed`).

        File ordinals only group rows; removed files leave unused ordinals behind and new files
        get fresh ones, which changes no score (a file's cosine is its rows' sum over its norm).
        Returns False (build from scratch) when the base has no rows for this embedder.
        """
        from .packed import PackedRows

        base = cur.execute(
            "SELECT rowids, slots, files, lengths, file_norms FROM snapshot_rows WHERE commit_sha = ? AND embedder_id = ?",
            (write.base_sha, write.embedder_id),
        ).fetchone()
        if base is None:
            return False
        rows = PackedRows.from_blobs(*base)
        replaced = json.dumps(write.replaced_paths)
        dropped = [r[0] for r in cur.execute(
            "SELECT r.rowid FROM json_each(?) q JOIN fts_rows r ON r.path = q.value", (replaced,))]
        # CROSS JOIN keeps the few replaced paths as the outer loop (the planner would otherwise
        # walk every document of the snapshot)
        added = _with_vectors(cur.execute(
            f"SELECT {_ROW_COLUMNS} FROM json_each(?) q"
            f" CROSS JOIN snapshot_docs d ON d.commit_sha = ? AND d.path = q.value{_ROW_JOINS}",
            (replaced, write.commit_sha, write.embedder_id),
        ).fetchall(), write)
        new_paths = sorted({r[2] for r in added})
        ordinal = {path: len(rows.norms) + i for i, path in enumerate(new_paths)}
        norm_of = self._file_norms(cur, write.embedder_id, added)
        rows = rows.splice(dropped, [(r[0], r[1], ordinal[r[2]], r[7]) for r in added], [norm_of[p] for p in new_paths])
        self._put_rows(cur, write, *rows.blobs())
        return True

    def _put_rows(self, cur: sqlite3.Cursor, write: SnapshotWrite, rowids: bytes, slots: bytes, files: bytes,
                  lengths: bytes, norms: bytes) -> None:
        cur.execute("DELETE FROM snapshot_rows WHERE commit_sha = ?", (write.commit_sha,))
        cur.execute("INSERT INTO snapshot_rows VALUES(?,?,?,?,?,?,?)",
                    (write.commit_sha, write.embedder_id, rowids, slots, files, lengths, norms))

    def _file_norms(self, cur: sqlite3.Cursor, embedder_id: str, rows) -> dict[str, float]:
        """Path -> vector-sum norm for rows ``(rowid, slot, path, blob, chunker key, norm|None,
        ordinal)`` (:func:`ragit.store.packed.file_norms`); missing norms are computed from the
        heap and remembered per blob.

        The arithmetic is :mod:`ragit.vectormath`'s, so a few norms are computed without numpy
        (when it is not loaded) and equal what numpy computes for many.
        """
        from .packed import file_norms

        return file_norms(
            rows, lambda segments: self._segment_norms(cur, embedder_id, segments),
            lambda computed: cur.executemany("INSERT OR REPLACE INTO blob_norms VALUES(?,?,?,?)",
                                             [(blob, key, embedder_id, v) for blob, key, v in computed]))

    def _segment_norms(self, cur: sqlite3.Cursor, embedder_id: str, segments: list[list[int]]) -> list[float]:
        """Norm of the sum of each segment's heap rows (slots in order)."""
        from .. import vectormath

        slots = [slot for seg in segments for slot in seg]
        if "numpy" not in sys.modules and len(slots) <= PY_NORM_MAX_ROWS:
            dims, path = self._heap_file(cur, embedder_id)
            vectors = iter(_read_heap_rows(path, dims, slots))
            return [vectormath.norm_python(vectormath.row_sum_python((next(vectors) for _ in seg), dims))
                    for seg in segments]
        import numpy as np

        # whole segments at a time, up to NORM_BATCH_ROWS rows: each segment's sum is sequential
        # over its own rows, so the bits do not depend on the grouping, and memory holds one
        # group's vectors, not the snapshot's
        from .vectorindex import HeapRows

        dims, path, heap_rows = self._heap_checked(cur, embedder_id, np.array(slots, dtype=np.int64))
        heap = HeapRows(path, heap_rows, dims)  # pread: a mapping would keep every touched page resident
        out: list[float] = []
        start = 0
        while start < len(segments):
            end, rows = start, 0
            while end < len(segments) and (end == start or rows + len(segments[end]) <= NORM_BATCH_ROWS):
                rows += len(segments[end])
                end += 1
            group = segments[start:end]
            try:
                gathered = heap[np.array([s for seg in group for s in seg], dtype=np.int64)]
            except OSError as exc:
                raise StoreUnreadable(f"vector heap {path.name} cannot be read: {exc}") from exc
            sums = vectormath.segment_sums_numpy(gathered, np.array([len(seg) for seg in group], dtype=np.int64))
            out += [float(v) for v in vectormath.norms_numpy(sums)]
            start = end
        return out

    def _build_rows(self, cur: sqlite3.Cursor, write: SnapshotWrite) -> None:
        """Pack the snapshot's rows: FTS row ids (sorted), heap slots, each row's file ordinal and
        each file's vector-sum norm (so a file's cosine is a cheap sum of its chunks' cosines).

        A file's norm depends only on its blob, so it is computed once per (blob, chunker,
        embedder) and reused by every later snapshot.
        """
        from .packed import RowTable, pack_rows

        rows = _with_vectors(RowTable.collect(cur.execute(
            f"SELECT {_ROW_COLUMNS} FROM snapshot_docs d{_ROW_JOINS} WHERE d.commit_sha = ? ORDER BY r.rowid",
            (write.embedder_id, write.commit_sha),
        )), write)
        self._put_rows(cur, write, *pack_rows(rows, lambda rows: self._file_norms(cur, write.embedder_id, rows)))

    def _heap_file(self, cur, embedder_id: str) -> tuple[int, Path]:
        """(dimensions, heap path) of an embedder."""
        row = cur.execute("SELECT dims, heap FROM embedders WHERE embedder_id = ?", (embedder_id,)).fetchone()
        if row is None:
            raise StoreUnreadable(f"no vector heap for {embedder_id}")
        return int(row[0]), self._heap_path(row[1])

    def _gather(self, cur, embedder_id: str, slots):
        """Rows ``slots`` of an embedder's heap, as a float32 matrix."""
        import numpy as np

        return np.asarray(self._mapped(cur, embedder_id, slots)[slots])

    def _heap_checked(self, cur, embedder_id: str, slots) -> tuple[int, Path, int]:
        """(dimensions, heap path, rows in the file) of an embedder's heap, checked to hold every
        slot in ``slots``: each way of reading the heap starts here."""
        dims, path = self._heap_file(cur, embedder_id)
        try:
            rows = os.path.getsize(path) // (dims * 4)
        except OSError as exc:
            raise StoreUnreadable(f"vector heap {path.name} cannot be read: {exc}") from exc
        if len(slots) and int(slots.max()) >= rows:
            raise StoreUnreadable(f"vector heap {path.name} is shorter than the store says")
        return dims, path, rows

    def _mapped(self, cur, embedder_id: str, slots):
        """The embedder's heap, memory-mapped, checked to be long enough for ``slots``."""
        import numpy as np

        dims, path, rows = self._heap_checked(cur, embedder_id, slots)
        try:
            return np.memmap(path, dtype=np.float32, mode="r", shape=(rows, dims))
        except OSError as exc:
            raise StoreUnreadable(f"vector heap {path.name} cannot be read: {exc}") from exc

    def delete_snapshots(self, commit_shas: Iterable[str]) -> None:
        shas = list(commit_shas)
        if not shas:
            return
        from ..fsutil import writing

        with writing(self.path):
            self.conn.execute("BEGIN IMMEDIATE")
            try:
                self.conn.executemany("DELETE FROM snapshot_docs WHERE commit_sha = ?", ((s,) for s in shas))
                self.conn.executemany("DELETE FROM snapshot_rows WHERE commit_sha = ?", ((s,) for s in shas))
                self.conn.executemany("DELETE FROM snapshots WHERE commit_sha = ?", ((s,) for s in shas))
                self.conn.execute("COMMIT")
            except BaseException:
                self._rollback()
                raise

    # ------------------------------------------------------------ read side

    def snapshot_hash(self, commit_sha: str) -> str | None:
        row = self.conn.execute("SELECT manifest_sha256 FROM snapshots WHERE commit_sha = ?", (commit_sha,)).fetchone()
        return row[0] if row else None

    def snapshot_shas(self) -> list[str]:
        return [r[0] for r in self.conn.execute("SELECT commit_sha FROM snapshots ORDER BY commit_sha")]

    def load_vectors(self, commit_sha: str, embedder_id: str):
        """The snapshot's rows: sorted FTS row ids, their float32 vectors, each row's file ordinal,
        each file's vector-sum norm and each row's length in keyword terms."""
        import numpy as np

        rowids, slots, files, norms, lengths = self.load_rows(commit_sha, embedder_id)
        if not len(slots):
            return rowids, np.zeros((0, 0), dtype=np.float32), files, norms, lengths
        return rowids, self._gather(self.conn, embedder_id, slots), files, norms, lengths

    def load_rows(self, commit_sha: str, embedder_id: str):
        """The snapshot's packed rows without their vectors: sorted FTS row ids, heap slots, file
        ordinals, file vector-sum norms and lengths (a large snapshot gathers only the vectors a
        question needs, ragit.store.vectorindex)."""
        import numpy as np

        row = self.conn.execute(
            "SELECT rowids, slots, files, lengths, file_norms FROM snapshot_rows"
            " WHERE commit_sha = ? AND embedder_id = ?", (commit_sha, embedder_id),
        ).fetchone()
        if row is None:
            if self.conn.execute("SELECT 1 FROM snapshot_docs WHERE commit_sha = ? LIMIT 1", (commit_sha,)).fetchone():
                raise StoreUnreadable(f"snapshot {commit_sha} has no vector rows for {embedder_id}")
            empty = np.zeros(0, dtype=np.int64)
            return empty, empty, empty.astype(np.int32), np.zeros(0), empty.astype(np.int32)
        return (np.frombuffer(row[0], dtype=np.int64), np.frombuffer(row[1], dtype=np.int64),
                np.frombuffer(row[2], dtype=np.int32), np.frombuffer(row[4], dtype=np.float64),
                np.frombuffer(row[3], dtype=np.int32))

    def snapshot_row_count(self, commit_sha: str, embedder_id: str) -> int:
        """Rows of a snapshot for an embedder (0 without any)."""
        row = self.conn.execute("SELECT length(rowids) / 8 FROM snapshot_rows WHERE commit_sha = ? AND embedder_id = ?",
                                (commit_sha, embedder_id)).fetchone()
        return int(row[0]) if row else 0

    def heap_info(self, embedder_id: str) -> tuple[int, Path] | None:
        """(dimensions, heap path) of an embedder, None when it has no heap."""
        try:
            return self._heap_file(self.conn, embedder_id)
        except StoreUnreadable:
            return None

    def heap_view(self, embedder_id: str, slots):
        """The embedder's heap memory-mapped read-only ([rows, dims] float32, a plain array over
        the mapping: numpy's memmap wrapper costs a copy per gather), checked to hold every slot
        in ``slots``."""
        import mmap

        import numpy as np

        dims, path, rows = self._heap_checked(self.conn, embedder_id, slots)
        try:
            with open(path, "rb") as fh:
                mapped = mmap.mmap(fh.fileno(), rows * dims * 4, access=mmap.ACCESS_READ)
        except (OSError, ValueError) as exc:
            raise StoreUnreadable(f"vector heap {path.name} cannot be read: {exc}") from exc
        return np.frombuffer(mapped, dtype=np.float32).reshape(rows, dims)

    def heap_rows(self, embedder_id: str, slots):
        """The embedder's heap as rows read on demand with ``pread`` (ragit.store.vectorindex
        ``HeapRows``), checked to hold every slot in ``slots``."""
        from .vectorindex import HeapRows

        dims, path, rows = self._heap_checked(self.conn, embedder_id, slots)
        return HeapRows(path, rows, dims)

    def vector_index(self, embedder_id: str):
        """The embedder's approximate index (ragit.store.vectorindex), None when missing or stale."""
        found = self.heap_info(embedder_id)
        if found is None:
            return None
        from .vectorindex import open_index

        return open_index(found[1], found[0])

    def keep_warm(self) -> None:
        """This connection is now a long-lived process's (ragit.store.held): give it a page cache
        of :data:`WARM_CACHE_KIB`. Each question reads a few hundred chunk rows scattered over the
        store; with SQLite's default 2 MiB each is a system call and a copy again (at 100k chunks
        ≈ 2.5 ms of a 16 ms warm query, bench/README.md). The file is memory-mapped too
        (packedpostings.keep_mapped): at 1M chunks the pages a question's rows need are mostly
        new to the cache."""
        from .packedpostings import keep_mapped

        self.conn.execute(f"PRAGMA cache_size = -{WARM_CACHE_KIB}")
        keep_mapped(self.conn)

    def data_version(self) -> int:
        """SQLite's ``PRAGMA data_version`` of this connection: it changes when another
        connection commits, so a kept read store can tell in one statement that nothing it
        checked before (schema, published snapshots) can have changed."""
        return self.conn.execute("PRAGMA data_version").fetchone()[0]

    def postings(self) -> "CachingPostings":
        """Postings of the keyword index on this store's connection (one read): from the packed
        postings file when it matches the index (ragit.store.packedpostings), else fts5vocab."""
        return self._postings_reader(self.conn, cache=False, owns=False)

    def warm_postings(self) -> "CachingPostings":
        """A postings reader with its own connection and a term cache, for a long-lived process;
        drop it when ``current()`` turns false (any write changes the index)."""
        reader = self._postings_reader(connect_read(self.path), cache=True, owns=True)
        if isinstance(reader, PostingsReader) and self._keyword_rows_bound() <= WHOLE_POSTINGS_ROWS:
            reader.load_whole()
        return reader

    def _keyword_rows_bound(self) -> int:
        """The largest keyword row id (rows are only appended: at least the row count)."""
        return int(self.conn.execute("SELECT COALESCE(MAX(rowid), 0) FROM fts_rows").fetchone()[0])

    def _postings_reader(self, conn: sqlite3.Connection, cache: bool, owns: bool) -> "CachingPostings":
        from .packedpostings import PackedReader, open_packed

        try:
            packed = open_packed(self.path.parent, conn)
        except sqlite3.Error:
            packed = None
        if packed is not None:
            return PackedReader(conn, packed, cache=cache, owns_connection=owns)
        return PostingsReader(conn, "chunks_vocab", "chunks_fts_data", cache=cache, owns_connection=owns)

    def refresh_keyword_postings(self) -> str:
        """After a keyword write: keep, extend or build the packed postings file (derived data;
        a failure only leaves queries reading fts5vocab)."""
        from .packedpostings import refresh

        return refresh(self.path.parent, self.conn)

    def row_paths(self, rowids: Sequence[int]) -> dict[int, str]:
        """The path of each keyword row (for query-time path filters)."""
        return {rowid: path for rowid, path in self._keyword_rows(rowids, "r.path")}

    def rows_named(self, commit_sha: str, names: Sequence[str]) -> dict[int, str]:
        """Row id → path of the snapshot's keyword rows whose file name is one of ``names`` (one
        pass over the snapshot's documents; names hold no GLOB wildcard)."""
        return dict(self.conn.execute(
            "SELECT r.rowid, d.path FROM snapshot_docs d"
            " JOIN chunks c ON c.blob_id = d.blob_id AND c.chunker_key = d.chunker_key"
            " JOIN fts_rows r ON r.path = d.path AND r.chunk_id = c.chunk_id"
            " WHERE d.commit_sha = ? AND EXISTS (SELECT 1 FROM json_each(?) q"
            " WHERE d.path = q.value OR d.path GLOB '*/' || q.value)",
            (commit_sha, json.dumps([n for n in names if not any(ch in n for ch in "*?[")]))).fetchall())

    def row_keys(self, rowids: Sequence[int]) -> dict[int, tuple[str, str]]:
        """``(path, chunk id)`` of each keyword row: a content order that does not depend on the
        row ids (which follow the order the store ingested its commits)."""
        return {rowid: (path, chunk_id) for rowid, path, chunk_id in self._keyword_rows(rowids, "r.path, r.chunk_id")}

    def _keyword_rows(self, rowids: Sequence[int], columns: str):
        """``(row id, *columns)`` of the distinct keyword rows ``rowids``, read 20,000 at a time."""
        ids = [int(r) for r in dict.fromkeys(rowids)]
        for start in range(0, len(ids), 20000):
            yield from self.conn.execute(
                f"SELECT r.rowid, {columns} FROM json_each(?) q JOIN fts_rows r ON r.rowid = q.value",
                (json.dumps(ids[start:start + 20000]),))

    def fetch_rows(self, commit_sha: str, rowids: Sequence[int], with_text: bool = True) -> dict[int, ChunkRow]:
        """Rows, keyed by FTS row id, for chunks of one snapshot (``text`` empty unless asked for:
        ranking a pool needs paths and titles, only the hits returned need their text)."""
        out: dict[int, ChunkRow] = {}
        ids = [int(r) for r in dict.fromkeys(rowids)]
        text = "c.text" if with_text else "''"
        for start in range(0, len(ids), 500):
            part = ids[start : start + 500]
            rows = self.conn.execute(
                "SELECT r.rowid, r.path, c.chunk_id, c.blob_id, d.doc_type, c.title, c.start_line, c.end_line,"
                f" {text}, c.citation_id, c.chunker_key FROM json_each(?) q JOIN fts_rows r ON r.rowid = q.value"
                " JOIN chunks c ON c.chunk_id = r.chunk_id"
                " JOIN snapshot_docs d ON d.commit_sha = ? AND d.path = r.path",
                (json.dumps(part), commit_sha),
            ).fetchall()
            for row in rows:
                out[row[0]] = ChunkRow(*row[1:])
        return out

    def chunks_by_citation(self, citation_id: str) -> list[tuple[str, str, int, int]]:
        """``(chunk id, blob id, start, end)`` of stored chunks with this citation id."""
        return self.conn.execute(
            "SELECT chunk_id, blob_id, start_line, end_line FROM chunks WHERE citation_id = ? ORDER BY chunk_id",
            (citation_id,),
        ).fetchall()

    def stats(self) -> StoreStats:
        from .records import StoreStats

        return StoreStats.counted(self.conn)
