"""Input generators of the fuzz suite: valid payloads built from ragit's own allow-lists and
schemas, and hostile mutations of them, each with the outcome cli-contract §3.3 prescribes.

Values are plain Python JSON values plus :class:`Raw` pieces, spliced verbatim into the JSON
text by :func:`dumps`: that is how a NaN literal, a lone-surrogate escape, an unescaped control
character or 5,000 levels of nesting reach the parser exactly as an agent could send them
(Python's own encoder cannot write them, or would recurse).
"""

from __future__ import annotations

import copy
import json
import reprlib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from hypothesis import strategies as st

from ragit.mcp import schemas

SHORT = reprlib.Repr()  # a repr that stays short and safe on 5,000 levels of nesting
SHORT.maxlevel, SHORT.maxstring, SHORT.maxother, SHORT.maxlist, SHORT.maxdict = 8, 300, 300, 12, 16
HEAD = "@@HEAD@@"  # replaced by the case's repository HEAD (or "HEAD" without one) when it runs
TEXT_KEYS = frozenset({"question", "goal"})  # "a question or goal" (cli-contract §3.3)
# Control characters the contract rejects (U+0000–U+0008, U+000B, U+000C, U+000E–U+001F, U+007F).
CONTROL = [chr(c) for c in (*range(0, 9), 0x0B, 0x0C, *range(0x0E, 0x20), 0x7F)]
LIMIT_REASONS = frozenset({"lone_surrogate", "non_finite_number", "too_deep", "too_large"})
FIXTURES = Path(__file__).resolve().parent.parent / "fixtures" / "transcripts"


@dataclass(frozen=True)
class Raw:
    """JSON text spliced into the document as is."""

    text: str


@dataclass
class Expect:
    """What the contract prescribes for a case.

    ``reject``: the input is invalid, so exit 2 and (with ``reasons``) INPUT_INVALID with one
    of those reasons. ``forbid``: reasons that would be false positives for this input (a
    lone-surrogate verdict on a valid emoji, ``too_large`` on a small payload)."""

    reject: bool = False
    reasons: frozenset[str] | None = None
    forbid: frozenset[str] = frozenset()


@dataclass
class Case:
    """One generated invocation; ``argv`` lacks ``--cwd`` and the ``--input`` spec, which the
    runner adds for the repository it picks."""

    command: str
    klass: str
    argv: list[str]
    stdin: bytes = b""
    input_spec: str = "-"  # "-", "@file" (written under .git/), or a literal path
    with_input: bool = True
    expect: Expect = field(default_factory=Expect)
    dry_run: bool = False
    writes_allowed: bool = False  # the command may write on success (mutating, not --dry-run)
    fmt: str = "json"
    repo: str = "indexed"

    def describe(self) -> str:
        return (f"ragit {SHORT.repr(self.argv)} (input {self.input_spec!r}, repo {self.repo}, class {self.klass}) "
                f"stdin={SHORT.repr(self.stdin)} ({len(self.stdin)} bytes)")

    def _repr_pretty_(self, printer: Any, cycle: bool) -> None:  # hypothesis prints examples with it
        printer.text(self.describe())

    __repr__ = describe


# ------------------------------------------------------------------ JSON text


def dumps(value: Any, *, ascii_only: bool = True) -> str:
    """Compact JSON of ``value`` with :class:`Raw` pieces verbatim; ``ascii_only=False`` writes
    non-ASCII (and lone surrogates) unescaped."""
    if isinstance(value, Raw):
        return value.text
    if isinstance(value, dict):
        return "{" + ",".join(f"{_string(str(k), ascii_only)}:{dumps(v, ascii_only=ascii_only)}"
                              for k, v in value.items()) + "}"
    if isinstance(value, list):
        return "[" + ",".join(dumps(v, ascii_only=ascii_only) for v in value) + "]"
    if isinstance(value, str):
        return _string(value, ascii_only)
    return json.dumps(value)


def _string(text: str, ascii_only: bool) -> str:
    return json.dumps(text, ensure_ascii=ascii_only)


def encode(text: str) -> bytes:
    """UTF-8, keeping lone surrogates as their (invalid) three-byte forms."""
    return text.encode("utf-8", "surrogatepass")


def parses(text: str, transcript: bool) -> bool:
    """Whether Python's reader accepts ``text`` as the command reads it (one JSON document, or
    for a transcript JSONL, one document per line)."""
    try:
        json.loads(text)
        return True
    except (ValueError, RecursionError):
        if not transcript or not text.strip():
            return False
    try:
        for line in text.strip().splitlines():
            if line.strip():
                json.loads(line)
        return True
    except (ValueError, RecursionError):
        return False


# ------------------------------------------------------------------ plain values

WORDS = ["auth", "token rotation", "restore the auth context", "roadmap milestone", "store backend",
         "refresh token", "TokenStore.rotate", "citation", "context pack", "why does ingest reuse blobs"]
# Everything but surrogates and the contract's control characters: tab, LF, CR, U+0085, U+2028,
# RTL marks, astral characters (a valid surrogate pair once escaped) are all ordinary text.
_ALPHABET = st.characters(blacklist_categories=("Cs",), blacklist_characters="".join(CONTROL))
safe_text = st.one_of(
    st.sampled_from(WORDS),
    st.text(_ALPHABET, min_size=1, max_size=24),
    st.sampled_from(["😀 emoji", "naïve café", "\u202eRTL", "tab\tand\nnewline\r\n", "\u0085nel\u2028ls",
                     "漢字テキスト", "  padded  ", "x" * 300]),
)
any_json = st.recursive(
    st.one_of(st.none(), st.booleans(), st.integers(-2**63, 2**63), st.floats(allow_nan=False, allow_infinity=False),
              safe_text),
    lambda inner: st.one_of(st.lists(inner, max_size=3), st.dictionaries(safe_text, inner, max_size=3)),
    max_leaves=6,
)


def mostly(valid: list[str], invalid: list[str]) -> st.SearchStrategy[str]:
    """Three valid values for each invalid one: most payloads get past the first check."""
    return st.sampled_from(valid * 3 + invalid)


_HEX = st.text("0123456789abcdef", min_size=4, max_size=40)
_REVS = st.one_of(mostly(["HEAD", HEAD, HEAD], ["HEAD~1", "main", "v1"]), _HEX)
_GLOBS = mostly(["src/**", "docs/*.md", "*.py", "**/*", "README.md", "src/*.py", "tests/**", "docs/**/*.md", "[!a]*"],
                ["../x", "/abs/*", "a,b"])
_REPO_PATHS = mostly(["src/auth.py", "README.md", "docs/adr/001-auth.md", "./src/auth.py", "src\\auth.py", "src/"],
                     ["missing.py", "../etc/passwd", "/etc/passwd"])
_DATES = mostly(["2026-03-08T10:00:00.000Z", "2026-03-08T10:00:00Z", "2025-08-14T09:12:03.511+02:00"],
                ["2026-03-08", "not a date", "2026-13-45T99:99:99Z"])
_HANDLES = mostly([f"src/auth.py@{HEAD}:L1-L3", f"README.md@{HEAD}:L1-L1", "cite-0123456789abcdef01234567"],
                  ["src/auth.py@abcd:L3-L1", "../x@abcd:L1-L2", "nonsense"])

# String values by property name, so valid-looking payloads reach past the first checks.
HINTS: dict[str, st.SearchStrategy[Any]] = {
    "at": _REVS, "since": _REVS, "paths": _GLOBS, "relatedFiles": _REPO_PATHS, "supersedes": _REPO_PATHS,
    "path": _REPO_PATHS, "createdAt": _DATES, "capturedAt": _DATES, "sourceHeadSha": st.sampled_from([HEAD, "abcd"]),
    "evidence": _HANDLES, "files": mostly(["src/**", "*.md", "README.md", "a, b"], ["../**/*.md", "/abs"]),
}


def from_schema(schema: dict[str, Any], name: str = "",
                hints: dict[str, st.SearchStrategy[Any]] | None = None) -> st.SearchStrategy[Any]:
    """Values of a (ragit-written) JSON schema: types, enums, bounds, required and optional
    properties; ``x-strategy`` nodes supply their own strategy, ``hints`` the strings of a
    property by its name."""
    hints = HINTS if hints is None else hints
    if "x-strategy" in schema:
        return schema["x-strategy"]
    if "enum" in schema:
        return st.sampled_from(schema["enum"])
    kind = schema.get("type")
    if isinstance(kind, list):
        return st.one_of(*(from_schema(dict(schema, type=k), name, hints) for k in kind))
    if kind == "null":
        return st.none()
    if kind == "boolean":
        return st.booleans()
    if kind == "integer":
        low, high = schema.get("minimum", 0), min(schema.get("maximum", 10_000), 10_000)
        return st.one_of(st.integers(low, min(high, 50)), st.integers(low, high))
    if kind == "number":
        return st.floats(schema.get("minimum", 0), schema.get("maximum", 1))
    if kind == "string":
        return hints.get(name, safe_text)
    if kind == "array":
        return st.lists(from_schema(schema.get("items", {}), name, hints), max_size=3)
    if kind == "object":
        props = schema.get("properties", {})
        required = set(schema.get("required", ()))
        return st.fixed_dictionaries(
            {k: from_schema(s, k, hints) for k, s in props.items() if k in required},
            optional={k: from_schema(s, k, hints) for k, s in props.items() if k not in required},
        )
    return any_json


def without(schema: dict[str, Any], *keys: str) -> dict[str, Any]:
    """An MCP schema minus its MCP-only arguments: the CLI ``--input`` payload schema."""
    out = copy.deepcopy(schema)
    for key in keys:
        out["properties"].pop(key, None)
        if key in out.get("required", []):
            out["required"].remove(key)
    return out


def closed(properties: dict[str, Any], required: tuple[str, ...] = ()) -> dict[str, Any]:
    return {"type": "object", "properties": properties, "required": list(required), "additionalProperties": False}


_STR = {"type": "string"}
_STRS = {"type": "array", "items": _STR}

INGEST = closed({"all": {"type": "boolean"}, "since": _STR, "files": _STR, "paths": {"type": "array", "items":
                 {"type": "string"}}, "at": _STR})
PROMOTE = schemas.MEMORY_WRAP["properties"]["promotionCandidates"]  # an array of promotion candidates
PROMOTE_OBJECT = closed({"promotionCandidates": PROMOTE, "sourceSessionId": _STR, "sourceHeadSha": _STR,
                         "sessionId": _STR})


# ------------------------------------------------------------------ transcripts


def _fixture_records(name: str) -> list[dict[str, Any]]:
    return [json.loads(line) for line in (FIXTURES / name).read_text(encoding="utf-8").splitlines() if line.strip()]


_ids = st.sampled_from(["toolu_01", "call_2", "t3", "x"])
_block = st.one_of(
    st.fixed_dictionaries({"type": st.just("text"), "text": safe_text}),
    st.fixed_dictionaries({"type": st.just("tool_use"), "id": _ids, "name": st.sampled_from(["bash", "read"]),
                           "input": st.dictionaries(st.sampled_from(["command", "path"]), safe_text, max_size=2)}),
    st.fixed_dictionaries({"type": st.just("tool_result"), "tool_use_id": _ids,
                           "content": st.one_of(safe_text, st.lists(st.fixed_dictionaries(
                               {"type": st.just("text"), "text": safe_text}), max_size=2))}),
    st.fixed_dictionaries({"type": st.just("thinking"), "thinking": safe_text, "signature": st.just("EqQBCkYI")}),
)
_message = st.one_of(
    st.fixed_dictionaries({"role": st.sampled_from(["user", "assistant", "system"]),
                           "content": st.one_of(safe_text, st.lists(_block, max_size=3))}),
    st.fixed_dictionaries({"role": st.just("assistant"), "content": st.none(), "tool_calls": st.lists(
        st.fixed_dictionaries({"id": _ids, "type": st.just("function"), "function": st.fixed_dictionaries(
            {"name": st.just("bash"), "arguments": st.just('{"command": "ls"}')})}), min_size=1, max_size=2)}),
    st.fixed_dictionaries({"role": st.just("tool"), "tool_call_id": _ids, "content": safe_text}),
)


def _subsequence(records: list[dict[str, Any]]) -> st.SearchStrategy[list[dict[str, Any]]]:
    return st.lists(st.booleans(), min_size=len(records), max_size=len(records)).map(
        lambda keep: [copy.deepcopy(r) for r, k in zip(records, keep) if k])


TRANSCRIPTS = st.one_of(
    st.tuples(st.just("messages"), st.lists(_message, max_size=6)),
    st.tuples(st.just("claude-code"), _subsequence(_fixture_records("claude_code_session.jsonl"))),
    st.tuples(st.just("codex"), _subsequence(_fixture_records("codex_rollout.jsonl"))),
)
ASSEMBLE = closed({
    "static": closed({k: _STR for k in ("base", "style", "heuristics", "identity", "rules")}),
    "dynamic": closed({**{k: _STR for k in ("modelCard", "guidance", "surface", "projectMemory", "userContext")},
                       "learnedPatterns": _STRS, "runtimeRules": closed({"insights": _STRS, "rules": _STRS})}),
    "audit": {"type": "boolean"}, "includeDate": {"type": "boolean"},
    "memory": closed({"sessionId": _STR, "subjectId": _STR}),
    "messages": {"type": "array", "x-open": True, "x-strategy": st.lists(_message, max_size=4)},
    "toolsTokens": {"type": "integer", "minimum": 0, "maximum": 100_000},
})


# ------------------------------------------------------------------ commands


@dataclass(frozen=True)
class Command:
    name: str
    schema: dict[str, Any] | None  # None: a transcript command
    read_only: bool
    dry_run: bool = False
    positional: bool = False  # query / context pack take the question or goal as an argument

    @property
    def argv(self) -> list[str]:
        return self.name.split()

    @property
    def transcript(self) -> bool:
        return self.schema is None


COMMANDS: dict[str, Command] = {c.name: c for c in (
    Command("query", without(schemas.QUERY, "view"), read_only=True, positional=True),
    Command("context pack", without(schemas.CONTEXT_PACK, "view"), read_only=True, positional=True),
    Command("context packet", without(schemas.CONTEXT_PACKET, "evidence"), read_only=True),
    Command("context assemble", ASSEMBLE, read_only=True),
    Command("ingest", INGEST, read_only=False, dry_run=True),
    Command("memory wrap", without(schemas.MEMORY_WRAP, "dryRun"), read_only=False, dry_run=True),
    Command("memory promote", PROMOTE_OBJECT, read_only=False, dry_run=True),
    Command("artifact capture", without(schemas.ARTIFACT_CAPTURE, "dryRun"), read_only=False, dry_run=True),
    Command("window check", None, read_only=True),
    Command("window compact", None, read_only=True),  # writes only with --session
    Command("session mirror", None, read_only=False),
)}


def schema_at(schema: dict[str, Any] | None, path: tuple[Any, ...]) -> dict[str, Any] | None:
    """The schema node of the value at ``path`` (None when unknown or open)."""
    node = schema
    for step in path:
        if node is None or node.get("x-open"):
            return None
        if isinstance(step, int):
            node = node.get("items") if node.get("type") == "array" else None
        else:
            node = node.get("properties", {}).get(step) if node.get("type") == "object" else None
    return node


# ------------------------------------------------------------------ paths inside values


def slots(value: Any, path: tuple[Any, ...] = ()) -> list[tuple[tuple[Any, ...], Any]]:
    """Every (path, node) of ``value``, the root first."""
    out = [(path, value)]
    if isinstance(value, dict):
        for k, v in value.items():
            out += slots(v, path + (k,))
    elif isinstance(value, list):
        for i, v in enumerate(value):
            out += slots(v, path + (i,))
    return out


def replace(value: Any, path: tuple[Any, ...], new: Any) -> Any:
    if not path:
        return new
    out = copy.copy(value)
    out[path[0]] = replace(value[path[0]], path[1:], new)
    return out


def rename_key(value: Any, path: tuple[Any, ...], new_key: str) -> Any:
    """``value`` with the key at ``path`` (its last step) renamed, order kept."""
    if len(path) == 1:
        return {new_key if k == path[0] else k: v for k, v in value.items()}
    out = copy.copy(value)
    out[path[0]] = rename_key(value[path[0]], path[1:], new_key)
    return out


def nest(depth: int, leaf: str = "1", *, objects: bool = False) -> str:
    """JSON text of ``depth`` nested arrays (or objects) around ``leaf``."""
    if objects:
        return '{"a":' * depth + leaf + "}" * depth
    return "[" * depth + leaf + "]" * depth


def nest_value(depth: int, leaf: Any = 1) -> Any:
    """The same as a Python value, built without recursion."""
    value = leaf
    for i in range(depth):
        value = [value] if i % 2 else {"a": value}
    return value


# ------------------------------------------------------------------ hostile classes

# The limits the oracles use. cli-contract §3.3 fixes 64 KB for a question or goal and says the
# same limits apply to --input payloads, positional arguments and MCP arguments, listed by
# `describe` (spec.limits): the tests load them from there (fuzzkit.documented_limits) before
# generating. ACTIVE_LIMITS serves the command being fuzzed (payload None: not exercised).
CONTRACT_TEXT_BYTES = 65_536
ACTIVE_LIMITS: dict[str, Any] = {"text": CONTRACT_TEXT_BYTES, "payload": None, "depth": 64}
MCP_LIMITS: dict[str, Any] = {"text": CONTRACT_TEXT_BYTES, "payload": None, "depth": 64}

# (class, weight): every generated case belongs to exactly one class.
CLI_CLASSES = [
    ("valid", 24), ("unknown_key", 7), ("wrong_type", 9), ("control_char", 6), ("control_raw", 3),
    ("surrogate", 7), ("surrogate_raw", 3), ("non_finite", 7), ("overflow_number", 2), ("deep", 9),
    ("deep_ok", 2), ("huge_text", 2), ("huge_ok", 1), ("huge_payload", 1), ("truncated", 5), ("garbage", 5),
    ("bad_utf8", 6), ("empty", 3), ("bom", 1), ("wrong_top", 4), ("path", 5), ("bad_option", 6), ("positional", 7),
]
MCP_CLASSES = [
    ("valid", 26), ("unknown_key", 7), ("wrong_type", 10), ("control_char", 6), ("surrogate", 7),
    ("non_finite", 7), ("deep", 8), ("deep_ok", 2), ("huge_text", 2), ("huge_ok", 1), ("huge_payload", 1),
    ("not_object", 3), ("no_arguments", 2), ("unknown_tool", 2),
]
REPOS = ["indexed"] * 6 + ["unindexed", "unborn", "plain", "plain"]
_NON_FINITE = ["NaN", "Infinity", "-Infinity"]
_BAD_UTF8 = [b"\xff", b"\xc0\x80", b"\xed\xa0\x80", b"\xf4\x90\x80\x80", b"\x80", b"\xe2\x82", b"\xfe\xfe"]
_UNKNOWN_KEYS = ["bogus", "Question", "question ", "topk", "__proto__", "", "x" * 300, "élan", "ΑΒΓ"]


def weighted(classes: list[tuple[str, int]]) -> st.SearchStrategy[str]:
    return st.sampled_from([name for name, weight in classes for _ in range(weight)])


def _string_slots(value: Any) -> list[tuple[Any, ...]]:
    return [p for p, v in slots(value) if isinstance(v, str) and not isinstance(v, Raw)]


def _key_slots(value: Any, *, nested_only: bool = False) -> list[tuple[Any, ...]]:
    """Paths of dictionary keys (the path ends with the key)."""
    return [p + (k,) for p, v in slots(value) if isinstance(v, dict) and (p or not nested_only) for k in v]


def _root_schema(command: Command | None, value: Any, schema: dict[str, Any] | None) -> dict[str, Any] | None:
    if command is not None and command.name == "memory promote" and isinstance(value, list):
        return PROMOTE
    return schema


def _insert(draw: Any, text: str, piece: str) -> str:
    at = draw(st.integers(0, len(text)))
    return text[:at] + piece + text[at:]


def _text_value(unit: str, size: int) -> str:
    """A string of exactly ``size`` UTF-8 bytes made of ``unit`` (topped up with ASCII)."""
    width = len(unit.encode("utf-8"))
    return unit * (size // width) + "a" * (size % width)


def _text_key_slots(value: Any) -> list[tuple[Any, ...]]:
    return [p for p, v in slots(value) if p and p[-1] in TEXT_KEYS and isinstance(v, str)]


def _add_piece(draw: Any, value: Any, piece: Any, key: str = "fuzz") -> Any:
    """``value`` with ``piece`` somewhere new: under a new key of a dict, appended to a list, or
    instead of the root when it is a scalar."""
    containers = [p for p, v in slots(value) if isinstance(v, (dict, list))]
    if not containers:
        return piece
    path = draw(st.sampled_from(containers))
    node = copy.copy(_get(value, path))
    if isinstance(node, dict):
        node[key] = piece
    else:
        node.append(piece)
    return replace(value, path, node)


def _get(value: Any, path: tuple[Any, ...]) -> Any:
    for step in path:
        value = value[step]
    return value


def mutate(draw: Any, klass: str, value: Any, *, schema: dict[str, Any] | None, command: Command | None,
           text_mode: bool, limits: dict[str, Any]) -> tuple[Any, Expect, str]:
    """Apply ``klass`` to a valid ``value``: the mutated value, what the contract expects, and
    the class actually applied (a class that cannot apply falls back to ``valid``)."""
    closed_input = command is None or not command.transcript  # allow-listed payloads (and MCP arguments)
    if klass == "unknown_key":
        dicts = [p for p, v in slots(value) if isinstance(v, dict)
                 and (s := schema_at(_root_schema(command, value, schema), p)) is not None
                 and s.get("additionalProperties") is False]
        if not dicts:
            return value, Expect(), "valid"
        path = draw(st.sampled_from(dicts))
        node = dict(_get(value, path))
        key = draw(st.sampled_from([k for k in _UNKNOWN_KEYS if k not in node]))
        node[key] = draw(any_json)
        reasons = frozenset({"unknown_field"}) if not path and closed_input else None
        return replace(value, path, node), Expect(reject=True, reasons=reasons), klass
    if klass == "wrong_type":
        paths = [p for p, _ in slots(value) if p]
        if not paths:
            return value, Expect(), "valid"
        path = draw(st.sampled_from(paths))
        old = _get(value, path)
        new = draw(any_json.filter(lambda x: type(x) is not type(old) and not (
            isinstance(x, (int, float)) and isinstance(old, (int, float)) and not isinstance(old, bool))))
        return replace(value, path, new), Expect(), klass
    if klass in ("control_char", "surrogate"):
        if klass == "control_char":
            piece = draw(st.sampled_from(CONTROL))
            reasons = frozenset({"control_character"}) if closed_input else None
        else:
            piece = chr(draw(st.integers(0xD800, 0xDFFF)))
            reasons = frozenset({"lone_surrogate"})
        strings = _string_slots(value)
        # MCP checks root keys against the allow-list before the control-character pass
        keys = _key_slots(value, nested_only=command is None and klass == "control_char")
        choices = [("value", p) for p in strings] + [("key", p) for p in keys]
        if not choices:
            value = _add_piece(draw, value, draw(safe_text))
            choices = [("value", p) for p in _string_slots(value)]
            if not choices:
                return value, Expect(), "valid"
        where, path = draw(st.sampled_from(choices))
        if where == "value":
            value = replace(value, path, _insert(draw, _get(value, path), piece))
        else:
            value = rename_key(value, path, _insert(draw, str(path[-1]), piece))
        if klass == "control_char" and not closed_input:
            return value, Expect(forbid=frozenset({"control_character"})), klass  # transcripts: data
        return value, Expect(reject=True, reasons=reasons), klass
    if klass in ("control_raw", "surrogate_raw"):
        strings = _string_slots(value)
        if not strings:
            return value, Expect(), "valid"
        path = draw(st.sampled_from(strings))
        old = _get(value, path)
        at = draw(st.integers(0, len(old)))
        if klass == "control_raw":
            piece = draw(st.sampled_from(CONTROL))
            raw = Raw(json.dumps(old[:at])[:-1] + piece + json.dumps(old[at:])[1:])
            return replace(value, path, raw), Expect(), klass  # decided from the text (see cli_case)
        piece = chr(draw(st.integers(0xD800, 0xDFFF)))
        raw = Raw(json.dumps(old[:at])[:-1] + piece + json.dumps(old[at:])[1:])
        return replace(value, path, raw), Expect(reject=True, reasons=frozenset({"invalid_format"})), klass
    # MCP arguments must stay an object: replacing the root would only test "not an object"
    anywhere = [p for p, _ in slots(value) if p or command is not None] or [()]
    if klass in ("non_finite", "overflow_number"):
        numbers = [p for p, v in slots(value) if isinstance(v, (int, float)) and not isinstance(v, bool)]
        paths = numbers if numbers and draw(st.booleans()) else anywhere
        path = draw(st.sampled_from(paths))
        if klass == "overflow_number":
            literal = draw(st.sampled_from(["1e999", "-1e999", "1E400"]))
            return replace(value, path, Raw(literal)), Expect(), klass
        literal = draw(st.sampled_from(_NON_FINITE))
        piece: Any = Raw(literal) if text_mode else float(literal.replace("Infinity", "inf"))
        return replace(value, path, piece), Expect(reject=True, reasons=frozenset({"non_finite_number"})), klass
    if klass in ("deep", "deep_ok"):
        path = draw(st.sampled_from(anywhere))
        if klass == "deep":
            extra = draw(st.one_of(st.just(0), st.integers(0, 100), st.integers(900, 5000)))
            depth = max(1, limits["depth"] + 2 - len(path)) + extra
        else:
            depth = limits["depth"] - 2 - len(path)
            if depth < 1:
                return value, Expect(), "valid"
        objects = draw(st.booleans())
        piece = Raw(nest(depth, objects=objects)) if text_mode else nest_value(depth)
        if klass == "deep":
            return replace(value, path, piece), Expect(reject=True, reasons=frozenset({"too_deep"})), klass
        return replace(value, path, piece), Expect(forbid=frozenset({"too_deep"})), klass
    if klass in ("huge_text", "huge_ok"):
        texts = _text_key_slots(value)
        unit = draw(st.sampled_from(["a", "é", "漢", "😀"]))
        if not texts:
            strings = _string_slots(value)
            if klass == "huge_ok" or not strings:
                return value, Expect(), "valid"
            path = draw(st.sampled_from(strings))  # no question or goal here: a long ordinary string
            return replace(value, path, _text_value(unit, limits["text"] + 1)), Expect(), "huge_string"
        path = draw(st.sampled_from(texts))
        if klass == "huge_ok":
            return (replace(value, path, _text_value(unit, limits["text"])),
                    Expect(forbid=frozenset({"too_large"})), klass)
        size = limits["text"] + draw(st.sampled_from([1, 2, 3, 1000, 40_000]))
        return replace(value, path, _text_value(unit, size)), Expect(reject=True, reasons=frozenset({"too_large"})), klass
    if klass == "huge_payload":
        strings = [p for p in _string_slots(value) if p[-1] not in TEXT_KEYS]
        size = 1_100_000 if limits["payload"] is None else limits["payload"] + 1024
        filler = _text_value(draw(st.sampled_from(["lorem ipsum ", "ü"])), size)
        if strings:
            value = replace(value, draw(st.sampled_from(strings)), filler)
        else:
            value = _add_piece(draw, value, filler)
        if limits["payload"] is None:
            return value, Expect(), klass
        return value, Expect(reject=True, reasons=frozenset({"too_large"})), klass
    return value, Expect(), "valid"


OWN_REASON = {"surrogate": "lone_surrogate", "positional_surrogate": "lone_surrogate", "non_finite": "non_finite_number",
              "overflow_number": "non_finite_number",  # 1e999 reads as infinity: rejecting it is right too
              "deep": "too_deep", "huge_text": "too_large", "positional_huge": "too_large", "huge_payload": "too_large"}
CONTROL_CLASSES = frozenset({"control_char", "control_raw", "garbage", "positional_control"})


def finish(expect: Expect, klass: str, *, valid_json: bool, transcript: bool, small: bool) -> Expect:
    """Add the false-positive checks every case gets: a limit reason only for its own class
    (``too_large`` only once the input is big enough to be over a limit), ``invalid_json`` never
    for text the reader accepts, ``control_character`` only where one was put, and never for a
    transcript (where control characters are data)."""
    base = set(LIMIT_REASONS - {OWN_REASON.get(klass)})
    if not small:
        base.discard("too_large")
    forbid = base | set(expect.forbid)
    if valid_json:
        forbid.add("invalid_json")
    if transcript or klass not in CONTROL_CLASSES:
        forbid.add("control_character")
    forbid -= set(expect.reasons or ())
    return Expect(expect.reject, expect.reasons, frozenset(forbid))


# ------------------------------------------------------------------ CLI cases

PATH_SPECS = [  # (spec, what it is); the runner creates the outside files
    ("../fuzz-outside.json", "outside"), ("@abs-outside", "outside"), ("nested/../../fuzz-outside.json", "outside"),
    ("~/fuzz-home.json", "outside"), ("missing-input.json", "missing"), ("in\udcff.json", "missing"),
    (".git", "directory"), ("x" * 300 + ".json", "long"), ("a/" * 40 + "deep.json", "missing"),
]
_COMMON_BAD = [(["--format", "yaml"], {"not_one_of"}), (["--bogus-flag"], {"usage"})]
BAD_OPTIONS: dict[str, list[tuple[list[str], set[str]]]] = {
    "query": [(["what is auth"], {"mixed_input"}), (["--top-k", "3"], {"mixed_input"}), (["--explain"], {"mixed_input"}),
              (["--at", "HEAD"], {"mixed_input"}), (["--path", "src/**"], {"mixed_input"}),
              (["--scope", "all"], {"mixed_input"}), (["--exclude-tests"], {"mixed_input"}),
              (["--view", "huge"], {"not_one_of"}), (["--top-k", "0"], {"mixed_input"})],
    "context pack": [(["a goal"], {"mixed_input"}), (["--budget", "5"], {"mixed_input"}),
                     (["--budget-unit", "tokens"], {"mixed_input"}), (["--view", "x"], {"not_one_of"}),
                     (["--scope", "session"], {"mixed_input"})],
    "ingest": [(["--all"], {"mixed_input"}), (["--since", "HEAD"], {"mixed_input"}), (["--files", "*.md"], {"mixed_input"}),
               (["--path", "README.md"], {"mixed_input"}), (["--at", "HEAD"], {"mixed_input"})],
    "window check": [(["--window", "-5"], {"not_integer", "out_of_range"}), (["--window", "abc"], {"not_integer"}),
                     (["--model", "  "], {"empty"}), (["--from", "yaml"], {"not_one_of"})],
    "window compact": [(["--keep-recent", "0"], {"out_of_range"}), (["--session", "../x"], {"invalid_format"}),
                       (["--session", ".hidden"], {"invalid_format"}), (["--window", "1e3"], {"not_integer"}),
                       (["--from", "jsonl"], {"not_one_of"})],
    "session mirror": [(["--session", "   "], {"empty"}), (["--from", "yaml"], {"not_one_of"})],
    "context assemble": [(["--window", "0"], {"out_of_range"}), (["--model", ""], {"empty"})],
}


def _valid_options(draw: Any, command: Command) -> tuple[list[str], bool]:
    """Options that are valid beside ``--input``; the flag says whether the case may write."""
    out: list[str] = []
    writes = not command.read_only
    name = command.name
    if name in ("query", "context pack") and draw(st.booleans()):
        out += ["--view", draw(st.sampled_from(["minimal", "default", "full", " FULL "]))]
    if name.startswith("window") or name == "context assemble":
        choice = draw(st.sampled_from([None, None, ["--window", "128000"], ["--model", "claude-sonnet-4-5"],
                                       ["--window", "9000"]]))
        out += choice or []
    if name == "window compact":
        if draw(st.booleans()):
            out += ["--keep-recent", draw(st.sampled_from(["1", "4", "8", "100"]))]
        if draw(st.integers(0, 3)) == 0:
            out += ["--prune"]
        if draw(st.integers(0, 2)) == 0:
            out += ["--session", "fz-compact"]
            writes = True
    if name == "session mirror":
        out += ["--session", draw(st.sampled_from(["fz-mirror", "fz-mirror-2", "7f3c2a9e"]))]
    if command.transcript and draw(st.integers(0, 3)) == 0:
        out += ["--from", draw(st.sampled_from(["auto", "messages", "claude-code", "codex"]))]
    if name == "context packet" and draw(st.integers(0, 4)) == 0:
        out += ["--evidence", draw(st.sampled_from(["README.md", "src/auth.py:reference", "missing.txt"]))]
    return out, writes


def _serialize(draw: Any, command: Command, value: Any, fmt: str | None, ascii_only: bool) -> str:
    if command.transcript and isinstance(value, list):
        mode = draw(st.sampled_from(["array", "jsonl", "jsonl"] + (["wrapper"] if fmt == "messages" else [])))
        if mode == "jsonl":
            return "\n".join(dumps(r, ascii_only=ascii_only) for r in value) + draw(st.sampled_from(["", "\n"]))
        if mode == "wrapper":
            return dumps({"messages": value, "session_id": "fz-wrapped"}, ascii_only=ascii_only)
    return dumps(value, ascii_only=ascii_only)


@st.composite
def cli_case(draw: Any, command: Command) -> Case:
    """One invocation of ``command``: a class, a valid base value, the mutation, its bytes and
    the contract's expectation."""
    klass = draw(weighted([(k, w) for k, w in CLI_CLASSES if k != "positional" or command.positional]))
    limits = ACTIVE_LIMITS
    case = Case(command.name, klass, list(command.argv), repo=draw(st.sampled_from(REPOS)))
    case.fmt = draw(st.sampled_from(["json"] * 8 + ["text", "both"]))
    options, writes = _valid_options(draw, command)
    case.dry_run = command.dry_run and draw(st.integers(0, 2)) == 0
    case.writes_allowed = writes and not case.dry_run
    if case.dry_run:
        options.append("--dry-run")

    if klass.startswith("positional"):
        return _positional_case(draw, case, options, limits)
    case.argv += options
    expect = Expect()
    if klass == "bad_option":  # after the valid options: of a repeated option click keeps the last
        extra, reasons = draw(st.sampled_from(_COMMON_BAD + BAD_OPTIONS.get(command.name, [])))
        if "--format" in extra:
            case.fmt = None
        case.argv += extra
        expect = Expect(reject=True, reasons=frozenset(reasons))

    transcript_format = None
    if command.transcript:
        transcript_format, value = draw(TRANSCRIPTS)
        schema = None
    else:
        schema = command.schema
        value = draw(st.one_of(from_schema(PROMOTE), from_schema(schema)) if command.name == "memory promote"
                     else from_schema(schema))
    ascii_only = draw(st.booleans())
    if klass in ("unknown_key", "wrong_type", "control_char", "control_raw", "surrogate", "surrogate_raw",
                 "non_finite", "overflow_number", "deep", "deep_ok", "huge_text", "huge_ok", "huge_payload"):
        value, expect, klass = mutate(draw, klass, value, schema=schema, command=command, text_mode=True,
                                      limits=limits)
        # a transcript has many fields a message never uses: give wrong types more chances to land
        for _ in range(draw(st.integers(0, 3)) if klass == "wrong_type" and command.transcript else 0):
            value, _, _ = mutate(draw, "wrong_type", value, schema=None, command=command, text_mode=True,
                                 limits=limits)
        if klass == "surrogate":
            ascii_only = True  # the escape form; surrogate_raw writes the bytes
    if klass == "wrong_top":
        choices = ["x", 1, None, True, [1], 1.5, {"a": 1} if command.name == "memory promote" else "y"]
        value = draw(st.sampled_from(choices))
        expect = Expect(reject=not command.transcript)
    text = _serialize(draw, command, value, transcript_format, ascii_only)
    data = encode(text)

    if klass == "truncated":
        text = text[:draw(st.integers(0, max(0, len(text) - 1)))]
        data = encode(text)
        expect = Expect() if parses(text, command.transcript) else Expect(True, frozenset({"invalid_json"}))
    elif klass == "garbage":
        data = draw(st.one_of(st.binary(max_size=48), st.text(max_size=48).map(encode), st.sampled_from(
            [b"{", b"}", b"[1,", b"null", b'"str"', b"{'a': 1}", b"question: x", b"\x00", b"1 2", b"{}{}", b"[]]",
             b"{\"question\": \"x\",}", b"// comment\n{}", b"\xef\xbb\xbf"])))
        try:
            decoded = data.decode("utf-8")
        except UnicodeDecodeError:
            expect = Expect(True, frozenset({"invalid_format"}))
        else:
            expect = Expect() if parses(decoded, command.transcript) else Expect(True, frozenset({"invalid_json"}))
    elif klass == "bad_utf8":
        at = draw(st.integers(0, len(data)))
        data = data[:at] + draw(st.sampled_from(_BAD_UTF8)) + data[at:]
        expect = Expect(True, frozenset({"invalid_format"}))
    elif klass == "empty":
        data = draw(st.sampled_from([b"", b" ", b"\n\n", b"\t", b"\xef\xbb\xbf", b"\r\n"]))
        expect = Expect(True, frozenset({"invalid_json"}))
    elif klass == "bom":
        data = b"\xef\xbb\xbf" + data
    elif klass == "control_raw":
        if parses(text, command.transcript):
            expect = (Expect(forbid=frozenset({"control_character"})) if command.transcript
                      else Expect(True, frozenset({"control_character"})))
        else:
            expect = Expect(True, frozenset({"invalid_json"} if command.transcript
                                            else {"invalid_json", "control_character"}))
    elif klass == "path":
        spec, kind = draw(st.sampled_from(PATH_SPECS))
        case.input_spec = spec
        if kind == "outside":
            expect = Expect() if command.transcript else Expect(True, frozenset({"path_outside_repo"}))
        elif kind == "missing":
            expect = Expect(True, frozenset({"file_not_found"}))
        else:
            expect = Expect(True)
    if case.input_spec == "-" and draw(st.integers(0, 9)) == 0:
        case.input_spec = "@file"  # the same bytes from a file inside the repository (under .git/)

    try:
        valid_json = parses(data.decode("utf-8"), command.transcript) and klass not in ("bom",)
    except UnicodeDecodeError:
        valid_json = False
    case.klass = klass
    case.stdin = data
    case.expect = finish(expect, klass, valid_json=valid_json and klass != "path", transcript=command.transcript,
                         small=len(data) < 60_000)
    return case


def _positional_case(draw: Any, case: Case, options: list[str], limits: dict[str, Any]) -> Case:
    """``query`` / ``context pack`` with the question or goal on the command line (no --input)."""
    kind = draw(st.sampled_from(["positional"] * 3 + ["positional_surrogate", "positional_control", "positional_huge",
                                                      "positional_huge_ok", "positional_empty"]))
    text = draw(safe_text)
    expect = Expect()
    if kind == "positional_surrogate":
        text = _insert(draw, text, chr(draw(st.integers(0xD800, 0xDFFF))))
        expect = Expect(True, frozenset({"lone_surrogate"}))
    elif kind == "positional_control":
        text = _insert(draw, text, draw(st.sampled_from(CONTROL[1:])))  # argv cannot hold NUL
        expect = Expect(True, frozenset({"control_character"}))
    elif kind == "positional_huge":
        text = _text_value(draw(st.sampled_from(["a", "é", "😀"])), limits["text"] + draw(st.sampled_from([1, 5000])))
        expect = Expect(True, frozenset({"too_large"}))
    elif kind == "positional_huge_ok":
        text = _text_value(draw(st.sampled_from(["a", "é", "😀"])), limits["text"])
        expect = Expect(forbid=frozenset({"too_large"}))
    elif kind == "positional_empty":
        text = draw(st.sampled_from(["", " ", "\t\n", "   \r\n  "]))
        expect = Expect(True, frozenset({"empty"}))
    case.argv += options + ["--", text]
    case.with_input = False
    case.klass = kind
    case.stdin = b""
    case.expect = finish(expect, kind, valid_json=False, transcript=False, small=len(text) < 60_000)
    return case


# ------------------------------------------------------------------ MCP cases

MCP_HINTS = {
    "evidence": mostly(["README.md", "src/auth.py:reference", "docs/adr/001-auth.md:constraint"],
                       ["../outside.txt", "/etc/passwd", "missing.txt"]),
    "refId": mostly(["toolu_01", "call_2"], ["../x", "a" * 201]),
    "sessionId": mostly(["s1", "fz-compact", "7f3c2a9e"], ["../x", ".hidden", "a" * 201]),
    "session_id": st.sampled_from(["s1", "fz-mirror", ""]),
    "citation": mostly([f"src/auth.py@{HEAD}:L1-L3", f"README.md@{HEAD}:L1-L1", "cite-0123456789abcdef01234567"],
                       [f"../../etc/passwd@{HEAD}:L1-L2", "src/auth.py@abcd:L3-L1", "nonsense",
                        f"/etc/passwd@{HEAD}:L1-L2", f"src/auth.py@{HEAD}:L1-L99999"]),
    "query": st.sampled_from(["token", "auth restore", "rotation", "\"quoted\" OR NOT", "*", "a AND", "漢字"]),
}


@dataclass
class McpCase:
    tool: str
    klass: str
    arguments: Any
    expect: Expect
    raw_tool: str | None = None  # the name actually called (unknown_tool)

    @property
    def name(self) -> str:
        return self.tool if self.raw_tool is None else self.raw_tool

    def describe(self) -> str:
        return f"call_tool({self.name!r}, {SHORT.repr(self.arguments)}) class {self.klass}"

    def _repr_pretty_(self, printer: Any, cycle: bool) -> None:  # hypothesis prints examples with it
        printer.text(self.describe())

    __repr__ = describe


@st.composite
def mcp_case(draw: Any, tool_name: str, schema: dict[str, Any], *, text_mode: bool = False) -> McpCase:
    """Arguments for one MCP tool call: valid from the tool's own input schema, or one hostile class."""
    klass = draw(weighted(MCP_CLASSES))
    value = draw(from_schema(schema, hints={**HINTS, **MCP_HINTS}))
    limits = MCP_LIMITS
    expect = Expect()
    raw_tool = None
    if klass == "not_object":
        value = draw(st.sampled_from([[1, 2], "query", 3, True, [{"question": "x"}]]))
        expect = Expect(True)
    elif klass == "no_arguments":
        value = None
        expect = Expect(True) if schema.get("required") else Expect()
    elif klass == "unknown_tool":
        raw_tool = draw(st.sampled_from(["frobnicate", "Query", "query ", "", "x" * 500, "tool\ud800", "memory-wrap"]))
        expect = Expect(True)  # COMMAND_UNKNOWN, category invalid_input
    else:
        value, expect, klass = mutate(draw, klass, value, schema=schema, command=None, text_mode=text_mode,
                                      limits=limits)
    small = klass not in ("huge_text", "huge_ok", "huge_payload", "huge_string")
    return McpCase(tool_name, klass, value, finish(expect, klass, valid_json=True, transcript=False, small=small),
                   raw_tool)


# ------------------------------------------------------------------ raw JSON-RPC lines

ID = "@@ID@@"  # replaced by a fresh id of the drawn kind when the line is sent
ID_KINDS = ["int"] * 4 + ["str"] * 3 + ["float", "bool", "null", "missing", "array"]


@dataclass
class RpcLine:
    """One line for the stdio server. ``answer``: the response that must come back for it
    (``result`` for a tool call answered as a tool result or error, ``error`` for a JSON-RPC
    error, None when no answer is required); ``case``: the tool call's arguments case."""

    kind: str
    text: bytes
    id_kind: str
    answer: str | None
    case: McpCase | None = None

    def describe(self) -> str:
        return f"{self.kind} line {SHORT.repr(self.text)} ({len(self.text)} bytes)"

    def _repr_pretty_(self, printer: Any, cycle: bool) -> None:
        printer.text(self.describe())

    __repr__ = describe


def _with_id(message: dict[str, Any], id_kind: str) -> dict[str, Any]:
    raw = {"int": Raw(ID), "str": Raw(f'"{ID}"'), "float": 1.5, "bool": True, "null": None, "array": [1]}
    out = dict(message)
    if id_kind != "missing":
        out = {"jsonrpc": out.pop("jsonrpc", "2.0"), "id": raw[id_kind], **out}
    return out


@st.composite
def rpc_line(draw: Any, tools: list[Any]) -> RpcLine:
    """A tools/call with fuzzed arguments, a malformed envelope, or garbage."""
    kind = draw(st.sampled_from(["call"] * 7 + ["envelope"] * 3 + ["garbage"]))
    id_kind = draw(st.sampled_from(ID_KINDS)) if kind != "call" else draw(st.sampled_from(["int", "str"]))
    answered = id_kind in ("int", "str")
    if kind == "call":
        tool = draw(st.sampled_from(tools))
        case = draw(mcp_case(tool.name, tool.input_schema, text_mode=True))
        params: dict[str, Any] = {"name": case.name}
        if case.klass != "no_arguments" or draw(st.booleans()):
            params["arguments"] = case.arguments
        message = _with_id({"jsonrpc": "2.0", "method": "tools/call", "params": params}, id_kind)
        text = dumps(message, ascii_only=case.klass == "surrogate" or draw(st.booleans()))
        protocol_error = case.klass in ("not_object", "unknown_tool")
        return RpcLine(kind, encode(text), id_kind, "error" if protocol_error else "result", case)
    if kind == "envelope":
        method = draw(st.sampled_from(["tools/call", "tools/list", "ping", "prompts/list", "resources/list",
                                       "bogus/method", "", "initialize"]))
        params = draw(st.sampled_from([None, "absent", [1, 2], "all", 5, {}, {"name": 5}, {"name": "query"},
                                       {"name": "query", "arguments": [1]}, {"arguments": {}}, {"cursor": 7}]))
        message: dict[str, Any] = {"jsonrpc": draw(st.sampled_from(["2.0"] * 4 + ["1.0", 2])), "method": method}
        if params != "absent":
            message["params"] = params
        if draw(st.integers(0, 5)) == 0:
            message.pop("method")
        text = dumps(_with_id(message, id_kind), ascii_only=True)
        return RpcLine(kind, encode(text), id_kind, "any" if answered and "method" in message else None)
    data = draw(st.sampled_from([b"this is not JSON", b"[1, 2]", b"[]", b"{", b'"str"', b"null", b"\xff\xfe{}",
                                 b'{"jsonrpc": "2.0", "id": 1, "method": "ping"', b"{}", b"   ",
                                 b'{"jsonrpc":"2.0","id":"' + b"x" * 300_000 + b'","method":"ping"}']))
    return RpcLine(kind, data, "fixed", None)


# ------------------------------------------------------------------ Claude Code hook payloads

HOOK_EVENTS = ["session-start", "post-tool-use", "pre-compact", "stop"]
_TRANSCRIPTS = st.sampled_from([str(FIXTURES / "claude_code_session.jsonl"), "/nonexistent/t.jsonl", "", "@@ROOT@@"])


@st.composite
def hook_case(draw: Any) -> tuple[str, str, bytes]:
    """(event, class, stdin) for ``python -m ragit.cli.hook <event> --cwd <root>``."""
    event = draw(st.sampled_from(HOOK_EVENTS))
    payload = draw(st.fixed_dictionaries(
        {"session_id": st.sampled_from(["7f3c2a9e", "../x", "s1"]), "hook_event_name": st.just(event)},
        optional={"tool_use_id": st.sampled_from(["toolu_01", "../../x", ""]), "tool_name": st.sampled_from(["Bash", ""]),
                  "tool_response": st.one_of(any_json, st.integers(1, 3).map(lambda k: "output line\n" * 6000 * k)),
                  "transcript_path": _TRANSCRIPTS, "cwd": st.sampled_from(["@@ROOT@@", "/", "relative"]),
                  "tool_input": any_json}))
    klass = draw(weighted([("valid", 10), ("surrogate", 3), ("non_finite", 2), ("deep", 2), ("wrong_type", 3),
                           ("garbage", 2)]))
    if klass == "garbage":
        return event, klass, draw(st.sampled_from([b"", b"not json", b"[1]", b"\xff", b"null", b"{"]))
    value, _, klass = mutate(draw, klass, payload, schema=None, command=None, text_mode=True, limits=MCP_LIMITS)
    return event, klass, encode(dumps(value, ascii_only=True))
