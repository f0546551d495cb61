"""Text pre-processing for code-aware static embeddings: identifiers split into words.

A WordPiece vocabulary made for prose lower-cases ``getUserName`` into ``get ##user ##name`` at
best and into meaningless pieces at worst; split, it is ``get user name``, three whole words the
model knows. :func:`code_words` (the ``code-static`` model's pre-processing) splits every
identifier and *also* keeps each camelCase/PascalCase word as written, appended at the end of the
text: a static model sums its token rows, so order does not matter, and the unsplit pieces keep
the exact-identifier signal that a bare symbol question (``JsonReader``) needs while the split
words carry the meaning. snake_case needs no copy: WordPiece already splits it at ``_``.

The same function runs on chunks and on questions, in every path of
:class:`ragit.embed.static.StaticEmbedder` (``embed``, ``embed_packed``, the pure-Python and the
``tokenizers`` tokenisers), so the numpy and the plain-Python vectors stay bit-identical; the
batch path (:mod:`ragit.embed.pieces`) runs :func:`code_words_pieces` on the text's pieces,
which gives the same words. Only ASCII characters are matched or inserted: ASCII text stays
ASCII (and keeps the fast pure-Python tokenizer). Cost: about 30 µs per 700-character chunk.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from itertools import compress, count
from operator import ne

# One pass: a space after a lower-case letter or digit followed by a capital (getUser -> get User,
# base64Encode -> base64 Encode) and after a capital followed by capital + lower-case
# (HTTPServer -> HTTP Server, parseXMLHttpRequest -> parse XML Http Request).
_BOUNDARY = re.compile(r"([a-z0-9](?=[A-Z])|[A-Z](?=[A-Z][a-z]))")
# An ASCII word with a camelCase or ACRONYMWord boundary in it (underscores allowed). The first
# look-ahead (a capital after the word's leading lower-case run) is implied by the second and
# fails most words of code at C speed; the possessive run and ``\b`` never backtrack into the
# word (a shorter run ends inside it, where no ``\b`` is): the same matches, ~40 % less time.
_CAMEL_WORD = re.compile(
    r"\b(?=[a-z0-9_]*+[A-Z])(?=[A-Za-z0-9_]*?(?:[a-z0-9][A-Z]|[A-Z][A-Z][a-z]))[A-Za-z0-9_]++\b")


# The same places as zero-width matches: a literal replacement, no template expanded per match.
# Both cases put a capital after the place, tested first: most places fail there, before any
# look-behind (``(?<=[a-z0-9])(?=[A-Z])|(?<=[A-Z])(?=[A-Z][a-z])``, ~2.5x faster).
_BOUNDARY_AT = re.compile(r"(?=[A-Z])(?:(?<=[a-z0-9])|(?<=[A-Z])(?=[A-Z][a-z]))")
# Any place _BOUNDARY would split (its two cases without the look-ahead): text without one has
# no camelCase word either, so one scan proves both other passes would find nothing (prose).
# Written to start with the capital ([a-z0-9][A-Z] as a capital preceded by a lower-case letter
# or digit; [A-Z][A-Z][a-z] as a capital followed by one and a lower-case letter), so the regex
# engine skips from capital to capital: the same matches found ~3.5x faster on prose.
_ANY_BOUNDARY = re.compile(r"[A-Z](?:(?<=[a-z0-9][A-Z])|(?=[A-Z][a-z]))")


def split_identifiers(text: str) -> str:
    """``text`` with camelCase/PascalCase/ACRONYMWord boundaries and underscores made spaces."""
    if _ANY_BOUNDARY.search(text) is None:
        return text.replace("_", " ")
    return _BOUNDARY_AT.sub(" ", text).replace("_", " ")


def code_words(text: str) -> str:
    """:func:`split_identifiers`, then a newline and every camelCase word of ``text`` as written
    (nothing appended when there is none)."""
    if _ANY_BOUNDARY.search(text) is None:
        return text.replace("_", " ")
    compounds = _CAMEL_WORD.findall(text)
    split = _BOUNDARY_AT.sub(" ", text).replace("_", " ")
    return split + "\n" + " ".join(compounds) if compounds else split


def code_words_pieces(pieces: str) -> str:
    """:func:`code_words` of each line of ``pieces`` (lines free of other ASCII whitespace), each
    line's camelCase words appended to it after a space instead of at the end: the same words
    per line, split in one pass over all of them. Each function here reads a piece of a text alone
    (no match reaches over ASCII whitespace, nor needs what lies beyond it), so a text's words
    are its pieces' words."""
    if _ANY_BOUNDARY.search(pieces) is None:
        return pieces.replace("_", " ")
    marked = _BOUNDARY_AT.sub(" ", pieces)
    # every line as split, followed by a space and then its camelCase words (none: just the
    # space); only a line the boundary pass changed can hold one (a camelCase word has a
    # boundary in it), so only those are searched: one ``findall`` per such line, not per
    # line (most new pieces of a batch have none)
    lines = (marked.replace("_", " ").replace("\n", " \n") + " ").split("\n")
    originals = pieces.split("\n")
    for i in compress(count(), map(ne, originals, marked.split("\n"))):
        lines[i] += " ".join(_CAMEL_WORD.findall(originals[i]))
    return "\n".join(lines)


class Preprocessor:
    """A text pre-processing, and the same for many pieces of text at once (one a line).
    (A plain class: a NamedTuple would cost a cold query ~1 ms to define.)"""

    __slots__ = ("text", "pieces")

    def __init__(self, text: Callable[[str], str], pieces: Callable[[str], str]) -> None:
        self.text = text
        self.pieces = pieces


# Named pre-processings for ``StaticEmbedder(preprocess=...)``; a model's id pins its choice.
# (split_identifiers keeps each line's words on its line.)
PREPROCESSORS = {"code": Preprocessor(code_words, code_words_pieces),
                 "split": Preprocessor(split_identifiers, split_identifiers)}
