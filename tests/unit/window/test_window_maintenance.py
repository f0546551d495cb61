"""D.10 the overflow ladder, strategy owner, hooks and the request path."""

from __future__ import annotations

import copy

import pytest
from window_builders import FakeSink, Recorder, pair, pair_violations, plain, result_content, user

from ragit.window.budget import resolve_budget
from ragit.window.events import (
    CONTEXT_CRITICAL,
    CONTEXT_OVERFLOW_ACTION,
    EVENTS,
    POST_COMPACT,
    PRE_COMPACT,
    EventBus,
)
from ragit.window.health import check_context, fits
from ragit.window.maintenance import EXHAUSTED_NOTICE, maintain, prepare_request
from ragit.window.routes import ProviderCapabilities

SMALL = resolve_budget(window=10_000)  # effective 8,000 · warning 4,000 · critical 7,200
SERVER = ProviderCapabilities(server_compaction=True)


def warning_history() -> list[dict]:
    """Estimate between warning and critical of SMALL (tools_tokens=1), with 6 tool rounds."""
    messages = [user("start the work")]
    for i in range(6):
        messages += pair(f"c{i}", "o" * 2_000, args={"command": f"step {i}"})
    messages += plain(4, size=300, start=20)
    m = check_context(messages, SMALL, tools_tokens=1)
    assert m.is_warning and not m.is_critical
    return messages


def steps(report) -> list[str]:
    return [s["step"] for s in report.steps]


def record_events(bus: EventBus) -> list[tuple[str, dict]]:
    seen: list[tuple[str, dict]] = []
    for name in EVENTS:
        bus.on(name, lambda payload, name=name: seen.append((name, payload)))
    return seen


def test_D_10_a_below_warning_is_untouched():
    messages = plain(6)
    before = copy.deepcopy(messages)
    report = maintain(messages, SMALL, tools_tokens=1)
    assert messages == before
    assert (report.status, report.action, report.trigger, report.steps) == ("ok", "none", None, [])


def test_D_10_b_warning_masks_then_compacts():
    messages = warning_history()
    report = maintain(messages, SMALL, tools_tokens=1)
    assert steps(report) == ["mask", "compact"]
    assert report.steps[0]["masked"] == 5  # rounds older than the 3 newest assistant messages
    assert (report.trigger, report.hard, report.action) == ("warning", False, "compact")
    assert report.steps[1]["trigger"] == "warning" and report.steps[1]["keep_recent"] == 5
    assert messages[0]["content"].startswith("[Conversation Summary]")
    assert report.after_tokens < report.before_tokens and pair_violations(messages) == []


def test_D_10_c_server_compaction_only_soft_steps():
    messages = warning_history()
    n = len(messages)
    report = maintain(messages, SMALL, SERVER, tools_tokens=1)
    assert steps(report) == ["mask", "summarize_tool_results"]
    assert report.action == "soft_maintenance" and len(messages) == n


def test_D_10_d_critical_ladder_ends_exhausted_without_extra_calls():
    bus = EventBus()
    seen = record_events(bus)
    summarizer = Recorder("SUM", "SUM2")
    # the head must outweigh the summary preamble: the ladder never keeps a compaction that grows
    messages = plain(10, size=400) + [user("x" * 40_000)]
    report = maintain(messages, SMALL, None, bus, summarizer, tools_tokens=1)
    assert [e for e, _ in seen if e == CONTEXT_CRITICAL] == [CONTEXT_CRITICAL]
    critical_payload = next(p for e, p in seen if e == CONTEXT_CRITICAL)
    assert set(critical_payload) == {"metrics", "model"} and critical_payload["metrics"]["is_critical"]
    assert steps(report) == ["mask", "summarize_tool_results", "compact", "prune"]
    assert report.steps[2]["did_compact"] and report.steps[3]["kind"] == "adaptive"
    assert (report.status, report.trigger, report.hard) == ("context_exhausted", "critical", True)
    assert report.notice == EXHAUSTED_NOTICE and "every" not in report.notice
    assert len(summarizer.calls) == 1  # the compaction's; none for the notice
    assert pair_violations(messages) == []


def test_D_10_d_critical_resolved_by_adaptive_prune():
    messages = plain(12, size=10) + [user("y" * 6_000), {"role": "assistant", "content": "z" * 6_000}] * 3
    report = maintain(messages, SMALL, tools_tokens=1)
    assert report.status == "ok" and report.action == "prune"
    assert steps(report)[-1] == "prune" and not check_context(messages, SMALL, tools_tokens=1).is_critical


def test_D_10_d_server_compaction_prunes_at_critical():
    messages = plain(30, size=1_200)
    report = maintain(messages, SMALL, SERVER, tools_tokens=1)
    prune = report.steps[2]
    assert {k: prune[k] for k in ("step", "kind", "removed")} == {"step": "prune", "kind": "prune_oldest", "removed": 24}
    assert prune["after_tokens"] < prune["before_tokens"]
    assert "compact" not in steps(report)


def test_D_10_e_defer_only_on_soft_triggers():
    bus = EventBus()
    bus.on(PRE_COMPACT, lambda payload: "defer")
    messages = warning_history()
    report = maintain(messages, SMALL, None, bus, tools_tokens=1)
    assert report.steps[-1]["reason"] == "deferred" and report.action == "soft_maintenance"
    assert not messages[0]["content"].startswith("[Conversation Summary]")
    critical = plain(10, size=400) + [user("x" * 40_000)]
    report = maintain(critical, SMALL, None, bus, tools_tokens=1)
    assert report.steps[2]["did_compact"] is True


def test_D_10_f_only_keep_recent_is_read_back():
    bus = EventBus()
    sink = FakeSink()
    bus.on(PRE_COMPACT, lambda p: {"decision": "rewrite", "keep_recent": 5000})
    report = maintain(warning_history(), SMALL, None, bus, tools_tokens=1)
    assert report.steps[-1]["keep_recent"] == 1000 and report.steps[-1]["reason"] == "too_short"
    bus = EventBus()
    seen = record_events(bus)
    bus.on(PRE_COMPACT, lambda p: {"decision": "rewrite", "keep_recent": 3, "model": "evil", "provider": "evil",
                                   "trigger": "manual", "hard": True})
    bus.on(PRE_COMPACT, lambda p: {"keep_recent": True})  # a bool is not a rewrite
    report = maintain(warning_history(), SMALL, None, bus, tools_tokens=1, session_id="s1", artifact_store=sink)
    assert report.steps[-1]["keep_recent"] == 3 and report.steps[-1]["trigger"] == "warning"
    assert report.hard is False and sink.rows[0]["metadata"]["trigger"] == "warning"
    post = next(p for e, p in seen if e == POST_COMPACT)
    assert post["model"] == "unknown" and post["trigger"] == "warning" and post["keep_recent"] == 3


@pytest.mark.parametrize("with_store", [True, False])
def test_D_10_g_post_compact_after_replacement_and_checkpoint(with_store):
    bus = EventBus()
    order: list[str] = []
    messages = warning_history()
    original = len(messages)

    def on_post(payload):
        order.append("post")
        assert len(messages) == payload["new_message_count"] and messages[0]["content"].startswith("[Conversation")
        payload_seen.append(payload)

    payload_seen: list[dict] = []
    bus.on(POST_COMPACT, on_post)
    sink = FakeSink() if with_store else None
    maintain(messages, SMALL, None, bus, tools_tokens=1, session_id="s1" if with_store else None,
             artifact_store=sink, checkpoint=lambda ms: order.append("checkpoint"))
    assert order == ["checkpoint", "post"]
    (payload,) = payload_seen
    assert payload["persisted"] is with_store and payload["original_message_count"] == original
    assert set(payload) == {"model", "provider", "original_message_count", "new_message_count", "keep_recent",
                            "trigger", "persisted"}


def test_D_10_h_failed_soft_summary_keeps_masked_history():
    messages = warning_history()
    masked_only = warning_history()
    from ragit.window.masking import mask_stale_observations

    mask_stale_observations(masked_only, 3)
    report = maintain(messages, SMALL, None, None, Recorder(None, None, None), tools_tokens=1)
    assert report.steps[-1]["reason"] == "summary_failed"
    assert messages == masked_only and "prune" not in steps(report)
    assert result_content(messages[2]).startswith("[masked:")


def test_D_10_i_message_count_alone_never_prunes_but_max_turns_caps():
    messages = plain(31)
    before = copy.deepcopy(messages)
    assert maintain(messages, resolve_budget(window=1_000_000)).action == "none" and messages == before
    long = [user("u0")]
    for i in range(150):
        long += pair(f"c{i}", "ok") + [{"role": "assistant", "content": f"a{i}"}, user(f"u{i + 1}")]
    assert len(long) > 400
    report = maintain(long, resolve_budget(window=1_000_000))
    assert len(long) <= 400 and long[0]["role"] == "user"
    assert pair_violations(long) == [] and report.steps[0]["step"] == "max_turns" and report.action == "none"


def test_D_10_j_ceiling_is_soft_only():
    messages = [user("x" * 1_000_000)]
    report = maintain(messages, resolve_budget(window=1_000_000))
    assert report.before_tokens == 312_000
    assert (report.trigger, report.action, report.hard) == ("ceiling", "soft_maintenance", False)
    assert len(messages) == 1 and messages[0]["content"] == "x" * 1_000_000
    assert "prune" not in steps(report) and report.steps[-1]["trigger"] == "ceiling"


def test_D_10_k_fits_has_no_events_or_side_effects():
    bus = EventBus()
    seen = record_events(bus)
    messages = warning_history()
    before = copy.deepcopy(messages)
    assert fits(messages, SMALL, tools_tokens=1) is True
    assert fits(messages, SMALL, tools_tokens=1) is True
    assert seen == [] and messages == before


def test_overflow_action_listener_chooses_the_strategy():
    bus = EventBus()
    bus.on(CONTEXT_OVERFLOW_ACTION, lambda p: {"strategy": "bogus"})
    bus.on(CONTEXT_OVERFLOW_ACTION, lambda p: "none" if p["strategy"] == "compact" else None)
    report = maintain(warning_history(), SMALL, None, bus, tools_tokens=1)
    assert steps(report) == ["mask", "summarize_tool_results"]


def test_request_path_maintains_once_or_not_at_all():
    messages = warning_history()
    replaced = prepare_request(messages, SMALL, conversation_replaced=True, tools_tokens=1)
    assert replaced.report is None and replaced.fits is True
    prepared = prepare_request(messages, SMALL, tools_tokens=1)
    assert prepared.report.action == "compact" and prepared.fits is True
