"""BM25 with each snapshot's own statistics (knowledge §11.4): the keyword score of every backend.

The keyword index stores, per (path, chunk) row, the terms of :mod:`ragit.lexical` in three
weighted fields (text 1, title 2, path 2). A question's score for a snapshot is Okapi BM25 over
the snapshot's rows only: the row count N, each term's document frequency and the average row
length are the snapshot's, never the store's, so the same question at the same commit gives the
same scores whatever else the store holds (another branch, an evaluation's other commits).

    idf(t) = log((N − df + 0.5) / (df + 0.5)), or 1e-6 when that is ≤ 0 (FTS5's floor)
    f      = Σ_field weight · occurrences of t in the field
    score  = Σ_t idf(t) · f (k1 + 1) / (f + k1 (1 − b + b · D / avgdl)),   k1 = 1.2, b = 0.75

summed over the question's terms in order (a repeated term counts again), D being the row's
number of terms in all fields. A backend supplies postings (row ids with their weighted counts)
and each snapshot's row lengths; the arithmetic lives here once, so SQLite, PostgreSQL and the
lab (bench/quality_lab.py) compute the same floats.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # pragma: no cover
    import numpy as np

K1 = 1.2
B = 0.75
FIELDS = ("text", "title", "path")
FIELD_WEIGHTS = (1.0, 2.0, 2.0)
MAX_CACHED_TERMS = 20_000  # postings a warm reader keeps (oldest dropped first)

Postings = tuple["np.ndarray", "np.ndarray"]  # (row ids ascending int64, weighted counts float64)


def idf(n_rows: int, df: int) -> float:
    value = math.log((n_rows - df + 0.5) / (df + 0.5))
    return value if value > 0.0 else 1e-6


def field_counts(text: str, title: str, path: str) -> tuple[dict[str, int], dict[str, int], dict[str, int]]:
    """Term counts of a row's three fields (text, the title's name part, the path's words)."""
    from ..lexical import path_text, term_counts, title_name

    return term_counts(text), term_counts(title_name(title)), term_counts(path_text(path))


def index_fields(text: str, title: str, path: str) -> tuple[str, str, str, int]:
    """The three fields as the index stores them (terms separated by spaces, each repeated as
    often as it occurs) and the row's length D (its number of terms)."""
    counts = field_counts(text, title, path)
    fields = tuple(" ".join(" ".join([term] * n) for term, n in c.items()) for c in counts)
    return fields[0], fields[1], fields[2], sum(sum(c.values()) for c in counts)


def weighted_counts(text: str, title: str, path: str) -> tuple[dict[str, float], int]:
    """A document scored outside the index (an overlay artifact): weighted term counts and length."""
    counts = field_counts(text, title, path)
    out: dict[str, float] = {}
    for weight, c in zip(FIELD_WEIGHTS, counts):
        for term, n in c.items():
            out[term] = out.get(term, 0.0) + weight * n
    return out, sum(sum(c.values()) for c in counts)


def snapshot_scores(
    postings: Callable[[str], Postings],
    terms: Sequence[str],
    rowids: "np.ndarray",
    lengths: "np.ndarray",
    extra: Sequence[tuple[dict[str, float], int]] = (),
) -> tuple["np.ndarray", list[float]]:
    """Raw BM25 of every snapshot row (sorted ``rowids`` with their ``lengths``) and of each
    ``extra`` document, with the statistics of those rows and documents together."""
    import numpy as np

    n = len(rowids)
    score = np.zeros(n, dtype=np.float64)
    extra_score = [0.0] * len(extra)
    n_rows = n + len(extra)
    if not terms or not n_rows:
        return score, extra_score
    total = float(lengths.sum()) + float(sum(length for _, length in extra))
    avgdl = total / n_rows if total > 0 else 1.0
    norm = K1 * (1.0 - B + B * lengths / avgdl)
    cache: dict[str, tuple] = {}
    for term in terms:
        hit = cache.get(term)
        if hit is None:
            ids, tf = postings(term)
            if len(ids) and n:
                pos = np.minimum(np.searchsorted(rowids, ids), n - 1)
                inside = rowids[pos] == ids
                pos, tf = pos[inside], tf[inside]
            else:
                pos, tf = np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.float64)
            extra_tf = [doc.get(term, 0.0) for doc, _ in extra]
            df = len(pos) + sum(1 for f in extra_tf if f > 0)
            hit = cache[term] = (pos, tf, extra_tf, idf(n_rows, df) if df else 0.0)
        pos, tf, extra_tf, weight = hit
        if not weight:
            continue
        if len(pos):
            score[pos] += weight * ((tf * (K1 + 1.0)) / (tf + norm[pos]))
        for i, f in enumerate(extra_tf):
            if f > 0:
                doc_norm = K1 * (1.0 - B + B * extra[i][1] / avgdl)
                extra_score[i] += weight * ((f * (K1 + 1.0)) / (f + doc_norm))
    return score, extra_score


class PostingsReader:
    """Postings of an FTS5 keyword index, read through its ``fts5vocab`` instance table.

    A term's occurrences come back as one ``group_concat`` string of ``row · ncols + column``
    codes (SQLite hands over a whole doclist at once instead of one Python row per occurrence)
    and are summed per row with the field weights. A warm reader (``cache=True``) keeps the
    postings of recent terms; it belongs to one index generation (the FTS averages record), which
    any write changes, so a caller drops it when :meth:`current` turns false.
    """

    def __init__(self, conn, vocab: str, data_table: str, cache: bool = False, owns_connection: bool = False):
        self._conn = conn
        self._owns = owns_connection
        self._vocab = vocab
        self._data = data_table
        self._cache: dict[str, Postings] | None = {} if cache else None
        self._code_sql = f"doc * {len(FIELDS)} + CASE col " + " ".join(
            f"WHEN '{c}' THEN {i}" for i, c in enumerate(FIELDS)) + " END"
        self.generation = self.read_generation()

    def read_generation(self) -> bytes:
        row = self._conn.execute(f"SELECT block FROM {self._data} WHERE id = 1").fetchone()
        return bytes(row[0]) if row else b""

    def current(self) -> bool:
        return self.read_generation() == self.generation

    def close(self) -> None:
        if self._owns:
            self._conn.close()

    def __call__(self, term: str) -> Postings:
        if self._cache is not None:
            hit = self._cache.get(term)
            if hit is not None:
                return hit
        hit = self._decode(self._conn.execute(
            f"SELECT group_concat({self._code_sql}) FROM {self._vocab} WHERE term = ?", (term,)).fetchone()[0])
        if self._cache is not None:
            if len(self._cache) >= MAX_CACHED_TERMS:
                self._cache.pop(next(iter(self._cache)))
            self._cache[term] = hit
        return hit

    def within(self, term: str, first: int, last: int) -> Postings:
        """The postings of ``term`` on rows ``first``..``last`` only (never cached). The index
        still walks the term's whole doclist, but rows outside the range cost no decoding."""
        return self._decode(self._conn.execute(
            f"SELECT group_concat({self._code_sql}) FROM {self._vocab} WHERE term = ? AND doc BETWEEN ? AND ?",
            (term, first, last)).fetchone()[0])

    @staticmethod
    def _decode(text: str | None) -> Postings:
        """Row ids and weighted counts from the ``row · ncols + column`` codes of one doclist."""
        import numpy as np

        if text:
            codes = np.fromstring(text, dtype=np.int64, sep=",")  # text mode: 8x faster than split()
            docs = codes // len(FIELDS)
            weights = np.asarray(FIELD_WEIGHTS, dtype=np.float64)[codes % len(FIELDS)]
            if np.any(docs[1:] < docs[:-1]):  # doclists are in row order; cheap insurance
                order = np.argsort(docs, kind="stable")
                docs, weights = docs[order], weights[order]
            starts = np.flatnonzero(np.concatenate(([True], docs[1:] != docs[:-1])))
            # Σ weight per row, summed in occurrence order (small integers times 1 or 2: exact)
            return docs[starts], np.add.reduceat(weights, starts)
        return np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.float64)


def restrict(postings: Postings, rowids: "np.ndarray") -> Postings:
    """The part of ``postings`` on the sorted ``rowids`` (both ascending, so the result is too):
    exactly the pairs :func:`snapshot_scores` keeps, in the same order."""
    import numpy as np

    ids, tf = postings
    if not len(ids) or not len(rowids):
        return ids[:0], tf[:0]
    if len(rowids) < len(ids):  # look the fewer values up in the longer array
        pos = np.minimum(np.searchsorted(ids, rowids), len(ids) - 1)
        pos = pos[ids[pos] == rowids]
        return ids[pos], tf[pos]
    pos = np.minimum(np.searchsorted(rowids, ids), len(rowids) - 1)
    inside = rowids[pos] == ids
    return ids[inside], tf[inside]


class SharedPostings:
    """The postings many snapshots' questions ask for, each term read once (``eval run``: one
    store, many commits, a question per commit).

    A backend's postings cover every row of the store, so for an evaluation store holding dozens
    of commits a term's doclist is many times a snapshot's share of it, and reading it again for
    every question costs the store's size each time. Here each distinct term of the batch is
    read once, for the row range of the snapshots asking for it (``within(term, first, last)``,
    :meth:`PostingsReader.within`), and cut to each one's rows (:func:`restrict`); as
    :func:`snapshot_scores` keeps only a snapshot's rows anyway, it finds the same pairs in the
    same order and returns the same floats. ``seconds[i]`` is snapshot ``i``'s share of the
    reading (each term's time split evenly among the snapshots asking for it).
    """

    def __init__(self, within: Callable[[str, int, int], Postings],
                 asks: Sequence[tuple["np.ndarray", Sequence[str]]]):
        import time

        self._parts: list[dict[str, Postings]] = [{} for _ in asks]
        self.seconds = [0.0] * len(asks)
        users: dict[str, list[int]] = {}
        for i, (rowids, terms) in enumerate(asks):
            if len(rowids):
                for term in dict.fromkeys(terms):
                    users.setdefault(term, []).append(i)
        for term, who in users.items():
            started = time.perf_counter()
            first = min(int(asks[i][0][0]) for i in who)
            last = max(int(asks[i][0][-1]) for i in who)
            whole = within(term, first, last)
            for i in who:
                self._parts[i][term] = restrict(whole, asks[i][0])
            share = (time.perf_counter() - started) / len(who)
            for i in who:
                self.seconds[i] += share

    def reader(self, i: int) -> Callable[[str], Postings]:
        """Postings of snapshot ``i``'s terms (only the terms it asked for; none for no rows)."""
        return self._parts[i].__getitem__


def in_memory_scores(docs: Sequence[tuple[str, str, str]], terms: Sequence[str]) -> list[float]:
    """Raw BM25 of ``docs`` (text, title, path) with their own statistics: for candidates with no
    store to share statistics with (degraded recall)."""
    import numpy as np

    empty = np.zeros(0, dtype=np.int64)
    _, scores = snapshot_scores(lambda term: (empty, np.zeros(0)), terms, empty, np.zeros(0),
                                [weighted_counts(*doc) for doc in docs])
    return scores
