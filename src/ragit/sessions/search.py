"""``session_search``: the agent-facing transcript search tool (memory §8.4).

Parameters arrive from a tool call or the CLI, so they are coerced leniently (a bad ``limit``
becomes the default) except ``query``, whose absence is reported as an error result rather
than an exception. Every row says where its text came from (``trust: "artifact"``) and which
injection patterns it contains (``flags``): transcripts quote untrusted tool output verbatim.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from ragit.sessions.store import SessionStore

DEFAULT_LIMIT = 20
MAX_LIMIT = 100
_HIT_KEYS = ("session_id", "message_id", "seq", "role", "timestamp", "snippet", "score")
_ARTIFACT_KEYS = (
    "artifact_id", "session_id", "kind", "source_start_seq", "source_end_seq", "snippet", "score", "updated_at",
)


def _limit(value: Any) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value <= 0:
        return DEFAULT_LIMIT
    return min(value, MAX_LIMIT)


def _empty(scope: str, **extra: Any) -> dict[str, Any]:
    return {"matched": False, "count": 0, "artifact_count": 0, "scope": scope, "hits": [], "artifacts": [], **extra}


def _labelled(row: dict[str, Any], keys: tuple[str, ...], text: str) -> dict[str, Any]:
    from ragit.security.labels import flags_for

    out = {key: row[key] for key in keys}
    out["trust"] = "artifact"
    out["flags"] = list(flags_for(text))
    return out


def session_search(store: SessionStore | str | Path, **params: Any) -> dict[str, Any]:
    """Search transcripts (and optionally context artifacts) of ``store`` (a store or db path).

    Params: ``query`` (required), ``scope`` (``project``|``all``), ``session_id``,
    ``project_id``, ``limit`` (default 20, at most 100), ``prefer_trigram``,
    ``include_artifacts``, ``artifact_kinds``. A blank or non-string query yields
    ``matched: false`` with ``error {field, reason, message}``; scope ``all`` yields
    ``reason: "global index not available"``.
    """
    scope = params.get("scope") if params.get("scope") in ("project", "all") else "project"
    query = params.get("query")
    if not isinstance(query, str):
        return _empty(scope, error={"field": "query", "reason": "not_string", "message": "query must be a string"})
    if not query.strip():
        return _empty(scope, error={"field": "query", "reason": "empty", "message": "query must not be blank"})
    if scope == "all":
        return _empty(scope, reason="global index not available")

    session_id = params.get("session_id")
    session_id = session_id if isinstance(session_id, str) and session_id.strip() else None
    limit = _limit(params.get("limit", DEFAULT_LIMIT))
    raw_kinds = params.get("artifact_kinds")
    kinds = [k for k in raw_kinds if isinstance(k, str)] if isinstance(raw_kinds, (list, tuple)) else []

    owned = not isinstance(store, SessionStore)
    db = SessionStore(store) if owned else store
    try:
        hits = db.search_messages(
            query, session_id=session_id, limit=limit, prefer_trigram=params.get("prefer_trigram") is True,
            include_text=True,
        )
        found = []
        if params.get("include_artifacts") is True:
            found = db.search_context_artifacts(
                query, session_id=session_id, kinds=kinds or None, limit=limit, include_content=True
            )
    finally:
        if owned:
            db.close()
    rows = [_labelled(hit, _HIT_KEYS, hit["text"]) for hit in hits]
    artifacts = [_labelled(row, _ARTIFACT_KEYS, row["content"]) for row in found]
    return {
        "matched": bool(rows or artifacts),
        "count": len(rows),
        "artifact_count": len(artifacts),
        "scope": scope,
        "hits": rows,
        "artifacts": artifacts,
    }
