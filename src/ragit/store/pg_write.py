"""The parts of a PostgreSQL publication that derive rows from other rows: keyword rows with
their postings, and the snapshot's packed rows (ragit.store.packed's five arrays, as SQLite keeps
them). Both run inside :meth:`PostgresStore.write_snapshot`'s transaction."""

from __future__ import annotations

from typing import TYPE_CHECKING

from .base import SnapshotWrite
from .sqlite import StoreUnreadable

if TYPE_CHECKING:  # pragma: no cover
    from .pg_connect import PgStore

INDEX_BATCH = 4096  # keyword rows analysed and inserted per batch


def index_rows(conn, repo_id: str, commit_sha: str, paths: list[str] | None) -> int:
    """Keyword rows (and their postings) for the snapshot's (path, chunk) pairs that have none
    yet, restricted to ``paths`` when given; returns how many this transaction inserted.

    Rows are inserted in (path, chunk ordinal) order, the order SQLite numbers them in, so row ids
    rank alike in both backends; with ``ON CONFLICT DO NOTHING`` a pair another ingest is
    inserting right now waits for it and is then skipped (its postings are that ingest's), and
    the one key order (a path's chunks all come from one blob) keeps concurrent writers free of
    deadlocks. The postings of up to ``pg_keyword.SEGMENT_ROWS`` inserted rows go in as one
    segment per term.
    """
    from .pg_keyword import SEGMENT_ROWS, row_postings

    params: list = [repo_id, commit_sha]
    only = ""
    if paths is not None:
        only = " AND d.path = ANY(%s)"
        params.append(list(paths))
    fresh = conn.execute(
        "SELECT d.path, c.chunk_id FROM snapshot_docs d"
        " JOIN chunks c ON c.blob_id = d.blob_id AND c.chunker_key = d.chunker_key"
        " WHERE d.repo_id = %s AND d.commit_sha = %s" + only + " AND NOT EXISTS"
        " (SELECT 1 FROM keyword_rows r WHERE r.path = d.path AND r.chunk_id = c.chunk_id)"
        " ORDER BY d.path COLLATE \"C\", c.ordinal, c.chunk_id COLLATE \"C\"", params).fetchall()
    inserted = 0
    pending: list[tuple[int, dict[str, float]]] = []
    for start in range(0, len(fresh), INDEX_BATCH):
        part = fresh[start:start + INDEX_BATCH]
        texts = {cid: (text, title) for cid, text, title in conn.execute(
            "SELECT chunk_id, text, title FROM chunks WHERE chunk_id = ANY(%s)",
            (list({cid for _, cid in part}),))}
        analysed = {(path, cid): row_postings(*texts[cid], path) for path, cid in part}
        got = conn.execute(
            "INSERT INTO keyword_rows(path, chunk_id, tokens)"
            " SELECT p, c, t FROM unnest(%s::text[], %s::text[], %s::int[]) WITH ORDINALITY AS q(p, c, t, i)"
            " ORDER BY i ON CONFLICT (path, chunk_id) DO NOTHING RETURNING row_id, path, chunk_id",
            ([p for p, _ in part], [c for _, c in part], [analysed[k][1] for k in part])).fetchall()
        pending.extend((row_id, analysed[(path, cid)][0]) for row_id, path, cid in got)
        if len(pending) >= SEGMENT_ROWS:
            _write_segments(conn, pending)
            pending = []
        inserted += len(got)
    _write_segments(conn, pending)
    return inserted


def _write_segments(conn, rows: list[tuple[int, dict[str, float]]]) -> None:
    from .pg_keyword import segment_rows

    if not rows:
        return
    with conn.cursor().copy("COPY keyword_segments(term, first_row, last_row, offsets, tfs) FROM STDIN"
                            " (FORMAT BINARY)") as copy:
        copy.set_types(["text", "int8", "int8", "bytea", "bytea"])
        for segment in segment_rows(rows):
            copy.write_row(segment)


# A snapshot row as packing needs it (the columns of ragit.store.sqlite's _ROW_COLUMNS).
_ROWS = (
    "SELECT r.row_id, v.slot, d.path, d.blob_id, d.chunker_key, n.norm, c.ordinal, r.tokens FROM snapshot_docs d"
    " JOIN chunks c ON c.blob_id = d.blob_id AND c.chunker_key = d.chunker_key"
    " JOIN keyword_rows r ON r.path = d.path AND r.chunk_id = c.chunk_id"
    " LEFT JOIN vectors v ON v.chunk_id = c.chunk_id AND v.embedder_id = %s"
    " LEFT JOIN blob_norms n ON n.blob_id = d.blob_id AND n.chunker_key = d.chunker_key AND n.embedder_id = %s"
    " WHERE d.repo_id = %s AND d.commit_sha = %s ORDER BY r.row_id"
)


def write_rows(store: "PgStore", write: SnapshotWrite) -> None:
    """The snapshot's packed rows: derived from its base's for an incremental write (cost follows
    the change), else built from all its documents."""
    if write.base_sha is not None and write.replaced_paths is not None and _derive_rows(store, write):
        return
    build_rows(store, write)


def _derive_rows(store: "PgStore", write: SnapshotWrite) -> bool:
    """The base snapshot's packed rows minus the replaced paths' rows plus this snapshot's rows at
    those paths (as SqliteStore derives them: file ordinals only group rows, so fresh ordinals
    for new files change no score). False when the base has no rows for this embedder."""
    from .packed import PackedRows

    conn, embedder_id = store.conn, write.embedder_id
    base = store._packed(write.base_sha, embedder_id)
    if base is None:
        return False
    rows = PackedRows.from_blobs(*base)
    replaced = list(write.replaced_paths or ())
    dropped = [r[0] for r in conn.execute("SELECT row_id FROM keyword_rows WHERE path = ANY(%s)", (replaced,))]
    added = _checked(conn.execute(_ROWS.replace(" ORDER BY", " AND d.path = ANY(%s) ORDER BY"),
                                  (embedder_id, embedder_id, store.repo_id, write.commit_sha, replaced)).fetchall(),
                     write)
    new_paths = sorted({r[2] for r in added})
    ordinal = {path: len(rows.norms) + i for i, path in enumerate(new_paths)}
    norm_of = _file_norms(store, embedder_id, added)
    rows = rows.splice(dropped, [(r[0], r[1], ordinal[r[2]], r[7]) for r in added], [norm_of[p] for p in new_paths])
    _put(store, write, *rows.blobs())
    return True


def _checked(rows: list, write: SnapshotWrite) -> list:
    """``rows`` when every one has a vector, else StoreUnreadable (vectors precede rows)."""
    missing = sum(1 for r in rows if r[1] is None)
    if missing:
        raise StoreUnreadable(f"{missing} chunk(s) of {write.commit_sha} have no vector for {write.embedder_id}")
    return rows


def _put(store: "PgStore", write: SnapshotWrite, *blobs: bytes) -> None:
    store.conn.execute("INSERT INTO snapshot_rows VALUES (%s, %s, %s, %s, %s, %s, %s, %s)",
                       (store.repo_id, write.commit_sha, write.embedder_id, *blobs))


def build_rows(store: "PgStore", write: SnapshotWrite) -> None:
    """Pack the snapshot's rows: row ids (sorted), vector slots, file ordinals (paths sorted),
    keyword lengths and each file's vector-sum norm, computed once per (blob, chunker,
    embedder) with ragit.vectormath exactly as the SQLite store computes it."""
    from .packed import pack_rows

    conn, embedder_id = store.conn, write.embedder_id
    rows = _checked(conn.execute(_ROWS, (embedder_id, embedder_id, store.repo_id, write.commit_sha)).fetchall(), write)
    _put(store, write, *pack_rows(rows, lambda rows: _file_norms(store, embedder_id, rows)))


def _file_norms(store: "PgStore", embedder_id: str, rows) -> dict[str, float]:
    """Path -> norm of its blob's vector sum (:func:`ragit.store.packed.file_norms`), missing
    norms computed with ragit.vectormath as the SQLite store computes them, and stored in key
    order (concurrent writers lock rows in one order)."""
    from .packed import file_norms

    def segment_norms(segments: list[list[int]]) -> list[float]:
        import numpy as np

        from .. import vectormath

        gathered = store.gather(embedder_id, [s for seg in segments for s in seg])
        sums = vectormath.segment_sums_numpy(gathered, np.array([len(seg) for seg in segments], dtype=np.int64))
        return [float(v) for v in vectormath.norms_numpy(sums)]

    def remember(computed: list[tuple[str, str, float]]) -> None:
        with store.conn.cursor() as cur:
            cur.executemany("INSERT INTO blob_norms VALUES (%s, %s, %s, %s) ON CONFLICT DO NOTHING",
                            [(blob, key, embedder_id, v) for blob, key, v in sorted(computed)])

    return file_norms(rows, segment_norms, remember)
