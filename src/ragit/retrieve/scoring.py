"""The seed's scoring formula, the breakdown and the deterministic tie-break (knowledge §12.3–12.6).

hybrid = alpha·vector + (1 − alpha)·keyword; final = 0.80·retrieval + 0.15·authority +
0.05·recency. ``final`` is the sum of the three stage contributions, and ``scoreFinal`` is
taken from it, so the breakdown always sums exactly.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

RETRIEVAL_WEIGHT = 0.80
AUTHORITY_WEIGHT = 0.15
RECENCY_WEIGHT = 0.05


def breakdown(mode: str, vector: float, keyword: float, alpha: float, authority: float, recency: float,
              rerank: tuple[float, dict[str, float]] | None = None) -> dict[str, Any]:
    """Every input, weight and contribution of one hit's score, in emission order.

    ``rerank`` is (the re-ranked retrieval score, its factors) from ragit.retrieve.rerank; the
    breakdown then shows the factors and the re-rank's contribution, and the retrieval score is
    the sum of the three contributions (knowledge §12.6).
    """
    v_weight, k_weight, v_contrib, k_contrib, change, retrieval, r_contrib, a_contrib, t_contrib, final = _arithmetic(
        mode, vector, keyword, alpha, authority, recency, rerank)
    inputs = {
        "vector": {"score": vector, "weight": v_weight, "contribution": v_contrib},
        "keyword": {"score": keyword, "weight": k_weight, "contribution": k_contrib},
    }
    retrieval_block: dict[str, Any] = {"inputs": inputs}
    if change is not None:
        retrieval_block["rerank"] = {"factors": dict(rerank[1]), "contribution": change}
    return {
        "mode": mode,
        "retrieval": {
            "score": retrieval,
            "weight": RETRIEVAL_WEIGHT,
            "contribution": r_contrib,
            **retrieval_block,
        },
        "authority": {"score": authority, "weight": AUTHORITY_WEIGHT, "contribution": a_contrib},
        "recency": {"score": recency, "weight": RECENCY_WEIGHT, "contribution": t_contrib},
        "final": final,
    }


def _arithmetic(mode: str, vector: float, keyword: float, alpha: float, authority: float, recency: float,
                rerank: tuple[float, dict[str, float]] | None) -> tuple:
    """Every number of the breakdown, in one fixed order of operations (``final_score`` and
    ``breakdown`` must give the same bits)."""
    if mode == "keyword":
        v_weight, k_weight = 0.0, 1.0
    else:
        v_weight, k_weight = alpha, 1.0 - alpha
    v_contrib = v_weight * vector
    k_contrib = k_weight * keyword
    fused = v_contrib + k_contrib
    retrieval = fused
    change = None
    if rerank is not None:
        adjusted, factors = rerank
        delta = adjusted - fused
        if delta != 0.0 or factors:
            change = delta
            retrieval = fused + delta
    r_contrib = RETRIEVAL_WEIGHT * retrieval
    a_contrib = AUTHORITY_WEIGHT * authority
    t_contrib = RECENCY_WEIGHT * recency
    final = r_contrib + a_contrib + t_contrib
    return v_weight, k_weight, v_contrib, k_contrib, change, retrieval, r_contrib, a_contrib, t_contrib, final


def final_score(mode: str, vector: float, keyword: float, alpha: float, authority: float, recency: float,
                rerank: tuple[float, dict[str, float]] | None = None) -> float:
    """``breakdown(...)["final"]`` without building the breakdown (ranking many candidates)."""
    return _arithmetic(mode, vector, keyword, alpha, authority, recency, rerank)[-1]


def authority_score(scope: str, label: str | None, status: str | None = None) -> float:
    """Numeric authority of a hit (knowledge §12.5)."""
    if status == "promoted":
        return 1.0
    if label == "promoted_durable" or scope == "durable":
        return 1.0
    if label == "reviewed_harness" or scope == "harness":
        return 0.9
    if scope == "session":
        return 0.8
    if scope == "evidence":
        return 0.4
    return 0.6


def recency_score(updated_at: datetime | None, now: datetime) -> float:
    """Linear from 1.0 to 0.2 over 24 days, floor 0.2; missing timestamp ⇒ 1.0."""
    if updated_at is None:
        return 1.0
    age_days = max(0.0, (now - updated_at).total_seconds()) / 86400.0
    return max(0.2, 1.0 - min(age_days / 30.0, 0.8))


def sort_key(score_final: float, path: str, section_title: str, citation_id: str, chunk_id: str) -> tuple:
    """Comparator: scoreFinal descending (exact), then path, section, citation id, chunk id by code point."""
    return (-score_final, path, section_title, citation_id, chunk_id)
