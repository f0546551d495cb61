"""Path globs of knowledge §8.1, compiled to regular expressions.

Semantics: the pattern must match the whole repo-relative POSIX path, case-sensitively;
``**`` as a whole segment matches zero or more segments, ``*`` any run of characters except
``/``, ``?`` one character except ``/``, ``[...]`` a character class (``[!...]`` or ``[^...]``
negates; a class never matches ``/``), and a backslash makes the next character literal.
``**`` inside a segment (``a**b``) behaves like ``*``.
"""

from __future__ import annotations

import re
from collections.abc import Iterable


def _class(pattern: str, i: int) -> tuple[str, int] | None:
    """Translate the class starting at ``pattern[i] == '['``; None when unclosed or invalid."""
    j = i + 1
    negate = j < len(pattern) and pattern[j] in "!^"
    if negate:
        j += 1
    start = j
    if j < len(pattern) and pattern[j] == "]":
        j += 1  # a leading ']' is a literal member
    while j < len(pattern) and pattern[j] != "]":
        j += 1
    if j >= len(pattern):
        return None
    body = "".join(ch if ch == "-" else re.escape(ch) for ch in pattern[start:j])
    if body.startswith("-"):
        body = "\\" + body  # keep a leading '-' literal after the '/' of a negated class
    translated = "[^/" + body + "]" if negate else "(?!/)[" + body + "]"
    try:
        re.compile(translated)
    except re.error:  # e.g. a reversed range "[z-a]": match the text literally instead
        return None
    return translated, j + 1


def _segment(segment: str) -> str:
    """Regex for one path segment that is not a bare ``**``."""
    out: list[str] = []
    i = 0
    while i < len(segment):
        ch = segment[i]
        if ch == "*":
            while i < len(segment) and segment[i] == "*":
                i += 1
            out.append("[^/]*")
            continue
        if ch == "?":
            out.append("[^/]")
        elif ch == "[":
            translated = _class(segment, i)
            if translated is not None:
                out.append(translated[0])
                i = translated[1]
                continue
            out.append(re.escape(ch))
        elif ch == "\\" and i + 1 < len(segment):
            i += 1
            out.append(re.escape(segment[i]))
        else:
            out.append(re.escape(ch))
        i += 1
    return "".join(out)


def glob_to_regex(pattern: str) -> str:
    """Regex source (without anchors) equivalent to ``pattern``."""
    segments: list[str] = []
    for segment in pattern.split("/"):
        if not (segment == "**" and segments and segments[-1] == "**"):
            segments.append(segment)  # "**/**" means the same as "**"
    parts: list[str] = []
    last = len(segments) - 1
    for index, segment in enumerate(segments):
        if segment == "**":
            if index == last:
                # "a/**" also matches "a" (zero segments); a lone "**" matches any path.
                parts.append(".*" if index == 0 else "(?:/.*)?")
            else:
                parts.append("(?:.*/)?" if index == 0 else "/(?:.*/)?")
            continue
        prefix = "" if index == 0 or segments[index - 1] == "**" else "/"
        parts.append(prefix + _segment(segment))
    return "".join(parts)


def compile_glob(pattern: str) -> re.Pattern[str]:
    """One pattern as a compiled regex; use ``.fullmatch(path)``."""
    return re.compile(glob_to_regex(pattern), re.DOTALL)


class GlobSet:
    """Any-of a list of globs, compiled into a single alternation for speed."""

    def __init__(self, patterns: Iterable[str]):
        self.patterns: tuple[str, ...] = tuple(patterns)
        if self.patterns:
            source = "|".join(f"(?:{glob_to_regex(p)})" for p in self.patterns)
            self._regex: re.Pattern[str] | None = re.compile(source, re.DOTALL)
        else:
            self._regex = None

    def matches(self, path: str) -> bool:
        """True when at least one pattern matches the whole path."""
        return self._regex is not None and self._regex.fullmatch(path) is not None

    def __repr__(self) -> str:
        return f"GlobSet({list(self.patterns)!r})"


_GLOB_SPECIALS = frozenset("*?[\\")


def literal_prefix(pattern: str) -> str | None:
    """The pattern's leading run of plain segments (``"src/app/**"`` → ``"src/app"``): every path
    the pattern matches is that path or lies below it (the regex of :func:`glob_to_regex` begins
    with them literally, then ends or goes on with ``/``). None when the first segment is a
    wildcard, an escape, empty, ``.`` or ``..``: the pattern could match anywhere.

    Lets a listing ask git for that part of the tree alone instead of the whole of it."""
    plain: list[str] = []
    for segment in pattern.split("/"):
        if not segment or segment in (".", "..") or not _GLOB_SPECIALS.isdisjoint(segment):
            break
        plain.append(segment)
    return "/".join(plain) if plain else None
