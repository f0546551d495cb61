"""Markdown sections (knowledge §8.4) and the markdown chunker (§8.5)."""

from __future__ import annotations

from ragit.ingest.chunks import Chunk
from ragit.ingest.ids import chunk_id
from ragit.ingest.markdown import MAX_CHARS, chunk_markdown, split_sections


def ranges(chunks: list[Chunk]) -> list[tuple[int, int]]:
    return [(c.start_line, c.end_line) for c in chunks]


# ---- sections


def test_text_before_first_heading_is_introduction():
    sections = split_sections("Intro text\n\n# First\nBody\n")
    assert [(s.title, s.level, s.content) for s in sections] == [
        ("Introduction", 1, "Intro text"), ("First", 1, "Body"),
    ]


def test_no_headings_gives_one_body_section_when_nothing_survives():
    sections = split_sections("# Title\n## Sub\n")
    assert [(s.title, s.level, s.content) for s in sections] == [("Body", 1, "# Title\n## Sub")]


def test_plain_text_without_heading_is_introduction():
    assert [(s.title, s.content) for s in split_sections("just text\n")] == [("Introduction", "just text")]


def test_bare_title_followed_by_subheading_yields_no_title_section():
    sections = split_sections("# Title\n## Sub\ntext\n")
    assert [(s.title, s.level, s.content) for s in sections] == [("Sub", 2, "text")]


def test_heading_title_trimmed_trailing_hashes_kept_and_levels():
    sections = split_sections("###   Deep  ##  \nx\n###### Six\ny\n####### seven\n")
    assert [(s.title, s.level) for s in sections] == [("Deep  ##", 3), ("Six", 6)]
    assert sections[1].content == "y\n####### seven"


def test_heading_needs_space_and_no_indent():
    sections = split_sections("#NoSpace\n # indented\ntext\n")
    assert [s.title for s in sections] == ["Introduction"]


def test_hash_inside_fence_is_not_a_heading():
    text = "# Real\n```bash\n# comment in code\n```\nafter\n"
    sections = split_sections(text)
    assert [s.title for s in sections] == ["Real"]
    assert "# comment in code" in sections[0].content


def test_tilde_fence_indented_up_to_three_spaces_and_same_marker_closes():
    text = "# A\n   ~~~\n# not\n```\n# still not\n~~~\n# B\nx\n"
    assert [s.title for s in split_sections(text)] == ["A", "B"]


def test_four_space_indent_does_not_open_fence():
    text = "# A\n    ```\n# B\nx\n"
    assert [s.title for s in split_sections(text)] == ["A", "B"]


def test_unclosed_fence_runs_to_end():
    assert [s.title for s in split_sections("# A\n```\n# B\n")] == ["A"]


def test_line_numbers_include_front_matter():
    text = "---\ntype: adr\n---\nIntro\n# Head\n\nBody line\n"
    sections = split_sections(text)
    assert sections[0].lines == ((4, "Intro"),)
    chunks = chunk_markdown(text)
    assert [(c.title, c.start_line, c.end_line, c.text) for c in chunks] == [
        ("Introduction", 4, 4, "Intro"), ("Head", 7, 7, "Body line"),
    ]


def test_empty_document_has_no_chunks():
    assert chunk_markdown("") == []
    assert chunk_markdown("\n  \n") == []
    assert chunk_markdown("---\ntype: adr\n---\n") == []


# ---- chunking


def test_small_section_is_one_chunk():
    text = "# Title\n\n" + "word " * 150 + "\n"
    chunks = chunk_markdown(text)
    assert len(chunks) == 1
    assert chunks[0].title == "Title"
    assert chunks[0].text == ("word " * 150).strip()
    assert (chunks[0].start_line, chunks[0].end_line) == (3, 3)
    assert chunks[0].token_count == 150


def test_title_is_not_part_of_chunk_text():
    chunks = chunk_markdown("# Secret Title\nbody\n")
    assert chunks[0].text == "body"


def test_300_lines_of_10_chars():
    text = "".join(f"{i:09d}\n"[-10:].replace("\n", "x") + "\n" for i in range(300))
    lines = text.split("\n")[:-1]
    assert len(lines) == 300 and all(len(line) == 10 for line in lines)
    chunks = chunk_markdown(text)
    assert ranges(chunks) == [(1, 91), (81, 171), (161, 251), (241, 300)]
    assert [c.ordinal for c in chunks] == [0, 1, 2, 3]
    assert all(c.title == "Introduction" for c in chunks)
    assert len(chunks[0].text) == 1000
    assert chunks[0].text == "\n".join(lines[0:91])
    assert chunks[3].text == "\n".join(lines[240:300])


def test_1200_words_on_one_line():
    words = [f"word{n}" for n in range(1, 1201)]
    chunks = chunk_markdown(" ".join(words) + "\n")
    assert len(chunks) > 1
    assert all(0 < len(c.text) <= MAX_CHARS for c in chunks)
    assert all((c.start_line, c.end_line) == (1, 1) for c in chunks)
    assert [w for c in chunks for w in c.text.split()] == words  # no word cut, nothing lost
    ids = {chunk_id("b" * 40, "markdown@1+mask-1", c.ordinal) for c in chunks}
    assert len(ids) == len(chunks)


def test_long_line_without_late_space_is_cut_hard():
    line = "a" * 400 + " " + "b" * 1700
    chunks = chunk_markdown(line)
    assert [len(c.text) for c in chunks] == [1000, 1000, 101]
    assert "".join(c.text for c in chunks) == line


def test_long_line_cut_at_last_space_and_remainder_leading_spaces_dropped():
    line = "x" * 600 + "   " + "y" * 600
    chunks = chunk_markdown(line)
    assert [c.text for c in chunks] == ["x" * 600, "y" * 600]


def test_overlap_is_whole_lines_up_to_120_chars():
    lines = [f"{i:04d}" + "z" * 45 for i in range(60)]  # 49 chars per line
    chunks = chunk_markdown("\n".join(lines))
    # 20 lines = 20*49+19 = 999 chars; 2 lines = 99 ≤ 120 < 149 = 3 lines → 2 lines of overlap
    assert ranges(chunks)[:2] == [(1, 20), (19, 38)]
    assert chunks[1].text.split("\n")[0] == lines[18]


def test_sections_numbered_in_order_with_global_ordinals():
    text = "Intro\n# A\n" + "\n".join("l" * 9 for _ in range(150)) + "\n# B\nend\n"
    chunks = chunk_markdown(text)
    assert [c.ordinal for c in chunks] == list(range(len(chunks)))
    assert chunks[0].title == "Introduction" and chunks[-1].title == "B"
    assert {c.title for c in chunks[1:-1]} == {"A"}
    assert chunks[-1].start_line == chunks[-1].end_line == 154


def test_blank_lines_around_window_text_do_not_widen_the_range():
    body = "\n\n".join("p" * 99 for _ in range(20))  # 20 paragraphs separated by blank lines
    chunks = chunk_markdown(body)
    for chunk in chunks:
        first_line = body.split("\n")[chunk.start_line - 1]
        last_line = body.split("\n")[chunk.end_line - 1]
        assert first_line and last_line
        assert chunk.text.startswith(first_line) and chunk.text.endswith(last_line)


def test_chunking_is_deterministic():
    text = "# A\n" + " ".join(f"w{i}" for i in range(900)) + "\n# B\nx\n"
    assert chunk_markdown(text) == chunk_markdown(text)
