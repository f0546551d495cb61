"""Tokenisation of knowledge §11.1."""

from __future__ import annotations

import sys
import unicodedata

from ragit.embed.tokenize import tokenize


def _spec_tokenize(text: str) -> list[str]:
    """§11.1 written out literally, character by character."""
    lowered = text.lower()
    kept = "".join(ch if unicodedata.category(ch)[0] in "LN" or ch.isspace() else " " for ch in lowered)
    return kept.split()


def test_spec_examples():
    assert tokenize("api_key") == ["api", "key"]
    assert tokenize("sk-abc123") == ["sk", "abc123"]
    assert tokenize("Ünïcode 한국어 검색") == ["ünïcode", "한국어", "검색"]


def test_lower_cases_and_keeps_duplicates_in_order():
    assert tokenize("Restore AUTH, restore auth!") == ["restore", "auth", "restore", "auth"]


def test_no_tokens():
    assert tokenize("") == []
    assert tokenize("  \t\n ") == []
    assert tokenize("--- ___ !!! ```") == []


def test_numbers_of_every_kind_are_kept():
    # Nd, No (superscript two), Nl (roman numeral twelve, lower-cased)
    assert tokenize("v2 x² Ⅻ") == ["v2", "x²", "ⅻ"]


def test_marks_and_symbols_separate():
    # A combining mark (Mn) is neither letter nor number: it splits the word it sits in.
    assert tokenize("e\u0301t\u00e9") == ["e", "té"]
    assert tokenize("a+b=c€d") == ["a", "b", "c", "d"]


def test_matches_the_spec_over_every_code_point():
    text = "".join(chr(cp) for cp in range(sys.maxunicode + 1) if not 0xD800 <= cp <= 0xDFFF)
    assert tokenize(text) == _spec_tokenize(text)
