"""The retrieval hit: one scored candidate with its citation and provenance labels."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any


@dataclass
class Hit:
    path: str
    start_line: int | None
    end_line: int | None
    section_title: str
    doc_type: str | None
    score_final: float
    score_vector: float
    score_keyword: float
    citation: dict[str, Any]
    scope: str
    origin_type: str
    artifact_id: str | None
    artifact_kind: str | None
    authority: str
    confidence: float | None
    trust: str
    text: str
    chunk_id: str
    breakdown: dict[str, Any]
    flags: list[str] = field(default_factory=list)
    # secrets hidden by read-time re-masking, per field name ("text", "sectionTitle", "path")
    masked_fields: dict[str, int] = field(default_factory=dict)
    # the masking version ingest masked ``text`` with (None: not from the store, or unmasked)
    masked_with: str | None = None
    # overlay items only (memory §10): provenance label and the evidence handles that moved
    provenance: str | None = None
    stale_evidence: list[str] = field(default_factory=list)

    @property
    def demotion(self) -> int:
        """Rank group ahead of the score: stale items after items without repository evidence,
        both after everything resting on current repository evidence (memory §10)."""
        if self.stale_evidence:
            return 2
        return 0 if self.provenance in (None, "repository") else 1

    @property
    def citation_id(self) -> str:
        return self.citation["id"]

    def handle(self) -> str:
        """Display form ``path@<sha12>:L<start>-L<end>`` for repository chunks; the citation id for
        artifacts and evidence (their path is not a repository path) or without lines or sha."""
        sha = self.citation.get("sourceSha")
        if self.citation.get("sourceType") != "document" or self.start_line is None or self.end_line is None or not sha:
            return self.citation_id
        return f"{self.path}@{sha[:12]}:L{self.start_line}-L{self.end_line}"

    def location(self) -> str:
        """Text-rendering location: the handle, or just the path when it has no line range or sha."""
        sha = self.citation.get("sourceSha")
        if self.start_line is None or self.end_line is None or not sha:
            return f"`{self.path}`"
        return f"`{self.path}@{sha[:12]}:L{self.start_line}-L{self.end_line}`"
