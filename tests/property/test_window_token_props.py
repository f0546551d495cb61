"""D.2: the memoised sizing of long texts equals the spec's formula on any text."""

from __future__ import annotations

import json

from hypothesis import given, settings
from hypothesis import strategies as st

from ragit.window.tokens import block_chars


def spec_chars(block: dict) -> int:
    """D.2 literally: text length + len(json(block)) − len(str(text))."""
    text = block.get("text") or block.get("content") or ""
    return len(text) + len(json.dumps(block, ensure_ascii=False)) - len(str(text))


@settings(max_examples=200, deadline=None)
@given(st.text(min_size=0, max_size=600), st.sampled_from(["text", "content"]), st.text(max_size=20))
def test_D_2_block_sizing_matches_the_formula(text, key, ident):
    block = {"type": "tool_result" if key == "content" else "text", "tool_use_id": ident, key: text * 2}
    assert block_chars(block) == spec_chars(block)
