"""Snapshot-scoped hybrid retrieval: BM25 (normalised) + cosine, fused by the seed's formula.

Every snapshot chunk gets a vector score (exact search over a contiguous float32 matrix), so no
lexical match is ever dropped by a pre-filter (knowledge §11.4). A long-lived process keeps the
matrix of a snapshot in a :class:`VectorCache`, which is what makes warm API queries fast.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Sequence

from ..errors import RagitError
from .hits import Hit
from .scoring import AUTHORITY_WEIGHT, RECENCY_WEIGHT, RETRIEVAL_WEIGHT, breakdown, sort_key

if TYPE_CHECKING:  # pragma: no cover
    import numpy as np

    from ..embed.base import Embedder
    from ..store.base import Store


@dataclass
class SnapshotMatrix:
    keys: list[tuple[str, str]]  # (path, chunk id) per row
    matrix: "np.ndarray"  # float32 [rows, d]


@dataclass
class VectorCache:
    """Per-process cache of snapshot matrices keyed by (store path, commit, embedder id)."""

    entries: dict[tuple[str, str, str], SnapshotMatrix] = field(default_factory=dict)
    max_entries: int = 4

    def get(self, store: "Store", sha: str, embedder_id: str) -> SnapshotMatrix:
        key = (str(getattr(store, "path", "")), sha, embedder_id)
        hit = self.entries.get(key)
        if hit is None:
            hit = load_matrix(store, sha, embedder_id)
            if len(self.entries) >= self.max_entries:
                self.entries.pop(next(iter(self.entries)))
            self.entries[key] = hit
        return hit


def load_matrix(store: "Store", sha: str, embedder_id: str) -> SnapshotMatrix:
    from ..store.sqlite import StoreUnreadable

    try:
        keys, matrix = store.load_vectors(sha, embedder_id)
    except StoreUnreadable as exc:
        raise RagitError(
            "SNAPSHOT_STORE_UNAVAILABLE", f"the store cannot serve snapshot {sha}: {exc}",
            {"resolvedSha": sha, "reason": "store_unreadable"}, "ragit ingest --all",
        ) from None
    return SnapshotMatrix(keys, matrix)


def query_terms(masked_question: str) -> list[str]:
    """Distinct tokens of the masked question, first-seen order (knowledge §11.4 step 1)."""
    from ..embed.tokenize import tokenize

    return list(dict.fromkeys(tokenize(masked_question)))


@dataclass
class RetrievalParams:
    alpha: float = 0.7
    keyword_enabled: bool = True

    @classmethod
    def from_config(cls, config, alpha: float | None = None) -> "RetrievalParams":
        r = config["retrieval"]
        return cls(alpha=r["alpha"] if alpha is None else alpha, keyword_enabled=r["keyword_enabled"])


def search_snapshot(
    store: "Store",
    sha: str,
    embedder: "Embedder",
    masked_question: str,
    params: RetrievalParams,
    top_k: int,
    *,
    cache: VectorCache | None = None,
) -> list[Hit]:
    """Top ``top_k`` durable hits of snapshot ``sha`` for the (already masked) question."""
    import numpy as np

    snap = cache.get(store, sha, embedder.id) if cache is not None else load_matrix(store, sha, embedder.id)
    n = len(snap.keys)
    if n == 0:
        return []
    qvec = embedder.embed([masked_question])[0]
    vector = (snap.matrix @ qvec).astype(np.float64)

    keyword = np.zeros(n, dtype=np.float64)
    if params.keyword_enabled:
        terms = query_terms(masked_question)
        raw = store.keyword_scores(sha, terms) if terms else []
        if raw:
            index = {key: i for i, key in enumerate(snap.keys)}
            best = max(r[2] for r in raw)
            if best > 0:
                for path, cid, score in raw:
                    i = index.get((path, cid))
                    if i is not None:
                        keyword[i] = score / best

    alpha = params.alpha
    retrieval = alpha * vector + (1.0 - alpha) * keyword
    final = RETRIEVAL_WEIGHT * retrieval + AUTHORITY_WEIGHT * 1.0 + RECENCY_WEIGHT * 1.0

    k = min(top_k, n)
    kth = np.partition(final, n - k)[n - k]
    pool = np.nonzero(final >= kth)[0]
    rows = store.fetch_chunks(sha, [snap.keys[i] for i in pool])
    hits: list[Hit] = []
    for i in pool:
        row = rows.get(snap.keys[i])
        if row is None:
            continue
        v, kw = float(vector[i]), float(keyword[i])
        b = breakdown("hybrid", v, kw, alpha, 1.0, 1.0)
        hits.append(
            Hit(
                path=row.path,
                start_line=row.start_line,
                end_line=row.end_line,
                section_title=row.title,
                doc_type=row.doc_type,
                score_final=b["final"],
                score_vector=v,
                score_keyword=kw,
                citation={
                    "id": row.citation_id,
                    "sourceType": "document",
                    "sourceId": row.chunk_id,
                    "sourceVersion": row.blob_id,
                    "sourceSha": sha,
                },
                scope="durable",
                origin_type="document",
                artifact_id=None,
                artifact_kind=None,
                authority="promoted_durable",
                confidence=None,
                trust="repository",
                text=row.text,
                chunk_id=row.chunk_id,
                breakdown=b,
            )
        )
    hits.sort(key=lambda h: sort_key(h.score_final, h.path, h.section_title, h.citation_id, h.chunk_id))
    return hits[:top_k]


def label_hits(hits: Sequence[Hit]) -> None:
    """Attach untrusted-content ``flags`` computed on each hit's complete masked text."""
    from ..security.labels import flags_for

    for h in hits:
        h.flags = flags_for(h.text)

