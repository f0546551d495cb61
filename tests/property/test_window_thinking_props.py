"""Issue 13: prunes never raise the token count, the ladder's compaction never grows the history,
and compaction keeps every thinking block byte for byte and in order."""

from __future__ import annotations

import copy
import json
from typing import Any

from hypothesis import given
from hypothesis import strategies as st
from test_window_pair_props import SETTINGS, TINY, batch_violations, histories

from ragit.window.compaction import compact
from ragit.window.maintenance import maintain
from ragit.window.messages import is_thinking_block
from ragit.window.pairs import repair_pairs
from ragit.window.prune import adaptive_prune, prune_oldest, trim_to_max_turns
from ragit.window.routes import ProviderCapabilities
from ragit.window.tokens import HeuristicCounter

COUNT = HeuristicCounter().count_messages


@st.composite
def thinking_histories(draw: st.DrawFn) -> list[dict[str, Any]]:
    """Pair-valid histories in which assistant messages may lead with signed thinking blocks."""
    messages = repair_pairs(draw(histories()))
    out = []
    for i, message in enumerate(messages):
        if message.get("role") == "assistant" and draw(st.booleans()):
            content = message.get("content")
            blocks = content if isinstance(content, list) else ([{"type": "text", "text": content}] if content else [])
            kind = draw(st.sampled_from(["thinking", "redacted_thinking", "reasoning"]))
            thought = {"type": kind, "thinking": f"step {i} " + "t" * draw(st.sampled_from([10, 400])),
                       "signature": f"Eq{i:04d}" + "A" * 40, "opaque": True}
            message = {**message, "content": [thought, *blocks]}
        out.append(message)
    return out


def _thinking(messages: list[dict[str, Any]]) -> list[str]:
    return [json.dumps(b, sort_keys=False) for m in messages if isinstance(m.get("content"), list)
            for b in m["content"] if is_thinking_block(b)]


@SETTINGS
@given(thinking_histories(), st.integers(0, 12))
def test_prunes_never_raise_the_token_count(messages, keep):
    original = copy.deepcopy(messages)
    before = COUNT(messages)
    for pruned in (adaptive_prune(messages, TINY), prune_oldest(messages, keep_recent=keep),
                   trim_to_max_turns(messages, max_turns=2)):
        assert COUNT(pruned) <= before
        assert batch_violations(pruned) == []
    assert messages == original


@SETTINGS
@given(thinking_histories(), st.integers(0, 12), st.booleans())
def test_compaction_keeps_thinking_verbatim_and_in_order(messages, keep, require):
    out, report = compact(messages, TINY, None, keep, require_reduction=require)
    if not report.did_compact:
        assert out is messages and report.detail
        return
    assert _thinking(out) == _thinking(messages)
    assert report.reason == "compacted" and report.reason != "opaque_history"
    if require:
        assert report.after_tokens < report.before_tokens


@SETTINGS
@given(thinking_histories(), st.booleans())
def test_the_ladder_never_raises_the_token_count(messages, allow_prune):
    """One maintenance pass with thinking-only opacity: compaction and pruning only ever shrink."""
    messages = copy.deepcopy(messages)
    report = maintain(messages, TINY, ProviderCapabilities(), keep_recent=4, allow_prune=allow_prune,
                      tools_tokens=1, observation_mask_keep_rounds=100)
    for step in report.steps:
        if step["step"] in ("compact", "prune") and "after_tokens" in step:
            assert step["after_tokens"] <= step["before_tokens"], step
    assert all(s.get("reason") != "opaque_history" for s in report.steps)
