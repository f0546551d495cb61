"""Transcript store: ``.ragit/sessions/sessions.db`` (memory §7, §8).

Transcripts cannot be rebuilt from git, so they live apart from the derived store. The host
agent mirrors its message list here after each turn; compaction and dreaming write context
artifacts next to it. Everything is secret-masked before it is written. Reading never creates
the database: a missing file simply has no rows.
"""

from __future__ import annotations

import sqlite3
import threading
from collections.abc import Iterable, Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from ragit import clock
from ragit.errors import input_invalid
from ragit.sessions import artifacts, fts, transcripts
from ragit.window.messages import int_or_none
from ragit.sessions.sanitize import sanitize_fts_query


@dataclass(frozen=True)
class MirrorResult:
    """What one ``mirror`` call did: rows now mirrored, stale rows deleted, non-dicts skipped."""

    session_id: str
    messages: int
    deleted: int
    skipped: int

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def session_db_path(root: str | Path, config: Any = None) -> Path:
    """``<root>/<sessions.db_path>`` from the repository's configuration."""
    if config is None:
        from ragit.config import load_config

        config = load_config(Path(root))
    return Path(root) / config.get("sessions.db_path")


def _mask(value: Any) -> Any:
    from ragit.security.masking import mask_value

    return mask_value(value)[0]


class SessionStore:
    """One ``sessions.db``: transcripts, their FTS indexes and context artifacts.

    The connection is opened lazily: reads on a missing file return empty results without
    creating it; the first write creates the file and its schema (WAL mode). One instance may
    be shared between threads; background work (dreaming) opens its own instance.
    """

    def __init__(self, path: str | Path) -> None:
        self.path = Path(path)
        self._conn: sqlite3.Connection | None = None
        self._lock = threading.RLock()
        self.trigram_available = False

    # ------------------------------------------------------------ connection

    def _connection(self, *, create: bool) -> sqlite3.Connection | None:
        if self._conn is not None:
            return self._conn
        if not create and not self.path.is_file():
            return None
        from ..fsutil import ensure_ragit_gitignore, writing

        ensure_ragit_gitignore(self.path.parent)  # raw transcripts stay out of `git add -A`
        with writing(self.path):  # full, read-only or forbidden storage: STORE_WRITE_FAILED
            self.path.parent.mkdir(parents=True, exist_ok=True)
            conn = sqlite3.connect(self.path, timeout=30.0, isolation_level=None, check_same_thread=False)
            conn.row_factory = sqlite3.Row
            try:
                conn.execute("PRAGMA journal_mode = WAL")
                conn.execute("PRAGMA synchronous = NORMAL")
                self.trigram_available = fts.ensure_schema(conn)
            except BaseException:
                conn.close()
                raise
        self._conn = conn
        return conn

    def _write(self) -> sqlite3.Connection:
        conn = self._connection(create=True)
        assert conn is not None
        return conn

    def close(self) -> None:
        with self._lock:
            if self._conn is not None:
                self._conn.close()
                self._conn = None

    def __enter__(self) -> SessionStore:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # ------------------------------------------------------------ messages

    def mirror(self, session_id: str, messages: Sequence[Any]) -> MirrorResult:
        """Make the stored rows of ``session_id`` equal ``messages`` (upsert by seq, delete the rest).

        ``seq`` is a message's own integer ``seq`` or else its list index; non-dict entries
        are skipped but still consume their index. Unchanged rows are not rewritten, so
        mirroring a growing conversation after every turn only indexes what is new.
        """
        if not isinstance(session_id, str) or not session_id.strip():
            raise input_invalid("session_id", "empty", "session id must be a non-empty string")
        now = clock.now_iso()
        rows: dict[int, dict[str, Any]] = {}
        skipped = 0
        for index, message in enumerate(messages):
            if not isinstance(message, dict):
                skipped += 1
                continue
            seq = int_or_none(message.get("seq"))
            seq = index if seq is None else seq
            rows[seq] = transcripts.message_row(session_id, seq, _mask(message), now)
        with self._lock:
            deleted = transcripts.mirror_rows(self._write(), session_id, list(rows.values()))
        return MirrorResult(session_id=session_id, messages=len(rows), deleted=deleted, skipped=skipped)

    def load_messages(self, session_id: str, limit: int | None = None) -> list[dict[str, Any]]:
        """The session's messages in seq order; with ``limit``, only the last ``limit`` of them."""
        with self._lock:
            conn = self._connection(create=False)
            if conn is None:
                return []
            if limit is None:
                rows = conn.execute("SELECT * FROM messages WHERE session_id = ? ORDER BY seq", (session_id,))
            else:
                rows = conn.execute(
                    "SELECT * FROM (SELECT * FROM messages WHERE session_id = ? ORDER BY seq DESC LIMIT ?) "
                    "ORDER BY seq",
                    (session_id, max(0, int(limit))),
                )
            return [transcripts.row_message(row) for row in rows]

    def search_messages(
        self,
        query: str,
        session_id: str | None = None,
        limit: int = 20,
        prefer_trigram: bool = False,
        *,
        include_text: bool = False,
    ) -> list[dict[str, Any]]:
        """Full-text search over transcripts, newest first; ``[]`` on any FTS error.

        Rows: ``{session_id, message_id, seq, role, timestamp, snippet, score}`` (score = bm25,
        lower is better); ``include_text`` adds ``text``, the full searchable text of the
        message, for callers that label content. The trigram index is used only when asked for
        and available.
        """
        match = sanitize_fts_query(query) if isinstance(query, str) else ""
        if not match:
            return []
        with self._lock:
            conn = self._connection(create=False)
            if conn is None:
                return []
            table = "messages_fts_trigram" if prefer_trigram and self.trigram_available else "messages_fts"
            try:
                return transcripts.search(conn, table, match, session_id or None, max(1, int(limit)), include_text)
            except sqlite3.Error:
                return []

    # ------------------------------------------------------------ context artifacts

    def upsert_context_artifact(
        self,
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
        """Insert or refresh a context artifact (compaction summary, dream, ...); return its id."""
        with self._lock:
            return artifacts.upsert(
                self._write(),
                session_id=session_id, kind=kind, source_start_seq=source_start_seq,
                source_end_seq=source_end_seq, content=content, metadata=metadata,
                token_count=token_count, model=model, provider=provider,
            )

    def list_context_artifacts(
        self, session_id: str | None, kinds: Iterable[str] | None = None, limit: int = 20
    ) -> list[dict[str, Any]]:
        """Artifacts of a session (all sessions for ``None``), newest ``updated_at`` first."""
        with self._lock:
            conn = self._connection(create=False)
            return [] if conn is None else artifacts.list_(conn, session_id, kinds, limit)

    def search_context_artifacts(
        self,
        query: str,
        session_id: str | None = None,
        kinds: Iterable[str] | None = None,
        limit: int = 20,
        *,
        include_content: bool = False,
    ) -> list[dict[str, Any]]:
        """Full-text search over context artifacts by bm25 rank; ``[]`` on any FTS error."""
        with self._lock:
            conn = self._connection(create=False)
            if conn is None:
                return []
            return artifacts.search(conn, query, session_id, kinds, limit, include_content=include_content)
