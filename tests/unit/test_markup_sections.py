"""reStructuredText and AsciiDoc sections (chunkers ``rst`` and ``asciidoc``): each format's own
headings title its chunks, which are then windowed as Markdown sections are (knowledge §8.5)."""

from __future__ import annotations

from ragit.ingest.markdown import chunk_markdown, split_sections
from ragit.ingest.markup import doc_chunker

RST = """\
.. _nesting:

===============
Nesting Schemas
===============

Schemas can be nested.

.. _specifying:

Specifying Which Fields to Nest
-------------------------------

Use ``only``::

    Not a title
    -----------

Partial Loading
---------------
Loads part of it.

Deeper
~~~~~~
Three levels down.

Back Up
-------

=====  =====
col a  col b
=====  =====
1      2
=====  =====

the first line of a paragraph
a paragraph line
---------------------
"""


def _titles(text: str, syntax: str) -> list[tuple[str, int, int]]:
    return [(s.title, s.level, s.lines[0][0]) for s in split_sections(text, syntax=syntax)]


def test_the_chunker_of_a_doc_follows_its_extension():
    assert doc_chunker("docs/index.rst") == "rst"
    assert doc_chunker("docs/Guide.ADOC") == "asciidoc" == doc_chunker("a/b.asciidoc")
    assert doc_chunker("notes.txt") == "rst"  # plain text's underlined titles are reStructuredText's
    assert doc_chunker("README.md") == doc_chunker("docs.rst/README") == doc_chunker("CHANGES") == "markdown"


def test_rst_titles_open_sections_at_the_levels_their_adornments_first_take():
    sections = _titles(RST, "rst")
    assert sections == [
        ("Introduction", 1, 1),  # the label before the first title
        ("Nesting Schemas", 1, 6),  # overlined: its own style, the first seen
        ("Specifying Which Fields to Nest", 2, 13),  # the next label belongs to the section above
        ("Partial Loading", 2, 21),  # no blank line needed after a title
        ("Deeper", 3, 25),
        ("Back Up", 2, 29),  # the table's borders hold spaces, the literal block is indented,
    ]  # and a paragraph's underline after no blank line is still the section's text
    # the title and adornment lines belong to no section; the content keeps the file's numbers
    by_title = {s.title: s for s in split_sections(RST, syntax="rst")}
    assert by_title["Specifying Which Fields to Nest"].lines[1] == (14, "Use ``only``::")
    assert "Nesting Schemas" not in by_title["Nesting Schemas"].content
    assert "Not a title" in by_title["Specifying Which Fields to Nest"].content
    assert "a paragraph line" in by_title["Back Up"].content


def test_an_rst_underline_must_be_as_long_as_its_title_or_four_characters():
    assert _titles("Intro\n\nA long title here\n---\n\ntext\n", "rst") == [("Introduction", 1, 1)]
    assert [t for t, _, _ in _titles("A long title here\n----\ntext\n", "rst")] == ["A long title here"]
    assert [t for t, _, _ in _titles("Usage\n=====\ntext\n", "rst")] == ["Usage"]
    # a transition (a line of punctuation between blank lines) opens nothing
    assert [t for t, _, _ in _titles("one\n\n----------\n\ntwo\n", "rst")] == ["Introduction"]


def test_asciidoc_headings_outside_delimited_blocks_open_sections():
    text = """\
= Guide
Jane Doe

Preamble text.

== Install

[source,shell]
----
== not a heading
----

=== From source
Build it.

.....
= literal
.....

# Markdown style
Accepted too.
"""
    assert _titles(text, "asciidoc") == [("Guide", 1, 2), ("Install", 2, 7), ("From source", 3, 14),
                                         ("Markdown style", 1, 21)]
    sections = {s.title: s.content for s in split_sections(text, syntax="asciidoc")}
    assert "== not a heading" in sections["Install"] and "= literal" in sections["From source"]


def test_rst_chunks_are_titled_by_their_sections_and_windowed_as_markdown_is():
    body = "\n".join(f"line {i} " + "x" * 40 for i in range(60))
    text = f"Overview\n========\n\n{body}\n\nAPI\n===\n\nshort\n"
    chunks = chunk_markdown(text, syntax="rst")
    assert {c.title for c in chunks} == {"Overview", "API"}
    assert len([c for c in chunks if c.title == "Overview"]) > 1  # over MAX: windows, §8.5
    assert chunks[0].start_line == 4 and chunks[-1].start_line == chunks[-1].end_line == 68
    assert [c.ordinal for c in chunks] == list(range(len(chunks)))
    # the same text as Markdown has no heading: one titled section, the reference's rule
    assert {c.title for c in chunk_markdown(text)} == {"Introduction"}
    # no title at all: one ``Introduction`` section as Markdown's; nothing at all: no chunk
    assert [c.title for c in chunk_markdown("just text\n", syntax="rst")] == ["Introduction"]
    assert chunk_markdown("\n\n", syntax="asciidoc") == []
