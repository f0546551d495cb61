"""Small numpy helpers of the query path (retrieval and the store below it) that avoid numpy's
costlier general functions.

``np.unique`` imports ``numpy.ma`` on its first call (≈ 7-16 ms of a cold query), more than the
whole operation costs on the few thousand candidate rows a query sorts.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:  # pragma: no cover
    import numpy as np


def unique_sorted(values: "np.ndarray") -> "np.ndarray":
    """The distinct values of ``values`` in ascending order (``np.unique`` of a 1-D array)."""
    import numpy as np

    ordered = np.sort(values)
    keep = np.ones(len(ordered), dtype=bool)
    keep[1:] = ordered[1:] != ordered[:-1]
    return ordered[keep]


def members(values: "np.ndarray", ordered: "np.ndarray") -> "tuple[np.ndarray, np.ndarray]":
    """(which of ``values`` are in ``ordered`` (ascending, distinct), and where): a binary search
    of each value instead of ``np.isin``'s sort of both arrays together. ``where`` is only
    meaningful where the mask is true."""
    import numpy as np

    if not len(ordered):
        return np.zeros(len(values), dtype=bool), np.zeros(len(values), dtype=np.int64)
    at = np.minimum(np.searchsorted(ordered, values), len(ordered) - 1)
    return ordered[at] == values, at


# Every this many values, one goes into the sample that guesses the k-th largest's neighbourhood
_SAMPLE_STRIDE = 16


def kth_largest(values: "np.ndarray", k: int):
    """The ``k``-th largest of ``values`` (1 ≤ k ≤ len, numpy's order: NaN above everything), the
    element ``np.partition(values, len - k)[len - k]`` gives, found without partitioning the
    whole array when it is long.

    ``np.partition`` over a query's 6,000 scores costs ≈ 45 µs; a guess from every 16th value
    (set to leave ≈ 1.5 k values at or above it), one comparison pass, and a partition of the
    few hundred values it keeps cost ≈ 9 µs. The answer is exact: when at least ``k`` values are
    not below the guess, the ``k``-th largest is one of them and ranks ``k``-th among them too;
    otherwise (a sample that misled) the whole array is partitioned, as before.
    """
    import numpy as np

    n = len(values)
    if n >= 1024 and k * 8 <= n:
        sample = values[::_SAMPLE_STRIDE]
        j = (3 * k) // (2 * _SAMPLE_STRIDE) + 1
        guess = np.partition(sample, len(sample) - j)[len(sample) - j]
        kept = values[~(values < guess)]  # (NaN kept: numpy orders it above every number)
        if len(kept) >= k:
            return np.partition(kept, len(kept) - k)[len(kept) - k]
    return np.partition(values, n - k)[n - k]


def kth_best(values: "np.ndarray", k: int) -> float:
    """:func:`kth_largest` as a float; −inf when there are fewer than ``k`` values (or k ≤ 0):
    then every value reaches it."""
    if k <= 0 or len(values) < k:
        return float("-inf")
    return float(kth_largest(values, k))
