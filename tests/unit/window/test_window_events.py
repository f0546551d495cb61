"""§3.1 events: sync and async listeners, order, failures, decisions."""

from __future__ import annotations

import asyncio

import pytest

import ragit.window as window
from ragit.errors import RagitError
from ragit.window.events import EVENTS, PRE_COMPACT, TURN_COMPLETED, EventBus


def test_event_names():
    assert EVENTS == ("context_critical", "context_overflow_action", "pre_compact", "post_compact",
                      "tool_result_offloaded", "turn_completed", "session_ended")


def test_priority_order_copies_and_answers():
    bus = EventBus()
    order: list[str] = []

    def late(payload):
        order.append("late")
        payload["mutated"] = True
        return "late-answer"

    def early(payload):
        order.append("early")
        assert "mutated" not in payload  # each listener gets its own copy

    bus.on(TURN_COMPLETED, late, priority=80)
    bus.on(TURN_COMPLETED, early, priority=10)
    payload = {"session_id": "s"}
    assert bus.emit(TURN_COMPLETED, payload) == ["late-answer"]
    assert order == ["early", "late"] and payload == {"session_id": "s"}
    bus.off(TURN_COMPLETED, late)
    assert bus.emit(TURN_COMPLETED, payload) == []


def test_failing_listener_is_skipped(caplog):
    bus = EventBus()

    def broken(payload):
        raise ValueError("observer bug")

    bus.on(PRE_COMPACT, broken)
    bus.on(PRE_COMPACT, lambda p: "continue")
    assert bus.emit(PRE_COMPACT, {}) == ["continue"]
    assert "observer bug" in caplog.text


def test_async_listeners_sync_and_async_emit():
    bus = EventBus()

    async def decide(payload):
        await asyncio.sleep(0)
        return {"decision": "defer"}

    bus.on(PRE_COMPACT, decide)
    assert bus.emit(PRE_COMPACT, {}) == [{"decision": "defer"}]
    assert asyncio.run(bus.aemit(PRE_COMPACT, {})) == [{"decision": "defer"}]


def test_sync_emit_inside_a_running_loop_schedules_async_listeners():
    bus = EventBus()
    seen: list[str] = []

    async def observe(payload):
        seen.append(payload["session_id"])

    bus.on(TURN_COMPLETED, observe)

    async def host():
        assert bus.emit(TURN_COMPLETED, {"session_id": "s1"}) == []
        await asyncio.sleep(0)

    asyncio.run(host())
    assert seen == ["s1"]


def test_unknown_event_rejected():
    with pytest.raises(RagitError) as info:
        EventBus().on("context_criticl", lambda p: None)
    assert info.value.code == "INPUT_INVALID"


def test_package_reexports_lazily():
    assert window.resolve_budget(window=10_000).effective == 8_000
    assert set(window.__all__) <= set(dir(window))
    with pytest.raises(AttributeError):
        window.no_such_name  # noqa: B018
