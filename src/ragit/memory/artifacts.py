"""Knowledge artifacts (memory §5): reviewable JSON records with an explicit lifecycle.

An artifact is what an agent learned or proved in a session (a finding, a harness fact, a test
failure kept as evidence). It lives as one plain file under ``memory.artifacts_dir`` so a human
can review it in a diff, and it only reaches retrieval through the explicit scope overlay
(knowledge §12.8) once its status allows it. Files are masked and written atomically; reads
never write and skip a corrupt file with a warning instead of failing.
"""

from __future__ import annotations

import hashlib
import json
import math
import re
from dataclasses import dataclass, replace
from datetime import datetime
from pathlib import Path, PurePosixPath
from typing import Any

from ..clock import now_iso, parse_iso
from ..errors import RagitError
from ..security.masking import mask_text, mask_value

SCOPES = ("session", "harness", "evidence")
STATUSES = ("captured", "reviewed", "promoted", "superseded", "retracted", "archived")
TRANSITIONS: dict[str, tuple[str, ...]] = {
    "captured": ("reviewed", "retracted", "archived"),
    "reviewed": ("promoted", "superseded", "retracted", "archived"),
    "promoted": ("superseded", "archived"),
    "superseded": ("archived",),
    "retracted": ("archived",),
    "archived": (),
}
# The lifecycle command of each target status (for messages and describe).
COMMAND_OF = {"reviewed": "review", "promoted": "promote", "superseded": "supersede",
              "retracted": "retract", "archived": "archive"}
CAPTURE_FIELDS = ("scope", "kind", "title", "text", "confidence", "sessionId", "evidence")
EVIDENCE_FIELDS = ("path", "startLine", "endLine", "excerpt", "handle")

_ID_RE = re.compile(r"art-[0-9a-f]{24}")


# ------------------------------------------------------------------ identities and labels

def sha256_hash(text: str) -> str:
    """``sha256:<hex>`` of UTF-8 ``text``: the content hashes of bodies and evidence excerpts."""
    return "sha256:" + hashlib.sha256(text.encode("utf-8")).hexdigest()


def artifact_id(scope: str, kind: str, title: str, text: str, created_at: str) -> str:
    """``art-`` + 24 hex of sha256(scope NUL kind NUL title NUL text NUL createdAt)."""
    payload = "\x00".join((scope, kind, title, text, created_at)).encode("utf-8")
    return "art-" + hashlib.sha256(payload).hexdigest()[:24]


def authority_label(scope: str, status: str) -> str:
    """The derived authority label: promoted is durable, reviewed is labelled by scope."""
    if status == "promoted":
        return "promoted_durable"
    if status == "reviewed":
        return f"reviewed_{scope}"
    return "captured"


def is_artifact_id(value: str) -> bool:
    return _ID_RE.fullmatch(value) is not None


# ------------------------------------------------------------------ the record

@dataclass(frozen=True)
class Evidence:
    """One evidence ref: a located excerpt that backs the artifact."""

    evidence_id: str
    path: str
    start_line: int | None
    end_line: int | None
    source_sha: str | None
    excerpt: str
    blob_id: str | None = None  # the blob of ``path`` at ``sourceSha``: repository evidence (memory §10)

    @property
    def content_hash(self) -> str:
        return sha256_hash(self.excerpt)

    @property
    def handle(self) -> str | None:
        """``path@<blob>:Lx-Ly`` for blob-bound evidence with lines, else None."""
        if self.blob_id is None or self.start_line is None or self.end_line is None:
            return None
        return f"{self.path}@{self.blob_id}:L{self.start_line}-L{self.end_line}"

    def to_dict(self) -> dict[str, Any]:
        return {"evidenceId": self.evidence_id, "path": self.path, "startLine": self.start_line,
                "endLine": self.end_line, "sourceSha": self.source_sha, "blobId": self.blob_id,
                "excerpt": self.excerpt, "contentHash": self.content_hash}


@dataclass(frozen=True)
class Artifact:
    """A knowledge artifact. Hashes and the authority label are derived, never trusted from disk,
    so a hand-edited file gets a new citation version instead of a stale one."""

    artifact_id: str
    scope: str
    kind: str
    title: str
    text: str
    status: str
    confidence: float | None
    session_id: str | None
    bound_sha: str | None
    evidence: tuple[Evidence, ...]
    superseded_by: str | None
    created_at: str
    updated_at: str
    history: tuple[dict[str, Any], ...]

    @property
    def content_hash(self) -> str:
        return sha256_hash(self.title + "\n" + self.text)

    @property
    def authority(self) -> str:
        return authority_label(self.scope, self.status)

    @property
    def updated_datetime(self) -> datetime:
        return parse_iso(self.updated_at)

    def to_dict(self) -> dict[str, Any]:
        """The on-disk record, in the field order of memory §5."""
        return {
            "artifactId": self.artifact_id, "scope": self.scope, "kind": self.kind, "title": self.title,
            "text": self.text, "status": self.status, "authority": self.authority,
            "confidence": self.confidence, "sessionId": self.session_id, "boundSha": self.bound_sha,
            "contentHash": self.content_hash, "evidence": [e.to_dict() for e in self.evidence],
            "supersededBy": self.superseded_by, "createdAt": self.created_at, "updatedAt": self.updated_at,
            "history": [dict(h) for h in self.history],
        }


def relative_path(config, scope: str, art_id: str) -> str:
    """The record's path relative to the repository root, POSIX form (hit ``path``)."""
    base = PurePosixPath(str(config["memory"]["artifacts_dir"]).replace("\\", "/")).as_posix()
    return f"{base}/{scope}/{art_id}.json"


def record_path(root: Path, config, scope: str, art_id: str) -> Path:
    return Path(root) / relative_path(config, scope, art_id)


def render_record(artifact: Artifact) -> tuple[str, int]:
    """The masked file text (2-space indent, trailing newline) and the number of secrets hidden."""
    from .working import dump_json

    masked, count, _ = mask_value(artifact.to_dict())
    return dump_json(masked), count


# ------------------------------------------------------------------ reading

def _opt(value: Any, kind: type | tuple[type, ...], name: str) -> Any:
    if value is not None and (not isinstance(value, kind) or isinstance(value, bool)):
        raise ValueError(f"{name} has the wrong type")
    return value


def _req_str(obj: dict, key: str) -> str:
    value = obj.get(key)
    if not isinstance(value, str):
        raise ValueError(f"{key} must be a string")
    return value


def _evidence_from(obj: Any) -> Evidence:
    if not isinstance(obj, dict):
        raise ValueError("evidence entries must be objects")
    return Evidence(
        evidence_id=_req_str(obj, "evidenceId"), path=_req_str(obj, "path"),
        start_line=_opt(obj.get("startLine"), int, "startLine"), end_line=_opt(obj.get("endLine"), int, "endLine"),
        source_sha=_opt(obj.get("sourceSha"), str, "sourceSha"), excerpt=_req_str(obj, "excerpt"),
        blob_id=_opt(obj.get("blobId"), str, "blobId"),
    )


def artifact_from_dict(obj: Any, *, scope: str, art_id: str) -> Artifact:
    """Parse a stored record; ``ValueError`` when it is not a record of ``scope``/``art_id``."""
    if not isinstance(obj, dict):
        raise ValueError("the file is not a JSON object")
    if obj.get("artifactId") != art_id:
        raise ValueError("artifactId does not match the file name")
    if obj.get("scope") != scope:
        raise ValueError("scope does not match the directory")
    status = obj.get("status")
    if status not in STATUSES:
        raise ValueError(f"unknown status {status!r}")
    confidence = _opt(obj.get("confidence"), (int, float), "confidence")
    if confidence is not None and not (math.isfinite(confidence) and 0 <= confidence <= 1):
        raise ValueError("confidence is outside [0, 1]")
    evidence = obj.get("evidence", [])
    history = obj.get("history", [])
    if not isinstance(evidence, list) or not isinstance(history, list):
        raise ValueError("evidence and history must be lists")
    if not all(isinstance(h, dict) and h.get("status") in STATUSES and isinstance(h.get("at"), str)
               for h in history):
        raise ValueError("history entries need a status and a time")
    created_at, updated_at = _req_str(obj, "createdAt"), _req_str(obj, "updatedAt")
    parse_iso(created_at)
    parse_iso(updated_at)
    return Artifact(
        artifact_id=art_id, scope=scope, kind=_req_str(obj, "kind"), title=_req_str(obj, "title"),
        text=_req_str(obj, "text"), status=status, confidence=confidence,
        session_id=_opt(obj.get("sessionId"), str, "sessionId"), bound_sha=_opt(obj.get("boundSha"), str, "boundSha"),
        evidence=tuple(_evidence_from(e) for e in evidence),
        superseded_by=_opt(obj.get("supersededBy"), str, "supersededBy"),
        created_at=created_at, updated_at=updated_at, history=tuple(dict(h) for h in history),
    )


def _read(path: Path, rel: str, scope: str, art_id: str, warnings: list[str]) -> Artifact | None:
    try:
        return artifact_from_dict(json.loads(path.read_text(encoding="utf-8")), scope=scope, art_id=art_id)
    except (OSError, UnicodeDecodeError, ValueError) as exc:
        warnings.append(f"skipped unreadable artifact {rel}: {exc}")
        return None


def load_artifacts(root: Path, config) -> tuple[list[Artifact], list[str]]:
    """Every readable record under the artifacts directory, plus one warning per skipped file."""
    warnings: list[str] = []
    out: list[Artifact] = []
    for scope in SCOPES:
        directory = record_path(root, config, scope, "x").parent
        if not directory.is_dir():
            continue
        for path in sorted(directory.glob("*.json")):
            rel = relative_path(config, scope, path.stem)
            if not is_artifact_id(path.stem):
                warnings.append(f"skipped unreadable artifact {rel}: the file name is not an artifact id")
                continue
            artifact = _read(path, rel, scope, path.stem, warnings)
            if artifact is not None:
                out.append(artifact)
    return out, warnings


def find_artifact(root: Path, config, art_id: str, warnings: list[str]) -> Artifact | None:
    """The record with ``art_id`` (None when absent, malformed or unreadable)."""
    if not is_artifact_id(art_id):
        return None
    for scope in SCOPES:
        path = record_path(root, config, scope, art_id)
        if path.is_file():
            return _read(path, relative_path(config, scope, art_id), scope, art_id, warnings)
    return None


def _not_found(art_id: str) -> RagitError:
    return RagitError("ARTIFACT_NOT_FOUND", f"no knowledge artifact {art_id!r}", {"artifactId": art_id},
                      "ragit artifact list")


def _get(root: Path, config, art_id: str, warnings: list[str]) -> Artifact:
    artifact = find_artifact(root, config, art_id, warnings)
    if artifact is None:
        raise _not_found(art_id)
    return artifact


def _output(artifact: Artifact) -> dict[str, Any]:
    """Records are masked on write; a hand edit may still hold a secret, so outputs re-mask."""
    return mask_value(artifact.to_dict())[0]


def list_artifacts(root: Path, config, scope: str | None = None, status: str | None = None) -> dict[str, Any]:
    """``{artifacts, warnings}``: records filtered by scope/status, newest ``updatedAt`` first, then id."""
    from ..contract.inputs import Validator

    v = Validator("artifact list")
    scope = v.choice(scope, "--scope", SCOPES) if scope is not None else None
    status = v.choice(status, "--status", STATUSES) if status is not None else None
    records, warnings = load_artifacts(root, config)
    chosen = [a for a in records if (scope is None or a.scope == scope) and (status is None or a.status == status)]
    chosen.sort(key=lambda a: a.artifact_id)
    chosen.sort(key=lambda a: a.updated_datetime, reverse=True)
    return {"artifacts": [_output(a) for a in chosen], "warnings": warnings}


def show(root: Path, config, art_id: str) -> dict[str, Any]:
    """``{artifact, warnings}`` for one id; ``ARTIFACT_NOT_FOUND`` when unknown or unreadable."""
    warnings: list[str] = []
    return {"artifact": _output(_get(root, config, art_id, warnings)), "warnings": warnings}


# ------------------------------------------------------------------ capture

@dataclass(frozen=True)
class _EvidenceInput:
    path: str
    start_line: int | None
    end_line: int | None
    excerpt: str | None  # None: read from the cited lines (a ``handle`` ref)
    handle: str | None = None


@dataclass(frozen=True)
class CaptureInput:
    """A validated ``artifact capture`` payload (unmasked)."""

    scope: str
    kind: str
    title: str
    text: str
    confidence: float | None
    session_id: str | None
    evidence: tuple[_EvidenceInput, ...]


def _line(v, value: Any, field: str) -> int | None:
    return None if value is None else v.json_positive_int(value, field)


def parse_capture(payload: Any) -> CaptureInput:
    """Validate a capture payload against its allow-list (cli-contract §3.3); nothing is read or written."""
    from ..contract.inputs import Validator, check_control_characters, validate_repo_path

    v = Validator("artifact capture")
    obj = v.allowed_keys(payload, CAPTURE_FIELDS)
    check_control_characters(obj, "input", v)
    for key in ("scope", "kind", "title", "text"):
        if obj.get(key) is None:
            raise v.fail(f"input.{key}", "required", f"input.{key} is required")
    scope = v.choice(obj["scope"], "input.scope", SCOPES)
    confidence = obj.get("confidence")
    if confidence is not None:
        if isinstance(confidence, bool) or not isinstance(confidence, (int, float)):
            raise v.fail("input.confidence", "invalid_format", "input.confidence must be a number or null")
        if not (math.isfinite(confidence) and 0 <= confidence <= 1):
            raise v.fail("input.confidence", "out_of_range", "input.confidence must be between 0 and 1",
                         value=confidence if math.isfinite(confidence) else str(confidence))
    session_id = obj.get("sessionId")
    if session_id is not None:
        session_id = v.text(session_id, "input.sessionId")
    raw_evidence = obj.get("evidence")
    if raw_evidence is not None and not isinstance(raw_evidence, list):
        raise v.fail("input.evidence", "invalid_format", "input.evidence must be an array")
    evidence = []
    for i, item in enumerate(raw_evidence or []):
        field = f"input.evidence[{i}]"
        item = v.allowed_keys(item, EVIDENCE_FIELDS, field)
        if item.get("handle") is not None:  # memory §10: bound to a blob at capture
            for key in ("path", "startLine", "endLine"):
                if item.get(key) is not None:
                    raise v.fail(f"{field}.{key}", "usage", f"{field}: give either handle or path and lines")
            excerpt = v.text(item["excerpt"], f"{field}.excerpt") if item.get("excerpt") is not None else None
            evidence.append(_EvidenceInput("", None, None, excerpt, v.text(item["handle"], f"{field}.handle")))
            continue
        for key in ("path", "excerpt"):
            if item.get(key) is None:
                raise v.fail(f"{field}.{key}", "required", f"{field}.{key} is required")
        start = _line(v, item.get("startLine"), f"{field}.startLine")
        end = _line(v, item.get("endLine"), f"{field}.endLine")
        if (start is None) != (end is None):
            missing = "endLine" if end is None else "startLine"
            raise v.fail(f"{field}.{missing}", "required", "startLine and endLine go together")
        if start is not None and end < start:
            raise v.fail(f"{field}.endLine", "out_of_range", f"{field}.endLine is before startLine", value=end)
        evidence.append(_EvidenceInput(validate_repo_path(item["path"], v, f"{field}.path"), start, end,
                                       v.text(item["excerpt"], f"{field}.excerpt")))
    if scope == "evidence" and not evidence:
        raise v.fail("input.evidence", "required", "an evidence artifact needs at least one evidence ref")
    return CaptureInput(scope=scope, kind=v.text(obj["kind"], "input.kind"), title=v.text(obj["title"], "input.title"),
                        text=v.text(obj["text"], "input.text"), confidence=confidence, session_id=session_id,
                        evidence=tuple(evidence))


def _head(root: Path) -> tuple[str | None, Any, list[str]]:
    """(HEAD sha, Git, warnings): null outside a repository or on an unborn HEAD, with a warning."""
    from ..gitsnap.git import Git, find_root
    from ..gitsnap.refs import head_sha

    if find_root(root) is None:
        return None, None, ["not a git repository: boundSha is null"]
    git = Git(root)
    sha = head_sha(git)
    return sha, git, ([] if sha else ["HEAD has no commit yet: boundSha is null"])


def _committed_paths(git, head: str | None, paths: list[str]) -> set[str]:
    """The evidence paths that are files of ``head`` with no uncommitted change (read-only plumbing)."""
    if git is None or head is None or not paths:
        return set()
    from ..gitsnap.git import decode_path

    listing = git.run("--literal-pathspecs", "ls-tree", "-z", "--full-tree", head, "--", *paths)
    listed = set()
    for record in decode_path(listing).split("\0"):
        meta, _, path = record.partition("\t")
        if meta.split(" ")[1:2] == ["blob"]:
            listed.add(path)
    diff = git.run("--literal-pathspecs", "diff-index", "--name-only", "-z", head, "--", *paths)
    changed = {decode_path(p) for p in diff.split(b"\0") if p}
    return listed - changed


def capture(root: Path, config, payload: Any, *, dry_run: bool = False) -> dict[str, Any]:
    """Validate, mask and record a new artifact (status ``captured``); ``{artifact, warnings}``.

    Ids and hashes are computed on the masked values, so they can be re-derived from the file.
    An evidence ref's ``sourceSha`` is HEAD when its path is a clean file of HEAD (so the excerpt
    can be verified against that commit), else null. Capturing the same content at the same
    instant yields the same id: the existing record is returned unchanged.
    """
    inp = parse_capture(payload)
    head, git, warnings = _head(Path(root))
    inp = replace(inp, evidence=tuple(_bind_handle(root, git, config, head, e, i)
                                      for i, e in enumerate(inp.evidence)))
    committed = _committed_paths(git, head, sorted({e.path for e in inp.evidence if e.handle is None}))
    from .evidence import blobs_at

    blob_of = blobs_at(git, head, sorted(committed)) if committed and head else {}
    masked = 0

    def m(text: str) -> str:
        nonlocal masked
        result = mask_text(text)
        masked += result.count
        return result.text

    created = now_iso()
    kind, title, text = m(inp.kind), m(inp.title), m(inp.text)
    evidence = tuple(_evidence_record(i, e, head, committed, blob_of, m) for i, e in enumerate(inp.evidence, 1))
    art_id = artifact_id(inp.scope, kind, title, text, created)
    artifact = Artifact(
        artifact_id=art_id, scope=inp.scope, kind=kind, title=title, text=text, status="captured",
        confidence=inp.confidence, session_id=None if inp.session_id is None else m(inp.session_id),
        bound_sha=head, evidence=evidence, superseded_by=None, created_at=created, updated_at=created,
        history=({"status": "captured", "at": created},),
    )
    if masked:
        warnings.append(f"masked {masked} secret(s) in the payload before recording it")
    existing = find_artifact(root, config, art_id, warnings)
    if existing is not None:
        warnings.append(f"artifact {art_id} already exists; left unchanged")
        return {"artifact": _output(existing), "warnings": warnings}
    _write(root, config, artifact, dry_run, warnings)
    return {"artifact": artifact.to_dict(), "warnings": warnings}


def _bind_handle(root: Path, git, config, head: str | None, e: _EvidenceInput, i: int) -> _EvidenceInput:
    """A ``handle`` ref resolved to path, lines, commit and blob (memory §10); the excerpt defaults
    to the cited lines. Other refs pass unchanged."""
    if e.handle is None:
        return e
    from .evidence import STORED, bind_evidence

    field = f"input.evidence[{i}].handle"
    (bound,) = bind_evidence(root, git, config, [e.handle], head, "artifact capture", field)
    m = STORED.fullmatch(bound["handle"])
    assert m is not None
    start, end = int(m["start"]), int(m["end"])
    excerpt = e.excerpt
    if excerpt is None:
        from ..gitsnap.blobs import BlobReader
        from ..ingest.text import decode_blob, split_lines

        with BlobReader(git) as blobs:
            text, _ = decode_blob(blobs.read(m["blob"]))
        excerpt = "\n".join(split_lines(text or "")[start - 1 : end])
    return _EvidenceInput(m["path"], start, end, excerpt, f"{bound['commitSha']}|{m['blob']}")


def _evidence_record(i: int, e: _EvidenceInput, head: str | None, committed: set[str], blob_of: dict[str, str],
                     m) -> Evidence:
    """One evidence ref: blob-bound when it names lines of a committed file (memory §10)."""
    if e.handle is not None:  # bound above: "<commit>|<blob>"
        commit, blob = e.handle.split("|", 1)
        return Evidence(f"ev-{i}", m(e.path), e.start_line, e.end_line, commit, m(e.excerpt or ""), blob)
    sha = head if e.path in committed else None
    blob = blob_of.get(e.path) if sha is not None and e.start_line is not None else None
    return Evidence(f"ev-{i}", m(e.path), e.start_line, e.end_line, sha, m(e.excerpt or ""), blob)


def _write(root: Path, config, artifact: Artifact, dry_run: bool, warnings: list[str]) -> None:
    if dry_run:
        warnings.append("dry-run: nothing was written")
        return
    from .working import write_masked_json

    write_masked_json(record_path(root, config, artifact.scope, artifact.artifact_id), artifact.to_dict())


# ------------------------------------------------------------------ lifecycle

def transition(root: Path, config, art_id: str, target: str, *, by: str | None = None,
               dry_run: bool = False) -> dict[str, Any]:
    """Move an artifact to ``target`` along an allowed edge; ``{artifact, warnings}``.

    Checks, in order: ``--by`` (supersede only, required, not the id itself) → both ids exist →
    the edge is allowed. Every failure happens before anything is written.
    """
    from ..contract.inputs import Validator

    command = COMMAND_OF.get(target)
    if command is None:
        raise ValueError(f"{target!r} is not a transition target")
    v = Validator(f"artifact {command}")
    if target == "superseded":
        if by is None or not by.strip():
            raise v.fail("--by", "required", "supersede needs --by <replacing artifact id>")
        by = v.text(by, "--by")
        if by == art_id:
            raise v.fail("--by", "invalid_format", "an artifact cannot supersede itself", value=by)
    elif by is not None:
        raise v.fail("--by", "usage", "--by only applies to supersede")
    warnings: list[str] = []
    artifact = _get(root, config, art_id, warnings)
    if by is not None:
        _get(root, config, by, warnings)
    if target not in TRANSITIONS[artifact.status]:
        raise RagitError(
            "ARTIFACT_TRANSITION_INVALID", f"{art_id} cannot go from {artifact.status} to {target}",
            {"artifactId": art_id, "from": artifact.status, "to": target}, "ragit artifact list",
        )
    at = now_iso()
    updated = replace(
        artifact, status=target, updated_at=at, history=artifact.history + ({"status": target, "at": at},),
        superseded_by=by if target == "superseded" else artifact.superseded_by,
    )
    _write(root, config, updated, dry_run, warnings)
    return {"artifact": _output(updated), "warnings": warnings}
