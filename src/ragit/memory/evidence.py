"""Evidence of memory items (memory §10): what a decision, open loop or artifact rests on.

A memory item is only as good as the code it was about. Each item keeps its evidence as
blob-bound handles ``path@<blob id>:L<start>-L<end>`` (plus the commit they were bound at, where
rename detection starts), so a later read can tell whether the cited text is still there. The
comparison is ``verify``'s (knowledge §20, :func:`ragit.retrieve.verify.compare_blob_range`):
``ok`` and ``shifted`` keep an item current, anything else makes it ``stale``. Evidence that only
names an untrusted source (tool output, a web page, a transcript) is kept as a label, never as
proof: such items, like items with no evidence at all, never outrank repository evidence.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..errors import RagitError

if TYPE_CHECKING:  # pragma: no cover
    from ..contract.inputs import Validator
    from ..gitsnap.blobs import BlobReader
    from ..gitsnap.git import Git

UNTRUSTED_SOURCES = ("tool_output", "web_page", "transcript")
CURRENT_STATUSES = ("ok", "shifted")
# the stored form: the blob id is always a full object id
STORED = re.compile(r"(?P<path>.+)@(?P<blob>[0-9a-f]{40}):L(?P<start>[0-9]+)-L(?P<end>[0-9]+)")
_SHORT = re.compile(r"(?P<path>[^@]+):L(?P<start>[0-9]+)-L(?P<end>[0-9]+)")
_UNTRUSTED_KEYS = ("source", "ref")


@dataclass(frozen=True)
class BlobRange:
    """A parsed stored handle."""

    path: str
    blob_id: str
    start: int
    end: int
    commit: str | None

    @property
    def handle(self) -> str:
        return f"{self.path}@{self.blob_id}:L{self.start}-L{self.end}"


def parse_stored(ev: Any) -> BlobRange | None:
    """The blob range of one stored evidence entry; None for untrusted or unreadable entries."""
    if not isinstance(ev, dict) or ev.get("source", "repository") != "repository":
        return None
    m = STORED.fullmatch(str(ev.get("handle", "")))
    if m is None:
        return None
    commit = ev.get("commitSha")
    return BlobRange(m["path"], m["blob"], int(m["start"]), int(m["end"]), commit if isinstance(commit, str) else None)


def evidence_list(item: dict[str, Any]) -> list[dict[str, Any]]:
    value = item.get("evidence")
    return [e for e in value if isinstance(e, dict)] if isinstance(value, list) else []


# ------------------------------------------------------------------ input (validation and binding)

def check_evidence_input(value: Any, v: Validator, field: str) -> list[Any]:
    """Shape check at payload time (before any Git work): strings, or ``{source, ref}`` objects
    naming an untrusted source. Binding happens later (:func:`bind_evidence`)."""
    if value is None:
        return []
    if not isinstance(value, list):
        raise v.fail(field, "invalid_format", f"{field} must be an array of citation handles")
    out: list[Any] = []
    for i, item in enumerate(value):
        where = f"{field}[{i}]"
        if isinstance(item, str):
            out.append(v.text(item, where))
        elif isinstance(item, dict):
            v.allowed_keys(item, _UNTRUSTED_KEYS, where)
            source = v.choice(item.get("source"), f"{where}.source", UNTRUSTED_SOURCES)
            ref = v.text(item.get("ref"), f"{where}.ref") if item.get("ref") is not None else None
            if ref is None:
                raise v.fail(f"{where}.ref", "required", f"{where}.ref is required")
            out.append({"source": source, "ref": ref})
        else:
            raise v.fail(where, "invalid_format", f"{where} must be a handle string or a {{source, ref}} object")
    return out


def _not_found(citation: str, reason: str, message: str, field: str) -> RagitError:
    return RagitError("CITATION_NOT_FOUND", message, {"citation": citation, "reason": reason, "field": field},
                      "ragit query <question>  # cite a range of the current snapshot")


def bind_evidence(root: Path, git: Git | None, config, items: list[Any], bind_sha: str | None, command: str,
                  field: str) -> list[dict[str, Any]]:
    """Stored evidence for checked input items: every repository form becomes a blob-bound handle.

    ``path:Lx-Ly`` binds at ``bind_sha`` (the session's ``sourceHeadSha``, else HEAD);
    ``path@<sha>:Lx-Ly`` and citation ids are resolved as ``verify`` resolves them. A path absent
    at that commit, outside the repository or lines past its end → ``CITATION_NOT_FOUND``; an
    unknown form → ``INPUT_INVALID``. Nothing is written here.
    """
    from ..contract.inputs import Validator
    from ..retrieve.verify import CITATION_ID, HANDLE, verify_citation

    v = Validator(command)
    out: list[dict[str, Any]] = []
    for i, item in enumerate(items):
        where = f"{field}[{i}]"
        if isinstance(item, dict):
            out.append(dict(item))
            continue
        text = item.strip()
        citation = text
        if not (CITATION_ID.fullmatch(text) or HANDLE.fullmatch(text)):
            m = _SHORT.fullmatch(text)
            if m is None:
                raise v.fail(where, "invalid_format",
                             f"{where} is neither path:Lx-Ly, path@sha:Lx-Ly nor a citation id", value=text)
            if bind_sha is None:
                raise _not_found(text, "no_commit", f"{where}: there is no commit to bind {text} to", where)
            citation = f"{m['path']}@{bind_sha}:L{m['start']}-L{m['end']}"
        if git is None:
            raise _not_found(text, "no_repository", f"{where}: evidence needs a Git repository", where)
        try:
            cited = verify_citation(root, git, config, citation)["cited"]
        except RagitError as exc:
            if exc.code == "INPUT_INVALID":
                raise v.fail(where, "invalid_format", f"{where}: {exc.message}", value=text) from None
            if exc.code == "CITATION_NOT_FOUND":
                raise _not_found(text, str(exc.details.get("reason", "unknown")), f"{where}: {exc.message}",
                                 where) from None
            raise
        if cited.get("blobId") is None:
            raise v.fail(where, "invalid_format", f"{where} names a knowledge artifact, not repository lines",
                         value=text)
        rng = BlobRange(cited["path"], cited["blobId"], cited["startLine"], cited["endLine"], cited["sha"])
        out.append({"handle": rng.handle, "commitSha": rng.commit, "source": "repository", **_digests(git, rng)})
    return out


def _digests(git: Git, rng: BlobRange) -> dict[str, str]:
    """Digests of the cited lines and of their first line (no text is stored): the edit-time gate
    finds them in a changed file without reading git objects (ragit.gate.check)."""
    from ..gitsnap.blobs import BlobReader
    from ..ingest.text import blob_lines, text_digest

    with BlobReader(git) as blobs:
        cited = blob_lines(blobs.read(rng.blob_id))[rng.start - 1 : rng.end]
    return {"textDigest": text_digest(cited), "firstLineDigest": text_digest(cited[:1])}


# ------------------------------------------------------------------ checking against a snapshot

def blobs_at(git: Git, commit: str, paths: list[str]) -> dict[str, str]:
    """``{path: blob id}`` of the files among ``paths`` in ``commit`` (one ``ls-tree``)."""
    from ..gitsnap.git import decode_path

    if not paths:
        return {}
    listing = git.run("--literal-pathspecs", "ls-tree", "-z", "--full-tree", commit, "--", *paths)
    out: dict[str, str] = {}
    for record in listing.split(b"\0"):
        meta, _, name = record.partition(b"\t")
        fields = meta.split()
        if len(fields) == 3 and fields[1] == b"blob":
            out[decode_path(name)] = fields[2].decode()
    return out


@dataclass
class EvidenceCheck:
    """Checks blob ranges against one commit; use as a context manager (it holds a blob reader)."""

    git: Git
    commit: str
    _heads: dict[str, str] = field(default_factory=dict)
    _known: set[str] = field(default_factory=set)
    _results: dict[str, tuple[str, dict[str, Any] | None, str | None]] = field(default_factory=dict)
    _blobs: BlobReader | None = None

    def __enter__(self) -> EvidenceCheck:
        return self

    def __exit__(self, *exc: object) -> None:
        if self._blobs is not None:
            self._blobs.__exit__(None, None, None)
            self._blobs = None

    def prefetch(self, ranges: list[BlobRange]) -> None:
        """One ``ls-tree`` for all paths not seen yet (the common case: the blob did not change)."""
        wanted = sorted({r.path for r in ranges} - self._known)
        if wanted:
            self._heads.update(blobs_at(self.git, self.commit, wanted))
            self._known.update(wanted)

    def status(self, rng: BlobRange) -> tuple[str, dict[str, Any] | None, str | None]:
        """``(verify status, current location, diff)`` of one range at the commit."""
        key = f"{rng.handle}|{rng.commit}"
        if key in self._results:
            return self._results[key]
        self.prefetch([rng])
        if self._heads.get(rng.path) == rng.blob_id:
            result: tuple[str, dict[str, Any] | None, str | None] = (
                "ok", {"path": rng.path, "startLine": rng.start, "endLine": rng.end, "blobId": rng.blob_id}, None)
        else:
            result = self._compare(rng)
        self._results[key] = result
        return result

    def _compare(self, rng: BlobRange) -> tuple[str, dict[str, Any] | None, str | None]:
        from ..gitsnap.blobs import BlobReader
        from ..retrieve.verify import compare_blob_range

        if self._blobs is None:
            self._blobs = BlobReader(self.git).__enter__()
        try:
            outcome = compare_blob_range(self.git, self._blobs, rng.path, rng.commit or self.commit, rng.blob_id,
                                         rng.start, rng.end, self.commit)
        except RagitError:  # the blob is gone (shallow clone) or the lines never existed
            return "missing", None, None
        return outcome.status, outcome.current, outcome.diff


@dataclass(frozen=True)
class Assessment:
    """An item's provenance label and, for repository evidence, which handles moved."""

    provenance: str  # repository | untrusted | none
    evidence: tuple[dict[str, Any], ...]  # [{handle, status, current, diff}] in stored order
    stale_evidence: tuple[dict[str, str], ...]

    @property
    def stale(self) -> bool:
        return bool(self.stale_evidence)

    @property
    def demotion(self) -> int:
        """0 current repository evidence, 1 no repository evidence, 2 stale (sorts last)."""
        return 2 if self.stale else (0 if self.provenance == "repository" else 1)


def assess(evidence: list[dict[str, Any]], check: EvidenceCheck | None) -> Assessment:
    """Label stored evidence; without ``check`` (no repository) nothing is compared."""
    rows: list[dict[str, Any]] = []
    stale: list[dict[str, str]] = []
    repository = untrusted = False
    ranges = [r for r in (parse_stored(e) for e in evidence) if r is not None]
    if check is not None:
        check.prefetch(ranges)
    for ev in evidence:
        rng = parse_stored(ev)
        if rng is None:
            untrusted = True
            rows.append({"handle": f"{ev.get('source', 'unknown')}:{ev.get('ref', ev.get('handle', ''))}",
                         "status": "untrusted", "current": None, "diff": None})
            continue
        repository = True
        if check is None:
            rows.append({"handle": rng.handle, "status": "unchecked", "current": None, "diff": None})
            continue
        status, current, diff = check.status(rng)
        rows.append({"handle": rng.handle, "status": status, "current": current, "diff": diff})
        if status not in CURRENT_STATUSES:
            stale.append({"handle": rng.handle, "status": status})
    provenance = "repository" if repository else ("untrusted" if untrusted else "none")
    return Assessment(provenance, tuple(rows), tuple(stale))


def label_item(item: dict[str, Any], a: Assessment) -> dict[str, Any]:
    """The item with ``provenance``, ``stale`` and ``staleEvidence`` (the handles that moved)."""
    out = dict(item)
    out["provenance"] = a.provenance
    out["stale"] = a.stale
    out["staleEvidence"] = [dict(s) for s in a.stale_evidence]
    return out


SNAPSHOT_CONTENT = Assessment("repository", (), ())  # an item read from the snapshot itself


def label_and_demote(items: list[dict[str, Any]], check: EvidenceCheck | None,
                     from_snapshot: frozenset[str] = frozenset()) -> list[dict[str, Any]]:
    """Label every item and sort stably: current repository evidence, then none/untrusted, then stale.

    Items whose id is in ``from_snapshot`` were read from the snapshot (promoted documents): they
    are repository content at the snapshot read, current by construction."""
    assessed = [(SNAPSHOT_CONTENT if item.get("id") in from_snapshot else assess(evidence_list(item), check), item)
                for item in items]
    ordered = sorted(assessed, key=lambda pair: pair[0].demotion)
    return [label_item(item, a) for a, item in ordered]


def open_check(git: Git | None, commit: str | None) -> EvidenceCheck | None:
    """A checker for ``commit`` (None without a repository or a commit)."""
    return None if git is None or commit is None else EvidenceCheck(git, commit)
