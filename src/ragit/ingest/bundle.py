"""Snapshot bundles (knowledge §22.1): one file holding a commit's exact indexed snapshot.

CI builds an index once, exports it, and every clone imports it instead of ingesting: the
bundle carries the published manifest byte for byte, the masked chunks and blob records a
later ingest needs to reuse those blobs, and the vectors of the manifest's embedder. An import
checks everything it can against the local repository before writing anything, then publishes
exactly as ingest does (:mod:`ragit.ingest.publish`), so the snapshot answers like a local one.

Format, version 1 (one file, written in one pass, checked before it is parsed)::

    ragit-snapshot-bundle\\n
    version 1\\n
    sha256 <64 hex>\\n     checksum of every byte after this line
    <header JSON>\\n       commitSha, embedderId, dims, counts and the byte size of each section
    <manifest>             the published manifest file, byte for byte
    <records>              JSON Lines: one blob record per line with its chunks and their masked text
    <vectors>              float32 little-endian, ``dims`` values per chunk, chunks in record order

Only the Store protocol is used (``get_blobs``, ``chunk_texts``, ``load_vectors``,
``fetch_rows``, ``chunks_present``, ``snapshot_hash``, ``write_snapshot``), so bundles move
between backends.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import sys
import uuid
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..errors import RagitError
from .ids import chunk_id as make_chunk_id
from .ids import citation_id as make_citation_id
from .manifest import (
    Manifest,
    ManifestDoc,
    load_manifest,
    manifest_relpath,
    parse_manifest,
    same_except_created,
)
from .markup import DOC_CHUNKER_NAMES

if TYPE_CHECKING:  # pragma: no cover
    from ..gitsnap.git import Git
    from ..store.base import Store
    from ..store.records import BlobRecord

MAGIC = b"ragit-snapshot-bundle\n"
FORMAT_VERSION = 1
SUPPORTED_FORMATS = [FORMAT_VERSION]
_VERSION_LINE = re.compile(rb"version (\d{1,9})\n")
_SHA_LINE = re.compile(rb"sha256 ([0-9a-f]{64})\n")
_SHA1 = re.compile(r"^[0-9a-f]{40}$")
# the manifest parameters a bundle must share with this installation (what shapes chunks,
# their text and their vectors; configHash covers the ingest settings and the masking switch)
_PARAMS = (("chunkerVersion", "chunker_version"), ("maskingVersion", "masking_version"),
           ("embedderId", "embedder_id"), ("configHash", "config_hash"))


@dataclass(frozen=True)
class BundleChunk:
    ordinal: int
    title: str
    start_line: int
    end_line: int
    token_count: int
    text: str


@dataclass(frozen=True)
class BundleRecord:
    """What ingest learned from one blob under one chunker key (a store ``BlobRecord``)."""

    blob_id: str
    chunker: str
    chunker_key: str
    front_matter_type: str | None
    heading_type: str | None
    masked_count: int
    chunks: tuple[BundleChunk, ...]

    def to_json(self) -> dict[str, Any]:
        return {
            "blobId": self.blob_id, "chunker": self.chunker, "chunkerKey": self.chunker_key,
            "frontMatterType": self.front_matter_type, "headingType": self.heading_type,
            "maskedCount": self.masked_count,
            "chunks": [{"ordinal": c.ordinal, "title": c.title, "startLine": c.start_line, "endLine": c.end_line,
                        "tokenCount": c.token_count, "text": c.text} for c in self.chunks],
        }


@dataclass
class Bundle:
    """A bundle as read from disk: checksum verified, sections parsed."""

    commit_sha: str
    embedder_id: str
    dims: int
    manifest_bytes: bytes
    manifest: Manifest
    records: list[BundleRecord]
    vectors: bytes | memoryview  # little-endian float32 rows, one per chunk in record order

    def chunk_count(self) -> int:
        return sum(len(r.chunks) for r in self.records)


def kind_of(chunker: str) -> str:
    """The chunking profile's kind of a document's chunker: a doc's chunker itself (``markdown``,
    ``rst``, ``asciidoc``: :func:`ragit.ingest.pipeline.profile_kind`), ``code`` for every other."""
    return chunker if chunker in DOC_CHUNKER_NAMES else "code"


# ------------------------------------------------------------------ errors

def bundle_invalid(path: Path | str, reason: str, message: str, *, recovery: str | None = None,
                   **extra: Any) -> RagitError:
    """SNAPSHOT_BUNDLE_INVALID (exit 4): the bundle cannot be imported here; nothing was written.
    The default recovery is to export the bundle again at its source."""
    details = {"path": str(path), "reason": reason, **extra}
    return RagitError("SNAPSHOT_BUNDLE_INVALID", message, details, recovery or "ragit snapshot export <rev> -o <file>")


def _store_unavailable(sha: str, reason: str, message: str) -> RagitError:
    recovery = f"ragit migrate rebuild --at {sha}" if reason == "snapshot_not_in_store" else "ragit ingest --all"
    return RagitError("SNAPSHOT_STORE_UNAVAILABLE", message, {"resolvedSha": sha, "reason": reason}, recovery)


# ------------------------------------------------------------------ export

def export_snapshot(root: Path, git: "Git", config, rev: str, out: Path) -> dict[str, Any]:
    """Write the bundle of ``rev``'s exact indexed snapshot to ``out`` (and nothing else).

    ``rev`` is any revision, resolved once (knowledge §7.1). No manifest for that commit →
    SNAPSHOT_NOT_INDEXED; a store that does not hold it → SNAPSHOT_STORE_UNAVAILABLE.
    """
    from ..gitsnap.refs import resolve_revision

    sha = resolve_revision(git, rev)
    relpath = manifest_relpath(config, sha)
    try:
        raw = (Path(root) / relpath).read_bytes()
    except OSError:
        raw = None
    if raw is None:
        load_manifest(root, config, sha)  # raises its typed error (not indexed, not a file)
        raw = (Path(root) / relpath).read_bytes()
    loaded = parse_manifest(raw, sha, relpath)
    manifest = loaded.manifest
    store = _open_read(root, config, sha)
    try:
        from ..store import holds_manifest

        if not holds_manifest(store, sha, loaded.sha256):
            raise _store_unavailable(sha, "snapshot_not_in_store", f"the store does not hold the manifest of {sha}")
        records, vectors, dims = _collect(store, manifest)
    finally:
        store.close()
    parts = bundle_parts(manifest, raw, records, vectors, dims)
    size, digest = write_bundle(Path(out), parts)
    return {
        "commitSha": sha,
        "path": str(out),
        "formatVersion": FORMAT_VERSION,
        "bytes": size,
        "sha256": digest,
        "manifestSha256": loaded.sha256,
        "embedderId": manifest.params.embedder_id,
        "dims": dims,
        "documents": len(manifest.docs),
        "chunks": sum(len(r.chunks) for r in records),
        "warnings": [],
    }


def bundle_parts(manifest: Manifest, raw: bytes, records: list[BundleRecord], vectors: bytes,
                 dims: int) -> list[bytes]:
    """The sections after the checksum line: header line, manifest file, records, vectors."""
    records_bytes = b"".join(
        json.dumps(r.to_json(), ensure_ascii=False, separators=(",", ":"), sort_keys=True).encode("utf-8") + b"\n"
        for r in records)
    header = {
        "format": "ragit-snapshot-bundle",
        "commitSha": manifest.commit_sha,
        "embedderId": manifest.params.embedder_id,
        "dims": dims,
        "dtype": "float32",
        "byteOrder": "little",
        "documents": len(manifest.docs),
        "records": len(records),
        "chunks": sum(len(r.chunks) for r in records),
        "sections": {"manifest": len(raw), "records": len(records_bytes), "vectors": len(vectors)},
    }
    head = json.dumps(header, sort_keys=True, separators=(",", ":")).encode("utf-8") + b"\n"
    return [head, raw, records_bytes, vectors]


def _open_read(root: Path, config, sha: str) -> "Store":
    from ..store import SCHEMA_VERSION, open_store_read
    from ..store.sqlite import StoreMissing

    try:
        store = open_store_read(root, config)
    except StoreMissing:
        raise _store_unavailable(sha, "store_missing", "the store does not exist") from None
    except RagitError:  # STORE_UNAVAILABLE: a database that cannot be reached says so itself
        raise
    except Exception as exc:  # noqa: BLE001 - any backend's failure to open is "unreadable"
        raise _store_unavailable(sha, "store_unreadable", f"the store cannot be read: {exc}") from None
    try:
        version = store.schema_version()
    except Exception as exc:  # noqa: BLE001
        store.close()
        raise _store_unavailable(sha, "store_unreadable", f"the store cannot be read: {exc}") from None
    if version != SCHEMA_VERSION:
        store.close()
        raise _store_unavailable(sha, "store_schema_mismatch", f"store schema {version} is not {SCHEMA_VERSION}")
    return store


def _collect(store: "Store", manifest: Manifest) -> tuple[list[BundleRecord], bytes, int]:
    """The snapshot's blob records (path order, each once), and its chunks' vectors in that order."""
    from .pipeline import profile_for, superseded

    sha, params = manifest.commit_sha, manifest.params
    wanted: dict[tuple[str, str], ManifestDoc] = {}
    for doc in manifest.docs:
        wanted.setdefault((doc.blob_id, profile_for(kind_of(doc.chunker), params)), doc)
    found = store.get_blobs(list(wanted))
    stored = []
    for key, doc in wanted.items():
        record = found.get(key)
        if record is not None and record.chunker != doc.chunker and superseded(doc.chunker):
            record = _earlier_cut(store, record, doc, manifest)
        if (record is None or record.chunker != doc.chunker or record.chunker_key != manifest.chunker_key(doc)
                or tuple((c.start_line, c.end_line) for c in record.chunks) != doc.chunks
                or [c.chunk_id for c in record.chunks] != manifest.chunk_ids(doc)):
            raise _store_unavailable(sha, "snapshot_incomplete",
                                     f"the store lacks the chunks of {doc.path} in the snapshot of {sha}")
        stored.append(record)
    chunk_ids = [c.chunk_id for r in stored for c in r.chunks]
    texts = store.chunk_texts(chunk_ids)
    if len(texts) != len(set(chunk_ids)):
        raise _store_unavailable(sha, "snapshot_incomplete", f"the store lacks chunk texts of {sha}")
    records = [BundleRecord(r.blob_id, r.chunker, r.chunker_key, r.front_matter_type, r.heading_type, r.masked_count,
                            tuple(BundleChunk(c.ordinal, texts[c.chunk_id][0], c.start_line, c.end_line,
                                              c.token_count, texts[c.chunk_id][1]) for c in r.chunks))
               for r in stored]
    if not chunk_ids:
        return records, b"", 0
    import numpy as np

    rowids, matrix, *_ = store.load_vectors(sha, params.embedder_id)
    rows = store.fetch_rows(sha, [int(r) for r in rowids], with_text=False)
    position: dict[str, int] = {}
    for i, rowid in enumerate(rowids.tolist()):
        row = rows.get(rowid)
        if row is not None:
            position.setdefault(row.chunk_id, i)
    missing = [c for c in chunk_ids if c not in position]
    if missing:
        raise _store_unavailable(sha, "vectors_missing",
                                 f"the store lacks {len(missing)} vector(s) of the snapshot of {sha}")
    picked = np.asarray(matrix)[np.array([position[c] for c in chunk_ids], dtype=np.int64)]
    return records, np.ascontiguousarray(picked, dtype="<f4").tobytes(), int(picked.shape[1])


def _earlier_cut(store: "Store", record: "BlobRecord", doc: ManifestDoc, manifest: Manifest) -> "BlobRecord | None":
    """The record of a snapshot made before its language's chunker revision, whose blob a later
    ingest chunked again (``pipeline.superseded``): the store keeps the snapshot's chunks (by id)
    and the blob's current record its text's masking count and type hints; None if a chunk is gone."""
    from ..store.records import BlobRecord, StoredChunk
    from .chunks import Chunk

    ids = manifest.chunk_ids(doc)
    texts = store.chunk_texts(ids)
    if len(texts) != len(set(ids)) or len(ids) != len(doc.chunks):
        return None
    chunks = tuple(StoredChunk(cid, ordinal, texts[cid][0], start, end,
                               Chunk(ordinal, texts[cid][0], start, end, texts[cid][1]).token_count)
                   for ordinal, (cid, (start, end)) in enumerate(zip(ids, doc.chunks)))
    return BlobRecord(record.blob_id, record.profile, doc.chunker, manifest.chunker_key(doc), record.front_matter_type,
                      record.heading_type, record.masked_count, None, chunks)


def write_bundle(target: Path, parts: list[bytes]) -> tuple[int, str]:
    """Write the bundle of :func:`bundle_parts` atomically (temp file in the target's directory, fsync, rename); returns
    (size in bytes, sha256 of the whole file). A storage refusal is STORE_WRITE_FAILED."""
    from ..fsutil import fsync_dir, writing

    digest = hashlib.sha256()
    for part in parts:
        digest.update(part)
    prefix = MAGIC + f"version {FORMAT_VERSION}\n".encode() + f"sha256 {digest.hexdigest()}\n".encode()
    whole = hashlib.sha256(prefix)
    for part in parts:
        whole.update(part)
    tmp = target.parent / f".{target.name}.{os.getpid()}.{uuid.uuid4().hex}.tmp"
    with writing(target):
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o644)
        try:
            try:
                for chunk in (prefix, *parts):
                    view = memoryview(chunk)
                    while view:
                        view = view[os.write(fd, view):]
                os.fsync(fd)
            finally:
                os.close(fd)
            os.replace(tmp, target)
        finally:
            if tmp.exists():
                tmp.unlink()
    fsync_dir(target.parent)
    return len(prefix) + sum(len(p) for p in parts), whole.hexdigest()


# ------------------------------------------------------------------ reading

def read_bundle(path: Path) -> Bundle:
    """Read and check a bundle: magic, format version, checksum, then every section's shape.

    Any failure is SNAPSHOT_BUNDLE_INVALID with ``reason`` ``malformed``, ``unsupported_version``
    or ``checksum_mismatch``.
    """
    data = Path(path).read_bytes()
    if not data.startswith(MAGIC):
        raise bundle_invalid(path, "malformed", f"{path} is not a ragit snapshot bundle")
    pos = len(MAGIC)
    m = _VERSION_LINE.match(data, pos)
    if m is None:
        raise bundle_invalid(path, "malformed", f"{path} has no format version line")
    version = int(m.group(1))
    if version not in SUPPORTED_FORMATS:
        raise bundle_invalid(path, "unsupported_version",
                             f"bundle format version {version} is not supported (supported: {SUPPORTED_FORMATS})",
                             version=version, supported=SUPPORTED_FORMATS)
    pos = m.end()
    m = _SHA_LINE.match(data, pos)
    if m is None:
        raise bundle_invalid(path, "malformed", f"{path} has no checksum line")
    body = memoryview(data)[m.end():]
    if hashlib.sha256(body).hexdigest() != m.group(1).decode():
        raise bundle_invalid(path, "checksum_mismatch", f"{path} does not match its sha256 checksum (damaged or altered)")
    return _parse_body(path, body)


def _parse_body(path: Path, body: memoryview) -> Bundle:
    """Parse the sections; the vectors stay a view into the file's bytes (no second copy)."""
    def bad(why: str) -> RagitError:
        return bundle_invalid(path, "malformed", f"{path} is malformed: {why}")

    end = bytes(body[:1 << 20]).find(b"\n")  # the header line is small
    try:
        header = json.loads(bytes(body[:end])) if end >= 0 else None
        sections = header["sections"]
        sizes = [sections[k] for k in ("manifest", "records", "vectors")]
        sha, embedder_id, dims = header["commitSha"], header["embedderId"], header["dims"]
    except (ValueError, KeyError, TypeError):
        raise bad("header") from None
    if (not all(isinstance(s, int) and not isinstance(s, bool) and s >= 0 for s in sizes)
            or not isinstance(sha, str) or not _SHA1.match(sha) or not isinstance(embedder_id, str)
            or not isinstance(dims, int) or isinstance(dims, bool) or dims < 0
            or header.get("dtype") != "float32" or header.get("byteOrder") != "little"):
        raise bad("header fields")
    pos = end + 1
    if pos + sum(sizes) != len(body):
        raise bad("section sizes")
    manifest_bytes = bytes(body[pos:pos + sizes[0]])
    records_bytes = bytes(body[pos + sizes[0]:pos + sizes[0] + sizes[1]])
    vectors = body[pos + sizes[0] + sizes[1]:]
    try:
        manifest = parse_manifest(manifest_bytes, sha, f"{path}#manifest").manifest
    except RagitError as exc:
        raise bad(f"manifest ({exc.details.get('reason', exc.code)})") from None
    if manifest.params.embedder_id != embedder_id:
        raise bad("header embedderId differs from the manifest's")
    records = []
    for number, line in enumerate(records_bytes.split(b"\n")[:-1] if records_bytes else []):
        record = _parse_record(line)
        if record is None:
            raise bad(f"record {number}")
        records.append(record)
    if records_bytes and not records_bytes.endswith(b"\n"):
        raise bad("records section")
    chunks = sum(len(r.chunks) for r in records)
    if len(vectors) != chunks * dims * 4 or (chunks and not dims):
        raise bad("vector section size")
    return Bundle(sha, embedder_id, dims, manifest_bytes, manifest, records, vectors)


def _is_int(v: Any) -> bool:
    return isinstance(v, int) and not isinstance(v, bool)


def _parse_record(line: bytes) -> BundleRecord | None:
    try:
        obj = json.loads(line)
        blob, chunker, key = obj["blobId"], obj["chunker"], obj["chunkerKey"]
        fm, heading, masked, raw_chunks = obj["frontMatterType"], obj["headingType"], obj["maskedCount"], obj["chunks"]
    except (ValueError, KeyError, TypeError):
        return None
    if not (isinstance(blob, str) and _SHA1.match(blob) and isinstance(chunker, str) and isinstance(key, str)
            and (fm is None or isinstance(fm, str)) and (heading is None or isinstance(heading, str))
            and _is_int(masked) and isinstance(raw_chunks, list)):
        return None
    chunks = []
    for c in raw_chunks:
        try:
            chunk = BundleChunk(c["ordinal"], c["title"], c["startLine"], c["endLine"], c["tokenCount"], c["text"])
        except (KeyError, TypeError):
            return None
        if not (all(_is_int(v) for v in (chunk.ordinal, chunk.start_line, chunk.end_line, chunk.token_count))
                and isinstance(chunk.title, str) and isinstance(chunk.text, str)):
            return None
        chunks.append(chunk)
    return BundleRecord(blob, chunker, key, fm, heading, masked, tuple(chunks))


# ------------------------------------------------------------------ import

def import_snapshot(root: Path, git: "Git", config, path: Path) -> dict[str, Any]:
    """Verify ``path`` against this installation and repository, then publish its snapshot.

    Every check runs before anything is written: checksum and format (:func:`read_bundle`),
    parameters equal to this installation's, the commit present in this clone, every document's
    blob id equal to the blob git holds at that path and commit, and records that reproduce the
    manifest's chunks. A snapshot already published here is left as it is (``imported: false``).
    """
    from ..embed import embedder_id_for
    from .pipeline import current_params

    bundle = read_bundle(path)
    manifest, sha = bundle.manifest, bundle.commit_sha
    local = current_params(config, embedder_id_for(config))
    for name, attr in _PARAMS:
        theirs, ours = getattr(manifest.params, attr), getattr(local, attr)
        if theirs != ours:
            raise bundle_invalid(path, "params_incompatible",
                                 f"the bundle's {name} {theirs!r} differs from this installation's {ours!r}",
                                 recovery=f"ragit ingest --all --at {sha}", param=name, bundleValue=theirs,
                                 localValue=ours)
    _check_git(path, git, manifest)
    plan = _plan(path, bundle)
    relpath = manifest_relpath(config, sha)
    target = Path(root) / relpath
    data = bundle.manifest_bytes
    created_at = manifest.created_at
    existing = target.read_bytes() if target.is_file() else None
    if existing is not None and same_except_created(existing, data):
        data = existing  # ingest keeps a file that differs only in createdAt (knowledge §4.1)
        created_at = parse_manifest(existing, sha, relpath).manifest.created_at
    digest = hashlib.sha256(data).hexdigest()
    summary = {"commitSha": sha, "path": str(path), "formatVersion": FORMAT_VERSION, "manifestPath": relpath,
               "embedderId": bundle.embedder_id, "documents": len(manifest.docs), "chunks": bundle.chunk_count()}
    if existing is not None and data is existing and _published(root, config, sha, digest):
        return {**summary, "imported": False, "newChunks": 0, "newVectors": 0, "warnings": []}
    from ..store import open_store_write, store_dir
    from ..store.lock import write_lock
    from .publish import publish_snapshot

    with write_lock(store_dir(root, config), target=sha):
        store = open_store_write(root, config)
        try:
            write = _snapshot_write(store, bundle, plan, digest, created_at, local)
            publish_snapshot(root, config, store, write, manifest, data)
        finally:
            store.close()
    return {**summary, "imported": True, "newChunks": len(write.new_chunks), "newVectors": len(write.vector_ids),
            "warnings": []}


def _published(root: Path, config, sha: str, digest: str) -> bool:
    from ..store import store_holds_manifest

    return store_holds_manifest(root, config, sha, digest)


def _check_git(path: Path, git: "Git", manifest: Manifest) -> None:
    """The commit is in this clone and every document's blob is the one git holds there."""
    from ..gitsnap.tree import list_tree

    sha = manifest.commit_sha
    found = git.call("cat-file", "-t", sha)
    if found.returncode != 0 or found.stdout.strip() != b"commit":
        raise bundle_invalid(path, "commit_not_found", f"commit {sha} is not in this repository",
                             recovery=f"git fetch origin {sha}", commitSha=sha)
    tree = {e.path: e.oid for e in list_tree(git, sha) if e.kind == "blob"}
    for doc in manifest.docs:
        local = tree.get(doc.path)
        if local != doc.blob_id:
            raise bundle_invalid(path, "blob_mismatch",
                                 f"{doc.path} is blob {local} at {sha} here, the bundle has {doc.blob_id}",
                                 recovery=f"ragit ingest --all --at {sha}", blobPath=doc.path,
                                 bundleBlobId=doc.blob_id, localBlobId=local)


@dataclass
class _Plan:
    """The bundle's records in manifest order with their store profiles, and each chunk's vector row."""

    records: list[tuple[BundleRecord, str]]  # (record, profile)
    rows: dict[str, int]  # chunk id -> vector row in the bundle


def _plan(path: Path, bundle: Bundle) -> _Plan:
    """Check that the records reproduce the manifest exactly (chunk ids, line ranges, chunker
    keys; every record used) and map each chunk to its vector row."""
    from .pipeline import profile_for

    manifest = bundle.manifest
    by_key: dict[tuple[str, str], tuple[BundleRecord, int]] = {}
    row = 0
    for record in bundle.records:
        if (record.blob_id, record.chunker_key) in by_key:
            raise bundle_invalid(path, "malformed", f"{path} is malformed: record {record.blob_id} appears twice")
        by_key[(record.blob_id, record.chunker_key)] = (record, row)
        row += len(record.chunks)
    used: dict[tuple[str, str], str] = {}
    rows: dict[str, int] = {}
    for doc in manifest.docs:
        key = (doc.blob_id, manifest.chunker_key(doc))
        entry = by_key.get(key)
        ids = manifest.chunk_ids(doc)
        if (entry is None or entry[0].chunker != doc.chunker
                or tuple((c.start_line, c.end_line) for c in entry[0].chunks) != doc.chunks
                or [c.ordinal for c in entry[0].chunks] != list(range(len(ids)))):
            raise bundle_invalid(path, "malformed", f"{path} is malformed: no record reproduces {doc.path}",
                                 blobPath=doc.path)
        if key not in used:
            used[key] = profile_for(kind_of(doc.chunker), manifest.params)
            for i, cid in enumerate(ids):
                rows[cid] = entry[1] + i
    if len(used) != len(by_key):
        raise bundle_invalid(path, "malformed", f"{path} is malformed: records no document uses")
    return _Plan([(by_key[k][0], profile) for k, profile in used.items()], rows)


def _snapshot_write(store: "Store", bundle: Bundle, plan: _Plan, digest: str, created_at: str, params):
    """The store write of the bundle's snapshot: only the blobs, chunks and vectors the store lacks."""
    from ..store.base import BlobRecord, NewChunk, SnapshotDoc, SnapshotWrite, StoredChunk
    from .pipeline import superseded

    manifest = bundle.manifest
    embedder_id = params.embedder_id
    known = store.get_blobs([(r.blob_id, profile) for r, profile in plan.records])
    new_blobs: list[BlobRecord] = []
    new_chunks: list[NewChunk] = []
    chunk_ids: list[str] = []
    for record, profile in plan.records:
        ids = [make_chunk_id(record.blob_id, record.chunker_key, c.ordinal) for c in record.chunks]
        chunk_ids += ids
        held = known.get((record.blob_id, profile))
        if held is not None and held.chunker_key == record.chunker_key:
            continue
        if held is None or superseded(held.chunker):  # else the store's own, current cut stays its record
            new_blobs.append(BlobRecord(
                record.blob_id, profile, record.chunker, record.chunker_key, record.front_matter_type,
                record.heading_type, record.masked_count, None,
                tuple(StoredChunk(cid, c.ordinal, c.title, c.start_line, c.end_line, c.token_count)
                      for cid, c in zip(ids, record.chunks))))
        new_chunks += [NewChunk(cid, record.blob_id, record.chunker_key, c.ordinal, c.title, c.start_line, c.end_line,
                                c.text, c.token_count, make_citation_id("document", cid, record.blob_id))
                       for cid, c in zip(ids, record.chunks)]
    present = store.chunks_present(chunk_ids, embedder_id)
    vector_ids = [cid for cid in dict.fromkeys(chunk_ids) if cid not in present]
    vectors = _native_rows(bundle, [plan.rows[cid] for cid in vector_ids]) if vector_ids else None
    return SnapshotWrite(
        commit_sha=bundle.commit_sha,
        manifest_sha256=digest,
        params=manifest.params.to_dict(),
        created_at=created_at,
        docs=[SnapshotDoc(d.path, d.doc_type, d.blob_id, manifest.chunker_key(d)) for d in manifest.docs],
        new_blobs=new_blobs,
        new_chunks=new_chunks,
        embedder_id=embedder_id,
        vector_ids=vector_ids,
        vectors=vectors,
        dims=bundle.dims,
    )


def _native_rows(bundle: Bundle, rows: list[int]) -> bytes:
    """The bundle's vector rows ``rows``, as packed native float32 (the bits unchanged)."""
    width = bundle.dims * 4
    data = b"".join(bundle.vectors[r * width:(r + 1) * width] for r in rows)
    if sys.byteorder == "little":
        return data
    from array import array

    values = array("f", data)
    values.byteswap()
    return values.tobytes()
