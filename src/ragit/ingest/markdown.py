"""Markdown sections (knowledge §8.4) and the ``markdown`` chunker, version 1 (§8.5).

Sections follow headings outside fenced code blocks and keep the original line number of every
line (front-matter lines count), so a chunk's line range can be cited against the file in git.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from .chunks import Chunk
from .frontmatter import FrontMatter, parse_front_matter

MAX_CHARS = 1000
OVERLAP_CHARS = 120
SPLIT_MIN_INDEX = 500  # a long line is cut at its last space only when that space is beyond here

_HEADING = re.compile(r"^(#{1,6})\s+(.+)$")
_FENCE = re.compile(r"^ {0,3}(`{3,}|~{3,})")
# First characters of every line _HEADING or _FENCE can match (a fence may be indented by spaces).
_MARK_STARTS = frozenset("#`~ ")

Line = tuple[int, str]  # (1-based line number in the file, text)


@dataclass(frozen=True)
class Section:
    """A titled run of body lines; ``content`` is the lines joined with LF and trimmed."""

    title: str
    level: int
    lines: tuple[Line, ...]

    @property
    def content(self) -> str:
        return "\n".join(text for _, text in self.lines).strip()


def _is_fence_close(line: str, marker: str) -> bool:
    match = _FENCE.match(line)
    return (
        match is not None
        and match.group(1)[0] == marker[0]
        and len(match.group(1)) >= len(marker)
        and not line[match.end():].strip()
    )


def split_sections(text: str, front: FrontMatter | None = None, syntax: str = "markdown") -> list[Section]:
    """Sections of an LF-normalised Markdown file (or, by ``syntax``, a reStructuredText or
    AsciiDoc one: :mod:`ragit.ingest.markup`); never empty for a non-blank body. ``front`` is
    ``parse_front_matter(text)`` when the caller has it already."""
    return [section for section, _ in _sections(text, front, syntax)]


def _sections(text: str, front: FrontMatter | None, syntax: str = "markdown") -> list[tuple[Section, str]]:
    """:func:`split_sections` with each section's ``content`` (the chunker needs it: made once)."""
    if front is None:
        front = parse_front_matter(text)
    body_lines = list(enumerate(front.body.split("\n"), start=front.body_start_line))
    if syntax == "markdown":
        sections = _markdown_sections(body_lines)
    else:
        from .markup import SECTIONS

        sections = [Section(title, level, tuple(lines)) for title, level, lines in SECTIONS[syntax](body_lines)]
    kept = [(section, content) for section in sections if (content := section.content)]
    if kept:
        return kept
    body = Section("Body", 1, tuple(body_lines))
    content = body.content
    return [(body, content)] if content else []


def _markdown_sections(body_lines: list[Line]) -> list[Section]:
    """The sections ``#`` headings open outside fenced code blocks (§8.4)."""
    sections: list[Section] = []
    title, level, current = "Introduction", 1, []
    fence: str | None = None
    for number, line in body_lines:
        # a fence or a heading starts with one of these: other lines skip both patterns
        if line[:1] in _MARK_STARTS:
            if fence is not None:
                if _is_fence_close(line, fence):
                    fence = None
            else:
                opened = _FENCE.match(line)
                if opened:
                    fence = opened.group(1)
                else:
                    heading = _HEADING.match(line)
                    if heading:
                        sections.append(Section(title, level, tuple(current)))
                        title, level, current = heading.group(2).strip(), len(heading.group(1)), []
                        continue
        current.append((number, line))
    sections.append(Section(title, level, tuple(current)))
    return sections


def _trim_blank(lines: list[Line]) -> list[Line]:
    start, end = 0, len(lines)
    while start < end and not lines[start][1].strip():
        start += 1
    while end > start and not lines[end - 1][1].strip():
        end -= 1
    return lines[start:end]


def _pieces(lines: list[Line]) -> list[Line]:
    """Each line, with lines over MAX cut at a late space (or hard) into sub-pieces."""
    pieces: list[Line] = []
    for number, line in lines:
        rest = line
        while len(rest) > MAX_CHARS:
            cut = rest.rfind(" ", 0, MAX_CHARS + 1)
            if cut <= SPLIT_MIN_INDEX:
                cut = MAX_CHARS
            pieces.append((number, rest[:cut]))
            rest = rest[cut:].lstrip(" ")
        if rest or len(line) <= MAX_CHARS:
            pieces.append((number, rest))
    return pieces


def _window_chunks(title: str, pieces: list[Line]) -> list[tuple[str, int, int, str]]:
    """Greedy windows of ≤ MAX chars with whole-line overlap of ≤ OVERLAP chars."""
    out: list[tuple[str, int, int, str]] = []
    i, n = 0, len(pieces)
    while i < n:
        end, length = i + 1, len(pieces[i][1])
        while end < n and length + 1 + len(pieces[end][1]) <= MAX_CHARS:
            length += 1 + len(pieces[end][1])
            end += 1
        window = _trim_blank(pieces[i:end])
        if window:
            text = "\n".join(t for _, t in window).strip()
            out.append((title, window[0][0], window[-1][0], text))
        if end >= n:
            break
        j, tail = end, 0
        while j - 1 > i and tail + len(pieces[j - 1][1]) + (1 if j < end else 0) <= OVERLAP_CHARS:
            tail += len(pieces[j - 1][1]) + (1 if j < end else 0)
            j -= 1
        i = j
    return out


def chunk_markdown(text: str, front: FrontMatter | None = None, syntax: str = "markdown") -> list[Chunk]:
    """Chunks of a masked, LF-normalised Markdown file (or a reStructuredText or AsciiDoc one, by
    ``syntax``: the chunker :func:`ragit.ingest.markup.doc_chunker` names); titles are the
    section titles."""
    raw: list[tuple[str, int, int, str]] = []
    for section, content in _sections(text, front, syntax):
        lines = _trim_blank(list(section.lines))
        if len(content) <= MAX_CHARS:
            raw.append((section.title, lines[0][0], lines[-1][0], content))
        else:
            raw.extend(_window_chunks(section.title, _pieces(lines)))
    return [Chunk(ordinal, title, start, end, body) for ordinal, (title, start, end, body) in enumerate(raw)]
