"""New rows of an ingest written in committed batches, so its memory does not grow with the chunks.

Ingest meets new blobs one by one (as git streams them). Each blob's record, chunk rows and the
vectors of its admitted chunks are held here only until a batch of them is embedded and
committed, then released; the snapshot that references them is still published in one
transaction at the end (``Store.write_snapshot``), so a crash before that leaves every published
snapshot as it was and only rows no snapshot references, which the next ingest reuses.

Order is that of the single write this replaces: chunk rows in the order chunks were made,
vectors in embedding order (new chunks first, then stored chunks lacking a vector) and in the
same batches of ``EMBED_BATCH`` texts, so row ids, heap slots and vector bits are identical. A
blob's rows are committed together with all its vectors (never part of them), so a re-run after
a crash continues exactly where the committed prefix ends.
"""

from __future__ import annotations

from collections import deque
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Callable

from .chunks import input_text

if TYPE_CHECKING:
    from ..embed.base import Embedder
    from ..store.base import BlobRecord, NewChunk

# New chunk rows held before a commit (their texts and vectors are the memory that is released).
COMMIT_CHUNKS = 4096


@dataclass
class _Group:
    """One new blob's rows; ``entries`` (chunk id, title, text) are what it needs embedded."""

    blob_id: str
    record: "BlobRecord | None"
    chunks: list["NewChunk"]
    entries: list[tuple[str, str, str]]
    settled: bool = False


@dataclass
class RowSink:
    """Collects an ingest's new rows and writes them through ``write`` in committed batches.

    ``write(blobs, chunks, vector_ids, vectors, dims)`` commits one batch; with ``write`` None
    (a store that cannot commit batches) everything is kept for the final snapshot write, as
    before. ``embedder`` is called the first time something needs embedding.
    """

    embedder: Callable[[], "Embedder"]
    write: Callable[[list, list, list[str], bytes, int], None] | None
    batch: int
    progress: Callable[[str, int, int], None] | None = None
    commit_chunks: int = 0  # 0: COMMIT_CHUNKS as it is when the sink is made
    embedded_count: int = 0
    dims: int = 0
    # kept only without ``write``: the rows for the single snapshot transaction
    blobs: list = field(default_factory=list)
    chunks: list = field(default_factory=list)
    vector_ids: list[str] = field(default_factory=list)
    vector_parts: list[bytes] = field(default_factory=list)
    _open: dict[str, list[_Group]] = field(default_factory=dict)  # blob id -> its unsettled groups
    _admitted: dict[str, set[str]] = field(default_factory=dict)  # blob id -> its admitted chunk ids
    _waiting: deque = field(default_factory=deque)  # groups in order, not yet all embedded
    _ready: list[tuple[str, str, str]] = field(default_factory=list)  # settled entries to embed, in order
    _ready_groups: int = 0  # groups at the head of _waiting whose entries are in _ready or embedded
    _vectors: list[tuple[str, bytes]] = field(default_factory=list)  # embedded, not committed
    _pending_chunks: int = 0
    _embedder: Any = None
    _known: dict[str, bytes] = field(default_factory=dict)  # chunk id -> vector made by a worker

    def __post_init__(self) -> None:
        self.commit_chunks = self.commit_chunks or COMMIT_CHUNKS

    def add(self, blob_id: str, record: "BlobRecord", chunks: list["NewChunk"],
            entries: list[tuple[str, str, str]]) -> None:
        """A newly chunked blob: its record, chunk rows and (chunk id, title, text) to embed if admitted."""
        group = _Group(blob_id, record, chunks, entries, settled=not entries)  # nothing to embed: final
        if entries:
            self._open.setdefault(blob_id, []).append(group)
        self._waiting.append(group)
        self._pending_chunks += len(chunks)
        if not entries:
            self._pump()

    def known(self, chunk_ids: list[str], vectors: bytes) -> None:
        """Vectors an ingest worker made (:mod:`ragit.ingest.workers`), packed in the order of
        ``chunk_ids``: taken instead of embedding those chunks here. A text's vector does not
        depend on its batch, so the bits are those this process would have made."""
        if chunk_ids:
            row = len(vectors) // len(chunk_ids)
            self._known.update((cid, vectors[i * row:(i + 1) * row]) for i, cid in enumerate(chunk_ids))

    def admit(self, blob_id: str, chunk_ids) -> None:
        """Chunks of ``blob_id`` that became part of a document (they need vectors). Once every
        chunk of its open groups is admitted, no later candidate can change them: they settle
        now, so a blob that recurs far down the tree does not hold back the rows after it."""
        admitted = self._admitted.setdefault(blob_id, set())
        admitted.update(chunk_ids)
        groups = self._open.get(blob_id)
        if groups and all(e[0] in admitted for g in groups for e in g.entries):
            self.settle(blob_id)

    def settle(self, blob_id: str) -> None:
        """No candidate of ``blob_id`` follows: its groups keep only admitted entries (the first
        of each chunk id) and may be embedded and written."""
        groups = self._open.pop(blob_id, None)
        admitted = self._admitted.pop(blob_id, set())
        if groups is None:
            return
        seen: set[str] = set()
        for g in groups:
            kept = []
            for e in g.entries:
                if e[0] in admitted and e[0] not in seen:
                    seen.add(e[0])
                    kept.append(e)
            g.entries = kept
            g.settled = True
        self._pump()

    def add_vectors_only(self, entries: list[tuple[str, str, str]]) -> None:
        """Stored chunks lacking a vector (after every new blob): embedded and written last."""
        if entries:
            self._waiting.append(_Group("", None, [], entries, settled=True))
            self._pump()

    def _pump(self) -> None:
        """Move settled groups to the embedding queue; embed full batches; commit when enough."""
        while self._ready_groups < len(self._waiting) and self._waiting[self._ready_groups].settled:
            self._ready.extend(self._waiting[self._ready_groups].entries)
            self._ready_groups += 1
        # strictly more than one batch: a total of at most one batch goes through embed_packed
        while len(self._ready) > self.batch or (self.embedded_count and len(self._ready) >= self.batch):
            self._embed(self._ready[: self.batch])
            del self._ready[: self.batch]
        if self._pending_chunks >= self.commit_chunks or len(self._vectors) >= self.commit_chunks:
            self._commit()

    def _embed(self, part: list[tuple[str, str, str]], *, packed: bool = False) -> None:
        embedder = self._load()
        known = self._known  # vectors a worker made, and (below) those made here, by chunk id
        todo = [e for e in part if e[0] not in known]
        if todo:
            texts = [input_text(title, text) for _, title, text in todo]
            if packed:
                data = bytes(embedder.embed_packed(texts))
            else:
                import numpy as np

                data = np.ascontiguousarray(embedder.embed(texts), dtype=np.float32).tobytes()
            row = len(data) // len(todo)
            known.update((e[0], data[i * row:(i + 1) * row]) for i, e in enumerate(todo))
        self._vectors.extend((e[0], known.pop(e[0])) for e in part)
        self.embedded_count += len(part)
        if self.progress:
            self.progress("embed", self.embedded_count, self.embedded_count + len(self._ready) - len(part))

    def _commit(self) -> None:
        """Write the groups at the head whose every entry is embedded, with their vectors."""
        blobs: list = []
        chunks: list = []
        take = 0
        available = len(self._vectors)
        while self._waiting and self._ready_groups and available - take >= len(self._waiting[0].entries):
            g = self._waiting.popleft()
            self._ready_groups -= 1
            take += len(g.entries)
            if g.record is not None:
                blobs.append(g.record)
            chunks.extend(g.chunks)
            self._pending_chunks -= len(g.chunks)
        if not blobs and not chunks and not take:
            return
        vectors = self._vectors[:take]
        del self._vectors[:take]
        ids = [v[0] for v in vectors]
        data = b"".join(v[1] for v in vectors)
        if self.write is not None:
            self.write(blobs, chunks, ids, data, self.dims)
        else:
            self.blobs += blobs
            self.chunks += chunks
            self.vector_ids += ids
            self.vector_parts.append(data)

    def settle_all(self) -> None:
        """Every candidate has been seen: settle the blobs still open."""
        for blob_id in list(self._open):
            self.settle(blob_id)
        self._pump()

    def finish(self) -> None:
        """Embed and write what is left."""
        self.settle_all()
        if self._ready:
            packed = not self.embedded_count and hasattr(self._load(), "embed_packed")
            self._embed(self._ready, packed=packed)
            self._ready = []
        self._commit()

    def _load(self) -> "Embedder":
        if self._embedder is None:
            self._embedder = self.embedder()
            self.dims = self._embedder.dimensions
        return self._embedder

    def vectors(self) -> bytes | None:
        """Without ``write``: the kept vectors, packed (None when nothing was embedded)."""
        return b"".join(self.vector_parts) if self.vector_ids else None
