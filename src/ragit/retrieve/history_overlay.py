"""Commit history as overlay candidates for ``query --scope history`` (knowledge §12.8).

The history index (ragit.history.index, built by ``ingest``) is searched for the question among
the commits reachable from the selected snapshot's commit; each entry it returns becomes an
:class:`~ragit.retrieve.sources.OverlayCandidate` that retrieval scores like any overlay:
``scope: "history"``, ``originType: "commit"``, path = the hunk's file (a message: the 12-hex
SHA), section title = the subject, lines = the hunk's new side, ``trust: "repository"``, a
``commit`` citation whose version is the commit SHA, recency from the committer time (§12.5).
Authority follows §12.5's rule for a scope it does not name: 0.6, label ``history``.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path
from typing import TYPE_CHECKING, Any

from .scoring import authority_score
from .sources import HISTORY_SCOPE, OverlayCandidate

if TYPE_CHECKING:  # pragma: no cover
    from ..gitsnap.git import Git
    from ..history.index import Entry

AUTHORITY_LABEL = "history"


def commit_citation(entry: "Entry") -> dict[str, Any]:
    """``commit`` citation: source id = the SHA (message) or ``<sha>:<path>:<hunk ordinal>``."""
    from ..ingest.ids import citation_id

    source_id = entry.sha if entry.kind == "message" else f"{entry.sha}:{entry.path}:{entry.ordinal}"
    return {"id": citation_id("commit", source_id, entry.sha), "sourceType": "commit", "sourceId": source_id,
            "sourceVersion": entry.sha, "sourceSha": entry.sha}


def candidate(entry: "Entry") -> OverlayCandidate:
    """One history entry (already masked when it was indexed) as an overlay candidate."""
    from ..security.labels import flags_for

    citation = commit_citation(entry)
    return OverlayCandidate(
        chunk_id=citation["sourceId"], path=entry.path, start_line=entry.start_line, end_line=entry.end_line,
        section_title=entry.subject, text=entry.text, citation=citation, scope=HISTORY_SCOPE,
        artifact_id=None, artifact_kind=None, authority=AUTHORITY_LABEL,
        authority_score=authority_score(HISTORY_SCOPE, AUTHORITY_LABEL), status="committed", confidence=None,
        trust="repository", updated_at=datetime.fromtimestamp(entry.committed, timezone.utc),
        flags=tuple(flags_for(entry.text)), origin_type="commit",
    )


@dataclass(frozen=True)
class HistoryOverlay:
    """The history index of one repository as the overlay source of ``--scope history``: its
    candidates depend on the selected snapshot and the question, so retrieval calls
    :meth:`candidates_at` (a :class:`~ragit.retrieve.sources.SnapshotOverlaySource`)."""

    root: Path
    git: "Git"

    def candidates(self, scope: str, warnings: list[str], snapshot_sha: str | None = None) -> list[OverlayCandidate]:
        return []  # nothing without a snapshot and a question

    def candidates_at(self, scope: str, warnings: list[str], sha: str, masked_question: str) -> list[OverlayCandidate]:
        if scope != HISTORY_SCOPE:
            return []
        from ..history.index import search
        from .search import query_terms

        found = search(self.git, self.root, sha, query_terms(masked_question))
        if found.warning:
            warnings.append(found.warning)
        return [candidate(e) for e in found.entries]
