"""The Store protocol: everything retrieval and ingest ask of a storage backend.

Backends (SQLite now, PostgreSQL later) implement this protocol and nothing else; they never
import retrieval or ingest logic, and retrieval never sees SQL. Records here are plain data.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Iterable, Protocol, Sequence

if TYPE_CHECKING:  # pragma: no cover
    import numpy as np

    from .bm25 import PostingsReader

SCHEMA_VERSION = 5


@dataclass(frozen=True)
class StoredChunk:
    """A chunk as the store keeps it (text included only when asked for)."""

    chunk_id: str
    ordinal: int
    title: str
    start_line: int
    end_line: int
    token_count: int


@dataclass(frozen=True)
class BlobRecord:
    """What ingest learned from one blob under one chunking profile; lets ingest skip the blob."""

    blob_id: str
    profile: str  # "<kind>@<chunkerVersion>+<maskingKey>", known before the blob is read
    chunker: str  # "markdown", "code:python", "lines", ...
    chunker_key: str
    front_matter_type: str | None
    heading_type: str | None
    masked_count: int
    skip_reason: str | None  # "binary" | "not_utf8" | None
    chunks: tuple[StoredChunk, ...] = ()


@dataclass(frozen=True)
class NewChunk:
    chunk_id: str
    blob_id: str
    chunker_key: str
    ordinal: int
    title: str
    start_line: int
    end_line: int
    text: str
    token_count: int
    citation_id: str


@dataclass(frozen=True)
class SnapshotDoc:
    path: str
    doc_type: str
    blob_id: str
    chunker_key: str


@dataclass
class SnapshotWrite:
    """Everything one ingest publishes, written in a single transaction."""

    commit_sha: str
    manifest_sha256: str
    params: dict
    created_at: str
    docs: list[SnapshotDoc]
    new_blobs: list[BlobRecord] = field(default_factory=list)
    new_chunks: list[NewChunk] = field(default_factory=list)
    embedder_id: str = ""
    vector_ids: list[str] = field(default_factory=list)
    # the vectors of ``vector_ids`` in order: packed native float32 rows of ``dims`` values each
    vectors: bytes | None = None
    dims: int = 0
    # Paths whose (path, chunk) FTS rows may be new; None = check every document. Documents
    # carried over from the base snapshot already have their rows, so incremental ingests pass
    # only the re-evaluated paths and FTS work stays proportional to the change.
    fts_paths: list[str] | None = None
    # For an incremental ingest: the base snapshot and every path whose rows may differ from it
    # (changed, added, removed). ``docs`` then lists only the documents at those paths; the
    # base's other document rows and its packed rows are carried over by the store.
    base_sha: str | None = None
    replaced_paths: list[str] | None = None


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


@dataclass(frozen=True)
class StoreStats:
    documents: int
    chunks: int
    vectors: int
    snapshots: int

    @classmethod
    def counted(cls, conn) -> "StoreStats":
        """The totals of a store's tables, read on ``conn`` (SQL both backends accept)."""
        def count(sql: str) -> int:
            return conn.execute(sql).fetchone()[0]

        return cls(documents=count("SELECT COUNT(*) FROM (SELECT DISTINCT blob_id FROM chunks) b"),
                   chunks=count("SELECT COUNT(*) FROM chunks"), vectors=count("SELECT COUNT(*) FROM vectors"),
                   snapshots=count("SELECT COUNT(*) FROM snapshots"))


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

    def row_keys(self, rowids: Sequence[int]) -> dict[int, tuple[str, str]]: ...

    def chunks_by_citation(self, citation_id: str) -> list[tuple[str, str, int, int]]: ...

    def chunks_present(self, chunk_ids: Sequence[str], embedder_id: str) -> set[str]: ...

    def stats(self) -> StoreStats: ...

    def close(self) -> None: ...
