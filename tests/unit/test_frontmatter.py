"""Front matter (knowledge §8.2)."""

from __future__ import annotations

from ragit.ingest.frontmatter import parse_front_matter


def test_fields_and_body():
    fm = parse_front_matter('---\ntype: adr\ntitle: "Use SQLite"\n---\n# Heading\nText\n')
    assert fm.fields == {"type": "adr", "title": "Use SQLite"}
    assert fm.body == "# Heading\nText\n"
    assert fm.body_start_line == 5  # the line of "# Heading"


def test_must_start_exactly_with_marker_and_lf():
    for text in (" ---\ntype: adr\n---\nx", "\n---\ntype: adr\n---\nx", "---type: adr\n---\nx", "--- \ntype: a\n---\n"):
        fm = parse_front_matter(text)
        assert fm.fields == {} and fm.body == text and fm.body_start_line == 1


def test_no_closing_marker_means_no_front_matter():
    text = "---\ntype: adr\nno close\n"
    fm = parse_front_matter(text)
    assert fm.fields == {} and fm.body == text


def test_values_trimmed_and_one_pair_of_quotes_removed():
    fm = parse_front_matter('---\na:   spaced   \nb: ""double""\nc: "open\nd: \'single\'\ne:\n---\n')
    assert fm.fields == {"a": "spaced", "b": '"double"', "c": '"open', "d": "'single'", "e": ""}


def test_key_charset_and_ignored_lines():
    fm = parse_front_matter("---\nmy_key-1: v\nbad key: x\n  indented: y\n- item\n---\nbody")
    assert fm.fields == {"my_key-1": "v"}
    assert fm.body == "body"


def test_later_key_wins():
    assert parse_front_matter("---\ntype: a\ntype: b\n---\n").fields == {"type": "b"}


def test_body_loses_exactly_one_leading_newline():
    fm = parse_front_matter("---\ntype: x\n---\n\nbody")
    assert fm.body == "\nbody"
    assert fm.body_start_line == 4


def test_closing_marker_searched_from_offset_4():
    # "\n---" at offset 3 (empty block) is not seen; the next one closes the block.
    fm = parse_front_matter("---\n---\nk: v\n---\nbody")
    assert fm.fields == {"k": "v"}
    assert fm.body == "body"
    assert fm.body_start_line == 5


def test_closing_marker_is_first_lf_dashes():
    fm = parse_front_matter("---\nk: v\n----\nrest")
    assert fm.fields == {"k": "v"}
    assert fm.body == "-\nrest"
