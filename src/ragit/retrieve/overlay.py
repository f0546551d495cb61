"""The explicit artifact overlay (knowledge §12.8): knowledge artifacts as retrieval candidates.

Snapshot content is always durable; what an agent captured reaches ``query`` and ``context
pack`` only through a non-durable scope and only while its status allows it. This module
turns the records under ``memory.artifacts_dir`` into candidates and scores them with the same
inputs as snapshot chunks (cosine and raw BM25), so the caller can normalise keyword scores
over both sets together. Nothing here writes to disk: BM25 runs on an in-memory FTS5 table.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any, Sequence

from .scoring import authority_score, recency_score

if TYPE_CHECKING:  # pragma: no cover
    from ..embed.base import Embedder
    from ..memory.artifacts import Artifact, Evidence
    from .search import RetrievalParams

OVERLAY_SCOPES = ("session", "harness", "evidence", "all")
EVIDENCE_STATUSES = ("captured", "reviewed")
BODY_STATUSES = ("reviewed", "promoted")
EVIDENCE_TITLE = "Evidence"

@dataclass(frozen=True)
class OverlayCandidate:
    """Everything a hit needs from one artifact body or one evidence ref (strings already masked)."""

    chunk_id: str  # retrieval identity: the artifact id, or ``<artifactId>:<evidenceId>``
    path: str  # the artifact file, or ``<artifact file>#<evidenceId>``
    start_line: int | None
    end_line: int | None
    section_title: str
    text: str
    citation: dict[str, Any] = field(hash=False)
    scope: str
    artifact_id: str
    artifact_kind: str
    authority: str  # the label, e.g. ``reviewed_harness``
    authority_score: float  # knowledge §12.5; a promoted artifact scores 1.0
    status: str
    confidence: float | None
    trust: str  # ``artifact`` for bodies, ``evidence`` for evidence refs
    updated_at: datetime
    flags: tuple[str, ...]
    source_path: str | None = None  # the evidence ref's repository path (indexed for BM25)
    origin_type: str = "artifact"

    def recency(self, now: datetime) -> float:
        """Recency from the artifact's ``updatedAt`` (knowledge §12.5)."""
        return recency_score(self.updated_at, now)


def _citation(source_type: str, source_id: str, version: str, sha: str | None) -> dict[str, Any]:
    from ..ingest.ids import citation_id

    return {"id": citation_id(source_type, source_id, version), "sourceType": source_type, "sourceId": source_id,
            "sourceVersion": version, "sourceSha": sha}


def body_citation(artifact: "Artifact") -> dict[str, Any]:
    """``artifact`` row of knowledge §9: version = content hash, sha = the bound SHA."""
    return _citation("artifact", artifact.artifact_id, artifact.content_hash, artifact.bound_sha)


def evidence_citation(artifact: "Artifact", evidence: "Evidence") -> dict[str, Any]:
    """``evidence`` row of knowledge §9: the evidence's own SHA, else the artifact's bound SHA."""
    return _citation("evidence", f"{artifact.artifact_id}:{evidence.evidence_id}", evidence.content_hash,
                     evidence.source_sha or artifact.bound_sha)


def _masked(text: str) -> str:
    from ..security.masking import mask_text

    return mask_text(text).text


def _flags(text: str) -> tuple[str, ...]:
    from ..security.labels import flags_for

    return tuple(flags_for(text))


def _body(artifact: "Artifact", path: str) -> OverlayCandidate:
    text = _masked(artifact.text)
    return OverlayCandidate(
        chunk_id=artifact.artifact_id, path=path, start_line=None, end_line=None,
        section_title=_masked(artifact.title), text=text, citation=body_citation(artifact), scope=artifact.scope,
        artifact_id=artifact.artifact_id, artifact_kind=artifact.kind, authority=artifact.authority,
        authority_score=authority_score(artifact.scope, artifact.authority, artifact.status),
        status=artifact.status, confidence=artifact.confidence, trust="artifact",
        updated_at=artifact.updated_datetime, flags=_flags(text),
    )


def _evidence(artifact: "Artifact", evidence: "Evidence", path: str) -> OverlayCandidate:
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


def eligible(artifact: "Artifact", scope: str) -> bool:
    """Whether ``artifact`` contributes to the overlay of ``scope`` (status and scope match)."""
    if scope == "evidence":
        return artifact.status in EVIDENCE_STATUSES and bool(artifact.evidence)
    return artifact.status in BODY_STATUSES and scope in ("all", artifact.scope)


def overlay_candidates(root: Path, config, scope: str | Sequence[str], *,
                       warnings: list[str] | None = None) -> list[OverlayCandidate]:
    """Candidates of ``scope`` (or of several scopes, in that order, from one read of the
    artifacts): one per evidence ref for ``evidence``, one per artifact otherwise.

    ``durable`` has no overlay. Unreadable records are skipped; their warnings go to
    ``warnings`` when given. Candidates come in a stable order (artifact id, then evidence).
    """
    from ..memory.artifacts import load_artifacts, relative_path

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


def fts_document(candidate: OverlayCandidate) -> tuple[str, str, str]:
    """``(text, title, path)`` as the candidate is indexed for BM25."""
    return candidate.text, candidate.section_title, _fts_path(candidate)


def _fts_path(candidate: OverlayCandidate) -> str:
    """Evidence refs are also found by the file they point at, not only by the artifact file."""
    if candidate.source_path is None:
        return candidate.path
    return f"{candidate.path} {candidate.source_path}"


def keyword_raw(candidates: Sequence[OverlayCandidate], masked_question: str, term_repeats: int = 1) -> list[float]:
    """Raw ``−bm25`` per candidate (0.0 when it does not match), with the snapshot's FTS rules,
    in an index of their own (used when no snapshot store is available)."""
    from ..store.bm25 import in_memory_scores
    from .search import query_terms

    return in_memory_scores([fts_document(c) for c in candidates], query_terms(masked_question, term_repeats))


def score_overlay(
    candidates: Sequence[OverlayCandidate], masked_question: str, embedder: "Embedder | None",
    raw: Sequence[float] | None = None, params: "RetrievalParams | None" = None,
) -> list[tuple[OverlayCandidate, float | None, float]]:
    """``(candidate, cosine, raw BM25)`` per candidate, in input order.

    ``raw`` comes from the snapshot store when there is one (shared corpus statistics);
    without it the candidates are scored in an in-memory index of their own (degraded recall).
    The cosine is None without an embedder (the candidate is then scored in keyword mode).
    Embedding input is ``title LF text``, as for snapshot chunks (knowledge §11.2); ``params``
    carries the question's passage split and term repeats, so artifacts and snapshot chunks are
    scored alike.
    """
    from .search import question_cosines

    repeats = params.term_repeats if params is not None else 1
    raw = list(raw) if raw is not None else keyword_raw(candidates, masked_question, repeats)
    if embedder is None or not candidates:
        return [(c, None, r) for c, r in zip(candidates, raw)]
    matrix = embedder.embed([f"{c.section_title}\n{c.text}" for c in candidates])
    cosines = question_cosines(matrix, embedder, masked_question, params.passage_words if params else 0)
    return [(c, float(v), r) for c, v, r in zip(candidates, cosines, raw)]
