"""D.5 tool-result admission: one representation → offload → hard guard; the offload store."""

from __future__ import annotations

import asyncio
import json

import pytest

from ragit.errors import RagitError
from ragit.window.admission import admit_tool_result, extract_summary
from ragit.window.budget import resolve_budget
from ragit.window.events import SESSION_ENDED, TOOL_RESULT_OFFLOADED, EventBus
from ragit.window.offload import OffloadStore, lookup, open_offload_store, recall

SECRET = "ghp_" + "a" * 36
M1 = resolve_budget(window=1_000_000)


@pytest.fixture
def store(tmp_path):
    return OffloadStore(tmp_path / "offload", "s1", threshold=15_000)


def test_D_5_a_offload_over_threshold(store, tmp_path):
    value = {"data": "x" * 60_000}
    assert len(json.dumps(value)) == 60_012
    facing = admit_tool_result(value, call_id="call_1", tool_name="read_file", store=store, policy=M1)
    inline = facing.content
    assert facing.offloaded and inline["_offloaded"] is True
    assert inline["_ref_id"] == "call_1" and facing.ref_id == "call_1"
    assert inline["_original_tokens"] == 15_003
    assert len(inline["summary"]) <= 400
    assert inline["hint"].endswith('Call tool_result_recall with ref_id "call_1" and session "s1" '
                                   'if you need more than this summary.')
    path = tmp_path / "offload" / "s1" / "call_1.json"
    record = json.loads(path.read_text())
    assert record["ref_id"] == "call_1" and record["result"] == value and record["offloaded_at"].endswith("Z")


def test_D_5_b_exactly_threshold_stays_inline(store):
    value = {"data": "x" * 59_988}
    assert len(json.dumps(value)) == 60_000
    facing = admit_tool_result(value, call_id="c", tool_name="t", store=store, policy=M1)
    assert not facing.offloaded and facing.content == value
    assert not store.path_for("c").exists()


def test_D_5_c_summary_priority():
    assert extract_summary({"summary": "S", "data": "x" * 1000}) == "S"
    assert extract_summary({"text": "T"}) == "T"
    assert extract_summary({"a": 1, "b": 2}).startswith("keys=['a', 'b'] preview=")
    assert extract_summary({"message": 5, "output": "O"}) == "O"
    assert extract_summary(["x"] * 500) == str(["x"] * 500)[:400]
    assert len(extract_summary({"summary": "s" * 1000})) == 400


def test_D_5_d_recall_roundtrip_errors_and_ttl(store, tmp_path, monkeypatch):
    value = {"data": "x" * 60_000, "n": 1}
    admit_tool_result(value, call_id="r1", tool_name="t", store=store)
    assert store.recall("r1") == value
    assert recall("r1", store) == value
    assert "not found" in recall("nope", store)["error"]
    assert "not found" in recall("../../etc/passwd", store)["error"]
    assert recall("", store) == {"error": "ref_id is required"}
    assert recall("r1", None) == {"error": "offloading not enabled"}
    assert lookup("r1", None).reason == "disabled"
    expiring = OffloadStore(tmp_path / "offload", "s1", threshold=15_000, ttl_hours=0)
    outcome = expiring.lookup("r1")
    assert outcome.reason == "expired" and "expired" in outcome.as_tool_result()["error"]
    assert not store.path_for("r1").exists()


def test_D_5_d_unreadable_and_ttl_by_clock(store, monkeypatch):
    store.path_for("bad").write_text("{not json")
    assert "unreadable" in store.recall("bad")["error"]
    monkeypatch.setenv("RAGIT_NOW", "2026-03-08T10:00:00.000Z")
    store.write("t1", {"v": 1})
    monkeypatch.setenv("RAGIT_NOW", "2026-03-08T13:59:59.000Z")
    assert store.recall("t1") == {"v": 1}
    monkeypatch.setenv("RAGIT_NOW", "2026-03-08T14:00:00.000Z")
    assert store.lookup("t1").reason == "expired"


def test_D_5_e_cleanup_session_and_expired(store, tmp_path, monkeypatch):
    store.write("a", {"v": 1})
    store.write("b", {"v": 2})
    assert store.cleanup_session() == 2
    assert not (tmp_path / "offload" / "s1").exists()
    monkeypatch.setenv("RAGIT_NOW", "2026-03-08T10:00:00.000Z")
    store.write("old", {"v": 1})
    store.path_for("corrupt").write_text("[]")
    monkeypatch.setenv("RAGIT_NOW", "2026-03-08T15:00:00.000Z")
    store.write("new", {"v": 2})
    assert store.cleanup_expired() == 2
    assert store.has("new") and not store.has("old")
    store.path_for("new").unlink()
    assert store.cleanup_expired() == 0 and not store.directory.exists()


def test_D_5_e_session_ended_event_cleans_up(store):
    bus = EventBus()
    store.attach(bus)
    store.write("a", {"v": 1})
    bus.emit(SESSION_ENDED, {"session_id": "other"})
    assert store.has("a")
    bus.emit(SESSION_ENDED, {"session_id": "s1"})
    assert not store.directory.exists()


def test_D_5_f_sensitive_never_written_and_guarded(store):
    value = {"data": "x" * 100_000}
    facing = admit_tool_result(value, call_id="s", tool_name="t", sensitive=True, store=store, policy=M1)
    assert not store.path_for("s").exists() and not list(store.directory.iterdir())
    text = json.dumps(value)
    assert facing.truncated
    assert facing.content == {"_truncated": True, "_original_tokens": 25_003, "preview": text[:100_000]}
    with_summary = {"summary": "ran", "status": "done", "task_id": "t9", "data": "x" * 100_000, "other": 1}
    guarded = admit_tool_result(
        with_summary, call_id="s2", tool_name="t", sensitive=True, store=store, policy=M1
    ).content
    assert guarded == {"summary": "ran", "task_id": "t9", "status": "done", "_truncated": True,
                       "_original_tokens": guarded["_original_tokens"]}


def test_D_5_f_small_tier_guard_is_five_percent_of_window():
    small = resolve_budget(window=200_000)  # limit 10,000 tokens
    facing = admit_tool_result({"data": "x" * 40_100}, call_id="c", tool_name="t", policy=small)
    assert facing.truncated and len(facing.content["preview"]) == 40_000
    unlimited = admit_tool_result({"data": "x" * 200_000}, call_id="c", tool_name="t", policy=M1,
                                  max_tool_result_tokens=0)
    assert not unlimited.truncated


def test_D_5_g_one_representation_and_receipt():
    structured = {"rows": [1, 2, 3], "total": 3}
    envelope = {"content": [{"type": "text", "text": json.dumps(structured)}], "structuredContent": structured}
    raw = json.loads(json.dumps(envelope))
    log: list = []
    facing = admit_tool_result(envelope, call_id="m1", tool_name="mcp_tool", receipt_log=log)
    assert facing.content == structured
    assert json.dumps(facing.content).count('"rows"') == 1
    assert log == [{"call_id": "m1", "tool_name": "mcp_tool", "result": raw}]
    assert log[0]["result"] is envelope and envelope == raw
    differing = {"content": [{"type": "text", "text": "other"}], "structuredContent": structured}
    assert admit_tool_result(differing, call_id="m2", tool_name="t").content == differing


def test_D_5_g_image_results_skip_offload_and_guard(store):
    image = {"type": "image", "data": "A" * 200_000, "mimeType": "image/png"}
    facing = admit_tool_result(image, call_id="img", tool_name="screenshot", store=store)
    assert facing.content is image and not facing.offloaded and not facing.truncated
    envelope = {"content": [image]}
    assert admit_tool_result(envelope, call_id="img2", tool_name="s", store=store).content == [image]


def test_D_5_h_offload_event_reaches_sync_and_async_listeners(store):
    bus = EventBus()
    seen: list = []
    bus.on(TOOL_RESULT_OFFLOADED, lambda p: seen.append(("sync", p)))

    async def async_listener(payload):
        await asyncio.sleep(0)
        seen.append(("async", payload))

    bus.on(TOOL_RESULT_OFFLOADED, async_listener)
    admit_tool_result({"data": "x" * 60_000}, call_id="e1", tool_name="t", store=store, events=bus)
    expected = {"ref_id": "e1", "original_tokens": 15_003, "call_id": "e1"}
    assert seen == [("sync", expected), ("async", expected)]


def test_D_5_i_threshold_zero_disables_store(tmp_path):
    assert open_offload_store(tmp_path / "o", "s1", threshold=0) is None
    assert not (tmp_path / "o").exists()
    facing = admit_tool_result({"data": "x" * 60_000}, call_id="z", tool_name="t", store=None)
    assert not facing.offloaded and facing.truncated  # only guarded (small tier: 10,000)
    assert open_offload_store(tmp_path / "o", "s1").directory.is_dir()  # created eagerly


def test_D_5_offloaded_results_are_secret_masked(store):
    value = {"out": f"token {SECRET} " + "x" * 60_000}
    facing = admit_tool_result(value, call_id="sec", tool_name="t", store=store)
    on_disk = store.path_for("sec").read_text()
    assert SECRET not in on_disk and SECRET not in json.dumps(facing.content)
    assert SECRET in value["out"]  # the caller's value is untouched


def test_D_5_unsafe_ids_rejected(tmp_path, store):
    with pytest.raises(RagitError):
        OffloadStore(tmp_path, "../escape")
    with pytest.raises(RagitError):
        admit_tool_result({"data": "x" * 60_001}, call_id="../x", tool_name="t", store=store)
