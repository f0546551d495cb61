"""A Python file's skeleton: its source with every function body reduced to one ``pass``.

The Python chunker reads module and class bodies and the branches of ``if``/``try``/``with``
blocks from a syntax tree, never a function's body, yet ``ast.parse`` builds and frees an object
for every expression in it: on sympy that was 5.4 s of a 14 s ingest. The skeleton keeps every
line (same line numbers), every decorator and header, and each function's last body line, where
its ``pass`` stands, so each ``FunctionDef`` keeps its ``lineno``, ``end_lineno`` and
``col_offset`` and every statement outside function bodies parses as before.

A body is cut only where the cut is certain: strings and comments are lexed first (a ``def`` or
a dedent inside a string or a comment is no statement), brackets and backslashes must be closed
where the body ends, and files with tabs or form feeds in their indentation, or carriage returns,
are left whole (:func:`skeleton` returns None). The caller parses the whole file when the
skeleton does not parse, so a skeleton never makes a file fail that parsed before.
"""

from __future__ import annotations

import re
from bisect import bisect_left
from functools import lru_cache

# strings (triple-quoted first) and comments, in one left-to-right scan: a quote inside a comment
# or a ``#`` inside a string is theirs. Raw strings lex alike (a backslash still pairs with the
# next character), so string prefixes need no matching.
_TOKENS = re.compile(
    r'"""[^"\\]*(?:(?:\\.|"(?!""))[^"\\]*)*"""'
    r"|'''[^'\\]*(?:(?:\\.|'(?!''))[^'\\]*)*'''"
    r'|"[^"\\\n]*(?:\\.[^"\\\n]*)*"'
    r"|'[^'\\\n]*(?:\\.[^'\\\n]*)*'"
    r"|#[^\n]*",
    re.S,
)
# (a newline first rather than ``^`` with re.M: the engine then skips to each newline in C)
_DEF = re.compile(r"\n( *)(?:async[ \t]+)?def[ \t]")
_HEADER = re.compile(r"[()\[\]{}:\n]")
_UNSAFE = re.compile(r"\n *[\t\f]")
_OPEN, _CLOSE = "([{", ")]}"


@lru_cache(maxsize=None)
def _dedent(column: int) -> re.Pattern[str]:
    """A line that starts code at ``column`` or left of it."""
    return re.compile(r"\n {0,%d}[^ \n]" % column)


def _blanked(source: str) -> tuple[str, list[int], list[int]]:
    """``source`` with comments as spaces and strings as ``x`` (newlines kept, a multi-line
    string's inner lines blank but for its closing quote), and the spans of multi-line strings."""
    parts: list[str] = []
    starts: list[int] = []
    ends: list[int] = []
    last = 0
    for m in _TOKENS.finditer(source):
        a, b = m.span()
        parts.append(source[last:a])
        token = m.group()
        if token[0] == "#":
            parts.append(" " * (b - a))
        elif "\n" in token:
            starts.append(a)
            ends.append(b)
            lines = token.split("\n")
            parts.append("\n".join(["x" * len(lines[0])] + [" " * len(line) for line in lines[1:-1]]
                                   + [" " * (len(lines[-1]) - 1) + "x"]))
        else:
            parts.append("x" * (b - a))
        last = b
    parts.append(source[last:])
    return "".join(parts), starts, ends


def _in_string(offset: int, starts: list[int], ends: list[int]) -> bool:
    """Whether the line starting at ``offset`` starts inside a multi-line string (no statement)."""
    k = bisect_left(starts, offset) - 1  # the last string opened before the line
    return k >= 0 and offset < ends[k]


def _header_colon(blank: str, at: int) -> int:
    """Offset of the ``:`` that ends the header starting at ``at``, or -1 when the header does not
    close on a line of its own (a backslash, or no colon)."""
    depth = 0
    for m in _HEADER.finditer(blank, at):
        ch = m.group()
        if ch in _OPEN:
            depth += 1
        elif ch in _CLOSE:
            depth -= 1
        elif depth == 0:
            return m.start() if ch == ":" else -1
    return -1


def _balanced(segment: str) -> bool:
    """Whether every bracket ``segment`` opens is closed in it and it ends on no backslash."""
    return all(segment.count(o) == segment.count(c) for o, c in zip(_OPEN, _CLOSE)) \
        and not segment.rstrip().endswith("\\")


def skeleton(source: str) -> str | None:
    """``source`` with each function body that can be cut for certain replaced by blank lines and
    one ``pass`` on the body's last line; None when the file is left whole."""
    text = "\n" + source  # every line then starts after a newline (see _DEF)
    if "\r" in source or ("\t" in source or "\f" in source) and _UNSAFE.search(text):
        return None
    blank, starts, ends = _blanked(text)
    out: list[str] = []
    keep = 1
    pos = 0
    size = len(blank)
    while (m := _DEF.search(blank, pos)) is not None:
        pos = m.end()
        colon = _header_colon(blank, pos)
        if colon < 0:
            continue
        body = blank.find("\n", colon) + 1  # (0: the file ends on the header's line)
        if body == 0 or blank[colon + 1:body].strip():
            continue  # the body is on the header's line
        column = len(m.group(1))
        finder = _dedent(column)
        at = body - 1
        while (d := finder.search(blank, at)) is not None and _in_string(d.start() + 1, starts, ends):
            at = blank.find("\n", d.start() + 1)  # a line inside a string: look from the next one
            if at < 0:
                d = None
                break
        tail = blank[body:size if d is None else d.start()].rstrip()
        if not tail or not _balanced(tail):
            continue  # a bracket or a backslash goes on past the dedent: not cut
        last = body + len(tail)  # just past the body's last character
        last_start = max(blank.rfind("\n", body, last) + 1, body)
        last_end = blank.find("\n", last)
        if last_end < 0:
            last_end = size
        out.append(text[keep:body])
        out.append("\n" * blank.count("\n", body, last_start))
        out.append(" " * (column + 1) + "pass")
        keep = pos = last_end
    if not out:
        return source
    out.append(text[keep:])
    return "".join(out)
