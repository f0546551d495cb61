"""What retrieval accepts from outside the snapshot (knowledge §12.8): overlay candidates.

Content that is not part of a commit (knowledge artifacts today) reaches ``query`` and ``context
pack`` only as :class:`OverlayCandidate` records handed over by an :class:`OverlaySource`. The
layer that owns such content implements the source and passes it to ``retrieve``, so retrieval
ranks the candidates without knowing where they are kept: it never imports memory.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, Protocol, Sequence

from .scoring import recency_score

# The query scopes an overlay source can be asked for (``durable`` has no overlay).
OVERLAY_SCOPES = ("session", "harness", "evidence", "all")
# Commit messages and diff hunks (ragit.retrieve.history_overlay); not part of ``all``.
HISTORY_SCOPE = "history"


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
    artifact_id: str | None  # None for commit history
    artifact_kind: str | None
    authority: str  # the label, e.g. ``reviewed_harness``
    authority_score: float  # knowledge §12.5; a promoted artifact scores 1.0
    status: str
    confidence: float | None
    trust: str  # ``artifact`` for bodies, ``evidence`` for evidence refs
    updated_at: datetime
    flags: tuple[str, ...]
    source_path: str | None = None  # the evidence ref's repository path (indexed for BM25)
    origin_type: str = "artifact"
    # memory §10: ``repository`` (rests on blob-bound evidence), ``untrusted`` or ``none``; and the
    # evidence handles that no longer match the snapshot read (non-empty = stale)
    provenance: str = "repository"
    stale_evidence: tuple[str, ...] = ()

    @property
    def demotion(self) -> int:
        """Rank group (memory §10): 0 ranks normally, 1 no repository evidence, 2 stale (last)."""
        return 2 if self.stale_evidence else (0 if self.provenance == "repository" else 1)

    def recency(self, now: datetime) -> float:
        """Recency from the artifact's ``updatedAt`` (knowledge §12.5)."""
        return recency_score(self.updated_at, now)


class OverlaySource(Protocol):
    """Where the candidates of a non-durable scope come from; ``retrieve`` asks it once per read."""

    def candidates(self, scope: str, warnings: list[str], snapshot_sha: str | None = None
                   ) -> Sequence[OverlayCandidate]:
        """The candidates of ``scope`` (one of :data:`OVERLAY_SCOPES`) in a stable order; a record
        that cannot be read is skipped with a warning appended to ``warnings``. ``snapshot_sha`` is
        the commit of the read, against which the source labels stale evidence."""
        ...


class SnapshotOverlaySource(Protocol):
    """An overlay source whose candidates depend on the selected snapshot and the question (commit
    history: too many to hand over whole); ``retrieve`` prefers :meth:`candidates_at` when a
    source has it."""

    def candidates_at(self, scope: str, warnings: list[str], sha: str,
                      masked_question: str) -> Sequence[OverlayCandidate]:
        """The candidates of ``scope`` for ``masked_question`` at snapshot commit ``sha``."""
        ...
