"""Snapshot manifests: the published, human-readable record of what one commit's index holds.

Compact by design (issue 2's target: ≤ 0.3 MB per 1,000 documents): a document lists its blob
id, type, chunker and the line range of each chunk. Chunk ids are not stored: they are derived
from (blob id, chunker key, ordinal) by the formula of knowledge §9, so they can never disagree
with the manifest. One document per line keeps diffs of committed manifests reviewable.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
from bisect import bisect_left
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable

from ..errors import RagitError
from ..fsutil import atomic_write_bytes
from ..gcpause import paused
from .ids import chunk_id, chunker_key

INDEX_VERSION = 4
SUPPORTED_VERSIONS = [INDEX_VERSION]
_SHA_RE = re.compile(r"^[0-9a-f]{40}$")
_NAME_RE = re.compile(r"^([0-9a-f]{40})\.json$")
INGEST_MODES = ("full", "since", "files", "paths")


@dataclass(frozen=True)
class ManifestParams:
    chunker_version: str
    masking_version: str | None
    embedder_id: str
    config_hash: str

    def to_dict(self) -> dict[str, Any]:
        return {
            "chunkerVersion": self.chunker_version,
            "maskingVersion": self.masking_version,
            "embedderId": self.embedder_id,
            "configHash": self.config_hash,
        }


@dataclass(frozen=True)
class ManifestDoc:
    path: str
    blob_id: str
    doc_type: str
    chunker: str
    chunks: tuple[tuple[int, int], ...]  # (startLine, endLine) per ordinal

    def to_dict(self) -> dict[str, Any]:
        return {
            "path": self.path,
            "blobId": self.blob_id,
            "docType": self.doc_type,
            "chunker": self.chunker,
            "chunks": [list(c) for c in self.chunks],
        }


@dataclass
class Manifest:
    commit_sha: str
    parent_sha: str | None
    created_at: str
    params: ManifestParams
    ingest_mode: str
    base_sha: str | None
    docs: list[ManifestDoc] = field(default_factory=list)

    def chunker_key(self, doc: ManifestDoc) -> str:
        return chunker_key(doc.chunker, self.params.chunker_version, self.params.masking_version)

    def chunk_ids(self, doc: ManifestDoc) -> list[str]:
        key = self.chunker_key(doc)
        return [chunk_id(doc.blob_id, key, i) for i in range(len(doc.chunks))]

    def header_dict(self) -> dict[str, Any]:
        """Everything but the document list."""
        return {
            "commitSha": self.commit_sha,
            "parentSha": self.parent_sha,
            "createdAt": self.created_at,
            "indexVersion": INDEX_VERSION,
            "params": self.params.to_dict(),
            "ingest": {"mode": self.ingest_mode, "baseSha": self.base_sha},
        }

    def to_dict(self) -> dict[str, Any]:
        return {**self.header_dict(), "docs": [d.to_dict() for d in self.docs]}


@dataclass(frozen=True)
class LoadedManifest:
    manifest: Manifest
    sha256: str
    relpath: str
    # the rendered line of every document of a trusted file (``with_lines``), in path order:
    # an incremental ingest copies the lines of unchanged documents and never parses them
    lines: DocLines | None = field(default=None, compare=False, repr=False)

    def paths(self) -> list[str]:
        """The documents' paths, in file order."""
        return self.lines.paths() if self.lines is not None else [d.path for d in self.manifest.docs]

    def doc_lines(self) -> DocLines:
        """The rendered line of every document, from the file or formatted from the docs."""
        if self.lines is not None:
            return self.lines
        return DocLines([doc_line(d) for d in self.manifest.docs])


class DocLines:
    """A manifest's document lines (:func:`doc_line`) in path order. A line's path is decoded
    only when a search needs it, so replacing a few documents of 10,000 costs a few binary
    searches, not a parse of every line."""

    # up to this many replaced paths, each is found by binary search; more filter every line
    SEARCH_MAX = 64

    def __init__(self, lines: list[str]) -> None:
        self.lines = lines

    def paths(self) -> list[str]:
        return [line_path(line) for line in self.lines]

    def __contains__(self, path: str) -> bool:
        i = bisect_left(self.lines, path, key=line_path)
        return i < len(self.lines) and line_path(self.lines[i]) == path

    def having(self, paths: set[str]) -> set[str]:
        """The members of ``paths`` these lines hold."""
        if len(paths) > self.SEARCH_MAX:
            return paths.intersection(self.paths())
        return {p for p in paths if p in self}

    def replace(self, scope: set[str], admitted: dict[str, str]) -> DocLines:
        """These lines without the paths of ``scope``, plus ``admitted`` (path -> line, paths
        within ``scope``), in path order."""
        if len(scope) > self.SEARCH_MAX:
            lines = [line for line in self.lines if line_path(line) not in scope]
        else:
            lines = list(self.lines)
            for path in scope:
                i = bisect_left(lines, path, key=line_path)
                if i < len(lines) and line_path(lines[i]) == path:
                    del lines[i]
        for path in sorted(admitted):
            lines.insert(bisect_left(lines, path, key=line_path), admitted[path])
        return DocLines(lines)


class ManifestCache:
    """Parsed manifests of one process, keyed by file identity (inode, size, mtime).

    A long-lived process (the Python API, the MCP server) re-reads a manifest only when its
    file changed; the key includes whether the documents were parsed.
    """

    def __init__(self) -> None:
        self._entries: dict[tuple[str, bool], tuple[tuple[int, int, int], LoadedManifest]] = {}

    def get(self, path: "Path | str", header_only: bool) -> tuple[tuple[int, int, int] | None, LoadedManifest | None]:
        try:
            st = os.stat(path)
        except FileNotFoundError:
            return None, None
        ident = (st.st_ino, st.st_size, st.st_mtime_ns)
        hit = self._entries.get((str(path), header_only))
        return ident, (hit[1] if hit is not None and hit[0] == ident else None)

    def put(self, path: "Path | str", header_only: bool, ident: tuple[int, int, int], loaded: LoadedManifest) -> None:
        self._entries[(str(path), header_only)] = (ident, loaded)


def render_manifest(manifest: Manifest) -> bytes:
    """Pretty JSON (2-space indent) with one document object per line, plus a trailing newline."""
    return render_lines(manifest, [doc_line(d) for d in manifest.docs])


def render_lines(manifest: Manifest, lines: list[str]) -> bytes:
    """The manifest file of ``manifest``'s header and these document lines (:func:`doc_line`,
    in path order): what :func:`render_manifest` writes, without formatting copied lines again."""
    head = json.dumps(manifest.header_dict(), ensure_ascii=False, indent=2)[: -len("\n}")]
    if lines:
        text = head + ',\n  "docs": [\n' + ",\n".join(lines) + "\n  ]\n}\n"
    else:
        text = head + ',\n  "docs": []\n}\n'
    return text.encode("utf-8")


def doc_line(d: ManifestDoc) -> str:
    """``json.dumps(d.to_dict())`` for one document, formatted directly (10k documents per ingest)."""
    dumps = json.dumps
    chunks = ", ".join(f"[{a}, {b}]" for a, b in d.chunks)
    return (f'    {{"path": {dumps(d.path, ensure_ascii=False)}, "blobId": "{d.blob_id}", '
            f'"docType": {dumps(d.doc_type, ensure_ascii=False)}, "chunker": {dumps(d.chunker, ensure_ascii=False)}, '
            f'"chunks": [{chunks}]}}')


def manifest_dir(root: Path, config) -> Path:
    return Path(root) / config["storage"]["manifest_dir"]


def manifest_relpath(config, sha: str) -> str:
    return f"{config['storage']['manifest_dir'].rstrip('/')}/{sha}.json"


def list_manifest_shas(root: Path, config) -> list[str]:
    """Commit SHAs with a manifest file; other names (temp files included) are ignored."""
    directory = manifest_dir(root, config)
    if not directory.is_dir():
        return []
    out = []
    for entry in directory.iterdir():
        m = _NAME_RE.match(entry.name)
        if m and entry.is_file():
            out.append(m.group(1))
    return sorted(out)


def _invalid(sha: str, relpath: str, reason: str) -> RagitError:
    return RagitError(
        "SNAPSHOT_MANIFEST_INVALID",
        f"manifest {relpath} is invalid: {reason}",
        {"resolvedSha": sha, "manifestPath": relpath, "reason": reason},
        "ragit doctor",
    )


def _not_indexed(sha: str) -> RagitError:
    return RagitError(
        "SNAPSHOT_NOT_INDEXED", f"commit {sha} has no indexed snapshot", {"resolvedSha": sha}, "ragit ingest --all",
    )


def load_manifest(root: Path, config, sha: str, *, trusted: Callable[[str, str], bool] | None = None,
                  cache: ManifestCache | None = None, with_lines: bool = False) -> LoadedManifest:
    """Load and validate the exact manifest of ``sha`` (knowledge §4.2); never rewrites it.

    ``trusted(sha, digest)`` says whether the store holds a snapshot published from a manifest
    with exactly this sha256. Such a file is byte-identical to one ingest rendered and
    validated, so it is not validated again: a read that only needs the header (identity and
    parameters) skips the document list, and ``with_lines`` keeps each document's line with its
    path, unparsed (what an incremental ingest copies). Any other file is validated in full, so
    errors are reported as before.
    """
    relpath = manifest_relpath(config, sha)
    where = os.path.join(root, relpath)  # the cache's key (a warm read hits it: no Path built)
    header_only = trusted is not None and not with_lines
    ident, hit = cache.get(where, header_only) if cache is not None else (None, None)
    if hit is not None:
        return hit
    if header_only:
        loaded = _trusted_header(root, where, sha, relpath, trusted)
        if loaded is not None:
            if cache is not None and ident is not None:
                cache.put(where, header_only, ident, loaded)
            return loaded
    path = Path(where)
    try:
        raw = path.read_bytes()
    except FileNotFoundError:
        raise _not_indexed(sha) from None
    except IsADirectoryError:
        raise _invalid(sha, relpath, "not_a_file") from None
    loaded = None
    with paused():
        if trusted is not None:
            digest = hashlib.sha256(raw).hexdigest()
            if trusted(sha, digest):
                loaded = (_parse_trusted_lines(raw, sha, relpath, digest) if with_lines
                          else _parse_header(raw, sha, relpath, digest))
        if loaded is None:
            loaded = parse_manifest(raw, sha, relpath)
    if cache is not None and ident is not None:
        cache.put(where, header_only, ident, loaded)
    return loaded


_DOCS_MARK = b',\n  "docs": '
_DOCS_OPEN = b',\n  "docs": [\n'
_DOCS_CLOSE = b"\n  ]\n}\n"


def _trusted_header(root: Path, where: str, sha: str, relpath: str,
                    trusted: Callable[[str, str], bool]) -> LoadedManifest | None:
    """The header of a trusted manifest. Its digest is the one publishing recorded for this very
    file (ragit.ingest.manifestdigest: same identity by ``fstat`` before and after the header is
    read), else the file is hashed a block at a time into one reused buffer: a read needs only
    the header, and the whole file as one bytes object cost a copy and its pages (at 1M chunks
    36 MB: ~50 ms CPU with the hash, against ~28 ms streamed, against none recorded). None when
    the file is not trusted or its header is not in render_manifest's form within the first
    block (the caller then loads it as before, and reports its errors)."""
    from .manifestdigest import HASH_BLOCK, identity, remembered, stream_digest

    try:
        with open(where, "rb", buffering=0) as fh:
            st = os.fstat(fh.fileno())
            hexdigest = remembered(root, sha, st)
            if hexdigest is not None:
                head = fh.read(HASH_BLOCK)
                if identity(os.fstat(fh.fileno())) != identity(st):
                    hexdigest = None
                    fh.seek(0)
            if hexdigest is None:
                hexdigest, head = stream_digest(fh)
    except OSError:
        return None
    if not trusted(sha, hexdigest):
        return None
    with paused():
        return _parse_header(head, sha, relpath, hexdigest)


def _parse_header(raw: bytes, sha: str, relpath: str, digest: str) -> LoadedManifest | None:
    """Parse everything but the document list of a manifest rendered by :func:`render_manifest`."""
    cut = raw.find(_DOCS_MARK)
    if cut < 0:
        return None
    try:
        head = json.loads(raw[:cut] + b"\n}")
        params = head["params"]
        manifest = Manifest(
            commit_sha=head["commitSha"], parent_sha=head["parentSha"], created_at=head["createdAt"],
            params=ManifestParams(params["chunkerVersion"], params["maskingVersion"], params["embedderId"],
                                  params["configHash"]),
            ingest_mode=head["ingest"]["mode"], base_sha=head["ingest"]["baseSha"], docs=[],
        )
    except (ValueError, KeyError, TypeError):
        return None
    if manifest.commit_sha != sha or head.get("indexVersion") != INDEX_VERSION:
        return None
    return LoadedManifest(manifest, digest, relpath)


_LINE_HEAD = '    {"path": '
_LINE_AFTER_PATH = ', "blobId": "'


def line_path(line: str) -> str:
    """The path of a :func:`doc_line` (an escaped quote inside the path cannot end it early)."""
    literal = line[len(_LINE_HEAD):line.index(_LINE_AFTER_PATH)]
    return json.loads(literal) if "\\" in literal else literal[1:-1]


def _parse_trusted_lines(raw: bytes, sha: str, relpath: str, digest: str) -> LoadedManifest | None:
    """Header plus the document lines of a file known to be byte-identical to a published one
    (None: not in render_manifest's form). Paths are decoded later, only where needed."""
    header = _parse_header(raw, sha, relpath, digest)
    if header is None:
        return None
    start, end = raw.find(_DOCS_OPEN), raw.rfind(_DOCS_CLOSE)
    lines: list[str] = []
    if start >= 0 and end > start:
        section = raw[start + len(_DOCS_OPEN):end].decode("utf-8")
        lines = section.split(",\n")
        # every line starts with the path and has the blob id after it (a path literal cannot
        # contain either marker: its quotes are escaped)
        if (not section.startswith(_LINE_HEAD) or section.count("\n" + _LINE_HEAD) != len(lines) - 1
                or section.count(_LINE_AFTER_PATH) != len(lines)):
            return None
    elif not raw.endswith(b',\n  "docs": []\n}\n'):
        return None
    return LoadedManifest(header.manifest, digest, relpath, lines=DocLines(lines))


def parse_manifest(raw: bytes, sha: str, relpath: str) -> LoadedManifest:
    try:
        obj = json.loads(raw.decode("utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError):
        raise _invalid(sha, relpath, "invalid_json") from None
    if not isinstance(obj, dict):
        raise _invalid(sha, relpath, "not_an_object")
    version = obj.get("indexVersion")
    if "indexVersion" not in obj:
        raise _invalid(sha, relpath, "index_version_missing")
    if not isinstance(version, int) or isinstance(version, bool):
        raise _invalid(sha, relpath, "index_version_not_integer")
    if version != INDEX_VERSION:
        raise RagitError(
            "SNAPSHOT_SCHEMA_UNSUPPORTED",
            f"manifest {relpath} has indexVersion {version}; supported: {SUPPORTED_VERSIONS}",
            {"resolvedSha": sha, "manifestPath": relpath, "indexVersion": version, "supported": SUPPORTED_VERSIONS},
            "ragit doctor",
        )

    def fail(reason: str) -> RagitError:
        return _invalid(sha, relpath, reason)

    commit = obj.get("commitSha")
    if not isinstance(commit, str) or not _SHA_RE.match(commit):
        raise fail("commit_sha_invalid")
    if commit != sha:
        raise fail("commit_sha_mismatch")
    parent = obj.get("parentSha")
    if parent is not None and (not isinstance(parent, str) or not _SHA_RE.match(parent)):
        raise fail("parent_sha_invalid")
    created = obj.get("createdAt")
    if not isinstance(created, str) or not created:
        raise fail("created_at_invalid")
    params = obj.get("params")
    if not isinstance(params, dict):
        raise fail("params_invalid")
    for key in ("chunkerVersion", "embedderId", "configHash"):
        if not isinstance(params.get(key), str) or not params.get(key):
            raise fail(f"params.{key}_invalid")
    masking = params.get("maskingVersion", "missing")
    if masking is not None and (not isinstance(masking, str) or not masking):
        raise fail("params.maskingVersion_invalid")
    ingest = obj.get("ingest")
    if not isinstance(ingest, dict) or ingest.get("mode") not in INGEST_MODES:
        raise fail("ingest_invalid")
    base = ingest.get("baseSha")
    if base is not None and (not isinstance(base, str) or not _SHA_RE.match(base)):
        raise fail("ingest_invalid")
    docs_raw = obj.get("docs")
    if not isinstance(docs_raw, list):
        raise fail("docs_not_array")
    docs: list[ManifestDoc] = []
    seen: set[str] = set()
    previous = None
    for i, d in enumerate(docs_raw):
        doc = _parse_doc(d)
        if doc is None:
            raise fail(f"docs[{i}]_invalid")
        if doc.path in seen or (previous is not None and doc.path < previous):
            raise fail(f"docs[{i}]_out_of_order")
        seen.add(doc.path)
        previous = doc.path
        docs.append(doc)
    manifest = Manifest(
        commit_sha=commit,
        parent_sha=parent,
        created_at=created,
        params=ManifestParams(params["chunkerVersion"], masking, params["embedderId"], params["configHash"]),
        ingest_mode=ingest["mode"],
        base_sha=base,
        docs=docs,
    )
    return LoadedManifest(manifest, hashlib.sha256(raw).hexdigest(), relpath)


def _parse_doc(d: Any) -> ManifestDoc | None:
    if not isinstance(d, dict):
        return None
    path, blob, doc_type, chunker, chunks = (d.get(k) for k in ("path", "blobId", "docType", "chunker", "chunks"))
    if not (isinstance(path, str) and path and isinstance(doc_type, str) and doc_type):
        return None
    if not (isinstance(blob, str) and _SHA_RE.match(blob) and isinstance(chunker, str) and chunker):
        return None
    if not isinstance(chunks, list):
        return None
    ranges = []
    for c in chunks:
        if not (isinstance(c, list) and len(c) == 2 and all(isinstance(x, int) and not isinstance(x, bool) for x in c)):
            return None
        if c[0] < 1 or c[1] < c[0]:
            return None
        ranges.append((c[0], c[1]))
    return ManifestDoc(path, blob, doc_type, chunker, tuple(ranges))


def publish_manifest(root: Path, config, manifest: Manifest, data: bytes) -> bool:
    """Atomically write ``data`` as the manifest of ``manifest.commit_sha`` (knowledge §4.3 step 2).

    Returns False (and leaves the file untouched) when it already holds the same manifest
    except ``createdAt``.
    """
    path = Path(root) / manifest_relpath(config, manifest.commit_sha)
    if path.is_file() and same_except_created(path.read_bytes(), data):
        return False
    atomic_write_bytes(path, data)
    return True


def same_except_created(old: bytes, new: bytes) -> bool:
    if old == new:  # the common re-ingest case, decided without parsing two manifests
        return True
    try:
        a = json.loads(old)
        b = json.loads(new)
    except (ValueError, UnicodeDecodeError):
        return False
    if not isinstance(a, dict) or not isinstance(b, dict):
        return False
    a.pop("createdAt", None)
    b.pop("createdAt", None)
    return a == b
