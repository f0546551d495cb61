"""The warm keyword memos stay bounded by entries and by bytes (bm25.Memo)."""

import numpy as np

from ragit.store import bm25
from ragit.store.bm25 import Memo, RowPositions


def test_memo_forgets_oldest_past_its_byte_budget():
    memo = Memo(max_items=100, max_bytes=1000)
    for k in range(5):
        memo.put(k, f"v{k}", 300)
    assert len(memo) == 3 and memo.bytes == 900
    assert memo.get(0) is None and memo.get(1) is None
    assert [memo.get(k) for k in (2, 3, 4)] == ["v2", "v3", "v4"]


def test_memo_forgets_oldest_past_its_entry_count():
    memo = Memo(max_items=2, max_bytes=10**9)
    for k in range(4):
        memo.put(k, k, 1)
    assert len(memo) == 2 and memo.get(2) == 2 and memo.get(3) == 3 and memo.bytes == 2


def test_memo_replaces_a_key_and_skips_values_larger_than_the_budget():
    memo = Memo(max_items=10, max_bytes=100)
    memo.put("a", 1, 40)
    memo.put("a", 2, 50)
    assert len(memo) == 1 and memo.get("a") == 2 and memo.bytes == 50
    memo.put("huge", 3, 101)
    assert memo.get("huge") is None and memo.get("a") == 2 and memo.bytes == 50


def test_restricted_postings_stay_under_the_byte_budget(monkeypatch):
    monkeypatch.setattr(bm25, "MAX_MEMO_BYTES", 4096)
    positions = RowPositions(np.arange(10_000, dtype=np.int64))
    arrays = []
    for term in range(50):
        ids = np.arange(term, 10_000, 50, dtype=np.int64)  # 200 postings: 1.6 kB of int64 + 1.6 kB of tf
        tf = np.ones(len(ids), dtype=np.float64)
        arrays.append((ids, tf))
        pos, weights = positions.restrict_term(f"t{term}", ids, tf)
        assert np.array_equal(pos, ids) and weights is tf
    assert positions.restricted.bytes <= 4096 and len(positions.restricted) == 1
    # the newest term still answers from the memo: the very same arrays
    ids, tf = arrays[-1]
    assert positions.restrict_term("t49", ids, tf) is positions.restrict_term("t49", ids, tf)
