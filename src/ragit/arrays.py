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
