"""Splice edits of the two text formats setup writes besides JSON: a delimited Markdown section
(AGENTS.md, CLAUDE.md) and one TOML table (Codex ``[mcp_servers.ragit]``).

Both are located by their own text (the ragit markers, the table header), replaced in place
when present, appended otherwise, and removed together with the blank-line separator that was
added before them, so a removal undoes an append exactly.
"""

from __future__ import annotations

import re
from typing import Any

from .jsonedit import Splice

SECTION_BEGIN = "<!-- ragit:begin"
SECTION_END = "<!-- ragit:end -->"
_SECTION = re.compile(r"^<!-- ragit:begin[^\n]*-->[ \t]*\r?\n.*?^<!-- ragit:end -->[ \t]*(?:\r?\n|\Z)", re.M | re.S)
_ANY_HEADER = re.compile(r"^[ \t]*\[", re.M)


def separator_before(text: str) -> str:
    """What goes between existing text and an appended block: nothing, or up to one blank line."""
    plain = text.replace("\r\n", "\n")
    if not plain or plain.endswith("\n\n"):
        return ""
    return "\n" if plain.endswith("\n") else "\n\n"


def _place(text: str, block: str, found: tuple[int, int] | None, anchor: tuple[int, str] | None,
           op: dict[str, Any]) -> Splice | None:
    """Replace the found block in place, or insert ``block`` at the anchor, or append it."""
    if "\r\n" in text:  # keep a Windows file's line ends
        block = block.replace("\n", "\r\n")
    if found is not None:
        start, end = found
        if text[start:end] == block:
            return None
        op["previous"] = text[start:end]
        return Splice(start, text[start:end], block)
    if anchor is not None and 0 <= anchor[0] <= len(text):
        at, sep = anchor
    else:
        at, sep = len(text), separator_before(text)
        if "\r\n" in text:
            sep = sep.replace("\n", "\r\n")
    op["separator"] = sep
    return Splice(at, "", sep + block)


def _remove(text: str, found: tuple[int, int] | None, op: dict[str, Any]) -> tuple[str, str | None, tuple[int, str] | None]:
    if found is None:
        return text, "absent", None
    start, end = found
    if "previous" in op:
        return text[:start] + op["previous"] + text[end:], None, None
    sep = op.get("separator", "")
    if sep and text[:start].endswith(sep):
        start -= len(sep)
    return text[:start] + text[end:], None, (start, sep)


# ------------------------------------------------------------------ markdown section

def find_section(text: str) -> tuple[int, int] | None:
    match = _SECTION.search(text)
    return (match.start(), match.end()) if match else None


def count_sections(text: str) -> int:
    return len(_SECTION.findall(text))


def set_section(text: str, block: str, anchor: tuple[int, str] | None = None) -> tuple[Splice | None, dict[str, Any]]:
    """Put the ragit section ``block`` into ``text``: replaced in place, or added at ``anchor``
    (where an earlier run had it) or at the end."""
    op: dict[str, Any] = {"kind": "md-section", "value": block}
    return _place(text, block, find_section(text), anchor, op), op


def remove_section(text: str, op: dict[str, Any]) -> tuple[str, str | None, tuple[int, str] | None]:
    """Remove the ragit section (the markers own it, whatever was edited inside) and the
    separator added before it; put back the section it replaced, if any."""
    return _remove(text, find_section(text), op)


# ------------------------------------------------------------------ TOML table

def _header(keys: list[str]) -> re.Pattern[str]:
    parts = r"[ \t]*\.[ \t]*".join(rf'(?:{re.escape(k)}|"{re.escape(k)}")' for k in keys)
    return re.compile(rf"^[ \t]*\[[ \t]*{parts}[ \t]*\][ \t]*(?:#[^\r\n]*)?\r?$", re.M)


def _sub_header(keys: list[str]) -> re.Pattern[str]:
    parts = r"[ \t]*\.[ \t]*".join(rf'(?:{re.escape(k)}|"{re.escape(k)}")' for k in keys)
    return re.compile(rf"[ \t]*\[[ \t]*{parts}[ \t]*\.")


def find_table(text: str, keys: list[str]) -> tuple[int, int] | None:
    """The span of ``[a.b]`` and its keys and sub-tables, up to (not including) trailing blank lines."""
    match = _header(keys).search(text)
    if not match:
        return None
    start = match.start()
    end = len(text)
    sub = _sub_header(keys)
    for header in _ANY_HEADER.finditer(text, match.end()):
        if not sub.match(text, header.start()):
            end = header.start()
            break
    body = text[start:end]
    trimmed = body.rstrip(" \t\r\n")
    if len(trimmed) < len(body):
        trimmed += "\n"
    return start, start + len(trimmed)


def toml_string(value: str) -> str:
    """A TOML basic string (JSON's escapes are valid TOML escapes)."""
    import json

    return json.dumps(value, ensure_ascii=False)


def toml_table(keys: list[str], values: dict[str, Any]) -> str:
    """``[a.b]`` with string and string-array values, one per line."""
    lines = ["[" + ".".join(keys) + "]"]
    for key, value in values.items():
        if isinstance(value, list):
            rendered = "[" + ", ".join(toml_string(v) for v in value) + "]"
        elif isinstance(value, bool):
            rendered = "true" if value else "false"
        else:
            rendered = toml_string(value)
        lines.append(f"{key} = {rendered}")
    return "\n".join(lines) + "\n"


def set_table(text: str, keys: list[str], block: str, anchor: tuple[int, str] | None = None
              ) -> tuple[Splice | None, dict[str, Any]]:
    op: dict[str, Any] = {"kind": "toml-table", "path": list(keys), "value": block}
    return _place(text, block, find_table(text, keys), anchor, op), op


def remove_table(text: str, op: dict[str, Any]) -> tuple[str, str | None, tuple[int, str] | None]:
    found = find_table(text, list(op["path"]))
    if found is not None and "previous" not in op and text[found[0]:found[1]] != op["value"]:
        return text, "changed", None
    return _remove(text, found, op)
