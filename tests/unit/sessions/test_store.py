"""Transcript store: mirror semantics, schema, FTS sync and trigram fallback (memory §7)."""

from __future__ import annotations

import sqlite3

import pytest

from ragit.errors import RagitError
from ragit.sessions import fts
from ragit.sessions.store import SessionStore, session_db_path

SECRET = "sk-abcdefghijklmnopqrstuvwxyz0123"


def _messages(n: int) -> list[dict]:
    return [{"role": "user" if i % 2 == 0 else "assistant", "content": f"message number {i} about widget{i}"}
            for i in range(n)]


@pytest.fixture
def store(tmp_path):
    with SessionStore(tmp_path / "sessions" / "sessions.db") as s:
        yield s


def _names(store: SessionStore, kind: str) -> set[str]:
    conn = sqlite3.connect(store.path)
    try:
        return {r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type = ?", (kind,))}
    finally:
        conn.close()


def test_D_14_b_mirror_deletes_rows_no_longer_present(store):
    first = store.mirror("s1", _messages(5))
    assert (first.messages, first.deleted) == (5, 0)
    second = store.mirror("s1", _messages(3))
    assert (second.messages, second.deleted) == (3, 2)
    assert [m["seq"] for m in store.load_messages("s1")] == [0, 1, 2]
    assert store.search_messages("widget4") == []
    assert store.search_messages("widget3") == []
    assert [h["seq"] for h in store.search_messages("widget2")] == [2]


def test_D_14_b_tables_and_triggers_exist(store):
    store.mirror("s1", _messages(1))
    tables = _names(store, "table")
    assert {"messages", "messages_fts", "context_artifacts", "context_artifacts_fts"} <= tables
    triggers = _names(store, "trigger")
    assert {"messages_fts_ai", "messages_fts_bd", "messages_fts_bu", "messages_fts_au"} <= triggers
    assert {"context_artifacts_ai", "context_artifacts_ad", "context_artifacts_au"} <= triggers
    conn = sqlite3.connect(store.path)
    assert conn.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
    conn.close()


def test_D_14_b_insert_indexed_and_delete_removed(store):
    store.mirror("s1", [{"role": "user", "content": "the quokka escaped"}])
    assert [h["seq"] for h in store.search_messages("quokka")] == [0]
    store.mirror("s1", [{"role": "user", "content": "nothing to see"}])  # update in place
    assert store.search_messages("quokka") == []
    assert [h["seq"] for h in store.search_messages("nothing")] == [0]
    store.mirror("s1", [])
    assert store.search_messages("nothing") == []
    conn = sqlite3.connect(store.path)
    conn.execute("INSERT INTO messages_fts(messages_fts) VALUES ('integrity-check')")
    conn.close()


def test_D_14_e_probe_failure_falls_back_to_unicode61(tmp_path, monkeypatch, caplog):
    monkeypatch.setattr(fts, "trigram_supported", lambda conn: False)
    with SessionStore(tmp_path / "sessions.db") as store:
        store.mirror("s1", [{"role": "user", "content": "authentication failed"}])
        assert store.trigram_available is False
        assert "messages_fts_trigram" not in _names(store, "table")
        assert [h["seq"] for h in store.search_messages("authentication", prefer_trigram=True)] == [0]
        assert store.search_messages("thentic", prefer_trigram=True) == []  # no substring search
    assert "trigram" in caplog.text


def test_trigram_index_added_later_covers_existing_rows(tmp_path, monkeypatch):
    path = tmp_path / "sessions.db"
    monkeypatch.setattr(fts, "trigram_supported", lambda conn: False)
    with SessionStore(path) as store:
        store.mirror("s1", [{"role": "user", "content": "authentication failed"}])
    monkeypatch.undo()
    with SessionStore(path) as store:
        assert [h["seq"] for h in store.search_messages("thentic", prefer_trigram=True)] == [0]


def test_non_dict_entries_are_skipped_but_consume_their_seq(store):
    result = store.mirror("s1", [{"role": "user", "content": "a"}, "junk", None, {"role": "assistant", "content": "b"}])
    assert (result.messages, result.skipped) == (2, 2)
    assert [m["seq"] for m in store.load_messages("s1")] == [0, 3]


def test_explicit_seq_wins_over_list_index(store):
    store.mirror("s1", [{"role": "user", "content": "a", "seq": 10}, {"role": "assistant", "content": "b", "seq": 11}])
    assert [m["seq"] for m in store.load_messages("s1")] == [10, 11]


def test_mirror_masks_secrets_before_writing(store):
    store.mirror("s1", [{"role": "tool", "name": "bash", "tool_call_id": "c1", "content": f"token {SECRET}"}])
    raw = store.path.read_bytes() + store.path.with_name(store.path.name + "-wal").read_bytes()
    assert SECRET.encode() not in raw
    assert SECRET not in store.load_messages("s1")[0]["content"]


def test_messages_round_trip_in_both_wire_shapes(store):
    messages = [
        {"role": "user", "content": "read it", "original_user_input": True, "timestamp": "2026-03-08T10:00:00Z"},
        {"role": "assistant", "content": None,
         "tool_calls": [{"id": "c1", "type": "function", "function": {"name": "read_file", "arguments": "{\"path\": \"a.py\"}"}}]},
        {"role": "tool", "tool_call_id": "c1", "name": "read_file", "content": "print(1)"},
        {"role": "assistant", "content": [{"type": "tool_use", "id": "t1", "name": "grep", "input": {"pattern": "x"}}],
         "finish_reason": "tool_use", "metadata": {"model": "m"}},
        {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "t1", "content": "no match"}]},
    ]
    store.mirror("s1", messages)
    loaded = store.load_messages("s1")
    assert loaded[0]["original_user_input"] is True
    assert loaded[0]["timestamp"] == "2026-03-08T10:00:00.000Z"
    assert loaded[1]["tool_calls"][0]["function"]["name"] == "read_file"
    assert loaded[2]["name"] == "read_file" and loaded[2]["tool_call_id"] == "c1"
    assert loaded[3]["content"] == messages[3]["content"]
    assert loaded[3]["metadata"] == {"model": "m"} and loaded[3]["finish_reason"] == "tool_use"
    assert [m["seq"] for m in store.load_messages("s1", limit=2)] == [3, 4]
    # tool names and arguments are searchable
    assert [h["seq"] for h in store.search_messages("read_file")] == [2, 1]
    assert {h["seq"] for h in store.search_messages("grep")} == {3}


def test_unchanged_rows_keep_their_timestamp(store, monkeypatch):
    monkeypatch.setenv("RAGIT_NOW", "2026-03-08T10:00:00.000Z")
    store.mirror("s1", _messages(2))
    monkeypatch.setenv("RAGIT_NOW", "2026-03-09T10:00:00.000Z")
    store.mirror("s1", _messages(3))
    stamps = [m["timestamp"] for m in store.load_messages("s1")]
    assert stamps == ["2026-03-08T10:00:00.000Z", "2026-03-08T10:00:00.000Z", "2026-03-09T10:00:00.000Z"]


def test_search_orders_newest_first_and_filters_sessions(store):
    store.mirror("old", [{"role": "user", "content": "deploy the cache", "timestamp": "2026-01-01T00:00:00Z"}])
    store.mirror("new", [{"role": "user", "content": "deploy again", "timestamp": "2026-02-01T00:00:00Z"},
                         {"role": "assistant", "content": "deploy done", "timestamp": "2026-02-01T00:05:00Z"}])
    store.mirror("older", [{"role": "user", "content": "deploy first", "timestamp": "2025-12-01T00:00:00Z"}])
    hits = store.search_messages("deploy")
    assert [(h["session_id"], h["seq"]) for h in hits] == [("new", 1), ("new", 0), ("old", 0), ("older", 0)]
    assert set(hits[0]) == {"session_id", "message_id", "seq", "role", "timestamp", "snippet", "score"}
    assert "[deploy]" in hits[0]["snippet"]
    assert [h["session_id"] for h in store.search_messages("deploy", session_id="old")] == ["old"]
    assert len(store.search_messages("deploy", limit=2)) == 2


def test_search_snippet_is_sixteen_tokens_with_ellipsis(store):
    words = " ".join(f"w{i}" for i in range(60))
    store.mirror("s1", [{"role": "user", "content": f"{words} needle {words}"}])
    snippet = store.search_messages("needle")[0]["snippet"]
    assert "[needle]" in snippet and snippet.startswith("…") and snippet.endswith("…")
    assert len(snippet.split()) == 16


def test_read_only_use_never_creates_the_database(tmp_path):
    path = tmp_path / "missing" / "sessions.db"
    store = SessionStore(path)
    assert store.search_messages("anything") == []
    assert store.load_messages("s1") == []
    assert store.list_context_artifacts("s1") == []
    assert store.search_context_artifacts("anything") == []
    assert not path.exists() and not path.parent.exists()


def test_mirror_requires_a_session_id(store):
    with pytest.raises(RagitError) as err:
        store.mirror("  ", _messages(1))
    assert err.value.code == "INPUT_INVALID"


def test_fts_errors_return_empty_lists(store):
    store.mirror("s1", _messages(2))
    assert store.search_messages("AND") == []
    assert store.search_messages("message NEAR(") == []
    assert store.search_messages("-") == []


def test_session_db_path_reads_the_config(tmp_path):
    assert session_db_path(tmp_path) == tmp_path / ".ragit" / "sessions" / "sessions.db"
