"""The chunk record shared by the Markdown and code chunkers.

Chunk boundaries are part of a chunk's identity (knowledge §9): any change to how text is cut
is a new chunker version (``ingest.chunker_version``; the version is part of every chunk id),
so stored chunks are never mixed with differently cut ones.
"""

from __future__ import annotations

from typing import NamedTuple

from ..lexical import ascii_words

CHUNKER_VERSION = "1"  # the default; "2" cuts code into halved units (ragit.ingest.code.LIMITS)


class Chunk(NamedTuple):
    """One retrievable piece of a document; lines are 1-based and inclusive in the original file.
    (A named tuple: a chunker makes one per chunk, and a frozen dataclass costs ~1 µs more each.)"""

    ordinal: int
    title: str
    start_line: int
    end_line: int
    text: str

    @property
    def token_count(self) -> int:
        """Whitespace-separated words: the content unit `context pack` budgets in."""
        return len(self.text.split())


def input_text(title: str, text: str) -> str:
    """What a chunk is embedded as, given its title and masked text: the title, a newline, the
    text (knowledge §11.2)."""
    return f"{title}\n{text}"


def text_words(title: str, input_words: list[bytes]) -> list[bytes]:
    """The :func:`ragit.lexical.ascii_words` of a chunk's text, given those of its
    :func:`input_text` (an ASCII text's, split by the embedder): the title's words come first,
    and the newline between keeps every word on one side."""
    return input_words[len(ascii_words(title)):]
