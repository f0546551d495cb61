"""The Store protocol: everything retrieval and ingest ask of a storage backend.

Backends (SQLite now, PostgreSQL later) implement this protocol and nothing else; they never
import retrieval or ingest logic, and retrieval never sees SQL. Records here (and the write-side
ones of :mod:`ragit.store.records`) are plain data.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Iterable, Protocol, Sequence

if TYPE_CHECKING:  # pragma: no cover
    import numpy as np

    from .bm25 import PostingsReader
    from .records import BlobRecord, NewChunk, SnapshotDoc, SnapshotWrite, StoredChunk, StoreStats  # noqa: F401 - names __getattr__ re-exports, for type checkers

SCHEMA_VERSION = 5

# The write-side records live in ragit.store.records (a read does not need them); importing them
# from here still works.
_RECORDS = frozenset({"StoredChunk", "BlobRecord", "NewChunk", "SnapshotDoc", "SnapshotWrite", "StoreStats"})


def __getattr__(name: str) -> object:
    if name in _RECORDS:
        from . import records

        return getattr(records, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


@dataclass(frozen=True)
class ChunkRow:
    """One snapshot chunk as a hit needs it."""

    path: str
    chunk_id: str
    blob_id: str
    doc_type: str
    title: str
    start_line: int
    end_line: int
    text: str
    citation_id: str
    chunker_key: str = ""  # what shaped the stored text, masking version included (ingest.ids)


class Store(Protocol):
    """Storage backend contract (see module docstring)."""

    def schema_version(self) -> int | None: ...

    def get_blobs(self, keys: Iterable[tuple[str, str]]) -> dict[tuple[str, str], BlobRecord]: ...

    def missing_vectors(self, chunk_ids: Sequence[str], embedder_id: str) -> set[str]: ...

    def unservable_chunks(self, commit_sha: str, embedder_id: str) -> set[str]:
        """Chunk ids of a published snapshot whose vectors the store can no longer serve."""
        ...

    def chunk_texts(self, chunk_ids: Sequence[str]) -> dict[str, tuple[str, str]]: ...

    def write_snapshot(self, write: SnapshotWrite) -> None: ...

    def snapshot_hash(self, commit_sha: str) -> str | None: ...

    def snapshot_shas(self) -> list[str]: ...

    def delete_snapshots(self, commit_shas: Iterable[str]) -> None: ...

    def load_vectors(
        self, commit_sha: str, embedder_id: str
    ) -> tuple["np.ndarray", "np.ndarray", "np.ndarray", "np.ndarray", "np.ndarray"]:
        """(sorted row ids, float32 vectors, file ordinal per row, norm per file, keyword length per row)."""
        ...

    def postings(self) -> "PostingsReader":
        """term -> (row ids, weighted counts) of the keyword index (ragit.store.bm25)."""
        ...

    def warm_postings(self) -> "PostingsReader":
        """The same, caching, on a connection of its own: for a long-lived process."""
        ...

    def fetch_rows(self, commit_sha: str, rowids: Sequence[int], with_text: bool = True) -> dict[int, ChunkRow]: ...

    def row_paths(self, rowids: Sequence[int]) -> dict[int, str]: ...

    def rows_named(self, commit_sha: str, names: Sequence[str]) -> dict[int, str]:
        """Row id → path of the snapshot's keyword rows whose file name (the path's last part) is
        one of ``names`` (ragit.retrieve.docsite: a docs site's configuration files)."""
        ...

    def row_keys(self, rowids: Sequence[int]) -> dict[int, tuple[str, str]]: ...

    def chunks_by_citation(self, citation_id: str) -> list[tuple[str, str, int, int]]: ...

    def chunks_present(self, chunk_ids: Sequence[str], embedder_id: str) -> set[str]: ...

    def stats(self) -> StoreStats: ...

    def close(self) -> None: ...
