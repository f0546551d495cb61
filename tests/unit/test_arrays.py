"""ragit.arrays: the numpy helpers of the query path give what numpy's general functions give."""

from __future__ import annotations

import numpy as np

from ragit.arrays import members, unique_sorted
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
