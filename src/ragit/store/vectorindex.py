"""An approximate nearest-neighbour index over an embedder's vector heap, for large snapshots.

Exact search reads every row of a snapshot's matrix, so its memory and time grow with the store
(about 1 GB of float32 at 1M chunks of 256 dimensions). Above :data:`APPROX_MIN_ROWS` rows a
snapshot instead takes its vector candidates from this index and scores only those rows, and the
rows of their files, exactly from the heap (ragit.retrieve.search). Every development-set
snapshot is far below the threshold, so the results measured there stay exact, bit for bit.

The index is an inverted file (IVF): the heap's rows, less the heap's mean, are grouped into lists
by k-means (over a random sample of rows), each row in the list of its
nearest centroid. A question probes the :data:`PROBE_LISTS` lists whose centroids have the largest
inner product with it (more while they hold fewer rows than it asks for), scores their rows by
inner product with numkong over float16 residuals, and returns the best. Centring changes no
ranking (q·μ is one constant per question), but embeddings share a large common direction (mean
norm 0.7 on the bench corpus) that would otherwise dominate the clustering.

Why lists and not a graph: each list is stored contiguously, so a cold question reads with
``pread`` only the lists it probes (at 1M rows a median of ≈ 64k rows, ≈ 33 MB) into its own
memory. The HNSW graph this replaced (usearch, issue 15 session 8) was memory-mapped, and the
kernel's fault-around brought up to ≈ 470 MB of its pages into a cold 1M query's resident memory
however few nodes it visited (peak RSS 404–602 MB against 98 MB now); its build cost 538 s of CPU
at 1M rows, the lists 21 s (a k-means of a sample and three passes over the heap). At 1M rows and
the bench's 200 questions, final recall@10 against exact search was 0.982–0.983 with 64 lists probed of
977 (0.970 with 32, 0.989 with 96; HNSW with 512 candidates: 0.981). The build is repeatable:
one heap gives the same file, bit for bit, on one machine (:func:`_kmeans`).

The index belongs to the heap, not to a snapshot: its keys are heap slots, and the heap is shared
by every snapshot and commit of the store, so a new commit reuses it. A snapshot filters the
neighbours to its own slots (over-fetching by the share of the heap it holds). Heap rows appended
after the index was built (the *tail*) are scored exactly at query time; ingest extends the index
only once the tail outgrows :func:`tail_limit` (the same centroids, the new rows added to their
lists and the file rewritten), so a one-file commit never touches a large index.

Files, beside the heap ``vectors-<h>.f32`` under ``.ragit/store/``: ``vectors-<h>.ivf`` (the
centroids, each list's first position, the lists' heap slots and their float16 residuals, in that
order) and ``vectors-<h>.ivf.json`` (what it covers, where each part starts, a fingerprint of the
heap). A missing, unreadable or mismatched index is no error: the snapshot is searched exactly.
"""

from __future__ import annotations

import hashlib
import json
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Iterator

if TYPE_CHECKING:  # pragma: no cover
    import numpy as np

# Snapshots of at least this many rows use the approximate path; fewer are searched exactly. The
# largest development-set snapshot holds 13,540 rows (sympy, the largest repository measured in
# issue 15, 41,088), so every measured result stays exact. Below it exact search is cheap enough
# (100k rows: warm p50 ≈ 4 ms CPU) and answers stay exact.
APPROX_MIN_ROWS = 200_000
FORMAT = 2
LIST_ROWS = 1024  # rows per list on average: a heap of n rows has round(n / LIST_ROWS) lists
MAX_LISTS = 8192
PROBE_LISTS = 64  # lists a question probes at least
TRAIN_ROWS = 65_536  # k-means learns the centroids from at most this many rows
KMEANS_ITERATIONS = 20
_BATCH = 65_536
_ASSIGN_ROWS = 8_192  # rows compared with every centroid at a time (a [rows, lists] float32 block)
_SUM_ROWS = 8_192  # rows widened to float64 at a time by _centre
_CENTRE_SAMPLE = 200_000  # the centre is the mean of every (rows // this)-th row
_ALIGN = 64
INDEX_SUFFIX, META_SUFFIX = ".ivf", ".ivf.json"
_RETIRED_SUFFIXES = (".hnsw", ".hnsw.json")  # session 8's HNSW graph: removed with the index


def tail_limit(indexed: int) -> int:
    """Heap rows past the index that queries score exactly before ingest extends the index."""
    return max(20_000, indexed // 20)


def _beside(heap: Path, suffix: str) -> Path:
    """The file named as ``heap`` with ``suffix`` in place of its own."""
    stem = heap.name[: -len(heap.suffix)] if heap.suffix else heap.name
    return heap.parent / (stem + suffix)


def index_paths(heap: Path) -> tuple[Path, Path]:
    """(index file, its metadata) of a heap file."""
    return _beside(heap, INDEX_SUFFIX), _beside(heap, META_SUFFIX)


def list_count(rows: int) -> int:
    """How many lists an index over ``rows`` rows has."""
    return max(1, min(MAX_LISTS, round(rows / LIST_ROWS)))


def _layout(lists: int, dims: int, size: int) -> dict[str, int]:
    """Where each part of an index file starts (bytes), and its length: centroids (float32
    [lists, dims]), list starts (int64 [lists + 1]), slots (int32 [size]), residuals (float16
    [size, dims])."""
    parts = (("centroids", lists * dims * 4), ("starts", (lists + 1) * 8), ("slots", size * 4),
             ("residuals", size * dims * 2))
    out, at = {}, 0
    for name, length in parts:
        out[name] = at
        at += -(-length // _ALIGN) * _ALIGN
    out["bytes"] = at
    return out


@dataclass
class HeapIndex:
    """An open index: heap slots ``0 .. rows-1`` are covered (zero rows are left out). The
    centroids and list starts are read whole (≈ 1 MB at 1M rows); a question reads the lists it
    probes, with ``pread``, or from the file's mapping once a long-lived process keeps one
    (:meth:`keep_mapped`)."""

    path: Path
    rows: int
    dims: int
    size: int  # rows in the lists
    centre: "np.ndarray"  # subtracted from every indexed vector (see build)
    centroids: "np.ndarray"  # float32 [lists, dims]
    starts: "np.ndarray"  # int64 [lists + 1]: list k holds positions starts[k] .. starts[k+1]-1
    layout: dict[str, int]
    buffer: object = None  # the file's mapping, once kept
    _mapped: "tuple[np.ndarray, np.ndarray] | None" = field(default=None, repr=False)

    @property
    def lists(self) -> int:
        return len(self.centroids)

    def search(self, queries: "np.ndarray", count: int) -> "np.ndarray":
        """Heap slots of the ``count`` rows of best inner product with each query row among the
        lists it probes (int64 [k, count], −1 where fewer were found), best first."""
        import numpy as np

        q = np.ascontiguousarray(queries, dtype=np.float32).reshape(-1, self.dims)
        out = np.full((len(q), count), -1, dtype=np.int64)
        sizes = np.diff(self.starts)
        for j, vector in enumerate(q):
            order = np.argsort(-(self.centroids @ vector), kind="stable")
            # at least PROBE_LISTS lists, more while they hold fewer rows than asked for
            take = max(PROBE_LISTS, int(np.searchsorted(np.cumsum(sizes[order]), count)) + 1)
            slots, scores = self._scored(np.sort(order[:take]), vector)
            found = min(count, len(scores))
            if not found:
                continue
            best = np.argpartition(-scores, found - 1)[:found] if found < len(scores) else np.arange(found)
            best = best[np.lexsort((best, -scores[best]))]  # by score, ties by position: deterministic
            out[j, :found] = slots[best]
        return out

    def _scored(self, lists: "np.ndarray", vector: "np.ndarray") -> "tuple[np.ndarray, np.ndarray]":
        """(heap slots, inner products with ``vector``) of the rows of ``lists`` (ascending);
        from the kept mapping, each run of consecutive lists scored where it lies, else read."""
        import numpy as np

        if self._mapped is None:
            slots, residuals = self.read_lists(lists)
            return slots, _dots(residuals, vector)
        mapped_slots, residuals = self._mapped
        runs = self._runs(lists)
        if not runs:
            return np.zeros(0, dtype=np.int64), np.zeros(0)
        return (np.concatenate([mapped_slots[a:b] for a, b in runs]).astype(np.int64),
                np.concatenate([_dots(residuals[a:b], vector) for a, b in runs]))

    def _runs(self, lists: "np.ndarray") -> list[tuple[int, int]]:
        """The positions of the rows of ``lists`` (ascending) as runs ``[a, b)``: consecutive
        lists are one run."""
        import numpy as np

        lo, hi = self.starts[lists], self.starts[lists + 1]
        breaks = np.nonzero(lo[1:] != hi[:-1])[0] + 1
        return [(int(a[0]), int(b[-1])) for a, b in zip(np.split(lo, breaks), np.split(hi, breaks))
                if len(a) and b[-1] > a[0]]

    def read_lists(self, lists: "np.ndarray") -> "tuple[np.ndarray, np.ndarray]":
        """(heap slots, float16 residuals) of the rows of ``lists`` (ascending), list after list,
        read with ``pread`` (consecutive lists are one read) into this process's memory."""
        import numpy as np

        runs = self._runs(lists)
        total = sum(b - a for a, b in runs)
        slots = np.empty(total, dtype=np.int32)
        residuals = np.empty((total, self.dims), dtype=np.float16)
        fd = os.open(self.path, os.O_RDONLY)
        try:
            at = 0
            for a, b in runs:
                n = b - a
                _read_into(fd, memoryview(slots[at:at + n]).cast("B"), self.layout["slots"] + a * 4, self.path)
                _read_into(fd, memoryview(residuals[at:at + n]).cast("B"),
                           self.layout["residuals"] + a * self.dims * 2, self.path)
                at += n
        finally:
            os.close(fd)
        return slots.astype(np.int64), residuals

    def all_slots(self) -> "np.ndarray":
        """The heap slots of every list, list after list (int64 [size]): the file's slots part
        alone, without the residuals (an extension needs where each row is, ≈ 4 MB at 1M rows,
        not the ≈ 500 MB of vectors)."""
        import numpy as np

        slots = np.empty(self.size, dtype=np.int32)
        fd = os.open(self.path, os.O_RDONLY)
        try:
            _read_into(fd, memoryview(slots).cast("B"), self.layout["slots"], self.path)
        finally:
            os.close(fd)
        return slots.astype(np.int64)

    def keep_mapped(self) -> bool:
        """For a long-lived process: read the lists from a mapping of the file, populated now
        (:func:`populate`), instead of a system call per list and question."""
        import mmap

        import numpy as np

        if self._mapped is None:
            with open(self.path, "rb") as fh:
                self.buffer = mmap.mmap(fh.fileno(), 0, access=mmap.ACCESS_READ)
            slots = np.frombuffer(self.buffer, dtype=np.int32, count=self.size, offset=self.layout["slots"])
            residuals = np.frombuffer(self.buffer, dtype=np.float16, count=self.size * self.dims,
                                      offset=self.layout["residuals"]).reshape(self.size, self.dims)
            self._mapped = (slots, residuals)
        return populate(self.buffer)


def _dots(residuals: "np.ndarray", vector: "np.ndarray") -> "np.ndarray":
    """Inner products of float16 rows with a float32 vector, as float64 (numkong's kernel reads
    float16 directly: ≈ 10× faster than widening the rows for numpy)."""
    import numkong
    import numpy as np

    return np.asarray(numkong.cdist(residuals, vector.astype(np.float16)[None, :], metric="dot")).reshape(-1)


def _read_into(fd: int, view: memoryview, offset: int, path: Path) -> None:
    if len(view) and os.preadv(fd, [view], offset) != len(view):
        raise OSError(f"short read from {path.name}")


class HeapRows:
    """Rows of a heap file read with ``pread`` (one call per run of consecutive slots), for a
    one-shot process: a memory mapping would bring the kernel's fault-around pages (64 KiB around
    each row read) into the process's resident memory, most of the heap for a scattered read."""

    def __init__(self, path: Path, rows: int, dims: int):
        self.path, self.shape = path, (rows, dims)

    def __getitem__(self, slots: "np.ndarray") -> "np.ndarray":
        import numpy as np

        slots = np.asarray(slots, dtype=np.int64)
        rows, dims = self.shape
        out = np.empty((len(slots), dims), dtype=np.float32)
        if not len(slots):
            return out
        ascending = bool(np.all(slots[1:] > slots[:-1]))
        order = None if ascending else np.argsort(slots, kind="stable")
        ordered = slots if order is None else slots[order]
        starts = np.concatenate(([0], np.nonzero(np.diff(ordered) != 1)[0] + 1))
        ends = np.append(starts[1:], len(ordered))
        buf = out if order is None else np.empty((len(slots), dims), dtype=np.float32)  # in order: no second copy
        row_bytes = dims * 4
        fd = os.open(self.path, os.O_RDONLY)
        try:
            view = memoryview(buf).cast("B")
            for a, b in zip(starts.tolist(), ends.tolist()):
                want = (b - a) * row_bytes
                if os.preadv(fd, [view[a * row_bytes : b * row_bytes]], int(ordered[a]) * row_bytes) != want:
                    raise OSError(f"short read from {self.path.name}")
        finally:
            os.close(fd)
        if order is not None:
            out[order] = buf
        return out


def _row_digest(heap: Path, dims: int, slot: int) -> str:
    """Fingerprint of one heap row: a heap cut back and rewritten (a failed write undone, a store
    rebuilt) no longer matches the index built over its old rows."""
    size = dims * 4
    with open(heap, "rb") as fh:
        data = os.pread(fh.fileno(), size, slot * size)
    return hashlib.sha1(data).hexdigest()


def _read_meta(meta: Path) -> dict | None:
    try:
        return json.loads(meta.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None


def _valid(heap: Path, dims: int, index: Path, info: dict | None) -> bool:
    try:
        return (isinstance(info, dict) and info.get("format") == FORMAT and info.get("dims") == dims
                and info.get("heap") == heap.name and info.get("bytes") == index.stat().st_size
                and info["bytes"] == _layout(int(info["lists"]), dims, int(info["size"]))["bytes"]
                and 0 < int(info["rows"]) <= heap.stat().st_size // (dims * 4)
                and _row_digest(heap, dims, int(info["rows"]) - 1) == info.get("last_row"))
    except (OSError, KeyError, TypeError, ValueError):
        return False


def open_index(heap: Path, dims: int) -> HeapIndex | None:
    """The heap's index (its centroids and list starts read, the lists left on disk); None when
    it is missing, unreadable or does not match the heap (the caller then searches exactly)."""
    import numpy as np

    path, meta = index_paths(heap)
    if not path.exists():
        return None
    info = _read_meta(meta)
    if not _valid(heap, dims, path, info):
        return None
    lists, size = int(info["lists"]), int(info["size"])
    layout = _layout(lists, dims, size)
    centroids = np.empty((lists, dims), dtype=np.float32)
    starts = np.empty(lists + 1, dtype=np.int64)
    try:
        fd = os.open(path, os.O_RDONLY)
        try:
            _read_into(fd, memoryview(centroids).cast("B"), layout["centroids"], path)
            _read_into(fd, memoryview(starts).cast("B"), layout["starts"], path)
        finally:
            os.close(fd)
    except OSError:
        return None
    centre = np.asarray(info.get("mean", ()), dtype=np.float32)
    if centre.shape != (dims,) or starts[0] != 0 or starts[-1] != size or np.any(np.diff(starts) < 0):
        return None  # a damaged file is a missing index
    return HeapIndex(path, int(info["rows"]), dims, size, centre, centroids, starts, layout)


def _centre(heap: Path, dims: int, rows: int) -> "np.ndarray":
    """Mean of (up to :data:`_CENTRE_SAMPLE`) evenly spaced heap rows.

    Summed in row order a block at a time (read, not mapped): the float64 sum over axis 0 adds
    the rows one after another, so continuing it block by block gives the bits of one pass over
    all the sampled rows, while memory holds one block instead of every sampled row widened to
    float64 plus the heap's mapped pages (~1.4 GB at 1M rows; issue 15's ingest memory)."""
    import numpy as np

    step = max(1, rows // _CENTRE_SAMPLE)
    total = np.zeros((1, dims), dtype=np.float64)
    count = 0
    for lo, block in _blocks(heap, dims, 0, rows):
        sampled = block[(-lo) % step::step]  # the rows lo.. whose index is a multiple of step
        for at in range(0, len(sampled), _SUM_ROWS):
            part = sampled[at:at + _SUM_ROWS]
            total = np.add.reduce(np.concatenate((total, part.astype(np.float64))), axis=0, keepdims=True)
            count += len(part)
    return (total[0] / count).astype(np.float32)


def _blocks(heap: Path, dims: int, start: int, stop: int) -> "Iterator[tuple[int, np.ndarray]]":
    """``(first row, rows)`` of heap rows ``start .. stop-1`` in blocks of :data:`_BATCH`, read
    into one reused buffer with ``preadv`` (a mapping would keep every page read resident)."""
    import numpy as np

    row_bytes = dims * 4
    buf = np.empty((min(_BATCH, max(stop - start, 0)), dims), dtype=np.float32)
    fd = os.open(heap, os.O_RDONLY)
    try:
        for lo in range(start, stop, _BATCH):
            n = min(stop, lo + _BATCH) - lo
            view = memoryview(buf).cast("B")[: n * row_bytes]
            if os.preadv(fd, [view], lo * row_bytes) != n * row_bytes:
                raise OSError(f"short read from {heap.name}")
            yield lo, buf[:n]
    finally:
        os.close(fd)


def populate(view: object) -> bool:
    """Map every page of the file mapping behind ``view`` (an mmap, or an array or memoryview over
    one) into this process now (``MADV_POPULATE_READ``, Linux 5.14+): for a long-lived process,
    one pass over pages the page cache mostly holds instead of a page fault, with the kernel's
    fault-around, on each new row a question reads. False when there is no mapping or the
    kernel cannot (then pages come in on demand, as before)."""
    import mmap

    seen = 0
    while view is not None and not isinstance(view, mmap.mmap) and seen < 8:
        view = getattr(view, "base", None) if getattr(view, "base", None) is not None else getattr(view, "obj", None)
        seen += 1
    if not isinstance(view, mmap.mmap):
        return False
    try:
        view.madvise(getattr(mmap, "MADV_POPULATE_READ", 22))
    except (OSError, ValueError):
        return False
    return True


def _train(heap: Path, dims: int, rows: int, centre: "np.ndarray") -> "np.ndarray":
    """Centroids (float32 [lists, dims]) of the heap's centred, non-zero rows, learned by
    :func:`_kmeans` from at most :data:`TRAIN_ROWS` rows drawn at random (a fixed seed). Not
    evenly spaced rows: a heap holds files' chunks in order, and a stride can fall in step with a
    repeating shape (the bench corpus: six chunks a document, every 15th row took two of the six
    kinds), which left most lists nearly empty and a few holding thousands of rows."""
    import numpy as np

    picked = np.sort(np.random.default_rng(0).choice(rows, min(rows, TRAIN_ROWS), replace=False))
    parts = []
    for lo, block in _blocks(heap, dims, 0, rows):
        sampled = block[picked[(picked >= lo) & (picked < lo + len(block))] - lo]
        parts.append(sampled[np.any(sampled != 0, axis=1)] - centre)
    sample = np.concatenate(parts) if parts else np.zeros((0, dims), dtype=np.float32)
    if not len(sample):
        return np.zeros((1, dims), dtype=np.float32)
    return _kmeans(sample, min(list_count(rows), len(sample)))


def _kmeans(sample: "np.ndarray", lists: int) -> "np.ndarray":
    """Lloyd's k-means of ``sample`` into ``lists`` centroids, repeatable bit for bit: it starts
    from rows a seeded generator picks, then assigns every row to its nearest centroid and moves
    each centroid to its rows' mean, :data:`KMEANS_ITERATIONS` times or until no row changes list
    (a list left empty keeps its centroid). usearch's ``kmeans`` runs threads whose results differ
    from build to build, so two indexes of one heap differed and a test of recall passed or
    failed by chance; this costs less (the whole 1M-row build ≈ 21 s CPU)."""
    import numpy as np

    centroids = sample[np.sort(np.random.default_rng(0).choice(len(sample), lists, replace=False))].copy()
    assign = np.full(len(sample), -1, dtype=np.int64)
    for _ in range(KMEANS_ITERATIONS):
        nearest = _nearest(sample, centroids)
        if np.array_equal(nearest, assign):
            break
        assign = nearest
        order = np.argsort(assign, kind="stable")
        counts = np.bincount(assign, minlength=lists)
        filled = np.nonzero(counts)[0]
        sums = np.add.reduceat(sample[order].astype(np.float64), np.cumsum(counts)[filled] - counts[filled], axis=0)
        centroids[filled] = (sums / counts[filled, None]).astype(np.float32)
    return np.ascontiguousarray(centroids, dtype=np.float32)


def _nearest(rows: "np.ndarray", centroids: "np.ndarray") -> "np.ndarray":
    """The nearest centroid (squared distance) of each row, computed :data:`_ASSIGN_ROWS` rows at
    a time (a [rows, lists] float32 block)."""
    import numpy as np

    squares = np.einsum("ij,ij->i", centroids, centroids)
    out = np.empty(len(rows), dtype=np.int64)
    for a in range(0, len(rows), _ASSIGN_ROWS):
        distance = rows[a:a + _ASSIGN_ROWS] @ centroids.T
        distance *= -2
        distance += squares  # ‖x‖² is the same for every centroid: left out
        out[a:a + len(distance)] = np.argmin(distance, axis=1)
    return out


def _assign(heap: Path, dims: int, start: int, stop: int, centre: "np.ndarray", centroids: "np.ndarray",
            into: "np.ndarray") -> None:
    """``into[slot]`` = the list of heap row ``slot`` (its nearest centroid, centred) for rows
    ``start .. stop-1``; −1 for an all-zero row (left out, as exact search scores it 0)."""
    import numpy as np

    for lo, block in _blocks(heap, dims, start, stop):
        zero = ~np.any(block != 0, axis=1)
        np.subtract(block, centre, out=block)
        into[lo:lo + len(block)] = _nearest(block, centroids)
        into[lo:lo + len(block)][zero] = -1


def build(heap: Path, dims: int, *, base: HeapIndex | None = None) -> HeapIndex:
    """Index every row of ``heap`` (extending ``base`` by the rows past it: its centre and
    centroids kept, its rows staying in their lists), written atomically beside the heap."""
    import mmap

    import numpy as np

    rows = os.path.getsize(heap) // (dims * 4)
    path, meta = index_paths(heap)
    centre = base.centre if base is not None else _centre(heap, dims, rows)
    centroids = base.centroids if base is not None else _train(heap, dims, rows, centre)
    lists = len(centroids)
    assign = np.full(rows, -1, dtype=np.int32)
    start = 0
    if base is not None:
        assign[base.all_slots()] = np.repeat(np.arange(base.lists), np.diff(base.starts)).astype(np.int32)
        start = base.rows
    _assign(heap, dims, start, rows, centre, centroids, assign)
    kept = assign >= 0
    order = np.nonzero(kept)[0][np.argsort(assign[kept], kind="stable")]  # slots list by list, ascending
    size = len(order)
    starts = np.concatenate(([0], np.cumsum(np.bincount(assign[kept], minlength=lists)))).astype(np.int64)
    position = np.full(rows, -1, dtype=np.int64)
    position[order] = np.arange(size)
    layout = _layout(lists, dims, size)
    tmp = path.with_name(path.name + f".tmp{os.getpid()}")
    try:
        with open(tmp, "wb") as fh:
            fh.truncate(layout["bytes"])
            fh.seek(layout["centroids"])
            fh.write(centroids.tobytes())
            fh.seek(layout["starts"])
            fh.write(starts.tobytes())
            fh.seek(layout["slots"])
            fh.write(order.astype(np.int32).tobytes())
        if size:
            with open(tmp, "r+b") as fh:
                mapped = mmap.mmap(fh.fileno(), layout["bytes"])
            try:
                out = np.frombuffer(mapped, dtype=np.float16, count=size * dims,
                                    offset=layout["residuals"]).reshape(size, dims)
                for lo, block in _blocks(heap, dims, 0, rows):
                    at = position[lo:lo + len(block)]
                    inside = at >= 0
                    out[at[inside]] = block[inside] - centre
                    mapped.flush()
                    mapped.madvise(mmap.MADV_DONTNEED)  # written: the pages leave this process
                del out
            finally:
                mapped.close()
        meta.unlink(missing_ok=True)
        os.replace(tmp, path)
    finally:
        tmp.unlink(missing_ok=True)
    info = {"format": FORMAT, "heap": heap.name, "dims": dims, "rows": rows, "size": size, "lists": lists,
            "bytes": path.stat().st_size, "last_row": _row_digest(heap, dims, rows - 1),
            "dtype": "f16", "metric": "ip-centred", "mean": [float(v) for v in centre]}
    tmp_meta = meta.with_name(meta.name + f".tmp{os.getpid()}")
    tmp_meta.write_text(json.dumps(info, sort_keys=True), encoding="utf-8")
    os.replace(tmp_meta, meta)
    return HeapIndex(path, rows, dims, size, centre, centroids, starts, layout)


def remove(heap: Path) -> None:
    """Delete a heap's index files (a stale index is rebuilt, never trusted), and a retired
    format's."""
    for p in (*index_paths(heap), *(_beside(heap, suffix) for suffix in _RETIRED_SUFFIXES)):
        p.unlink(missing_ok=True)


def refresh(store, embedder_id: str, commit_sha: str) -> str:
    """After publishing ``commit_sha``: build the embedder's index when the snapshot is large
    enough to use it, extend it when its tail outgrew :func:`tail_limit`, else leave it. Returns
    what it did ("none", "kept", "built", "extended", "failed"); a failure only leaves the store
    without an index (queries are then exact), never fails the ingest."""
    own = getattr(store, "refresh_vector_index", None)
    if own is not None:  # a backend with its own index (PostgreSQL: pgvector HNSW)
        return own(embedder_id, commit_sha)
    heap_info = getattr(store, "heap_info", None)
    found = None
    try:
        found = heap_info(embedder_id) if heap_info is not None else None
        if found is None:
            return "none"
        dims, heap = found
        rows = os.path.getsize(heap) // (dims * 4)
        path, _ = index_paths(heap)
        if not path.exists():
            remove(heap)  # a retired format's files, if any
            if store.snapshot_row_count(commit_sha, embedder_id) < APPROX_MIN_ROWS:
                return "none"
            build(heap, dims)
            return "built"
        current = open_index(heap, dims)
        if current is not None and rows - current.rows <= tail_limit(current.rows):
            return "kept"
        if current is None:
            remove(heap)
            if store.snapshot_row_count(commit_sha, embedder_id) < APPROX_MIN_ROWS:
                return "none"
            build(heap, dims)
            return "built"
        build(heap, dims, base=current)
        return "extended"
    except Exception:  # noqa: BLE001 - the index is an accelerator: without it queries stay exact
        try:
            if found is not None:
                remove(found[1])
        except Exception:  # noqa: BLE001
            pass
        return "failed"
