"""ragit.store.vectorindex on a heap file of its own: pread gathers, the IVF file, index validity,
neighbours, extension."""

from __future__ import annotations

import json

import numpy as np
import pytest

from ragit.store import vectorindex

DIMS = 32


def _heap(tmp_path, rows: int = 3000, seed: int = 0):
    rng = np.random.default_rng(seed)
    vectors = rng.normal(size=(rows, DIMS)).astype(np.float32) + 0.3  # a shared direction, as embeddings have
    vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
    path = tmp_path / "vectors-0123456789abcdef.f32"
    path.write_bytes(vectors.tobytes())
    return path, vectors


def test_pread_rows_equal_the_mapped_rows(tmp_path):
    path, vectors = _heap(tmp_path, 500)
    reader = vectorindex.HeapRows(path, 500, DIMS)
    slots = np.array([7, 3, 4, 5, 499, 0, 4, 100, 101, 102], dtype=np.int64)  # unsorted, runs, a repeat
    assert np.array_equal(reader[slots], vectors[slots])
    assert reader[np.zeros(0, dtype=np.int64)].shape == (0, DIMS)


@pytest.mark.parametrize("rows, sample, batch, sum_rows", [
    (3000, 200_000, 65_536, 8_192),  # every row, one block
    (3000, 1000, 256, 64),  # every 3rd row, sampled rows straddling block boundaries
    (2999, 700, 97, 5),  # every 4th row, odd block and sum sizes
])
def test_centre_read_in_blocks_has_the_bits_of_one_pass(tmp_path, monkeypatch, rows, sample, batch, sum_rows):
    """The build's centre, summed a block at a time from read (not mapped) rows, equals the mean
    of all the sampled rows widened to float64 at once, bit for bit (the index stores it)."""
    path, vectors = _heap(tmp_path, rows)
    monkeypatch.setattr(vectorindex, "_CENTRE_SAMPLE", sample)
    monkeypatch.setattr(vectorindex, "_BATCH", batch)
    monkeypatch.setattr(vectorindex, "_SUM_ROWS", sum_rows)
    step = max(1, rows // sample)
    expected = np.asarray(vectors[::step], dtype=np.float64).mean(axis=0).astype(np.float32)
    got = vectorindex._centre(path, DIMS, rows)
    assert got.dtype == np.float32 and np.array_equal(got.view(np.uint32), expected.view(np.uint32))
    blocks = [(lo, block.copy()) for lo, block in vectorindex._blocks(path, DIMS, 5, rows)]  # one reused buffer
    assert [lo for lo, _ in blocks] == list(range(5, rows, batch))
    assert np.array_equal(np.concatenate([b for _, b in blocks]), vectors[5:])


def test_built_index_finds_the_nearest_rows(tmp_path):
    path, vectors = _heap(tmp_path)
    vectorindex.build(path, DIMS)
    index = vectorindex.open_index(path, DIMS)
    assert index is not None and index.rows == len(vectors) and index.size == len(vectors)
    queries = vectors[:50] + np.float32(0.01)
    found = index.search(queries, 20)
    exact = np.argsort(-(queries @ vectors.T), axis=1)[:, :10]
    recall = np.mean([len(set(f.tolist()) & set(e.tolist())) / 10 for f, e in zip(found, exact)])
    assert recall >= 0.98


def test_index_must_match_its_heap(tmp_path):
    path, vectors = _heap(tmp_path)
    assert vectorindex.open_index(path, DIMS) is None  # none built
    vectorindex.build(path, DIMS)
    assert vectorindex.open_index(path, DIMS + 1) is None  # other dimensions
    with open(path, "r+b") as fh:  # the last indexed row rewritten: a different heap
        fh.seek((len(vectors) - 1) * DIMS * 4)
        fh.write(b"\1" * DIMS * 4)
    assert vectorindex.open_index(path, DIMS) is None
    index_file, meta = vectorindex.index_paths(path)
    assert index_file.name.endswith(".ivf") and json.loads(meta.read_text())["rows"] == len(vectors)
    vectorindex.remove(path)
    assert not index_file.exists() and not meta.exists()


def test_extension_adds_only_the_new_rows(tmp_path):
    path, vectors = _heap(tmp_path, 2000)
    vectorindex.build(path, DIMS)
    extra = np.roll(vectors[:300], 1, axis=1)  # new rows, unlike any indexed one
    with open(path, "ab") as fh:
        fh.write(np.ascontiguousarray(extra).tobytes())
    base = vectorindex.open_index(path, DIMS)
    assert base.rows == 2000
    first = [set(base.read_lists(np.array([k]))[0].tolist()) for k in range(base.lists)]
    extended = vectorindex.build(path, DIMS, base=base)
    assert extended.rows == 2300 and extended.size == 2300
    assert np.array_equal(extended.centre, base.centre)  # the centre of the first build is kept
    hit = vectorindex.open_index(path, DIMS).search(extra[:1], 1)[0, 0]
    assert hit == 2000
    # the first build's rows stay in their lists; the new ones join the lists of their nearest centroid
    now = vectorindex.open_index(path, DIMS)
    for k, before in enumerate(first):
        after = set(now.read_lists(np.array([k]))[0].tolist())
        assert before <= after and all(s >= 2000 for s in after - before)


def test_lists_hold_every_non_zero_row_once_as_its_residual(tmp_path, monkeypatch):
    """The file's lists partition the heap's non-zero rows; each row is stored as its float16
    residual (less the centre) in the list of its nearest centroid; questions answered from
    pread lists and from the kept mapping agree."""
    monkeypatch.setattr(vectorindex, "LIST_ROWS", 100)
    path, vectors = _heap(tmp_path, 1000)
    with open(path, "r+b") as fh:  # two all-zero rows: left out
        for slot in (10, 500):
            fh.seek(slot * DIMS * 4)
            fh.write(b"\0" * DIMS * 4)
    vectors[[10, 500]] = 0
    built = vectorindex.build(path, DIMS)
    index = vectorindex.open_index(path, DIMS)
    assert index.lists == 10 and index.size == 998 and index.rows == 1000
    every = np.arange(index.lists)
    slots, residuals = index.read_lists(every)
    assert sorted(slots.tolist()) == [s for s in range(1000) if s not in (10, 500)]
    assert np.array_equal(index.all_slots(), slots)
    assert np.array_equal(residuals, (vectors[slots] - built.centre).astype(np.float16))
    nearest = (((vectors[slots] - built.centre)[:, None, :] - index.centroids[None]) ** 2).sum(axis=2).argmin(axis=1)
    assert np.array_equal(np.repeat(every, np.diff(index.starts)), nearest)
    queries = np.random.default_rng(4).normal(size=(6, DIMS)).astype(np.float32)
    read = index.search(queries, 40)
    index.keep_mapped()
    assert np.array_equal(index.search(queries, 40), read)  # the same answers from the mapping


def test_search_probing_every_list_is_exact(tmp_path, monkeypatch):
    """With every list probed the index returns the rows of best inner product, best first."""
    monkeypatch.setattr(vectorindex, "LIST_ROWS", 200)
    monkeypatch.setattr(vectorindex, "PROBE_LISTS", 10**6)
    path, vectors = _heap(tmp_path, 2000, seed=5)
    vectorindex.build(path, DIMS)
    index = vectorindex.open_index(path, DIMS)
    queries = np.random.default_rng(9).normal(size=(5, DIMS)).astype(np.float32)
    found = index.search(queries, 15)
    for q, got in zip(queries, found):
        scores = (vectors - index.centre).astype(np.float16).astype(np.float64) @ q.astype(np.float16).astype(np.float64)
        assert np.allclose(scores[got], np.sort(scores)[::-1][:15])
    assert np.all(index.search(queries, 5000)[:, 2000:] == -1)  # more than the heap holds: padded


def test_remove_deletes_a_retired_hnsw_index(tmp_path):
    path, _ = _heap(tmp_path, 300)
    stem = path.name[: -len(".f32")]
    retired = [path.parent / (stem + ".hnsw"), path.parent / (stem + ".hnsw.json")]
    for p in retired:
        p.write_bytes(b"old")
    vectorindex.build(path, DIMS)
    vectorindex.remove(path)
    assert not any(p.exists() for p in (*retired, *vectorindex.index_paths(path)))


def test_populate_maps_a_file_mapping_behind_an_array(tmp_path):
    """A warm process populates the heap and index mappings (vectorindex.populate): it finds the
    mmap behind an array or memoryview, maps every page, and declines anything else."""
    import mmap

    import numpy as np

    from ragit.store.vectorindex import populate

    path = tmp_path / "heap.f32"
    np.arange(4096 * 64, dtype=np.float32).tofile(path)
    with open(path, "rb") as fh:
        mapped = mmap.mmap(fh.fileno(), 0, access=mmap.ACCESS_READ)
    view = np.frombuffer(mapped, dtype=np.float32).reshape(-1, 64)
    if not hasattr(mmap, "MADV_POPULATE_READ") and not populate(mapped):  # pragma: no cover - old kernel
        return
    assert populate(view) and populate(memoryview(mapped)) and populate(mapped)
    assert view[4095, 63] == 4096 * 64 - 1  # the mapping is unchanged
    assert not populate(np.zeros(4)) and not populate(None) and not populate(b"bytes")


def test_two_builds_of_one_heap_write_the_same_file(tmp_path, monkeypatch):
    """The k-means is repeatable (seeded start, no threads of its own): one heap, one index file."""
    monkeypatch.setattr(vectorindex, "LIST_ROWS", 100)
    path, _ = _heap(tmp_path, 2500, seed=3)
    vectorindex.build(path, DIMS)
    index_file, meta = vectorindex.index_paths(path)
    first = (index_file.read_bytes(), meta.read_text())
    vectorindex.remove(path)
    vectorindex.build(path, DIMS)
    assert (index_file.read_bytes(), meta.read_text()) == first
