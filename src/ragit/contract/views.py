"""Hit projection by view (knowledge §12.7), and the query payload built from it."""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from ..retrieve.hits import Hit

if TYPE_CHECKING:  # pragma: no cover
    from ..retrieve.query import Retrieval

VIEWS = ("minimal", "default", "full")
EXCERPT_CHARS = {"minimal": 120, "default": 200}
_WS = re.compile(r"\s+")


def excerpt(text: str, limit: int) -> str:
    """Whitespace runs collapsed and trimmed; longer than ``limit`` code points → cut + ``...``."""
    flat = _WS.sub(" ", text).strip()
    if len(flat) > limit:
        return flat[:limit] + "..."
    return flat


def project_hit(hit: Hit, view: str, *, explain: bool = False) -> dict[str, Any]:
    """The JSON object of one hit in ``view``; ``scoreBreakdown`` only with ``explain``."""
    out: dict[str, Any] = {
        "path": hit.path,
        "startLine": hit.start_line,
        "endLine": hit.end_line,
        "sectionTitle": hit.section_title,
    }
    if view != "minimal":
        out["docType"] = hit.doc_type
    out["scoreFinal"] = hit.score_final
    if view != "minimal":
        out["scoreVector"] = hit.score_vector
        out["scoreKeyword"] = hit.score_keyword
    out["citation"] = dict(hit.citation)
    out["scope"] = hit.scope
    out["originType"] = hit.origin_type
    out["artifactId"] = hit.artifact_id
    out["artifactKind"] = hit.artifact_kind
    out["authority"] = hit.authority
    out["confidence"] = hit.confidence
    out["trust"] = hit.trust
    out["flags"] = list(hit.flags)
    if hit.provenance is not None:  # overlay items (memory §10)
        out["provenance"] = hit.provenance
        out["stale"] = bool(hit.stale_evidence)
        if hit.stale_evidence:
            out["staleEvidence"] = list(hit.stale_evidence)
    if view == "full":
        out["text"] = hit.text
    else:
        out["excerpt"] = excerpt(hit.text, EXCERPT_CHARS[view])
    if explain:
        out["scoreBreakdown"] = hit.breakdown
    return out


@dataclass
class QueryResult:
    retrieval: "Retrieval"
    explain: bool

    @property
    def hits(self) -> list[Hit]:
        return self.retrieval.hits

    @property
    def warnings(self) -> list[str]:
        return self.retrieval.warnings

    def to_dict(self, view: str = "default") -> dict[str, Any]:
        r = self.retrieval
        return {
            "query": r.text,
            "scope": r.scope,
            "snapshotSha": r.snapshot_sha,
            "snapshot": r.selection.block(),
            "explain": self.explain,
            "hits": [project_hit(h, view, explain=self.explain) for h in r.hits],
            "warnings": list(r.warnings),
            "redactionSummary": r.redaction(view, "query"),
        }
