"""Transcript rows of ``sessions.db``: neutral message <-> row, mirroring and full-text search.

Search returns the newest matches first. Sorting every match by timestamp is what makes a naive
FTS join slow on a large store, so the newest ids are found first (by the cheapest exact plan
for the match count) and ``snippet()``/``bm25()`` are computed for those rows only, in one
statement so that bm25's per-query statistics are gathered once.
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Sequence
from typing import Any

from ragit import clock
from ragit.sessions.fts import SNIPPET_TOKENS
from ragit.window.messages import int_or_none

# Message keys that have a column; anything else round-trips through ``metadata._fields``.
_COLUMN_KEYS = frozenset({
    "seq", "role", "content", "tool_call_id", "tool_calls", "tool_name", "timestamp",
    "token_count", "finish_reason", "reasoning", "metadata",
})
_EXTRA_FIELDS = "_fields"


def _json(value: Any, *, sort_keys: bool = False) -> str:
    return json.dumps(value, ensure_ascii=False, sort_keys=sort_keys, default=str)


def _loads(text: str | None) -> Any:
    if text is None:
        return None
    try:
        return json.loads(text)
    except ValueError:
        return text


def _str_or_none(value: Any) -> str | None:
    return value if isinstance(value, str) else None


def _normalise_timestamp(value: Any) -> str | None:
    """ISO timestamps are stored in one UTC form so that newest-first ordering is a string sort."""
    if not isinstance(value, str) or not value.strip():
        return None
    try:
        return clock.format_iso(clock.parse_iso(value))
    except ValueError:
        return value


def _called_tool_names(message: dict[str, Any]) -> str | None:
    """Names of the tools an assistant message calls, kept in ``tool_name`` as a search aid."""
    names: list[str] = []
    calls = message.get("tool_calls")
    for call in calls if isinstance(calls, list) else []:
        function = call.get("function") if isinstance(call, dict) else None
        if isinstance(function, dict) and isinstance(function.get("name"), str):
            names.append(function["name"])
    content = message.get("content")
    for block in content if isinstance(content, list) else []:
        if isinstance(block, dict) and block.get("type") == "tool_use" and isinstance(block.get("name"), str):
            names.append(block["name"])
    return " ".join(dict.fromkeys(names)) or None


def message_row(session_id: str, seq: int, message: dict[str, Any], now: str) -> dict[str, Any]:
    """Column values for one (already masked) neutral message."""
    role = message.get("role")
    role = role if isinstance(role, str) else ""
    tool_name = _str_or_none(message.get("tool_name"))
    if tool_name is None and role == "tool":
        tool_name = _str_or_none(message.get("name"))
    if tool_name is None:
        tool_name = _called_tool_names(message)
    extras = {
        key: value for key, value in message.items()
        if key not in _COLUMN_KEYS and not (key == "name" and role == "tool")
    }
    metadata = dict(message["metadata"]) if isinstance(message.get("metadata"), dict) else {}
    if extras:
        metadata[_EXTRA_FIELDS] = extras
    reasoning = message.get("reasoning")
    tool_calls = message.get("tool_calls")
    return {
        "session_id": session_id,
        "seq": seq,
        "role": role,
        "content": _json(message.get("content")),
        "tool_call_id": _str_or_none(message.get("tool_call_id")),
        "tool_calls": None if tool_calls is None else _json(tool_calls),
        "tool_name": tool_name,
        "timestamp": _normalise_timestamp(message.get("timestamp")),
        "now": now,
        "token_count": int_or_none(message.get("token_count")),
        "finish_reason": _str_or_none(message.get("finish_reason")),
        "reasoning": reasoning if reasoning is None or isinstance(reasoning, str) else _json(reasoning),
        "metadata": _json(metadata, sort_keys=True) if metadata else None,
    }


def row_message(row: sqlite3.Row) -> dict[str, Any]:
    """Rebuild a neutral message (context §3.1) from a stored row."""
    message: dict[str, Any] = {"seq": row["seq"], "role": row["role"], "content": _loads(row["content"])}
    metadata = _loads(row["metadata"]) or {}
    extras = metadata.pop(_EXTRA_FIELDS, {}) if isinstance(metadata, dict) else {}
    if row["tool_call_id"] is not None:
        message["tool_call_id"] = row["tool_call_id"]
    if row["tool_calls"] is not None:
        message["tool_calls"] = _loads(row["tool_calls"])
    if row["role"] == "tool" and row["tool_name"] is not None:
        message["name"] = row["tool_name"]
    for key in ("timestamp", "token_count", "finish_reason", "reasoning"):
        if row[key] is not None:
            message[key] = row[key]
    if metadata:
        message["metadata"] = metadata
    message.update(extras)
    return message


UPSERT_MESSAGE = """
INSERT INTO messages (session_id, seq, role, content, tool_call_id, tool_calls, tool_name,
                      timestamp, token_count, finish_reason, reasoning, metadata)
VALUES (:session_id, :seq, :role, :content, :tool_call_id, :tool_calls, :tool_name,
        coalesce(:timestamp, :now), :token_count, :finish_reason, :reasoning, :metadata)
ON CONFLICT(session_id, seq) DO UPDATE SET
    role = excluded.role, content = excluded.content, tool_call_id = excluded.tool_call_id,
    tool_calls = excluded.tool_calls, tool_name = excluded.tool_name,
    timestamp = coalesce(:timestamp, messages.timestamp), token_count = excluded.token_count,
    finish_reason = excluded.finish_reason, reasoning = excluded.reasoning,
    metadata = excluded.metadata
WHERE messages.role IS NOT excluded.role OR messages.content IS NOT excluded.content
   OR messages.tool_call_id IS NOT excluded.tool_call_id
   OR messages.tool_calls IS NOT excluded.tool_calls OR messages.tool_name IS NOT excluded.tool_name
   OR (:timestamp IS NOT NULL AND messages.timestamp IS NOT :timestamp)
   OR messages.token_count IS NOT excluded.token_count
   OR messages.finish_reason IS NOT excluded.finish_reason
   OR messages.reasoning IS NOT excluded.reasoning OR messages.metadata IS NOT excluded.metadata
"""


def mirror_rows(conn: sqlite3.Connection, session_id: str, rows: Sequence[dict[str, Any]]) -> int:
    """Upsert ``rows`` and delete the session's other seqs, in one transaction; return deletions."""
    keep = {row["seq"] for row in rows}
    conn.execute("BEGIN IMMEDIATE")
    try:
        existing = {r[0] for r in conn.execute("SELECT seq FROM messages WHERE session_id = ?", (session_id,))}
        stale = sorted(existing - keep)
        conn.executemany("DELETE FROM messages WHERE session_id = ? AND seq = ?", [(session_id, s) for s in stale])
        conn.executemany(UPSERT_MESSAGE, rows)
        conn.execute("COMMIT")
    except BaseException:
        conn.execute("ROLLBACK")
        raise
    return len(stale)


def _newest_ids(conn: sqlite3.Connection, table: str, match: str, session_id: str | None, limit: int) -> list[int]:
    """Ids of the ``limit`` newest messages matching ``match`` (timestamp, then id, descending).

    A session's rows usually occupy a narrow id range, which FTS5 can scan directly. Without a
    session filter, few matches are sorted outright; many matches are found by walking the
    timestamp index newest-first until ``limit`` of them are seen.
    """
    params: dict[str, Any] = {"match": match, "limit": limit, "session_id": session_id}
    matching = f"SELECT rowid FROM {table} WHERE {table} MATCH :match"
    order = "ORDER BY m.timestamp DESC, m.id DESC LIMIT :limit"
    if session_id is not None:
        lo, hi = conn.execute("SELECT min(id), max(id) FROM messages WHERE session_id = ?", (session_id,)).fetchone()
        if lo is None:
            return []
        params.update(lo=lo, hi=hi)
        sql = (
            f"SELECT m.id FROM {table} JOIN messages m ON m.id = {table}.rowid "
            f"WHERE {table} MATCH :match AND {table}.rowid BETWEEN :lo AND :hi "
            f"AND m.session_id = :session_id {order}"
        )
    else:
        count = conn.execute(f"SELECT count(*) FROM {table} WHERE {table} MATCH :match", params).fetchone()[0]
        if count == 0:
            return []
        total = conn.execute("SELECT coalesce(max(id), 0) FROM messages").fetchone()[0]
        if count * 32 >= total:
            sql = f"SELECT m.id FROM messages m INDEXED BY idx_messages_timestamp WHERE m.id IN ({matching}) {order}"
        else:
            sql = f"SELECT m.id FROM messages m NOT INDEXED WHERE m.id IN ({matching}) {order}"
    return [row[0] for row in conn.execute(sql, params)]


def search(
    conn: sqlite3.Connection, table: str, match: str, session_id: str | None, limit: int, include_text: bool
) -> list[dict[str, Any]]:
    """Rows ``{session_id, message_id, seq, role, timestamp, snippet, score}`` newest first."""
    ids = _newest_ids(conn, table, match, session_id, limit)
    if not ids:
        return []
    text = (
        f", coalesce({table}.content, '') || char(10) || coalesce({table}.tool_calls, '') AS text"
        if include_text else ""
    )
    # The range lets FTS5 seek straight to the chosen rows; the unary ``+`` keeps the id list a
    # plain filter (an IN constraint would restart the FTS query, and bm25's statistics, per id).
    sql = f"""
        SELECT m.session_id, m.id AS message_id, m.seq, m.role, m.timestamp,
               snippet({table}, -1, '[', ']', '…', {SNIPPET_TOKENS}) AS snippet,
               bm25({table}) AS score{text}
        FROM {table} JOIN messages m ON m.id = {table}.rowid
        WHERE {table} MATCH :match AND {table}.rowid BETWEEN :lo AND :hi
          AND +{table}.rowid IN ({", ".join(str(i) for i in ids)})
        ORDER BY m.timestamp DESC, m.id DESC
    """
    rows = conn.execute(sql, {"match": match, "lo": min(ids), "hi": max(ids)})
    return [dict(row, snippet=" ".join((row["snippet"] or "").split())) for row in rows]
