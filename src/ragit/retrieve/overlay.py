"""Scoring of overlay candidates (knowledge §12.8) with the same inputs as snapshot chunks.

The candidates come from an :class:`~ragit.retrieve.sources.OverlaySource` that the caller
passes in (knowledge artifacts, read on the memory side). They are scored with the same inputs as
snapshot chunks (cosine and raw BM25), so the caller can normalise keyword scores over both sets
together. Nothing here writes to disk: without a snapshot, BM25 runs on an in-memory FTS5 table.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Sequence

from .sources import OverlayCandidate

if TYPE_CHECKING:  # pragma: no cover
    from ..embed.base import Embedder
    from .search import RetrievalParams


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
