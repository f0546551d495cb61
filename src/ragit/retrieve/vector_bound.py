"""The vector scores a warm query needs, and no more: exact cosines for the rows that can reach a
pool, found through an int8 sketch of the snapshot's matrix.

Exact search reads every row's float32 vector (100 MB at 100k chunks of 256 dimensions: ~7 ms of
a warm query, most of it memory traffic), yet the answer reads the vector score of a few hundred
rows only: those of the re-rank pool (``rerank.pool_indices``). A warm process keeps an int8 copy
of the matrix (:class:`Sketch`, a quarter of the bytes) whose integer dot products with the
question give each row's cosine to within a bound known per row; :func:`bounded_scores` scores
exactly (the same ``question_cosines`` floats, and BM25 of ``SnapshotKeyword.exact``) a set of
rows that provably holds every row of every pool, and ``rank_hits`` ranks that set alone, as it
does the approximate path's rows, with the same hits, scores and breakdowns, bit for bit, as on
the whole snapshot (bench/README.md: at 100k chunks ~2k rows are scored instead of 100k).

The bound
---------
Write ``μ`` for the mean row. For a row ``x`` (float32) let ``y = x − μ``, with scale
``s = max|y| / 127``, codes ``ξ = round(y / s)`` and error ``e = y − s·ξ``; for a question vector
``q`` let ``ζ = round(q / σ)`` (14 bits: two int8 halves, ``ζ = 127·ζ₁ + ζ₂``) and
``ε = q − σ·ζ``. Then, in real numbers, ``q·x = q·μ + s·σ·(ζ·ξ) + s·(ε·ξ) + q·e``, so by
Cauchy-Schwarz ``|q·x − q·μ − s·σ·(ζ·ξ)| ≤ ‖ε‖·(s‖ξ‖) + ‖q‖·‖e‖``. ``ζ·ξ`` is an exact integer
(int32 sums of int8 products), ``‖ε‖`` negligible, and the rows of an embedding share a large
common direction (``‖μ‖ ≈ 0.7`` on the bench corpus) that the codes need not carry: ``‖e‖`` is
~2.6× smaller for ``y`` than it would be for ``x``. The float32 dot product the score uses (``vecdot``) differs
from ``q·x`` by at most ``γ·‖q‖·‖x‖`` (``γ = (d + 2)·2⁻²⁴``, any order of summation), which the
per-row term adds, with a relative pad far above the float64 rounding of the bound's own few
operations. So :meth:`Sketch.upper` is at least every row's computed cosine (the best passage's:
the maximum of the passages' bounds), and with a file blend, ``Σ upper / ‖Σ x‖`` at least each
file's cosine (a sum of the file's cosines divided by the same stored norm), hence
``u = (1 − β)·upper + β·file upper`` at least each row's vector score (:func:`upper_vector`;
:func:`blended_upper` computes the same bound with fewer passes, each row's float32 term carrying
its own pad so that a file's sum of them still bounds the sum of its rows' bounds). For a row
whose exact cosine ``cos`` is known, ``(1 − β)·cos + β·file upper`` is a narrower bound of the
same score (:meth:`FileShare.tightened`); below, ``u`` may be either.

Why a row outside the scored set can never change the output
-------------------------------------------------------------
Write ``S`` for the scored rows (exact vector and raw keyword scores; whole files with a blend)
and ``R, b`` for :meth:`~ragit.store.bm25.SnapshotKeyword.top`'s rows and bound (every row
outside ``R`` has raw BM25 ``≤ b``; at least K rows of ``R`` score more when ``b > 0``; every
match is in ``R`` when ``b = 0``). ``rank_hits`` ranks ``S`` alone.

1. *The normaliser*: the best match is in ``R`` and scores at least R's K-th best, so ``S``
   (which holds those) has it, and ``best`` is the same.
2. *The keyword pool* (``R`` may be any set with that promise: while the scores are held,
   ``top`` gives the rows scoring more than ``b``): R's K-th best is the true K-th best, and
   every row tied with it is in ``R`` (the others score ``≤ b`` below it); ``S`` holds them.
   As in ``keyword_bound`` (step 2) it is checked on ``S`` that the K-th best *normalised*
   keyword still exceeds ``b / best`` (rounding could merge them), so no row left out ties
   with the cut.
3. *The vector pool*: ``V``, the K-th best vector score of ``S``, is at most the true K-th best;
   every row with ``u ≥ V`` is in ``S``, so every row at or above the true cut (ties included)
   is, with its exact score, and ``_top`` picks the same rows.
4. *The fused pool*: ``L``, the M-th best hybrid of ``S``, is at most the true M-th best. A row
   of ``R`` outside ``S`` has ``α·u + (1 − α)·kw < L`` with its exact keyword; a row outside
   ``R`` has keyword ``≤ b / best`` and either ``u < (L − (1 − α)·b / best) / α`` or, tested
   with its exact keyword, ``α·u + (1 − α)·kw < L``. Either way its hybrid is below ``L``.
5. Everything after the pools reads pool rows and ``best`` only (``keyword_bound``, step 5).

The slack of each comparison is far above the rounding of the comparison's own operations.
When a check fails (or the question has many passages), the caller scores every row. Only a
query ranked once with every row admitted and the re-rank on (``top_k`` given to
``score_snapshot``) takes this path.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Protocol, Sequence

from ..arrays import kth_best

if TYPE_CHECKING:  # pragma: no cover
    from collections.abc import Callable

    import numpy as np

    from ..store.bm25 import SnapshotKeyword


class SnapshotRows(Protocol):
    """What the bound reads of a snapshot's matrix (``search.SnapshotMatrix`` gives it)."""

    rowids: "np.ndarray"
    file_norms: "np.ndarray"

    def file_index(self) -> "np.ndarray": ...  # each row's file ordinal (int)
    def normed_files(self) -> "np.ndarray": ...  # the files whose norm is positive (bool)
    def file_rows(self, seed: "np.ndarray") -> "np.ndarray": ...  # every row of the seed rows' files
    # (run starts, row counts, norms, norm > 0) of the files holding rows, when each file's rows are one run
    def file_runs(self) -> "tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray] | None": ...


class PoolCut(Protocol):
    """Where the answer's pools are cut (``search.FusedCut`` gives it)."""

    alpha: float
    fused_k: int
    pool_k: int
    extra_raw: Sequence[float]

# Below this many rows every row is scored (the sketch's bookkeeping costs more than it saves).
SKETCH_MIN_ROWS = 20_000
# A question of more passages than this is scored whole (each passage adds a pass over the bounds).
MAX_SKETCH_PASSAGES = 8
# Wider vectors are scored whole: ζ·ξ must stay an exact int32 (|ζ·ξ| ≤ d·127³ < 2³¹).
MAX_SKETCH_DIMS = 1000
# Rows quantised at a time while building a sketch (bounds the float64 temporaries).
_BUILD_BLOCK = 8192
# Relative pad on every bound term, far above float64 rounding of the bound's few operations.
_PAD = 1.0 + 1e-9
# The bounds are float32 arrays (half the memory traffic of float64 over every row): each of the
# few float32 operations on values of magnitude ≤ ~2 rounds by at most 2⁻²³, and this absolute
# pad, added once to every bound, is far above their sum.
_F32_PAD = 1e-5


@dataclass(frozen=True)
class Sketch:
    """An int8 copy of a snapshot's matrix less its mean row (packed for numkong's integer dot
    products) with what bounds each row's cosine. The rows of an embedding share a large
    common direction (the mean row's norm is ~0.7 on the bench corpus), which the codes need
    not carry: ``q·x = q·μ + q·(x − μ)``, and the quantisation error of ``x − μ`` is ~2.6×
    smaller than that of ``x``."""

    packed: object  # numkong.PackedMatrix of the int8 codes round((x − μ) / scale), [rows, d]
    mean: "np.ndarray"  # float64 [d]: μ, the mean row
    scale: "np.ndarray"  # float32 per row: max |x − μ| / 127 (1 for a row equal to μ)
    spread: float  # the largest scale · ‖codes‖, padded
    error: "np.ndarray"  # float32 per row: ‖(x − μ) − scale·codes‖ + γ·‖x‖, padded
    padded_error: "np.ndarray"  # float32 per row: error + the float32 pad (scaled)

    @classmethod
    def of(cls, matrix: "np.ndarray") -> "Sketch":
        """The sketch of a float32 matrix."""
        import numkong
        import numpy as np

        rows, dims = matrix.shape
        gamma = (dims + 2) * 2.0**-24
        mean = matrix.mean(axis=0, dtype=np.float64) if rows else np.zeros(dims, dtype=np.float64)
        codes = np.empty((rows, dims), dtype=np.int8)
        scale = np.empty(rows, dtype=np.float64)
        error = np.empty(rows, dtype=np.float64)
        spread = 0.0
        for lo in range(0, rows, _BUILD_BLOCK):
            block = matrix[lo : lo + _BUILD_BLOCK].astype(np.float64)
            norm = np.sqrt(np.einsum("ij,ij->i", block, block))
            block -= mean
            top = np.abs(block).max(axis=1) / 127.0
            top[top == 0] = 1.0
            q = np.clip(np.rint(block / top[:, None]), -127, 127)
            codes[lo : lo + len(block)] = q
            rest = block - top[:, None] * q
            scale[lo : lo + len(block)] = top
            if len(block):
                spread = max(spread, float((top * np.sqrt(np.einsum("ij,ij->i", q, q))).max()) * _PAD)
            error[lo : lo + len(block)] = (np.sqrt(np.einsum("ij,ij->i", rest, rest)) + gamma * norm) * _PAD + 1e-12
        error32 = error.astype(np.float32)
        return cls(numkong.dots_pack(codes), mean, scale.astype(np.float32), spread, error32,
                   error32 + np.float32(_F32_PAD))

    def _dots(self, qvecs: "np.ndarray") -> "tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]":
        """(``ζ·ξ`` of every row per passage, int32 [passages, rows]; each passage's ``σ``, its
        ``‖q‖`` padded, and its shift: ``q·μ`` with far more than its float64 rounding plus
        ``‖ε‖·s‖ξ‖`` at the largest ``s‖ξ‖``) of the question's passage vectors ``qvecs``
        (float32 [passages, d]). The question is quantised to 14 bits, ``ζ = 127·ζ₁ + ζ₂`` with
        int8 halves (so ``ε`` is negligible: the row's own error is the bound's width)."""
        import numkong
        import numpy as np

        q = qvecs.astype(np.float64)
        step = np.abs(q).max(axis=1) / (127.0 * 127.0)
        step[step == 0] = 1.0
        zeta = np.rint(q / step[:, None])
        high = np.rint(zeta / 127.0)
        low = zeta - 127.0 * high  # in [−64, 64]: |ζ| ≤ 127², so |ζ₁| ≤ 127
        rest = q - step[:, None] * zeta
        eps = np.sqrt(np.einsum("ij,ij->i", rest, rest)) * _PAD
        qnorm = np.sqrt(np.einsum("ij,ij->i", q, q)) * _PAD
        shared = q @ self.mean
        shift = eps * self.spread + shared + 1e-9 * (1.0 + np.abs(shared))
        halves = np.concatenate([high, low]).astype(np.int8)
        dots = np.asarray(numkong.dots_packed(halves, self.packed))  # exact int32 [2·passages, rows]
        passages = len(q)
        whole = dots[:passages]
        whole *= 127
        whole += dots[passages:]  # ζ·ξ, exactly (|ζ·ξ| ≤ d·127³ < 2³¹)
        return whole, step, qnorm, shift

    def upper(self, qvecs: "np.ndarray") -> "np.ndarray":
        """Per row, at least its ``question_cosines`` value for the question's passage vectors
        ``qvecs`` (float32 [passages, d]); see the module's bound, applied to ``x − μ`` (``q·μ``
        is one float64 product a passage)."""
        import numpy as np

        whole, step, qnorm, shift = self._dots(qvecs)
        out = None
        for p in range(len(whole)):
            bound = np.multiply(whole[p], self.scale, dtype=np.float32)
            bound *= np.float32(step[p])
            slack = self.error * np.float32(qnorm[p])
            slack += np.float32(shift[p] + _F32_PAD)  # (and the float32 pad)
            bound += slack
            out = bound if out is None else np.maximum(out, bound, out=out)
        return out

    def scaled(self, qvec: "np.ndarray", weight: float) -> "tuple[np.ndarray, float]":
        """``(v, c)`` for one passage vector ``qvec`` (float32 [1, d]) and a weight ``w > 0``:
        float32 ``v`` with ``v ≥ w·(b − c)`` for every row's bound ``b`` of :meth:`upper` (``c``
        the passage's shift, the same for every row), each ``v`` with room above its own
        rounding, so that a sum of any rows' ``v`` is at least ``w`` times the sum of their
        ``b − c`` (what :func:`blended_upper` needs of a file). One fused multiply-add pass
        (numkong's ``fma``) instead of :meth:`upper`'s five: ``v = w·σ·(ζ·ξ)·s + w·‖q‖·(e +
        pad)``, whose float32 roundings (the int32 → float32 conversion, the scalars', the
        result's: a few times 2⁻²⁴ of ``w·‖q‖·‖x − μ‖``, rows of norm ≤ ~10) stay far below
        the pad's ``w·‖q‖·10⁻⁵``."""
        import numkong
        import numpy as np

        whole, step, qnorm, shift = self._dots(qvec)
        out = np.empty(whole.shape[1], dtype=np.float32)
        numkong.fma(whole[0].astype(np.float32), self.scale, self.padded_error, alpha=float(weight * step[0]),
                    beta=float(weight * qnorm[0]), out=out)
        return out, float(shift[0])


def upper_vector(snap: SnapshotRows, upper: "np.ndarray", file_blend: float) -> "np.ndarray":
    """At least each row's vector score (``vector_scores``), from its cosine bounds ``upper``:
    the blend of its own bound and its file's (the file's bounds summed over its norm)."""
    import numpy as np

    if not file_blend:
        return upper
    runs = snap.file_runs()
    if runs is not None:  # each file's rows one run: summed by reduceat, spread back by repeat
        starts, counts, norms, normed = runs
        # (pairwise float64 sums where bincount adds in row order: either errs by far less than the pad)
        sums = np.add.reduceat(upper, starts, dtype=np.float64)
    else:
        files = snap.file_index()
        sums = np.bincount(files, weights=upper, minlength=len(snap.file_norms))
        norms, normed = snap.file_norms, snap.normed_files()
    file_up = np.divide(sums, norms, out=np.zeros_like(sums), where=normed)
    file_up *= file_blend
    file_up += _F32_PAD  # (the float32 rounding of the blend below)
    out = upper * np.float32(1.0 - file_blend)
    out += np.repeat(file_up.astype(np.float32), counts) if runs is not None else file_up.astype(np.float32)[files]
    return out


@dataclass(frozen=True)
class FileShare:
    """What :func:`blended_upper` bounds of each file's share of its rows' vector scores:
    ``part[f]`` is at least ``β`` times the file cosine of the file whose run starts at
    ``starts[f]`` (with room above the rounding of a score's blend), so ``w·cos + part`` bounds
    the vector score of a row whose exact cosine ``cos`` is known (``w = 1 − β``)."""

    starts: "np.ndarray"  # where each file's run of rows starts (ascending)
    part: "np.ndarray"  # float64 per run
    keep: float  # w

    def tightened(self, rows: "np.ndarray", cosines: "np.ndarray") -> "np.ndarray":
        """At least the vector score of each of ``rows`` given its exact ``question_cosines``
        value (float64): narrower than the sketch's bound by the row's own share of its width."""
        import numpy as np

        return self.keep * cosines + self.part[np.searchsorted(self.starts, rows, side="right") - 1]


def blended_upper(snap: SnapshotRows, sketch: Sketch, qvecs: "np.ndarray", file_blend: float
                  ) -> "tuple[np.ndarray, FileShare | None]":
    """:func:`upper_vector` of the question's bounds (at least each row's vector score), for a
    question of one passage over a snapshot whose files' rows form runs in fewer passes over
    the rows: with ``w = 1 − β`` and ``c`` the passage's shift (:meth:`Sketch.scaled`), a row's
    bound is ``v + w·c + β·(Σ v / w + n·c) / ‖Σ x‖`` over its file's ``n`` rows, the sum and
    the shift added per file (``Σ v / w + n·c`` is at least the file's sum of :meth:`Sketch.upper`,
    each ``v`` holding its own pad), then spread back over the rows once. With it, the files'
    shares (:class:`FileShare`; None on the other paths)."""
    import numpy as np

    runs = snap.file_runs() if len(qvecs) == 1 and 0.0 < file_blend < 1.0 else None
    if runs is None:
        return upper_vector(snap, sketch.upper(qvecs), file_blend), None
    starts, counts, norms, normed = runs
    keep = 1.0 - file_blend
    scaled, shift = sketch.scaled(qvecs, keep)
    sums = np.add.reduceat(scaled, starts, dtype=np.float64)
    sums /= keep
    sums += counts * shift
    file_up = np.divide(sums, norms, out=np.zeros_like(sums), where=normed)
    file_up *= file_blend
    file_up += _F32_PAD  # (the float64 rounding of a score's blend; below, the float32 rounding of the sum)
    share = FileShare(starts, file_up, keep)
    scaled += np.repeat((file_up + keep * shift).astype(np.float32), counts)
    return scaled, share


class _Leaders:
    """The rows whose bound ``upper`` is at least a threshold ``floor``, found in one pass: the
    ``first`` best bounds and (usually) every later threshold of :func:`bounded_scores` lie above
    it, so its selections read these few thousand rows' bounds instead of passing over the
    snapshot again (a partition and two more full passes: ≈ 0.15 ms at 100k rows). ``floor`` is the
    ``SAMPLE_RANK``-th best of every ``SAMPLE_STRIDE``-th bound (about the ``SAMPLE_RANK ×
    SAMPLE_STRIDE``-th best of all); when fewer than ``first`` rows reach it, it is lowered to
    the ``first``-th best bound itself. Every answer is the same as from a pass over every row:
    a selection above ``floor`` finds every row there; one below it passes over every row."""

    SAMPLE_STRIDE = 16
    SAMPLE_RANK = 128

    def __init__(self, upper: "np.ndarray", first: int):
        import numpy as np

        self.upper = upper
        sample = upper[:: self.SAMPLE_STRIDE]
        floor = kth_best(sample, min(self.SAMPLE_RANK, len(sample)))
        rows = np.flatnonzero(upper >= floor) if floor == floor else np.zeros(0, dtype=np.int64)
        if len(rows) < first:  # (−inf when there are fewer than ``first`` rows: every row)
            floor = kth_best(upper, first)
            rows = np.flatnonzero(upper >= floor)
        self.floor, self.rows, self.values = floor, rows, upper[rows]

    def at_least(self, level: float) -> "np.ndarray":
        """The rows (ascending) whose bound is at least ``level``."""
        import numpy as np

        if level >= self.floor:
            return self.rows[self.values >= level]
        return np.flatnonzero(self.upper >= level)

    def best(self, k: int) -> "np.ndarray":
        """The rows (ascending) whose bound is at least the ``k``-th best (every row when there
        are fewer than ``k``): when ``k`` rows reach ``floor``, the ``k``-th best of all is theirs."""
        import numpy as np

        if len(self.rows) >= k:
            return self.rows[self.values >= kth_best(self.values, k)]
        return np.flatnonzero(self.upper >= kth_best(self.upper, k))


def bounded_scores(snap: SnapshotRows, sketch: Sketch, qvecs: "np.ndarray", file_blend: float,
                   vector_of: "Callable[[np.ndarray], np.ndarray]", scorer: "SnapshotKeyword | None",
                   cut: PoolCut, always: "np.ndarray | None" = None,
                   cosines_of: "Callable[[np.ndarray], np.ndarray] | None" = None
                   ) -> "tuple[np.ndarray, np.ndarray, np.ndarray] | None":
    """(rows ascending, exact vector score, exact raw BM25) of a set of snapshot rows that holds
    every row of the re-rank's pools (the module's proof), or None when a check fails and every
    row must be scored. ``qvecs``: the question's passage vectors; ``vector_of(rows)``: the exact
    vector scores of ``rows`` (ascending, whole files with a blend), as scoring every row gives
    them; ``cut`` gives the pools (the re-rank's: ``pool_k > 0``); the rows at positions
    ``always`` are scored too (a later stage reads them wherever they rank; more exactly scored
    rows never change a pool: the proof holds for any set that holds the seed);
    ``cosines_of(rows)``: their exact ``question_cosines`` values, with which a row that the
    sketch's bound lets reach a pool is tested again before its whole file is scored."""
    import numpy as np

    from ..arrays import unique_sorted

    alpha, k, fused_k = cut.alpha, max(cut.pool_k, 1), cut.fused_k
    if len(qvecs) > MAX_SKETCH_PASSAGES or not 0.0 < alpha <= 1.0 or cut.pool_k <= 0:
        return None
    n = len(snap.rowids)
    upper, share = blended_upper(snap, sketch, qvecs, file_blend)
    if scorer is not None:
        scorer.hold()  # (released by the caller) the later exact reads are gathers
        kw_rows, kw_raw, bound = scorer.top(k)
    else:
        kw_rows, kw_raw, bound = np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.float64), 0.0
    best = max([float(kw_raw.max()) if len(kw_raw) else 0.0, *cut.extra_raw])
    outside = bound / best if best > 0 and bound > 0 else 0.0  # any keyword outside kw_rows

    def exact(picked: "np.ndarray") -> "tuple[np.ndarray, np.ndarray]":
        """Exact vector and raw keyword scores of ``picked`` (whole files with a blend)."""
        vector = vector_of(picked)
        raw = scorer.exact(picked) if scorer is not None else np.zeros(len(picked), dtype=np.float64)
        return vector, raw

    def hybrid(vector: "np.ndarray", raw: "np.ndarray") -> "np.ndarray":
        keyword = np.where(raw > 0, raw / best, 0.0) if best > 0 else np.zeros(len(raw))
        return alpha * vector + (1.0 - alpha) * keyword

    first = max(k, fused_k)
    pool_kw = kw_rows[kw_raw >= kth_best(kw_raw, k)] if len(kw_raw) > k else kw_rows  # the keyword pool, ties kept
    leaders = _Leaders(upper, first)
    seed = unique_sorted(np.concatenate([pool_kw, leaders.best(first),
                                         *(() if always is None else (always,))]).astype(np.int64))
    rows = snap.file_rows(seed) if file_blend else seed
    vector, raw = exact(rows)
    level_v, level_f = kth_best(vector, k), kth_best(hybrid(vector, raw), fused_k)
    if level_v == -np.inf or level_f == -np.inf:
        return None
    slack = 1e-9 * (1.0 + abs(level_v) + abs(level_f) + outside / alpha)
    inside = np.zeros(n, dtype=bool)
    inside[rows] = True
    # a row can reach the fused pool only with a vector bound of at least this (keyword ≤ outside)
    near = leaders.at_least(min(level_v, (level_f - (1.0 - alpha) * outside) / alpha) - slack)
    near = near[~inside[near]]
    if len(near):
        sure = upper[near] >= level_v - slack  # the vector pool's reach
        maybe = near[~sure]  # only the fused pool's: decided by the row's exact keyword score
        if len(maybe):
            near_raw = scorer.exact(maybe) if scorer is not None else np.zeros(len(maybe), dtype=np.float64)
            maybe = maybe[hybrid(upper[maybe], near_raw) >= level_f - slack]
        late = np.concatenate([near[sure], maybe])
    else:
        late = near
    # top()'s other rows may score above ``outside``: their exact keyword scores are known
    kw_left = ~inside[kw_rows]
    kw_late = kw_rows[kw_left][hybrid(upper[kw_rows[kw_left]], kw_raw[kw_left]) >= level_f - slack]
    late = unique_sorted(np.concatenate([late, kw_late]).astype(np.int64))
    if len(late) and share is not None and cosines_of is not None:
        # each late row's bound with its own exact cosine in place of its sketch bound (its
        # file's share still bounded): a row that then reaches neither pool is not scored whole
        tight = share.tightened(late, cosines_of(late))
        late_raw = scorer.exact(late) if scorer is not None else np.zeros(len(late), dtype=np.float64)
        late = late[(tight >= level_v - slack) | (hybrid(tight, late_raw) >= level_f - slack)]
    if len(late):
        more = snap.file_rows(late) if file_blend else late
        more = more[~inside[more]]  # (whole files: the scored rows are whole files)
        more_vector, more_raw = exact(more)
        order = np.argsort(np.concatenate([rows, more]), kind="stable")
        rows = np.concatenate([rows, more])[order]
        vector = np.concatenate([vector, more_vector])[order]
        raw = np.concatenate([raw, more_raw])[order]
    if bound > 0:  # keyword_bound's step 2: the keyword pool's cut above every row left out
        matched = raw[raw > 0] / best
        if len(matched) < k or not kth_best(matched, k) > outside:
            return None
    return rows, vector, raw
