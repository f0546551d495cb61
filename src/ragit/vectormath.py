"""Vector arithmetic that numpy and plain Python compute to the same bits.

A one-file ``git commit`` re-ingest embeds a few chunks and updates one file's norm; importing
numpy would cost it more than all the rest of the work. So the operations that produce stored
numbers follow one order of float64 operations that both can take exactly:

* a sum of rows is sequential, row after row, starting from 0.0 (``segment_sums_numpy`` adds the
  j-th row of every run at step j; ``add.reduceat`` adds in another order, so it is not used);
* a norm is ``sqrt`` of the sequential sum of squares (``cumsum`` in numpy, never ``einsum`` or
  ``dot``, whose order depends on the SIMD path);
* a unit vector is the float64 quotient, rounded once to float32.

IEEE 754 makes each step exact or correctly rounded, so both give the same bits
(tests/property/test_vectormath_props.py). Token rows of a float16 matrix are a special case:
their float64 sum is exact in any order (ragit.embed.static).
"""

from __future__ import annotations

import math
import operator
from collections.abc import Iterable, Sequence
from functools import reduce
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import numpy


def norm_python(values: Sequence[float]) -> float:
    """Euclidean norm: ``sqrt`` of the sequential float64 sum of squares."""
    return math.sqrt(reduce(operator.add, map(operator.mul, values, values), 0.0))


def unit_python(values: Sequence[float]) -> list[float]:
    """``values`` divided by their norm (float64; the caller rounds to float32); zeros stay zero."""
    norm = norm_python(values)
    return [x / norm for x in values] if norm > 0.0 else [0.0] * len(values)


def row_sum_python(rows: Iterable[Sequence[float]], dims: int) -> list[float]:
    """Sequential float64 sum of ``rows`` (each ``dims`` long), in their order."""
    total = [0.0] * dims
    for row in rows:
        total = list(map(operator.add, total, row))
    return total


def norms_numpy(rows: numpy.ndarray) -> numpy.ndarray:
    """``norm_python`` of every row of a float64 matrix."""
    import numpy as np

    if rows.shape[1] == 0:
        return np.zeros(rows.shape[0], dtype=np.float64)
    return np.sqrt(np.cumsum(rows * rows, axis=1)[:, -1])


def unit_rows_numpy(rows: numpy.ndarray) -> numpy.ndarray:
    """``unit_python`` of every row of a float64 matrix, as float32."""
    import numpy as np

    rows = rows + 0.0  # a -0.0 sum becomes +0.0, as Python's sum() (which starts from 0) gives
    norms = norms_numpy(rows)
    nonzero = norms > 0
    if nonzero.all():  # (a question's vector: no row to leave at zero, no masked copies)
        return (rows / norms[:, None]).astype(np.float32)
    out = np.zeros(rows.shape, dtype=np.float32)
    out[nonzero] = rows[nonzero] / norms[nonzero, None]
    return out


def unit_row_numpy(row: numpy.ndarray, out: numpy.ndarray) -> None:
    """``unit_rows_numpy`` of one float64 row (overwritten), written into the float32 row ``out``:
    the same operations in five numpy calls instead of a dozen (a question's vector is embedded
    while the processor's caches hold the previous question's work, where each numpy call costs
    2-3 µs)."""
    import numpy as np

    np.add(row, 0.0, out=row)  # (as rows + 0.0)
    if not len(row):
        return
    norm = math.sqrt(np.cumsum(row * row)[-1])  # (sqrt is correctly rounded in both)
    if norm > 0.0:
        np.divide(row, norm, out=out, casting="same_kind")  # the float64 quotient, rounded once to float32
    else:
        out[:] = 0.0


def segment_sums_numpy(rows: numpy.ndarray, lengths: numpy.ndarray) -> numpy.ndarray:
    """``row_sum_python`` of each run of consecutive ``rows`` (``lengths`` in order), as float64.

    Vectorised across runs and sequential within each: step j adds every run's j-th row.
    """
    import numpy as np

    count = len(lengths)
    sums = np.zeros((count, rows.shape[1]), dtype=np.float64)
    if not count:
        return sums
    starts = np.zeros(count, dtype=np.int64)
    starts[1:] = np.cumsum(lengths)[:-1]
    order = np.argsort(-lengths, kind="stable")  # longest runs first: step j touches a prefix
    by_length, first = lengths[order], starts[order]
    for j in range(int(by_length[0])):
        active = int(np.count_nonzero(by_length > j))
        sums[:active] += rows[first[:active] + j]
    out = np.empty_like(sums)
    out[order] = sums
    return out
