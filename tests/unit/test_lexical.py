"""Code-aware lexical analysis (knowledge §11.5): the terms the keyword index and questions share."""

from __future__ import annotations

import pytest
from hypothesis import given, strategies as st

from ragit.lexical import identifier_parts, path_text, stem, term_counts, terms, title_name, word_terms


@pytest.mark.parametrize(
    "word,parts",
    [
        ("send_file", ["send", "file"]),
        ("sendFile", ["send", "file"]),
        ("HTTPServerError", ["http", "server", "error"]),
        ("getHTTP2Response", ["get", "http", "2", "response"]),
        ("__init__", ["init"]),
        ("x", ["x"]),
    ],
)
def test_identifier_parts(word, parts):
    assert identifier_parts(word) == parts


def test_identifiers_are_split_and_joined_in_every_style():
    """`send_file`, `sendFile` and "send file" share their terms; the joined form stays specific."""
    assert word_terms("send_file") == word_terms("sendFile") == ("sendfil", "send", "file")
    assert set(terms("send file")) <= set(word_terms("sendFile"))
    assert word_terms("HTTPServerError") == ("httpservererror", "http", "server", "error")


def test_stemming_lets_inflections_meet():
    assert terms("where are redirects followed") == ["redirect", "follow"]
    assert {"redirect", "handl"} <= set(terms("def _send_handling_redirects(self):"))
    assert stem("configuration") == stem("configure")


def test_stop_words_and_single_characters_are_dropped():
    assert terms("how does the x of it work") == ["work"]
    assert terms("?!") == []


def test_words_outside_ascii_are_kept_whole():
    assert terms("Ünïcode 한국어 검색") == ["ünïcode", "한국어", "검색"]
    assert word_terms("한국어_검색") == ("한국어검색", "한국어", "검색")


def test_term_counts_count_every_occurrence_in_first_seen_order():
    counts = term_counts("sendFile(send_file) send")
    assert counts == {"sendfil": 2, "send": 3, "file": 2}
    assert list(counts) == ["sendfil", "send", "file"]


@pytest.mark.parametrize(("title", "name"), [
    ("method Client._send_handling_redirects", "Client._send_handling_redirects"),
    ("class Repo (lines 81-140)", "Repo"), ("lines 1-60", ""), ("module", ""),
    ("async function fetchData", "fetchData"), ("impl Display for Point", "Display for Point"),
    ("Restore auth context", "Restore auth context"),  # a Markdown section title stays whole
])
def test_title_name_keeps_the_name_part(title, name):
    assert title_name(title) == name


def test_path_text_drops_the_extension():
    assert path_text("httpx/_client.py") == "httpx _client"
    assert path_text("Makefile") == "Makefile"


@given(st.text(max_size=200))
def test_terms_and_counts_agree(text):
    counts = term_counts(text)
    listed = terms(text)
    assert sum(counts.values()) == len(listed)
    assert set(counts) == set(listed)
    # each term is one token of the index's ascii tokenizer: no ASCII character but letters and digits
    assert all(t and all(c.isalnum() for c in t if c.isascii()) for t in listed)
    assert all(t == t.lower() for t in listed if t.isascii())


def _counts_reference(text: str) -> list[tuple[str, int]]:
    """term_counts as a plain loop over ``terms`` (first-seen order, every occurrence)."""
    counts: dict[str, int] = {}
    for term in terms(text):
        counts[term] = counts.get(term, 0) + 1
    return list(counts.items())


_ASCII_TEXT = st.lists(st.sampled_from(list("abcXYZ019_ .,;:()[]{}-\t\n\x0b\x0c\x1c\x7f'\"")
                                      + ["sendFile", "send_file", "HTTPServer", "the ", "redirects", "a"]),
                       max_size=80).map("".join)


@given(st.one_of(_ASCII_TEXT, st.text(max_size=200)))
def test_term_counts_equal_counting_the_terms_in_order(text):
    """The bytes split of ASCII text and the cached terms give the counts, and their order, of
    counting :func:`terms` one by one (the FTS rows depend on both)."""
    assert list(term_counts(text).items()) == _counts_reference(text)


@given(st.one_of(_ASCII_TEXT, st.text(max_size=120)))
def test_field_text_repeats_each_term_in_first_seen_order(text):
    from ragit.lexical import field_text

    counts = term_counts(text)
    expected = " ".join(" ".join([t] * n) for t, n in counts.items())
    assert field_text(counts) == expected
    assert field_text(counts, sum(counts.values())) == expected


def test_term_cache_of_ascii_words_is_bounded(monkeypatch):
    from ragit import lexical

    monkeypatch.setattr(lexical, "MAX_BYTE_WORDS", 3)
    lexical._BYTE_TERMS.clear()
    for text in ("alpha beta", "gamma delta epsilon", "alpha zeta", "sendFile eta theta iota"):
        assert list(term_counts(text).items()) == _counts_reference(text)
        assert len(lexical._BYTE_TERMS) <= 3


@given(st.lists(st.sampled_from(["", "a", "b", "the", "is", "x1", "7", "123", "0042", "send", "sending", "redirects",
                                 "Send", "SEND", "_", "__init__", "http2", "HTTPServer", "ab_", "sendFile"]),
                min_size=1, max_size=4).map("".join))
def test_new_ascii_words_get_word_terms(word):
    """A word new to the bytes cache (a one-part word by the short way) gets word_terms' terms."""
    from ragit.lexical import _ByteWordTerms, word_terms

    if word:
        assert _ByteWordTerms()[word.encode("ascii")] == word_terms(word)
