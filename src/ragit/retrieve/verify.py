"""``verify``: does a citation still say what it said, at the HEAD commit? (knowledge §20)

A citation names a source version: a chunk of a git blob (a citation id, or the display handle
``path@sha:L<start>-L<end>``), a knowledge-artifact body or an artifact's evidence ref. The cited
text is re-read from git objects and compared with the HEAD commit, never with the working tree,
so two people with the same commits always get the same answer.

Citation ids are content hashes, so they cannot be inverted: a chunk id is found through the
store (narrowed to its blob) or, when the store is unavailable, by deriving ids from the
manifests; an artifact id by hashing the artifact files, and then the artifact versions in git
history, which is what lets an edited or deleted committed artifact report ``changed`` or
``deleted`` instead of "unknown".
"""

from __future__ import annotations

import difflib
import json
import posixpath
import re
import sqlite3
from collections.abc import Iterator
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from ..errors import RagitError, input_invalid
from ..gitsnap.blobs import BlobReader, MissingObject
from ..gitsnap.context import read_context
from ..gitsnap.git import Git, decode_path
from ..gitsnap.history import find_rename, rev_list
from ..gitsnap.refs import resolve_at
from ..ingest.ids import citation_id
from ..ingest.manifest import Manifest, list_manifest_shas, load_manifest
from ..ingest.text import blob_lines, locate_block, normalize_newlines, split_lines
from ..security.masking import code_mode, mask_text
from .query import DIRTY_WARNING

CITATION_ID = re.compile(r"cite-[a-f0-9]{24}")
# The path is greedy, so a path holding "@" still parses; the ref is checked by §5.1 afterwards.
HANDLE = re.compile(r"(?P<path>.+)@(?P<ref>[^@:/\s]+):L(?P<start>[0-9]+)-L(?P<end>[0-9]+)")
WITHDRAWN = ("superseded", "retracted", "archived")
_HUNK = re.compile(r"@@ -(\d+)(,\d+)? \+(\d+)(,\d+)? @@")


@dataclass(frozen=True)
class Handle:
    """A parsed ``path@ref:Lstart-Lend``; ``ref`` becomes the full commit SHA once resolved."""

    path: str
    ref: str
    start: int
    end: int


@dataclass(frozen=True)
class Cited:
    """What the citation pointed at."""

    path: str
    sha: str | None
    start: int | None
    end: int | None
    blob_id: str | None
    citation_id: str | None

    def to_dict(self) -> dict[str, Any]:
        return {"path": self.path, "sha": self.sha, "startLine": self.start, "endLine": self.end,
                "blobId": self.blob_id, "citationId": self.citation_id}


@dataclass(frozen=True)
class Outcome:
    """The comparison with HEAD: status, where the text is now, and the diff for ``changed``."""

    status: str
    current: dict[str, Any] | None = None
    diff: str | None = None


def parse_citation(citation: str) -> str | Handle:
    """A citation id (returned as is) or a :class:`Handle`; anything else is INPUT_INVALID. The
    size limit and lone surrogates (cli-contract §3.3) are the caller's check (the contract layer
    sits above retrieval): :func:`ragit.contract.inputs.check_citation`."""
    text = citation.strip()
    if CITATION_ID.fullmatch(text):
        return text
    m = HANDLE.fullmatch(text)
    if m is not None:
        start, end = int(m["start"]), int(m["end"])
        if 1 <= start <= end:
            return Handle(m["path"], m["ref"], start, end)
    raise input_invalid(
        "citation", "invalid_format",
        f"{citation!r} is neither a citation id (cite-<24 hex>) nor a handle path@sha:L<start>-L<end>",
        command="verify", value=citation,
    )


def display_handle(path: str, sha: str | None, start: int | None, end: int | None) -> str:
    """``path@sha12:Lx-Ly``, leaving out the parts a location does not have."""
    out = path if sha is None else f"{path}@{sha[:12]}"
    return out if start is None or end is None else f"{out}:L{start}-L{end}"


def verify_citation(root: Path, git: Git, config, citation: str) -> dict[str, Any]:
    """Check one citation against the HEAD commit; returns the ``data`` of knowledge §20."""
    target = parse_citation(citation)
    if isinstance(target, Handle):  # the caller's ref fails before anything else is read
        if outside_repo(target.path):  # git would refuse it too, as an internal error
            raise _not_found(citation, "path_outside_repo", f"{target.path} is not a path inside the repository")
        target = replace(target, ref=resolve_at(git, target.ref))
    context = read_context(git)
    # An unborn HEAD fails as ``--at HEAD`` does: SNAPSHOT_REF_INVALID.
    head = context.head if context.head is not None else resolve_at(git, "HEAD")
    with BlobReader(git) as blobs:
        if isinstance(target, Handle):
            found: tuple[Cited, bool] | None = _cite_handle(root, git, config, target, citation)
        else:
            found = _find_chunk(root, git, config, target, head)
        if found is not None:
            cited, code = found
            outcome = _compare_document(git, blobs, cited, _cited_lines(blobs, cited, citation), head, code)
        else:
            artifact = _find_artifact(root, git, blobs, config, target, head)
            if artifact is None:
                raise _not_found(citation, "unknown_id", f"no stored chunk or knowledge artifact has id {target}")
            cited, outcome = artifact
    return {
        "citation": citation,
        "cited": cited.to_dict(),
        "head": head,
        "status": outcome.status,
        "current": outcome.current,
        "diff": outcome.diff,
        "warnings": [DIRTY_WARNING] if context.dirty else [],
    }


def outside_repo(path: str) -> bool:
    """Whether a handle's path is absolute or climbs out of the repository (``..``)."""
    norm = posixpath.normpath(path.replace("\\", "/"))
    return path.startswith(("/", "\\")) or norm == ".." or norm.startswith("../") or bool(
        re.match(r"^[A-Za-z]:[\\/]", path))


def _not_found(citation: str, reason: str, message: str) -> RagitError:
    return RagitError("CITATION_NOT_FOUND", message, {"citation": citation, "reason": reason}, "ragit doctor")


def compare_blob_range(git: Git, blobs: BlobReader, path: str, sha: str, blob_id: str, start: int, end: int,
                       head: str) -> Outcome:
    """Compare a blob-bound range (memory evidence, memory §10) with commit ``head`` by the rules of
    §20 step 2: ``ok``, ``shifted``, ``changed`` (with its diff), ``moved`` or ``deleted``.

    ``sha`` is the commit the range was bound at (rename detection starts there). A blob that is
    not in the repository or lines beyond its end raise ``CITATION_NOT_FOUND``."""
    cited = Cited(path, sha, start, end, blob_id, None)
    return _compare_document(git, blobs, cited, _cited_lines(blobs, cited, display_handle(path, sha, start, end)),
                             head, False)


# ------------------------------------------------------------------ cited chunks


def _cite_handle(root: Path, git: Git, config, h: Handle, citation: str) -> tuple[Cited, bool]:
    """The blob a resolved handle names, and its chunk's citation id when the commit's manifest lists it."""
    blob = _blob_at(git, h.ref, h.path)
    if blob is None:
        raise _not_found(citation, "path_not_in_commit", f"{h.path} is not a file of commit {h.ref}")
    cited = Cited(h.path, h.ref, h.start, h.end, blob, None)
    try:
        manifest = load_manifest(root, config, h.ref).manifest
    except RagitError:  # not indexed (or damaged): the handle still names a blob
        return cited, False
    doc = next((d for d in manifest.docs if d.path == h.path and d.blob_id == blob), None)
    if doc is None:
        return cited, False
    ranges = zip(manifest.chunk_ids(doc), doc.chunks)
    chunk = next((c for c, lines in ranges if lines == (h.start, h.end)), None)
    cid = citation_id("document", chunk, blob) if chunk is not None else None
    return replace(cited, citation_id=cid), code_mode(doc.path, doc.doc_type)


def _find_chunk(root: Path, git: Git, config, citation: str, head: str) -> tuple[Cited, bool] | None:
    """A stored chunk with this citation id, located by the nearest manifest that lists it."""
    available, blob = _stored_blob(root, config, citation)
    if available and blob is None:
        return None
    for manifest in _manifests_nearest_first(root, git, config, head):
        for doc in manifest.docs:
            if blob is not None and doc.blob_id != blob:
                continue
            for ordinal, chunk in enumerate(manifest.chunk_ids(doc)):
                if citation_id("document", chunk, doc.blob_id) == citation:
                    start, end = doc.chunks[ordinal]
                    cited = Cited(doc.path, manifest.commit_sha, start, end, doc.blob_id, citation)
                    return cited, code_mode(doc.path, doc.doc_type)
    return None


def _stored_blob(root: Path, config, citation: str) -> tuple[bool, str | None]:
    """``(store available, blob id of the chunk with this citation id or None)``."""
    from ..store import open_store_read
    from ..store.sqlite import StoreMissing, StoreUnreadable

    try:
        store = open_store_read(root, config)
    except (StoreMissing, StoreUnreadable):
        return False, None
    try:
        rows = store.chunks_by_citation(citation)
    except sqlite3.DatabaseError:  # a damaged or foreign store: fall back to the manifests
        return False, None
    finally:
        store.close()
    return True, (rows[0][1] if rows else None)


def _manifests_nearest_first(root: Path, git: Git, config, head: str) -> Iterator[Manifest]:
    """HEAD's manifest, then indexed ancestors newest first (§5.4 order), then any other snapshot.

    Lazy, so the common case (the chunk is in HEAD's snapshot) lists no history. Snapshots of
    other branches come last so that a hit of ``query --at <other branch>`` is still verifiable.
    """
    catalogue = set(list_manifest_shas(root, config))
    for sha in _ordered(git, head, catalogue):
        try:
            yield load_manifest(root, config, sha).manifest
        except RagitError:  # a damaged manifest lists nothing; doctor reports it
            continue


def _ordered(git: Git, head: str, catalogue: set[str]) -> Iterator[str]:
    if head in catalogue:
        yield head
    ancestors = [sha for sha in rev_list(git, head) if sha in catalogue and sha != head]
    yield from ancestors
    yield from sorted(catalogue.difference(ancestors, (head,)))


def _blob_at(git: Git, commit: str, path: str) -> str | None:
    """The blob id of ``path`` in ``commit``; None when absent or not a file (ls-tree is literal)."""
    out = git.run("ls-tree", "-z", "--full-tree", commit, "--", path)
    for record in out.split(b"\0"):
        meta, _, name = record.partition(b"\t")
        fields = meta.split()
        if len(fields) == 3 and fields[1] == b"blob" and decode_path(name) == path:
            return fields[2].decode()
    return None


def _text_lines(data: bytes) -> list[str]:
    """LF-normalised lines of a blob; undecodable bytes are replaced so lines still compare."""
    return blob_lines(data)


def _cited_lines(blobs: BlobReader, cited: Cited, citation: str) -> list[str]:
    assert cited.blob_id is not None and cited.start is not None and cited.end is not None
    try:
        lines = _text_lines(blobs.read(cited.blob_id))
    except MissingObject:
        raise _not_found(citation, "missing_object",
                         f"blob {cited.blob_id} of {cited.path} is not in this repository (shallow clone?)") from None
    if cited.end > len(lines):
        raise _not_found(citation, "lines_out_of_range",
                         f"{cited.path} has {len(lines)} lines at {cited.sha}; cited L{cited.start}-L{cited.end}")
    return lines[cited.start - 1 : cited.end]


# ------------------------------------------------------------------ comparison with HEAD


def _compare_document(git: Git, blobs: BlobReader, cited: Cited, lines: list[str], head: str, code: bool) -> Outcome:
    assert cited.start is not None and cited.end is not None and cited.sha is not None
    # a citation of HEAD itself already knows HEAD's blob at its path
    blob = cited.blob_id if cited.sha == head else _blob_at(git, head, cited.path)
    if blob is not None:
        if blob == cited.blob_id:
            return Outcome("ok", _location(cited.path, cited.start, cited.end, blob))
        now = _text_lines(blobs.read(blob))
        found = _locate(now, lines, cited.start)
        if found == cited.start:
            return Outcome("ok", _location(cited.path, found, found + len(lines) - 1, blob))
        if found is not None:
            return Outcome("shifted", _location(cited.path, found, found + len(lines) - 1, blob))
        start, end = _clip(cited.start, cited.end, len(now))
        current = _location(cited.path, start, end, blob)
        after = now[start - 1 : end] if start is not None and end is not None else []
        to = display_handle(cited.path, head, start, end)
        diff = _diff(lines, after, display_handle(cited.path, cited.sha, cited.start, cited.end), to,
                     cited.start - 1, code)
        return Outcome("changed", current, diff)
    renamed = find_rename(git, cited.sha, head, cited.path)
    blob = _blob_at(git, head, renamed) if renamed is not None else None
    if renamed is None or blob is None:
        return Outcome("deleted")
    found = cited.start if blob == cited.blob_id else _locate(_text_lines(blobs.read(blob)), lines, cited.start)
    if found is not None:
        return Outcome("moved", _location(renamed, found, found + len(lines) - 1, blob))
    return Outcome("moved", _location(renamed, cited.start, cited.end, blob))


def _location(path: str, start: int | None, end: int | None, blob: str | None) -> dict[str, Any]:
    return {"path": path, "startLine": start, "endLine": end, "blobId": blob}


def _locate(lines: list[str], block: list[str], near: int) -> int | None:
    """1-based start of the occurrence of ``block`` in ``lines`` nearest ``near`` (earlier on ties)."""
    return locate_block(lines, block, near)


def _clip(start: int, end: int, length: int) -> tuple[int | None, int | None]:
    """The cited range cut to the file's length; no range when the file ends before it."""
    return (start, min(end, length)) if length >= start else (None, None)


def _diff(before: list[str], after: list[str], fromfile: str, tofile: str, offset: int, code: bool) -> str:
    """Unified diff, hunk headers in file line numbers (``offset`` lines precede both ranges), masked."""
    out = []
    for line in difflib.unified_diff(before, after, fromfile, tofile, lineterm=""):
        m = _HUNK.fullmatch(line)
        if m is not None:
            line = f"@@ -{int(m[1]) + offset}{m[2] or ''} +{int(m[3]) + offset}{m[4] or ''} @@"
        out.append(line)
    return mask_text("\n".join(out) + "\n", code=code).text


# ------------------------------------------------------------------ knowledge artifacts


@dataclass(frozen=True)
class _Version:
    """One version of an artifact record and the part of it a citation id matched."""

    relpath: str
    record: dict[str, Any]
    evidence: dict[str, Any] | None  # None: the artifact body


def _find_artifact(root: Path, git: Git, blobs: BlobReader, config, citation: str, head: str
                   ) -> tuple[Cited, Outcome] | None:
    """An artifact body or evidence ref with this id: current files first, then git history."""
    base = config["memory"]["artifacts_dir"].strip("/")
    version = _match_files(root, base, citation) or _match_history(git, blobs, base, citation, head)
    if version is None:
        return None
    record, ev = version.record, version.evidence
    current = _read_record(root / version.relpath)
    if ev is None:
        cited = Cited(version.relpath, record.get("boundSha"), None, None, None, citation)
        return cited, _compare_body(version, current)
    sha = ev.get("sourceSha") or record.get("boundSha")
    cited = Cited(str(ev.get("path")), sha, ev.get("startLine"), ev.get("endLine"), None, citation)
    return cited, _compare_evidence(cited, ev, current)


def _body_citation(record: dict[str, Any]) -> str:
    return citation_id("artifact", str(record.get("artifactId")), str(record.get("contentHash")))


def _evidence_citation(record: dict[str, Any], ev: dict[str, Any]) -> str:
    source = f"{record.get('artifactId')}:{ev.get('evidenceId')}"
    return citation_id("evidence", source, str(ev.get("contentHash")))


def _evidence_refs(record: dict[str, Any]) -> list[dict[str, Any]]:
    refs = record.get("evidence")
    return [ev for ev in refs if isinstance(ev, dict)] if isinstance(refs, list) else []


def _match(relpath: str, record: dict[str, Any], citation: str) -> _Version | None:
    if _body_citation(record) == citation:
        return _Version(relpath, record, None)
    for ev in _evidence_refs(record):
        if _evidence_citation(record, ev) == citation:
            return _Version(relpath, record, ev)
    return None


def _read_record(path: Path) -> dict[str, Any] | None:
    try:
        record = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    return record if isinstance(record, dict) else None


def _match_files(root: Path, base: str, citation: str) -> _Version | None:
    for path in sorted((root / base).glob("*/*.json")):
        record = _read_record(path)
        version = _match(path.relative_to(root).as_posix(), record, citation) if record is not None else None
        if version is not None:
            return version
    return None


def _match_history(git: Git, blobs: BlobReader, base: str, citation: str, head: str) -> _Version | None:
    """Earlier versions of committed artifact files (newest first), so edits and deletions show."""
    out = git.run("log", "--no-show-signature", "--format=", "--raw", "-z", "--no-abbrev", "--no-renames",
                  "--diff-filter=AM", head, "--", base)
    wanted = re.compile(re.escape(base) + r"/[^/]+/[^/]+\.json")
    versions: list[tuple[str, str]] = []
    meta: bytes | None = None
    for field in out.split(b"\0"):
        field = field.lstrip(b"\n")
        if field.startswith(b":"):
            meta = field
        elif meta is not None and field:
            path = decode_path(field)
            if wanted.fullmatch(path):
                versions.append((path, meta.split()[3].decode()))
            meta = None
    for path, oid in versions:
        try:
            record = json.loads(blobs.read(oid).decode("utf-8"))
        except (MissingObject, ValueError):
            continue
        version = _match(path, record, citation) if isinstance(record, dict) else None
        if version is not None:
            return version
    return None


def _withdrawn(record: dict[str, Any]) -> bool:
    return record.get("status") in WITHDRAWN


def _compare_body(version: _Version, current: dict[str, Any] | None) -> Outcome:
    """ok while the file holds the cited content hash and an overlay-eligible status."""
    if current is None:
        return Outcome("deleted")
    if _withdrawn(current):
        return Outcome("withdrawn")
    location = _location(version.relpath, None, None, None)
    if current.get("contentHash") == version.record.get("contentHash"):
        return Outcome("ok", location)
    diff = _diff(_body_lines(version.record), _body_lines(current), version.relpath, version.relpath, 0, False)
    return Outcome("changed", location, diff)


def _body_lines(record: dict[str, Any]) -> list[str]:
    return split_lines(normalize_newlines(f"{record.get('title', '')}\n{record.get('text', '')}"))


def _compare_evidence(cited: Cited, ev: dict[str, Any], current: dict[str, Any] | None) -> Outcome:
    """The evidence ref follows its artifact's lifecycle and its own content hash."""
    refs = _evidence_refs(current) if current is not None else []
    now = next((e for e in refs if e.get("evidenceId") == ev.get("evidenceId")), None)
    if current is None or now is None:
        return Outcome("deleted")
    if _withdrawn(current):
        return Outcome("withdrawn")
    location = _location(str(now.get("path")), now.get("startLine"), now.get("endLine"), None)
    if now.get("contentHash") == ev.get("contentHash"):
        return Outcome("ok", location)
    name = display_handle(cited.path, None, cited.start, cited.end)
    before = split_lines(normalize_newlines(str(ev.get("excerpt", ""))))
    after = split_lines(normalize_newlines(str(now.get("excerpt", ""))))
    return Outcome("changed", location, _diff(before, after, name, name, 0, False))
