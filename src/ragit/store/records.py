"""Records of the write side of a store: what ingest hands over and reads back about blobs,
chunks and snapshots, and a store's totals (``status``).

Kept apart from :mod:`ragit.store.base` so that a read (``query``, ``context pack``) does not
build their dataclasses (~0.5 ms of CPU each); ``base`` still exports them under their old names.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import NamedTuple


class StoredChunk(NamedTuple):
    """A chunk as the store keeps it (text included only when asked for). Ingest makes one per
    chunk, so it is a named tuple: a quarter of a frozen dataclass's construction cost."""

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


class NewChunk(NamedTuple):
    """A new chunk row, its fields in the order of the store's ``chunks`` columns (a writer
    may insert it as it is)."""

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
    # (path, chunk id) -> :func:`ragit.store.bm25.index_fields` of that row, made ahead by ingest
    # workers; a store that takes them (``takes_keyword_fields``) analyses only the other rows
    keyword_fields: dict[tuple[str, str], tuple[str, str, str, int]] | None = None


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
