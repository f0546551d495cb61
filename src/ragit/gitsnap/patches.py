"""Parse the unified diffs git prints (``git log -p``, ``git log -L``) into files and hunks.

One parser for ``why`` (line history) and the history index (``--scope history``). A hunk's
extent is taken from its ``@@ -a,b +c,d @@`` counts, never from what a line looks like, so a
removed line that reads ``--- a/x`` or ``diff --git`` cannot end a hunk early. Combined diffs of
merges (``diff --cc``, ``@@@``) and binary files have no hunks here.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

_HUNK = re.compile(r"^@@ -(\d+)(?:,(\d+))? \+(\d+)(?:,(\d+))? @@ ?(.*)$")
_ESCAPES = {"a": "\a", "b": "\b", "t": "\t", "n": "\n", "v": "\v", "f": "\f", "r": "\r", '"': '"', "\\": "\\"}


@dataclass(frozen=True)
class Hunk:
    """One ``@@`` block: old and new ranges, the header's context text and the body lines (each
    still carrying its ``' '``/``'-'``/``'+'``/``'\\'`` prefix)."""

    old_start: int
    old_count: int
    new_start: int
    new_count: int
    context: str
    lines: tuple[str, ...]

    def header(self) -> str:
        tail = f" {self.context}" if self.context else ""
        return f"@@ -{self.old_start},{self.old_count} +{self.new_start},{self.new_count} @@{tail}"

    def text(self) -> str:
        """The hunk as git printed it: header line, then the body."""
        return "\n".join((self.header(), *self.lines))

    @property
    def new_range(self) -> tuple[int, int] | None:
        """1-based inclusive new-side lines the hunk covers; None when it only removes lines."""
        if self.new_count == 0:
            return None
        return self.new_start, self.new_start + self.new_count - 1


@dataclass
class FileDiff:
    """One file of a patch: its old and new path (None for ``/dev/null``), binary or not, hunks."""

    old_path: str | None
    new_path: str | None
    binary: bool = False
    hunks: list[Hunk] = field(default_factory=list)

    @property
    def path(self) -> str:
        """The file's name after the change (before it, for a deletion)."""
        return self.new_path if self.new_path is not None else (self.old_path or "")


def unquote_path(raw: str) -> str:
    """A path as git prints it in headers: C-quoted (``"a\\tb"``) when it holds special bytes."""
    if not (len(raw) >= 2 and raw.startswith('"') and raw.endswith('"')):
        return raw
    body, out, i = raw[1:-1], bytearray(), 0
    while i < len(body):
        ch = body[i]
        if ch == "\\" and i + 1 < len(body):
            nxt = body[i + 1]
            if re.fullmatch(r"[0-7]{3}", body[i + 1:i + 4]):
                out.append(int(body[i + 1:i + 4], 8) & 0xFF)
                i += 4
                continue
            out.extend(_ESCAPES.get(nxt, nxt).encode("utf-8", "surrogateescape"))
            i += 2
            continue
        out.extend(ch.encode("utf-8", "surrogateescape"))
        i += 1
    return out.decode("utf-8", "surrogateescape")


def _side(raw: str, prefix: str) -> str | None:
    """The path of a ``---``/``+++`` line's value: None for ``/dev/null``, else without ``a/``/``b/``."""
    value = unquote_path(raw.split("\t", 1)[0] if not raw.startswith('"') else raw)
    if value == "/dev/null":
        return None
    return value[len(prefix):] if value.startswith(prefix) else value


def _header_name(rest: str) -> str | None:
    """The path of ``diff --git a/X b/X`` when both sides name the same file (a binary or
    mode-only change prints no ``---``/``+++`` lines); None when they differ."""
    if rest.startswith('"'):
        end = rest.find('" ', 1)
        while end != -1 and rest[end - 1] == "\\":
            end = rest.find('" ', end + 1)
        if end == -1:
            return None
        left, right = unquote_path(rest[:end + 1]), unquote_path(rest[end + 2:])
        return left[2:] if left[2:] == right[2:] else None
    n = len(rest)
    if n % 2 == 0 or not rest.startswith("a/"):
        return None
    left, right = rest[: n // 2], rest[n // 2 + 1:]
    return left[2:] if right.startswith("b/") and left[2:] == right[2:] else None


def parse_patch(text: str) -> list[FileDiff]:
    """The files of one commit's patch text (``diff --git`` blocks), in order."""
    files: list[FileDiff] = []
    lines = text.split("\n")
    i, n = 0, len(lines)
    current: FileDiff | None = None
    while i < n:
        line = lines[i]
        if line.startswith("diff --git "):
            name = _header_name(line[11:])
            current = FileDiff(name, name)  # ``---``/``+++``/``rename`` lines refine it
            files.append(current)
            i += 1
            continue
        if line.startswith(("diff --cc ", "diff --combined ")):
            current = None  # a merge's combined diff: skipped up to the next file
            i += 1
            continue
        if current is None:
            i += 1
            continue
        if line.startswith("--- "):
            current.old_path = _side(line[4:], "a/")
            i += 1
            continue
        if line.startswith("+++ "):
            current.new_path = _side(line[4:], "b/")
            i += 1
            continue
        if line.startswith("rename from "):
            current.old_path = unquote_path(line[12:])
        elif line.startswith("rename to "):
            current.new_path = unquote_path(line[10:])
        elif line.startswith("Binary files ") or line == "GIT binary patch":
            current.binary = True
        m = _HUNK.match(line)
        if m is None:
            i += 1
            continue
        old_start, new_start = int(m[1]), int(m[3])
        old_left = int(m[2]) if m[2] is not None else 1
        new_left = int(m[4]) if m[4] is not None else 1
        old_count, new_count = old_left, new_left
        body: list[str] = []
        i += 1
        while i < n and (old_left > 0 or new_left > 0 or (i < n and lines[i].startswith("\\"))):
            row = lines[i]
            tag = row[:1]
            if tag == " " or row == "":
                old_left -= 1
                new_left -= 1
                row = row or " "
            elif tag == "-":
                old_left -= 1
            elif tag == "+":
                new_left -= 1
            elif tag != "\\":
                break  # not a body line: the counts were wrong, stop here
            body.append(row)
            i += 1
        current.hunks.append(Hunk(old_start, old_count, new_start, new_count, m[5], tuple(body)))
    return files
