"""ragit.arrays: the numpy helpers of the query path give what numpy's general functions give."""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from ragit.arrays import kth_best, kth_largest, members, unique_sorted
from ragit.retrieve import search


def test_members_is_isin_with_where_each_value_sits():
    rng = np.random.default_rng(3)
    for size in (0, 1, 7, 300):
        ordered = unique_sorted(rng.integers(0, 500, size))
        values = rng.integers(-5, 520, 200)
        found, at = members(values, ordered)
        assert found.tolist() == np.isin(values, ordered).tolist()
        assert (ordered[at[found]] == values[found]).all()


def test_vector_candidates_scale_with_the_snapshot_between_the_floor_and_the_cap():
    assert search.vector_candidates(search.FULL_CANDIDATE_ROWS) == search.VECTOR_CANDIDATES
    assert search.vector_candidates(10 * search.FULL_CANDIDATE_ROWS) == search.VECTOR_CANDIDATES
    assert search.vector_candidates(search.FULL_CANDIDATE_ROWS // 2) == search.VECTOR_CANDIDATES // 2
    assert search.vector_candidates(20_000) == search.MIN_VECTOR_CANDIDATES
    assert search.vector_candidates(100) == 100  # never more than the snapshot holds


def _partitioned(values: np.ndarray, k: int):
    return np.partition(values, len(values) - k)[len(values) - k]


@settings(max_examples=60, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), size=st.integers(1, 6000), k=st.integers(1, 800),
       shape=st.sampled_from(["uniform", "ties", "sorted", "descending", "sparse", "special"]))
def test_kth_largest_is_the_partitions_element_whatever_the_values(seed, size, k, shape):
    """The sampled guess never changes the answer: ties, sorted runs (a sample that misleads),
    mostly-zero scores, −inf non-candidates and NaN all give np.partition's element."""
    rng = np.random.default_rng(seed)
    k = min(k, size)
    values = rng.random(size)
    if shape == "ties":
        values = np.round(values, 1)
    elif shape == "sorted":
        values.sort()
    elif shape == "descending":
        values = -np.sort(values)
    elif shape == "sparse":
        values[rng.random(size) < 0.97] = 0.0
    elif shape == "special":
        values[rng.random(size) < 0.3] = -np.inf
        values[rng.random(size) < 0.01] = np.nan
    want, got = _partitioned(values, k), kth_largest(values, k)
    assert (np.isnan(want) and np.isnan(got)) or want == got
    assert np.asarray(got).dtype == values.dtype


def test_kth_best_is_minus_infinity_when_too_few_values():
    assert kth_best(np.array([0.5, 0.2]), 3) == float("-inf")
    assert kth_best(np.array([0.5, 0.2]), 0) == float("-inf")
    assert kth_best(np.array([0.5, 0.2, 0.9]), 2) == 0.5
