"""Blob bytes → text, with the file checks of knowledge §8.1.

Every parser downstream assumes LF-only text, so line endings are normalised here once.
"""

from __future__ import annotations

BINARY_SNIFF_BYTES = 8000
_BOM = b"\xef\xbb\xbf"


def normalize_newlines(text: str) -> str:
    """CRLF and lone CR become LF; the number of lines is unchanged."""
    return text.replace("\r\n", "\n").replace("\r", "\n")


def decode_blob(data: bytes) -> tuple[str | None, str | None]:
    """Return ``(text, None)`` or ``(None, reason)`` with reason ``binary`` or ``not_utf8``.

    A NUL byte in the first 8,000 bytes marks the blob as binary (git's own heuristic); a UTF-8
    byte-order mark is dropped before decoding so it never leaks into front matter or headings.
    """
    if b"\x00" in data[:BINARY_SNIFF_BYTES]:
        return None, "binary"
    if data.startswith(_BOM):
        data = data[len(_BOM):]
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        return None, "not_utf8"
    return normalize_newlines(text), None


def split_lines(text: str) -> list[str]:
    """Lines of LF text; a final newline does not open an extra empty line.

    ``str.splitlines`` is avoided on purpose: it also splits on form feeds and Unicode
    separators, which would shift line numbers away from git's and the parsers' view.
    """
    if not text:
        return []
    lines = text.split("\n")
    if text.endswith("\n"):
        lines.pop()
    return lines


def locate_block(lines: list[str], block: list[str], near: int) -> int | None:
    """1-based start of the occurrence of ``block`` in ``lines`` nearest ``near`` (earlier on ties).

    Shared by ``verify`` (knowledge §20) and the edit-time gate, which must stay light to import."""
    best: int | None = None
    size = len(block)
    if not size:
        return None
    for start in range(1, len(lines) - size + 2):
        closer = best is None or abs(start - near) < abs(best - near)
        if closer and lines[start - 1] == block[0] and lines[start - 1 : start - 1 + size] == block:
            best = start
    return best


def blob_lines(data: bytes) -> list[str]:
    """LF-normalised lines of a blob or file; undecodable bytes are replaced so lines still compare."""
    text, _ = decode_blob(data)
    if text is None:
        text = normalize_newlines(data.decode("utf-8", "replace"))
    return split_lines(text)


def text_digest(lines: list[str]) -> str:
    """SHA-1 hex of LF-joined lines: kept instead of cited text (no secret is stored), so the
    edit-time gate can find the lines in a changed file without reading git objects."""
    try:
        from _sha1 import sha1  # the built-in module: spares hashlib's OpenSSL load
    except ImportError:  # pragma: no cover
        from hashlib import sha1
    return sha1("\n".join(lines).encode("utf-8", "surrogatepass")).hexdigest()
