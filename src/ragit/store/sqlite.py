"""The embedded default store: one SQLite file in WAL mode (knowledge §2.2).

Derived data only: chunks (masked text), an FTS5 index for BM25, float32 vectors and the
per-commit list of admitted documents. Everything here can be rebuilt from git objects plus
manifests, so a missing or stale store is a recoverable condition, never data loss.
"""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path
from typing import Iterable, Sequence

from .._version import __version__
from .base import (
    SCHEMA_VERSION,
    BlobRecord,
    ChunkRow,
    SnapshotWrite,
    StoreStats,
    StoredChunk,
)

DB_NAME = "ragit.db"

# Column weights of bm25(): text, title, path (knowledge §11.4).
BM25_WEIGHTS = (1.0, 2.0, 2.0)

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
  rowid INTEGER PRIMARY KEY, path TEXT NOT NULL, chunk_id TEXT NOT NULL, UNIQUE(path, chunk_id));
CREATE VIRTUAL TABLE IF NOT EXISTS chunks_fts USING fts5(
  text, title, path, content='', tokenize='unicode61 remove_diacritics 2');
CREATE TABLE IF NOT EXISTS vectors(
  chunk_id TEXT NOT NULL, embedder_id TEXT NOT NULL, vec BLOB NOT NULL,
  PRIMARY KEY(chunk_id, embedder_id)) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS snapshots(
  commit_sha TEXT PRIMARY KEY, manifest_sha256 TEXT NOT NULL, params TEXT NOT NULL, created_at TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS snapshot_docs(
  commit_sha TEXT NOT NULL, path TEXT NOT NULL, doc_type TEXT NOT NULL, blob_id TEXT NOT NULL,
  chunker_key TEXT NOT NULL, PRIMARY KEY(commit_sha, path)) WITHOUT ROWID;
"""


class StoreMissing(Exception):
    """The store file does not exist."""


class StoreUnreadable(Exception):
    """The store exists but cannot be used (corrupt file, foreign schema, missing rows)."""


def fts_expression(terms: Sequence[str]) -> str:
    """``"a" OR "b"``: every term quoted (inner quotes doubled), joined with OR."""
    return " OR ".join('"' + t.replace('"', '""') + '"' for t in terms)


class SqliteStore:
    """SQLite implementation of :class:`ragit.store.base.Store`."""

    def __init__(self, conn: sqlite3.Connection, path: Path, writable: bool):
        self.conn = conn
        self.path = path
        self.writable = writable

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
            conn = sqlite3.connect(f"file:{path}?mode=rw", uri=True, timeout=30, check_same_thread=False, isolation_level=None)
        except sqlite3.OperationalError:
            try:
                conn = sqlite3.connect(f"file:{path}?mode=ro", uri=True, timeout=30, check_same_thread=False, isolation_level=None)
            except sqlite3.Error as exc:
                raise StoreUnreadable(str(exc)) from exc
        store = cls(conn, path, writable=False)
        try:
            conn.execute("PRAGMA query_only = 1")
            store.schema_version()
        except sqlite3.DatabaseError as exc:
            conn.close()
            raise StoreUnreadable(str(exc)) from exc
        return store

    @classmethod
    def open_write(cls, store_dir: Path) -> "SqliteStore":
        """Open (creating if needed) the store for ingest or rebuild."""
        store_dir = Path(store_dir)
        store_dir.mkdir(parents=True, exist_ok=True)
        path = store_dir / DB_NAME
        conn = sqlite3.connect(path, timeout=30, check_same_thread=False, isolation_level=None)
        try:
            conn.execute("PRAGMA journal_mode=WAL")
            conn.execute("PRAGMA synchronous=NORMAL")
            conn.execute("PRAGMA temp_store=MEMORY")
            version = cls._read_version(conn)
            if version is not None and version != SCHEMA_VERSION:
                raise StoreUnreadable(f"store schema {version} is not {SCHEMA_VERSION}")
            conn.executescript(_SCHEMA)
            if version is None:
                conn.execute("BEGIN IMMEDIATE")
                conn.execute("INSERT OR REPLACE INTO meta VALUES('schema_version', ?)", (str(SCHEMA_VERSION),))
                conn.execute("INSERT OR REPLACE INTO meta VALUES('created_by', ?)", (f"ragit {__version__}",))
                conn.execute("COMMIT")
        except sqlite3.DatabaseError as exc:
            conn.close()
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
        """Blob records with their chunk lists, for the (blob id, profile) keys that exist."""
        keys = list(dict.fromkeys(keys))
        if not keys:
            return {}
        wanted = json.dumps([list(k) for k in keys])
        q = ("WITH q(blob_id, profile) AS (SELECT json_extract(value, '$[0]'), json_extract(value, '$[1]')"
             " FROM json_each(?))")
        rows = self.conn.execute(
            q + " SELECT b.blob_id, b.profile, b.chunker, b.chunker_key, b.front_matter_type, b.heading_type,"
            " b.masked_count, b.skip_reason FROM q JOIN blobs b ON b.blob_id = q.blob_id AND b.profile = q.profile",
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
        for blob_id, profile, chunker, chunker_key, fm_type, heading_type, masked, skip in rows:
            out[(blob_id, profile)] = BlobRecord(
                blob_id, profile, chunker, chunker_key, fm_type, heading_type, masked, skip,
                tuple(chunks.get((blob_id, chunker_key), ())),
            )
        return out

    def missing_vectors(self, chunk_ids: Sequence[str], embedder_id: str) -> set[str]:
        present = self.chunks_present(chunk_ids, embedder_id)
        return {c for c in chunk_ids if c not in present}

    def chunks_present(self, chunk_ids: Sequence[str], embedder_id: str) -> set[str]:
        """Chunk ids that exist in ``chunks`` and have a vector for ``embedder_id``."""
        ids = list(dict.fromkeys(chunk_ids))
        if not ids:
            return set()
        rows = self.conn.execute(
            "SELECT c.chunk_id FROM json_each(?) q JOIN chunks c ON c.chunk_id = q.value"
            " JOIN vectors v ON v.chunk_id = c.chunk_id AND v.embedder_id = ?",
            (json.dumps(ids), embedder_id),
        ).fetchall()
        return {r[0] for r in rows}

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
        """Publish one snapshot's rows atomically (knowledge §4.3 step 1)."""
        conn = self.conn
        cur = conn.cursor()
        cur.execute("BEGIN IMMEDIATE")
        try:
            cur.executemany(
                "INSERT OR REPLACE INTO blobs VALUES(?,?,?,?,?,?,?,?,?)",
                [
                    (b.blob_id, b.profile, b.chunker, b.chunker_key, b.front_matter_type, b.heading_type,
                     b.masked_count, b.skip_reason, len(b.chunks))
                    for b in write.new_blobs
                ],
            )
            cur.executemany(
                "INSERT OR IGNORE INTO chunks VALUES(?,?,?,?,?,?,?,?,?,?)",
                [
                    (c.chunk_id, c.blob_id, c.chunker_key, c.ordinal, c.title, c.start_line, c.end_line,
                     c.text, c.token_count, c.citation_id)
                    for c in write.new_chunks
                ],
            )
            if write.vectors is not None and write.vector_ids:
                vecs = write.vectors
                cur.executemany(
                    "INSERT OR REPLACE INTO vectors VALUES(?,?,?)",
                    ((cid, write.embedder_id, vecs[i].tobytes()) for i, cid in enumerate(write.vector_ids)),
                )
            cur.execute("DELETE FROM snapshot_docs WHERE commit_sha = ?", (write.commit_sha,))
            cur.executemany(
                "INSERT INTO snapshot_docs VALUES(?,?,?,?,?)",
                [(write.commit_sha, d.path, d.doc_type, d.blob_id, d.chunker_key) for d in write.docs],
            )
            before = cur.execute("SELECT COALESCE(MAX(rowid), 0) FROM fts_rows").fetchone()[0]
            path_filter = ""
            if write.fts_paths is not None:
                cur.execute("CREATE TEMP TABLE IF NOT EXISTS q_paths(path TEXT PRIMARY KEY)")
                cur.execute("DELETE FROM temp.q_paths")
                cur.executemany("INSERT OR IGNORE INTO temp.q_paths VALUES(?)", ((p,) for p in write.fts_paths))
                path_filter = " AND d.path IN (SELECT path FROM temp.q_paths)"
            cur.execute(
                "INSERT INTO fts_rows(path, chunk_id)"
                " SELECT d.path, c.chunk_id FROM snapshot_docs d"
                " JOIN chunks c ON c.blob_id = d.blob_id AND c.chunker_key = d.chunker_key"
                " WHERE d.commit_sha = ?" + path_filter + " AND NOT EXISTS"
                " (SELECT 1 FROM fts_rows r WHERE r.path = d.path AND r.chunk_id = c.chunk_id)"
                " ORDER BY d.path, c.ordinal",
                (write.commit_sha,),
            )
            cur.execute(
                "INSERT INTO chunks_fts(rowid, text, title, path)"
                " SELECT r.rowid, c.text, c.title, r.path FROM fts_rows r JOIN chunks c ON c.chunk_id = r.chunk_id"
                " WHERE r.rowid > ?",
                (before,),
            )
            cur.execute(
                "INSERT OR REPLACE INTO snapshots VALUES(?,?,?,?)",
                (write.commit_sha, write.manifest_sha256, json.dumps(write.params, sort_keys=True), write.created_at),
            )
            cur.execute("COMMIT")
        except BaseException:
            cur.execute("ROLLBACK")
            raise

    def delete_snapshots(self, commit_shas: Iterable[str]) -> None:
        shas = list(commit_shas)
        if not shas:
            return
        self.conn.execute("BEGIN IMMEDIATE")
        try:
            self.conn.executemany("DELETE FROM snapshot_docs WHERE commit_sha = ?", ((s,) for s in shas))
            self.conn.executemany("DELETE FROM snapshots WHERE commit_sha = ?", ((s,) for s in shas))
            self.conn.execute("COMMIT")
        except BaseException:
            self.conn.execute("ROLLBACK")
            raise

    # ------------------------------------------------------------ read side

    def snapshot_hash(self, commit_sha: str) -> str | None:
        row = self.conn.execute("SELECT manifest_sha256 FROM snapshots WHERE commit_sha = ?", (commit_sha,)).fetchone()
        return row[0] if row else None

    def snapshot_shas(self) -> list[str]:
        return [r[0] for r in self.conn.execute("SELECT commit_sha FROM snapshots ORDER BY commit_sha")]

    def snapshot_rows(self, commit_sha: str) -> list[tuple[str, str]]:
        """``(path, chunk id)`` of every chunk in the snapshot, in path then ordinal order."""
        return self.conn.execute(
            "SELECT d.path, c.chunk_id FROM snapshot_docs d"
            " JOIN chunks c ON c.blob_id = d.blob_id AND c.chunker_key = d.chunker_key"
            " WHERE d.commit_sha = ? ORDER BY d.path, c.ordinal",
            (commit_sha,),
        ).fetchall()

    def load_vectors(self, commit_sha: str, embedder_id: str):
        """Rows ``(path, chunk id)`` and the float32 matrix of their vectors, in the same order."""
        import numpy as np

        rows = self.conn.execute(
            "SELECT d.path, c.chunk_id, v.vec FROM snapshot_docs d"
            " JOIN chunks c ON c.blob_id = d.blob_id AND c.chunker_key = d.chunker_key"
            " LEFT JOIN vectors v ON v.chunk_id = c.chunk_id AND v.embedder_id = ?"
            " WHERE d.commit_sha = ? ORDER BY d.path, c.ordinal",
            (embedder_id, commit_sha),
        ).fetchall()
        keys = [(r[0], r[1]) for r in rows]
        blobs = [r[2] for r in rows]
        if any(b is None for b in blobs):
            missing = sum(1 for b in blobs if b is None)
            raise StoreUnreadable(f"{missing} chunk(s) of {commit_sha} have no vector for {embedder_id}")
        if not blobs:
            return keys, np.zeros((0, 0), dtype=np.float32)
        matrix = np.frombuffer(b"".join(blobs), dtype=np.float32).reshape(len(blobs), -1)
        return keys, matrix

    def keyword_scores(self, commit_sha: str, terms: Sequence[str]) -> list[tuple[str, str, float]]:
        """``(path, chunk id, -bm25)`` for every snapshot chunk matching any term (no LIMIT)."""
        if not terms:
            return []
        w_text, w_title, w_path = BM25_WEIGHTS
        return self.conn.execute(
            f"SELECT r.path, r.chunk_id, -bm25(chunks_fts, {w_text}, {w_title}, {w_path})"
            " FROM chunks_fts JOIN fts_rows r ON r.rowid = chunks_fts.rowid"
            " JOIN snapshot_docs d ON d.commit_sha = ? AND d.path = r.path"
            " JOIN chunks c ON c.chunk_id = r.chunk_id AND c.blob_id = d.blob_id AND c.chunker_key = d.chunker_key"
            " WHERE chunks_fts MATCH ?",
            (commit_sha, fts_expression(terms)),
        ).fetchall()

    def keyword_scores_with(
        self, commit_sha: str, terms: Sequence[str], extra: Sequence[tuple[str, str, str]]
    ) -> tuple[list[tuple[str, str, float]], list[float]]:
        """BM25 of the snapshot's chunks and of ``extra`` (text, title, path) documents, scored
        against one set of corpus statistics.

        The extra documents (knowledge artifacts) are inserted into the FTS index inside a
        transaction that is always rolled back, so both sides share the store's statistics
        exactly as if the artifacts were indexed, while nothing on disk changes.
        """
        if not terms:
            return [], [0.0] * len(extra)
        if not extra:
            return self.keyword_scores(commit_sha, terms), []
        conn = sqlite3.connect(f"file:{self.path}?mode=rw", uri=True, timeout=30, isolation_level=None)
        try:
            conn.execute("BEGIN")
            conn.executemany(
                "INSERT INTO chunks_fts(rowid, text, title, path) VALUES (?, ?, ?, ?)",
                [(-(i + 1), text, title, path) for i, (text, title, path) in enumerate(extra)],
            )
            w_text, w_title, w_path = BM25_WEIGHTS
            expr = fts_expression(terms)
            snapshot = conn.execute(
                f"SELECT r.path, r.chunk_id, -bm25(chunks_fts, {w_text}, {w_title}, {w_path})"
                " FROM chunks_fts JOIN fts_rows r ON r.rowid = chunks_fts.rowid"
                " JOIN snapshot_docs d ON d.commit_sha = ? AND d.path = r.path"
                " JOIN chunks c ON c.chunk_id = r.chunk_id AND c.blob_id = d.blob_id AND c.chunker_key = d.chunker_key"
                " WHERE chunks_fts MATCH ?",
                (commit_sha, expr),
            ).fetchall()
            raws = [0.0] * len(extra)
            for rowid, score in conn.execute(
                f"SELECT rowid, -bm25(chunks_fts, {w_text}, {w_title}, {w_path}) FROM chunks_fts"
                " WHERE chunks_fts MATCH ? AND rowid < 0",
                (expr,),
            ):
                raws[-rowid - 1] = float(score)
            return snapshot, raws
        finally:
            if conn.in_transaction:
                conn.execute("ROLLBACK")
            conn.close()

    def fetch_chunks(self, commit_sha: str, keys: Sequence[tuple[str, str]]) -> dict[tuple[str, str], ChunkRow]:
        """Full rows for the given ``(path, chunk id)`` pairs of one snapshot."""
        out: dict[tuple[str, str], ChunkRow] = {}
        keys = list(dict.fromkeys(keys))
        for start in range(0, len(keys), 400):
            part = keys[start : start + 400]
            values = ",".join("(?,?)" for _ in part)
            params: list[str] = []
            for path, cid in part:
                params += [path, cid]
            params.append(commit_sha)
            rows = self.conn.execute(
                f"WITH q(path, chunk_id) AS (VALUES {values})"
                " SELECT d.path, c.chunk_id, c.blob_id, d.doc_type, c.title, c.start_line, c.end_line, c.text,"
                " c.citation_id FROM q JOIN snapshot_docs d ON d.commit_sha = ? AND d.path = q.path"
                " JOIN chunks c ON c.chunk_id = q.chunk_id AND c.blob_id = d.blob_id AND c.chunker_key = d.chunker_key",
                params,
            ).fetchall()
            for row in rows:
                out[(row[0], row[1])] = ChunkRow(*row)
        return out

    def chunks_by_citation(self, citation_id: str) -> list[tuple[str, str, int, int]]:
        """``(chunk id, blob id, start, end)`` of stored chunks with this citation id."""
        return self.conn.execute(
            "SELECT chunk_id, blob_id, start_line, end_line FROM chunks WHERE citation_id = ? ORDER BY chunk_id",
            (citation_id,),
        ).fetchall()

    def stats(self) -> StoreStats:
        q = self.conn.execute
        return StoreStats(
            documents=q("SELECT COUNT(*) FROM (SELECT DISTINCT blob_id FROM chunks)").fetchone()[0],
            chunks=q("SELECT COUNT(*) FROM chunks").fetchone()[0],
            vectors=q("SELECT COUNT(*) FROM vectors").fetchone()[0],
            snapshots=q("SELECT COUNT(*) FROM snapshots").fetchone()[0],
        )
