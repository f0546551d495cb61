"""The work one new blob costs an ingest: decode, mask, chunk and name its chunks.

Both ways of ingesting run it: the ingesting process itself, one blob after another, and the
forked workers of :mod:`ragit.ingest.workers`. One function for both is what keeps their rows
identical (chunk ids, row order, every stored byte).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

# (this module is imported only when an ingest has blobs to read, so its imports cost nothing earlier)
from ..security.masking import code_mode, mask_text
from ..store.base import BlobRecord, NewChunk, StoredChunk
from .doctypes import TypeHints, resolve_doc_type, type_hints
from .frontmatter import parse_front_matter
from .ids import chunk_id as make_chunk_id
from .ids import chunker_key as make_chunker_key
from .ids import citation_id as make_citation_id
from .markdown import chunk_markdown
from .markup import doc_chunker
from .skips import content_skip
from .text import decode_blob

if TYPE_CHECKING:  # pragma: no cover
    from collections.abc import Callable, Iterator

    from .discovery import Candidate
    from .manifest import ManifestParams


def doc_type(path: str, kind: str, record: BlobRecord, supported: set[str] | frozenset[str]) -> str | None:
    """The document type ``record`` gets at ``path``; None when it is not admitted (a skipped
    blob, or a type outside ``ingest.supported_types``)."""
    if record.skip_reason:
        return None
    found = resolve_doc_type(path, TypeHints(record.front_matter_type, record.heading_type), kind)
    return found if found in supported else None


class BlobChunker:
    """``chunker(candidate, profile, data, rows)``: the blob's record and, with ``rows``, its new
    chunk rows (texts included), in chunk order."""

    def __init__(self, params: "ManifestParams") -> None:
        self.params = params
        self._masking_on = params.masking_version is not None

    def __call__(self, c: "Candidate", profile: str, data: bytes, rows: bool) -> tuple[BlobRecord, list[NewChunk]]:
        params = self.params
        text, skip = decode_blob(data)
        if not skip:
            skip = content_skip(text)
        new_chunks: list[NewChunk] = []
        if skip:
            return BlobRecord(c.blob_id, profile, "none", "", None, None, 0, skip, ()), new_chunks
        masked = mask_text(text, code=code_mode(c.path, c.kind)) if self._masking_on else None
        masked_text = masked.text if masked else text
        if c.kind == "code":
            from .code import chunk_code  # its language table only when a code file comes

            chunker, chunks = chunk_code(c.path, text, masked_text, params.chunker_version)
            fm_type = heading_type = None
        else:
            front = parse_front_matter(masked_text)  # one parse for chunks and type hints
            chunker = doc_chunker(c.path)
            chunks = chunk_markdown(masked_text, front, chunker)
            hints = type_hints(masked_text, front)
            fm_type, heading_type = hints.front_matter_type, hints.heading_type
        ckey = make_chunker_key(chunker, params.chunker_version, params.masking_version)
        stored = []
        for ch in chunks:
            cid = make_chunk_id(c.blob_id, ckey, ch.ordinal)
            units = ch.token_count  # a property that splits the text: once per chunk
            stored.append(StoredChunk(cid, ch.ordinal, ch.title, ch.start_line, ch.end_line, units))
            if rows:
                new_chunks.append(NewChunk(
                    cid, c.blob_id, ckey, ch.ordinal, ch.title, ch.start_line, ch.end_line, ch.text,
                    units, make_citation_id("document", cid, c.blob_id),
                ))
        record = BlobRecord(c.blob_id, profile, chunker, ckey, fm_type, heading_type,
                              masked.count if masked else 0, None, tuple(stored))
        return record, new_chunks


def stream_present(reader, ids: list[str],
                   progress: "Callable[[str, int, int], None] | None") -> "Iterator[tuple[str, bytes | None]]":
    """``(oid, content)`` of every blob of ``ids``, in order, as ``git cat-file --batch`` streams
    them; content None for an object missing from a partial or shallow clone (its file is
    skipped, never a crash)."""
    from ..gitsnap.blobs import MissingObject

    todo = ids
    done = 0
    while todo:
        at = 0
        try:
            for oid, data in reader.read_many(todo):
                at += 1
                done += 1
                if progress:
                    progress("read", done, len(ids))
                yield oid, data
            return
        except MissingObject as exc:
            yield exc.oid, None
            rest = todo[at:]
            # the next id (the usual case), or else wherever it stands
            todo = rest[1:] if rest and rest[0] == exc.oid else [oid for oid in rest if oid != exc.oid]
