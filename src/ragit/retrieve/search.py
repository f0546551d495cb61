"""Snapshot-scoped hybrid retrieval: BM25 (normalised) + cosine, fused by the seed's formula.

Every snapshot chunk gets a vector score (exact search over a contiguous float32 matrix), so no
lexical match is ever dropped by a pre-filter (knowledge §11.4). A long-lived process keeps the
matrix of a snapshot in a :class:`VectorCache`, which is what makes warm API queries fast; from
its second question on it scores only the rows that provably can reach the answer's pools
(ragit.retrieve.vector_bound: the same hits, bit for bit).
"""

from __future__ import annotations

import functools
import weakref
from collections import OrderedDict, abc
from dataclasses import dataclass, field, replace
from operator import attrgetter
from typing import TYPE_CHECKING, Sequence

from ..arrays import kth_best, members, unique_sorted
from ..ingest.ids import masking_of
from ..lexical import terms as lexical_terms
from ..security.labels import flags_for
from ..store.bm25 import SnapshotKeyword, weighted_counts
from .docsite import pool_site_raises
from .hits import Hit
from .keyword_bound import pool_raw
from .precedent import file_evidence, precedent_raises
from .rerank import (RerankInput, RerankWeights, main_block, pool_indices, read_question, rerank_pool, stand_in,
                     weights_from_config)
from .scoring import AUTHORITY_WEIGHT, RECENCY_WEIGHT, RETRIEVAL_WEIGHT, breakdown, final_score, sort_key

if TYPE_CHECKING:  # pragma: no cover
    import numpy as np

    from ..embed.base import Embedder
    from ..gitsnap.cochange import CoChange
    from ..ingest.globs import GlobSet
    from ..store.base import ChunkRow, Store
    from ..store.bm25 import RowPositions
    from ..store.vectorindex import HeapIndex
    from .rowpaths import RowPaths
    from .sources import OverlayCandidate
    from .vector_bound import Sketch


@dataclass
class SnapshotMatrix:
    rowids: "np.ndarray"  # int64 FTS row id per row, ascending
    matrix: "np.ndarray | None"  # float32 [rows, d]; None on the approximate path (see full_matrix)
    files: "np.ndarray"  # int32 file ordinal per row
    file_norms: "np.ndarray"  # float64 norm of each file's vector sum
    lengths: "np.ndarray"  # int32 length of each row in keyword terms (BM25's D)
    # a warm process's chunk rows of this snapshot, by row id (immutable once published; dropped
    # with the entry, and when it outgrows MAX_CACHED_ROWS)
    rows: dict = field(default_factory=dict)
    # the same for rows a re-rank read light (path and chunk id only, :class:`_PoolRows`)
    light_rows: dict = field(default_factory=dict)
    # the approximate path (a snapshot of at least vectorindex.APPROX_MIN_ROWS rows with an index):
    # each row's heap slot, the heap (rows read with pread, or through a mapping in a warm process)
    # and the embedder's index; the matrix is never gathered
    slots: "np.ndarray | None" = None
    heap: "np.ndarray | None" = None
    index: "HeapIndex | None" = None
    mapped: bool = False  # the heap is read through a memory mapping (map_heap)
    _slots_ascending: "bool | None" = None
    _slot_rows: "np.ndarray | None" = None  # row of each indexed slot (index_rows, slots not ascending)
    _tail_rows: "np.ndarray | None" = None
    _index_asks: int = 0  # approximate-path questions asked of this snapshot (tail_rows)
    _row_positions: "RowPositions | None" = None
    _normed: "np.ndarray | None" = None
    _all_normed: "bool | None" = None
    _files_sorted: "bool | None" = None
    _file_starts: "np.ndarray | None" = None
    _file_runs: "tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray] | None" = None
    _paths: "RowPaths | None" = None
    _path_asks: int = 0
    _file_index: "np.ndarray | None" = None
    _sketch: "Sketch | None" = None
    _sketch_asks: int = 0
    _site: "np.ndarray | None" = None
    _site_paths: "dict[int, str] | None" = None
    _rows_whole: bool = False

    def row_positions(self) -> "RowPositions":
        """Store row id → snapshot position (kept: a warm process restricts every question's
        postings to this snapshot with it)."""
        if self._row_positions is None:
            from ..store.bm25 import RowPositions

            self._row_positions = RowPositions(self.rowids)
        return self._row_positions

    def normed_files(self) -> "np.ndarray":
        """Which files have a vector sum to divide by (``file_norms > 0``; kept per snapshot)."""
        if self._normed is None:
            self._normed = self.file_norms > 0
        return self._normed

    def all_normed(self) -> bool:
        """Every file has a vector sum to divide by (kept per snapshot): its file cosines are then
        plain quotients, with no file to leave at zero."""
        if self._all_normed is None:
            self._all_normed = bool(self.normed_files().all())
        return self._all_normed

    def files_sorted(self) -> bool:
        """Each file's rows form one run (file ordinals never decrease; a snapshot ingested in one
        go), so a file's rows are found by binary search (kept per snapshot)."""
        if self._files_sorted is None:
            import numpy as np

            f = self.files
            self._files_sorted = bool(len(f) < 2 or np.all(f[1:] >= f[:-1]))
        return self._files_sorted

    def file_index(self) -> "np.ndarray":
        """``files`` as numpy's index type (kept per snapshot: a question's file cosines gather and
        sum by it, and an int32 index is converted on every use)."""
        if self._file_index is None:
            import numpy as np

            self._file_index = self.files.astype(np.intp)
        return self._file_index

    def file_starts(self) -> "np.ndarray":
        """Where each file's run of rows starts, and (last) the row count: file ``f``'s rows are
        ``starts[f] .. starts[f + 1] - 1`` when :meth:`files_sorted` (kept per snapshot: one pass
        instead of two binary searches of the snapshot per file and question)."""
        if self._file_starts is None:
            import numpy as np

            f = self.files
            if len(f) and self.files_sorted():  # a binary search per file: no 1M-row temporary
                ordinals = np.arange(max(len(self.file_norms), int(f[-1]) + 1) + 1, dtype=f.dtype)
                self._file_starts = np.searchsorted(f, ordinals).astype(np.int64)
            else:
                counts = np.bincount(f, minlength=len(self.file_norms))
                self._file_starts = np.concatenate(([0], np.cumsum(counts))).astype(np.int64)
        return self._file_starts

    def file_runs(self) -> "tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray] | None":
        """The files holding rows, as runs when :meth:`files_sorted` (None otherwise): (where
        each run starts, its row count, its file's norm, whether that norm is positive), kept per
        snapshot. A per-file sum is then one ``add.reduceat`` and its spread back over the rows
        one ``repeat``, instead of a scatter and a gather through every row's file ordinal."""
        if self._file_runs is None and self.files_sorted() and len(self.files):
            import numpy as np

            starts = self.file_starts()
            counts = np.diff(starts)
            held = np.flatnonzero(counts)
            norms = self.file_norms[held]
            self._file_runs = (starts[held], counts[held], norms, norms > 0)
        return self._file_runs

    def paths(self) -> "RowPaths | None":
        """The paths of this snapshot's rows by position, as a warm process reads them (kept per
        snapshot from its second question on, like :meth:`map_heap`: a one-shot query allocates
        nothing for them; None before, and for a snapshot too large to keep them for,
        :data:`rowpaths.MAX_ROWS`)."""
        if self._paths is None:
            self._path_asks += 1
            from .rowpaths import MAX_ROWS, RowPaths

            if self._path_asks >= 2 and len(self.rowids) <= MAX_ROWS:
                self._paths = RowPaths(self.rowids)
        return self._paths

    def whole_rows(self, store: "Store", sha: str) -> None:
        """Read every chunk row of a snapshot of at most :data:`WHOLE_ROWS` rows into ``rows``
        once a warm process keeps its paths (:meth:`paths`: its second question): each new
        question's hits then come from memory (6k rows: one read of ~30 ms and ~5 MB, against
        ~0.1 ms of SQLite a question for its ~10 new hit rows)."""
        if not self._rows_whole and self._paths is not None and len(self.rowids) <= WHOLE_ROWS:
            self._rows_whole = True
            self.rows.update(store.fetch_rows(sha, self.rowids.tolist()))

    def sketch(self) -> "Sketch | None":
        """The int8 sketch of the exact path's matrix (ragit.retrieve.vector_bound), built on
        this snapshot's second question, as :meth:`paths`: a one-shot query builds none; None
        before, on the approximate path, below :data:`vector_bound.SKETCH_MIN_ROWS` rows and above
        :data:`vector_bound.MAX_SKETCH_DIMS` dimensions."""
        if self._sketch is None and self._sketch_asks < 2 and self.matrix is not None and self.index is None:
            self._sketch_asks += 1
            if self._sketch_asks >= 2:  # (a one-shot query does not import the module)
                from .vector_bound import MAX_SKETCH_DIMS, SKETCH_MIN_ROWS, Sketch

                rows, dims = self.matrix.shape
                if rows >= SKETCH_MIN_ROWS and dims <= MAX_SKETCH_DIMS:
                    self._sketch = Sketch.of(self.matrix)
        return self._sketch

    def file_rows(self, seed: "np.ndarray") -> "np.ndarray":
        """Every row of the files of the ``seed`` rows, ascending: from each file's run of rows
        when the snapshot keeps a file's rows together (:meth:`file_starts`), else through a mask
        of the files."""
        import numpy as np

        if self.files_sorted():
            files = unique_sorted(self.files[seed])
            starts = self.file_starts()
            lo = starts[files]
            counts = starts[files + 1] - lo
            total = int(counts.sum())
            if total == 0:
                return np.zeros(0, dtype=np.int64)
            # lo[f] + 0, 1, ... counts[f] − 1 for each file, concatenated
            return np.repeat(lo - np.cumsum(counts) + counts, counts) + np.arange(total)
        wanted = np.zeros(len(self.file_norms), dtype=bool)
        wanted[self.files[seed]] = True
        return np.nonzero(wanted[self.files])[0]

    def site_positions(self, store: "Store", sha: str) -> "np.ndarray":
        """Positions of the rows of the snapshot's docs-site configuration files (kept): the
        docs-site stage (ragit.retrieve.docsite) reads them wherever they rank, so the bounded
        path scores them whatever their bounds."""
        if self._site is None:
            import numpy as np

            ids = np.array(sorted(self.site_paths(store, sha)), dtype=np.int64)
            held, at = members(ids, self.rowids)
            self._site = at[held]
        return self._site

    def site_paths(self, store: "Store", sha: str) -> dict[int, str]:
        """Row id → path of the snapshot's docs-site configuration rows (:func:`docsite.site_rows`,
        kept: a warm process's docs questions would each read them again, ~60 ms at 100k rows)."""
        if self._site_paths is None:
            from .docsite import site_rows

            self._site_paths = site_rows(store, sha)
        return self._site_paths

    def vectors(self, rows: "np.ndarray") -> "np.ndarray":
        """The float32 vectors of the rows at positions ``rows``: from the matrix when gathered,
        else read from the heap (the approximate path)."""
        if self.matrix is not None:
            import numpy as np

            # (take: the same rows as indexing, copied ~15 % faster: 1k rows of 1 KB from memory
            # the sketch's scan evicted, 184 → 155 µs)
            return np.take(self.matrix, rows, axis=0)
        return self.heap[self.slots[rows]]

    def full_matrix(self) -> "np.ndarray":
        """Every row's vector (gathered from the heap on the approximate path: exact search)."""
        if self.matrix is None:
            import numpy as np

            self.matrix = np.ascontiguousarray(self.heap[self.slots])
        return self.matrix

    def map_heap(self, store: "Store", embedder_id: str) -> None:
        """Read the approximate path's rows through a memory mapping from now on, with the heap
        and index mappings populated: a warm process answers many questions, and mapped rows
        cost no system call or page fault."""
        if self.index is not None:
            self.heap = store.heap_view(embedder_id, self.slots)
            self.mapped = True
            from ..store.vectorindex import populate

            # a long-lived process: map the heap and the index whole now, once, instead of taking
            # page faults on every question's new rows (it maps most of both within a few hundred
            # questions anyway)
            populate(self.heap)
            self.index.keep_mapped()

    def slots_ascending(self) -> bool:
        """Heap slots rise with the rows (a store's rows and slots are both given out in ingest
        order; kept per snapshot): a slot's row is then found by binary search in ``slots``."""
        if self._slots_ascending is None:
            import numpy as np

            s = self.slots
            self._slots_ascending = bool(len(s) < 2 or np.all(s[1:] > s[:-1]))
        return self._slots_ascending

    def index_rows(self, keys: "np.ndarray") -> "np.ndarray":
        """The row of each heap slot in ``keys`` (any shape) that the index covers and this
        snapshot holds, −1 elsewhere. A snapshot's first question searches ascending slots in
        place: a one-shot query at 1M rows spares the 4 MB table of every indexed slot's row and
        its scatter (≈ 15 ms, ≈ 19 MB). From the second (a warm process), or when the slots do not
        ascend, the table is built once and kept: a binary search per key into 1M slots misses the
        cache ~10 times, ≈ 1.5 ms a question against one lookup each."""
        import numpy as np

        covered = (keys >= 0) & (keys < self.index.rows)
        if self.slots_ascending() and self._slot_rows is None and self._index_asks < 2:
            found, at = members(keys, self.slots)
            return np.where(covered & found, at, -1)
        if self._slot_rows is None:
            inside = np.nonzero(self.slots < self.index.rows)[0]
            table = np.full(self.index.rows, -1, dtype=np.int32)
            table[self.slots[inside]] = inside
            self._slot_rows = table
        return np.where(covered, self._slot_rows[np.clip(keys, 0, self.index.rows - 1)], -1)

    def tail_rows(self) -> "np.ndarray":
        """The rows whose slots the index does not cover yet (scored exactly), ascending (kept
        per snapshot). Called once a question on the approximate path: it counts the questions
        :meth:`index_rows` has seen."""
        self._index_asks += 1
        if self._tail_rows is None:
            import numpy as np

            if self.slots_ascending():
                self._tail_rows = np.arange(int(np.searchsorted(self.slots, self.index.rows)), len(self.slots))
            else:
                self._tail_rows = np.nonzero(self.slots >= self.index.rows)[0]
        return self._tail_rows


MAX_CACHED_ROWS = 20_000
# A warm snapshot of at most this many rows keeps every chunk row (SnapshotMatrix.whole_rows), as
# it masks every path (rowpaths.MASK_ROWS).
WHOLE_ROWS = 10_000


@dataclass
class VectorCache:
    """Per-process read cache: snapshot matrices keyed by (store path, commit, embedder id), and
    one caching postings reader per store (dropped as soon as the store's keyword index changes)."""

    entries: dict[tuple[str, str, str], SnapshotMatrix] = field(default_factory=dict)
    max_entries: int = 4
    readers: dict[str, object] = field(default_factory=dict)
    keyword_reads: dict[str, int] = field(default_factory=dict)
    # store path → (the read store, its data version read before its reader was last found current)
    reader_versions: dict[str, tuple["weakref.ref[Store]", int]] = field(default_factory=dict)

    def postings(self, store: "Store", version: int | None = None):
        """The store's warm postings reader, current with its index; for a process's first
        keyword read the store's own (a one-shot CLI call opens no second connection).

        ``version`` is ``store``'s data version read during this read (ragit.retrieve.readiness
        .checked_store), or None. The reader is current when it was found current after the
        same store read the same version: no other connection committed in between (SQLite's
        ``data_version``), so its index did not change; else its generation is read again."""
        key = str(getattr(store, "path", ""))
        self.keyword_reads[key] = self.keyword_reads.get(key, 0) + 1
        if self.keyword_reads[key] < 2:
            return store.postings()
        reader = self.readers.get(key)
        if reader is not None:
            seen = self.reader_versions.get(key)
            vouched = version is not None and seen is not None and seen[1] == version and seen[0]() is store
            if not vouched and not reader.current():
                reader.close()
                reader = None
        if reader is None:
            reader = self.readers[key] = store.warm_postings()
        if version is not None:
            self.reader_versions[key] = (weakref.ref(store), version)
        else:
            self.reader_versions.pop(key, None)
        return reader

    def rows(self, store: "Store", sha: str, embedder_id: str) -> dict:
        """The cached chunk rows of a snapshot already in this cache (re-ranking fetches the same
        candidates query after query); a small snapshot's are read whole (:meth:`SnapshotMatrix.whole_rows`)."""
        entry = self.get(store, sha, embedder_id, scoring=False)
        if len(entry.rows) > MAX_CACHED_ROWS:
            entry.rows.clear()
        entry.whole_rows(store, sha)
        return entry.rows

    def light_rows(self, store: "Store", sha: str, embedder_id: str) -> dict:
        """The cached light rows (path and chunk id) of a snapshot already in this cache: a small
        repository's re-rank pool is much the same rows question after question."""
        entry = self.get(store, sha, embedder_id, scoring=False)
        if len(entry.light_rows) > MAX_CACHED_ROWS:
            entry.light_rows.clear()
        return entry.light_rows

    def get(self, store: "Store", sha: str, embedder_id: str, *, scoring: bool = True) -> SnapshotMatrix:
        """The snapshot's matrix entry. An entry scored again (``scoring``: a second question,
        so a long-lived process) switches to its mapped, populated heap; the ranking of the
        question that loaded it (``scoring=False``) does not, so a one-shot CLI query maps
        nothing more than it reads."""
        key = (str(getattr(store, "path", "")), sha, embedder_id)
        hit = self.entries.get(key)
        if hit is None:
            hit = load_matrix(store, sha, embedder_id)
            if len(self.entries) >= self.max_entries:
                self.entries.pop(next(iter(self.entries)))
            self.entries[key] = hit
        elif scoring and hit.index is not None and not hit.mapped:
            hit.map_heap(store, embedder_id)  # a second question: a long-lived process
        return hit


def load_matrix(store: "Store", sha: str, embedder_id: str) -> SnapshotMatrix:
    """The snapshot's rows and vectors. Below ``vectorindex.APPROX_MIN_ROWS`` rows (or without a
    usable index) the whole matrix is gathered for exact search; above, only the packed rows are
    read, so a query reads just the vectors it scores (:func:`approximate_scores`), with ``pread``:
    a one-shot process's memory then holds no more of the heap than those rows (a long-lived one
    maps the heap instead, :meth:`SnapshotMatrix.map_heap`)."""
    import numpy as np

    from ..store import vectorindex
    from ..store.sqlite import StoreUnreadable

    try:
        load_rows = getattr(store, "load_rows", None)
        if load_rows is not None:
            rowids, slots, files, file_norms, lengths = load_rows(sha, embedder_id)
            index = store.vector_index(embedder_id) if len(rowids) >= vectorindex.APPROX_MIN_ROWS else None
            # read with pread either way: a mapping would leave every page read in this process's
            # memory (the whole heap for an exact snapshot's gather, 100 MB at 100k chunks)
            heap = store.heap_rows(embedder_id, slots) if len(rowids) else None
            if index is not None and heap is not None and index.dims == heap.shape[1]:
                return SnapshotMatrix(rowids, None, files, file_norms, lengths, slots=slots, heap=heap, index=index)
            matrix = np.asarray(heap[slots]) if heap is not None else np.zeros((0, 0), dtype=np.float32)
            return SnapshotMatrix(rowids, matrix, files, file_norms, lengths)
        ann_rows = getattr(store, "ann_rows", None)  # a backend with its own index (PostgreSQL)
        found = ann_rows(sha, embedder_id) if ann_rows is not None else None
        if found is not None:
            rowids, slots, files, file_norms, lengths, index, heap = found
            return SnapshotMatrix(rowids, None, files, file_norms, lengths, slots=slots, heap=heap, index=index)
        rowids, matrix, files, file_norms, lengths = store.load_vectors(sha, embedder_id)
    except StoreUnreadable as exc:
        from .readiness import store_unavailable

        raise store_unavailable(sha, "store_unreadable", f"the store cannot serve snapshot {sha}: {exc}") from None
    return SnapshotMatrix(rowids, matrix, files, file_norms, lengths)


def query_terms(masked_question: str, repeats: int = 1) -> list[str]:
    """The masked question's keyword terms in first-seen order (knowledge §11.4 step 1), analysed
    exactly as the index is (ragit.lexical: identifiers split and joined, stemmed, stop words out).

    ``repeats = 1`` gives the distinct terms of §11.4. A larger value keeps each term up to that
    many times, consecutively: BM25 sums over the question's terms, so a term the question
    repeats weighs more (``retrieval.query_term_repeats``, docs/evaluation.md).
    """
    return list(_query_terms(masked_question, repeats))


@functools.lru_cache(maxsize=256)
def _query_terms(masked_question: str, repeats: int) -> tuple[str, ...]:
    """:func:`query_terms`, remembered: a warm process is asked the same questions again."""
    terms = lexical_terms(masked_question)
    counts = dict.fromkeys(terms, 0)  # (first-seen order; a Counter costs ~4 µs more a new question)
    if repeats <= 1:
        return tuple(counts)
    for term in terms:
        counts[term] += 1
    return tuple(term for term, n in counts.items() for _ in range(min(n, repeats)))


# A question of more than PASSAGE_WORDS words is embedded as consecutive passages of that many
# words and a chunk's cosine is its best passage's (docs/evaluation.md: a long issue text is
# several questions, and one averaged vector matches none of them). At most MAX_PASSAGES
# passages: a longer question gets proportionally longer passages, so the cost stays bounded.
PASSAGE_WORDS = 32
MAX_PASSAGES = 64


def question_passages(masked_question: str, words: int) -> list[str]:
    """The question itself, or its passages of ``words`` whitespace-separated words when it is
    longer than that (``words = 0``: always the whole question, knowledge §11.3)."""
    parts = masked_question.split()
    if words <= 0 or len(parts) <= words:
        return [masked_question]
    size = max(words, -(-len(parts) // MAX_PASSAGES))
    return [" ".join(parts[i : i + size]) for i in range(0, len(parts), size)]


# Passage vectors each embedder keeps of the questions it embedded last (~1 KB each at 256
# dimensions): see _question_vectors.
QUESTION_ROWS = 2048


class _Asked(OrderedDict):
    """(question, passage words) → its passage vectors, least recently asked first, holding
    ``rows`` vectors in all."""

    rows = 0


_ASKED: "weakref.WeakKeyDictionary[Embedder, _Asked]" = weakref.WeakKeyDictionary()


def _question_vectors(embedder: "Embedder", masked_question: str, passage_words: int) -> "np.ndarray":
    """The question's passage vectors, read-only, remembered per embedder (up to
    :data:`QUESTION_ROWS` vectors): one query scores the snapshot and its overlay artifacts with the
    same vectors, a long question may have dozens of passages, and a warm process (whose ``Repo``
    lends every query the same embedder) is asked the same questions again."""
    try:
        asked = _ASKED.get(embedder)
        if asked is None:
            asked = _ASKED[embedder] = _Asked()
    except TypeError:  # an embedder that cannot be referenced weakly keeps nothing
        asked = _Asked()
    key = (masked_question, passage_words)
    vectors = asked.get(key)
    if vectors is not None:
        try:
            asked.move_to_end(key)
        except KeyError:  # (another thread's question pushed it out meanwhile)
            pass
        return vectors
    vectors = embedder.embed(question_passages(masked_question, passage_words))
    vectors.flags.writeable = False
    asked[key] = vectors
    asked.rows += len(vectors)
    while asked.rows > QUESTION_ROWS and len(asked) > 1:
        asked.rows -= len(asked.popitem(last=False)[1])
    return vectors


def question_cosines(matrix: "np.ndarray", embedder: "Embedder", masked_question: str,
                     passage_words: int = 0) -> "np.ndarray":
    """float64 cosine of each row of ``matrix`` with the question: with its best passage when
    the question is split into passages, else with the question's one vector.

    One dot product a row (``numpy.vecdot``), not a BLAS matrix product: a matrix product rounds
    a row's float32 dot product differently depending on where the row sits in the matrix (its
    blocking, SIMD tails and thread split), and a snapshot built incrementally orders its rows
    differently from a clean build of the same commit. Each row's product computed on its own
    gives the same bits wherever it sits, so the same question at the same commit scores the
    same whatever the store holds (cli-contract §9), and a subset of the rows (the bounded and
    approximate paths) gets the very floats the whole matrix would.
    """
    import numpy as np

    return _cosines32(matrix, _question_vectors(embedder, masked_question, passage_words)).astype(np.float64)


def _cosines32(matrix: "np.ndarray", qvecs: "np.ndarray") -> "np.ndarray":
    """:func:`question_cosines` before its widening to float64: each row's float32 dot product
    with the best passage.

    ``vecdot`` reduces each row on its own (numpy's dot loop, BLAS ``sdot`` where numpy has it),
    about twice as fast as the ``einsum`` it replaced (session 36: 6,000 × 256 rows 228 → 126 µs)
    with the same property; one passage at a time keeps the matrix streaming through the cache
    once a passage rather than once a row.
    """
    import numpy as np

    best = np.vecdot(matrix, qvecs[0])
    for qvec in qvecs[1:]:
        np.maximum(best, np.vecdot(matrix, qvec), out=best)
    return best


# Weight of the file cosine in the vector score under ``vector_normalization = "file_blend"``
# (docs/evaluation.md: measured on the development sets, then fixed; not a per-repo knob).
FILE_BLEND = 0.3


@dataclass
class RetrievalParams:
    alpha: float = 0.7
    keyword_enabled: bool = True
    file_blend: float = FILE_BLEND
    passage_words: int = PASSAGE_WORDS
    term_repeats: int = 3
    rerank: bool = True
    rerank_weights: "RerankWeights" = field(default_factory=lambda: _default_weights())
    cochange: bool = True  # the co-change stage after the re-rank (ragit.retrieve.cochange_boost)
    docsite: bool = True  # docs-site configuration next to the docs, with the re-rank (ragit.retrieve.docsite)
    precedent: bool = True  # files of past commits whose messages resemble the question (ragit.retrieve.precedent)

    @classmethod
    def from_config(cls, config, alpha: float | None = None) -> "RetrievalParams":
        """``vector_normalization = "none"`` is knowledge §11.3 exactly: the raw cosine of the
        whole question (no file blend, no passages); ``rerank = false`` the plain fusion."""
        r = config["retrieval"]
        blended = r["vector_normalization"] == "file_blend"
        return cls(alpha=r["alpha"] if alpha is None else alpha, keyword_enabled=r["keyword_enabled"],
                   file_blend=FILE_BLEND if blended else 0.0,
                   passage_words=r["passage_words"] if blended else 0,
                   term_repeats=r["query_term_repeats"], rerank=r["rerank"], cochange=r["cochange"],
                   rerank_weights=_config_weights(r))


def _config_weights(retrieval: dict) -> "RerankWeights":
    return weights_from_config(retrieval)


def _default_weights() -> "RerankWeights":
    return RerankWeights()


@dataclass
class SnapshotScores:
    """Per-row vector and raw keyword scores of one snapshot for one question. The keyword
    scores come either as a whole array or as ``keyword``, scored on demand: ``rank_hits`` then
    computes only the rows its answer reads (ragit.retrieve.keyword_bound)."""

    rowids: "np.ndarray"  # int64 FTS row id per row, ascending
    vector: "np.ndarray"  # float64 cosine per row
    raw_keyword: "np.ndarray | None" = None  # float64 bm25 per row, 0 where the row does not match
    extra_raw: list[float] = field(default_factory=list)  # bm25 of the extra (overlay) documents
    keyword: "SnapshotKeyword | None" = None  # the on-demand scorer when raw_keyword is None
    paths: "RowPaths | None" = None  # a warm process's paths of these rows by position (rowpaths)
    site: "abc.Callable[[], dict[int, str]] | None" = None  # a warm process's kept docs-site rows (docsite)

    def raw(self) -> "np.ndarray":
        """The whole raw keyword array (computed from ``keyword`` when not given; zeros without
        either)."""
        if self.raw_keyword is None:
            import numpy as np

            self.raw_keyword = self.keyword.full() if self.keyword is not None \
                else np.zeros(len(self.rowids), dtype=np.float64)
        return self.raw_keyword


def vector_scores(snap: SnapshotMatrix, embedder: "Embedder", masked_question: str,
                  file_blend: float = 0.0, passage_words: int = 0) -> "np.ndarray":
    """The vector score of every snapshot row, float64 in [−1, 1].

    ``file_blend = 0`` gives the raw cosine of knowledge §11.3. Otherwise the chunk's cosine is
    blended with its *file's* cosine — the question against the normalised sum of the file's
    chunk vectors, computed as Σ chunk cosines / ‖Σ chunk vectors‖ — so a chunk is judged with
    the context of the file it belongs to (docs/evaluation.md). ``passage_words > 0`` scores a
    long question by its best passage (:func:`question_cosines`).
    """
    import numpy as np

    if not len(snap.rowids):
        return np.zeros(0, dtype=np.float64)
    if not file_blend:
        return question_cosines(snap.full_matrix(), embedder, masked_question, passage_words)
    # the float32 cosines, widened where they are read (bincount adds its weights as float64; the
    # product is taken in float64): the same numbers as widening them first, one pass less
    cosine = _cosines32(snap.full_matrix(), _question_vectors(embedder, masked_question, passage_words))
    files = snap.file_index()
    sums = np.bincount(files, weights=cosine, minlength=len(snap.file_norms))
    if snap.all_normed():  # (the same quotients as the masked division, without its mask)
        file_cos = sums / snap.file_norms
    else:
        file_cos = np.divide(sums, snap.file_norms, out=np.zeros_like(sums), where=snap.normed_files())
    # (1 − blend) · cosine + blend · file cosine, with one temporary less (the same products and sum;
    # blend · file cosine once per file, then spread over its rows)
    blended = np.multiply(cosine, 1.0 - file_blend, dtype=np.float64)
    file_cos *= file_blend
    blended += file_cos[files]
    return blended


def keyword_raw(
    store: "Store", snap: SnapshotMatrix, masked_question: str, extra: Sequence[tuple[str, str, str]] = (),
    cache: VectorCache | None = None, term_repeats: int = 1,
) -> tuple["np.ndarray", list[float]]:
    """Raw BM25 per snapshot row (0 where it does not match) and per ``extra`` (text, title,
    path) document, with the statistics of the snapshot's rows and those documents together
    (ragit.store.bm25). Every lexical match of the snapshot is scored (no LIMIT)."""
    scorer = keyword_scorer(store, snap, masked_question, extra, cache, term_repeats)
    return scorer.full(), scorer.extra_score


def keyword_scorer(
    store: "Store", snap: SnapshotMatrix, masked_question: str, extra: Sequence[tuple[str, str, str]] = (),
    cache: VectorCache | None = None, term_repeats: int = 1, version: int | None = None,
) -> "SnapshotKeyword":
    """The question's BM25 over the snapshot, scored on demand (:func:`keyword_raw`'s floats):
    the postings are read and the statistics fixed here, the per-row arithmetic when asked.
    ``version``: see :meth:`VectorCache.postings`."""
    terms = query_terms(masked_question, term_repeats)
    postings = cache.postings(store, version) if cache is not None else store.postings()
    return SnapshotKeyword(postings, terms, snap.rowids, snap.lengths, [weighted_counts(*doc) for doc in extra],
                           snap.row_positions())


def keyword_candidates(scorer: "SnapshotKeyword", count: int) -> "tuple[np.ndarray, np.ndarray]":
    """The ``count`` best keyword matches (positions, ascending; every match when there are no
    more) with their raw BM25; among rows tied at the cut the first rows stay
    (:meth:`SnapshotKeyword.best`: the scorer then holds every row's score, so the question's
    later :meth:`~SnapshotKeyword.exact` reads are gathers until it is released)."""
    scorer.hold()
    return scorer.best(count)


# The approximate path's candidates: the index's nearest rows per question vector (over-fetched by
# the share of the heap the snapshot holds, at most MAX_FETCH), the heap rows the index does not
# cover yet and the KEYWORD_CANDIDATES best keyword matches (the fused pool of the bench corpus
# reaches keyword rank ≈ 3,500: bench/README.md); then every row of their files (of the keyword
# matches, only those that can reach a pool: approximate_scores). The re-rank pool
# takes the 100 best rows by *file-blended* vector score, which a chunk can reach through its
# file's other chunks, so the index is asked for well over 100: at 1M chunks, 200 questions,
# recall@10 against exact search was 0.978 with 256, 0.981 with 384 and 0.984 with 512 (measured
# with session 8's HNSW graph). A snapshot below FULL_CANDIDATE_ROWS asks for proportionally fewer,
# at least MIN_VECTOR_CANDIDATES: at 100k chunks recall@10 was 0.995 with 512, 0.992 with 256,
# 0.987 with 192 and 0.982 with 128 (bench/README.md, session 11). The inverted lists that replaced
# the graph (ragit.store.vectorindex) score every row of the lists they probe whatever is asked.
VECTOR_CANDIDATES = 512
MIN_VECTOR_CANDIDATES = 256
FULL_CANDIDATE_ROWS = 200_000
KEYWORD_CANDIDATES = 4096
MAX_FETCH = 8192
# How far below a pool's level a keyword candidate may estimate its score and still have its file
# scored (approximate_scores): the estimate takes the best file cosine found for the candidate's
# own, and a file's other rows count too. At 1M chunks, 200 questions: recall@10 against exact
# 0.980 with no slack, 0.981 with 0.01 (as when every candidate's file was scored), for ~15%
# more rows read.
REACH_SLACK = 0.01


@dataclass(frozen=True)
class FusedCut:
    """What the answer's pools are cut at, known before ranking (:func:`approximate_scores`
    scores only the keyword candidates that can reach them): the fusion's ``alpha``, the fused
    pool's size (``max(pool, 2·top_k)`` with the re-rank, ``top_k`` without), the keyword and
    vector pools' (``pool``; 0 without the re-rank) and the overlay's raw keyword scores (they
    share the normaliser)."""

    alpha: float
    fused_k: int
    pool_k: int
    extra_raw: tuple[float, ...] = ()

    @classmethod
    def of(cls, params: RetrievalParams, top_k: int, extra_raw: Sequence[float] = ()) -> "FusedCut":
        pool = params.rerank_weights.pool
        fused = max(pool, 2 * top_k) if params.rerank else top_k
        return cls(params.alpha, fused, pool if params.rerank else 0, tuple(extra_raw))


def vector_candidates(rows: int) -> int:
    """How many nearest rows the index is asked for in a snapshot of ``rows`` rows (before the
    over-fetch for rows of other snapshots): :data:`VECTOR_CANDIDATES` from
    :data:`FULL_CANDIDATE_ROWS` rows on, proportionally fewer below, never fewer than
    :data:`MIN_VECTOR_CANDIDATES` (nor than the snapshot holds)."""
    scaled = VECTOR_CANDIDATES * rows // FULL_CANDIDATE_ROWS
    return min(VECTOR_CANDIDATES, max(MIN_VECTOR_CANDIDATES, scaled), rows)


def _row_cosines(snap: SnapshotMatrix, rows: "np.ndarray", embedder: "Embedder", masked_question: str,
                 passage_words: int, known: "tuple[np.ndarray, np.ndarray] | None" = None) -> "np.ndarray":
    """:func:`question_cosines` of the snapshot rows ``rows`` (ascending), read from the heap; the
    rows of ``known`` (rows ascending, their cosines) are not read again (a row's cosine is its
    own product: the same bits whichever rows it was computed with)."""
    import numpy as np

    if known is None or not len(known[0]) or not len(rows):
        return question_cosines(snap.vectors(rows), embedder, masked_question, passage_words)
    have, at = members(rows, known[0])
    cosine = np.empty(len(rows), dtype=np.float64)
    cosine[have] = known[1][at[have]]
    need = ~have
    if need.any():
        cosine[need] = question_cosines(snap.vectors(rows[need]), embedder, masked_question, passage_words)
    return cosine


def _scored_rows(snap: SnapshotMatrix, picked: "np.ndarray", embedder: "Embedder", masked_question: str,
                 file_blend: float, passage_words: int,
                 known: "tuple[np.ndarray, np.ndarray] | None" = None) -> "tuple[np.ndarray, float]":
    """Exact vector scores of the rows ``picked`` (ascending; with a file blend, every row of
    their files), and the best file cosine among them: each score has the bits
    :func:`vector_scores` gives it, since a row's cosine is its own product and a file's sum adds
    its rows in the same order. ``known``: rows whose cosines were computed before
    (:func:`_row_cosines`)."""
    import numpy as np

    cosine = _row_cosines(snap, picked, embedder, masked_question, passage_words, known)
    if not file_blend or not len(picked):
        return cosine, 0.0
    files, at = _file_positions(snap.files[picked])
    sums = np.bincount(at, weights=cosine, minlength=len(files))
    norms = snap.file_norms[files]
    file_cos = np.divide(sums, norms, out=np.zeros_like(sums), where=norms > 0)
    return (1.0 - file_blend) * cosine + file_blend * file_cos[at], float(file_cos.max())


def _file_positions(files: "np.ndarray") -> "tuple[np.ndarray, np.ndarray]":
    """(the distinct file ordinals of ``files``, ascending; where each element's is among them).
    Rows picked ascending from a snapshot that keeps each file's rows together (the bounded and
    approximate paths' whole files) give ordinals that never decrease: their distinct values are
    where they change, and their places a running count, without a sort or a binary search."""
    import numpy as np

    if len(files) > 1:
        change = np.empty(len(files), dtype=bool)
        change[0] = True
        np.not_equal(files[1:], files[:-1], out=change[1:])
        if not np.any(files[1:][change[1:]] < files[:-1][change[1:]]):  # never decreasing
            at = np.cumsum(change)
            at -= 1
            return files[change], at
    distinct = unique_sorted(files)
    return distinct, np.searchsorted(distinct, files)


def approximate_scores(snap: SnapshotMatrix, embedder: "Embedder", masked_question: str, file_blend: float,
                       passage_words: int, scorer: "SnapshotKeyword | None",
                       cut: FusedCut | None = None) -> "tuple[np.ndarray, np.ndarray, np.ndarray | None] | None":
    """(rows, vector score, raw BM25 or None when not computed here) of the candidate rows of a
    snapshot on the approximate path, rows ascending; each score has the bits
    :func:`vector_scores` (:meth:`SnapshotKeyword.full`) gives that row (its file's rows are all
    scored, in the same order). None when the index cannot supply enough of this snapshot's rows
    (the caller searches exactly).

    ``scorer``: the question's keyword scores, whose :data:`KEYWORD_CANDIDATES` best rows are
    candidates. With a ``cut`` (the query's pools) a keyword candidate's file is scored only
    when the candidate can reach a pool: first the index's rows and the keyword pool's rows are
    scored (their files whole), which fixes a level no fused pool falls below (the fused pool's
    k-th best of those rows), the vector pool's and the best file cosine found; another
    candidate joins when its fused score, with its own cosine and that file cosine, reaches the
    level, or its vector score the vector pool's (:func:`_with_reaching`). Most of the thousands
    of keyword candidates cannot, and their files (six rows each on the bench corpus) were most
    of the rows read (at 100k chunks ~27k rows a question before, ~5k now).
    """
    import numpy as np

    n = len(snap.rowids)
    tail = snap.tail_rows()
    qvecs = _question_vectors(embedder, masked_question, passage_words)
    want = vector_candidates(n)
    count = min(MAX_FETCH, max(want, int(want * snap.index.size / max(1, n - len(tail)) * 1.25) + 16))
    while True:
        keys = snap.index.search(qvecs, count)
        rows = snap.index_rows(keys)
        enough = bool(np.all((rows >= 0).sum(axis=1) >= min(want, n - len(tail))))
        if enough or count >= min(MAX_FETCH, snap.index.size):
            break
        count = min(MAX_FETCH, count * 4)
    if not enough:
        return None
    seeds = [rows[rows >= 0], tail]
    staged = scorer is not None and cut is not None and file_blend and cut.fused_k > 0 and cut.alpha < 1.0
    if scorer is not None:
        kw_rows, kw_raw = keyword_candidates(scorer, KEYWORD_CANDIDATES)
        if staged:  # the keyword pool (every row tied at its cut) now, the other candidates later
            first = kw_raw >= kth_best(kw_raw, max(cut.pool_k, 1))
            rest_rows, rest_raw = kw_rows[~first], kw_raw[~first]
            seeds.append(kw_rows[first])
        else:
            seeds.append(kw_rows)
    seed = unique_sorted(np.concatenate(seeds).astype(np.int64))
    picked = snap.file_rows(seed) if file_blend else seed
    vector, file_best = _scored_rows(snap, picked, embedder, masked_question, file_blend, passage_words)
    if not staged or not len(kw_rows):
        return picked, vector, None
    best = max([float(kw_raw.max()), *cut.extra_raw])  # rank_hits' normaliser: the keyword pool has the best row
    return _with_reaching(snap, picked, vector, file_best, scorer, rest_rows, rest_raw, best, cut, embedder,
                          masked_question, file_blend, passage_words)


def _with_reaching(snap: SnapshotMatrix, picked: "np.ndarray", vector: "np.ndarray", file_best: float,
                   scorer: "SnapshotKeyword", rest_rows: "np.ndarray", rest_raw: "np.ndarray", best: float,
                   cut: FusedCut, embedder: "Embedder", masked_question: str, file_blend: float,
                   passage_words: int) -> "tuple[np.ndarray, np.ndarray, np.ndarray]":
    """:func:`approximate_scores`' second stage: the scored rows ``picked`` (with their
    ``vector`` scores) and the files of the keyword candidates ``rest_rows`` (raw BM25
    ``rest_raw``; ``best`` normalises) that can reach the fused pool's level or the vector
    pool's, as (rows, vector score, raw BM25), rows ascending."""
    import numpy as np

    alpha = cut.alpha
    raw = scorer.exact(picked)
    level = kth_best(alpha * vector + (1.0 - alpha) * np.where(raw > 0, raw / best, 0.0), cut.fused_k)
    fresh = ~members(rest_rows, picked)[0]
    rest_rows, rest_keyword = rest_rows[fresh], rest_raw[fresh] / best
    if not len(rest_rows):
        return picked, vector, raw
    # each candidate's own cosine, with the best file cosine found standing for its file's
    cosine = question_cosines(snap.vectors(rest_rows), embedder, masked_question, passage_words)
    vector_reach = (1.0 - file_blend) * cosine + file_blend * file_best
    joins = alpha * vector_reach + (1.0 - alpha) * rest_keyword >= level - REACH_SLACK
    if cut.pool_k:  # the vector pool (the re-rank's) takes the pool_k best vector scores
        joins |= vector_reach >= kth_best(vector, cut.pool_k) - REACH_SLACK
    late = rest_rows[joins]
    if not len(late):
        return picked, vector, raw
    more = snap.file_rows(late)
    more = more[~members(more, picked)[0]]
    rows = np.concatenate([picked, more])
    order = np.argsort(rows, kind="stable")
    # the joining candidates' own cosines are known: only their files' other rows are read
    more_scores = _scored_rows(snap, more, embedder, masked_question, file_blend, passage_words,
                               known=(late, cosine[joins]))[0]
    scores = np.concatenate([vector, more_scores])
    return rows[order], scores[order], np.concatenate([raw, scorer.exact(more)])[order]


def score_snapshot(
    store: "Store",
    sha: str,
    embedder: "Embedder",
    masked_question: str,
    params: RetrievalParams,
    *,
    cache: VectorCache | None = None,
    extra: Sequence[tuple[str, str, str]] = (),
    top_k: int | None = None,
    version: int | None = None,
) -> SnapshotScores:
    """Cosine for every chunk of the snapshot and raw BM25 for every lexical match; on the
    approximate path (a large snapshot with an index) only for the candidate rows, so the scores
    cover those rows alone (every other row is no candidate).

    ``extra`` documents (overlay artifacts) are BM25-scored against the same statistics; their
    raw scores land in ``extra_raw``. ``top_k`` (the hits the caller will rank, every row
    admitted) lets the approximate path skip the keyword candidates that cannot reach its fused
    pool (:func:`approximate_scores`); None (a caller ranking with a filter or several ways)
    scores them all. ``version``: see :meth:`VectorCache.postings`.
    """
    import numpy as np

    snap = cache.get(store, sha, embedder.id) if cache is not None else load_matrix(store, sha, embedder.id)
    site = functools.partial(snap.site_paths, store, sha) if cache is not None else None
    if params.rerank:
        # what the re-rank reads from the question (kept: lru_cache), read now, while the word
        # caches and patterns it touches are still in the processor's caches; after the einsum
        # has streamed the snapshot's matrix (6 MB at 6k rows) each of its look-ups misses
        read_question(masked_question)
    scorer = None
    if params.keyword_enabled:
        scorer = keyword_scorer(store, snap, masked_question, extra, cache, params.term_repeats, version)
        extra_raw = scorer.extra_score
    else:
        extra_raw = [0.0] * len(extra)
    if snap.index is not None and len(snap.rowids):
        cut = FusedCut.of(params, top_k, extra_raw) if top_k is not None else None
        try:
            picked = approximate_scores(snap, embedder, masked_question, params.file_blend, params.passage_words,
                                        scorer, cut)
            if picked is not None:
                rows, vector, raw = picked
                if raw is None:
                    raw = scorer.exact(rows) if scorer is not None else np.zeros(len(rows), dtype=np.float64)
                return SnapshotScores(snap.rowids[rows], vector, raw, extra_raw, site=site)
        finally:  # the keyword candidates held the question's scores (keyword_candidates)
            if scorer is not None:
                scorer.release()
    paths = snap.paths() if cache is not None else None  # (one-shot: nothing to keep them for)
    sketch = snap.sketch() if cache is not None and top_k is not None and params.rerank else None
    if sketch is not None:  # a warm process: only the rows that can reach a pool are scored
        from .vector_bound import bounded_scores

        try:
            found = bounded_scores(
                snap, sketch, _question_vectors(embedder, masked_question, params.passage_words), params.file_blend,
                lambda picked: _scored_rows(snap, picked, embedder, masked_question, params.file_blend,
                                            params.passage_words)[0],
                scorer, FusedCut.of(params, top_k, extra_raw),
                always=snap.site_positions(store, sha) if params.docsite else None,
                cosines_of=lambda picked: _row_cosines(snap, picked, embedder, masked_question,
                                                       params.passage_words))
        finally:
            if scorer is not None:
                scorer.release()
        if found is not None:
            rows, vector, raw = found
            return SnapshotScores(snap.rowids[rows], vector, raw, extra_raw,
                                  paths=_SubsetPaths(paths, rows) if paths is not None else None, site=site)
    vector = vector_scores(snap, embedder, masked_question, params.file_blend, params.passage_words)
    if scorer is None:
        return SnapshotScores(snap.rowids, vector, np.zeros(len(snap.rowids), dtype=np.float64), extra_raw,
                              paths=paths, site=site)
    return SnapshotScores(snap.rowids, vector, None, extra_raw, keyword=scorer, paths=paths, site=site)


class _SubsetPaths:
    """A snapshot's :class:`RowPaths` read through the positions of a subset of its rows (the
    scored rows of :func:`vector_bound.bounded_scores`)."""

    def __init__(self, paths: "RowPaths", rows: "np.ndarray"):
        self._paths, self._rows = paths, rows

    def of(self, positions: "np.ndarray", store: "Store", sha: str) -> list[str]:
        return self._paths.of(self._rows[positions], store, sha)

    def keys(self, positions: "np.ndarray", store: "Store", sha: str) -> list[tuple[str, str]]:
        return self._paths.keys(self._rows[positions], store, sha)


@dataclass(frozen=True)
class RowFilter:
    """Query-time filters (knowledge §12.1): only rows whose path matches one of ``paths`` (§8.1
    glob semantics; empty = every path) and, with ``exclude_tests``, that is not a test file."""

    paths: tuple[str, ...] = ()
    exclude_tests: bool = False

    def __bool__(self) -> bool:
        return bool(self.paths) or self.exclude_tests

    def admits(self, path: str) -> bool:
        if self.exclude_tests:
            from ..pathroles import is_test_path

            if is_test_path(path):
                return False
        return not self.paths or _globs(self.paths).matches(path)


@functools.lru_cache(maxsize=32)
def _globs(patterns: tuple[str, ...]) -> GlobSet:
    """The compiled ``--path`` globs (compiled once, not per row)."""
    from ..ingest.globs import GlobSet

    return GlobSet(patterns)


def _eligible(store: "Store", snapshot: SnapshotScores, row_filter: RowFilter | None) -> "np.ndarray | None":
    """Boolean mask of the snapshot rows a filter admits (None: every row)."""
    import numpy as np

    if not row_filter or not len(snapshot.rowids):
        return None
    paths = store.row_paths([int(r) for r in snapshot.rowids])
    verdict: dict[str, bool] = {}
    out = np.zeros(len(snapshot.rowids), dtype=bool)
    for i, rowid in enumerate(snapshot.rowids):
        path = paths[int(rowid)]
        ok = verdict.get(path)
        if ok is None:
            ok = verdict[path] = row_filter.admits(path)
        out[i] = ok
    return out


def _names_in(question: str) -> bool:
    return bool(read_question(question).names)


def _reaching(retrieval: "np.ndarray", top_k: int) -> "np.ndarray":
    """Positions of the pool rows whose final score reaches the ``top_k``-th best (given each
    row's retrieval score): only they can be hits.

    The final scores are computed in numpy with exactly ``final_score``'s operations in its order
    (IEEE float64 either way, so the same bits), and the exact tie-break (path, title, ...) is
    left to the caller for these few rows instead of the whole pool.
    """
    import numpy as np

    final = RETRIEVAL_WEIGHT * retrieval + AUTHORITY_WEIGHT * 1.0 + RECENCY_WEIGHT * 1.0
    kth = np.partition(final, len(final) - top_k)[len(final) - top_k]
    return np.flatnonzero(final >= kth)


def _contenders(pool, vector, keyword, alpha: float, top_k: int):
    """The pool rows (not re-ranked) that can be hits: :func:`_reaching` of their fused scores."""
    if len(pool) <= top_k:
        return pool
    return pool[_reaching(alpha * vector[pool] + (1.0 - alpha) * keyword[pool], top_k)]


_PATH, _TITLE, _TEXT = attrgetter("path"), attrgetter("title"), attrgetter("text")


class _Column(abc.Sequence):
    """One field of the pool's chunk rows, read only where asked for."""

    def __init__(self, chunk: list, field: attrgetter):
        self._chunk, self._field = chunk, field

    def __len__(self) -> int:
        return len(self._chunk)

    def __getitem__(self, i):  # type: ignore[override]
        if isinstance(i, slice):
            return list(map(self._field, self._chunk[i]))
        return self._field(self._chunk[i])

    def __iter__(self):
        return map(self._field, self._chunk)


def _reranked(question: str, pool: "np.ndarray", rows: "dict[int, ChunkRow] | None",
              paths_of: "abc.Callable[[np.ndarray], list[str]] | None",
              source: "_PoolRows", wanted: list[int], snapshot: SnapshotScores, keyword: "np.ndarray", retrieval: "np.ndarray",
              alpha: float, params: RetrievalParams, top_k: int, cochange: "CoChange | None") -> list[tuple]:
    """The pool re-ranked (and raised by co-change), then the rows whose final score can make the
    first ``top_k``, sorted: ``(sort key, snapshot row, (re-ranked score, factors))`` each.

    ``rows`` may hold light rows (path and chunk id: all the re-rank reads of a question naming no
    identifier), or be None with ``paths_of`` giving the paths of snapshot positions instead (read
    once the pool is in order); the whole rows of the few that need more (the tie-break of equal
    scores, the possible hits) come from ``source``. The final scores of the whole pool are computed in numpy
    with exactly ``final_score``'s operations in its order (IEEE float64 either way, so the same
    bits); only the few rows that reach the ``top_k``-th best get their factors and the exact
    tie-break (path, title, ...).
    """
    import numpy as np

    order = _pool_order(retrieval[pool], lambda: list(map(source.full(wanted).__getitem__, wanted)))
    pool = pool[order]
    ids = snapshot.rowids[pool].tolist()
    hybrid = retrieval[pool]
    if rows is None:  # a question naming no identifier: the re-rank reads no title or text
        paths = paths_of(pool)
        inp = RerankInput(hybrid=hybrid, paths=paths, titles=(), texts=())
    else:
        chunk = list(map(rows.__getitem__, ids))
        paths = list(map(_PATH, chunk))
        # titles and texts are read only for a question that names identifiers: listed on demand
        inp = RerankInput(hybrid=hybrid, paths=paths, titles=_Column(chunk, _TITLE), texts=_Column(chunk, _TEXT))
    # a Python ``__main__`` block is demoted as an example (rerank.main_block), which needs its
    # title and text: only the rows that can be hits are read, so the stages run again while one
    # of those is a ``__main__`` block not yet demoted (rarely: most pools hold none)
    # (and so is a chunk that stands in for its file's code, an import block or a ``__repr__``, which
    # trades places with the file's best other candidate: rerank.stand_in)
    base = (pool, ids, hybrid, paths)
    asked = read_question(question)
    demos: set[int] = set()
    stand_ins: set[int] = set()
    while True:
        pool, ids, hybrid, paths = base
        ranking = rerank_pool(question, replace(inp, main_blocks=frozenset(demos), stand_ins=frozenset(stand_ins))
                              if demos or stand_ins else inp, params.rerank_weights)
        scores = ranking.scores
        raised: dict[int, float] = {}
        if cochange is not None and params.cochange and cochange.shared:  # (no pairs: nothing to raise)
            from .cochange_boost import cochange_raises

            raised = cochange_raises(ranking.order, scores, paths, cochange)[0]
        adjusted = list(scores)
        for j, value in raised.items():
            adjusted[j] = value
        site: dict[int, float] = {}
        if params.docsite:  # docs-site configuration files next to the docs (ragit.retrieve.docsite)
            added, added_paths, site = pool_site_raises(question, paths, adjusted, source.store, source.sha,
                                                        snapshot.rowids, retrieval, kept=snapshot.site)
            if added:  # rows from outside the pool, numbered after it
                pool = np.concatenate([pool, np.array(added, dtype=pool.dtype)])
                ids = ids + snapshot.rowids[added].tolist()
                hybrid = retrieval[pool]
                paths = list(paths) + added_paths
                adjusted += retrieval[added].tolist()
        site_base = {j: adjusted[j] for j in site}  # (what --explain's factor adds to)
        for j, value in site.items():
            adjusted[j] = value
        precedent: dict[int, float] = {}
        if cochange is not None and params.cochange and params.precedent and cochange.said:
            evidence = file_evidence(query_terms(question), cochange)  # (distinct, remembered)
            if evidence:  # each candidate file's best chunk after the stages so far
                precedent = precedent_raises(adjusted, paths, evidence, float(hybrid.max()))
        precedent_base = {j: adjusted[j] for j in precedent}
        for j, value in precedent.items():
            adjusted[j] = value
        n = len(pool)
        if n > top_k:
            fused = hybrid  # alpha · vector + (1 − alpha) · keyword of each pool row, as final_score computes it
            picks = _reaching(fused + (np.array(adjusted) - fused), top_k).tolist()  # final_score's re-ranked score
        else:
            picks = range(n)
        whole = source.full([ids[j] for j in picks])
        found = [j for j in picks if j < len(scores) and j not in demos and ranking.demotes_main_block(j)
                 and main_block(paths[j], whole[ids[j]].title, whole[ids[j]].text)]
        standing = [j for j in picks if j < len(scores) and j not in stand_ins and ranking.trades_stand_in(j)
                    and stand_in(whole[ids[j]].title, whole[ids[j]].text, asked)]
        if not found and not standing:
            break
        demos.update(found)
        stand_ins.update(standing)
    at = pool.tolist()
    out = []
    for j in picks:
        i = at[j]
        factors = ranking.factors(j) if j < len(scores) else {}
        if j in raised:
            factors = {**factors, "cochange": raised[j] - scores[j]}
        if j in site:
            factors = {**factors, "docsite": site[j] - site_base[j]}
        if j in precedent:
            factors = {**factors, "precedent": precedent[j] - precedent_base[j]}
        change = (adjusted[j], factors)
        row = whole[ids[j]]
        final = final_score("hybrid", float(snapshot.vector[i]), float(keyword[i]), alpha, 1.0, 1.0, change)
        out.append((sort_key(final, row.path, row.title, row.citation_id, row.chunk_id), i, change))
    out.sort(key=lambda entry: entry[:2])
    return out


class _PoolRows:
    """The chunk rows a ranking reads: whole rows (kept in ``cache``, a caller's rows cache when
    it has one), or light ones (path and chunk id of the keyword rows, kept in ``light_cache``
    likewise) for a pool whose re-rank reads paths only. A row the store cannot give fails the query (a damaged
    store never answers with silently fewer hits)."""

    def __init__(self, store: "Store", sha: str, cache: "dict[int, ChunkRow] | None",
                 light_cache: "dict[int, ChunkRow] | None" = None):
        self.store, self.sha = store, sha
        self.cache: "dict[int, ChunkRow]" = {} if cache is None else cache
        self.light_cache: "dict[int, ChunkRow]" = {} if light_cache is None else light_cache

    def full(self, ids: list[int]) -> "dict[int, ChunkRow]":
        """Whole rows (texts included) of ``ids``, among others."""
        cache = self.cache
        missing = [r for r in ids if r not in cache]
        if missing:
            cache.update(self.store.fetch_rows(self.sha, missing))
            self._check(missing, cache)
        return cache

    def light(self, ids: list[int]) -> "dict[int, ChunkRow]":
        """Rows of ``ids`` with their path and chunk id at least (whole rows where cached)."""
        from ..store.base import ChunkRow

        cache, light = self.cache, self.light_cache
        out = {r: cache[r] if r in cache else light[r] for r in ids if r in cache or r in light}
        missing = [r for r in ids if r not in out]
        if missing:
            keys = self.store.row_keys(missing)
            self._check(missing, keys)
            for r in missing:
                path, chunk_id = keys[r]
                out[r] = light[r] = ChunkRow(path, chunk_id, "", "", "", 0, 0, "", "")
        return out

    def _check(self, ids: list[int], found: dict) -> None:
        from .readiness import require_rows

        require_rows(self.sha, ids, found)


def _content_order(store: "Store", rowids: "np.ndarray", paths: "RowPaths | None" = None, sha: str = ""):
    """Order positions of the snapshot's rows by (path, chunk id): how the re-rank pool settles a
    tie it must cut, the same whichever row ids the store gave the rows (cli-contract §9). A warm
    process's ``paths`` (of these ``rowids``) keep the keys once read."""
    def order(positions: "np.ndarray") -> "np.ndarray":
        if paths is not None:
            found = paths.keys(positions, store, sha)
            return positions[sorted(range(len(found)), key=found.__getitem__)]
        ids = rowids[positions].tolist()
        keys = store.row_keys(ids)
        return positions[sorted(range(len(ids)), key=lambda j: keys[ids[j]])]

    return order


def _pool_order(fused: "np.ndarray", rows: "abc.Callable[[], list]") -> "np.ndarray":
    """Positions of the pool in descending fused score, ties by (path, title, citation, chunk id)
    of the pool's whole ``rows()``.

    Sorted by score in numpy; the exact tie-break runs in Python (and reads the rows) only when
    two scores are equal (rare), giving the same order as sorting every row by the full key.
    """
    import numpy as np

    order = np.argsort(-fused, kind="stable")
    ranked = fused[order]
    if len(ranked) < 2 or not np.any(ranked[1:] == ranked[:-1]):
        return order
    chunk = rows()
    negated = (-fused).tolist()
    return np.array(sorted(range(len(chunk)), key=lambda j: (negated[j], chunk[j].path, chunk[j].title,
                                                            chunk[j].citation_id, chunk[j].chunk_id)), dtype=np.intp)


def rank_hits(
    store: "Store | None",
    sha: str | None,
    snapshot: SnapshotScores | None,
    overlay: Sequence[tuple["OverlayCandidate", float | None, float]],
    params: RetrievalParams,
    top_k: int,
    question: str,
    rows_cache: "dict[int, ChunkRow] | None" = None,
    *,
    row_filter: RowFilter | None = None,
    cochange: "CoChange | None" = None,
    light_cache: "dict[int, ChunkRow] | None" = None,
) -> list[Hit]:
    """Fuse snapshot and overlay candidates with the seed formula, re-rank the snapshot's best
    candidates for code (ragit.retrieve.rerank, unless ``params.rerank`` is off), raise the
    co-change partners of the best files (``cochange``: the snapshot's statistics, None = no such
    stage) and take the top ``top_k``. ``question`` is the masked question (the re-rank reads the
    names it asks for).

    Keyword scores are normalised by the best raw BM25 over *all* candidates of the query
    (knowledge §11.4 step 4), so a snapshot chunk and an artifact compete on one scale; rows a
    ``row_filter`` rejects are no candidates. ``rows_cache`` lets a caller ranking the same
    scores several times (``eval run`` modes) fetch each chunk row once; ``light_cache`` keeps the
    light rows (path and chunk id) a re-rank pool reads, likewise.
    """
    import numpy as np

    alpha = params.alpha
    eligible = _eligible(store, snapshot, row_filter) if snapshot is not None and store is not None else None
    raw_keyword = None
    if snapshot is not None:
        raw_keyword = snapshot.raw_keyword
        if raw_keyword is None and snapshot.keyword is not None and params.keyword_enabled:
            # only the rows the answer reads are scored; the rest stay 0 (keyword_bound's proof)
            pool = params.rerank_weights.pool
            raw_keyword = pool_raw(snapshot.keyword, snapshot.vector, eligible, alpha, [r for _, _, r in overlay],
                                   keyword_k=pool if params.rerank else 1,
                                   fused_k=max(pool, 2 * top_k) if params.rerank else top_k,
                                   final_space=not params.rerank)
        elif raw_keyword is None:
            raw_keyword = snapshot.raw()
    best = 0.0
    if params.keyword_enabled:
        if snapshot is not None and len(raw_keyword):
            raw = raw_keyword if eligible is None else raw_keyword[eligible]
            best = float(raw.max()) if len(raw) else 0.0
        best = max([best] + [raw for _, _, raw in overlay])

    def norm(raw: float) -> float:
        return raw / best if best > 0 and raw > 0 else 0.0

    hits: list[Hit] = []
    if snapshot is not None and store is not None and sha is not None and len(snapshot.rowids):
        n = len(snapshot.rowids)
        keyword = np.zeros(n, dtype=np.float64)
        matched = None
        if best > 0:  # raw / best where raw > 0, else 0
            matched = np.flatnonzero(raw_keyword > 0)
            keyword[matched] = raw_keyword[matched] / best
        retrieval = alpha * snapshot.vector
        retrieval += (1.0 - alpha) * keyword  # alpha · vector + (1 − alpha) · keyword, in place
        if eligible is not None:
            retrieval = np.where(eligible, retrieval, -np.inf)
        if params.rerank:
            finite = eligible is None and bool(np.isfinite(retrieval).all())
            if finite:
                # every row a candidate, and every fused score finite (so every vector score too):
                # the keyword matches are the positive normalised scores, known already
                kw, vec = keyword, snapshot.vector
                matches = None if matched is None else matched[keyword[matched] > 0]
            else:
                candidate = retrieval > -np.inf
                whole = bool(candidate.all())  # (no filter: every row is a candidate)
                kw = keyword if whole else np.where(candidate, keyword, -np.inf)
                vec = snapshot.vector if whole else np.where(candidate, snapshot.vector, -np.inf)
                matches = None
            pool = pool_indices(retrieval, kw, vec, params.rerank_weights.pool, top_k,
                                _content_order(store, snapshot.rowids, snapshot.paths, sha),
                                finite=finite, matches=matches)
        else:
            final = RETRIEVAL_WEIGHT * retrieval + AUTHORITY_WEIGHT * 1.0 + RECENCY_WEIGHT * 1.0
            k = min(top_k, n)
            kth = np.partition(final, n - k)[n - k]
            pool = np.nonzero(final >= kth)[0]
        if eligible is not None:
            pool = pool[eligible[pool]]
        wanted = snapshot.rowids[pool].tolist()
        source = _PoolRows(store, sha, rows_cache, light_cache)
        # the re-rank reads titles and texts only for a question that names identifiers: else the
        # pool's paths and chunk ids are enough, and whole rows are read for its possible hits only
        light = params.rerank and len(pool) and not _names_in(question)
        paths_of = None
        if light and snapshot.paths is not None:  # a warm process: the paths by position
            rows = None

            def paths_of(positions: "np.ndarray", kept: "RowPaths | _SubsetPaths" = snapshot.paths) -> list[str]:
                return kept.of(positions, store, sha)
        else:
            rows = source.light(wanted) if light else source.full(wanted)
        if params.rerank and len(pool):
            ranked = _reranked(question, pool, rows, paths_of, source, wanted, snapshot, keyword, retrieval,
                               alpha, params, top_k, cochange)
        else:
            ranked = []
            for i in _contenders(pool, snapshot.vector, keyword, alpha, top_k):
                row = rows[int(snapshot.rowids[i])]
                final = final_score("hybrid", float(snapshot.vector[i]), float(keyword[i]), alpha, 1.0, 1.0)
                ranked.append((sort_key(final, row.path, row.title, row.citation_id, row.chunk_id), int(i), None))
            ranked.sort()
        # build hits (and breakdowns) for the best only
        rows = source.full([int(snapshot.rowids[i]) for _, i, _ in ranked[:top_k]])
        for _, i, change in ranked[:top_k]:
            row = rows[int(snapshot.rowids[i])]
            v, kw = float(snapshot.vector[i]), float(keyword[i])
            b = breakdown("hybrid", v, kw, alpha, 1.0, 1.0, rerank=change)
            hits.append(Hit(
                path=row.path, start_line=row.start_line, end_line=row.end_line, section_title=row.title,
                doc_type=row.doc_type, score_final=b["final"], score_vector=v, score_keyword=kw,
                citation={"id": row.citation_id, "sourceType": "document", "sourceId": row.chunk_id,
                          "sourceVersion": row.blob_id, "sourceSha": sha},
                scope="durable", origin_type="document", artifact_id=None, artifact_kind=None,
                authority="promoted_durable", confidence=None, trust="repository", text=row.text,
                chunk_id=row.chunk_id, breakdown=b, masked_with=masking_of(row.chunker_key),
            ))
    if overlay:
        from ..clock import now as clock_now

        moment = clock_now()
        for cand, cosine, raw in overlay:
            mode = "keyword" if cosine is None else "hybrid"
            v = 0.0 if cosine is None else cosine
            kw = norm(raw) if params.keyword_enabled else 0.0
            b = breakdown(mode, v, kw, alpha, cand.authority_score, cand.recency(moment))
            hits.append(Hit(
                path=cand.path, start_line=cand.start_line, end_line=cand.end_line,
                section_title=cand.section_title, doc_type=None, score_final=b["final"], score_vector=v,
                score_keyword=kw, citation=dict(cand.citation), scope=cand.scope, origin_type=cand.origin_type,
                artifact_id=cand.artifact_id, artifact_kind=cand.artifact_kind, authority=cand.authority,
                confidence=cand.confidence, trust=cand.trust, text=cand.text, chunk_id=cand.chunk_id,
                breakdown=b, flags=list(cand.flags), provenance=cand.provenance,
                stale_evidence=list(cand.stale_evidence),
            ))
    # memory §10: stale overlay items and items without repository evidence never outrank the rest
    hits.sort(key=lambda h: (h.demotion, *sort_key(h.score_final, h.path, h.section_title, h.citation_id,
                                                    h.chunk_id)))
    seen: set[tuple[str, str]] = set()
    out: list[Hit] = []
    for h in hits:
        ident = (h.path, h.chunk_id)
        if ident not in seen:
            seen.add(ident)
            out.append(h)
        if len(out) == top_k:
            break
    return out


def search_snapshot(
    store: "Store",
    sha: str,
    embedder: "Embedder",
    masked_question: str,
    params: RetrievalParams,
    top_k: int,
    *,
    cache: VectorCache | None = None,
) -> list[Hit]:
    """Top ``top_k`` durable hits of snapshot ``sha`` for the (already masked) question."""
    scores = score_snapshot(store, sha, embedder, masked_question, params, cache=cache, top_k=top_k)
    return rank_hits(store, sha, scores, (), params, top_k, masked_question)


def label_hits(hits: Sequence[Hit]) -> None:
    """Attach untrusted-content ``flags`` computed on each hit's complete masked text."""
    for h in hits:
        h.flags = list(_text_flags(h.text))


@functools.lru_cache(maxsize=4096)
def _text_flags(text: str) -> tuple[str, ...]:
    """``flags_for(text)``, remembered: a warm process returns the same chunks question after
    question, and labelling one (lower-casing and scanning its text) costs more than the
    look-up (the text is the snapshot row's own string, whose hash Python keeps)."""
    return tuple(flags_for(text))

