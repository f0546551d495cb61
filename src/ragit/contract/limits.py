"""Size, depth and hostile-value limits of every input (cli-contract §3.3): one definition for
the CLI's ``--input`` payloads and positional arguments, the Python API and the MCP server.

Hostile input must fail fast with a typed ``INPUT_INVALID`` and never crash or hang:

- ``too_deep``: arrays and objects nested deeper than :data:`DEPTH_LIMIT`. JSON text is
  measured before it is parsed (Python's parser would raise ``RecursionError`` a little
  above 1,000 levels), parsed values by a walk that stops at the limit.
- ``lone_surrogate``: a string holding half of a UTF-16 pair (``"\\ud800"`` in JSON, or the
  surrogate-escaped bytes Python makes of a command-line argument that is not UTF-8). Such a
  string cannot be written as UTF-8, so it would fail later in a tokenizer or on output.
- ``non_finite_number``: ``NaN``, ``Infinity``, ``-Infinity`` (Python's JSON reader accepts
  the literals; nothing downstream can use them and JSON output never emits them).
- ``too_large``: a question or goal over :data:`TEXT_LIMIT_BYTES` of UTF-8 (an agent may paste
  a whole issue with its traceback; SWE-bench issue texts reach 25 KB), a payload over
  :data:`PAYLOAD_LIMIT_BYTES`, a transcript or evidence file over :data:`FILE_LIMIT_BYTES`.
  A 10 MB question is refused in microseconds, not after masking, tokenizing and embedding.

The walk stops at the first violation, reads a string's length (O(1)) before its content and
encodes a string only when its UTF-8 size matters and stays bounded by the remaining budget.
"""

from __future__ import annotations

import json
import math
import re
from itertools import accumulate
from typing import TYPE_CHECKING, Any

from ..lazyre import LazyPattern

if TYPE_CHECKING:  # pragma: no cover
    from typing import Protocol

    from ..errors import RagitError

    class Validator(Protocol):
        """What the checks need of ragit.contract.inputs.Validator (named here, not imported:
        inputs builds on this module)."""

        def fail(self, field: str, reason: str, message: str | None = None, **extra: Any) -> RagitError: ...

# C0 control characters other than tab, newline and carriage return (and DEL): refused in text.
CONTROL_RE = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\x7f]")

# A question or goal (and the other free-text request fields of TEXT_KEYS): 64 KB of UTF-8.
TEXT_LIMIT_BYTES = 65_536
# A structured payload (an ``--input`` object, an MCP call's arguments): the UTF-8 size of its
# strings, keys included.
PAYLOAD_LIMIT_BYTES = 1_048_576
# Files read as external material (``session mirror``/``window`` transcripts, ``context
# assemble`` messages, ``context packet --evidence``): long agent sessions are tens of MB.
FILE_LIMIT_BYTES = 268_435_456
# Nesting of arrays and objects (the deepest valid request nests 4; a transcript's tool input a
# few more).
DEPTH_LIMIT = 64
# Field names whose value is a question or goal, wherever they appear (``retrieve.goal``,
# ``taskAnchor.goal``); ``query`` is session search's question, ``citation`` verify's handle.
TEXT_KEYS = frozenset({"question", "goal", "query", "citation"})

# What ``describe`` lists as ``spec.limits``.
LIMITS: dict[str, Any] = {
    "textBytes": TEXT_LIMIT_BYTES,
    "textFields": sorted(TEXT_KEYS),
    "payloadBytes": PAYLOAD_LIMIT_BYTES,
    "fileBytes": FILE_LIMIT_BYTES,
    "depth": DEPTH_LIMIT,
}

_SURROGATE = re.compile("[\ud800-\udfff]")
# a JSON string literal (unrolled: no backtracking per character) and what is not a bracket
_JSON_STRING = LazyPattern(r'"[^"\\]*(?:\\.[^"\\]*)*"', re.S)
_NOT_BRACKET = LazyPattern(r"[^\[\]{}]+")
_STEP = {"[": 1, "{": 1, "]": -1, "}": -1}


def describe_limits() -> dict[str, Any]:
    """The limits as ``describe`` shows them (a copy: callers may not change the definition)."""
    return {k: list(v) if isinstance(v, list) else v for k, v in LIMITS.items()}


def utf8_size(text: str, ceiling: int) -> int:
    """The UTF-8 size of ``text``, or any value above ``ceiling`` once it is certainly larger
    (every character takes at least one byte, so a long string is never encoded)."""
    if len(text) > ceiling or text.isascii():
        return len(text)
    return len(text.encode("utf-8", "surrogatepass"))


def is_text_key(field: str) -> bool:
    """Whether ``field`` (``question``, ``input.retrieve.goal``) names a question or goal."""
    return field.rsplit(".", 1)[-1].lstrip("-") in TEXT_KEYS


def check_text(value: str, v: Validator, field: str) -> None:
    """A single string argument (positional, option or API parameter): a question or goal over
    the text limit, any string over the payload limit, or one with a lone surrogate."""
    limit = TEXT_LIMIT_BYTES if is_text_key(field) else PAYLOAD_LIMIT_BYTES
    if utf8_size(value, limit) > limit:
        raise v.fail(field, "too_large", f"{field} is longer than {limit} bytes of UTF-8")
    if _SURROGATE.search(value):
        raise v.fail(field, "lone_surrogate", f"{field} contains a lone surrogate (not valid Unicode text)")


def _skeleton(text: str) -> str:
    """The brackets of JSON ``text`` outside string literals, in order."""
    return _NOT_BRACKET.sub("", _JSON_STRING.sub("", text))


def check_json_depth(text: str, v: Validator, field: str = "input") -> None:
    """``too_deep`` before a parser can recurse into ``text``."""
    if "[" not in text and "{" not in text:
        return
    skeleton = _skeleton(text)
    if skeleton.count("[") + skeleton.count("{") <= DEPTH_LIMIT:  # cannot nest deeper: no walk
        return
    if max(accumulate((_STEP[c] for c in skeleton), initial=0)) > DEPTH_LIMIT:
        raise v.fail(field, "too_deep", f"{field} nests deeper than {DEPTH_LIMIT} levels")


# after string literals are removed: the non-finite literals, and numbers with an exponent
_NON_FINITE_LITERAL = LazyPattern(r"(?<![\w.])-?(?:NaN|Infinity)(?!\w)")
_SURROGATE_ESCAPE = LazyPattern(r"\\u[dD][89a-fA-F][0-9a-fA-F]{2}")
_EXPONENT_NUMBER = LazyPattern(r"-?\d+(?:\.\d+)?[eE][+-]?\d+")


def check_json_text(text: str, v: Validator, field: str = "input") -> None:
    """The hostile values of JSON (or JSON Lines) ``text`` found without parsing it: nesting
    deeper than the limit, an escaped lone surrogate in any string, a ``NaN``/``Infinity``
    literal or a number too large for a float, wherever they sit. For external material that
    an importer parses only in part (records it does not keep are still input)."""
    check_json_depth(text, v, field)
    if _SURROGATE_ESCAPE.search(text) and _has_lone_surrogate_escape(text):
        raise v.fail(field, "lone_surrogate", f"{field} contains a lone surrogate (not valid Unicode text)")
    rest = _JSON_STRING.sub('""', text) if '"' in text else text
    if _NON_FINITE_LITERAL.search(rest) or any(
            not math.isfinite(float(m.group())) for m in _EXPONENT_NUMBER.finditer(rest)):
        raise v.fail(field, "non_finite_number", f"{field} holds a number that is not finite")


def _has_lone_surrogate_escape(text: str) -> bool:
    """Whether a JSON string literal of ``text`` escapes half a surrogate pair."""
    for literal in _JSON_STRING.finditer(text):
        chunk = literal.group()
        if _SURROGATE_ESCAPE.search(chunk) and _SURROGATE.search(_decode_literal(chunk)):
            return True
    return False


def _decode_literal(literal: str) -> str:
    try:
        return json.loads(literal)
    except ValueError:  # malformed: the parser reports it as invalid JSON
        return ""


def parse_json(text: str, v: Validator, *, field: str = "--input", value_field: str = "input",
               budget: int | None = PAYLOAD_LIMIT_BYTES, control: bool = True) -> Any:
    """Parse a JSON payload and check every limit: ``invalid_json``, ``too_deep``,
    ``too_large``, ``lone_surrogate``, ``non_finite_number`` (and control characters unless
    ``control`` is off: transcripts carry ANSI colours as data)."""
    if budget is not None and utf8_size(text, budget) > budget:
        raise v.fail(field, "too_large", f"{field} is larger than {budget} bytes")
    check_json_depth(text, v, value_field)
    try:
        value = json.loads(text)
    except json.JSONDecodeError as exc:
        raise v.fail(field, "invalid_json", f"{field} is not valid JSON: {exc.msg}") from None
    except RecursionError:  # a parser recursing deeper than the measure allowed: still too deep
        raise v.fail(value_field, "too_deep", f"{value_field} nests deeper than {DEPTH_LIMIT} levels") from None
    check_value(value, v, value_field, budget=budget, control=control)
    return value


class _Walk:
    """One pass over a parsed value; raises the first violation as INPUT_INVALID."""

    def __init__(self, v: Validator, budget: int | None, control: bool, text_keys: bool) -> None:
        self.v = v
        self.text_keys = TEXT_KEYS if text_keys else frozenset()
        self.limit = budget
        self.budget = budget
        self.control = CONTROL_RE if control else None

    def string(self, text: str, field: str) -> None:
        if self.budget is not None:
            size = utf8_size(text, self.budget)
            if size > self.budget:
                raise self.v.fail("input", "too_large", f"the input exceeds the payload limit of {self.limit} bytes")
            self.budget -= size
        if _SURROGATE.search(text):
            raise self.v.fail(field, "lone_surrogate", f"{field} contains a lone surrogate (not valid Unicode text)")
        if self.control is not None and self.control.search(text):
            raise self.v.fail(field, "control_character", f"{field} contains a control character")

    def value(self, value: Any, field: str, depth: int, key: str | None) -> None:
        if isinstance(value, str):
            if key in self.text_keys and utf8_size(value, TEXT_LIMIT_BYTES) > TEXT_LIMIT_BYTES:
                raise self.v.fail(field, "too_large", f"{field} is longer than {TEXT_LIMIT_BYTES} bytes of UTF-8")
            self.string(value, field)
        elif isinstance(value, float):
            if not math.isfinite(value):
                raise self.v.fail(field, "non_finite_number", f"{field} is not a finite number")
        elif isinstance(value, (dict, list)):
            if depth >= DEPTH_LIMIT:
                raise self.v.fail(field, "too_deep", f"{field} nests deeper than {DEPTH_LIMIT} levels")
            if isinstance(value, dict):
                for k, item in value.items():
                    if isinstance(k, str):
                        # a bad key is reported at its object: the key cannot name a path
                        bad = _SURROGATE.search(k) or (self.control is not None and self.control.search(k))
                        self.string(k, field if bad else f"{field}.{k}")
                    self.value(item, f"{field}.{k}", depth + 1, k if isinstance(k, str) else None)
            else:
                for i, item in enumerate(value):
                    self.value(item, f"{field}[{i}]", depth + 1, None)


def check_value(value: Any, v: Validator, field: str = "input", *, budget: int | None = PAYLOAD_LIMIT_BYTES,
                control: bool = True, text_keys: bool = True) -> None:
    """Reject a parsed (or API-given) value over the limits, holding a lone surrogate, a
    non-finite number or (with ``control``) a control character, as the typed
    ``INPUT_INVALID`` of cli-contract §3.3. ``budget`` None: no payload limit (a file already
    measured against its own); ``text_keys`` off: a ``query`` or ``goal`` key is data, not a
    request's question (a transcript's tool call)."""
    _Walk(v, budget, control, text_keys).value(value, field, 0, None)


def check_arguments(arguments: dict[str, Any], v: Validator) -> None:
    """An MCP call's arguments: every limit, before anything else reads their strings (control
    characters are checked after the allow-list, as for the CLI)."""
    check_value(arguments, v, "input", control=False)

