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
