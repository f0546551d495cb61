"""SnapshotMatrix's slot → row lookup of the approximate path and its per-file row runs: the
binary searches used when slots ascend give what the per-slot table and the bincount give."""

from __future__ import annotations

from types import SimpleNamespace

import numpy as np
import pytest

from ragit.retrieve.search import SnapshotMatrix


def _snap(slots: np.ndarray, indexed: int, files: np.ndarray | None = None, n_files: int = 0) -> SnapshotMatrix:
    n = len(slots)
    files = np.zeros(n, dtype=np.int32) if files is None else files.astype(np.int32)
    return SnapshotMatrix(np.arange(n, dtype=np.int64) * 3 + 1, None, files, np.ones(max(n_files, 1)),
                          np.ones(n, dtype=np.int32), slots=slots.astype(np.int64),
                          index=SimpleNamespace(rows=indexed))


def _table_rows(slots: np.ndarray, indexed: int, keys: np.ndarray) -> np.ndarray:
    table = np.full(indexed, -1, dtype=np.int64)
    inside = np.nonzero(slots < indexed)[0]
    table[slots[inside]] = inside
    ok = (keys >= 0) & (keys < indexed)
    return np.where(ok, table[np.clip(keys, 0, indexed - 1)], -1)


@pytest.mark.parametrize("ascending", [True, False])
def test_index_rows_and_tail_match_a_table_of_every_slot(ascending):
    rng = np.random.default_rng(3)
    slots = np.sort(rng.choice(5_000, size=1_200, replace=False))  # a snapshot holds some heap slots
    if not ascending:
        slots = rng.permutation(slots)
    indexed = 4_000  # slots from here on are the tail, scored exactly
    snap = _snap(slots, indexed)
    assert snap.slots_ascending() is ascending
    keys = np.concatenate([rng.integers(-1, 5_200, size=600), slots[:50], [-1, indexed - 1, indexed, 5_300]])
    keys = keys.reshape(3, -1)  # one row of neighbours per question vector
    expected = _table_rows(slots, indexed, keys)
    assert np.array_equal(snap.tail_rows(), np.nonzero(slots >= indexed)[0])  # the first question
    assert np.array_equal(snap.index_rows(keys), expected)
    assert snap._slot_rows is None or not ascending  # a one-shot query builds no table
    snap.tail_rows()  # a second question: a warm process keeps the table
    assert np.array_equal(snap.index_rows(keys), expected)
    assert snap._slot_rows is not None


def test_file_starts_of_sorted_files_match_counts():
    files = np.array([0, 0, 2, 2, 2, 3, 5, 5], dtype=np.int32)
    snap = _snap(np.arange(len(files)), len(files), files, n_files=8)  # files 1, 4, 6 and 7 have no rows
    counts = np.bincount(files, minlength=8)
    assert np.array_equal(snap.file_starts(), np.concatenate(([0], np.cumsum(counts))))
    assert snap.file_starts().dtype == np.int64
