"""Hit projection by view (knowledge §12.7) and the read-time re-masking of projected hits."""

from __future__ import annotations

import re
from typing import Any, Sequence

from ..retrieve.hits import Hit

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
    if view == "full":
        out["text"] = hit.text
    else:
        out["excerpt"] = excerpt(hit.text, EXCERPT_CHARS[view])
    if explain:
        out["scoreBreakdown"] = hit.breakdown
    return out


def remask_hits(hits: Sequence[Hit]) -> None:
    """Re-mask every string field of the hits in place, before projection (knowledge §10.2).

    Each hit records how many secrets were hidden per field, so a redaction summary can name
    the projected field paths of exactly the hits it reports.
    """
    from ..security.masking import mask_text

    for hit in hits:
        code = hit.doc_type == "code"
        for attr, name in (("path", "path"), ("section_title", "sectionTitle"), ("text", "text")):
            result = mask_text(getattr(hit, attr), code=code)
            if result.count:
                setattr(hit, attr, result.text)
                hit.masked_fields[name] = hit.masked_fields.get(name, 0) + result.count


def hits_redaction(hits: Sequence[Hit], view: str, prefix: str = "hits") -> tuple[int, list[str]]:
    """Count and projected field paths (``hits[0].excerpt``, ...) of re-masked hit strings."""
    count = 0
    sources: list[str] = []
    for i, hit in enumerate(hits):
        for name in ("path", "sectionTitle", "text"):
            n = hit.masked_fields.get(name, 0)
            if not n:
                continue
            count += n
            field = name if name != "text" else ("text" if view == "full" else "excerpt")
            sources.append(f"{prefix}[{i}].{field}")
    return count, sources
