"""File checks and line-ending normalisation (knowledge §8.1)."""

from __future__ import annotations

from ragit.ingest.text import decode_blob, normalize_newlines, split_lines


def test_plain_utf8_is_decoded():
    assert decode_blob("héllo\n".encode()) == ("héllo\n", None)


def test_nul_in_first_8000_bytes_is_binary():
    assert decode_blob(b"abc\x00def") == (None, "binary")
    assert decode_blob(b"a" * 7999 + b"\x00") == (None, "binary")


def test_nul_after_8000_bytes_is_not_binary():
    text, reason = decode_blob(b"a" * 8000 + b"\x00")
    assert reason is None and text is not None and text.endswith("\x00")


def test_invalid_utf8_is_not_utf8():
    assert decode_blob(b"caf\xe9") == (None, "not_utf8")
    assert decode_blob(b"\xff\xfeh\x00i\x00")[1] == "binary"  # UTF-16 has NULs


def test_bom_is_removed_before_decoding():
    assert decode_blob(b"\xef\xbb\xbf---\ntype: adr\n---\n") == ("---\ntype: adr\n---\n", None)
    assert decode_blob(b"\xef\xbb\xbf\xff") == (None, "not_utf8")


def test_crlf_and_cr_become_lf_without_changing_line_count():
    assert decode_blob(b"a\r\nb\rc\n") == ("a\nb\nc\n", None)
    assert normalize_newlines("x\r\n\r\ny\r") == "x\n\ny\n"
    raw = "1\r\n2\r3\n4"
    assert len(split_lines(normalize_newlines(raw))) == 4


def test_empty_blob_is_empty_text():
    assert decode_blob(b"") == ("", None)


def test_split_lines_ignores_final_newline_and_only_splits_on_lf():
    assert split_lines("") == []
    assert split_lines("a\nb\n") == ["a", "b"]
    assert split_lines("a\nb") == ["a", "b"]
    assert split_lines("a\n\n") == ["a", ""]
    assert split_lines("a\x0cb\u2028c\n") == ["a\x0cb\u2028c"]
