"""Knowledge artifacts as overlay candidates (knowledge §12.8): the memory side of the overlay.

Snapshot content is always durable; what an agent captured reaches ``query`` and ``context
pack`` only through a non-durable scope and only while its status allows it. This module reads
the records under ``memory.artifacts_dir``, keeps the eligible ones and turns them into the
:class:`~ragit.retrieve.sources.OverlayCandidate` records that retrieval scores; retrieval gets
them through :class:`ArtifactOverlay`, an ``OverlaySource``, and never reads artifacts itself.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Sequence

from ..retrieve.scoring import authority_score
from ..retrieve.sources import OVERLAY_SCOPES, OverlayCandidate
from .artifacts import Artifact, Evidence, load_artifacts, relative_path

if TYPE_CHECKING:  # pragma: no cover
    from ..config import Config

EVIDENCE_STATUSES = ("captured", "reviewed")
BODY_STATUSES = ("reviewed", "promoted")
EVIDENCE_TITLE = "Evidence"


def _citation(source_type: str, source_id: str, version: str, sha: str | None) -> dict[str, Any]:
    from ..ingest.ids import citation_id

    return {"id": citation_id(source_type, source_id, version), "sourceType": source_type, "sourceId": source_id,
            "sourceVersion": version, "sourceSha": sha}


def body_citation(artifact: Artifact) -> dict[str, Any]:
    """``artifact`` row of knowledge §9: version = content hash, sha = the bound SHA."""
    return _citation("artifact", artifact.artifact_id, artifact.content_hash, artifact.bound_sha)


def evidence_citation(artifact: Artifact, evidence: Evidence) -> dict[str, Any]:
    """``evidence`` row of knowledge §9: the evidence's own SHA, else the artifact's bound SHA."""
    return _citation("evidence", f"{artifact.artifact_id}:{evidence.evidence_id}", evidence.content_hash,
                     evidence.source_sha or artifact.bound_sha)


def _masked(text: str) -> str:
    from ..security.masking import mask_text

    return mask_text(text).text


def _flags(text: str) -> tuple[str, ...]:
    from ..security.labels import flags_for

    return tuple(flags_for(text))


def _body(artifact: Artifact, path: str) -> OverlayCandidate:
    text = _masked(artifact.text)
    return OverlayCandidate(
        chunk_id=artifact.artifact_id, path=path, start_line=None, end_line=None,
        section_title=_masked(artifact.title), text=text, citation=body_citation(artifact), scope=artifact.scope,
        artifact_id=artifact.artifact_id, artifact_kind=artifact.kind, authority=artifact.authority,
        authority_score=authority_score(artifact.scope, artifact.authority, artifact.status),
        status=artifact.status, confidence=artifact.confidence, trust="artifact",
        updated_at=artifact.updated_datetime, flags=_flags(text),
    )


def _evidence(artifact: Artifact, evidence: Evidence, path: str) -> OverlayCandidate:
    text = _masked(evidence.excerpt)
    return OverlayCandidate(
        chunk_id=f"{artifact.artifact_id}:{evidence.evidence_id}", path=f"{path}#{evidence.evidence_id}",
        start_line=evidence.start_line, end_line=evidence.end_line, section_title=EVIDENCE_TITLE, text=text,
        citation=evidence_citation(artifact, evidence), scope="evidence", artifact_id=artifact.artifact_id,
        artifact_kind=artifact.kind, authority=artifact.authority,
        authority_score=authority_score("evidence", artifact.authority, artifact.status),
        status=artifact.status, confidence=artifact.confidence, trust="evidence",
        updated_at=artifact.updated_datetime, flags=_flags(text), source_path=_masked(evidence.path),
    )


def eligible(artifact: Artifact, scope: str) -> bool:
    """Whether ``artifact`` contributes to the overlay of ``scope`` (status and scope match)."""
    if scope == "evidence":
        return artifact.status in EVIDENCE_STATUSES and bool(artifact.evidence)
    return artifact.status in BODY_STATUSES and scope in ("all", artifact.scope)


def overlay_candidates(root: Path, config: Config, scope: str | Sequence[str], *,
                       warnings: list[str] | None = None) -> list[OverlayCandidate]:
    """Candidates of ``scope`` (or of several scopes, in that order, from one read of the
    artifacts): one per evidence ref for ``evidence``, one per artifact otherwise.

    ``durable`` has no overlay. Unreadable records are skipped; their warnings go to
    ``warnings`` when given. Candidates come in a stable order (artifact id, then evidence).
    """
    scopes = [s for s in ((scope,) if isinstance(scope, str) else scope) if s != "durable"]
    for s in scopes:
        if s not in OVERLAY_SCOPES:
            raise ValueError(f"unknown scope {s!r}")
    if not scopes:
        return []
    artifacts, skipped = load_artifacts(root, config)
    if warnings is not None:
        warnings.extend(skipped)
    ordered = sorted(artifacts, key=lambda a: a.artifact_id)
    out: list[OverlayCandidate] = []
    for s in scopes:
        for artifact in ordered:
            if not eligible(artifact, s):
                continue
            path = relative_path(config, artifact.scope, artifact.artifact_id)
            if s == "evidence":
                out.extend(_evidence(artifact, ev, path) for ev in artifact.evidence)
            else:
                out.append(_body(artifact, path))
    return out


def _stored(ev: Evidence) -> dict[str, Any]:
    """An artifact evidence ref in the stored-handle form of memory §10."""
    handle = ev.handle
    if handle is None:  # a log excerpt or an uncommitted file: what a tool printed
        return {"source": "tool_output", "ref": f"{ev.path}#{ev.evidence_id}"}
    return {"handle": handle, "commitSha": ev.source_sha, "source": "repository"}


def label_candidates(candidates: list[OverlayCandidate], artifacts: dict[str, Artifact], git: Any,
                     commit: str | None) -> list[OverlayCandidate]:
    """Provenance and stale evidence of each candidate at ``commit`` (memory §10): a body rests on
    all its artifact's evidence, an evidence-ref candidate on its own ref."""
    from dataclasses import replace

    from .evidence import assess, open_check

    check = open_check(git, commit)
    try:
        out = []
        for cand in candidates:
            artifact = artifacts.get(cand.artifact_id)
            if artifact is None:
                out.append(cand)
                continue
            refs = artifact.evidence
            if cand.trust == "evidence":
                refs = tuple(e for e in refs if cand.chunk_id == f"{artifact.artifact_id}:{e.evidence_id}")
            a = assess([_stored(e) for e in refs], check)
            out.append(replace(cand, provenance=a.provenance,
                               stale_evidence=tuple(f"{s['handle']} {s['status']}" for s in a.stale_evidence)))
        return out
    finally:
        if check is not None:
            check.__exit__(None, None, None)


@dataclass(frozen=True)
class ArtifactOverlay:
    """The artifacts of one repository as the ``OverlaySource`` that ``retrieve`` is handed."""

    root: Path
    config: Config
    git: Any = None  # labels stale evidence when given (memory §10)

    def candidates(self, scope: str, warnings: list[str], snapshot_sha: str | None = None) -> list[OverlayCandidate]:
        found = overlay_candidates(self.root, self.config, scope, warnings=warnings)
        if not found:
            return found
        artifacts, _ = load_artifacts(self.root, self.config)
        return label_candidates(found, {a.artifact_id: a for a in artifacts}, self.git, snapshot_sha)
