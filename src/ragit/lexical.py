"""Code-aware lexical analysis for the keyword index (knowledge §11.5).

Code is searched by names: ``send_file``, ``sendFile`` and "send file" must meet, and so must
"redirects" and ``_send_handling_redirects``. :func:`terms` turns text into the index's terms,
and a question goes through the same function:

* every word (a run of letters, digits and underscores) that is a multi-part identifier gives
  its joined form (``sendfile``) and each part (``send``, ``file``); camelCase, PascalCase,
  snake_case, acronyms and digits all split (``HTTPServerError`` → ``http server error``);
* every term is stemmed with the Snowball English stemmer (``redirects`` → ``redirect``,
  ``handling`` → ``handl``), so inflections meet;
* English function words and single characters are dropped: they say nothing about code.

Words outside ASCII (``ünïcode``, ``한국어``) are kept whole, lower-cased, split only at ``_``.
"""

from __future__ import annotations

import re
from collections import _count_elements  # Counter's C counting loop, into a plain dict
from collections.abc import Iterator
from functools import lru_cache
from itertools import chain

_PARTS = re.compile(r"[A-Z]+(?=[A-Z][a-z])|[A-Z]?[a-z]+|[A-Z]+|[0-9]+")


def identifier_parts(word: str) -> list[str]:
    """``HTTPServerError`` → ``http, server, error``; ``send_file`` → ``send, file`` (lower case)."""
    # one ``findall`` over the whole word: no part pattern matches ``_`` or looks across it, so
    # splitting at ``_`` first would find the same parts
    return [p.lower() for p in _PARTS.findall(word)]


# ---------------------------------------------------------------- index and question terms

_WORD = re.compile(r"\w+")

# English function words (and question words) that carry no meaning about code. Code keywords
# that are also English words (``for``, ``if``, ``in``, ``not``) are dropped with them.
STOPWORDS = frozenset("""
a about above after again against all am an and any are as at be because been before being below between
both but by can could did do does doing down during each few for from further had has have having he her
here hers herself him himself his how i if in into is it its itself just me more most my myself no nor not
now of off on once only or other our ours ourselves out over own same she should so some such than that the
their theirs them themselves then there these they this those through to too under until up very was we
were what when where which while who whom why will with would you your yours yourself yourselves
""".split())


@lru_cache(maxsize=1)
def _stemmer():
    import Stemmer  # PyStemmer: the Snowball stemmers compiled (~1 ms to import, ~0.1 µs a word)

    stemmer = Stemmer.Stemmer("english")
    # its own word cache (10,000 words by default) costs ~1 µs per new word and only repeats
    # what stem()'s cache already does (a first index stems ~170k parts of sympy's words)
    stemmer.maxCacheSize = 0
    return stemmer


@lru_cache(maxsize=262144)
def stem(word: str) -> str:
    """The Snowball English stem of a lower-case word (cached: a repository has few distinct words)."""
    return _stemmer().stemWord(word)


@lru_cache(maxsize=262144)
def word_terms(word: str) -> tuple[str, ...]:
    """Index terms of one word: for a multi-part identifier its joined form and its parts, else
    the word; lower-cased, stop words and single characters dropped, each term stemmed."""
    return _parts_terms(identifier_parts(word) if word.isascii() else [p.lower() for p in word.split("_") if p])


def _parts_terms(parts: list[str]) -> tuple[str, ...]:
    """:func:`word_terms` of a word given its lower-case parts (a first index meets ~50k new
    multi-part words in sympy)."""
    if len(parts) > 1:
        parts.insert(0, "".join(parts))
    return tuple(map(stem, filter(is_term, parts)))


def is_term(part: str) -> bool:
    """Whether a lower-case word part is indexed: not a stop word nor a single character."""
    return len(part) > 1 and part not in STOPWORDS


# ``\w+`` on ASCII text as bytes: every other character made a space, then one C-level ``split``
# (cheaper than ``findall`` and than the ``str`` forms; the same words), for the term stream.
_NOT_WORD_BYTES = bytes(c if c < 128 and (chr(c).isalnum() or c == 95) else 32 for c in range(256))
ASCII_WORD_TABLE = _NOT_WORD_BYTES  # (public: a tokeniser splitting with the same table has the same words)
MAX_BYTE_WORDS = 262_144  # words term_counts remembers (as word_terms' cache); then it starts again


class _ByteWordTerms(dict):
    """ASCII word (bytes) → :func:`word_terms`, reached with ``map(cache.__getitem__, …)`` in C."""

    def __missing__(self, word: bytes) -> tuple[str, ...]:
        if len(self) >= MAX_BYTE_WORDS:
            self.clear()
        text = word.decode("ascii")
        if (word.isalpha() and word.islower()) or word.isdigit():
            # one part, already lower-case (most new words of code): word_terms' result without
            # its splitting, ~1 µs less per word of a first index (issue 15)
            value = self[word] = (stem(text),) if is_term(text) else ()
        else:
            # word_terms' result, not kept in its cache too
            value = self[word] = _parts_terms(identifier_parts(text))
        return value


_BYTE_TERMS = _ByteWordTerms()


def term_counts(text: str) -> dict[str, int]:
    """Term → occurrences in ``text`` (:func:`word_terms` of every word), in first-seen order.

    One C-level pass (the cached terms of each word, chained, counted by the helper ``Counter``
    uses): no Python code runs per word, which made this the largest cost of indexing (issue
    15). ASCII text is split as bytes and its words' terms kept in a bytes-keyed dict (a third
    less than ``str`` words through the ``lru_cache``). A term's first occurrence in the term
    stream comes from the first word (in first-seen order) that gives it, so the order is that
    of counting word by word."""
    counts: dict[str, int] = {}
    _count_elements(counts, _term_stream(text))
    return counts


def ascii_words(text: str) -> list[bytes]:
    """The words of an ASCII text as :func:`term_counts` reads them: its runs of letters, digits
    and underscores, as bytes, in order (:data:`ASCII_WORD_TABLE` then one ``split``)."""
    return text.encode("ascii").translate(_NOT_WORD_BYTES).split()


def ascii_term_counts(words: list[bytes]) -> dict[str, int]:
    """:func:`term_counts` of an ASCII text given its :func:`ascii_words` (an ingest worker has
    them from the embedder, which split the same text the same way: issue 15), the same dict."""
    counts: dict[str, int] = {}
    _count_elements(counts, chain.from_iterable(map(_BYTE_TERMS.__getitem__, words)))
    return counts


def _term_stream(text: str) -> Iterator[str]:
    """Every term of ``text`` in order, each word's from its cache: ASCII text split as bytes
    (:data:`_BYTE_TERMS`), any other through :func:`word_terms`; no Python code runs per word."""
    if text.isascii():
        found = map(_BYTE_TERMS.__getitem__, ascii_words(text))
    else:
        found = map(word_terms, _WORD.findall(text))
    return chain.from_iterable(found)


def field_text(counts: dict[str, int], total: int | None = None) -> str:
    """The keyword index's field text of ``counts``: each term repeated as often as it occurs,
    in first-seen order, separated by spaces. ``total``: the sum of the counts, when the caller
    has it (equal to the number of terms: every term once, joined as is). Most terms of a row
    occur once, so only a repeated one builds a string of its own (half the cost of building
    ``"term " * count`` for every term, issue 15)."""
    if total is not None and total == len(counts):
        return " ".join(counts)
    return " ".join([term if n == 1 else (term + " ") * (n - 1) + term for term, n in counts.items()])


def terms(text: str) -> list[str]:
    """The terms of ``text`` in order, repeats kept (what a question is searched with): the same
    stream :func:`term_counts` counts, through its word caches."""
    return list(_term_stream(text))


_TITLE_KIND = re.compile(r"^(?:(?:async|pub|static|abstract)\s+)*[a-z]+\s+")
_TITLE_LINES = re.compile(r"\s*\(lines \d+-\d+\)$|^lines \d+-\d+$")


def title_name(title: str) -> str:
    """The name part of a chunk title: ``method Client._send`` → ``Client._send``; ``lines 1-60``
    and a window suffix say nothing and are dropped; a Markdown section title is kept whole."""
    if "lines " in title:  # (what either of _TITLE_LINES' forms holds)
        title = _TITLE_LINES.sub("", title)
    if title in ("module", "Introduction", "Body"):
        return ""
    match = _TITLE_KIND.match(title)
    return title[match.end():] if match else title


def path_text(path: str) -> str:
    """The searchable words of a path: its directories and file name without the extension."""
    directory, _, name = path.rpartition("/")
    dot = name.rfind(".")
    stem_name = name[:dot] if dot > 0 else name
    return f"{directory.replace('/', ' ')} {stem_name}".strip()
