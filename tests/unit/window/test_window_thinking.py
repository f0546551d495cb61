"""Issue 13 (window part): thinking blocks are not opaque history, refusals explain themselves,
the ladder never grows a history, and placeholders name the real recall tool and ref id."""

from __future__ import annotations

import copy
import json

import pytest
from window_builders import Recorder, pair, plain, user

from ragit.window.budget import resolve_budget
from ragit.window.compaction import SUMMARY_ACK, SUMMARY_HEADER, compact
from ragit.window.maintenance import maintain
from ragit.window.masking import mask_stale_observations
from ragit.window.messages import has_opaque, mask_messages, protected_indices
from ragit.window.offload import RECALL_TOOL_NAME, OffloadStore
from ragit.window.routes import ProviderCapabilities
from ragit.window.strategy import StrategyOwner
from ragit.window.summaries import one_liner

POLICY = resolve_budget(window=200_000)


def thought(n: int, kind: str = "thinking") -> dict:
    """A signed thinking block as the importers give it (``opaque: true``)."""
    if kind == "reasoning":
        return {"type": "reasoning", "summary": [{"type": "summary_text", "text": f"**Step {n}**"}],
                "content": None, "encrypted_content": f"gAAAAAB{n:03d}" + "Zx9" * 30, "opaque": True}
    return {"type": kind, "thinking": f"I should check step {n} first.", "signature": f"EqQB{n:03d}" + "k" * 60,
            "opaque": True}


def claude_like(rounds: int = 10, kind: str = "thinking") -> list[dict]:
    """User task, then rounds of assistant(thinking + text + tool_use) / user(tool_result)."""
    messages: list[dict] = [user("Fix the flaky export test. " + "context " * 40)]
    for i in range(rounds):
        call, result = pair(f"toolu_{i:02d}", "line of output\n" * 60, name="Read",
                            args={"file_path": f"src/mod{i}.py"})
        call["content"] = [thought(i, kind), {"type": "text", "text": f"Reading module {i}."}, *call["content"]]
        messages += [call, result]
    messages.append({"role": "assistant", "content": [thought(99, kind), {"type": "text", "text": "Done."}]})
    return messages


def thinking_of(messages: list[dict]) -> list[dict]:
    return [b for m in messages if isinstance(m.get("content"), list) for b in m["content"]
            if isinstance(b, dict) and b.get("type") in ("thinking", "redacted_thinking", "reasoning")]


@pytest.mark.parametrize("kind", ["thinking", "redacted_thinking", "reasoning"])
def test_thinking_is_not_opaque_history_and_is_carried_verbatim(kind):
    messages = claude_like(kind=kind)
    before = copy.deepcopy(messages)
    assert not any(has_opaque(m) for m in messages)  # before the fix every assistant message counted as opaque
    assert protected_indices(messages) == []
    out, report = compact(messages, POLICY, None, 5)
    assert report.did_compact and report.reason == "compacted", report
    assert messages == before  # the input is never mutated
    kept = thinking_of(out)
    assert [json.dumps(b) for b in kept] == [json.dumps(b) for b in thinking_of(before)]  # byte for byte, in order
    head_thinking = thinking_of(messages[: report.summarized_count])
    assert report.thinking_kept == len(head_thinking) > 0
    ack = out[1]
    assert ack["role"] == "assistant" and ack["content"][:-1] == head_thinking
    assert ack["content"][-1] == {"type": "text", "text": SUMMARY_ACK}
    assert all(a is b for a, b in zip(ack["content"], head_thinking))  # the very objects, no copies
    summary = out[0]["content"]
    assert summary.startswith(SUMMARY_HEADER) and "I should check step" not in summary  # never summarised
    assert report.after_tokens < report.before_tokens


def test_thinking_never_reaches_the_summariser():
    recorder = Recorder("SUM")
    out, report = compact(claude_like(), POLICY, recorder, 5)
    assert report.did_compact and recorder.calls
    prompt = recorder.calls[0][0]
    assert "I should check step" not in prompt and "EqQB" not in prompt and "[opaque block]" not in prompt


def test_other_opaque_blocks_still_refuse_and_say_why():
    native = {"role": "assistant", "content": [{"type": "compaction", "opaque": True, "content": "x"}]}
    messages = [*claude_like(), native, *plain(6)]
    out, report = compact(messages, POLICY, None, 5)
    assert out is messages and report.reason == "opaque_history"
    assert "compaction" in report.detail and "--prune" in report.detail and "thinking" in report.detail
    unknown = ProviderCapabilities(contract_known=False)
    _, report = compact(claude_like(), POLICY, None, 5, capabilities=unknown)
    assert report.reason == "opaque_history" and "contract_known=false" in report.detail


@pytest.mark.parametrize(("messages", "keep", "reason", "words"), [
    (plain(6), 5, "too_short", "nothing older"),
    ([{"role": "user", "content": ""}, {"role": "assistant", "content": ""}] * 5 + plain(8), 8, "empty_input",
     "no text"),
])
def test_every_refusal_has_a_detail(messages, keep, reason, words):
    out, report = compact(messages, POLICY, None, keep)
    assert out is messages and report.reason == reason and words in report.detail


def test_require_reduction_refuses_a_growing_compaction():
    """A short head weighs less than the 11-heading summary: the ladder must not swap it in."""
    messages = plain(20)
    grown, report = compact(messages, POLICY, None, 8)
    assert report.did_compact and report.after_tokens >= report.before_tokens  # D.9.i, as the library allows
    out, report = compact(messages, POLICY, None, 8, require_reduction=True)
    assert out is messages and report.reason == "no_reduction" and not report.did_compact
    assert f"not fewer than {report.before_tokens}" in report.detail


def test_the_ladder_never_keeps_a_growing_compaction_or_prune():
    """The reported bug: --prune on a thinking transcript made the token count go up."""
    tiny = resolve_budget(window=9_000)  # critical at 7,200 tokens
    messages = [user("go")] + [m for i in range(6) for m in (
        {"role": "assistant", "content": [thought(i), {"type": "text", "text": "ok"}]}, user("next"))]
    messages += [{"role": "assistant", "content": "reading the log"}, user("log " + "x" * 30_000)]
    report = maintain(messages, tiny, ProviderCapabilities(allow_opaque_rewrite=True), tools_tokens=1,
                      keep_recent=3)
    steps = {s["step"]: s for s in report.steps}
    assert steps["compact"]["reason"] == "no_reduction" and "not fewer than" in steps["compact"]["detail"]
    assert steps["prune"]["removed"] > 0 and steps["prune"]["after_tokens"] < steps["prune"]["before_tokens"]
    assert report.after_tokens < report.before_tokens
    for step in report.steps:
        assert step.get("after_tokens", 0) <= step.get("before_tokens", 0), step


def test_thinking_does_not_block_pruning_but_native_blocks_do():
    owner = StrategyOwner(POLICY, ProviderCapabilities())
    assert owner.prune_block_reason(claude_like()) is None
    native = [*claude_like(), {"role": "assistant", "content": [{"type": "compaction", "opaque": True}]}]
    assert "compaction" in owner.prune_block_reason(native)
    allowed = StrategyOwner(POLICY, ProviderCapabilities(allow_opaque_rewrite=True))
    assert allowed.prune_block_reason(native) is None


def test_prune_step_reports_tokens_and_blocked_prune_explains():
    critical = plain(10, size=400) + [user("x" * 40_000)]
    small = resolve_budget(window=10_000)
    report = maintain(copy.deepcopy(critical), small, allow_prune=False, tools_tokens=1)
    prune = next(s for s in report.steps if s["step"] == "prune")
    assert prune["blocked"] == "not_requested" and "--prune" in prune["detail"]
    report = maintain(copy.deepcopy(critical), small, tools_tokens=1)
    prune = next(s for s in report.steps if s["step"] == "prune")
    assert prune["after_tokens"] <= prune["before_tokens"]


def test_placeholder_names_the_real_tool_ref_id_and_session(tmp_path):
    assert RECALL_TOOL_NAME == "tool_result_recall"  # the MCP tool ragit serves, not "recall_tool_result"
    messages = claude_like(rounds=6)
    store = OffloadStore(tmp_path, "sess-1")
    assert mask_stale_observations(messages, keep_rounds=3, store=store) == 4
    contents = [m["content"][0]["content"] for m in messages if m["role"] == "user" and isinstance(m["content"], list)]
    for i, content in enumerate(contents[:4]):
        assert content.startswith("[masked: ") and content.endswith(
            f"use tool_result_recall with ref_id toolu_{i:02d} (session sess-1) if needed]")
        assert store.recall(f"toolu_{i:02d}") == "line of output\n" * 60
    # without a store nothing can be recalled, and the placeholder says so instead of promising it
    bare = claude_like(rounds=6)
    mask_stale_observations(bare, keep_rounds=3)
    assert bare[2]["content"][0]["content"].endswith(
        "ref_id toolu_00; the original was not stored, so tool_result_recall cannot return it]")


def test_compaction_summary_keeps_the_way_back_to_masked_results(tmp_path):
    messages = claude_like(rounds=8)
    mask_stale_observations(messages, keep_rounds=3, store=OffloadStore(tmp_path, "s9"))
    out, report = compact(messages, POLICY, None, 5)
    assert report.did_compact
    assert ("- [Read] read src/mod0.py from line 1, [masked: " in out[0]["content"]
            and "use tool_result_recall with ref_id toolu_00 (session s9) if needed]" in out[0]["content"])


def test_one_liner_of_a_masked_result_reports_the_placeholder_not_its_length():
    placeholder = "[masked: 1,234 tokens, use tool_result_recall with ref_id c1 (session s) if needed]"
    assert one_liner("Bash", {"command": "pytest -q"}, placeholder) == f"[Bash] ran `pytest -q` {placeholder}"
    grep = one_liner("Grep", {"pattern": "x", "path": "src"}, placeholder)
    assert grep == f"[Grep] searched `x` in src, {placeholder}"
    assert one_liner("Read", {"file_path": "a.py"}, "body") == "[Read] read a.py from line 1, 4 chars"


def test_mask_messages_masks_text_but_never_thinking_payloads():
    secret = "sk-" + "A1b2C3d4E5f6G7h8I9j0K1l2"
    block = {"type": "thinking", "thinking": f"the key {secret} leaked", "signature": f"Eq{secret}xyz", "opaque": True}
    codex = {"type": "reasoning", "summary": [{"type": "summary_text", "text": secret}],
             "encrypted_content": f"gAAAA{secret}", "opaque": True}
    messages = [{"role": "assistant", "content": [block, codex, {"type": "text", "text": secret}]},
                {"role": "user", "content": secret}]
    out = mask_messages(messages)
    assert out[0]["content"][0]["signature"] == block["signature"]  # base64 false positives never corrupt it
    assert out[0]["content"][1]["encrypted_content"] == codex["encrypted_content"]
    assert secret not in out[0]["content"][0]["thinking"] and secret not in json.dumps(out[0]["content"][2])
    assert secret not in out[0]["content"][1]["summary"][0]["text"] and secret not in out[1]["content"]
    assert messages[0]["content"][0]["thinking"].endswith("leaked") and secret in messages[1]["content"]  # no mutation
