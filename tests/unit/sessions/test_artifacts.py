"""Context artifacts: idempotent upsert, listing, FTS (memory §8.3)."""

from __future__ import annotations

import hashlib

import pytest

from ragit.sessions.artifacts import artifact_id_for
from ragit.sessions.store import SessionStore

SECRET = "sk-abcdefghijklmnopqrstuvwxyz0123"


@pytest.fixture
def store(tmp_path):
    with SessionStore(tmp_path / "sessions.db") as s:
        yield s


def _upsert(store, content="summary text", kind="compaction_summary", session_id="s1", start=0, end=9, **extra):
    return store.upsert_context_artifact(
        session_id=session_id, kind=kind, source_start_seq=start, source_end_seq=end, content=content,
        metadata=extra.pop("metadata", {"trigger": "compact"}), **extra,
    )


def test_D_13_a_upsert_idempotent(store):
    first = _upsert(store)
    second = _upsert(store)
    assert first == second
    assert len(store.list_context_artifacts("s1")) == 1
    changed = _upsert(store, content="a different summary")
    assert changed != first
    assert len(store.list_context_artifacts("s1")) == 2


def test_D_13_a_default_id_and_hash(store):
    content_hash = hashlib.sha256(b"summary text").hexdigest()
    expected = hashlib.sha256(f"s1|compaction_summary|0|9|{content_hash}".encode()).hexdigest()[:32]
    assert _upsert(store) == expected
    assert artifact_id_for("s1", "dream", None, None, "h") == hashlib.sha256(b"s1|dream|||h").hexdigest()[:32]
    row = store.list_context_artifacts("s1")[0]
    assert row["content_hash"] == content_hash


def test_D_13_a_update_keeps_created_at(store, monkeypatch):
    monkeypatch.setenv("RAGIT_NOW", "2026-03-08T10:00:00.000Z")
    artifact_id = _upsert(store, token_count=5, metadata={"b": 1, "a": 2})
    monkeypatch.setenv("RAGIT_NOW", "2026-03-08T11:00:00.000Z")
    assert _upsert(store, token_count=7, model="m1", provider="p1", metadata={"b": 2}) == artifact_id
    row = store.list_context_artifacts("s1")[0]
    assert row["created_at"] == "2026-03-08T10:00:00.000Z"
    assert row["updated_at"] == "2026-03-08T11:00:00.000Z"
    assert (row["token_count"], row["model"], row["provider"], row["metadata"]) == (7, "m1", "p1", {"b": 2})


def test_metadata_is_stored_with_sorted_keys(store):
    import sqlite3

    _upsert(store, metadata={"z": 1, "a": {"y": 2, "b": 3}})
    conn = sqlite3.connect(store.path)
    assert conn.execute("SELECT metadata FROM context_artifacts").fetchone()[0] == '{"a": {"b": 3, "y": 2}, "z": 1}'
    conn.close()


def test_D_13_b_search_finds_phrase_with_highlighted_snippet(store):
    _upsert(store, content="Routing note: the GLM downshift happened after the 429 storm.")
    _upsert(store, content="Unrelated dream about caches", kind="dream")
    _upsert(store, content="GLM downshift in another session", session_id="s2")
    hits = store.search_context_artifacts("GLM downshift", session_id="s1")
    assert len(hits) == 1
    assert hits[0]["kind"] == "compaction_summary"
    assert "[" in hits[0]["snippet"] and "]" in hits[0]["snippet"]
    assert set(hits[0]) == {"artifact_id", "session_id", "kind", "source_start_seq", "source_end_seq",
                            "snippet", "score", "updated_at"}


def test_D_13_c_list_newest_by_updated_at(store, monkeypatch):
    for hour, content in ((9, "first dream"), (11, "newest dream"), (10, "middle dream")):
        monkeypatch.setenv("RAGIT_NOW", f"2026-03-08T{hour:02d}:00:00.000Z")
        _upsert(store, content=content, kind="dream")
    monkeypatch.setenv("RAGIT_NOW", "2026-03-08T12:00:00.000Z")
    _upsert(store, content="a later compaction summary")
    rows = store.list_context_artifacts("s1", kinds=("dream",), limit=1)
    assert [r["content"] for r in rows] == ["newest dream"]
    assert len(store.list_context_artifacts("s1", limit=0)) == 1  # limit is at least 1
    assert [r["kind"] for r in store.list_context_artifacts("s1")] == ["compaction_summary", "dream", "dream", "dream"]
    assert store.list_context_artifacts("s1", kinds=()) == []


def test_D_13_d_malformed_query_returns_empty(store):
    _upsert(store)
    for query in ("AND", "summary OR", "NOT", "-", "", '"', "NEAR(summary"):
        assert store.search_context_artifacts(query) == []


def test_search_filters_kinds_and_ranks_by_bm25(store):
    _upsert(store, content="cache cache cache invalidation", kind="dream")
    _upsert(store, content="cache warmup plan with many other words to dilute the match", kind="dream", start=10, end=20)
    _upsert(store, content="cache in a handoff", kind="handoff")
    hits = store.search_context_artifacts("cache", kinds=["dream"])
    assert [h["kind"] for h in hits] == ["dream", "dream"]
    assert hits[0]["score"] <= hits[1]["score"]
    assert "cache cache cache" in hits[0]["snippet"].replace("[", "").replace("]", "")


def test_artifact_content_is_masked(store):
    _upsert(store, content=f"the key was {SECRET}", metadata={"note": f"key {SECRET}"})
    row = store.list_context_artifacts("s1")[0]
    assert SECRET not in row["content"] and SECRET not in row["metadata"]["note"]
