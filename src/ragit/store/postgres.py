"""The PostgreSQL store: the Store protocol over one shared database (knowledge §2.2).

One database holds many repositories and every snapshot of each. What is equal is stored once:
blobs, chunks, vectors (pgvector) and keyword rows are content-addressed tables written with
``ON CONFLICT DO NOTHING``, shared by every repository, branch, clone and worktree; a snapshot
is a per-repository list of documents plus its packed rows (ragit.store.packed, the SQLite
layout), so a read does the same arithmetic over the same numbers as the SQLite backend:

* vectors come back as the exact float32 values ingest wrote (binary pgvector), gathered in the
  snapshot's row order, and are scored by ragit.retrieve.search as SQLite's are;
* keyword postings hold the weighted counts of the SQLite FTS5 index (ragit.store.pg_keyword),
  and ragit.store.bm25 scores them with each snapshot's own statistics.

Concurrency: each publication is one transaction under an advisory lock of its (repository,
commit), so two ingests of the same commit publish it once (the second finds the same content
and only records its manifest); ingests of different commits run side by side, and readers never
wait (MVCC). Row ids and vector slots come from sequences, so no client-side lock is needed
across clones. A killed ingest's transaction is rolled back by the server: every published
snapshot stays readable.
"""

from __future__ import annotations

import hashlib
import json
import zlib
from collections.abc import Iterable, Sequence

from .base import BlobRecord, ChunkRow, NewChunk, SnapshotWrite, StoreStats, StoredChunk
from .pg_connect import (READ_BATCH, Faults, PgVector, connect, driver_errors, gather, int_array, redact_dsn,
                         register_vector, unavailable)
from .sqlite import StoreMissing, StoreUnreadable

# advisory lock class of snapshot publication (two-key form: class, hash of repository + commit)
PUBLISH_LOCK_CLASS = 0x72616769


def _lock_key(repo_id: str, commit_sha: str) -> int:
    return zlib.crc32(f"{repo_id}\0{commit_sha}".encode("utf-8")) - 2**31


def content_digest(params: dict, embedder_id: str, docs: Iterable[tuple[str, str, str, str]]) -> str:
    """What a snapshot holds, independent of who published it and when: two publications of one
    commit with the same digest are the same snapshot."""
    body = json.dumps([params, embedder_id, sorted(docs)], sort_keys=True, separators=(",", ":"))
    return hashlib.sha256(body.encode("utf-8")).hexdigest()


class PostgresStore:
    """PostgreSQL implementation of :class:`ragit.store.base.Store` for one repository."""

    shared = True  # snapshots are shared with other clones: an ingest never prunes them

    def __init__(self, conn, dsn: str, repo_id: str, writable: bool):
        self.conn = conn
        self.dsn = dsn
        self.repo_id = repo_id
        self.writable = writable
        self.replaced: str | None = None
        # a stable key for per-process caches (never holds the password)
        self.path = f"postgres:{redact_dsn(dsn)}#{repo_id}"
        self._dims: dict[str, int] = {}

    # ------------------------------------------------------------ opening

    @classmethod
    def open_read(cls, dsn: str, repo_id: str) -> "PostgresStore":
        """Open for reading; a database ragit never migrated is StoreMissing."""
        from . import pg_schema

        conn = connect(dsn)
        try:
            if not pg_schema.applied_versions(conn):
                raise StoreMissing(redact_dsn(dsn))
            if register_vector(conn) is None:
                raise StoreUnreadable("the vector extension is not installed in this database")
        except BaseException:
            conn.close()
            raise
        return cls(conn, dsn, repo_id, writable=False)

    @classmethod
    def open_write(cls, dsn: str, repo_id: str) -> "PostgresStore":
        """Open for ingest. An empty database gets the schema (every migration); one with
        pending migrations is refused until ``ragit migrate`` applies them (other clients may
        still run the older version)."""
        from . import pg_schema

        conn = connect(dsn)
        try:
            done = pg_schema.applied_versions(conn)
            if not done or pg_schema.pending(conn):
                # decided under the migration lock: a first writer applying the schema to an empty
                # database holds it until every step is in, so a second one waits for it instead of
                # taking the steps still to come for migrations an operator must run
                with pg_schema.migration_lock(conn):
                    done = pg_schema.applied_versions(conn)
                    if not done:
                        _apply(conn, dsn)
                    elif pg_schema.pending(conn):
                        raise unavailable(dsn, "migration_required",
                                          "the database needs schema migrations: run ragit migrate")
            if done and max(done) > pg_schema.LATEST:  # (an empty database got this ragit's schema)
                raise unavailable(dsn, "schema_newer",
                                  "a newer ragit migrated this database: upgrade ragit to write to it")
            if register_vector(conn) is None:
                raise unavailable(dsn, "extension_missing", "the vector extension is not installed in this database")
        except BaseException:
            conn.close()
            raise
        return cls(conn, dsn, repo_id, writable=True)

    def schema_version(self) -> int | None:
        """The store layout version these tables provide (None while migrations are pending)."""
        from . import pg_schema

        done = pg_schema.applied_versions(self.conn)
        if not done or pg_schema.pending(self.conn):
            return None
        return pg_schema.layout_version(max(done))

    def close(self) -> None:
        self.conn.close()

    # ------------------------------------------------------------ ingest side

    def get_blobs(self, keys: Iterable[tuple[str, str]]) -> dict[tuple[str, str], BlobRecord]:
        """Blob records with their chunk lists; a record missing chunk rows is left out (as SQLite)."""
        keys = list(dict.fromkeys(keys))
        if not keys:
            return {}
        ids, profiles = [k[0] for k in keys], [k[1] for k in keys]
        q = "WITH q AS (SELECT * FROM unnest(%s::text[], %s::text[]) AS q(blob_id, profile))"
        rows = self.conn.execute(
            q + " SELECT b.blob_id, b.profile, b.chunker, b.chunker_key, b.front_matter_type, b.heading_type,"
            " b.masked_count, b.skip_reason, b.chunk_count FROM q JOIN blobs b USING (blob_id, profile)",
            (ids, profiles)).fetchall()
        chunk_rows = self.conn.execute(
            q + " SELECT c.blob_id, c.chunker_key, c.chunk_id, c.ordinal, c.title, c.start_line, c.end_line,"
            " c.token_count FROM q JOIN blobs b USING (blob_id, profile)"
            " JOIN chunks c ON c.blob_id = b.blob_id AND c.chunker_key = b.chunker_key"
            " ORDER BY c.blob_id, c.chunker_key, c.ordinal", (ids, profiles)).fetchall()
        chunks: dict[tuple[str, str], list[StoredChunk]] = {}
        seen: set[str] = set()
        for blob_id, chunker_key, chunk_id, ordinal, title, start, end, tokens in chunk_rows:
            if chunk_id in seen:  # two profiles of one blob share the chunk rows
                continue
            seen.add(chunk_id)
            chunks.setdefault((blob_id, chunker_key), []).append(StoredChunk(chunk_id, ordinal, title, start, end, tokens))
        out: dict[tuple[str, str], BlobRecord] = {}
        for blob_id, profile, chunker, chunker_key, fm_type, heading_type, masked, skip, count in rows:
            stored = tuple(chunks.get((blob_id, chunker_key), ()))
            if len(stored) == count:
                out[(blob_id, profile)] = BlobRecord(blob_id, profile, chunker, chunker_key, fm_type, heading_type,
                                                     masked, skip, stored)
        return out

    def missing_vectors(self, chunk_ids: Sequence[str], embedder_id: str) -> set[str]:
        present = self.chunks_present(chunk_ids, embedder_id)
        return {c for c in chunk_ids if c not in present}

    def chunks_present(self, chunk_ids: Sequence[str], embedder_id: str) -> set[str]:
        ids = list(dict.fromkeys(chunk_ids))
        out: set[str] = set()
        for start in range(0, len(ids), READ_BATCH):
            out.update(r[0] for r in self.conn.execute(
                "SELECT c.chunk_id FROM chunks c JOIN vectors v ON v.chunk_id = c.chunk_id AND v.embedder_id = %s"
                " WHERE c.chunk_id = ANY(%s)", (embedder_id, ids[start:start + READ_BATCH])))
        return out

    def unservable_chunks(self, commit_sha: str, embedder_id: str) -> set[str]:
        """Chunks of a snapshot its packed rows cannot serve (as SqliteStore's)."""
        from .packed import PackedRows

        row = self._packed(commit_sha, embedder_id)
        if row is None:
            return set()
        rows = PackedRows.from_blobs(*row)
        packed = dict(zip(rows.rowids.tolist(), rows.slots.tolist()))
        current = self.conn.execute(
            "SELECT r.row_id, r.chunk_id, v.slot, c.chunk_id IS NOT NULL AND d.path IS NOT NULL"
            " FROM keyword_rows r LEFT JOIN vectors v ON v.chunk_id = r.chunk_id AND v.embedder_id = %s"
            " LEFT JOIN chunks c ON c.chunk_id = r.chunk_id"
            " LEFT JOIN snapshot_docs d ON d.repo_id = %s AND d.commit_sha = %s AND d.path = r.path"
            " AND d.blob_id = c.blob_id WHERE r.row_id = ANY(%s::int8[])",
            (embedder_id, self.repo_id, commit_sha, int_array(packed))).fetchall()
        lost = {chunk for rowid, chunk, slot, whole in current if not whole or slot != packed[rowid]}
        found = {r[0] for r in current}
        return lost | {f"fts-row:{rowid}" for rowid in packed if rowid not in found}

    def chunk_texts(self, chunk_ids: Sequence[str]) -> dict[str, tuple[str, str]]:
        ids = list(dict.fromkeys(chunk_ids))
        out: dict[str, tuple[str, str]] = {}
        for start in range(0, len(ids), READ_BATCH):
            for cid, title, text in self.conn.execute(
                    "SELECT chunk_id, title, text FROM chunks WHERE chunk_id = ANY(%s)", (ids[start:start + READ_BATCH],)):
                out[cid] = (title, text)
        return out

    def write_batch(self, blobs: Sequence[BlobRecord], chunks: Sequence[NewChunk], embedder_id: str,
                    vector_ids: Sequence[str], vectors: bytes | None, dims: int) -> None:
        """Commit new blob, chunk and vector rows ahead of their snapshot (one transaction); no
        snapshot references them until :meth:`write_snapshot` publishes one."""
        with self._faults(), self.conn.transaction():
            self._write_new_rows(blobs, chunks, embedder_id, vector_ids, vectors, dims)

    def write_snapshot(self, write: SnapshotWrite) -> None:
        """Publish one snapshot in one transaction (knowledge §4.3 step 1); see the module docstring."""
        with self._faults(), self.conn.transaction():
            self._write_snapshot(write)

    def _write_snapshot(self, write: SnapshotWrite) -> None:
        from .pg_write import index_rows, write_rows

        conn, repo, sha = self.conn, self.repo_id, write.commit_sha
        self._write_new_rows(write.new_blobs, write.new_chunks, write.embedder_id, write.vector_ids, write.vectors,
                             write.dims)
        conn.execute("SELECT pg_advisory_xact_lock(%s, %s)", (PUBLISH_LOCK_CLASS, _lock_key(repo, sha)))
        conn.execute("INSERT INTO repositories(repo_id) VALUES (%s) ON CONFLICT DO NOTHING", (repo,))
        docs = self._full_docs(write)
        digest = content_digest(write.params, write.embedder_id, docs)
        existing = conn.execute("SELECT content_sha256 FROM snapshots WHERE repo_id = %s AND commit_sha = %s",
                                (repo, sha)).fetchone()
        has_rows = conn.execute(
            "SELECT 1 FROM snapshot_rows WHERE repo_id = %s AND commit_sha = %s AND embedder_id = %s",
            (repo, sha, write.embedder_id)).fetchone() is not None
        if (existing is not None and existing[0] == digest and (has_rows or not docs)
                and not self.unservable_chunks(sha, write.embedder_id)):
            # the same snapshot, published before (another worktree or clone) and still servable
            # (no vector it points at was lost): record the manifest only
            conn.execute("INSERT INTO snapshot_manifests(repo_id, commit_sha, manifest_sha256) VALUES (%s, %s, %s)"
                         " ON CONFLICT DO NOTHING", (repo, sha, write.manifest_sha256))
            return
        for table in ("snapshot_docs", "snapshot_rows", "snapshot_manifests", "snapshots"):
            conn.execute(f"DELETE FROM {table} WHERE repo_id = %s AND commit_sha = %s", (repo, sha))
        with conn.cursor().copy("COPY snapshot_docs(repo_id, commit_sha, path, doc_type, blob_id, chunker_key)"
                                " FROM STDIN") as copy:
            for path, doc_type, blob_id, chunker_key in docs:
                copy.write_row((repo, sha, path, doc_type, blob_id, chunker_key))
        fresh = index_rows(conn, repo, sha, write.fts_paths)
        write_rows(self, write)
        conn.execute("INSERT INTO snapshots VALUES (%s, %s, %s, %s, %s)",
                     (repo, sha, digest, json.dumps(write.params, sort_keys=True), write.created_at))
        conn.execute("INSERT INTO snapshot_manifests(repo_id, commit_sha, manifest_sha256) VALUES (%s, %s, %s)",
                     (repo, sha, write.manifest_sha256))
        if fresh:  # last, so the row lock that orders warm readers' caches is held briefly
            conn.execute("UPDATE store_meta SET value = (value::bigint + 1)::text WHERE key = 'keyword_generation'")

    def _full_docs(self, write: SnapshotWrite) -> list[tuple[str, str, str, str]]:
        """The snapshot's complete document list (an incremental write names only the replaced
        paths; the base's other documents are carried over)."""
        docs = {d.path: (d.path, d.doc_type, d.blob_id, d.chunker_key) for d in write.docs}
        if write.base_sha is not None and write.replaced_paths is not None:
            replaced = set(write.replaced_paths)
            for path, doc_type, blob_id, chunker_key in self.conn.execute(
                    "SELECT path, doc_type, blob_id, chunker_key FROM snapshot_docs WHERE repo_id = %s"
                    " AND commit_sha = %s", (self.repo_id, write.base_sha)):
                if path not in replaced and path not in docs:
                    docs[path] = (path, doc_type, blob_id, chunker_key)
        return [docs[p] for p in sorted(docs)]

    def _write_new_rows(self, blobs: Sequence[BlobRecord], chunks: Sequence[NewChunk], embedder_id: str,
                        vector_ids: Sequence[str], vectors: bytes | None, dims: int) -> None:
        """Blob records, chunk rows and vectors; keys in sorted order so concurrent writers
        take row locks in one order (no deadlock)."""
        conn = self.conn
        with conn.cursor() as cur:
            cur.executemany(
                "INSERT INTO blobs VALUES (%s,%s,%s,%s,%s,%s,%s,%s,%s) ON CONFLICT (blob_id, profile) DO UPDATE SET"
                " chunker = EXCLUDED.chunker, chunker_key = EXCLUDED.chunker_key,"
                " front_matter_type = EXCLUDED.front_matter_type, heading_type = EXCLUDED.heading_type,"
                " masked_count = EXCLUDED.masked_count, skip_reason = EXCLUDED.skip_reason,"
                " chunk_count = EXCLUDED.chunk_count",
                sorted({(b.blob_id, b.profile): (b.blob_id, b.profile, b.chunker, b.chunker_key, b.front_matter_type,
                                                 b.heading_type, b.masked_count, b.skip_reason, len(b.chunks))
                        for b in blobs}.values()))
            cur.executemany(
                "INSERT INTO chunks VALUES (%s,%s,%s,%s,%s,%s,%s,%s,%s,%s) ON CONFLICT DO NOTHING",
                sorted({c.chunk_id: (c.chunk_id, c.blob_id, c.chunker_key, c.ordinal, c.title, c.start_line,
                                     c.end_line, c.text, c.token_count, c.citation_id) for c in chunks}.values()))
            if vectors is not None and vector_ids:
                import numpy as np

                self._ensure_embedder(embedder_id, dims)
                matrix = np.frombuffer(vectors, dtype=np.float32).reshape(len(vector_ids), dims)
                place = self._chunk_places(vector_ids, chunks)
                order = sorted(range(len(vector_ids)), key=lambda i: place[vector_ids[i]])
                cur.executemany(
                    "INSERT INTO vectors(chunk_id, embedder_id, vec) VALUES (%s, %s, %s) ON CONFLICT DO NOTHING",
                    [(vector_ids[i], embedder_id, PgVector(matrix[i])) for i in order])

    def _chunk_places(self, chunk_ids: Sequence[str], chunks: Sequence[NewChunk]) -> dict[str, tuple[str, str, int]]:
        """(blob, chunker key, ordinal) of each chunk: the order vectors are inserted in, so a
        file's vectors get adjacent slots and share heap pages (the approximate path re-scores
        every row of a candidate file). A chunk id is a hash of exactly these three, so this is
        one total order for every writer, as sorting by chunk id was (no deadlock)."""
        place = {c.chunk_id: (c.blob_id, c.chunker_key, c.ordinal) for c in chunks}
        unknown = [c for c in dict.fromkeys(chunk_ids) if c not in place]
        for start in range(0, len(unknown), READ_BATCH):
            for chunk_id, blob_id, chunker_key, ordinal in self.conn.execute(
                    "SELECT chunk_id, blob_id, chunker_key, ordinal FROM chunks WHERE chunk_id = ANY(%s)",
                    (unknown[start:start + READ_BATCH],)):
                place[chunk_id] = (blob_id, chunker_key, ordinal)
        for chunk_id in unknown:  # a vector of no stored chunk (never written by ingest): last
            place.setdefault(chunk_id, ("\uffff" + chunk_id, "", 0))
        return place

    def _ensure_embedder(self, embedder_id: str, dims: int) -> None:
        self.conn.execute("INSERT INTO embedders VALUES (%s, %s) ON CONFLICT DO NOTHING", (embedder_id, dims))
        known = self.embedder_dims(embedder_id)
        if known != dims:
            raise StoreUnreadable(f"{embedder_id} has {known} dimensions in the store, got {dims}")

    def embedder_dims(self, embedder_id: str) -> int | None:
        if embedder_id not in self._dims:
            row = self.conn.execute("SELECT dims FROM embedders WHERE embedder_id = %s", (embedder_id,)).fetchone()
            if row is None:
                return None
            self._dims[embedder_id] = int(row[0])
        return self._dims[embedder_id]

    def delete_snapshots(self, commit_shas: Iterable[str]) -> None:
        """Remove this repository's snapshots ``commit_shas`` (shared content rows stay)."""
        shas = list(commit_shas)
        if not shas:
            return
        with self._faults(), self.conn.transaction():
            for table in ("snapshot_docs", "snapshot_rows", "snapshot_manifests", "snapshots"):
                self.conn.execute(f"DELETE FROM {table} WHERE repo_id = %s AND commit_sha = ANY(%s)",
                                  (self.repo_id, shas))

    def refresh_vector_index(self, embedder_id: str, commit_sha: str) -> str:
        """After publishing: create the embedder's HNSW index once a snapshot is large enough to
        use it (ragit.store.vectorindex.APPROX_MIN_ROWS); pgvector maintains it from then on."""
        from .pg_ann import ensure_index

        return ensure_index(self, embedder_id, commit_sha)

    def ann_rows(self, commit_sha: str, embedder_id: str):
        """A large snapshot's packed rows with its pgvector HNSW index and a vector reader, for the
        approximate path of ragit.retrieve.search (None: search this snapshot exactly)."""
        from .pg_ann import ann_rows

        with self._faults():
            return ann_rows(self, commit_sha, embedder_id)

    def heap_view(self, embedder_id: str, slots):
        """The vectors of a warm process's approximate path (read by slot, as ``ann_rows`` gives)."""
        from .pg_ann import PgVectors, _Link

        return PgVectors(_Link(self), embedder_id, int(slots.max()) + 1 if len(slots) else 0,
                         self.embedder_dims(embedder_id) or 0)

    def orphan_heaps(self) -> list:
        """No heap files: vectors live in the database (doctor's ``store.hygiene``)."""
        return []

    # ------------------------------------------------------------ read side

    def holds_manifest(self, commit_sha: str, manifest_sha256: str) -> bool:
        """Was this exact manifest file published for the commit (by any clone of the repository)?"""
        return self.conn.execute(
            "SELECT 1 FROM snapshot_manifests m JOIN snapshots s USING (repo_id, commit_sha)"
            " WHERE m.repo_id = %s AND m.commit_sha = %s AND m.manifest_sha256 = %s",
            (self.repo_id, commit_sha, manifest_sha256)).fetchone() is not None

    def snapshot_hash(self, commit_sha: str) -> str | None:
        """The digest of the latest manifest published for the commit (any clone);
        :meth:`holds_manifest` answers for one manifest file."""
        row = self.conn.execute(
            "SELECT m.manifest_sha256 FROM snapshot_manifests m JOIN snapshots s USING (repo_id, commit_sha)"
            " WHERE m.repo_id = %s AND m.commit_sha = %s ORDER BY m.published_at DESC, m.manifest_sha256 LIMIT 1",
            (self.repo_id, commit_sha)).fetchone()
        return row[0] if row else None

    def snapshot_shas(self) -> list[str]:
        return [r[0] for r in self.conn.execute(
            "SELECT commit_sha FROM snapshots WHERE repo_id = %s ORDER BY commit_sha COLLATE \"C\"", (self.repo_id,))]

    def _packed(self, commit_sha: str, embedder_id: str):
        row = self.conn.execute(
            "SELECT rowids, slots, files, lengths, file_norms FROM snapshot_rows"
            " WHERE repo_id = %s AND commit_sha = %s AND embedder_id = %s",
            (self.repo_id, commit_sha, embedder_id)).fetchone()
        return None if row is None else tuple(bytes(v) for v in row)

    def packed_rows(self, commit_sha: str, embedder_id: str):
        """(sorted row ids, vector slots, file ordinals, file norms, lengths) of a snapshot."""
        import numpy as np

        with self._faults():
            row = self._packed(commit_sha, embedder_id)
            if row is None:
                if self.conn.execute("SELECT 1 FROM snapshot_docs WHERE repo_id = %s AND commit_sha = %s LIMIT 1",
                                     (self.repo_id, commit_sha)).fetchone():
                    raise StoreUnreadable(f"snapshot {commit_sha} has no vector rows for {embedder_id}")
                empty = np.zeros(0, dtype=np.int64)
                return empty, empty, empty.astype(np.int32), np.zeros(0), empty.astype(np.int32)
        return (np.frombuffer(row[0], dtype=np.int64), np.frombuffer(row[1], dtype=np.int64),
                np.frombuffer(row[2], dtype=np.int32), np.frombuffer(row[4], dtype=np.float64),
                np.frombuffer(row[3], dtype=np.int32))

    def load_vectors(self, commit_sha: str, embedder_id: str):
        """The snapshot's rows with their float32 vectors, in row-id order (the protocol path)."""
        import numpy as np

        rowids, slots, files, norms, lengths = self.packed_rows(commit_sha, embedder_id)
        if not len(slots):
            return rowids, np.zeros((0, 0), dtype=np.float32), files, norms, lengths
        return rowids, self.gather(embedder_id, slots), files, norms, lengths

    def gather(self, embedder_id: str, slots) -> "object":
        """float32 [len(slots), dims] of the vectors at ``slots`` (in that order), bit for bit
        the floats ingest wrote (binary pgvector)."""
        dims = self.embedder_dims(embedder_id)
        if dims is None:
            raise StoreUnreadable(f"no vectors for {embedder_id}")
        with self._faults():
            return gather(self.conn, dims, slots, embedder_id)

    def postings(self):
        from .pg_keyword import PgPostings

        return PgPostings(self.conn)

    def warm_postings(self):
        from .pg_keyword import PgPostings

        return PgPostings(connect(self.dsn), cache=True, owns_connection=True)

    def row_paths(self, rowids: Sequence[int]) -> dict[int, str]:
        return {rowid: path for rowid, path in self._keyword_rows(rowids, "path")}

    def rows_named(self, commit_sha: str, names: Sequence[str]) -> dict[int, str]:
        with self._faults():
            return dict(self.conn.execute(
                "SELECT r.row_id, d.path FROM snapshot_docs d"
                " JOIN chunks c ON c.blob_id = d.blob_id AND c.chunker_key = d.chunker_key"
                " JOIN keyword_rows r ON r.path = d.path AND r.chunk_id = c.chunk_id"
                " WHERE d.repo_id = %s AND d.commit_sha = %s AND reverse(split_part(reverse(d.path), '/', 1)) = ANY(%s)",
                (self.repo_id, commit_sha, list(names))).fetchall())

    def row_keys(self, rowids: Sequence[int]) -> dict[int, tuple[str, str]]:
        return {rowid: (path, chunk_id) for rowid, path, chunk_id in self._keyword_rows(rowids, "path, chunk_id")}

    def _keyword_rows(self, rowids: Sequence[int], columns: str):
        ids = [int(r) for r in dict.fromkeys(rowids)]
        with self._faults():
            for start in range(0, len(ids), READ_BATCH):
                yield from self.conn.execute(
                    f"SELECT row_id, {columns} FROM keyword_rows WHERE row_id = ANY(%s::int8[])",
                    (int_array(ids[start:start + READ_BATCH]),)).fetchall()

    def fetch_rows(self, commit_sha: str, rowids: Sequence[int], with_text: bool = True) -> dict[int, ChunkRow]:
        ids = [int(r) for r in dict.fromkeys(rowids)]
        text = "c.text" if with_text else "''"
        out: dict[int, ChunkRow] = {}
        with self._faults():
            for start in range(0, len(ids), READ_BATCH):
                for row in self.conn.execute(
                        "SELECT r.row_id, r.path, c.chunk_id, c.blob_id, d.doc_type, c.title, c.start_line, c.end_line,"
                        f" {text}, c.citation_id, c.chunker_key FROM keyword_rows r"
                        " JOIN chunks c ON c.chunk_id = r.chunk_id"
                        " JOIN snapshot_docs d ON d.repo_id = %s AND d.commit_sha = %s AND d.path = r.path"
                        " WHERE r.row_id = ANY(%s::int8[])",
                        (self.repo_id, commit_sha, int_array(ids[start:start + READ_BATCH]))):
                    out[row[0]] = ChunkRow(*row[1:])
        return out

    def chunks_by_citation(self, citation_id: str) -> list[tuple[str, str, int, int]]:
        return [tuple(r) for r in self.conn.execute(
            "SELECT chunk_id, blob_id, start_line, end_line FROM chunks WHERE citation_id = %s"
            " ORDER BY chunk_id COLLATE \"C\"", (citation_id,))]

    def stats(self) -> StoreStats:
        """Totals of the whole database: what every repository, clone and worktree shares."""
        return StoreStats.counted(self.conn)

    def repositories(self) -> int:
        return self.conn.execute("SELECT COUNT(*) FROM repositories").fetchone()[0]

    # ------------------------------------------------------------ faults

    def _faults(self):
        return Faults(self.dsn)


def _apply(conn, dsn: str) -> list[int]:
    from . import pg_schema

    try:
        return pg_schema.apply_pending(conn)
    except Exception as exc:  # noqa: BLE001 - e.g. the vector extension cannot be created
        import psycopg

        if isinstance(exc, psycopg.Error) and not isinstance(exc, driver_errors()):
            raise unavailable(dsn, "migration_failed", f"applying the schema failed: {exc}") from None
        raise

