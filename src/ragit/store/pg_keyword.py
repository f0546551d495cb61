"""The PostgreSQL keyword index: the postings the SQLite FTS5 index holds, packed per term.

SQLite keeps, per (path, chunk) row, the three fields of :func:`ragit.store.bm25.index_fields`
in an FTS5 table with the ``ascii`` tokenizer, and ragit.store.bm25 reads a term's postings back
as (row ids, Σ field weight × occurrences). Here the same fields are tokenized the way FTS5's
``ascii`` tokenizer does (ASCII letters and digits plus every non-ASCII character form tokens,
ASCII letters folded to lower case) and each (term, row) pair stores that same weighted count.
:func:`ragit.store.bm25.snapshot_scores` then does the arithmetic for both backends, with each
snapshot's own statistics, so the keyword scores are the same floats by construction (the counts
are small integers, exact in float64 on both sides).

Postings are stored the way they are read, a term at a time: ``keyword_segments`` holds, per term
and per batch of keyword rows an ingest inserted, one row with the term's row ids in that batch
(big-endian int32 offsets from ``first_row``) and their weighted counts (big-endian float64). A
term's postings are then a handful of contiguous reads however many rows hold it, where one row
per (term, row) made a frequent term cost a scattered heap read per posting (0.65 s a term at 1M
chunks). Segments are never rewritten, and a segment id only ever joins a term, so a warm reader
keeps a term's postings across ingests and reads just the segments it has not seen.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator

from .bm25 import FIELD_WEIGHTS, MAX_CACHED_TERMS, CachingPostings, Postings, index_fields

_TOKEN = re.compile(r"[0-9A-Za-z\x80-\U0010ffff]+")
_ASCII_LOWER = str.maketrans("ABCDEFGHIJKLMNOPQRSTUVWXYZ", "abcdefghijklmnopqrstuvwxyz")


def ascii_tokens(text: str) -> list[str]:
    """Tokens of ``text`` as FTS5's ``ascii`` tokenizer produces them."""
    return [t.translate(_ASCII_LOWER) for t in _TOKEN.findall(text)]


def row_postings(text: str, title: str, path: str) -> tuple[dict[str, float], int]:
    """(term → weighted count, the row's length D) of one keyword row, as the FTS5 index holds it."""
    fields = index_fields(text, title, path)
    weights: dict[str, float] = {}
    for weight, field in zip(FIELD_WEIGHTS, fields[:3]):
        for token in ascii_tokens(field):
            weights[token] = weights.get(token, 0.0) + weight
    return weights, fields[3]


SEGMENT_ROWS = 65_536  # keyword rows whose postings one segment per term holds (at most)
_MAX_SPAN = 2**31 - 1  # the offsets are int32


class PgPostings(CachingPostings):
    """term → (row ids ascending, weighted counts) read from ``keyword_segments``; the interface
    of :class:`ragit.store.bm25.PostingsReader`. The generation is ``store_meta.keyword_generation``,
    which a write that publishes new keyword rows changes; a warm reader (``cache=True``) stays
    current across generations: a cached term asked for under a new generation lists its segment
    ids again and reads only the new ones."""

    def __init__(self, conn, cache: bool = False, owns_connection: bool = False):
        super().__init__(conn, cache, owns_connection)
        self._segments: dict[str, frozenset[int]] = {}  # cached term -> the segments it holds
        self._listed: dict[str, str] = {}  # cached term -> generation its segments were listed in

    def read_generation(self) -> str:
        row = self._conn.execute("SELECT value FROM store_meta WHERE key = 'keyword_generation'").fetchone()
        return row[0] if row else ""

    def current(self) -> bool:
        """Always current: note the generation, so the next read of a cached term checks for new
        segments (read after this, so it sees at least what the generation covers)."""
        self.generation = self.read_generation()
        return True

    def __call__(self, term: str) -> Postings:
        if self._cache is None:
            return self._fetch(term)
        hit = self._cache.get(term)
        if hit is not None and self._listed.get(term) == self.generation:
            return hit
        listed = frozenset(int(r[0]) for r in self._conn.execute(
            "SELECT seg FROM keyword_segments WHERE term = %s", (term,)))
        held = self._segments.get(term)
        if hit is None or held is None or not held <= listed:
            hit = self._fetch(term)
        elif listed != held:
            hit = _merge([hit, *self._segments_of(term, " AND seg = ANY(%s)", (sorted(listed - held),))])
        if term not in self._cache and len(self._cache) >= MAX_CACHED_TERMS:
            dropped = next(iter(self._cache))
            self._cache.pop(dropped)
            self._segments.pop(dropped, None)
            self._listed.pop(dropped, None)
        self._cache[term], self._segments[term], self._listed[term] = hit, listed, self.generation
        return hit

    def _fetch(self, term: str) -> Postings:
        return _merge(self._segments_of(term, "", ()))

    def within(self, term: str, first: int, last: int) -> Postings:
        """Postings of ``term`` on rows ``first``..``last`` only (never cached)."""
        import numpy as np

        ids, tfs = _merge(self._segments_of(term, " AND last_row >= %s AND first_row <= %s", (first, last)))
        lo, hi = np.searchsorted(ids, [first, last + 1])
        return ids[lo:hi], tfs[lo:hi]

    def _segments_of(self, term: str, where: str, params: tuple) -> list[Postings]:
        import numpy as np

        rows = self._conn.execute("SELECT first_row, offsets, tfs FROM keyword_segments WHERE term = %s" + where,
                                  (term, *params), binary=True).fetchall()
        return [(np.frombuffer(offsets, dtype=">i4").astype(np.int64) + first, np.frombuffer(tfs, dtype=">f8")
                 .astype(np.float64)) for first, offsets, tfs in rows]


def _merge(parts: list[Postings]) -> Postings:
    """One term's postings from its segments (each ascending; a row is in one segment only)."""
    import numpy as np

    if not parts:
        return np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.float64)
    if len(parts) == 1:
        return parts[0]
    ids = np.concatenate([p[0] for p in parts])
    tfs = np.concatenate([p[1] for p in parts])
    if len(ids) > 1 and np.any(ids[1:] < ids[:-1]):  # segments of concurrent ingests interleave
        order = np.argsort(ids, kind="stable")
        ids, tfs = ids[order], tfs[order]
    return ids, tfs


def segment_rows(rows: Iterable[tuple[int, dict[str, float]]]) -> Iterator[tuple[str, int, int, bytes, bytes]]:
    """(term, first row, last row, offsets, weighted counts) of each term in ``rows`` (row id,
    term → weighted count), for COPY into ``keyword_segments``: one segment per term, split where
    a term's rows would span more than int32 offsets reach."""
    import numpy as np

    code_of: dict[str, int] = {}
    codes: list[int] = []
    ids: list[int] = []
    tfs: list[float] = []
    for row_id, weights in rows:
        codes.extend(code_of.setdefault(term, len(code_of)) for term in weights)
        tfs.extend(weights.values())
        ids.extend([row_id] * len(weights))
    if not codes:
        return
    code = np.asarray(codes, dtype=np.int64)
    row = np.asarray(ids, dtype=np.int64)
    weight = np.asarray(tfs, dtype=np.float64)
    order = np.lexsort((row, code))
    code, row, weight = code[order], row[order], weight[order]
    starts = np.flatnonzero(np.concatenate(([True], code[1:] != code[:-1], [True])))
    terms = list(code_of)
    for lo, hi in zip(starts[:-1].tolist(), starts[1:].tolist()):
        term = terms[int(code[lo])]
        while lo < hi:
            first = int(row[lo])
            end = lo + int(np.searchsorted(row[lo:hi], first + _MAX_SPAN, side="right"))
            yield (term, first, int(row[end - 1]), (row[lo:end] - first).astype(">i4").tobytes(),
                   weight[lo:end].astype(">f8").tobytes())
            lo = end
