"""A warm process's paths of a snapshot's rows by position (ragit.retrieve.rowpaths): the store
is asked once per row, and a row it cannot give fails the query."""

from __future__ import annotations

import numpy as np
import pytest

from ragit.errors import RagitError
from ragit.retrieve import rowpaths
from ragit.retrieve.rowpaths import RowPaths


class _Store:
    def __init__(self, keys: dict[int, tuple[str, str]]) -> None:
        self.keys, self.asked = keys, []

    def row_keys(self, rowids):
        self.asked.append(list(rowids))
        return {r: self.keys[r] for r in rowids if r in self.keys}


def test_paths_come_by_position_and_each_row_is_read_once():
    store = _Store({10: ("a.py", "c1"), 20: ("b/c.go", "c2"), 30: ("a.py", "c3"), 40: ("d.md", "c4")})
    paths = RowPaths(np.array([10, 20, 30, 40], dtype=np.int64))
    assert paths.of(np.array([1, 3]), store, "sha") == ["b/c.go", "d.md"]
    assert paths.of(np.array([0, 1, 2]), store, "sha") == ["a.py", "b/c.go", "a.py"]
    assert paths.keys(np.array([2, 0, 3]), store, "sha") == [("a.py", "c3"), ("a.py", "c1"), ("d.md", "c4")]
    assert store.asked == [[10, 20, 30, 40]]  # the whole snapshot at the first miss, keys with paths


def test_the_first_miss_computes_path_facts_and_masks_only_a_small_snapshot(monkeypatch):
    from ragit.retrieve import remask, rerank

    remembered: dict[str, set] = {}
    monkeypatch.setattr(rerank, "remember_paths", lambda files: remembered.setdefault("rerank", set(files)))
    monkeypatch.setattr(remask, "remember_paths", lambda files: remembered.setdefault("remask", set(files)))
    monkeypatch.setattr(rowpaths, "MASK_ROWS", 1)  # a large snapshot: its paths masked per hit
    store = _Store({10: ("a.py", "c1"), 20: ("b/c.go", "c2"), 30: ("a.py", "c3")})
    assert RowPaths(np.array([10, 20, 30], dtype=np.int64)).of(np.array([1]), store, "sha") == ["b/c.go"]
    assert remembered == {"rerank": {"a.py", "b/c.go"}}


def test_a_small_snapshot_reads_every_row_at_its_first_miss():
    store = _Store({10: ("a.py", "c1"), 20: ("b/c.go", "c2"), 30: ("a.py", "c3")})
    paths = RowPaths(np.array([10, 20, 30], dtype=np.int64))
    assert paths.of(np.array([1]), store, "sha") == ["b/c.go"]
    assert paths.keys(np.array([2, 0]), store, "sha") == [("a.py", "c3"), ("a.py", "c1")]
    assert store.asked == [[10, 20, 30]]


def test_a_lost_row_fails_only_the_questions_that_need_it():
    store = _Store({10: ("a.py", "c1"), 30: ("a.py", "c3")})
    paths = RowPaths(np.array([10, 20, 30], dtype=np.int64))
    assert paths.of(np.array([0, 2]), store, "sha") == ["a.py", "a.py"]
    with pytest.raises(RagitError):
        paths.of(np.array([1, 2]), store, "sha")


def test_a_row_the_store_lost_fails_the_query():
    paths = RowPaths(np.array([10, 20], dtype=np.int64))
    with pytest.raises(RagitError) as err:
        paths.of(np.array([0, 1]), _Store({10: ("a.py", "c1")}), "abc123")
    assert err.value.code == "SNAPSHOT_STORE_UNAVAILABLE" and "1 of its chunks are missing" in err.value.message


def test_a_small_warm_snapshot_reads_every_chunk_row_once(monkeypatch):
    """From a snapshot's second question (its paths kept) a small snapshot's chunk rows are read
    whole, once; a larger one's stay read per question."""
    from ragit.retrieve import search
    from ragit.retrieve.search import SnapshotMatrix

    class Rows:
        def __init__(self) -> None:
            self.asked: list = []

        def fetch_rows(self, sha, ids):
            self.asked.append((sha, list(ids)))
            return {r: ("row", r) for r in ids}

    def snapshot() -> SnapshotMatrix:
        return SnapshotMatrix(np.array([10, 20, 30], dtype=np.int64), np.zeros((3, 2), dtype=np.float32),
                              np.zeros(3, dtype=np.int32), np.ones(1), np.ones(3, dtype=np.int32))

    snap, store = snapshot(), Rows()
    snap.paths()
    snap.whole_rows(store, "sha")  # a first question (a one-shot query): nothing read
    assert store.asked == []
    snap.paths()
    for _ in range(2):
        snap.whole_rows(store, "sha")
    assert store.asked == [("sha", [10, 20, 30])]
    assert snap.rows == {10: ("row", 10), 20: ("row", 20), 30: ("row", 30)}
    monkeypatch.setattr(search, "WHOLE_ROWS", 2)
    big, store = snapshot(), Rows()
    big.paths(), big.paths()
    big.whole_rows(store, "sha")
    assert store.asked == [] and big.rows == {}
