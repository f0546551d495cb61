"""reStructuredText and AsciiDoc sections on any text (chunkers ``rst`` and ``asciidoc``): every
line of the body lands in exactly one section, in order and with its own number, except the
heading lines themselves (a title and its adornment lines); the chunks keep the file's line
numbers and every chunk's text is made of its own lines."""

from __future__ import annotations

import re

from hypothesis import given, settings
from hypothesis import strategies as st

from ragit.ingest.markdown import chunk_markdown, split_sections
from ragit.ingest.markup import _ADORNMENT

LINE = st.sampled_from([
    "", "", "Title", "Usage", "a longer paragraph line about nested schemas", "    indented literal",
    "-----", "=====", "~~~", "===============", "=====  =====", "::", ".. note::", "= Guide", "== Install",
    "=== Deeper", "----", "....", "```", "# Markdown style", "[source,shell]", "x" * 1200,
])
TEXT = st.lists(LINE, max_size=40).map("\n".join)
_ASCIIDOC_HEADING = re.compile(r"(={1,6}|#{1,6})[ \t]+\S")


def _body(text: str) -> list[tuple[int, str]]:
    return list(enumerate(text.split("\n"), start=1))


@settings(max_examples=300, deadline=None)
@given(text=TEXT, syntax=st.sampled_from(["rst", "asciidoc"]))
def test_every_body_line_but_a_heading_lands_in_one_section_in_order(text, syntax):
    sections = split_sections(text, syntax=syntax)
    assert sections == split_sections(text, syntax=syntax)  # deterministic
    if not text.strip():
        assert sections == []
        return
    kept = [line for s in sections for line in s.lines]
    numbers = [n for n, _ in kept]
    body = dict(_body(text))
    if [s.title for s in sections] == ["Body"]:  # nothing survived: the whole body, as Markdown's
        assert kept == _body(text)
        return
    assert numbers == sorted(set(numbers))  # each once, in the file's order
    assert all(body[n] == line for n, line in kept)  # with its own number
    # a line no section holds is blank (a section of blank lines is dropped) or a heading's: in
    # reStructuredText an adornment line or the title an adornment underlines, in AsciiDoc a
    # heading line
    for n in set(body) - set(numbers):
        line = body[n]
        if not line.strip():
            continue
        if syntax == "rst":
            assert _ADORNMENT.match(line) or _ADORNMENT.match(body.get(n + 1, "")), (n, line)
        else:
            assert _ASCIIDOC_HEADING.match(line), (n, line)
    assert all(s.title.strip() and s.level >= 1 for s in sections)


@settings(max_examples=200, deadline=None)
@given(text=TEXT, syntax=st.sampled_from(["rst", "asciidoc"]))
def test_chunks_keep_the_files_line_numbers(text, syntax):
    lines = text.split("\n")
    chunks = chunk_markdown(text, syntax=syntax)
    assert [c.ordinal for c in chunks] == list(range(len(chunks)))
    for c in chunks:
        assert c.text and 1 <= c.start_line <= c.end_line <= len(lines)
        assert len(c.text) <= 1000 or "\n" not in c.text  # windows of at most MAX characters (§8.5)
        span = "\n".join(lines[c.start_line - 1:c.end_line])
        assert all(part in span for part in c.text.split("\n"))  # the chunk's text is its own lines'
