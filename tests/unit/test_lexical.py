"""Code-aware lexical analysis (knowledge §11.5): identifier parts and symbol terms."""

from __future__ import annotations

import pytest
from hypothesis import given, strategies as st

from ragit.lexical import identifier_parts, symbol_terms, symbols_field


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


def test_symbol_terms_join_identifiers_and_split_camel_case():
    text = "call send_file(path) or sendFile; raise HTTPServerError in app.py"
    assert symbol_terms(text) == ["sendfile", "send", "file", "httpservererror", "http", "server", "error"]


def test_plain_words_add_nothing():
    assert symbol_terms("restore the auth context") == []
    assert symbols_field("restore the auth context") == ""


def test_snake_case_query_meets_camel_case_code():
    """`send_file` in a question and `sendFile` in code share the joined term."""
    assert "sendfile" in symbol_terms("why does send_file fail")
    assert "sendfile" in symbol_terms("def sendFile(self):")


def _reference_symbol_terms(text: str) -> list[str]:
    """The plain definition: every identifier occurrence, no shortcuts."""
    import re

    out: dict[str, None] = {}
    for match in re.finditer(r"[A-Za-z][A-Za-z0-9_]*[A-Za-z0-9]|[A-Za-z]", text):
        word = match.group(0)
        parts = identifier_parts(word)
        if len(parts) < 2:
            continue
        out.setdefault("".join(parts), None)
        if any(c.isupper() for c in word[1:]):
            for part in parts:
                out.setdefault(part, None)
    return list(out)


@given(st.lists(st.sampled_from(["send", "File", "HTTP", "utf8", "x", "_", "get2", "A", "ok", " ", ".", "é",
                                 "Server", "__init__", "abc", "XMLHttp", "9", "\n"]), max_size=40).map("".join))
def test_shortcuts_change_nothing(text):
    assert symbol_terms(text) == _reference_symbol_terms(text)
