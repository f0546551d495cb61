"""JSON number rounding and output rules of cli-contract §9."""

from __future__ import annotations

import math

import pytest
from hypothesis import given, strategies as st

from ragit.contract.jsonout import dumps, format_score, round6


@pytest.mark.parametrize(
    "value,expected",
    [(0.1234565, "0.123457"), (0.5, "0.5"), (1.0, "1"), (0.8000004, "0.8"), (-0.0000004, "0"), (0.661, "0.661"),
     (-0.0, "0"), (0.6200000000000001, "0.62")],
)
def test_round6_examples(value, expected):
    assert dumps(value).strip() == expected


def test_nan_is_never_emitted():
    with pytest.raises(ValueError):
        round6(math.nan)


def test_utf8_and_indent():
    assert dumps({"a": "한국어", "b": [1]}) == '{\n  "a": "한국어",\n  "b": [\n    1\n  ]\n}\n'


@pytest.mark.parametrize("value,expected", [(0.4131, "0.4131"), (1.0, "1.0000"), (0.00005, "0.0001"), (0.12345, "0.1235")])
def test_score_text_four_decimals(value, expected):
    assert format_score(value) == expected


@given(st.floats(allow_nan=False, allow_infinity=False, min_value=-1e6, max_value=1e6))
def test_round6_is_idempotent(x):
    once = round6(x)
    assert round6(float(once)) == once
