"""Minimal front matter (knowledge §8.2), kept to the reference's rules rather than full YAML.

Only flat ``key: value`` lines matter (``type`` drives doc-type detection); anything richer is
ignored instead of failing the document.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

_FIELD = re.compile(r"^([A-Za-z0-9_-]+):(.*)$")
_OPEN = "---\n"
_CLOSE = "\n---"


@dataclass(frozen=True)
class FrontMatter:
    """Parsed fields, the body after the block, and the body's 1-based first line in the file."""

    fields: dict[str, str] = field(default_factory=dict)
    body: str = ""
    body_start_line: int = 1


def _unquote(value: str) -> str:
    if len(value) >= 2 and value.startswith('"') and value.endswith('"'):
        return value[1:-1]
    return value


def parse_front_matter(text: str) -> FrontMatter:
    """Split LF-normalised ``text`` into front-matter fields and body.

    The block opens only with ``---`` + LF at offset 0 and closes at the first LF + ``---``
    found from offset 4; without a closing marker the whole text is body.
    """
    if not text.startswith(_OPEN):
        return FrontMatter({}, text, 1)
    close = text.find(_CLOSE, len(_OPEN))
    if close < 0:
        return FrontMatter({}, text, 1)
    fields: dict[str, str] = {}
    for line in text[len(_OPEN):close].split("\n"):
        match = _FIELD.match(line)
        if match:
            fields[match.group(1)] = _unquote(match.group(2).strip())
    body_offset = close + len(_CLOSE)
    if text.startswith("\n", body_offset):
        body_offset += 1
    return FrontMatter(fields, text[body_offset:], text.count("\n", 0, body_offset) + 1)
