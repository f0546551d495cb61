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
from functools import lru_cache
from collections.abc import Callable, Iterable, Sequence
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


def index_fields(text: str, title: str, path: str, words: list[bytes] | None = None) -> tuple[str, str, str, int]:
    """The three fields as the index stores them (terms separated by spaces, each repeated as
    often as it occurs) and the row's length D (its number of terms). ``words``: the
    :func:`ragit.lexical.ascii_words` of an ASCII ``text`` when the caller has them (not split again)."""
    lexical = _lexical()
    body = lexical.term_counts(text) if words is None else lexical.ascii_term_counts(words)
    body_terms = sum(body.values())
    head_field, head_terms = _title_field(title)  # titles repeat (sections, windows of one unit)
    path_field, path_terms = _path_field(path)  # a file's chunks come in a row: analysed once
    return lexical.field_text(body, body_terms), head_field, path_field, body_terms + head_terms + path_terms


def _lexical():
    """:mod:`ragit.lexical`, imported on first use (an import statement per row of an ingest
    costs ~0.5 µs: 20-45 ms on sympy)."""
    global _LEXICAL
    if _LEXICAL is None:
        from .. import lexical

        _LEXICAL = lexical
    return _LEXICAL


_LEXICAL = None


@lru_cache(maxsize=1024)
def _path_field(path: str) -> tuple[str, int]:
    """The path field of :func:`index_fields` and its number of terms."""
    return _field(_lexical().path_text(path))


@lru_cache(maxsize=4096)
def _title_field(title: str) -> tuple[str, int]:
    """The title field of :func:`index_fields` (the title's name part) and its number of terms."""
    return _field(_lexical().title_name(title))


def _field(text: str) -> tuple[str, int]:
    """A field's text and its number of terms."""
    lexical = _lexical()
    counts = lexical.term_counts(text)
    total = sum(counts.values())
    return lexical.field_text(counts, total), total


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
    positions: "RowPositions | None" = None,
) -> tuple["np.ndarray", list[float]]:
    """Raw BM25 of every snapshot row (sorted ``rowids`` with their ``lengths``) and of each
    ``extra`` document, with the statistics of those rows and documents together (``positions``:
    the rows' :class:`RowPositions`, built here when not given)."""
    scorer = SnapshotKeyword(postings, terms, rowids, lengths, extra, positions)
    return scorer.full(), scorer.extra_score


class RowPositions:
    """The snapshot position of a store row id, found in O(1) per id where the snapshot's row ids
    allow it: a snapshot ingested in one go holds a contiguous run of ids (position = id − first),
    and one that shares rows with other commits gets a lookup table over its id span (unless the
    span is far larger than the snapshot; then a binary search, as before). A warm process keeps
    one per snapshot (``SnapshotMatrix``), so the postings of a question's terms cost no search."""

    def __init__(self, rowids: "np.ndarray"):
        import numpy as np

        self.rowids = rowids
        n = len(rowids)
        self.first = int(rowids[0]) if n else 0
        self.last = int(rowids[-1]) if n else -1
        span = self.last - self.first + 1
        self.contiguous = n > 0 and span == n
        self.table = None
        if n and not self.contiguous and span <= max(4 * n, 1 << 20):
            table = np.full(span, -1, dtype=np.int32)  # 4 bytes per id of the span (≤ 4n or 4 MiB)
            table[rowids - self.first] = np.arange(n, dtype=np.int32)
            self.table = table
        # what a warm snapshot's questions share (SnapshotKeyword): each term's restricted postings
        # (restrict_term) and score contributions, the rows' length total and minimum, every row's length
        # normalisation (:func:`_norms`), and a spare row mark and accumulator of the snapshot's size
        self.restricted = Memo(MAX_RESTRICTED_TERMS, MAX_MEMO_BYTES)
        self.contributions = Memo(MAX_RESTRICTED_TERMS, MAX_MEMO_BYTES)
        self.length_total: "tuple[np.ndarray, float] | None" = None
        self.length_min: "tuple[np.ndarray, float] | None" = None
        self.norms: "tuple[np.ndarray, float, np.ndarray | None] | None" = None
        self.spare: list = []

    def restrict_term(self, term: str, ids: "np.ndarray", tf: "np.ndarray") -> "tuple[np.ndarray, np.ndarray]":
        """:meth:`restrict` of one term's postings, remembered while the postings reader hands
        out the very same arrays for the term (a warm reader caches them; a new reader, after a
        write, gives new arrays): the same words come back question after question."""
        memo = self.restricted
        hit = memo.get(term)
        if hit is not None and hit[0] is ids and hit[1] is tf:
            return hit[2]
        out = self.restrict(ids, tf)
        memo.put(term, (ids, tf, out), out[0].nbytes + out[1].nbytes)
        return out

    def restrict(self, ids: "np.ndarray", tf: "np.ndarray") -> "tuple[np.ndarray, np.ndarray]":
        """(snapshot positions, weighted counts) of the postings ``ids`` (ascending) that are
        snapshot rows, in the order of ``ids``: the pairs a binary search of every id finds."""
        import numpy as np

        n = len(self.rowids)
        if not len(ids) or not n:
            return np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.float64)
        if not (ids[0] >= self.first and ids[-1] <= self.last):  # (else every id is in the span)
            lo, hi = np.searchsorted(ids, [self.first, self.last + 1])
            ids, tf = ids[lo:hi], tf[lo:hi]
        if self.contiguous:
            return (ids - self.first).astype(np.int64, copy=False), tf
        if self.table is not None:
            pos = self.table[ids - self.first]
            inside = pos >= 0
            return pos[inside].astype(np.int64), tf[inside]
        pos = np.minimum(np.searchsorted(self.rowids, ids), n - 1)
        inside = self.rowids[pos] == ids
        return pos[inside], tf[inside]


MAX_RESTRICTED_TERMS = 4096  # terms whose snapshot positions a warm snapshot keeps (RowPositions)
# Bytes of arrays each of those memos keeps: counted in terms alone, a warm 1M-chunk snapshot's
# restricted postings reached 345 MB after 200 questions (432 terms); a small store never nears it.
MAX_MEMO_BYTES = 64 << 20
# SnapshotKeyword.best scans the snapshot's held scores for its rows instead of reading them at
# the reaching postings once those outnumber the snapshot's rows by 1 to this (a posting read,
# compared and merged costs ~10× a row scanned).
SCAN_POSTINGS = 10
# Postings a scratch accumulation (SnapshotKeyword._accumulated) scores at a time: a block's norms,
# shares and positions (~0.4 MB) stay in the 2-4 MB L2 (one 160k-posting term's arrays do not;
# 1M chunks, four terms of 20k-160k postings: 2.97 → 2.50 ms).
SHARE_BLOCK = 16_384
BOUND_MARGIN = 1.0 + 1e-9  # relative slack on every upper bound: covers the rounding of a few float ops


class Memo:
    """An insertion-ordered memo that forgets its oldest entries past ``max_items`` entries or
    ``max_bytes`` of the arrays it alone keeps, so a long-lived warm process stays flat."""

    def __init__(self, max_items: int, max_bytes: int) -> None:
        self.max_items, self.max_bytes = max_items, max_bytes
        self.bytes = 0
        self._entries: dict = {}  # key -> (value, bytes)

    def __len__(self) -> int:
        return len(self._entries)

    def get(self, key):
        hit = self._entries.get(key)
        return None if hit is None else hit[0]

    def put(self, key, value, nbytes: int) -> None:
        """Keep ``value`` (``nbytes``: what it holds that nothing else does), forgetting the oldest
        entries while the memo is over either bound; a value larger than the whole budget is not kept."""
        if nbytes > self.max_bytes:
            return
        old = self._entries.pop(key, None)
        if old is not None:
            self.bytes -= old[1]
        while self._entries and (len(self._entries) >= self.max_items or self.bytes + nbytes > self.max_bytes):
            self.bytes -= self._entries.pop(next(iter(self._entries)))[1]
        self._entries[key] = (value, nbytes)
        self.bytes += nbytes


def _length_stat(positions: "RowPositions | None", lengths: "np.ndarray", kind: str) -> float:
    """The snapshot's row lengths' ``"total"`` (an exact integer sum) or ``"min"``, kept by a warm
    snapshot's positions (``length_total`` / ``length_min``) while its lengths array stays the same."""
    attr = "length_" + kind
    memo = getattr(positions, attr) if positions is not None else None
    if memo is not None and memo[0] is lengths:
        return memo[1]
    value = float(lengths.sum() if kind == "total" else lengths.min())
    if positions is not None:
        setattr(positions, attr, (lengths, value))
    return value


def length_norm(length, avgdl: float):
    """BM25's length normalisation k1 (1 − b + b·D/avgdl) of a row length or an array of them:
    every path computes it here, so a kept table and an on-demand value are the same floats."""
    return K1 * (1.0 - B + B * length / avgdl)


def shares(tf: "np.ndarray", norm: "np.ndarray", weight: float) -> "np.ndarray":
    """A term's share ``weight · tf (k1 + 1) / (tf + norm)`` of each posting's score, computed in
    ``norm``'s memory (a fresh array the caller gives up): the same operations on the same
    operands as the expression (IEEE addition and multiplication commute), so the same floats,
    with two temporaries of the postings' size fewer (1M chunks: ≈ 30 % of a question's keyword
    arithmetic). Counts or norms of another type than float64 take the expression as written
    (its own promotions)."""
    import numpy as np

    if norm.dtype != np.float64 or getattr(tf, "dtype", None) != np.float64:
        return weight * ((tf * (K1 + 1.0)) / (tf + norm))
    norm += tf
    np.divide(tf * (K1 + 1.0), norm, out=norm)
    norm *= weight
    return norm


def _norms(positions: "RowPositions | None", lengths: "np.ndarray", avgdl: float) -> "np.ndarray | None":
    """Every snapshot row's length normalisation k1 (1 − b + b·D/avgdl), kept by a warm snapshot's
    positions from its second question with the same ``avgdl`` on (a one-shot query computes it
    only where it reads it): one gather per term then replaces a gather and four passes of
    arithmetic over the term's postings. The same operations per element, so the same floats."""
    if positions is None:
        return None
    memo = positions.norms
    if memo is not None and memo[0] is lengths and memo[1] == avgdl:
        if memo[2] is None:
            positions.norms = memo = (lengths, avgdl, length_norm(lengths, avgdl))
        return memo[2]
    positions.norms = (lengths, avgdl, None)
    return None


class SnapshotKeyword:
    """One question's BM25 over one snapshot, computed on demand: the whole score array
    (:meth:`full`, what :func:`snapshot_scores` returns), the exact scores of chosen rows
    (:meth:`exact`) or a bounded exact top-k (:meth:`top`), all with the same floats.

    Reading a term's postings fixes its idf (the snapshot's df) and its positions; a row's score
    is then the sum, in the question's term order (a repeated term adds again), of
    ``idf · tf (k1 + 1) / (tf + norm)``, and each way of computing it performs exactly those
    float operations on that row, element by element, so the bits do not depend on which rows
    are computed together.
    """

    def __init__(self, postings: Callable[[str], Postings], terms: Sequence[str], rowids: "np.ndarray",
                 lengths: "np.ndarray", extra: Sequence[tuple[dict[str, float], int]] = (),
                 positions: "RowPositions | None" = None):
        import numpy as np

        n = len(rowids)
        self.n = n
        self.lengths = lengths
        self._positions = positions  # the snapshot's, when the caller keeps one (warm): see full()
        self.extra_score = [0.0] * len(extra)
        self.sequence: list[str] = []  # the question's terms that weigh, in order (repeats kept)
        self.terms: dict[str, tuple] = {}  # term → (positions, tf, idf)
        n_rows = n + len(extra)
        self.avgdl = 1.0
        self._holding = False
        self._held: "tuple[np.ndarray, np.ndarray] | None" = None  # (mark, accumulator) while held
        self._norm_table: "np.ndarray | None" = None
        if not terms or not n_rows:
            return
        total = _length_stat(positions, lengths, "total") + float(sum(length for _, length in extra))
        self.avgdl = avgdl = total / n_rows if total > 0 else 1.0
        self._norm_table = _norms(positions, lengths, avgdl) if n else None
        if positions is None and n:
            positions = RowPositions(rowids)
        empty = (np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.float64))
        cache: dict[str, tuple] = {}
        for term in terms:
            hit = cache.get(term)
            if hit is None:
                ids, tf = postings(term)
                pos, tf = positions.restrict_term(term, ids, tf) if len(ids) and n else empty
                extra_tf = [doc.get(term, 0.0) for doc, _ in extra]
                df = len(pos) + sum(1 for f in extra_tf if f > 0)
                hit = cache[term] = (pos, tf, extra_tf, idf(n_rows, df) if df else 0.0)
            pos, tf, extra_tf, weight = hit
            if not weight:
                continue
            if len(pos):
                self.sequence.append(term)
                self.terms[term] = (pos, tf, weight)
            for i, f in enumerate(extra_tf):
                if f > 0:
                    doc_norm = length_norm(extra[i][1], avgdl)
                    self.extra_score[i] += weight * ((f * (K1 + 1.0)) / (f + doc_norm))

    def full(self) -> "np.ndarray":
        """Raw BM25 of every snapshot row (0 where no term matches)."""
        import numpy as np

        score = np.zeros(self.n, dtype=np.float64)
        for term in self.sequence:
            # (a term's positions are distinct: ``add.at`` adds once per row, in one pass)
            np.add.at(score, self.terms[term][0], self._contribution(term, keep=True))
        return score

    def _contribution(self, term: str, keep: bool = False) -> "np.ndarray":
        """The term's share of the score of each row of its postings, in postings order. A warm
        snapshot keeps it (its RowPositions' memo, ``keep``): the same floats while the term's
        rows, its weight and the snapshot's avgdl are the same."""
        kept = self._kept(term)
        if kept is not None:
            return kept
        pos, tf, weight = self.terms[term]
        contribution = shares(tf, self._norm(pos), weight)
        if keep and self._positions is not None:
            self._positions.contributions.put((term, weight, self.avgdl), (pos, tf, self.lengths, contribution),
                                              contribution.nbytes)
        return contribution

    def _kept(self, term: str) -> "np.ndarray | None":
        """The term's contribution as a warm snapshot kept it (:meth:`_contribution`), or None."""
        if self._positions is None:
            return None
        pos, tf, weight = self.terms[term]
        hit = self._positions.contributions.get((term, weight, self.avgdl))
        if hit is not None and hit[0] is pos and hit[1] is tf and hit[2] is self.lengths:
            return hit[3]
        return None

    def _norm(self, pos: "np.ndarray") -> "np.ndarray":
        """BM25's length normalisation k1 (1 − b + b·D/avgdl) of the rows at ``pos`` (computed
        where needed: the same operations per element wherever it is computed)."""
        if self._norm_table is not None:
            return self._norm_table[pos]
        return length_norm(self.lengths[pos], self.avgdl)

    def exact(self, rows: "np.ndarray") -> "np.ndarray":
        """Raw BM25 of the snapshot rows at positions ``rows`` (ascending, distinct): the values
        ``full()[rows]`` has, bit for bit. A few rows are looked up in each term's postings (a
        binary search each); many are marked, and each term's postings on marked rows added up
        in a snapshot-wide accumulator, in the question's term order as :meth:`full` does."""
        import numpy as np

        rows = np.asarray(rows, dtype=np.int64)
        score = np.zeros(len(rows), dtype=np.float64)
        if not len(rows) or not self.sequence:
            return score
        if self._held is not None:
            return self._held[1][rows]
        postings = sum(len(self.terms[t][0]) for t in self.sequence)
        if self._holding or len(rows) * 16 > postings:
            # every posting added up in a snapshot-sized accumulator, as full() does (cheaper than
            # picking out the postings on ``rows`` first), and read at ``rows``
            mark, acc = self._accumulated()
            if self._holding:  # kept whole: the question's later reads are gathers (release())
                self._held = (mark, acc)
                return acc[rows]
            try:
                return acc[rows]
            finally:
                self._clear(mark, acc)
        norm = self._norm(rows)
        found: dict[str, tuple] = {}
        for term in self.sequence:
            hit = found.get(term)
            if hit is None:
                pos, tf, weight = self.terms[term]
                at = np.minimum(np.searchsorted(pos, rows), len(pos) - 1)
                inside = pos[at] == rows
                hit = found[term] = (inside, tf[at[inside]], weight)
            inside, tf, weight = hit
            score[inside] += shares(tf, norm[inside], weight)
        return score

    def _accumulated(self) -> "tuple[np.ndarray, np.ndarray]":
        """A scratch accumulator holding every row's score (0 where no term matches), with its
        mark: each term's postings added in the question's order, as :meth:`full` does."""
        import numpy as np

        mark, acc = self._scratch()
        for term in self.sequence:
            pos, tf, weight = self.terms[term]
            kept = self._kept(term)
            if kept is not None:
                np.add.at(acc, pos, kept)
                continue
            # a long posting list in blocks whose temporaries stay in cache, a short one in one
            # block (each posting's share is its own: the same floats, added in the same order)
            for lo in range(0, len(pos), SHARE_BLOCK):
                part = pos[lo : lo + SHARE_BLOCK]
                np.add.at(acc, part, shares(tf[lo : lo + SHARE_BLOCK], self._norm(part), weight))
        return mark, acc

    def _clear(self, mark: "np.ndarray", acc: "np.ndarray") -> None:
        """Zero the accumulator where the postings touched it (nothing else was; when they are
        many, the whole array at once is cheaper) and lend it again."""
        distinct = dict.fromkeys(self.sequence)
        if sum(len(self.terms[t][0]) for t in distinct) * 12 > len(acc):
            acc.fill(0.0)
        else:
            for term in distinct:
                acc[self.terms[term][0]] = 0.0
        self._give_back(mark, acc)

    def hold(self) -> None:
        """Keep the accumulator of every row's score once :meth:`exact` (or :meth:`top`) has
        filled it, so each later read of this question's scores is a gather: for a caller that
        reads many rows' scores, in several calls (the approximate path). :meth:`release`
        hands the accumulator back."""
        self._holding = True

    def release(self) -> None:
        """Stop holding (:meth:`hold`): the accumulator is cleared and lent again."""
        self._holding = False
        held, self._held = self._held, None
        if held is not None:
            self._clear(*held)

    def best(self, k: int) -> "tuple[np.ndarray, np.ndarray]":
        """The ``k`` best-scoring matching rows (ascending; every match when there are no more)
        with their exact scores; among rows tied at the cut the lowest positions stay: the
        ``k`` best of :meth:`top`'s rows, found from the held scores (:meth:`hold`) of each
        term's postings. The ``k``-th best score of one term's postings (distinct rows) is at
        most the ``k``-th best of all, so the rows of the postings scoring at least that hold
        the answer and every row tied at its cut. That term is the rarest with ``k`` postings
        or more: the fewest scores to read and sort, and (its rows scoring at least its higher
        idf) a floor that keeps about as few rows as the commonest term's, at a fifth of the
        cost (1M chunks: 0.6 → 0.1 ms). A row found only in terms whose bounds
        (:meth:`term_bounds`) add up to less than the floor cannot reach it, so those terms'
        postings, usually the commonest and longest, are not searched (MaxScore's cut)."""
        import numpy as np

        from ..arrays import unique_sorted

        if not self.sequence:
            return np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.float64)
        holding = self._holding
        self._holding = True
        try:
            if self._held is None:
                self._held = self._accumulated()
            acc = self._held[1]
            distinct = list(dict.fromkeys(self.sequence))
            floor = 0.0
            sizes = [len(self.terms[t][0]) for t in distinct]
            if k > 0 and max(sizes) >= k:
                size, at = min((size, at) for at, size in enumerate(sizes) if size >= k)
                values = acc[self.terms[distinct[at]][0]]
                floor = float(np.partition(values, size - k)[size - k])
            reaching = self._reaching(distinct, floor)
            if sum(len(self.terms[t][0]) for t in reaching) * SCAN_POSTINGS > self.n:
                # the same rows (every row scoring the floor or more holds a reaching term, and
                # with no floor every matching row scores more than 0), ascending and distinct,
                # from one pass over the held scores: cheaper than reading each reaching
                # posting's score and merging (1M chunks, ~120k postings: 1.15 → 0.75 ms)
                rows = np.flatnonzero(acc >= floor) if floor > 0.0 else np.flatnonzero(acc > 0.0)
            else:
                parts = []
                for term in reaching:
                    pos = self.terms[term][0]
                    parts.append(pos[acc[pos] >= floor])
                rows = unique_sorted(np.concatenate(parts))
            return best_matches(rows, acc[rows], k)
        finally:
            if not holding:
                self.release()

    def _reaching(self, distinct: list[str], floor: float) -> list[str]:
        """The terms of ``distinct`` (in order) whose postings can hold a row scoring ``floor`` or
        more that no other of them holds: all but the longest run of smallest-bound terms whose
        bounds (:meth:`term_bounds`) add up to less than ``floor`` (a row in none of the others
        scores at most that; never every term)."""
        if floor <= 0.0 or len(distinct) < 2:
            return distinct
        bounds = self.term_bounds()
        left_out: set[str] = set()
        total = 0.0
        for term in sorted(distinct, key=bounds.__getitem__):
            total = (total + bounds[term]) * BOUND_MARGIN
            if total >= floor or len(left_out) == len(distinct) - 1:
                break
            left_out.add(term)
        return [term for term in distinct if term not in left_out]

    def _scratch(self) -> "tuple[np.ndarray, np.ndarray]":
        """A snapshot-sized row mark (all False) and accumulator (all 0.0). A warm snapshot lends
        the same pair question after question (its RowPositions keeps it): two fresh arrays of
        the snapshot's size cost page faults and zeroing (≈ 2 ms each at 1M rows), and the
        caller clears just the rows it touched. Taken out while in use, so two threads never
        share one."""
        import numpy as np

        spare = self._positions.spare if self._positions is not None else None
        if spare:
            try:
                mark, acc = spare.pop()
                if len(mark) == self.n:
                    return mark, acc
            except IndexError:  # another thread took it first
                pass
        return np.zeros(self.n, dtype=bool), np.zeros(self.n, dtype=np.float64)

    def _give_back(self, mark: "np.ndarray", acc: "np.ndarray") -> None:
        if self._positions is not None:
            spare = self._positions.spare
            if not spare:
                spare.append((mark, acc))

    def term_bounds(self) -> dict[str, float]:
        """An upper bound of each term's total share of any row's score (its share times the
        times the question repeats it): idf · tfₘₐₓ (k1 + 1) / (tfₘₐₓ + normₘᵢₙ), which no
        posting exceeds (the share grows with tf and shrinks with the row's length), with
        :data:`BOUND_MARGIN` for rounding."""
        if not self.sequence:
            return {}
        shortest = _length_stat(self._positions, self.lengths, "min")
        norm_min = length_norm(shortest, self.avgdl)
        repeats: dict[str, int] = {}
        for term in self.sequence:
            repeats[term] = repeats.get(term, 0) + 1
        out = {}
        for term, times in repeats.items():
            _, tf, weight = self.terms[term]
            top = float(tf.max())
            out[term] = times * weight * (top * (K1 + 1.0)) / (top + norm_min) * BOUND_MARGIN
        return out

    def top(self, k: int, eligible: "np.ndarray | None" = None) -> "tuple[np.ndarray, np.ndarray, float]":
        """(rows, their exact scores, bound), rows ascending, such that every snapshot row outside
        ``rows`` scores at most ``bound`` and, when ``bound > 0``, at least ``k`` rows of ``rows``
        that ``eligible`` admits score more than ``bound`` (``bound = 0``: ``rows`` holds every
        matching row). So the ``k`` best eligible rows, every row tied with the k-th and the best
        row are all in ``rows``, with the floats :meth:`full` gives them.

        MaxScore over the question's terms: with the terms in descending order of their bounds
        (:meth:`term_bounds`), a row found in none of the first ``j`` terms' postings scores at
        most the sum of the other terms' bounds; once ``k`` eligible rows of those postings score
        more than that sum, no other row can reach them, and the other (usually frequent, low
        idf) terms are only looked up for those rows, never scattered over the snapshot.

        While the scorer holds the question's scores (:meth:`hold`, with no ``eligible``), every
        term's postings are added up anyway, so ``rows`` are those scoring more than the bound,
        found in one pass over the held scores: a subset of the postings' rows above, with the
        same promise (the ``k`` rows above the bound and, when it is 0, every match).
        """
        import numpy as np

        from ..arrays import unique_sorted

        bounds = self.term_bounds()
        if not bounds:
            return np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.float64), 0.0
        order = sorted(bounds, key=lambda t: -bounds[t])
        rest = [0.0] * len(order)  # rest[j]: bound of a row in none of order[:j + 1]
        for j in range(len(order) - 2, -1, -1):
            rest[j] = (rest[j + 1] + bounds[order[j + 1]]) * BOUND_MARGIN

        # a lower bound of the k-th best score: every row of the first term's postings scores at
        # least that term's share (shares are positive, and a float sum of positives is at least
        # each of them), so the k-th best share is at most the k-th best score
        pos, tf, weight = self.terms[order[0]]
        live = eligible[pos] if eligible is not None else None
        if live is not None:
            pos, tf = pos[live], tf[live]
        theta = 0.0
        if len(pos) >= k > 0:
            share = shares(tf, self._norm(pos), weight)
            theta = float(np.partition(share, len(share) - k)[len(share) - k])
        j = next((i for i in range(len(order)) if rest[i] < theta), len(order) - 1)
        bound = 0.0 if j == len(order) - 1 else rest[j]
        if self._holding and eligible is None:
            # every row's score is to be held anyway (hold()): the rows scoring more than the
            # bound are a valid answer (a subset of the postings' rows below, holding the same
            # k rows above it and every match when the bound is 0), found in one pass over the
            # held scores instead of marking the postings of the first terms
            if self._held is None:
                self._held = self._accumulated()
            acc = self._held[1]
            # (a row scoring more than the bound holds one of the first j + 1 terms: their postings'
            # scores are read when they are fewer than a scan of the snapshot costs, as best() does)
            reach = [self.terms[term][0] for term in order[: j + 1]]
            if sum(map(len, reach)) * SCAN_POSTINGS > self.n:
                rows = np.flatnonzero(acc > bound)
            else:
                rows = unique_sorted(np.concatenate([pos[acc[pos] > bound] for pos in reach]))
            return rows, acc[rows], bound
        if j == 0:
            rows = self.terms[order[0]][0]
        else:
            mark, acc = self._scratch()
            for term in order[: j + 1]:
                mark[self.terms[term][0]] = True
            rows = np.flatnonzero(mark)
            mark[rows] = False
            self._give_back(mark, acc)
        # no term left out (j last): every matching row, bound 0 (every posting scores more than
        # 0: a weight is at least 1e-6 and a count positive)
        return rows, self.exact(rows), bound


def best_matches(rows: "np.ndarray", scores: "np.ndarray", count: int) -> "tuple[np.ndarray, np.ndarray]":
    """The ``count`` best-scoring matches of ``rows`` (ascending) with their scores; among rows
    tied at the cut the first rows stay."""
    import numpy as np

    matched = scores > 0
    rows, scores = rows[matched], scores[matched]
    if len(rows) > count:
        kth = np.partition(scores, len(scores) - count)[len(scores) - count]
        tied = np.flatnonzero(scores == kth)
        above = np.flatnonzero(scores > kth)
        keep = np.sort(np.concatenate([above, tied[: count - len(above)]]))
        rows, scores = rows[keep], scores[keep]
    return rows, scores


class CachingPostings:
    """What every backend's postings reader shares: term → (row ids ascending, weighted counts),
    a warm reader (``cache=True``) keeping the postings of recent terms. A reader belongs to one
    index generation, which any write of keyword rows changes, so a caller drops it when
    :meth:`current` turns false. Backends give :meth:`read_generation`, :meth:`_fetch` (one
    term's postings) and :meth:`within`."""

    def __init__(self, conn, cache: bool = False, owns_connection: bool = False):
        self._conn = conn
        self._owns = owns_connection
        self._cache: dict[str, Postings] | None = {} if cache else None
        self._whole = False  # every term of the index is in the cache (load_whole)
        self.generation = self.read_generation()

    def read_generation(self) -> object:  # pragma: no cover - each backend's
        raise NotImplementedError

    def _fetch(self, term: str) -> Postings:  # pragma: no cover - each backend's
        raise NotImplementedError

    def within(self, term: str, first: int, last: int) -> Postings:  # pragma: no cover - each backend's
        raise NotImplementedError

    def _fetch_all(self) -> "Iterable[tuple[str, Postings]]":  # pragma: no cover - a backend's, if it can
        raise NotImplementedError

    def load_whole(self) -> None:
        """Read every term's postings now, in one pass over the index, into the cache (a warm
        reader of a small index: each question's new terms then cost no read, where one read
        a term cost ~60 µs at 6k chunks). A term missing from the index afterwards has no
        postings. The postings are exactly those a term's own read gives."""
        assert self._cache is not None
        self._cache.update(self._fetch_all())
        self._whole = True

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
        if self._whole:  # not in the index (nothing cached, so no term is ever dropped)
            return _no_postings()
        hit = self._fetch(term)
        if self._cache is not None:
            if len(self._cache) >= MAX_CACHED_TERMS:
                self._cache.pop(next(iter(self._cache)))
            self._cache[term] = hit
        return hit


class PostingsReader(CachingPostings):
    """Postings of an FTS5 keyword index, read through its ``fts5vocab`` instance table.

    A term's occurrences come back as one ``group_concat`` string of ``row · ncols + column``
    codes (SQLite hands over a whole doclist at once instead of one Python row per occurrence)
    and are summed per row with the field weights. The generation is the FTS averages record.
    """

    def __init__(self, conn, vocab: str, data_table: str, cache: bool = False, owns_connection: bool = False):
        self._vocab = vocab
        self._data = data_table
        self._code_sql = f"doc * {len(FIELDS)} + CASE col " + " ".join(
            f"WHEN '{c}' THEN {i}" for i, c in enumerate(FIELDS)) + " END"
        super().__init__(conn, cache, owns_connection)

    def read_generation(self) -> bytes:
        row = self._conn.execute(f"SELECT block FROM {self._data} WHERE id = 1").fetchone()
        return bytes(row[0]) if row else b""

    def _fetch(self, term: str) -> Postings:
        return self._decode(self._conn.execute(
            f"SELECT group_concat({self._code_sql}) FROM {self._vocab} WHERE term = ?", (term,)).fetchone()[0])

    def _fetch_all(self) -> "Iterable[tuple[str, Postings]]":
        """Every term's postings, as :meth:`_fetch` gives each (:meth:`_decode_many`)."""
        found = self._conn.execute(
            f"SELECT term, group_concat({self._code_sql}) FROM {self._vocab} GROUP BY term").fetchall()
        return zip([term for term, _ in found], self._decode_many([text for _, text in found]))

    @classmethod
    def _decode_many(cls, texts: "Sequence[str | None]") -> list[Postings]:
        """:meth:`_decode` of each doclist, the doclists decoded together (one parse, one sum:
        thousands of small terms decoded one at a time cost ~15 µs each). The same arrays:
        each row's weights are summed in occurrence order, and a term's rows are the runs of
        equal row ids inside its own codes."""
        import numpy as np

        counts = np.array([text.count(",") + 1 if text else 0 for text in texts], dtype=np.int64)
        bounds = np.concatenate(([0], np.cumsum(counts)))
        joined = ",".join(text for text in texts if text)
        codes = np.fromstring(joined, dtype=np.int64, sep=",") if joined else np.zeros(0, dtype=np.int64)
        first = np.zeros(len(codes) + 1, dtype=bool)  # where each term's codes start (and the end)
        first[bounds] = True
        docs = codes // len(FIELDS)
        if len(codes) != bounds[-1] or np.any((docs[1:] < docs[:-1]) & ~first[1:-1]):
            return [cls._decode(text) for text in texts]  # (a doclist out of row order: one at a time)
        weights = np.asarray(FIELD_WEIGHTS, dtype=np.float64)[codes % len(FIELDS)]
        change = first[:-1].copy()
        change[1:] |= docs[1:] != docs[:-1]
        starts = np.flatnonzero(change)
        ids = docs[starts]
        tf = np.add.reduceat(weights, starts) if len(starts) else np.zeros(0, dtype=np.float64)
        at = np.searchsorted(starts, bounds).tolist()  # each term's first row among the starts
        return [(ids[a:b], tf[a:b]) for a, b in zip(at, at[1:])]

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
        return _no_postings()


def _no_postings() -> Postings:
    import numpy as np

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
