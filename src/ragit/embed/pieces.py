"""Token ids of many texts for a static WordPiece model, each whitespace-separated piece tokenised once.

A static model sums its tokens' rows, so a text needs only the multiset of its token ids, not
their order. BERT's normaliser and pre-tokeniser act on each run of non-space characters alone
(control characters dropped, ``\\t \\n \\r`` made spaces, lower-casing and accents character by
character, punctuation split inside the run), so a text's ids are the concatenation of its
space-separated pieces' ids. Code and prose repeat their pieces endlessly; caching each piece's
ids turns tokenisation into one C-level ``split`` and one ``map`` over a dict per text, about
ten times cheaper than ``tokenizers`` (which also builds offsets and strings for every token).

Exactness: with a float16 matrix the float64 sum of up to ``EXACT_F16_TOKENS`` rows is exact in
any order (:mod:`ragit.embed.static`), so the vectors are the bits of the in-order ids. The caller
re-encodes in order any text longer than that, and a text holding an added token (``[UNK]``…,
matched before normalisation) is given back as None for ``tokenizers``.
"""

from __future__ import annotations

import re
from array import array
from collections.abc import Callable
from functools import partial
from itertools import chain, filterfalse
from typing import Any

from .wordpiece import WordPieceEncoder

# BERT's clean_text and lower-casing for ASCII, as one ``bytes.translate``: control characters
# dropped, tab/newline/return made spaces, A-Z made a-z. What is left splits on spaces alone.
_DROP = bytes(c for c in range(32) if chr(c) not in "\t\n\r") + b"\x7f"
_TABLE = bytes.maketrans(b"\t\n\rABCDEFGHIJKLMNOPQRSTUVWXYZ", b"   abcdefghijklmnopqrstuvwxyz")
# BERT's pre-tokenisation of a cleaned, lower-cased ASCII piece: runs of letters and digits, and
# each punctuation character alone (string.punctuation is exactly these four ranges).
_WORDS = re.compile(rb"[a-z0-9]+|[!-/:-@\[-`{-~]")
# The only separators that are separators in every text: other Unicode spaces are left inside the
# piece, where the fallback tokeniser treats them exactly as it would in the whole text.
_ASCII_SPACE = re.compile(r"[ \t\n\r]+")
# Pieces remembered at most; past it the cache starts again (memory stays bounded on huge repositories).
MAX_PIECES = 400_000


class PieceTokenizer:
    """Order-free token ids of a text: the ids of its pieces, each piece tokenised once.

    Ids are packed native int32 (``array("i")`` bytes): a text's ids are one ``bytes.join`` of
    its pieces' ids, and a batch's become one numpy array without a Python int per token.
    """

    def __init__(self, encoder: WordPieceEncoder, fallback: Callable[[str], list[int]]) -> None:
        """``fallback`` tokenises one non-ASCII piece that is not plain (``tokenizers``, loaded on
        first need; :meth:`WordPieceEncoder.plain_piece_ids` does the others, so an accent or a
        dash in a repository does not cost loading it).

        Every ASCII word goes through the Python WordPiece ``encoder``, once: measured on the
        bundled model, a new word costs ~3 µs there (words of up to 12 letters; ~27 µs for
        20–40) against ~6 µs (~20 µs) through ``tokenizers``' batch call, which also costs
        ~25 ms to load and its thread pool. A repository with only ASCII text never loads it.
        """
        self._encoder = encoder
        self._fallback = fallback
        self._specials = tuple(encoder.specials)
        # a cleaned, lower-cased ASCII piece (bytes) or a piece of a text that is not all ASCII
        # (str): the key types never collide, so one cache and one bound hold both
        self._pieces: dict[bytes | str, bytes] = _Cache(self._encode_piece)
        self._words: dict[bytes, bytes] = _Cache(self._encode_word)

    def ids_many(self, texts: list[str]) -> list[bytes | None]:
        """:meth:`ids` of every text. Each ASCII text is cleaned and split once; the pieces the
        batch brings that the cache lacks are split into words once, and their ids (new words
        through the Python WordPiece) enter the cache in one C-level pass, not a Python call
        per piece (code has many pieces seen once, such as ``self._client.send(``)."""
        split = [text.encode("ascii").translate(_TABLE, _DROP).split() if text.isascii() else None
                 for text in texts]
        cache = self._pieces
        if len(cache) < MAX_PIECES:
            # a membership test per distinct piece (``set.difference`` with a dict subclass
            # would walk the whole cache instead)
            new = list(filterfalse(cache.__contains__, set(chain.from_iterable(p for p in split if p is not None))))
            words = map(_WORDS.findall, new)
            cache.update(zip(new, map(b"".join, map(partial(map, self._words.__getitem__), words))))
        return [self._ids(text, pieces) for text, pieces in zip(texts, split)]

    def ids(self, text: str) -> bytes | None:
        """The token ids of ``text`` in piece order, packed; None when it holds an added token."""
        return self._ids(text, text.encode("ascii").translate(_TABLE, _DROP).split() if text.isascii() else None)

    def _ids(self, text: str, ascii_pieces: list[bytes] | None) -> bytes | None:
        """:meth:`ids` given the cleaned pieces of an ASCII ``text`` (None: not ASCII)."""
        if "[" in text and any(special in text for special in self._specials):
            return None
        pieces: list = ascii_pieces if ascii_pieces is not None else [p for p in _ASCII_SPACE.split(text) if p]
        cache = self._pieces
        if len(cache) > MAX_PIECES:
            cache.clear()
            self._words.clear()
        return b"".join(map(cache.__getitem__, pieces))

    def _encode_piece(self, piece: bytes | str) -> bytes:
        """A cleaned, lower-cased ASCII piece: its words' ids (a piece is seldom new, a word rarer).
        A piece of a text that is not all ASCII: an ASCII one is cleaned as an ASCII text's pieces
        are (it holds no space, so it stays one piece) and shares their entry."""
        if isinstance(piece, bytes):
            return b"".join(map(self._words.__getitem__, _WORDS.findall(piece)))
        if piece.isascii():
            return self._pieces[piece.encode("ascii").translate(_TABLE, _DROP)]
        ids = self._encoder.plain_piece_ids(piece)  # most such pieces: no need to load ``tokenizers``
        return packed(self._fallback(piece) if ids is None else ids)

    def _encode_word(self, word: bytes) -> bytes:
        return packed(self._encoder.word_ids(word.decode("ascii")))


def packed(ids: list[int]) -> bytes:
    """Token ids as packed native int32, the form :class:`PieceTokenizer` gives."""
    return array("i", ids).tobytes()


class _Cache(dict):
    """A dict that computes a missing key's value (``map(cache.__getitem__, …)`` stays in C)."""

    def __init__(self, compute: Callable[[Any], bytes]) -> None:
        super().__init__()
        self._compute = compute

    def __missing__(self, key: Any) -> bytes:
        value = self[key] = self._compute(key)
        return value
