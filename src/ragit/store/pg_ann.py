"""pgvector HNSW indexes for large snapshots on the PostgreSQL store.

An embedder's index is a partial expression index over its rows of ``vectors`` (the column holds
vectors of any size, the index one size), created once a published snapshot reaches
:data:`ragit.store.vectorindex.APPROX_MIN_ROWS` rows (building it is the expensive part; from
then on pgvector maintains it on insert). Smaller snapshots are searched exactly, as on SQLite.
"""

from __future__ import annotations

import hashlib
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # pragma: no cover
    from .pg_connect import PgStore

M, EF_CONSTRUCTION = 16, 64


def index_name(embedder_id: str) -> str:
    return "vectors_hnsw_" + hashlib.sha1(embedder_id.encode("utf-8")).hexdigest()[:16]


def has_index(store: "PgStore", embedder_id: str) -> bool:
    return store.conn.execute("SELECT to_regclass(%s) IS NOT NULL", (index_name(embedder_id),)).fetchone()[0]


def ensure_index(store: "PgStore", embedder_id: str, commit_sha: str) -> str:
    """"kept" (exists), "built", "none" (snapshot below the threshold) or "failed" (queries stay
    exact; the ingest never fails for an accelerator)."""
    from psycopg import sql

    from .vectorindex import APPROX_MIN_ROWS

    try:
        if has_index(store, embedder_id):
            return "kept"
        rows, _, _, _, _ = store.packed_rows(commit_sha, embedder_id)
        dims = store.embedder_dims(embedder_id)
        if len(rows) < APPROX_MIN_ROWS or not dims:
            return "none"
        store.conn.execute(sql.SQL(
            "CREATE INDEX IF NOT EXISTS {} ON vectors USING hnsw ((vec::vector({})) vector_ip_ops)"
            " WITH (m = {}, ef_construction = {}) WHERE embedder_id = {}").format(
                sql.Identifier(index_name(embedder_id)), sql.Literal(int(dims)), sql.Literal(M),
                sql.Literal(EF_CONSTRUCTION), sql.Literal(embedder_id)))
        return "built"
    except Exception:  # noqa: BLE001 - without an index queries are exact
        return "failed"


# hnsw.ef_search accepts 1..1000; more neighbours than that come from an iterative scan (pgvector 0.8)
MAX_EF_SEARCH = 1000


def _version(conn) -> tuple[int, ...]:
    row = conn.execute("SELECT extversion FROM pg_extension WHERE extname = 'vector'").fetchone()
    try:
        return tuple(int(p) for p in row[0].split(".")) if row else ()
    except ValueError:
        return ()


class _Link:
    """The connection an index or vector reader queries: its store's while that is open, else one
    of its own (a warm process keeps a snapshot's entry across reads that each open the store)."""

    def __init__(self, store: "PgStore"):
        self._store = store
        self._own = None
        self.dsn = store.dsn

    def conn(self):
        if not self._store.conn.closed:
            return self._store.conn
        if self._own is None or self._own.closed:
            from .pg_connect import connect, register_vector

            self._own = connect(self.dsn)
            register_vector(self._own)
        return self._own

    def faults(self):
        from .pg_connect import Faults

        return Faults(self.dsn)


MAX_CACHED_VECTORS = 65_536  # vectors a warm reader keeps (≈ 64 MiB at 256 dimensions)


class PgVectors:
    """A snapshot's vectors read from ``vectors`` by slot: what the approximate path of
    ragit.retrieve.search gathers (only the candidate rows it re-scores, with the other rows of
    their files). A slot's vector never changes, so the reader keeps the most recent
    :data:`MAX_CACHED_VECTORS` it read and asks the server only for the others: a warm process
    re-scores the same files question after question."""

    def __init__(self, link: _Link, embedder_id: str, rows: int, dims: int):
        import numpy as np

        self._link, self._embedder_id = link, embedder_id
        self.shape = (rows, dims)
        # the cache, in arrays (a warm question asks for ~20k slots; no Python call per slot): a
        # ring of vectors (allocated on first use; the oldest are overwritten first), the slot
        # each ring row holds, and an index of the held slots (ascending) with their ring rows
        self._ring: "np.ndarray | None" = None
        self._owner = np.full(MAX_CACHED_VECTORS, -1, dtype=np.int64)
        self._keys = np.zeros(0, dtype=np.int64)
        self._at = np.zeros(0, dtype=np.int64)
        self._head = 0

    def __getitem__(self, slots):
        import numpy as np

        from .pg_connect import gather

        unique, inverse = np.unique(np.asarray(slots, dtype=np.int64), return_inverse=True)
        out = np.empty((len(unique), self.shape[1]), dtype=np.float32)
        held = np.zeros(len(unique), dtype=bool)
        if len(self._keys):
            where = np.minimum(np.searchsorted(self._keys, unique), len(self._keys) - 1)
            held = self._keys[where] == unique
            out[held] = self._ring[self._at[where[held]]]
        if not held.all():
            wanted = unique[~held]
            with self._link.faults():
                block = gather(self._link.conn(), self.shape[1], wanted, self._embedder_id)
            out[~held] = block
            self._keep(wanted, block)
        return out[inverse.reshape(-1)]

    def _keep(self, keys, block) -> None:
        """Write the rows just read over the oldest ring rows and re-index the held slots."""
        import numpy as np

        capacity = len(self._owner)
        keys, block = keys[-capacity:], block[-capacity:]
        if self._ring is None:
            self._ring = np.empty((capacity, self.shape[1]), dtype=np.float32)
        rows = (self._head + np.arange(len(keys))) % capacity
        evicted = self._owner[rows]
        self._ring[rows] = block
        self._owner[rows] = keys
        self._head = int((self._head + len(keys)) % capacity)
        kept = ~np.isin(self._keys, evicted[evicted >= 0]) if np.any(evicted >= 0) else slice(None)
        all_keys = np.concatenate([self._keys[kept], keys])
        all_at = np.concatenate([self._at[kept], rows])
        order = np.argsort(all_keys, kind="stable")
        self._keys, self._at = all_keys[order], all_at[order]


class PgAnnIndex:
    """The embedder's pgvector HNSW index, with the interface of ragit.store.vectorindex's
    ``HeapIndex`` that ragit.retrieve.search uses: ``search(queries, count)`` returns vector
    slots, ``rows`` bounds the snapshot's slots, ``size`` is how many vectors the index holds
    (the snapshot's share of them sets the over-fetch), ``keep_mapped()`` readies it for a
    long-lived process."""

    def __init__(self, link: _Link, embedder_id: str, dims: int, rows: int, size: int):
        self._link, self._embedder_id = link, embedder_id
        self.dims, self.rows, self.size = dims, rows, size

    def keep_mapped(self) -> bool:
        """Nothing to map for a long-lived process: the index lives in the server."""
        return False

    def search(self, queries, count: int):
        """Slots of the ``count`` nearest vectors (inner product) of each query row, −1 padded."""
        import numpy as np
        from psycopg import sql

        q = np.ascontiguousarray(queries, dtype=np.float32)
        out = np.full((len(q), count), -1, dtype=np.int64)
        statement = sql.SQL(
            "SELECT slot FROM vectors WHERE embedder_id = {} ORDER BY vec::vector({}) <#> %s::vector({}) LIMIT %s"
        ).format(sql.Literal(self._embedder_id), sql.Literal(self.dims), sql.Literal(self.dims))
        with self._link.faults():
            conn = self._link.conn()
            self._search(conn, statement, q, count, out)
        return out

    def _search(self, conn, statement, q, count: int, out) -> None:
        from psycopg import sql

        from .pg_connect import PgVector

        with conn.transaction():
            conn.execute(sql.SQL("SET LOCAL hnsw.ef_search = {}").format(
                sql.Literal(min(MAX_EF_SEARCH, max(40, count)))))
            if count > MAX_EF_SEARCH:
                conn.execute("SET LOCAL hnsw.iterative_scan = relaxed_order")
                conn.execute(sql.SQL("SET LOCAL hnsw.max_scan_tuples = {}").format(sql.Literal(max(20_000, 4 * count))))
            for i, vector in enumerate(q):
                found = [r[0] for r in conn.execute(statement, (PgVector(vector), count))]
                out[i, :len(found)] = found


def ann_rows(store: "PgStore", commit_sha: str, embedder_id: str):
    """``(rowids, slots, files, norms, lengths, index, vectors)`` of a snapshot of at least
    ``APPROX_MIN_ROWS`` rows whose embedder has an HNSW index (pgvector ≥ 0.8), else None (the
    snapshot is searched exactly through ``load_vectors``)."""
    from .vectorindex import APPROX_MIN_ROWS

    conn = store.conn
    row = conn.execute(
        "SELECT length(rowids) / 8 FROM snapshot_rows WHERE repo_id = %s AND commit_sha = %s AND embedder_id = %s",
        (store.repo_id, commit_sha, embedder_id)).fetchone()
    if row is None or row[0] < APPROX_MIN_ROWS or not has_index(store, embedder_id) or _version(conn) < (0, 8):
        return None
    dims = store.embedder_dims(embedder_id)
    if not dims:
        return None
    rowids, slots, files, norms, lengths = store.packed_rows(commit_sha, embedder_id)
    size = conn.execute("SELECT COUNT(*) FROM vectors WHERE embedder_id = %s", (embedder_id,)).fetchone()[0]
    bound = int(slots.max()) + 1 if len(slots) else 0
    link = _Link(store)
    return (rowids, slots, files, norms, lengths, PgAnnIndex(link, embedder_id, dims, bound, int(size)),
            PgVectors(link, embedder_id, bound, dims))
