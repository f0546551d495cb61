"""Context artifacts in ``sessions.db`` (memory §8.3): compaction summaries, dreams, handoffs.

An artifact is keyed by what it summarises (session, kind, seq range) and by its content hash,
so re-running compaction or dreaming over the same source with the same result is idempotent,
while a different result is kept beside the old one.

Note: the FTS index is keyed by the table's implicit rowid; should the database ever be
``VACUUM``-ed, rebuild it with ``INSERT INTO context_artifacts_fts(context_artifacts_fts)
VALUES ('rebuild')``.
"""

from __future__ import annotations

import hashlib
import json
import sqlite3
from collections.abc import Iterable
from typing import Any

from ragit import clock
from ragit.errors import input_invalid
from ragit.sessions.fts import SNIPPET_TOKENS
from ragit.sessions.sanitize import sanitize_fts_query

_FIELDS = (
    "artifact_id, session_id, kind, source_start_seq, source_end_seq, content, metadata, "
    "token_count, model, provider, content_hash, created_at, updated_at"
)


def artifact_id_for(
    session_id: str, kind: str, source_start_seq: int | None, source_end_seq: int | None, content_hash: str
) -> str:
    """Default id: first 32 hex of sha256 of ``session|kind|start|end|content_hash``."""
    start = "" if source_start_seq is None else str(source_start_seq)
    end = "" if source_end_seq is None else str(source_end_seq)
    key = f"{session_id}|{kind}|{start}|{end}|{content_hash}"
    return hashlib.sha256(key.encode("utf-8")).hexdigest()[:32]


def upsert(
    conn: sqlite3.Connection,
    *,
    session_id: str,
    kind: str,
    source_start_seq: int | None,
    source_end_seq: int | None,
    content: str,
    metadata: dict,
    token_count: int | None = None,
    model: str | None = None,
    provider: str | None = None,
) -> str:
    """Write one artifact (secret-masked) and return its id; ``created_at`` survives updates."""
    from ragit.security.masking import mask_text, mask_value

    if not isinstance(session_id, str) or not session_id:
        raise input_invalid("session_id", "empty", "context artifact needs a session id")
    if not isinstance(kind, str) or not kind:
        raise input_invalid("kind", "empty", "context artifact needs a kind")
    masked = mask_text(content).text
    masked_metadata = mask_value(dict(metadata or {}))[0]
    content_hash = hashlib.sha256(masked.encode("utf-8")).hexdigest()
    artifact_id = artifact_id_for(session_id, kind, source_start_seq, source_end_seq, content_hash)
    now = clock.now_iso()
    conn.execute(
        f"""INSERT INTO context_artifacts ({_FIELDS})
            VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
            ON CONFLICT(artifact_id) DO UPDATE SET
                content = excluded.content, metadata = excluded.metadata,
                token_count = excluded.token_count, model = excluded.model,
                provider = excluded.provider, content_hash = excluded.content_hash,
                updated_at = excluded.updated_at""",
        (
            artifact_id, session_id, kind, source_start_seq, source_end_seq, masked,
            json.dumps(masked_metadata, ensure_ascii=False, sort_keys=True, default=str),
            token_count, model, provider, content_hash, now, now,
        ),
    )
    return artifact_id


def _filters(session_id: str | None, kinds: Iterable[str] | None, params: list[Any]) -> str:
    """`` AND ...`` conditions on session and kinds; their values are appended to ``params``."""
    where = ""
    if session_id is not None:
        where += " AND a.session_id = ?"
        params.append(session_id)
    if kinds is None:
        return where
    wanted = [k for k in kinds if isinstance(k, str)]
    params.extend(wanted)
    return where + (f" AND a.kind IN ({', '.join('?' for _ in wanted)})" if wanted else " AND 0")


def _record(row: sqlite3.Row) -> dict[str, Any]:
    record = dict(row)
    try:
        record["metadata"] = json.loads(record["metadata"] or "{}")
    except ValueError:
        record["metadata"] = {}
    return record


def list_(
    conn: sqlite3.Connection, session_id: str | None, kinds: Iterable[str] | None, limit: int
) -> list[dict[str, Any]]:
    """Artifacts filtered by session and kinds, newest ``updated_at`` first (ties: newest row)."""
    params: list[Any] = []
    where = "1" + _filters(session_id, kinds, params)
    params.append(max(1, int(limit)))
    rows = conn.execute(
        f"SELECT {_FIELDS} FROM context_artifacts a WHERE {where} "
        "ORDER BY a.updated_at DESC, a.rowid DESC LIMIT ?",
        params,
    )
    return [_record(row) for row in rows]


def search(
    conn: sqlite3.Connection,
    query: str,
    session_id: str | None,
    kinds: Iterable[str] | None,
    limit: int,
    *,
    include_content: bool = False,
) -> list[dict[str, Any]]:
    """bm25-ranked artifact hits with ``[``/``]`` snippets; ``[]`` on an empty or invalid query."""
    match = sanitize_fts_query(query) if isinstance(query, str) else ""
    if not match:
        return []
    params: list[Any] = [match]
    where = _filters(session_id, kinds, params)
    params.append(max(1, int(limit)))
    content = ", a.content AS content" if include_content else ""
    sql = f"""
        SELECT a.artifact_id, a.session_id, a.kind, a.source_start_seq, a.source_end_seq,
               snippet(context_artifacts_fts, -1, '[', ']', '…', {SNIPPET_TOKENS}) AS snippet,
               bm25(context_artifacts_fts) AS score, a.updated_at{content}
        FROM context_artifacts_fts JOIN context_artifacts a ON a.rowid = context_artifacts_fts.rowid
        WHERE context_artifacts_fts MATCH ?{where}
        ORDER BY score, a.updated_at DESC, a.artifact_id
        LIMIT ?
    """
    try:
        rows = conn.execute(sql, params).fetchall()
    except sqlite3.Error:
        return []
    return [dict(row, snippet=" ".join((row["snippet"] or "").split())) for row in rows]
