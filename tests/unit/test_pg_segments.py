"""Packing a batch's postings per term (ragit.store.pg_keyword.segment_rows): what a reader
decodes is each term's postings in row order, whatever the batch and the int32 span limit."""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from ragit.store import pg_keyword


def _decode(segments) -> dict[str, tuple[list[int], list[float]]]:
    parts: dict[str, list] = {}
    for term, first, last, offsets, tfs in segments:
        ids = np.frombuffer(offsets, dtype=">i4").astype(np.int64) + first
        assert ids[0] == first and ids[-1] == last and np.all(np.diff(ids) > 0)
        parts.setdefault(term, []).append((ids, np.frombuffer(tfs, dtype=">f8").astype(np.float64)))
    out = {}
    for term, segs in parts.items():
        ids, tfs = pg_keyword._merge(segs)
        out[term] = (ids.tolist(), tfs.tolist())
    return out


def _expected(rows) -> dict[str, tuple[list[int], list[float]]]:
    out: dict[str, dict[int, float]] = {}
    for row_id, weights in rows:
        for term, tf in weights.items():
            out.setdefault(term, {})[row_id] = tf
    return {t: (sorted(r), [r[i] for i in sorted(r)]) for t, r in out.items()}


rows_strategy = st.lists(
    st.tuples(st.integers(1, 10**12), st.dictionaries(st.sampled_from(["a", "b", "\u00e9t\u00e9", "x1"]),
                                                      st.integers(1, 40).map(float), max_size=4)),
    max_size=30, unique_by=lambda r: r[0])


@settings(max_examples=200, deadline=None)
@given(rows_strategy)
def test_segments_decode_to_each_terms_postings(rows):
    assert _decode(pg_keyword.segment_rows(rows)) == _expected(rows)


def test_a_span_beyond_int32_offsets_splits_the_segment(monkeypatch):
    monkeypatch.setattr(pg_keyword, "_MAX_SPAN", 10)
    rows = [(i, {"t": float(i)}) for i in (3, 5, 13, 14, 40)]
    segments = list(pg_keyword.segment_rows(rows))
    assert [(s[1], s[2]) for s in segments] == [(3, 13), (14, 14), (40, 40)]
    assert _decode(segments) == _expected(rows)


def test_interleaved_segments_merge_in_row_order():
    a = (np.array([1, 9], dtype=np.int64), np.array([1.0, 2.0]))
    b = (np.array([4, 12], dtype=np.int64), np.array([3.0, 4.0]))
    ids, tfs = pg_keyword._merge([a, b])
    assert ids.tolist() == [1, 4, 9, 12] and tfs.tolist() == [1.0, 3.0, 2.0, 4.0]
    assert pg_keyword._merge([])[0].tolist() == []
