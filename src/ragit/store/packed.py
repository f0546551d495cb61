"""A snapshot's packed rows, edited without numpy: what an incremental write changes.

A snapshot keeps its FTS row ids (sorted), their heap slots, each row's file ordinal, each row's
length in keyword terms (the BM25 statistics of the snapshot, knowledge §11.4) and each file's
vector-sum norm as five packed arrays (int64, int64, int32, int32, float64; native byte order,
the layout numpy's ``frombuffer`` reads). A one-file commit removes a few rows and adds a few, so
the new arrays are slices of the base's joined around the change: memory copies plus a binary
search per changed row, with no numpy import for a process that otherwise needs none.
"""

from __future__ import annotations

from array import array
from bisect import bisect_left
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass

# array typecodes of the five packed columns (sizes checked once: 8, 8, 4, 4, 8 bytes)
ROWID, SLOT, FILE, LENGTH, NORM = "q", "q", "i", "i", "d"
_ROW_COLUMNS = (ROWID, SLOT, FILE, LENGTH)
# up to this many added rows, each is inserted in place (a memory move); more are merged by one sort
_INSERT_MAX = 64
assert [array(c).itemsize for c in (ROWID, SLOT, FILE, LENGTH, NORM)] == [8, 8, 4, 4, 8]


@dataclass
class PackedRows:
    rowids: array
    slots: array
    files: array
    lengths: array
    norms: array

    @classmethod
    def from_blobs(cls, rowids: bytes, slots: bytes, files: bytes, lengths: bytes, norms: bytes) -> "PackedRows":
        return cls(_unpack(ROWID, rowids), _unpack(SLOT, slots), _unpack(FILE, files), _unpack(LENGTH, lengths),
                   _unpack(NORM, norms))

    def blobs(self) -> tuple[bytes, bytes, bytes, bytes, bytes]:
        return (self.rowids.tobytes(), self.slots.tobytes(), self.files.tobytes(), self.lengths.tobytes(),
                self.norms.tobytes())

    def splice(self, dropped: Iterable[int], added: Iterable[tuple[int, int, int, int]],
               new_norms: Iterable[float]) -> "PackedRows":
        """These rows without the row ids ``dropped``, plus ``added`` (row id, slot, file
        ordinal, length) in row-id order, with ``new_norms`` appended for the added files' ordinals."""
        ids = self.rowids
        # positions of the dropped rows (row ids are unique and sorted)
        cuts = sorted(i for i, r in ((bisect_left(ids, r), r) for r in set(dropped)) if i < len(ids) and ids[i] == r)
        keep = _segments_between(cuts, len(ids))
        out = PackedRows(*(_take(column, keep) for column in (self.rowids, self.slots, self.files, self.lengths)),
                         array(NORM, self.norms))
        added = sorted(added)
        if len(added) <= _INSERT_MAX:
            for rowid, slot, file, length in added:
                at = bisect_left(out.rowids, rowid)
                out.rowids.insert(at, rowid)
                out.slots.insert(at, slot)
                out.files.insert(at, file)
                out.lengths.insert(at, length)
        elif added:
            merged = sorted([*zip(out.rowids, out.slots, out.files, out.lengths), *added])
            out.rowids, out.slots, out.files, out.lengths = (
                array(c, column) for c, column in zip(_ROW_COLUMNS, zip(*merged)))
        out.norms.extend(new_norms)
        return out


def _unpack(code: str, data: bytes) -> array:
    out = array(code)
    out.frombytes(data)
    return out


def _segments_between(cuts: list[int], n: int) -> list[tuple[int, int]]:
    """[start, end) ranges of 0..n that avoid the sorted positions ``cuts``."""
    ranges, start = [], 0
    for cut in cuts:
        if cut > start:
            ranges.append((start, cut))
        start = cut + 1
    if start < n:
        ranges.append((start, n))
    return ranges


def _take(column: array, ranges: list[tuple[int, int]]) -> array:
    out = array(column.typecode)
    for start, end in ranges:
        out.extend(column[start:end])
    return out


class RowTable(Sequence):
    """A snapshot's rows ``(row id, slot, path, blob, chunker key, stored norm or None, ordinal,
    keyword length)`` as both stores select them, held as integer columns plus one tuple per
    document (its path, blob, key and norm, which every row of the document shares) instead of
    a tuple and three strings per row: ~40 bytes a row rather than ~500, the difference between
    ~40 MB and ~500 MB while a 1M-chunk ingest packs its snapshot (issue 15). Iterating gives
    the same tuples a ``fetchall`` would, in the same order, so :func:`pack_rows` and
    :func:`file_norms` read it as they read a list. A row without a slot (its vector is missing)
    is held as slot −1 and counted in ``missing``, for the caller to refuse."""

    _BATCH = 65_536

    def __init__(self) -> None:
        self.rowids, self.slots, self.docs = array("q"), array("q"), array("q")
        self.ordinals, self.lengths = array("q"), array("q")
        self.doc_keys: list[tuple] = []  # (path, blob, chunker key, norm) of each document id
        self.missing = 0

    @classmethod
    def collect(cls, cursor) -> "Sequence[tuple]":
        """The rows of an executed query ``cursor``, fetched a batch at a time: the list itself
        when they fit in one batch (small snapshots keep the plain list, which packs faster: ~2 µs
        a row), else a table of them."""
        batch = cursor.fetchmany(cls._BATCH)
        if len(batch) < cls._BATCH:
            return batch
        table = cls()
        ids: dict[tuple, int] = {}
        while batch:
            rowids, slots, paths, blobs, keys, norms, ordinals, lengths = zip(*batch)
            batch = None
            table.missing += slots.count(None)
            table.rowids.extend(rowids)
            table.slots.extend(slots if None not in slots else (-1 if s is None else s for s in slots))
            table.docs.extend([ids.setdefault(k, len(ids)) for k in zip(paths, blobs, keys, norms)])
            table.ordinals.extend(ordinals)
            table.lengths.extend(lengths)
            batch = cursor.fetchmany(cls._BATCH)
        table.doc_keys = list(ids)
        return table

    def __len__(self) -> int:
        return len(self.rowids)

    def __getitem__(self, i):  # type: ignore[override]
        if isinstance(i, slice):
            return [self[j] for j in range(*i.indices(len(self)))]
        doc = self.doc_keys[self.docs[i]]
        slot = self.slots[i]
        return (self.rowids[i], None if slot < 0 else slot, *doc, self.ordinals[i], self.lengths[i])

    def __iter__(self):
        if self.missing:
            return (self[i] for i in range(len(self)))
        column = [map(k.__getitem__, self.docs) for k in
                  ([d[j] for d in self.doc_keys] for j in range(4))]
        return zip(self.rowids, self.slots, *column, self.ordinals, self.lengths)


def pack_rows(rows: Sequence[tuple], file_norms: Callable[[Sequence[tuple]], dict[str, float]]
              ) -> tuple[bytes, bytes, bytes, bytes, bytes]:
    """The five packed arrays of a snapshot built from scratch: ``rows`` are its keyword rows in
    row-id order as both stores select them (row id, slot, path, …, keyword length at index 7);
    files are numbered in path order and ``file_norms`` gives each path's vector-sum norm."""
    import numpy as np

    n = len(rows)
    rowids = np.fromiter((r[0] for r in rows), dtype=np.int64, count=n)
    slots = np.fromiter((r[1] for r in rows), dtype=np.int64, count=n)
    paths = sorted({r[2] for r in rows})
    ordinal = {path: i for i, path in enumerate(paths)}
    files = np.fromiter((ordinal[r[2]] for r in rows), dtype=np.int32, count=n)
    lengths = np.fromiter((r[7] for r in rows), dtype=np.int32, count=n)
    norm_of = file_norms(rows)
    norms = np.array([norm_of[p] for p in paths], dtype=np.float64)
    return rowids.tobytes(), slots.tobytes(), files.tobytes(), lengths.tobytes(), norms.tobytes()


def file_norms(rows: Sequence[tuple], segment_norms: Callable[[list[list[int]]], list[float]],
               remember: Callable[[list[tuple[str, str, float]]], None]) -> dict[str, float]:
    """Path -> vector-sum norm of its file, for snapshot rows ``(row id, slot, path, blob,
    chunker key, stored norm or None, ordinal, …)`` as both stores select them. Norms not stored
    yet are computed once per (blob, chunker key) by ``segment_norms`` from each blob's slots in
    chunk order (so a norm never depends on where vectors sit), and handed to ``remember`` as
    ``(blob, chunker key, norm)`` rows for the store to keep."""
    norm_of: dict[str, float] = {}
    todo: dict[tuple[str, str], dict[int, int]] = {}
    for r in rows:
        if r[5] is not None:
            norm_of[r[2]] = r[5]
        else:
            todo.setdefault((r[3], r[4]), {})[r[6]] = r[1]  # ordinal -> slot
    if todo:
        keys = list(todo)
        values = segment_norms([[todo[k][o] for o in sorted(todo[k])] for k in keys])
        by_blob = dict(zip(keys, values))
        remember([(blob, key, value) for (blob, key), value in by_blob.items()])
        for r in rows:
            if r[5] is None:
                norm_of[r[2]] = by_blob[(r[3], r[4])]
    return norm_of
