"""Formatting-preserving edits of JSON (and JSONC) client configuration files.

Client configs are hand-edited and sometimes large (``~/.claude.json``); re-serialising them
would reorder or reformat text that is not ours. So every change here is a *splice*: one span of
the original text replaced by new text, placed in the file's own indentation. A splice is
exactly invertible, which is how ``setup --uninstall`` restores a file byte for byte, and the
structural removals below (member or element by value) keep edits made after setup.

The scanner accepts JSONC (``//`` and ``/* */`` comments, trailing commas) because VS Code
and OpenCode read their configs that way.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from json.decoder import scanstring
from typing import Any

_NUMBER = re.compile(r"-?(?:0|[1-9]\d*)(?:\.\d+)?(?:[eE][+-]?\d+)?")
_LITERALS = {"true": True, "false": False, "null": None}


class JsonEditError(ValueError):
    """The text is not JSON(C), or a key on the edit path holds the wrong kind of value."""

    def __init__(self, reason: str, message: str):
        super().__init__(message)
        self.reason = reason


@dataclass
class Node:
    """A parsed value and its span ``text[start:end]``."""

    start: int
    end: int
    kind: str  # object | array | scalar
    value: Any = None
    members: list[tuple[str, int, Node]] = field(default_factory=list)  # (key, key_start, value)
    items: list[Node] = field(default_factory=list)


@dataclass
class Splice:
    """``text[at:at+len(removed)]`` was replaced by ``inserted`` (``at`` in the old text)."""

    at: int
    removed: str
    inserted: str

    def apply(self, text: str) -> str:
        return text[: self.at] + self.inserted + text[self.at + len(self.removed):]

    def invert(self, text: str) -> str:
        """Undo this splice on the text it produced."""
        return text[: self.at] + self.removed + text[self.at + len(self.inserted):]

    def to_dict(self) -> dict[str, Any]:
        return {"at": self.at, "removed": self.removed, "inserted": self.inserted}

    @classmethod
    def from_dict(cls, raw: dict[str, Any]) -> Splice:
        return cls(int(raw["at"]), str(raw["removed"]), str(raw["inserted"]))


# ------------------------------------------------------------------ scanning

class _Scanner:
    def __init__(self, text: str):
        self.text = text
        self.i = 0

    def fail(self, what: str) -> JsonEditError:
        line = self.text.count("\n", 0, self.i) + 1
        return JsonEditError("invalid_json", f"{what} at line {line}")

    def skip(self) -> None:
        """Whitespace and comments."""
        t, n = self.text, len(self.text)
        while self.i < n:
            c = t[self.i]
            if c in " \t\r\n\ufeff":
                self.i += 1
            elif t.startswith("//", self.i):
                end = t.find("\n", self.i)
                self.i = n if end < 0 else end + 1
            elif t.startswith("/*", self.i):
                end = t.find("*/", self.i + 2)
                if end < 0:
                    raise self.fail("unterminated comment")
                self.i = end + 2
            else:
                return

    def string(self) -> str:
        try:
            value, self.i = scanstring(self.text, self.i + 1, True)
        except ValueError:
            raise self.fail("invalid string") from None
        return value

    def value(self) -> Node:
        self.skip()
        t, start = self.text, self.i
        if start >= len(t):
            raise self.fail("unexpected end of text")
        c = t[start]
        if c == "{":
            return self._object()
        if c == "[":
            return self._array()
        if c == '"':
            value = self.string()
            return Node(start, self.i, "scalar", value)
        for word, literal in _LITERALS.items():
            if t.startswith(word, start):
                self.i = start + len(word)
                return Node(start, self.i, "scalar", literal)
        match = _NUMBER.match(t, start)
        if not match:
            raise self.fail("unexpected character")
        self.i = match.end()
        return Node(start, self.i, "scalar", json.loads(match.group()))

    def _object(self) -> Node:
        node = Node(self.i, 0, "object", {})
        self.i += 1
        while True:
            self.skip()
            if self.i < len(self.text) and self.text[self.i] == "}":
                break
            if self.i >= len(self.text) or self.text[self.i] != '"':
                raise self.fail("expected a key")
            key_start = self.i
            key = self.string()
            self.skip()
            if self.i >= len(self.text) or self.text[self.i] != ":":
                raise self.fail("expected ':'")
            self.i += 1
            child = self.value()
            node.members.append((key, key_start, child))
            node.value[key] = child.value
            self.skip()
            if self.i < len(self.text) and self.text[self.i] == ",":
                self.i += 1
                continue
            self.skip()
            if self.i < len(self.text) and self.text[self.i] == "}":
                break
            raise self.fail("expected ',' or '}'")
        self.i += 1
        node.end = self.i
        return node

    def _array(self) -> Node:
        node = Node(self.i, 0, "array", [])
        self.i += 1
        while True:
            self.skip()
            if self.i < len(self.text) and self.text[self.i] == "]":
                break
            child = self.value()
            node.items.append(child)
            node.value.append(child.value)
            self.skip()
            if self.i < len(self.text) and self.text[self.i] == ",":
                self.i += 1
                continue
            self.skip()
            if self.i < len(self.text) and self.text[self.i] == "]":
                break
            raise self.fail("expected ',' or ']'")
        self.i += 1
        node.end = self.i
        return node


def parse(text: str) -> Node:
    """The document's root node; JsonEditError when the text is not one JSON(C) value."""
    scanner = _Scanner(text)
    root = scanner.value()
    scanner.skip()
    if scanner.i != len(text):
        raise scanner.fail("unexpected text after the document")
    return root


def parse_object(text: str) -> Node:
    root = parse(text)
    if root.kind != "object":
        raise JsonEditError("not_an_object", "the file's top-level value is not an object")
    return root


def member(node: Node, key: str) -> tuple[str, int, Node] | None:
    """The last member named ``key`` (JSON: the last duplicate wins)."""
    found = None
    for entry in node.members:
        if entry[0] == key:
            found = entry
    return found


def lookup(root: Node, path: list[str]) -> Node | None:
    node: Node | None = root
    for key in path:
        if node is None or node.kind != "object":
            return None
        entry = member(node, key)
        node = entry[2] if entry else None
    return node


# ------------------------------------------------------------------ layout

def indent_unit(text: str) -> str:
    """The file's indentation step (its first indented line), two spaces when it has none."""
    match = re.search(r"\n([ \t]+)[^\s]", text)
    if not match:
        return "  "
    ws = match.group(1)
    return "\t" if ws.startswith("\t") else ws


def line_indent(text: str, pos: int) -> str:
    start = text.rfind("\n", 0, pos) + 1
    match = re.match(r"[ \t]*", text[start:])
    return match.group() if match else ""


def newline_of(text: str) -> str:
    """``\r\n`` for a file written with Windows line ends, else ``\n``."""
    return "\r\n" if "\r\n" in text else "\n"


def _lines(text: str, inserted: str) -> str:
    return inserted.replace("\n", "\r\n") if newline_of(text) == "\r\n" else inserted


def dump(value: Any, unit: str, indent: str) -> str:
    """``value`` laid out like the file: ``unit`` per level, continuation lines at ``indent``."""
    return json.dumps(value, indent=unit, ensure_ascii=False).replace("\n", "\n" + indent)


def _after_value(text: str, end: int) -> tuple[int, bool]:
    """The position after a value's trailing comma when it has one (JSONC), and whether it did."""
    scanner = _Scanner(text)
    scanner.i = end
    scanner.skip()
    if scanner.i < len(text) and text[scanner.i] == ",":
        return scanner.i + 1, True
    return end, False


def _insert(text: str, container: Node, entries: list[Any], entry_text) -> Splice:
    """Splice one more member or element into ``container`` (``entries`` its current ones).

    ``entry_text(indent)`` renders the new entry for a given indentation. An empty container
    gets the entry on its own line; a multi-line one gets it after its last entry, aligned with
    the first; a single-line one gets it inline.
    """
    unit = indent_unit(text)
    base = line_indent(text, container.start)
    if not entries:
        inner_start, inner_end = container.start + 1, container.end - 1
        inner = text[inner_start:inner_end]
        indent = base + unit
        body = "\n" + indent + entry_text(indent) + "\n" + base
        if inner.strip():  # only comments inside: keep them, add before the closing bracket
            return Splice(inner_end, "", _lines(text, body))
        return Splice(inner_start, inner, _lines(text, body))
    first_start = entries[0][1] if container.kind == "object" else entries[0].start
    last_end = entries[-1][2].end if container.kind == "object" else entries[-1].end
    at, trailing = _after_value(text, last_end)
    if "\n" in text[container.start:first_start]:
        indent = line_indent(text, first_start)
        rendered = "\n" + indent + entry_text(indent)
    else:
        rendered = " " + entry_text(None)
    return Splice(at, "", _lines(text, rendered + "," if trailing else "," + rendered))


def _member_text(key: str, value: Any, unit: str):
    def render(indent: str | None) -> str:
        body = json.dumps(value, ensure_ascii=False) if indent is None else dump(value, unit, indent)
        return json.dumps(key, ensure_ascii=False) + ": " + body
    return render


def _element_text(value: Any, unit: str):
    def render(indent: str | None) -> str:
        return json.dumps(value, ensure_ascii=False) if indent is None else dump(value, unit, indent)
    return render


# ------------------------------------------------------------------ edits

def _walk(root: Node, path: list[str], last_kind: str) -> tuple[Node, int]:
    """The deepest existing container on ``path`` and how many keys of it exist.

    Raises JsonEditError when a key on the way holds something other than an object (or, for
    the last key, other than ``last_kind``).
    """
    node = root
    for depth, key in enumerate(path):
        entry = member(node, key)
        if entry is None:
            return node, depth
        child = entry[2]
        expected = last_kind if depth == len(path) - 1 else "object"
        if child.kind != expected:
            dotted = ".".join(path[: depth + 1])
            raise JsonEditError("unexpected_type", f"{dotted} is not an {expected}")
        node = child
    return node, len(path)


def _nest(path: list[str], value: Any) -> Any:
    for key in reversed(path):
        value = {key: value}
    return value


def _insert_recorded(text: str, container: Node, entries: list[Any], entry_text, op: dict[str, Any]) -> Splice:
    """:func:`_insert`, remembering what was inside the container when it was empty, so that
    taking the entry out again restores its spacing and comments."""
    if not entries:
        op["emptyInner"] = text[container.start + 1: container.end - 1]
    return _insert(text, container, entries, entry_text)


def set_member(text: str, path: list[str], value: Any) -> tuple[Splice | None, dict[str, Any]]:
    """Make ``path`` hold ``value``. Returns the splice (None when already so) and the op to record:
    ``{kind, path, value, createdParents, previous?}`` (``previous``: the value replaced)."""
    root = parse_object(text)
    op: dict[str, Any] = {"kind": "json-member", "path": list(path), "value": value, "createdParents": 0}
    unit = indent_unit(text)
    parent, depth = _walk(root, path[:-1], "object")
    if depth < len(path) - 1:
        rest = path[depth:]
        op["createdParents"] = len(rest) - 1
        return _insert_recorded(text, parent, parent.members,
                                _member_text(rest[0], _nest(rest[1:], value), unit), op), op
    existing = member(parent, path[-1])
    if existing is None:
        return _insert_recorded(text, parent, parent.members, _member_text(path[-1], value, unit), op), op
    node = existing[2]
    if node.value == value:
        return None, op
    op["previous"] = text[node.start:node.end]
    return Splice(node.start, op["previous"], _lines(text, dump(value, unit, line_indent(text, existing[1])))), op


def append_element(text: str, path: list[str], value: Any) -> tuple[Splice | None, dict[str, Any]]:
    """Add ``value`` to the array at ``path`` (created when missing) unless an equal element is there."""
    root = parse_object(text)
    op: dict[str, Any] = {"kind": "json-element", "path": list(path), "value": value, "createdParents": 0}
    unit = indent_unit(text)
    node, depth = _walk(root, path, "array")
    if depth < len(path):
        rest = path[depth:]
        op["createdParents"] = len(rest)
        return _insert_recorded(text, node, node.members,
                                _member_text(rest[0], _nest(rest[1:], [value]), unit), op), op
    if value in node.value:
        return None, op
    return _insert_recorded(text, node, node.items, _element_text(value, unit), op), op


# ------------------------------------------------------------------ structural removal

def _remove_entry(text: str, container: Node, index: int, empty_inner: str = "") -> str:
    """``text`` without entry ``index`` of ``container`` and the comma that joined it; a container
    left empty gets ``empty_inner`` between its brackets."""
    spans = ([(k_start, node.end) for _, k_start, node in container.members] if container.kind == "object"
             else [(node.start, node.end) for node in container.items])
    start, end = spans[index]
    if len(spans) == 1:
        return text[: container.start + 1] + empty_inner + text[container.end - 1:]
    if index < len(spans) - 1:
        return text[:start] + text[spans[index + 1][0]:]
    return text[: spans[index - 1][1]] + text[end:]


def remove_op(text: str, op: dict[str, Any]) -> tuple[str, str | None]:
    """Undo one recorded op on text edited since setup: remove exactly the member or element it
    added (or put back the value it replaced), then the parents it created once they are empty.

    Returns the new text and, when the entry is gone or was changed by someone else, a reason
    why nothing was removed.
    """
    root = parse_object(text)
    path = list(op["path"])
    if op["kind"] == "json-member":
        parent = lookup(root, path[:-1])
        entry = member(parent, path[-1]) if parent is not None and parent.kind == "object" else None
        if entry is None:
            return text, "absent"
        if entry[2].value != op["value"]:
            return text, "changed"
        if "previous" in op:
            node = entry[2]
            return text[: node.start] + op["previous"] + text[node.end:], None
        created = int(op.get("createdParents", 0))
        index = max(i for i, m in enumerate(parent.members) if m[0] == path[-1])
        text = _remove_entry(text, parent, index, "" if created else op.get("emptyInner", ""))
        container_path = path[:-1]
    else:
        array = lookup(root, path)
        if array is None or array.kind != "array" or op["value"] not in array.value:
            return text, "absent"
        created = int(op.get("createdParents", 0))  # counts the array itself when it was created
        text = _remove_entry(text, array, array.value.index(op["value"]), "" if created else op.get("emptyInner", ""))
        container_path = path
    for level in range(created, 0, -1):
        root = parse_object(text)
        node = lookup(root, container_path)
        if node is None or (node.members if node.kind == "object" else node.items):
            break
        parent = lookup(root, container_path[:-1])
        index = max(i for i, m in enumerate(parent.members) if m[0] == container_path[-1])
        inner = op.get("emptyInner", "") if level == 1 else ""  # the container setup inserted into
        text = _remove_entry(text, parent, index, inner)
        container_path = container_path[:-1]
    return text, None


def is_empty_object(text: str) -> bool:
    """True when the document is an object without members (what a created file leaves behind)."""
    try:
        root = parse(text)
    except JsonEditError:
        return False
    return root.kind == "object" and not root.members
