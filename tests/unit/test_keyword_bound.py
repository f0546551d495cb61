"""The bounds of the bounded keyword path (ragit.store.bm25.SnapshotKeyword.top, term_bounds;
ragit.retrieve.keyword_bound.pool_raw) on small hand-built snapshots."""

from __future__ import annotations

import numpy as np
import pytest

from ragit.retrieve import keyword_bound
from ragit.retrieve.keyword_bound import pool_raw
from ragit.store.bm25 import SnapshotKeyword

N = 1000


@pytest.fixture(autouse=True)
def bound_every_size(monkeypatch):
    monkeypatch.setattr(keyword_bound, "BOUNDED_MIN_ROWS", 0)


def _scorer(terms: list[str]) -> SnapshotKeyword:
    """1,000 rows: ``rare`` in rows 0–9 (tf 3), ``common`` in every even row (tf 1)."""
    index = {
        "rare": (np.arange(10, dtype=np.int64), np.full(10, 3.0)),
        "common": (np.arange(0, N, 2, dtype=np.int64), np.ones(N // 2)),
    }
    empty = (np.zeros(0, dtype=np.int64), np.zeros(0))
    rowids = np.arange(N, dtype=np.int64)
    lengths = np.full(N, 20, dtype=np.int32)
    return SnapshotKeyword(lambda t: index.get(t, empty), terms, rowids, lengths)


def test_a_rare_term_alone_decides_the_top_and_the_common_one_is_only_looked_up():
    scorer = _scorer(["common", "rare"])
    bounds = scorer.term_bounds()
    assert bounds["rare"] > bounds["common"] > 0
    rows, scores, bound = scorer.top(5)
    # the rare term's rows beat anything the common term alone can give: its 500 rows are left out
    assert rows.tolist() == list(range(10))
    assert bound == bounds["common"] * (1.0 + 1e-9)
    full = scorer.full()
    assert scores.tobytes() == full[rows].tobytes()
    assert full[10:].max() <= bound < scores.min()


def test_top_takes_every_match_when_fewer_than_k_match_or_no_term_can_be_left_out():
    scorer = _scorer(["rare"])
    rows, scores, bound = scorer.top(50)  # 10 matches < k
    assert rows.tolist() == list(range(10)) and bound == 0.0
    scorer = _scorer(["common"])
    rows, _, bound = scorer.top(5)  # one term: nothing to leave out
    assert len(rows) == N // 2 and bound == 0.0


def test_term_bounds_cover_every_share_and_count_repeats():
    once, twice = _scorer(["common", "rare"]), _scorer(["common", "rare", "rare"])
    assert twice.term_bounds()["rare"] > 2 * once.term_bounds()["rare"] * (1 - 1e-12)
    full = twice.full()
    common_only = full[10::2]
    assert common_only.max() <= twice.term_bounds()["common"]
    assert full[:10].max() <= sum(twice.term_bounds().values())


def test_pool_raw_scores_the_vector_pool_and_what_can_reach_the_fused_cut():
    scorer = _scorer(["common", "rare"])
    full = scorer.full()
    vector = np.linspace(0.0, 0.5, N)  # the best vectors are the last rows
    raw = pool_raw(scorer, vector, None, 0.7, [], keyword_k=5, fused_k=20, final_space=False)
    computed = np.flatnonzero(raw > 0)
    assert set(range(10)) <= set(computed.tolist())  # the keyword top
    assert set(range(N - 20, N, 2)) <= set(computed.tolist())  # matching rows of the vector pool
    assert raw[computed].tobytes() == full[computed].tobytes()
    assert len(computed) < np.count_nonzero(full)  # most common-only rows are never scored
    # a filter that admits no more rows than the pool: everything is scored
    few = np.zeros(N, dtype=bool)
    few[:15] = True
    assert pool_raw(scorer, vector, few, 0.7, [], keyword_k=5, fused_k=20,
                    final_space=False).tobytes() == full.tobytes()


def test_pool_raw_with_an_overlay_best_and_no_snapshot_match():
    scorer = _scorer(["absent"])
    vector = np.linspace(0.0, 0.5, N)
    raw = pool_raw(scorer, vector, None, 0.7, [2.5], keyword_k=5, fused_k=20, final_space=True)
    assert not raw.any()


def test_small_snapshots_are_scored_whole(monkeypatch):
    monkeypatch.setattr(keyword_bound, "BOUNDED_MIN_ROWS", N + 1)
    scorer = _scorer(["common", "rare"])
    raw = pool_raw(scorer, np.linspace(0.0, 0.5, N), None, 0.7, [], keyword_k=5, fused_k=20, final_space=False)
    assert raw.tobytes() == scorer.full().tobytes()


@pytest.mark.parametrize("terms", [["common", "rare"], ["rare"], ["common"], ["rare", "common", "rare"]])
@pytest.mark.parametrize("k", [1, 5, 10, 50])
def test_top_while_holding_keeps_its_promise_with_the_rows_above_its_bound(terms, k):
    """While the scores are held, top() answers with the rows scoring more than its bound (every
    match when it is 0): the same bound as without holding, the promise kept, the scores full()'s."""
    plain = _scorer(terms)
    _, _, plain_bound = plain.top(k)
    held = _scorer(terms)
    held.hold()
    rows, scores, bound = held.top(k)
    full = held.full()
    assert bound == plain_bound
    assert scores.tobytes() == full[rows].tobytes()
    outside = np.setdiff1d(np.arange(N), rows)
    assert (full[outside] <= bound).all()
    if bound > 0:
        assert (scores > bound).sum() >= k
    else:
        assert rows.tolist() == np.flatnonzero(full > 0).tolist()
    held.release()
