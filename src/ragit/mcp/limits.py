"""Size, depth and hostile-value limits of MCP tool arguments (cli-contract §3.3, §11).

A tool call is checked against these limits before anything else reads its strings: a 10 MB
question must fail in microseconds with a typed ``INPUT_INVALID`` (``too_large``), not after the
masking, control-character, tokenizer and embedding passes have each walked it. The walk stops
at the first violation, reads a string's length (O(1)) before its content, and encodes a
string only when its UTF-8 size matters and stays bounded by the remaining payload budget.
"""

from __future__ import annotations

import math
import re
from typing import Any

from ..contract.inputs import Validator

# A question or goal (and the other free-text request fields below): 64 KB of UTF-8.
TEXT_LIMIT_BYTES = 65_536
# The whole arguments object: the UTF-8 size of all its strings (keys included).
PAYLOAD_LIMIT_BYTES = 1_048_576
# Nesting of arrays and objects inside the arguments object (the deepest valid input nests 4).
DEPTH_LIMIT = 64
# Argument names whose value is a question or goal, wherever they appear (``retrieve.goal``,
# ``taskAnchor.goal``); ``query`` is session_search's question, ``citation`` verify's handle.
TEXT_KEYS = frozenset({"question", "goal", "query", "citation"})

LIMITS: dict[str, int] = {
    "textBytes": TEXT_LIMIT_BYTES,
    "payloadBytes": PAYLOAD_LIMIT_BYTES,
    "depth": DEPTH_LIMIT,
}

_SURROGATE = re.compile("[\ud800-\udfff]")


def _utf8_size(text: str, ceiling: int) -> int:
    """The UTF-8 size of ``text``, or any value above ``ceiling`` once it is certainly larger
    (every character takes at least one byte, so a long string is never encoded)."""
    if len(text) > ceiling or text.isascii():
        return len(text)
    return len(text.encode("utf-8", "surrogatepass"))


class _Walk:
    """One pass over an arguments object; raises the first violation as INPUT_INVALID."""

    def __init__(self, v: Validator) -> None:
        self.v = v
        self.budget = PAYLOAD_LIMIT_BYTES

    def spend(self, text: str, field: str) -> None:
        size = _utf8_size(text, self.budget)
        if size > self.budget:
            raise self.v.fail("input", "too_large",
                              f"the arguments exceed the payload limit of {PAYLOAD_LIMIT_BYTES} bytes")
        self.budget -= size
        if _SURROGATE.search(text):
            raise self.v.fail(field, "lone_surrogate", f"{field} contains a lone surrogate")

    def value(self, value: Any, field: str, depth: int, key: str | None) -> None:
        if isinstance(value, str):
            if key in TEXT_KEYS and _utf8_size(value, TEXT_LIMIT_BYTES) > TEXT_LIMIT_BYTES:
                raise self.v.fail(field, "too_large", f"{field} is longer than {TEXT_LIMIT_BYTES} bytes of UTF-8")
            self.spend(value, field)
        elif isinstance(value, float):
            if not math.isfinite(value):
                raise self.v.fail(field, "non_finite_number", f"{field} is not a finite number")
        elif isinstance(value, (dict, list)):
            if depth >= DEPTH_LIMIT:
                raise self.v.fail(field, "too_deep", f"{field} nests deeper than {DEPTH_LIMIT} levels")
            if isinstance(value, dict):
                for k, item in value.items():
                    self.spend(k, f"{field}.{k}" if not _SURROGATE.search(k) else field)
                    self.value(item, f"{field}.{k}", depth + 1, k)
            else:
                for i, item in enumerate(value):
                    self.value(item, f"{field}[{i}]", depth + 1, None)


def check_arguments(arguments: dict[str, Any], v: Validator) -> None:
    """Reject an arguments object over the limits, or holding a lone surrogate or a non-finite
    number (``NaN``/``Infinity`` literals, which Python's JSON reader accepts), as the typed
    ``INPUT_INVALID`` the CLI gives for the same ``--input`` payload."""
    _Walk(v).value(arguments, "input", 0, None)
