"""The keyword scores a query needs, and no more: a bounded exact top-N for the fused ranking.

Knowledge §11.4 scores every lexical match of the snapshot with the snapshot's statistics and
normalises by the best. The answer, though, reads the keyword score of only a few rows: the
best (the normaliser) and the rows of the re-rank pool (``rerank.pool_indices``, or the top
``top_k`` without the re-rank). :func:`pool_raw` computes exact raw BM25 for a set of rows that
provably contains all of them and 0 elsewhere; :func:`rank_hits` then runs unchanged on that
array and returns the same hits, scores and breakdowns, bit for bit, as on the full array.

Why a row outside the computed set can never change the output
----------------------------------------------------------------
Write ``raw`` for the full array, ``raw'`` for ours, ``E`` for the rows where they agree (the
computed rows; ``raw' = 0`` on the others), ``b`` for the bound of
:meth:`~ragit.store.bm25.SnapshotKeyword.top` (every row outside its rows, so every row outside
``E``, has ``raw ≤ b``) and ``best`` for the normaliser. The float operations used below
(``x / best``, ``a·x``, ``x + y`` with positive ``best`` and non-negative weights) are correctly
rounded, hence monotone: ``x ≤ y`` gives ``op(x) ≤ op(y)``. Only eligible rows (those a
``--path``/``--exclude-tests`` filter admits) compete anywhere, so "row" means eligible row.

1. *The normaliser.* ``top(K)`` returns every row scoring more than ``b`` with its exact score:
   at least K eligible ones when ``b > 0``, every match when ``b = 0``. So the best eligible
   match (if any) is in ``E``, and ``max raw' = max raw`` (rows outside ``E`` only lose score,
   down to 0). ``best`` also takes the overlay's raw scores, which do not change. ``b`` bounds
   the computed floats, not just the real numbers: each term's bound carries a relative margin
   far above the rounding of the few operations in a score (``bm25.BOUND_MARGIN``).
2. *The keyword pool* (``_top`` of the normalised keyword, matches only). If ``b = 0`` the rows
   outside ``E`` do not match in either array. Otherwise ``E`` holds at least K matches scoring
   more than ``b``; we check that the K-th best normalised keyword of ``E``, ``κ``, exceeds
   ``b / best`` (the rounding can merge values; then we score everything). Every row outside
   ``E`` has normalised keyword ``≤ b / best < κ`` in the full array and none in ours, so in both
   the K-th best value is ``κ``, the rows above it and the rows tied with it are the same rows
   with the same values, and ``_top`` (ties cut by ``tie_order``) picks the same rows.
3. *The vector pool* does not read keyword scores; its rows (every row at or above its cut) are
   in ``E``.
4. *The fused pool* (``_top`` of ``hybrid = α·v + (1 − α)·kw``, or ``final``, a monotone function
   of it, without the re-rank). If ``b = 0`` the two arrays are equal everywhere. Otherwise, for a
   row outside ``E``, ``kw ≤ b / best`` in the full array and ``kw = 0`` in ours, so its hybrid in
   either array is at most ``u = α·v + (1 − α)·(b / best)``, computed with the same operations.
   ``E`` starts with at least M rows (the vector cut takes ``max(K, M)``); with ``L`` their M-th
   best hybrid, every row with ``u ≥ L`` is added to ``E`` (exactly scored; the rows to test are
   first narrowed by ``v ≥ (L − (1 − α)·b / best) / α`` less a slack far above the rounding).
   Adding rows only raises the M-th best of ``E`` to some ``L′ ≥ L``, and every row left outside
   has hybrid ``< L ≤ L′`` in both arrays, so in both the M-th best value is ``L′``, the rows
   above it and tied with it are the same rows of ``E`` with the same values, and ``_top`` picks
   the same rows (the same argument on ``final`` without the re-rank).
5. *Everything after the pool* — the re-rank (file aggregation sums the hybrid of pool rows
   only), ``_contenders``, the sort by (score, path, title, citation, chunk id), breakdowns — reads
   the vector and keyword scores of pool rows and ``best``: all equal.

When the snapshot has no more eligible rows than the largest pool, or fewer than
:data:`BOUNDED_MIN_ROWS` rows, everything is scored.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Iterable

from ..arrays import kth_best
from .scoring import AUTHORITY_WEIGHT, RECENCY_WEIGHT, RETRIEVAL_WEIGHT

if TYPE_CHECKING:  # pragma: no cover
    import numpy as np

    from ..store.bm25 import SnapshotKeyword


# Below this many snapshot rows every row is scored: full scoring then costs less than the
# bookkeeping of the bound (gin, 1.9k chunks: warm CPU p95 2.0 ms full vs 2.6 ms bounded).
BOUNDED_MIN_ROWS = 20_000


def pool_raw(keyword: "SnapshotKeyword", vector: "np.ndarray", eligible: "np.ndarray | None", alpha: float,
             overlay_raw: Iterable[float], *, keyword_k: int, fused_k: int, final_space: bool) -> "np.ndarray":
    """Raw BM25 per snapshot row, exact on every row the answer can read and 0 on the others
    (see the module's proof). ``keyword_k``/``fused_k``: the sizes of the keyword and fused
    pools (``_top``'s k; ``vector``'s pool is ``keyword_k`` too), ``final_space``: the fused pool
    is cut on ``final`` (no re-rank)."""
    import numpy as np

    n = keyword.n
    if n < BOUNDED_MIN_ROWS:
        return keyword.full()
    allowed = n if eligible is None else int(eligible.sum())
    k = max(keyword_k, 1)
    if allowed <= max(k, fused_k):
        return keyword.full()
    rows, scores, bound = keyword.top(k, eligible)
    raw = np.zeros(n, dtype=np.float64)
    raw[rows] = scores
    live = scores if eligible is None else scores[eligible[rows]]
    best = float(live.max()) if len(live) else 0.0
    best = max([best] + list(overlay_raw))
    if best <= 0:  # no keyword score reaches the answer (rank_hits uses 0 for every row)
        return raw
    known = np.zeros(n, dtype=bool)
    known[rows] = True
    # the vector pool and the start of the fused one: the max(keyword_k, fused_k) best vectors
    vec = vector if eligible is None else np.where(eligible, vector, -np.inf)
    cut = kth_best(vec, max(k, fused_k))
    add = np.flatnonzero((vec >= cut) & ~known)
    raw[add] = keyword.exact(add)
    known[add] = True

    def space(v: "np.ndarray", raw_part: "np.ndarray | float") -> "np.ndarray":
        """rank_hits' fused (or final) score, element by element: the same operations in the
        same order, so the same bits for any subset of rows."""
        if isinstance(raw_part, float):
            kw_part: "np.ndarray | float" = raw_part / best if raw_part > 0 else 0.0
        else:
            kw_part = np.where(raw_part > 0, raw_part / best, 0.0)
        fused = alpha * v + (1.0 - alpha) * kw_part
        return RETRIEVAL_WEIGHT * fused + AUTHORITY_WEIGHT * 1.0 + RECENCY_WEIGHT * 1.0 if final_space else fused

    if bound > 0:
        at = np.flatnonzero(known if eligible is None else known & eligible)
        level = kth_best(space(vector[at], raw[at]), fused_k)
        if alpha > 0:  # only rows with a high enough vector score can reach: test those alone
            fused_level = (level - AUTHORITY_WEIGHT - RECENCY_WEIGHT) / RETRIEVAL_WEIGHT if final_space else level
            slack = 1e-9 * (1.0 + abs(fused_level) + bound / best) / alpha  # ≫ the rounding of these steps
            near = np.flatnonzero(vector >= (fused_level - (1.0 - alpha) * (bound / best)) / alpha - slack)
        else:
            near = np.arange(n)
        near = near[space(vector[near], bound) >= level]
        near = near[~known[near]]
        add = near if eligible is None else near[eligible[near]]
        raw[add] = keyword.exact(add)
        known[add] = True
        # the keyword pool's cut must stay above every row left out, once normalised
        at = np.flatnonzero(known if eligible is None else known & eligible)
        matched = raw[at]
        matched = matched[matched > 0] / best
        if len(matched) < k or not kth_best(matched, k) > bound / best:
            return keyword.full()
    return raw
