"""Schema of ``sessions.db``: transcript rows, context artifacts and their FTS5 indexes.

Message content is stored as JSON (a string or a list of blocks), but JSON escapes make poor
search text (``"a\\nb"`` would index ``nb``). The FTS tables therefore use a view as their
external content: it yields the string leaves of the JSON (block text, tool inputs, tool
results), leaving out ids, types, signatures and base64 payloads. Triggers keep the indexes in
step with ``messages``; the same view feeds ``snippet()`` so highlights line up with what was
indexed.

The trigram index (substring search) exists only when a probe shows the SQLite library has the
``trigram`` tokenizer (3.34+); otherwise search degrades to ``unicode61`` with a warning.
"""

from __future__ import annotations

import logging
import sqlite3

log = logging.getLogger(__name__)

SCHEMA_VERSION = 1
SNIPPET_TOKENS = 16  # memory §8.2: snippets of 16 tokens with [ ] highlights and …

# JSON keys whose values are identifiers or binary payloads, never prose worth searching.
_NOISE_KEYS = "('type','id','tool_use_id','tool_call_id','call_id','signature','data','media_type','encrypted_content')"


def _leaves(column: str) -> str:
    """SQL expression: the string leaves of a JSON column joined by newlines (raw text if not JSON)."""
    return (
        "(SELECT group_concat(value, char(10)) FROM json_tree("
        f"CASE WHEN json_valid(m.{column}) THEN m.{column} ELSE json_quote(m.{column}) END) "
        f"WHERE type = 'text' AND coalesce(key, '') NOT IN {_NOISE_KEYS})"
    )


BASE_SCHEMA = f"""
CREATE TABLE IF NOT EXISTS messages (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    session_id TEXT NOT NULL,
    seq INTEGER NOT NULL,
    role TEXT NOT NULL,
    content TEXT,
    tool_call_id TEXT,
    tool_calls TEXT,
    tool_name TEXT,
    timestamp TEXT,
    token_count INTEGER,
    finish_reason TEXT,
    reasoning TEXT,
    metadata TEXT,
    UNIQUE(session_id, seq)
);
CREATE INDEX IF NOT EXISTS idx_messages_timestamp ON messages(timestamp DESC, id DESC);

CREATE VIEW IF NOT EXISTS messages_fts_src AS
SELECT m.id AS id, {_leaves("content")} AS content, m.tool_name AS tool_name,
       {_leaves("tool_calls")} AS tool_calls
FROM messages m;

CREATE VIRTUAL TABLE IF NOT EXISTS messages_fts USING fts5(
    content, tool_name, tool_calls,
    content='messages_fts_src', content_rowid='id', tokenize='unicode61'
);

CREATE TABLE IF NOT EXISTS context_artifacts (
    artifact_id TEXT PRIMARY KEY,
    session_id TEXT NOT NULL,
    kind TEXT NOT NULL,
    source_start_seq INTEGER,
    source_end_seq INTEGER,
    content TEXT NOT NULL,
    metadata TEXT NOT NULL DEFAULT '{{}}',
    token_count INTEGER,
    model TEXT,
    provider TEXT,
    content_hash TEXT NOT NULL,
    created_at TEXT NOT NULL,
    updated_at TEXT NOT NULL,
    UNIQUE(session_id, kind, source_start_seq, source_end_seq, content_hash)
);
CREATE INDEX IF NOT EXISTS idx_context_artifacts_session
    ON context_artifacts(session_id, kind, updated_at DESC);
CREATE INDEX IF NOT EXISTS idx_context_artifacts_kind ON context_artifacts(kind, updated_at DESC);

CREATE VIRTUAL TABLE IF NOT EXISTS context_artifacts_fts USING fts5(
    content, kind, metadata,
    content='context_artifacts', content_rowid='rowid', tokenize='unicode61'
);

CREATE TRIGGER IF NOT EXISTS context_artifacts_ai AFTER INSERT ON context_artifacts BEGIN
    INSERT INTO context_artifacts_fts(rowid, content, kind, metadata)
    VALUES (new.rowid, new.content, new.kind, new.metadata);
END;
CREATE TRIGGER IF NOT EXISTS context_artifacts_ad AFTER DELETE ON context_artifacts BEGIN
    INSERT INTO context_artifacts_fts(context_artifacts_fts, rowid, content, kind, metadata)
    VALUES ('delete', old.rowid, old.content, old.kind, old.metadata);
END;
CREATE TRIGGER IF NOT EXISTS context_artifacts_au AFTER UPDATE ON context_artifacts BEGIN
    INSERT INTO context_artifacts_fts(context_artifacts_fts, rowid, content, kind, metadata)
    VALUES ('delete', old.rowid, old.content, old.kind, old.metadata);
    INSERT INTO context_artifacts_fts(rowid, content, kind, metadata)
    VALUES (new.rowid, new.content, new.kind, new.metadata);
END;
"""


def _message_triggers(fts: str) -> str:
    """Insert/delete/update triggers that keep ``fts`` in step with ``messages``.

    Deletion must hand FTS5 the exact values that were indexed, so the delete side runs
    *before* the row changes and reads them back through the view.
    """
    columns = "rowid, content, tool_name, tool_calls"
    values = "content, tool_name, tool_calls FROM messages_fts_src"
    select = f"SELECT id, {values}"
    delete = f"INSERT INTO {fts}({fts}, {columns}) SELECT 'delete', id, {values}"
    return f"""
CREATE TRIGGER IF NOT EXISTS {fts}_ai AFTER INSERT ON messages BEGIN
    INSERT INTO {fts}({columns}) {select} WHERE id = new.id;
END;
CREATE TRIGGER IF NOT EXISTS {fts}_bd BEFORE DELETE ON messages BEGIN
    {delete} WHERE id = old.id;
END;
CREATE TRIGGER IF NOT EXISTS {fts}_bu BEFORE UPDATE ON messages BEGIN
    {delete} WHERE id = old.id;
END;
CREATE TRIGGER IF NOT EXISTS {fts}_au AFTER UPDATE ON messages BEGIN
    INSERT INTO {fts}({columns}) {select} WHERE id = new.id;
END;
"""


TRIGRAM_TABLE = f"""
CREATE VIRTUAL TABLE IF NOT EXISTS messages_fts_trigram USING fts5(
    content, tool_name, tool_calls,
    content='messages_fts_src', content_rowid='id', tokenize='trigram'
);
{_message_triggers("messages_fts_trigram")}
"""


def trigram_supported(conn: sqlite3.Connection) -> bool:
    """Probe the linked SQLite for the ``trigram`` tokenizer (SQLite >= 3.34)."""
    try:
        conn.execute("CREATE VIRTUAL TABLE temp.ragit_trigram_probe USING fts5(x, tokenize='trigram')")
        conn.execute("DROP TABLE temp.ragit_trigram_probe")
    except sqlite3.Error:
        return False
    return True


def _table_exists(conn: sqlite3.Connection, name: str) -> bool:
    row = conn.execute("SELECT 1 FROM sqlite_master WHERE name = ?", (name,)).fetchone()
    return row is not None


def ensure_schema(conn: sqlite3.Connection) -> bool:
    """Create whatever is missing; return whether the trigram index exists.

    An up-to-date database is only read, so opening one for a search never writes. A database
    created before trigram support became available gets its trigram index built from the
    existing rows.
    """
    version = conn.execute("PRAGMA user_version").fetchone()[0]
    has_trigram = _table_exists(conn, "messages_fts_trigram")
    if version == SCHEMA_VERSION and has_trigram:
        return True
    add_trigram = not has_trigram and trigram_supported(conn)
    if not has_trigram and not add_trigram:
        log.warning("SQLite has no trigram tokenizer; session search falls back to unicode61")
        if version == SCHEMA_VERSION:
            return False
    conn.execute("BEGIN IMMEDIATE")
    try:
        for statement in _statements(BASE_SCHEMA + _message_triggers("messages_fts")):
            conn.execute(statement)
        if add_trigram:
            for statement in _statements(TRIGRAM_TABLE):
                conn.execute(statement)
            # FTS5 'rebuild' cannot scan a view with subqueries; filling the empty index is the same.
            conn.execute(
                "INSERT INTO messages_fts_trigram(rowid, content, tool_name, tool_calls) "
                "SELECT id, content, tool_name, tool_calls FROM messages_fts_src"
            )
        conn.execute(f"PRAGMA user_version = {SCHEMA_VERSION}")
        conn.execute("COMMIT")
    except BaseException:
        conn.execute("ROLLBACK")
        raise
    return has_trigram or add_trigram


def _statements(script: str) -> list[str]:
    """Split a DDL script into statements (trigger bodies keep their inner semicolons)."""
    statements: list[str] = []
    buffer: list[str] = []
    for line in script.splitlines():
        if not line.strip():
            continue
        buffer.append(line)
        candidate = "\n".join(buffer)
        if sqlite3.complete_statement(candidate):
            statements.append(candidate.strip())
            buffer = []
    return statements
