"""ragit.store.vectorindex on a heap file of its own: pread gathers, index validity, neighbours."""

from __future__ import annotations

import json

import numpy as np
import pytest

from ragit.store import vectorindex

pytest.importorskip("usearch")

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
    vectorindex.build(path, DIMS, threads=1)
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
    vectorindex.build(path, DIMS, threads=1)
    assert vectorindex.open_index(path, DIMS + 1) is None  # other dimensions
    with open(path, "r+b") as fh:  # the last indexed row rewritten: a different heap
        fh.seek((len(vectors) - 1) * DIMS * 4)
        fh.write(b"\1" * DIMS * 4)
    assert vectorindex.open_index(path, DIMS) is None
    index_file, meta = vectorindex.index_paths(path)
    assert index_file.name.endswith(".hnsw") and json.loads(meta.read_text())["rows"] == len(vectors)
    vectorindex.remove(path)
    assert not index_file.exists() and not meta.exists()


def test_extension_adds_only_the_new_rows(tmp_path):
    path, vectors = _heap(tmp_path, 2000)
    vectorindex.build(path, DIMS, threads=1)
    extra = np.roll(vectors[:300], 1, axis=1)  # new rows, unlike any indexed one
    with open(path, "ab") as fh:
        fh.write(np.ascontiguousarray(extra).tobytes())
    base = vectorindex.open_index(path, DIMS, view=False)
    assert base.rows == 2000
    extended = vectorindex.build(path, DIMS, threads=1, base=base)
    assert extended.rows == 2300 and extended.size == 2300
    assert np.array_equal(extended.centre, base.centre)  # the centre of the first build is kept
    hit = vectorindex.open_index(path, DIMS).search(extra[:1], 1)[0, 0]
    assert hit == 2000


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


def test_compiled_module_loads_without_the_package_init():
    """A query opens the index through usearch's compiled module alone: the package's __init__
    (urllib.request, http, email, ssl for a downloader) is not run, and a later ``import usearch``
    reuses the same module."""
    import subprocess
    import sys

    code = ("import sys\n"
            "from ragit.store import vectorindex\n"
            "m = vectorindex.usearch_compiled()\n"
            "assert 'usearch' not in sys.modules and 'urllib.request' not in sys.modules, sorted(sys.modules)\n"
            "assert vectorindex._new_index(4).ndim == 4\n"
            "import usearch\n"
            "assert sys.modules['usearch.compiled'] is m\n")
    subprocess.run([sys.executable, "-c", code], check=True)
