"""Snapshot retrieval split into a scoring step and a ranking step.

``search_snapshot`` computes vector and keyword scores and ranks them in one call. An evaluation
ranks the same query under three alphas, so here the per-row inputs are computed once and
fused per alpha; :func:`rank_hits` reproduces ``search_snapshot`` exactly (same arithmetic, same
candidate pool, same comparator), so every mode measures what ``ragit query`` returns.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..retrieve.hits import Hit
from ..retrieve.scoring import (
    AUTHORITY_WEIGHT,
    RECENCY_WEIGHT,
    RETRIEVAL_WEIGHT,
    breakdown,
    sort_key,
)
from ..retrieve.search import SnapshotMatrix, query_terms

if TYPE_CHECKING:  # pragma: no cover
    import numpy as np

    from ..embed.base import Embedder
    from ..store.base import ChunkRow, Store


def vector_scores(snap: SnapshotMatrix, embedder: Embedder, masked_question: str) -> np.ndarray:
    """Cosine of the question with every snapshot row (knowledge §11.3), float64."""
    import numpy as np

    qvec = embedder.embed([masked_question])[0]
    return (snap.matrix @ qvec).astype(np.float64)


def keyword_scores(store: Store, sha: str, keys: list[tuple[str, str]], masked_question: str) -> np.ndarray:
    """BM25 normalised by the best match of this query (knowledge §11.4), float64 per row."""
    import numpy as np

    keyword = np.zeros(len(keys), dtype=np.float64)
    terms = query_terms(masked_question)
    raw = store.keyword_scores(sha, terms) if terms else []
    if raw:
        best = max(r[2] for r in raw)
        if best > 0:
            index = {key: i for i, key in enumerate(keys)}
            for path, cid, score in raw:
                i = index.get((path, cid))
                if i is not None:
                    keyword[i] = score / best
    return keyword


def rank_hits(store: Store, sha: str, keys: list[tuple[str, str]], vector: np.ndarray, keyword: np.ndarray,
              alpha: float, top_k: int, rows: dict[tuple[str, str], ChunkRow]) -> list[Hit]:
    """The top ``top_k`` durable hits for one alpha; ``rows`` caches fetched chunk rows across calls."""
    import numpy as np

    n = len(keys)
    if n == 0:
        return []
    retrieval = alpha * vector + (1.0 - alpha) * keyword
    final = RETRIEVAL_WEIGHT * retrieval + AUTHORITY_WEIGHT * 1.0 + RECENCY_WEIGHT * 1.0
    k = min(top_k, n)
    kth = np.partition(final, n - k)[n - k]
    pool = np.nonzero(final >= kth)[0]
    missing = [keys[i] for i in pool if keys[i] not in rows]
    if missing:
        rows.update(store.fetch_chunks(sha, missing))
    hits: list[Hit] = []
    for i in pool:
        row = rows.get(keys[i])
        if row is None:
            continue
        v, kw = float(vector[i]), float(keyword[i])
        b = breakdown("hybrid", v, kw, alpha, 1.0, 1.0)
        hits.append(Hit(
            path=row.path, start_line=row.start_line, end_line=row.end_line, section_title=row.title,
            doc_type=row.doc_type, score_final=b["final"], score_vector=v, score_keyword=kw,
            citation={"id": row.citation_id, "sourceType": "document", "sourceId": row.chunk_id,
                      "sourceVersion": row.blob_id, "sourceSha": sha},
            scope="durable", origin_type="document", artifact_id=None, artifact_kind=None,
            authority="promoted_durable", confidence=None, trust="repository", text=row.text,
            chunk_id=row.chunk_id, breakdown=b,
        ))
    hits.sort(key=lambda h: sort_key(h.score_final, h.path, h.section_title, h.citation_id, h.chunk_id))
    return hits[:top_k]
