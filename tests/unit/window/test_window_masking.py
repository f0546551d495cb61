"""D.6 observation masking, in both wire shapes."""

from __future__ import annotations

import copy
import json

import pytest
from window_builders import SHAPES, pair, result_content, user

from ragit.window.masking import mask_stale_observations
from ragit.window.offload import OffloadStore

RESULT_500 = json.dumps({"out": "y" * 489})


def history(shape: str, rounds: int = 6, content: str = RESULT_500, name: str = "run_bash") -> list[dict]:
    messages = [user("start")]
    for i in range(rounds):
        messages += pair(f"c{i}", content, name=name, shape=shape)
    return messages


def results(messages: list[dict]) -> list:
    return [result_content(m) for m in messages if m["role"] in ("tool", "user") and m is not messages[0]]


@pytest.mark.parametrize("shape", SHAPES)
def test_D_6_a_masks_rounds_before_the_keep_window(shape):
    assert len(RESULT_500) == 500
    messages = history(shape)
    n = len(messages)
    assert mask_stale_observations(messages, keep_rounds=3) == 3
    contents = results(messages)
    assert all(c.startswith("[masked:") for c in contents[:3])
    assert contents[3:] == [RESULT_500] * 3
    assert len(messages) == n
    holder_size = len(json.dumps(pair("c0", RESULT_500, shape=shape)[1]["content"][0] if shape == "block"
                                 else pair("c0", RESULT_500, shape=shape)[1], ensure_ascii=False))
    # no offload store kept the original: the placeholder names the ref id and says it is gone
    assert contents[0] == (f"[masked: {holder_size // 4:,} tokens, ref_id c0; the original was not stored, "
                           f"so tool_result_recall cannot return it]")


@pytest.mark.parametrize("shape", SHAPES)
def test_D_6_b_idempotent_small_and_few_rounds(shape):
    messages = history(shape)
    mask_stale_observations(messages, keep_rounds=3)
    assert mask_stale_observations(messages, keep_rounds=3) == 0
    assert mask_stale_observations(history(shape, content="x" * 10), keep_rounds=3) == 0
    assert mask_stale_observations(history(shape, rounds=3), keep_rounds=3) == 0


def test_D_6_c_role_tool_shape_counts_three():
    assert mask_stale_observations(history("openai"), keep_rounds=3) == 3


@pytest.mark.parametrize("name", ["use_skill", "recall_tool_result", "tool_result_recall", "memory_search", "ask_user"])
@pytest.mark.parametrize("shape", SHAPES)
def test_D_6_d_exempt_tools_never_masked(shape, name):
    messages = history(shape, name=name)
    before = copy.deepcopy(messages)
    assert mask_stale_observations(messages, keep_rounds=3) == 0
    assert messages == before


def test_D_6_custom_recall_name_is_exempt_and_in_placeholder():
    messages = history("block", name="tool_result_lookup")
    assert mask_stale_observations(messages, keep_rounds=3, recall_tool_name="tool_result_lookup") == 0
    messages = history("block")
    mask_stale_observations(messages, keep_rounds=3, recall_tool_name="tool_result_lookup")
    assert results(messages)[0].endswith("so tool_result_lookup cannot return it]")


def test_D_6_list_contents_always_masked():
    messages = history("block", content=[{"type": "text", "text": "tiny"}])
    assert mask_stale_observations(messages, keep_rounds=3) == 3


@pytest.mark.parametrize("shape", SHAPES)
def test_D_6_originals_go_to_the_store_first(shape, tmp_path):
    store = OffloadStore(tmp_path, "s1")
    messages = history(shape)
    sensitive = messages[4] if shape == "openai" else messages[4]["content"][0]
    sensitive["sensitive"] = True  # round 1's result
    mask_stale_observations(messages, keep_rounds=3, store=store)
    assert store.recall("c0") == RESULT_500
    assert not store.has("c1")
    # issue 13: the placeholder names the real tool (the MCP tool_result_recall), the ref id and session
    holder = len(json.dumps(pair("c0", RESULT_500, shape=shape)[1]["content"][0] if shape == "block"
                            else pair("c0", RESULT_500, shape=shape)[1]))
    placeholders = results(messages)
    assert placeholders[0] == f"[masked: {holder // 4:,} tokens, use tool_result_recall with ref_id c0 (session s1) if needed]"
    assert "ref_id c1; the original was not stored" in placeholders[1]  # sensitive: never written
    assert store.recall("c2") == RESULT_500
    assert not store.has("c3")


def test_D_6_existing_offload_is_not_overwritten(tmp_path):
    store = OffloadStore(tmp_path, "s1")
    store.write("c0", {"original": True})
    messages = history("block")
    mask_stale_observations(messages, keep_rounds=3, store=store)
    assert store.recall("c0") == {"original": True}
