"""numpy and plain Python compute the same bits for every number a write stores
(ragit.vectormath, ragit.embed.static, ragit.store.packed), so a small ingest that skips
numpy stores exactly what a large one would."""

from __future__ import annotations

import struct
from array import array

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from ragit import vectormath
from ragit.store.packed import PackedRows

FLOAT32 = st.floats(width=32, allow_nan=False, allow_infinity=False, min_value=-1e6, max_value=1e6)


def _bits(values) -> bytes:
    return struct.pack(f"<{len(values)}d", *values)


@st.composite
def runs(draw):
    dims = draw(st.integers(1, 12))
    lengths = draw(st.lists(st.integers(1, 9), min_size=1, max_size=8))
    values = draw(st.lists(FLOAT32, min_size=sum(lengths) * dims, max_size=sum(lengths) * dims))
    return np.array(values, dtype=np.float32).reshape(sum(lengths), dims), lengths


@settings(max_examples=200, deadline=None)
@given(runs())
def test_segment_sums_and_norms_are_python_bit_for_bit(case):
    rows, lengths = case
    sums = vectormath.segment_sums_numpy(rows, np.array(lengths, dtype=np.int64))
    norms = vectormath.norms_numpy(sums)
    start = 0
    for i, length in enumerate(lengths):
        python_sum = vectormath.row_sum_python(rows[start:start + length].tolist(), rows.shape[1])
        start += length
        assert _bits(python_sum) == _bits(sums[i].tolist())
        assert _bits([vectormath.norm_python(python_sum)]) == _bits([float(norms[i])])


@settings(max_examples=200, deadline=None)
@given(st.lists(st.lists(FLOAT32 | st.sampled_from([0.0, -0.0]), min_size=5, max_size=5), min_size=1, max_size=6))
def test_unit_rows_are_python_bit_for_bit(rows):
    matrix = np.array(rows, dtype=np.float64)
    expected = array("f")
    for row in rows:
        expected.extend(vectormath.unit_python([x + 0.0 for x in row]))
    assert vectormath.unit_rows_numpy(matrix).tobytes() == expected.tobytes()
    for i, row in enumerate(matrix):  # one row at a time (a question's vector)
        out = np.full(len(row), np.nan, dtype=np.float32)
        vectormath.unit_row_numpy(row.copy(), out)
        assert out.tobytes() == expected[i * len(row):(i + 1) * len(row)].tobytes()


def _numpy_splice(rows: PackedRows, dropped, added, new_norms):
    """The numpy formulation the store used before: keep = ~isin, concatenate, stable argsort."""
    ids, slots, files, lengths = (np.frombuffer(b, dtype=t) for b, t in zip(
        rows.blobs()[:4], (np.int64, np.int64, np.int32, np.int32)))
    keep = ~np.isin(ids, np.array(sorted(dropped), dtype=np.int64))
    all_ids = np.concatenate([ids[keep], np.array([a[0] for a in added], dtype=np.int64)])
    all_slots = np.concatenate([slots[keep], np.array([a[1] for a in added], dtype=np.int64)])
    all_files = np.concatenate([files[keep], np.array([a[2] for a in added], dtype=np.int32)])
    all_lengths = np.concatenate([lengths[keep], np.array([a[3] for a in added], dtype=np.int32)])
    norms = np.concatenate([np.frombuffer(rows.blobs()[4], dtype=np.float64), np.array(new_norms, dtype=np.float64)])
    order = np.argsort(all_ids, kind="stable")
    return (all_ids[order].tobytes(), all_slots[order].tobytes(), all_files[order].tobytes(),
            all_lengths[order].tobytes(), norms.tobytes())


@settings(max_examples=150, deadline=None)
@given(st.sets(st.integers(1, 400), max_size=120), st.data())
def test_packed_rows_splice_equals_the_numpy_formulation(base_ids, data):
    ids = sorted(base_ids)
    rows = PackedRows(array("q", ids), array("q", [i * 3 for i in ids]), array("i", [i % 7 for i in ids]),
                      array("i", [i % 11 + 1 for i in ids]), array("d", [float(i) for i in range(7)]))
    dropped = data.draw(st.sets(st.integers(0, 420)))  # may name ids the snapshot does not hold
    free = sorted((set(range(1, 500)) - base_ids) | (base_ids & dropped))
    new_ids = data.draw(st.lists(st.sampled_from(free), unique=True, max_size=100)) if free else []
    added = [(i, 10_000 + i, 7 + i % 3, 40 + i % 5) for i in new_ids]
    new_norms = [0.5, 1.5, 2.5]
    assert rows.splice(dropped, added, new_norms).blobs() == _numpy_splice(rows, dropped, added, new_norms)
