"""D.4 health check and the read-only fit check."""

from __future__ import annotations

from window_builders import user

from ragit.window.budget import resolve_budget
from ragit.window.health import check_context, fits
from ragit.window.tokens import HeuristicCounter

M1 = resolve_budget(window=1_000_000)
K200 = resolve_budget(window=200_000)


def test_D_4_a_1m_window_critical():
    m = check_context([user("x" * 3_200_000)], M1)
    assert m.raw == 810_000 and m.estimate == 972_000
    assert m.is_warning and m.is_critical
    assert check_context([user("x" * 3_800_000)], M1).is_critical


def test_D_4_b_ceiling_without_warning():
    m = check_context([user("x" * 1_000_000)], M1)
    assert m.estimate == 312_000
    assert m.is_ceiling_exceeded and not m.is_warning and not m.is_critical


def test_D_4_c_200k_window_no_ceiling_flag_and_uncapped_pct():
    m = check_context([user("x" * 1_000_000)], K200)
    assert not m.is_ceiling_exceeded and m.is_critical
    assert m.usage_pct == 156.0
    assert m.remaining == 0 and m.remaining_prompt == 0
    assert m.usage_pct_effective == 312_000 / 180_000 * 100


def test_D_4_d_tools_overhead_and_system_prompt():
    msgs = [user("x" * 4000)]
    assert check_context(msgs, K200, tools_tokens=0).raw == 1000 + 10_000
    assert check_context(msgs, K200, tools_tokens=3000).raw == 1000 + 3000
    with_system = check_context(msgs, K200, system="s" * 400, tools_tokens=3000)
    assert with_system.raw == 1100 + 3000
    assert with_system.estimate > check_context(msgs, K200, tools_tokens=3000).estimate


def test_D_4_metrics_fields():
    m = check_context([user("x" * 400)], K200, tools_tokens=100)
    assert m.remaining == 200_000 - m.estimate and m.remaining_prompt == 180_000 - m.estimate
    assert list(m.to_dict())[:9] == [
        "estimate", "raw", "usage_pct", "usage_pct_effective", "remaining", "remaining_prompt",
        "is_warning", "is_critical", "is_ceiling_exceeded",
    ]
    assert m.to_dict()["policy"]["window"] == 200_000


def test_D_4_counter_and_active_window_start():
    native = {"role": "assistant", "content": [{"type": "compaction", "opaque": True}]}
    msgs = [user("old " * 1000), native, user("x" * 400)]
    full = check_context(msgs, K200, tools_tokens=1)
    active = check_context(msgs, K200, tools_tokens=1, active_window_start=lambda ms: 2)
    assert active.raw == 100 + 1 < full.raw
    counter = HeuristicCounter()
    counter.calibrate(100, 200)
    assert check_context([user("x" * 400)], K200, tools_tokens=1, counter=counter).raw == 200 + 1


def test_D_10_k_fits_is_read_only():
    msgs = [user("x" * 4000)]
    snapshot = [dict(m) for m in msgs]
    assert fits(msgs, K200) is True
    assert fits(msgs, K200) is True
    assert msgs == snapshot
    assert fits([user("x" * 1_000_000)], K200) is False
