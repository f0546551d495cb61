"""An approximate nearest-neighbour index over an embedder's vector heap, for large snapshots.

Exact search reads every row of a snapshot's matrix, so its memory and time grow with the store
(about 1 GB of float32 at 1M chunks of 256 dimensions). Above :data:`APPROX_MIN_ROWS` rows a
snapshot instead takes its vector candidates from an HNSW graph (usearch, float16) and scores only
those rows, and the rows of their files, exactly from the heap (ragit.retrieve.search). The graph
holds each vector less the heap's mean under the inner product: the ranking of q·x is unchanged
(q·μ is one constant per question), but embeddings share a large common direction (mean norm
0.7 on the bench corpus) and a graph over the centred residuals navigates far better. Every development-set snapshot is far below the threshold, so the
results measured there stay exact, bit for bit.

The index belongs to the heap, not to a snapshot: its keys are heap slots, and the heap is shared
by every snapshot and commit of the store, so a new commit reuses it. A snapshot filters the
neighbours to its own slots (over-fetching by the share of the heap it holds). Heap rows appended
after the index was built (the *tail*) are scored exactly at query time; ingest extends the index
only once the tail outgrows :func:`tail_limit`, so a one-file commit never touches a large index.

Files, beside the heap ``vectors-<h>.f32`` under ``.ragit/store/``: ``vectors-<h>.hnsw`` (the
usearch graph, memory-mapped read-only by queries, so a cold query pages in only the nodes it
visits) and ``vectors-<h>.hnsw.json`` (what it covers and a fingerprint of the heap). A missing,
unreadable or mismatched index is no error: the snapshot is searched exactly.

Threads are explicit: queries search with one thread (one question, and the machine's cores
belong to the caller); builds use :data:`BUILD_THREADS`.
"""

from __future__ import annotations

import hashlib
import json
import os
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Iterator

if TYPE_CHECKING:  # pragma: no cover
    import numpy as np

# Snapshots of at least this many rows use the approximate path; fewer are searched exactly. The
# largest development-set snapshot holds 13,540 rows (sympy, the largest repository measured in
# issue 15, 41,088), so every measured result stays exact. At 100k rows the approximate path
# used less memory (cold RSS 172 vs 243 MB) but more CPU (warm p50 23.9 vs 16.3 ms) and its index
# build (53 s CPU) doubled the ingest, so the index starts where exact search's memory is the
# larger cost (bench/vector_scale.py: at 1M rows cold 636 MB vs 2,088 MB, warm 91 vs 153 ms).
# Session 11, 100k rows: the approximate path is now the faster both warm (CPU p50 ≈ 10 vs ≈ 14
# ms, recall@10 0.992) and cold (0.22 vs 0.23 s CPU, 108 vs 149 MB peak RSS); what keeps the
# threshold here is the index build at ingest (24 s CPU at 100k, more than the rest of the ingest).
APPROX_MIN_ROWS = 200_000
FORMAT = 1
CONNECTIVITY = 16
EXPANSION_ADD = 64
EXPANSION_SEARCH = 128
BUILD_THREADS = max(1, min(2, os.cpu_count() or 1))
_BATCH = 65_536
_SUM_ROWS = 8_192  # rows widened to float64 at a time by _centre
_CENTRE_SAMPLE = 200_000  # the centre is the mean of every (rows // this)-th row
INDEX_SUFFIX, META_SUFFIX = ".hnsw", ".hnsw.json"


def tail_limit(indexed: int) -> int:
    """Heap rows past the index that queries score exactly before ingest extends the index."""
    return max(20_000, indexed // 20)


def index_paths(heap: Path) -> tuple[Path, Path]:
    """(index file, its metadata) of a heap file."""
    stem = heap.name[: -len(heap.suffix)] if heap.suffix else heap.name
    return heap.parent / (stem + INDEX_SUFFIX), heap.parent / (stem + META_SUFFIX)


@dataclass
class HeapIndex:
    """A loaded index: heap slots ``0 .. rows-1`` are covered (zero rows are left out)."""

    index: object
    rows: int
    dims: int
    centre: "np.ndarray"  # subtracted from every indexed vector (see build)
    buffer: object = None  # the mapping a view reads (kept alive with the index)

    @property
    def size(self) -> int:
        return int(self.index.size)

    def search(self, queries: "np.ndarray", count: int) -> "np.ndarray":
        """Heap slots of the ``count`` nearest neighbours of each query row (int64 [k, count],
        −1 where fewer were found)."""
        import numpy as np

        q = np.ascontiguousarray(queries, dtype=np.float32)
        keys, _, found = self.index.search_many(q, count, False, 1)[:3]
        keys = np.asarray(keys, dtype=np.int64).reshape(len(q), -1)
        counts = np.asarray(found).reshape(-1)
        mask = np.arange(keys.shape[1])[None, :] < counts[:, None]
        return np.where(mask, keys, -1)


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


def _new_index(dims: int, *, lookups: bool = True):
    """An empty index of this module's parameters. ``lookups=False`` spares the key → slot table
    (searching returns keys without it): viewing a 1M-row file then hashes no key, and a cold query
    at 1M rows saves ~70 ms CPU and ~32 MB."""
    compiled = usearch_compiled()
    return compiled.Index(ndim=dims, dtype=compiled.ScalarKind.F16, connectivity=CONNECTIVITY,
                          expansion_add=EXPANSION_ADD, expansion_search=EXPANSION_SEARCH,
                          metric_kind=compiled.MetricKind.IP, enable_key_lookups=lookups)


def usearch_compiled():
    """usearch's compiled module (``usearch.compiled``), loaded without running the package's
    ``__init__`` when it can be: that also imports ``urllib.request`` (with http, email and ssl)
    for a binary downloader ragit never calls, ≈ 37 ms of a cold query's CPU at 1M rows on the
    session-14 VM (5 ms for the extension alone). What the ``__init__`` does that the extension
    needs, loading NumKong's extension with ``RTLD_GLOBAL`` so its symbols resolve, is done here
    the same way; anything unexpected (another layout, a failed load) falls back to the ordinary
    import. The module is registered under its own name, so a later ``import usearch`` reuses it."""
    import sys

    found = sys.modules.get("usearch.compiled")
    if found is not None:
        return found
    try:
        return _load_compiled()
    except Exception:  # noqa: BLE001 - the ordinary import below reports any real problem
        from usearch import compiled

        return compiled


def _load_compiled():
    """``usearch.compiled`` from the installed package's files, its parent package not imported."""
    import ctypes
    import importlib.machinery
    import importlib.util
    import sys

    package, kong = importlib.util.find_spec("usearch"), importlib.util.find_spec("numkong")
    if package is None or kong is None or not package.submodule_search_locations or not kong.submodule_search_locations:
        raise ImportError("usearch or numkong is not an installed package")
    ext = importlib.machinery.PathFinder.find_spec("numkong._numkong", kong.submodule_search_locations)
    spec = importlib.machinery.PathFinder.find_spec("usearch.compiled", package.submodule_search_locations)
    if ext is None or ext.origin is None or spec is None or spec.loader is None:
        raise ImportError("usearch.compiled or numkong._numkong not found")
    ctypes.CDLL(ext.origin, mode=ctypes.RTLD_GLOBAL)
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    try:
        spec.loader.exec_module(module)
    except BaseException:
        del sys.modules[spec.name]
        raise
    return module


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
                and 0 < int(info["rows"]) <= heap.stat().st_size // (dims * 4)
                and _row_digest(heap, dims, int(info["rows"]) - 1) == info.get("last_row"))
    except (OSError, KeyError, TypeError, ValueError):
        return False


def open_index(heap: Path, dims: int, *, view: bool = True) -> HeapIndex | None:
    """The heap's index, memory-mapped (``view``) or loaded; None when it is missing, unreadable
    or does not match the heap (the caller then searches exactly)."""
    path, meta = index_paths(heap)
    if not path.exists():
        return None
    info = _read_meta(meta)
    if not _valid(heap, dims, path, info):
        return None
    try:
        index = _new_index(dims, lookups=not view)
        buffer = _mapped(path) if view else None
        if view:
            index.view_index_from_buffer(buffer)
            _release(buffer)
        else:
            index.load_index_from_path(str(path))
        if int(index.ndim) != dims or int(index.size) != int(info["size"]):
            return None
    except Exception:  # noqa: BLE001 - a damaged or foreign file is a missing index
        return None
    import numpy as np

    centre = np.asarray(info.get("mean", ()), dtype=np.float32)
    if centre.shape != (dims,):
        return None
    return HeapIndex(index, int(info["rows"]), dims, centre, buffer)


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


def _mapped(path: Path):
    """The index file mapped read-only and advised as randomly read: a search visits a few
    hundred graph nodes, and the kernel's read-ahead around each would map most of the file."""
    import mmap

    with open(path, "rb") as fh:
        mapped = mmap.mmap(fh.fileno(), 0, access=mmap.ACCESS_READ)
    if hasattr(mmap, "MADV_RANDOM"):
        mapped.madvise(mmap.MADV_RANDOM)
    return mapped


def _release(mapping) -> None:
    """Unmap the pages of a file mapping from this process (``MADV_DONTNEED``; the page cache keeps
    them). Viewing an index walks every node to locate it, ~146 MB of pages at 1M rows, of which a
    search needs the few it visits: released, they no longer add to a cold query's peak RSS."""
    import mmap

    try:
        mapping.madvise(mmap.MADV_DONTNEED)
    except (AttributeError, OSError, ValueError):
        pass


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


def _add_rows(index, heap: Path, dims: int, start: int, stop: int, threads: int, centre: "np.ndarray") -> None:
    """Add heap rows ``start .. stop-1`` (keys = slots) less ``centre``, in batches; all-zero rows
    are skipped.

    The centre is subtracted in place, in the block :func:`_blocks` reads into (it reads the next
    block over it) or in the one copy that leaves zero rows out: a batch costs no further
    temporaries (they were two block-sized arrays, 128 MB of float32 at the peak of an ingest's
    index build), and the rows given to the index are the same bits."""
    import numpy as np

    for lo, block in _blocks(heap, dims, start, stop):
        keep = np.nonzero(np.any(block != 0, axis=1))[0]
        if len(keep):
            keys = (keep + lo).astype(np.uint64)
            rows = block if len(keep) == len(block) else block[keep]
            np.subtract(rows, centre, out=rows)
            index.add_many(keys, rows, threads=threads)


def build(heap: Path, dims: int, *, threads: int = BUILD_THREADS, base: HeapIndex | None = None) -> HeapIndex:
    """Index every row of ``heap`` (extending ``base``, loaded with ``view=False``, by the rows
    past it), written atomically beside the heap."""
    rows = os.path.getsize(heap) // (dims * 4)
    path, meta = index_paths(heap)
    index = base.index if base is not None else _new_index(dims)
    start = base.rows if base is not None else 0
    centre = base.centre if base is not None else _centre(heap, dims, rows)
    if rows > start:
        _add_rows(index, heap, dims, start, rows, threads, centre)
    tmp = path.with_name(path.name + f".tmp{os.getpid()}")
    try:
        index.save_index_to_path(str(tmp))
        meta.unlink(missing_ok=True)
        os.replace(tmp, path)
    finally:
        tmp.unlink(missing_ok=True)
    info = {"format": FORMAT, "heap": heap.name, "dims": dims, "rows": rows, "size": int(index.size),
            "bytes": path.stat().st_size, "last_row": _row_digest(heap, dims, rows - 1),
            "connectivity": CONNECTIVITY, "dtype": "f16", "metric": "ip-centred", "mean": [float(v) for v in centre]}
    tmp_meta = meta.with_name(meta.name + f".tmp{os.getpid()}")
    tmp_meta.write_text(json.dumps(info, sort_keys=True), encoding="utf-8")
    os.replace(tmp_meta, meta)
    return HeapIndex(index, rows, dims, centre)


def remove(heap: Path) -> None:
    """Delete a heap's index files (a stale index is rebuilt, never trusted)."""
    for p in index_paths(heap):
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
            if store.snapshot_row_count(commit_sha, embedder_id) < APPROX_MIN_ROWS:
                return "none"
            build(heap, dims)
            return "built"
        current = open_index(heap, dims, view=True)
        if current is not None and rows - current.rows <= tail_limit(current.rows):
            return "kept"
        if current is None:
            remove(heap)
            if store.snapshot_row_count(commit_sha, embedder_id) < APPROX_MIN_ROWS:
                return "none"
            build(heap, dims)
            return "built"
        loaded = open_index(heap, dims, view=False)
        build(heap, dims, base=loaded)
        return "extended"
    except Exception:  # noqa: BLE001 - the index is an accelerator: without it queries stay exact
        try:
            if found is not None:
                remove(found[1])
        except Exception:  # noqa: BLE001
            pass
        return "failed"
