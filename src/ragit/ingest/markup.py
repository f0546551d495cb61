"""Section headings of reStructuredText and AsciiDoc docs: chunkers ``rst`` and ``asciidoc``.

Markdown's ``#`` headings (:mod:`ragit.ingest.markdown`) mean nothing in these formats, so
before this module every ``.rst`` and ``.adoc`` doc was one section titled ``Introduction``,
cut in windows: a Python project's whole manual cited as "Introduction", and none of its section
titles searchable. Sections here are found by each format's own heading syntax; they are then
chunked exactly as Markdown sections are (§8.5's windows), and titled with the heading's text.

- **reStructuredText** (and plain text): a title is a line of text underlined (and optionally overlined) by a
  line of one repeated punctuation character, at least as long as the title or four long, the
  title standing after a blank line (or at the start). Levels follow the order in which the
  adornment styles first appear, as docutils assigns them. The title and its adornment lines
  belong to no section's content (as a Markdown heading line does not).
- **AsciiDoc**: ``= Title`` to ``====== Title`` (and Markdown-style ``#`` headings, which
  AsciiDoc accepts), outside delimited blocks (a line of four or more ``-``, ``.``, ``+``, ``/``,
  ``=``, ``*`` or ``_``, or a ```` ``` ```` fence, opens a block the same line closes).
"""

from __future__ import annotations

import re
from collections.abc import Callable

Line = tuple[int, str]  # (1-based line number in the file, text)
Found = tuple[str, int, list[Line]]  # (title, level, content lines)

#: The chunker of a doc by its file name: Markdown unless the extension is one of these. Plain
#: text is read as reStructuredText, whose underlined titles are plain text's own convention (a
#: ``README.txt``'s ``Installation`` over a line of ``-``; Django writes its manual in ``.txt``).
DOC_CHUNKERS = {".rst": "rst", ".txt": "rst", ".adoc": "asciidoc", ".asciidoc": "asciidoc"}
#: Every doc chunker's name: a record with one of these is a doc's (``bundle.kind_of``).
DOC_CHUNKER_NAMES = frozenset({"markdown", *DOC_CHUNKERS.values()})

# a line of one punctuation character repeated (at least three times), trailing spaces allowed
_ADORNMENT = re.compile(r"([!-/:-@\[-`{-~])\1{2,}[ \t]*$")
_ASCIIDOC_HEADING = re.compile(r"(={1,6}|#{1,6})[ \t]+(\S.*?)[ \t]*$")
_ASCIIDOC_DELIMITER = re.compile(r"([-.+/=*_])\1{3,}[ \t]*$|(`{3,})")


def doc_chunker(path: str) -> str:
    """``rst``, ``asciidoc`` or ``markdown``: the chunker a doc at ``path`` is cut with."""
    dot = path.rfind(".")
    return DOC_CHUNKERS.get(path[dot:].lower(), "markdown") if dot > path.rfind("/") else "markdown"


def _adornment(line: str) -> str | None:
    """The character of an adornment line, or None."""
    return line[0] if line[:1] and _ADORNMENT.match(line) else None


def rst_sections(lines: list[Line]) -> list[Found]:
    """The sections of a reStructuredText body, text before the first title titled
    ``Introduction`` (level 1), as Markdown's are."""
    out: list[Found] = []
    title, level, current = "Introduction", 1, []
    styles: dict[tuple[str, bool], int] = {}
    n, i = len(lines), 0
    while i < n:
        text = lines[i][1]
        after_blank = i == 0 or not lines[i - 1][1].strip()
        found = None
        over = _adornment(text)
        if over and after_blank and i + 2 < n:  # overline, title, underline of the same character
            middle, under = lines[i + 1][1], lines[i + 2][1]
            if middle.strip() and _adornment(middle) is None and _adornment(under) == over \
                    and len(under.rstrip()) >= len(middle.strip()):
                found = (middle.strip(), (over, True), 3)
        if found is None and after_blank and i + 1 < n and text.strip() and not text[0].isspace() \
                and over is None:
            under = lines[i + 1][1]
            mark = _adornment(under)
            width = len(under.rstrip())
            if mark and (width >= len(text.rstrip()) or width >= 4):
                found = (text.strip(), (mark, False), 2)
        if found is None:
            current.append(lines[i])
            i += 1
            continue
        out.append((title, level, current))
        heading, style, used = found
        title, level, current = heading, styles.setdefault(style, len(styles) + 1), []
        i += used
    out.append((title, level, current))
    return out


def asciidoc_sections(lines: list[Line]) -> list[Found]:
    """The sections of an AsciiDoc body, text before the first heading titled ``Introduction``
    (level 1); ``= Title`` is level 1, ``== Section`` level 2, and so on."""
    out: list[Found] = []
    title, level, current = "Introduction", 1, []
    block: str | None = None  # the delimiter of the block the line is in
    for number, text in lines:
        delimiter = _ASCIIDOC_DELIMITER.match(text)
        if delimiter:
            mark = delimiter.group(1) or delimiter.group(2)
            if block is None:
                block = mark
            elif mark[0] == block[0] and len(mark) == len(block):
                block = None
        elif block is None:
            heading = _ASCIIDOC_HEADING.match(text)
            if heading:
                out.append((title, level, current))
                title, level, current = heading.group(2), len(heading.group(1)), []
                continue
        current.append((number, text))
    out.append((title, level, current))
    return out


SECTIONS: dict[str, Callable[[list[Line]], list[Found]]] = {"rst": rst_sections, "asciidoc": asciidoc_sections}
