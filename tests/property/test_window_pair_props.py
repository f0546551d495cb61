"""D.8.h: every trim, compaction and prune yields provider-valid call/result pairs."""

from __future__ import annotations

import copy
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from ragit.window.budget import resolve_budget
from ragit.window.compaction import compact
from ragit.window.maintenance import maintain
from ragit.window.pairs import repair_pairs
from ragit.window.prune import adaptive_prune, prune_oldest, trim_to_max_turns
from ragit.window.routes import ProviderCapabilities

TINY = resolve_budget(window=9_000)  # effective 8,000: small histories reach warning and critical
CLIENT = ProviderCapabilities()
SERVER = ProviderCapabilities(server_compaction=True)


def _calls(message: dict[str, Any]) -> list[str]:
    if message.get("role") != "assistant":
        return []
    content = message.get("content")
    blocks = content if isinstance(content, list) else []
    ids = [b["id"] for b in blocks if isinstance(b, dict) and b.get("type") == "tool_use"]
    return ids + [c["id"] for c in message.get("tool_calls") or []]


def _results(message: dict[str, Any]) -> list[str]:
    if message.get("role") == "tool":
        return [message.get("tool_call_id")]
    content = message.get("content")
    if message.get("role") == "user" and isinstance(content, list):
        return [b.get("tool_use_id") for b in content if isinstance(b, dict) and b.get("type") == "tool_result"]
    return []


def batch_violations(messages: list[dict[str, Any]]) -> list[str]:
    """Each call answered exactly once inside its batch (tool messages, then one user message); no stray result."""
    problems: list[str] = []
    i = 0
    while i < len(messages):
        calls = _calls(messages[i])
        stray = _results(messages[i])
        if stray:
            problems.append(f"result outside a batch at {i}: {stray}")
        i += 1
        if not calls:
            continue
        answered: list[str] = []
        while i < len(messages) and messages[i].get("role") == "tool":
            answered += _results(messages[i])
            i += 1
        if i < len(messages) and messages[i].get("role") == "user":
            answered += _results(messages[i])
            i += 1
        if sorted(answered) != sorted(calls):
            problems.append(f"batch of {calls} answered by {answered}")
    return problems


@st.composite
def histories(draw: st.DrawFn) -> list[dict[str, Any]]:
    """Messy histories in both shapes: parallel calls, missing, orphan, late and duplicate results."""
    messages: list[dict[str, Any]] = []
    counter = 0
    for _ in range(draw(st.integers(0, 24))):
        kind = draw(st.sampled_from(["user", "assistant", "calls", "calls", "orphan"]))
        size = draw(st.sampled_from([5, 200, 3_000]))
        if kind in ("user", "assistant"):
            messages.append({"role": kind, "content": kind[0] * size, "seq": len(messages)})
            continue
        shape = draw(st.sampled_from(["block", "openai"]))
        if kind == "orphan":
            counter += 1
            rid = f"x{counter}"
            block = {"type": "tool_result", "tool_use_id": rid, "content": "o"}
            messages.append({"role": "tool", "tool_call_id": rid, "name": "t", "content": "o"} if shape == "openai"
                            else {"role": "user", "content": [block]})
            continue
        ids = []
        for _ in range(draw(st.integers(1, 3))):
            counter += 1
            ids.append(f"c{counter}")
        name = draw(st.sampled_from(["run_bash", "read_file", "use_skill"]))
        if shape == "block":
            messages.append({"role": "assistant", "content": [
                {"type": "tool_use", "id": cid, "name": name, "input": {"path": f"{cid}.py"}} for cid in ids]})
        else:
            messages.append({"role": "assistant", "content": "", "tool_calls": [
                {"id": cid, "function": {"name": name, "arguments": '{"command": "ls"}'}} for cid in ids]})
        answered = [cid for cid in ids if draw(st.booleans())]
        if draw(st.booleans()) and answered:
            answered.append(answered[0])  # duplicate result
        if shape == "block" and answered:
            messages.append({"role": "user", "content": [
                {"type": "tool_result", "tool_use_id": cid, "content": "r" * size} for cid in answered]})
        else:
            messages += [{"role": "tool", "tool_call_id": cid, "name": name, "content": "r" * size} for cid in answered]
    return messages


SETTINGS = settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])


@SETTINGS
@given(histories())
def test_D_8_h_repair_and_prunes_are_pair_valid(messages):
    original = copy.deepcopy(messages)
    assert batch_violations(repair_pairs(messages)) == []
    if len(messages) > 3:  # shorter lists are returned unchanged (D.12.a)
        assert batch_violations(adaptive_prune(messages, TINY)) == []
    if len(messages) > 5:
        assert batch_violations(prune_oldest(messages, keep_recent=4)) == []
    trimmed = trim_to_max_turns(messages, max_turns=3)
    if trimmed is not messages:
        assert batch_violations(trimmed) == []
    assert messages == original  # none of them mutates its input


@SETTINGS
@given(histories(), st.integers(0, 12), st.booleans())
def test_D_8_h_compaction_output_is_pair_valid(messages, keep_recent, hard):
    out, report = compact(messages, TINY, None, keep_recent, hard=hard)
    if report.did_compact:
        assert batch_violations(out) == []


@SETTINGS
@given(histories(), st.sampled_from([CLIENT, SERVER]))
def test_D_8_h_maintenance_ladder_keeps_pairs_valid(messages, capabilities):
    history = repair_pairs(messages)
    maintain(history, TINY, capabilities, tools_tokens=1, keep_recent=4)
    assert batch_violations(history) == []
