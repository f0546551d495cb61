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
    from .postgres import PostgresStore

M, EF_CONSTRUCTION = 16, 64


def index_name(embedder_id: str) -> str:
    return "vectors_hnsw_" + hashlib.sha1(embedder_id.encode("utf-8")).hexdigest()[:16]


def has_index(store: "PostgresStore", embedder_id: str) -> bool:
    return store.conn.execute("SELECT to_regclass(%s) IS NOT NULL", (index_name(embedder_id),)).fetchone()[0]


def ensure_index(store: "PostgresStore", embedder_id: str, commit_sha: str) -> str:
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
