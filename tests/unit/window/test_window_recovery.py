"""D.11 reactive recovery and D.12 pruning."""

from __future__ import annotations

import copy

from window_builders import pair, pair_violations, plain, result_content, user

from ragit.window.budget import resolve_budget
from ragit.window.health import check_context
from ragit.window.maintenance import EXHAUSTED_NOTICE
from ragit.window.prune import adaptive_prune, prune_oldest
from ragit.window.recovery import recover
from ragit.window.routes import ProviderCapabilities
from ragit.window.tokens import HeuristicCounter

K200 = resolve_budget(window=200_000)
SMALL = resolve_budget(window=10_000)


class Overflow(Exception):
    pass


def overflow_history() -> list[dict]:
    messages = [user("go")] + plain(10, start=1)
    for i in range(8):
        messages += pair(f"c{i}", str(i) * 20_000, args={"command": f"step {i}"})
    return messages


def test_D_11_a_runs_despite_a_low_local_estimate():
    messages = overflow_history()
    assert not check_context(messages, K200).is_critical
    n_before = len(messages)
    report = recover(messages, K200, Overflow("prompt is too long"), attempts_left=2)
    assert report.status == "recovered" and report.progress is True
    assert messages[0]["content"].startswith("[Conversation Summary]")  # compaction at the aggressive keep
    assert len(messages) == 4 + 4  # preamble + keep 3, widened to the pair c6 it would split
    assert result_content(messages[-1]) == (
        "[run_bash] ran `step 7` -> exit ?, 1 lines output [summarized from ~5,000 tokens]"
    )  # tool summarisation ran first
    assert report.freed_messages == n_before - len(messages)
    assert pair_violations(messages) == []


def test_D_11_a_aggressive_keep_recent_by_tier():
    for window, keep in ((200_000, 3), (400_000, 4), (1_000_000, 5)):
        messages = plain(30)
        server = ProviderCapabilities(server_compaction=True)
        recover(messages, resolve_budget(window=window), Overflow(), 1, capabilities=server)
        assert len(messages) == 1 + keep  # prune_oldest: first + aggressive keep_recent


def test_D_11_b_progress_by_content_not_count():
    messages = [user("go")] + pair("c1", "o" * 200_000) + plain(2, start=5)
    n = len(messages)
    report = recover(messages, K200, Overflow(), 1, capabilities=ProviderCapabilities(contract_known=False))
    assert len(messages) == n  # opaque contract: no compaction, no prune; only tool summarisation
    assert report.progress is True and report.freed_messages == 0 and report.freed_tokens > 40_000


def test_D_11_c_exhausted_without_attempts_or_reducible_content():
    messages = plain(30)
    before = copy.deepcopy(messages)
    report = recover(messages, K200, Overflow(), attempts_left=0)
    assert report.status == "context_exhausted" and report.notice == EXHAUSTED_NOTICE and messages == before
    tiny = [user("x" * 10)]
    report = recover(tiny, K200, Overflow(), attempts_left=3)
    assert report.status == "context_exhausted" and report.progress is False


def test_D_11_host_classifier():
    messages = overflow_history()
    before = copy.deepcopy(messages)
    report = recover(messages, K200, Overflow("rate limit"), 2, is_overflow=lambda e: "too long" in str(e))
    assert report.status == "not_overflow" and messages == before


def test_D_11_locally_critical_resolved_by_tool_summaries():
    messages = [user("go")] + pair("c1", "o" * 40_000) + plain(2, start=5)
    assert check_context(messages, SMALL, tools_tokens=1).is_critical
    report = recover(messages, SMALL, Overflow(), 1, tools_tokens=1)
    assert report.status == "recovered" and len(messages) == 5
    assert result_content(messages[2]).startswith("[run_bash] ran `ls`")


def test_D_12_a_short_and_over_budget():
    three = plain(3)
    assert adaptive_prune(three, SMALL) == three
    big = [user("a" * 10_000), *plain(6), {"role": "assistant", "content": "b" * 10_000}, user("c" * 10_000)]
    out = adaptive_prune(big, SMALL)
    assert out == [big[0], big[-2], big[-1]]


def test_D_12_b_newest_first_while_they_fit():
    counter = HeuristicCounter()
    middle = [user("m1 " + "x" * 4_000), {"role": "assistant", "content": "m2 " + "x" * 10_000},
              user("m3 " + "x" * 2_000), {"role": "assistant", "content": "m4 " + "x" * 8_000}]
    messages = [user("first"), *middle, {"role": "assistant", "content": "last1"}, user("last2")]
    out = adaptive_prune(messages, SMALL, counter=counter)  # budget 4,000 tokens
    # m4 (2,000 t) fits, m3 (500 t) fits, m2 (2,500 t) is skipped, m1 (1,000 t) fits
    assert [m["content"][:2] for m in out] == ["fi", "m1", "m3", "m4", "la", "la"]


def test_D_12_c_prune_oldest_keeps_first_and_last_ten_repaired():
    messages = plain(8) + pair("p", "r") + plain(14, start=10)
    out = prune_oldest(messages, keep_recent=10)
    assert out[0] == messages[0] and out[1:] == messages[-10:]
    cut = plain(4) + pair("q", "r") + plain(9, start=6)
    out = prune_oldest(cut, keep_recent=10)  # the tail starts with q's orphan result
    assert pair_violations(out) == [] and len(out) == 11
    assert prune_oldest(plain(5), 10) == plain(5)
