"""D.8 pair-safe boundary and repair, in both wire shapes."""

from __future__ import annotations

import copy

import pytest
from window_builders import SHAPES, assistant, call, pair, pair_violations, plain, result, user

from ragit.window.pairs import MISSING_TOMBSTONE, ORPHAN_TOMBSTONE, find_safe_boundary, repair_pairs


def test_D_8_a_plain_messages():
    assert find_safe_boundary(plain(15), 5) == 10


@pytest.mark.parametrize("shape", SHAPES)
def test_D_8_b_pair_pulls_boundary_back(shape):
    messages = plain(8) + pair("p", shape=shape) + plain(5)
    assert find_safe_boundary(messages, 6) == 8


@pytest.mark.parametrize("shape", SHAPES)
def test_D_8_c_pair_outside_the_tail(shape):
    messages = plain(5) + pair("p", shape=shape) + plain(8)
    assert find_safe_boundary(messages, 8) == 7


@pytest.mark.parametrize("shape", SHAPES)
def test_D_8_d_orphan_result_does_not_move(shape):
    messages = plain(8) + [result("orphan", "x", shape=shape)] + plain(4)
    assert find_safe_boundary(messages, 5) == 8


@pytest.mark.parametrize("shape", SHAPES)
def test_D_8_e_consecutive_pairs(shape):
    messages = [m for i in range(5) for m in pair(f"c{i}", shape=shape)]
    assert find_safe_boundary(messages, 1) == 8
    assert find_safe_boundary(messages, 10) == 0
    assert find_safe_boundary(messages, 50) == 0


def test_D_8_parallel_tool_messages_move_together():
    parallel = {
        "role": "assistant", "content": "",
        "tool_calls": [
            {"id": "a", "function": {"name": "t", "arguments": "{}"}},
            {"id": "b", "function": {"name": "t", "arguments": "{}"}},
        ],
    }
    batch = [parallel, result("a", "x", shape="openai"), result("b", "y", shape="openai")]
    messages = [*plain(4), *batch, *plain(1, start=9)]
    assert find_safe_boundary(messages, 2) == 4


@pytest.mark.parametrize("shape", SHAPES)
def test_D_8_f_missing_result_gets_tombstone(shape):
    messages = [user("go"), call("c1", shape=shape), assistant("next")]
    repaired = repair_pairs(messages)
    assert pair_violations(repaired) == []
    if shape == "block":
        tomb = repaired[2]
        block = {"type": "tool_result", "tool_use_id": "c1", "content": MISSING_TOMBSTONE}
        assert tomb == {"role": "user", "content": [block]}
    else:
        assert repaired[2] == {"role": "tool", "tool_call_id": "c1", "name": "run_bash", "content": MISSING_TOMBSTONE}
    assert [m["role"] for m in repaired[-1:]] == ["assistant"]


def test_D_8_f_partial_block_batch_is_completed_in_the_same_user_message():
    two = {"role": "assistant", "content": [
        {"type": "tool_use", "id": "a", "name": "t", "input": {}},
        {"type": "tool_use", "id": "b", "name": "t", "input": {}},
    ]}
    messages = [user("go"), two, result("a", "done"), assistant("ok")]
    repaired = repair_pairs(messages)
    assert len(repaired) == 4 and pair_violations(repaired) == []
    assert [b["tool_use_id"] for b in repaired[2]["content"]] == ["a", "b"]
    followed_by_text = repair_pairs([user("go"), call("c"), user("plain text")])
    assert followed_by_text[2]["content"][0]["tool_use_id"] == "c"
    assert followed_by_text[2]["content"][1] == {"type": "text", "text": "plain text"}


def test_D_8_g_orphan_only_user_message_becomes_tombstone_text():
    messages = [assistant("a"), result("gone", "x"), assistant("b")]
    before = copy.deepcopy(messages)
    repaired = repair_pairs(messages)
    assert [m["role"] for m in repaired] == ["assistant", "user", "assistant"]
    assert repaired[1]["content"] == [{"type": "text", "text": ORPHAN_TOMBSTONE}]
    assert messages == before  # input never mutated


def test_D_8_orphan_tool_messages_and_duplicates_dropped():
    messages = [user("go"), result("x", "orphan", shape="openai"), *pair("c", shape="openai"),
                result("c", "again", shape="openai"), assistant("done")]
    repaired = repair_pairs(messages)
    assert pair_violations(repaired) == []
    assert sum(1 for m in repaired if m["role"] == "tool") == 1


def test_D_8_late_result_is_an_orphan():
    messages = [user("go"), call("c"), user("interrupt"), assistant("x"), result("c", "late")]
    repaired = repair_pairs(messages)
    assert pair_violations(repaired) == []
    assert repaired[-1]["content"] == [{"type": "text", "text": ORPHAN_TOMBSTONE}]
