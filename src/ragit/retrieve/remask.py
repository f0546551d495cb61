"""Read-time re-masking of hits (knowledge §10.2) and the redaction summary's hit part (§10.3).

Every output path re-masks. Hit text that ingest masked with the current ``MASKING_VERSION`` is
already masked (masking is idempotent: the output would be identical), so only the fields that
did not come masked from the store are masked again: paths, titles, and any text not from the
store or masked by an older rule set.
"""

from __future__ import annotations

from functools import lru_cache
from typing import Iterable, Sequence

from ..security.masking import MASKING_VERSION, code_mode, mask_text
from .hits import Hit


def _masked(value: str, code: bool):
    return mask_text(value, code=code)


# A path or title masked: the same few thousand strings come back query after query.
_mask_name = lru_cache(maxsize=16384)(_masked)
# A hit's text that the store holds masked by older rules, masked by today's: a warm process
# returns the same chunks question after question (their strings are the rows cache's, whose
# hashes Python keeps), and masking one costs ~25 µs a chunk.
_mask_text = lru_cache(maxsize=4096)(_masked)


@lru_cache(maxsize=16384)
def _code_mode(path: str, kind: str) -> bool:
    """``code_mode`` of a hit's file (the same files come back query after query)."""
    return code_mode(path, kind)


def remember_paths(paths: Iterable[str]) -> None:
    """Mask ``paths`` now, as :func:`remask_hits` masks a hit's path (a warm process's small
    snapshot, whole: its questions then find them kept): plain, and in code mode where a code
    document of that name would be masked in it."""
    for path in paths:
        _mask_name(path, False)
        if _code_mode(path, "code"):
            _mask_name(path, True)


def remask_hits(hits: Sequence[Hit]) -> None:
    """Re-mask every string field of the hits in place, before projection (knowledge §10.2).

    Each hit records how many secrets were hidden per field, so a redaction summary can name
    the projected field paths of exactly the hits it reports.
    """
    for hit in hits:
        code = _code_mode(hit.path, hit.doc_type)
        path, title = _mask_name(hit.path, code), _mask_name(hit.section_title, code)
        # (a text masked at ingest by these very rules is not masked again)
        text = _mask_text(hit.text, code) if hit.masked_with != MASKING_VERSION else None
        if path.count or title.count or (text is not None and text.count):
            for attr, name, result in (("path", "path", path), ("section_title", "sectionTitle", title),
                                       ("text", "text", text)):
                if result is not None and result.count:
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
