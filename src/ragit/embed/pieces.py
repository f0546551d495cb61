"""Token ids of many texts for a static WordPiece model, each whitespace-separated piece tokenised once.

A static model sums its tokens' rows, so a text needs only the multiset of its token ids, not
their order. BERT's normaliser and pre-tokeniser act on each run of non-space characters alone
(control characters dropped, ``\\t \\n \\r`` made spaces, lower-casing and accents character by
character, punctuation split inside the run), so a text's ids are the concatenation of its
space-separated pieces' ids. Code and prose repeat their pieces endlessly; caching each piece's
ids turns tokenisation into one C-level ``split`` and one ``map`` over a dict per text, about
ten times cheaper than ``tokenizers`` (which also builds offsets and strings for every token).

A model's text pre-processing (:mod:`ragit.embed.codetext`) is applied to pieces too: it acts on
each run of non-space characters alone as well, so a new piece is pre-processed once (all of a
batch's new pieces in one pass), never a whole text. Its key keeps the case and the control
characters that the pre-processing reads.

Finer still, an ASCII text without control characters is read as its words, the runs of letters,
digits and underscores, plus its punctuation characters: BERT isolates each punctuation
character (``_`` too, which the word keeps for the pre-processing to see) and the pre-processing
never reads past a word's ends, so a word is a piece whose ids are those it has in any text.
Code's words repeat far more than its pieces (sympy: 87k distinct words against 491k distinct
pieces, each new one pre-processed and split: 2.1 -> 1.4 s of tokenising, issue 15).

Exactness: with a float16 matrix the float64 sum of up to ``EXACT_F16_TOKENS`` rows is exact in
any order (:mod:`ragit.embed.static`), so the vectors are the bits of the in-order ids. The caller
re-encodes in order any text longer than that, and a text holding an added token (``[UNK]``…,
matched before normalisation) is given back as None for ``tokenizers``.
"""

from __future__ import annotations

import re
from array import array
from collections.abc import Callable
from itertools import chain, filterfalse, repeat
from operator import add
from typing import Any

from ..lexical import ASCII_WORD_TABLE
from .wordpiece import WordPieceEncoder

# BERT's clean_text and lower-casing for ASCII, as one ``bytes.translate``: control characters
# dropped, tab/newline/return made spaces, A-Z made a-z. What is left splits on spaces alone.
_DROP = bytes(c for c in range(32) if chr(c) not in "\t\n\r") + b"\x7f"
_TABLE = bytes.maketrans(b"\t\n\rABCDEFGHIJKLMNOPQRSTUVWXYZ", b"   abcdefghijklmnopqrstuvwxyz")
# The same with the newline kept: it separates the pieces of a batch pre-processed in one pass.
_TABLE_NL = bytes.maketrans(b"\t\rABCDEFGHIJKLMNOPQRSTUVWXYZ", b"  abcdefghijklmnopqrstuvwxyz")
# A raw ASCII piece, before pre-processing: vertical tab and form feed (which ``bytes.split``
# would split at, but BERT drops) become NUL, like them dropped later and not a word character.
_RAW = bytes.maketrans(b"\x0b\x0c", b"\x00\x00")
# BERT's pre-tokenisation of a cleaned, lower-cased ASCII piece, which holds letters, digits and
# punctuation (string.punctuation is exactly these four ranges) and nothing else: its words are
# its runs of letters and digits (found by a C-level ``split`` once punctuation is made spaces)
# and each of its punctuation characters (what is left once letters, digits and spaces are deleted).
_PUNCTUATION = bytes(range(ord("!"), ord("/") + 1)) + bytes(range(ord(":"), ord("@") + 1)) \
    + bytes(range(ord("["), ord("`") + 1)) + bytes(range(ord("{"), ord("~") + 1))
_PUNCTUATION_TO_SPACE = bytes.maketrans(_PUNCTUATION, b" " * len(_PUNCTUATION))
_NOT_PUNCTUATION = b"abcdefghijklmnopqrstuvwxyz0123456789 "
_WORD_BYTES = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_"
_WORD_OR_SPACE = _WORD_BYTES + b" \t\n\r"
_WORDS_RAW = bytes(c if c in _WORD_BYTES else 32 for c in range(256))
_WORDS_LOWER = _WORDS_RAW.translate(bytes.maketrans(b"ABCDEFGHIJKLMNOPQRSTUVWXYZ", b"abcdefghijklmnopqrstuvwxyz"))
# Many pieces are split in one pass, a marker word between them (a control character: cleaning
# dropped all of them) whose ids are a sentinel, int32 -1, never a token id. Real ids are below
# 2**24 (checked as words are encoded), so each has a zero byte at the top and no 4 bytes of a
# stream of packed ids and sentinels hold 0xff four times but a sentinel: one ``bytes.split`` at
# the sentinels gives each piece's ids.
_MARKER = b"\x01"
_SENTINEL = b"\xff\xff\xff\xff"
_MAX_FLAT_ID = 1 << 24
# The only separators that are separators in every text: other Unicode spaces are left inside the
# piece, where the fallback tokeniser treats them exactly as it would in the whole text.
_ASCII_SPACE = re.compile(r"[ \t\n\r]+")
# A batch bringing this many new pieces (an ingest's, not a question's) has the vocabulary's dict
# built at once (~3 ms) rather than after ~1,000 binary searches (~4 µs each).
DICT_PIECES = 256
# Pieces remembered at most; past it the cache starts again (memory stays bounded on huge repositories).
MAX_PIECES = 400_000
# From this many pieces in the cache, a batch's texts read their pieces' ids from a dict of the
# batch's own pieces (PieceTokenizer.ids_many).
LOCAL_PIECES = 65_536


class PieceTokenizer:
    """Order-free token ids of a text: the ids of its pieces, each piece tokenised once.

    Ids are packed native int32 (``array("i")`` bytes): a text's ids are one ``bytes.join`` of
    its pieces' ids, and a batch's become one numpy array without a Python int per token.
    """

    def __init__(self, encoder: WordPieceEncoder, fallback: Callable[[str], list[int]],
                 preprocess: Callable[[str], str] | None = None) -> None:
        """``preprocess`` transforms pieces joined by newlines, each alone, keeping the newlines
        (:data:`ragit.embed.codetext.PREPROCESSORS`' ``pieces``), inserting only whitespace and
        never taking a ``[`` or ``]`` away; added tokens are looked for in the raw text, so
        these must hold no whitespace (true of BERT's; else a ValueError).
        ``fallback`` tokenises one non-ASCII piece that is not plain (``tokenizers``, loaded on
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
        if preprocess is not None and any(c.isspace() for special in self._specials for c in special):
            raise ValueError("an added token holds whitespace: pre-process whole texts")
        self._preprocess = preprocess
        # an ASCII text's pieces are cleaned and lower-cased before they are looked up, unless
        # there is a pre-processing to read them first
        self._clean = (_TABLE, _DROP) if preprocess is None else (_RAW, b"")
        # an ASCII piece (bytes) or a piece of a text that is not all ASCII (str): the key types
        # never collide, so one cache and one bound hold both
        self._pieces: dict[bytes | str, bytes] = _Cache(self._encode_piece)
        self._words: dict[bytes, bytes] = _Cache(self._encode_word)
        self._punctuation: dict[bytes, bytes] = _Cache(self._encode_punctuation)  # a piece's marks
        # an ASCII text without control characters is read as its words (runs of letters, digits
        # and underscores, each a cache key as a piece would be) and its punctuation characters
        self._word_table = _WORDS_RAW if preprocess is not None else _WORDS_LOWER
        self._lexical_words = self._word_table == ASCII_WORD_TABLE  # the keyword index's words too
        self._mark_table: Any = None  # numpy: the id of each ASCII punctuation character, by byte
        self._flat = True  # every id so far is below _MAX_FLAT_ID: the one-pass split holds

    def ids_many(self, texts: list[str], words: list | None = None) -> list[bytes | None]:
        """:meth:`ids` of every text; ``words``, when given, is extended with each text's words
        as :func:`ragit.lexical.ascii_words` splits it, where this split found them (an ASCII
        text read as words with the same table), else None: the keyword fields of an ingest
        worker are counted from them instead of splitting the text again (issue 15).
        Each ASCII text is split once (into words, or pieces:
        :meth:`_split`); the pieces the batch brings that the cache lacks are split into words once, and their ids (new words
        through the Python WordPiece) enter the cache in one C-level pass, not a Python call
        per piece (code has many pieces seen once, such as ``self._client.send(``).

        Once the cache is large (:data:`LOCAL_PIECES`), the texts read their pieces' ids from a
        dict of the batch's pieces alone: it stays in the processor's caches, where a lookup in
        the whole cache (sympy: 400k pieces) costs a cache miss or more (sympy's pieces, 3.6M:
        1.50 -> 1.34 s once known); a small cache is read directly (building the batch's dict
        would cost more than it saves)."""
        split, marks = self._split(texts)
        if words is not None:
            words.extend(found if mark is not None and self._lexical_words else None
                         for found, mark in zip(split, marks))
        cache = self._pieces
        distinct = set(chain.from_iterable(split))
        # a membership test per distinct piece (``set.difference`` with a dict subclass would
        # walk the whole cache instead)
        new = list(filterfalse(cache.__contains__, distinct))
        if len(new) > MAX_PIECES:  # (not a real batch) piece by piece, the cache bounded as it grows
            return self._with_marks(list(map(self._ids, texts, split, repeat(cache.__getitem__))), marks)
        forgot = len(cache) + len(new) > MAX_PIECES
        batch = dict(zip(distinct, map(cache.get, distinct))) if forgot or len(cache) >= LOCAL_PIECES else None
        if forgot:
            # the cache starts again before the batch, not inside it: the batch's known ids
            # enter it again and its new pieces are encoded in one pass (sympy's 491k distinct
            # pieces crossed the bound mid-batch, and the rest of that batch went piece by
            # piece, ~10 µs each)
            self._forget()
        if len(new) >= DICT_PIECES:
            self._encoder.use_dict()
        if all(map(bytes.__instancecheck__, new)):
            fresh = self._ascii_ids(new)
        else:  # pieces of texts that are not all ASCII (str keys) too: each kind in its own pass
            raw = [p for p in new if isinstance(p, bytes)]
            text = [p for p in new if not isinstance(p, bytes)]
            new, fresh = raw + text, (self._ascii_ids(raw) if raw else []) + self._text_ids(text)
        if batch is None:
            cache.update(zip(new, fresh))
            lookup = cache.__getitem__
        else:
            batch.update(zip(new, fresh))
            cache.update(batch if forgot else zip(new, fresh))
            lookup = batch.__getitem__
        return self._with_marks(list(map(self._ids, texts, split, repeat(lookup))), marks)

    def _forget(self) -> None:
        """Start the piece cache again (memory stays bounded); the word and punctuation caches,
        which grow far slower (sympy: 55k words in 491k pieces), only once past the same bound."""
        self._pieces.clear()
        if len(self._words) > MAX_PIECES or len(self._punctuation) > MAX_PIECES:
            self._words.clear()
            self._punctuation.clear()

    def ids(self, text: str) -> bytes | None:
        """The token ids of ``text`` in piece order, packed; None when it holds an added token."""
        split, marks = self._split([text])
        return self._with_marks([self._ids(text, split[0], self._pieces.__getitem__)], marks)[0]

    def _split(self, texts: list[str]) -> tuple[list[list[bytes] | list[str]], list[bytes | None]]:
        """The keys of each text's ids (cache keys) and its marks: an ASCII text's words (bytes)
        and its punctuation characters; when it holds a control character (BERT drops one,
        joining the characters around it, which a word split would keep apart) its cleaned
        pieces (bytes) and None; another text's pieces as written (str) and None.

        A text's words are its runs of letters, digits and underscores: BERT isolates every
        other character but whitespace, and the pre-processing (:mod:`ragit.embed.codetext`)
        reads nothing past a word's ends, so a text's ids are its words' then its punctuation
        characters' (a multiset). Code's words repeat far more than its pieces do (sympy:
        87k distinct words, 491k distinct pieces), and each new key costs a pre-processing."""
        table, delete = self._clean
        words = self._word_table
        marks: list[bytes | None] = []
        out: list[list[bytes] | list[str]] = []
        for text in texts:
            if text.isascii():
                raw = text.encode("ascii")
                found = raw.translate(None, _WORD_OR_SPACE)  # punctuation and control characters
                if not found.translate(None, _PUNCTUATION):
                    out.append(raw.translate(words).split())
                    marks.append(found)
                    continue
                out.append(raw.translate(table, delete).split())
            else:
                out.append([p for p in _ASCII_SPACE.split(text) if p])
            marks.append(None)
        return out, marks

    def _ids(self, text: str, pieces: list, lookup: Callable[[bytes | str], bytes]) -> bytes | None:
        """The ids of the keys of ``text`` (a text read as words: without its punctuation's)."""
        if "[" in text and any(special in text for special in self._specials):
            return None
        if len(self._pieces) > MAX_PIECES:
            self._forget()
        return b"".join(map(lookup, pieces))

    def _with_marks(self, ids: list[bytes | None], marks: list[bytes | None]) -> list[bytes | None]:
        """``ids`` with each text's punctuation characters' ids appended (``marks``, see
        :meth:`_split`): every character's of the batch looked up in one numpy call."""
        found = [m for m, i in zip(marks, ids) if m and i is not None]
        if not found:
            return ids
        import numpy as np

        if self._mark_table is None:
            # each ASCII punctuation character is one token: BERT isolates it, and WordPiece gives a
            # one-character word one id (its own or the unknown token's)
            self._mark_table = np.array([array("i", self._words[bytes([c])])[0] if c in _PUNCTUATION else -1
                                         for c in range(256)], dtype=np.intc)
        packed = self._mark_table[np.frombuffer(b"".join(found), dtype=np.uint8)].tobytes()
        size = self._mark_table.itemsize
        at = 0
        for k, (text_ids, text_marks) in enumerate(zip(ids, marks)):
            if text_marks and text_ids is not None:
                end = at + len(text_marks) * size
                ids[k] = text_ids + packed[at:end]
                at = end
        return ids

    def _ascii_ids(self, pieces: list[bytes]) -> list[bytes]:
        """The ids of an ASCII text's pieces (cache keys); all pre-processed in one pass."""
        joined = b"\n".join(pieces)
        if self._preprocess is not None:
            joined = self._preprocess(joined.decode("ascii")).encode("ascii").translate(_TABLE_NL, _DROP)
        return self._joined_ids(joined, len(pieces))

    def _joined_ids(self, joined: bytes, count: int) -> list[bytes]:
        """The ids of ``count`` cleaned, lower-cased ASCII pieces joined by newlines, each
        piece's the ids of its letter-and-digit words then of its punctuation (a multiset: the
        order within a piece is free). All pieces' words are split and looked up in C-level
        passes (a piece is seldom new, a word rarer), the markers' sentinels then splitting
        the stream into pieces: a new piece of code costs a fraction of a µs, where a regex
        call, a map and a join per piece cost ~1.5 µs (issue 15's first index)."""
        words = self._words
        punctuation = map(self._punctuation.__getitem__, joined.translate(None, _NOT_PUNCTUATION).split(b"\n"))
        if self._flat and count > 1:
            words[_MARKER] = _SENTINEL
            marked = joined.replace(b"\n", b" \x01 ").translate(_PUNCTUATION_TO_SPACE).split()
            runs = b"".join(map(words.__getitem__, marked)).split(_SENTINEL)
            if self._flat and len(runs) == count:  # (an id too large for the sentinel turns it off)
                return list(map(add, runs, punctuation))
        runs = [b"".join(map(words.__getitem__, piece.translate(_PUNCTUATION_TO_SPACE).split()))
                for piece in joined.split(b"\n")]
        return list(map(add, runs, punctuation))

    def _encode_punctuation(self, marks: bytes) -> bytes:
        """The ids of a piece's punctuation characters (each a word)."""
        return b"".join([self._words[marks[i:i + 1]] for i in range(len(marks))])

    def _encode_piece(self, piece: bytes | str) -> bytes:
        """The ids of one piece: an ASCII text's (bytes), or a piece of a text that is not all
        ASCII (str), whose pre-processed words are tokenised alone: ASCII ones as an ASCII
        text's, others by the encoder or the fallback."""
        return self._ascii_ids([piece])[0] if isinstance(piece, bytes) else self._text_ids([piece])[0]

    def _text_ids(self, pieces: list[str]) -> list[bytes]:
        """The ids of pieces of texts that are not all ASCII, each the ids of its pre-processed
        words in order (all pieces pre-processed in one pass, one a line): the ASCII words as an
        ASCII text's pieces, all in one pass, the others one by one (:meth:`_plain_ids`)."""
        joined = "\n".join(pieces)
        lines = (joined if self._preprocess is None else self._preprocess(joined)).split("\n")
        words = [[w for w in _ASCII_SPACE.split(line) if w] for line in lines]
        plain = [w for line in words for w in line if w.isascii()]
        # (pieces hold no tab, newline or return: the newline-keeping table cleans them as _TABLE)
        found = iter(self._joined_ids("\n".join(plain).encode("ascii").translate(_TABLE_NL, _DROP), len(plain))
                     if plain else ())
        return [b"".join([next(found) if w.isascii() else self._plain_ids(w) for w in line]) for line in words]

    def _plain_ids(self, word: str) -> bytes:
        """A pre-processed word that is not ASCII (of a text that is not all ASCII)."""
        ids = self._encoder.plain_piece_ids(word)  # most such words: no need to load ``tokenizers``
        return packed(self._fallback(word) if ids is None else ids)

    def _encode_word(self, word: bytes) -> bytes:
        ids = self._encoder.word_ids(word.decode("ascii"))
        if ids and max(ids) >= _MAX_FLAT_ID:
            self._flat = False
        return packed(ids)


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
