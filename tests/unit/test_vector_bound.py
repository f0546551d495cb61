"""The int8 sketch's cosine bounds (ragit.retrieve.vector_bound.Sketch): at least every row's
``question_cosines`` value, and close to it."""

from __future__ import annotations

import numpy as np
import pytest

from ragit.retrieve.vector_bound import Sketch


class _Fixed:
    """An embedder whose passages are the given vectors (``question_cosines`` reads them only)."""

    id = "fixed"

    def __init__(self, vectors: np.ndarray):
        self.vectors = vectors

    def embed(self, texts):
        return self.vectors[: len(texts)]


def _unit(rows: np.ndarray) -> np.ndarray:
    return (rows / np.linalg.norm(rows, axis=1, keepdims=True)).astype(np.float32)


def _cosines(matrix: np.ndarray, qvecs: np.ndarray) -> np.ndarray:
    """question_cosines' floats: einsum per row, the best passage's."""
    if len(qvecs) == 1:
        return np.einsum("ij,j->i", matrix, qvecs[0]).astype(np.float64)
    return np.einsum("ij,kj->ik", matrix, qvecs).max(axis=1).astype(np.float64)


@pytest.mark.parametrize("passages", [1, 3])
@pytest.mark.parametrize("shared", [0.0, 2.0])  # rows without and with a large common direction
def test_upper_bounds_every_row_and_stays_close(passages, shared):
    rng = np.random.default_rng(7)
    dims = 64
    common = rng.standard_normal(dims)
    matrix = _unit(rng.standard_normal((3000, dims)) + shared * common)
    matrix[5] = 0.0  # a zero row: its cosine is 0
    qvecs = _unit(rng.standard_normal((passages, dims)) + shared * common)
    upper = Sketch.of(matrix).upper(qvecs)
    exact = _cosines(matrix, qvecs)
    assert np.all(upper >= exact)
    assert float(np.max(upper - exact)) < 0.05


def test_rows_sharing_a_direction_get_a_bound_as_narrow_as_rows_that_do_not():
    rng = np.random.default_rng(3)
    widths = []
    for shared in (0.0, 3.0):  # the sketch quantises each row less the mean row
        common = rng.standard_normal(64)
        matrix = _unit(rng.standard_normal((2000, 64)) + shared * common)
        qvecs = _unit(rng.standard_normal((1, 64)) + shared * common)
        widths.append(float(np.median(Sketch.of(matrix).upper(qvecs) - _cosines(matrix, qvecs))))
    assert widths[1] < 1.5 * widths[0]


def test_extreme_components_and_an_empty_matrix():
    matrix = np.zeros((4, 8), dtype=np.float32)
    matrix[0, 0] = 1.0
    matrix[1] = np.float32(1 / np.sqrt(8))
    matrix[2, 3] = -1.0
    q = np.zeros((1, 8), dtype=np.float32)
    q[0, 0] = 1.0
    upper = Sketch.of(matrix).upper(q)
    assert np.all(upper >= _cosines(matrix, q))
    assert len(Sketch.of(np.zeros((0, 8), dtype=np.float32)).upper(q)) == 0


@pytest.mark.parametrize("sorted_files", [True, False])
def test_upper_vector_bounds_every_blended_score(sorted_files):
    """With a file blend, each row's bound is at least its ``vector_scores`` value, whether the
    files' rows form runs (summed by reduceat) or not (bincount): files of one row and of
    hundreds, an ordinal with no rows and a file whose vectors sum to zero."""
    from ragit.retrieve.search import vector_scores
    from ragit.retrieve.vector_bound import upper_vector

    rng = np.random.default_rng(11)
    snap, qvecs = _blend_snapshot(rng, [1, 7, 300, 0, 2, 1, 40, 2], permute=not sorted_files)
    matrix = snap.matrix
    assert (snap.file_runs() is not None) == sorted_files
    upper = upper_vector(snap, Sketch.of(matrix).upper(qvecs), 0.3)
    exact = vector_scores(snap, _Fixed(qvecs), "question", 0.3, 0)
    assert np.all(upper >= exact)
    assert float(np.max(upper - exact)) < 0.05


def _blend_snapshot(rng, sizes, dims=32, permute=False):
    """A SnapshotMatrix of files of ``sizes`` rows (an ordinal of 0 rows and a file whose vectors
    sum to zero included by the callers' sizes), rows sharing a direction."""
    from ragit.retrieve.search import SnapshotMatrix

    files = np.repeat(np.arange(len(sizes), dtype=np.int32), sizes)
    common = rng.standard_normal(dims)
    matrix = _unit(rng.standard_normal((len(files), dims)) + common)
    if 2 in sizes:
        first = int(np.sum(sizes[: sizes.index(2)]))
        matrix[first + 1] = -matrix[first]  # a file of two opposite rows: a zero sum
    if permute:
        order = rng.permutation(len(files))
        files, matrix = files[order], matrix[order]
    sums = np.zeros((len(sizes), dims))
    np.add.at(sums, files, matrix.astype(np.float64))
    snap = SnapshotMatrix(np.arange(len(files), dtype=np.int64), matrix, files, np.linalg.norm(sums, axis=1),
                          np.ones(len(files), dtype=np.int32))
    return snap, _unit(rng.standard_normal((1, dims)) + common)


@pytest.mark.parametrize("seed", range(4))
@pytest.mark.parametrize("blend", [0.3, 0.05, 0.9])
def test_blended_upper_and_its_tightened_bounds_cover_every_vector_score(seed, blend):
    """blended_upper (Sketch.scaled's fused pass, the shift added per file) is at least every
    row's vector_scores value, as upper_vector is; with a row's exact cosine in place of its
    sketch bound (FileShare.tightened) still at least its score, and no wider."""
    from ragit.retrieve.search import _row_cosines, vector_scores
    from ragit.retrieve.vector_bound import blended_upper, upper_vector

    rng = np.random.default_rng(seed)
    snap, qvecs = _blend_snapshot(rng, [1, 7, 300, 0, 2, 1, 40, 2, 5] * 3)
    sketch = Sketch.of(snap.matrix)
    exact = vector_scores(snap, _Fixed(qvecs), "question", blend, 0)
    upper, share = blended_upper(snap, sketch, qvecs, blend)
    assert share is not None and upper.dtype == np.float32
    assert np.all(upper >= exact)
    assert float(np.max(upper - exact)) < 0.05
    assert float(np.max(np.abs(upper - upper_vector(snap, sketch.upper(qvecs), blend)))) < 1e-3
    rows = np.arange(len(snap.rowids))
    tight = share.tightened(rows, _row_cosines(snap, rows, _Fixed(qvecs), "question", 0))
    assert np.all(tight >= exact)
    assert np.all(tight <= upper.astype(np.float64) + 1e-4)


def test_blended_upper_falls_back_where_files_are_no_runs_or_the_question_has_passages():
    from ragit.retrieve.vector_bound import blended_upper, upper_vector

    rng = np.random.default_rng(5)
    snap, qvecs = _blend_snapshot(rng, [3, 1, 4, 1, 5], permute=True)
    sketch = Sketch.of(snap.matrix)
    upper, share = blended_upper(snap, sketch, qvecs, 0.3)
    assert share is None and upper.tobytes() == upper_vector(snap, sketch.upper(qvecs), 0.3).tobytes()
    snap, _ = _blend_snapshot(rng, [3, 1, 4, 1, 5])
    two = _unit(rng.standard_normal((2, 32)))
    upper, share = blended_upper(snap, Sketch.of(snap.matrix), two, 0.3)
    assert share is None


@pytest.mark.parametrize("n", [5, 150, 5000, 40_000])
def test_leaders_select_what_a_pass_over_every_bound_selects(n):
    """_Leaders' selections (the k best bounds with ties, the bounds at least a level) are those
    of a pass over every row, above and below its sampled floor."""
    from ragit.arrays import kth_best
    from ragit.retrieve.vector_bound import _Leaders

    rng = np.random.default_rng(n)
    upper = np.round(rng.random(n), 3).astype(np.float32)  # many ties
    for first in (1, 100, 200, n + 1):
        leaders = _Leaders(upper, first)
        for k in {1, first, max(first // 2, 1)}:
            want = np.flatnonzero(upper >= kth_best(upper, k))
            assert leaders.best(k).tolist() == want.tolist()
        for level in (0.999, 0.9, 0.5, float(leaders.floor), 0.0, -1.0):
            assert leaders.at_least(level).tolist() == np.flatnonzero(upper >= level).tolist()


def test_file_positions_match_a_sort_and_a_binary_search():
    from ragit.arrays import unique_sorted
    from ragit.retrieve.search import _file_positions

    rng = np.random.default_rng(2)
    for files in (np.sort(rng.integers(0, 50, 300)), rng.integers(0, 50, 300), np.array([7]),
                  np.zeros(0, dtype=np.int64), np.array([3, 3, 3]), np.array([4, 2, 2, 9])):
        files = files.astype(np.int32)
        distinct, at = _file_positions(files)
        assert distinct.tolist() == unique_sorted(files).tolist()
        assert at.tolist() == np.searchsorted(unique_sorted(files), files).tolist()
