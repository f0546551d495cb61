"""File-localisation metrics (knowledge §21.2) and the paired bootstrap.

A file's rank is the rank of its best chunk, so the ranking is the hit list with repeated paths
dropped. Means are taken in task order and the bootstrap draws its resamples from a seeded
generator, so the same per-task numbers always give the same report.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from ..retrieve.hits import Hit

RECALL_KS = (1, 5, 10)
ACC_KS = (5, 10)
RESAMPLES = 1000


def file_ranking(hits: Iterable[Hit]) -> list[str]:
    """Distinct paths in hit order: position i holds the file ranked i + 1."""
    return list(dict.fromkeys(h.path for h in hits))


@dataclass(frozen=True)
class RankMetrics:
    recall: dict[int, float]  # k -> |gold ∩ top-k files| / |gold|
    acc: dict[int, float]  # k -> 1.0 when every gold file is in the top k
    mrr: float  # 1 / rank of the first gold file, 0 when none


def rank_metrics(files: Sequence[str], gold: Sequence[str]) -> RankMetrics:
    wanted = set(gold)
    found = {k: len(wanted & set(files[:k])) for k in sorted(set(RECALL_KS) | set(ACC_KS))}
    first = next((i for i, path in enumerate(files, 1) if path in wanted), None)
    return RankMetrics(
        recall={k: found[k] / len(wanted) for k in RECALL_KS},
        acc={k: 1.0 if found[k] == len(wanted) else 0.0 for k in ACC_KS},
        mrr=1.0 / first if first else 0.0,
    )


NDCG_K = 10


def ndcg_at_k(hits: Sequence[Hit], targets: Sequence, k: int = NDCG_K) -> float:
    """The code-search benchmark's NDCG@k over the hit list (``../shared/bench/README.md``).

    Each target (a gold file, or a span of one) counts once, at the first of the top ``k`` hits
    that covers it (gain 1, discount 1/log2(rank + 1)); the ideal is min(k, |targets|) relevant
    hits at ranks 1, 2, …. Several chunks of one file therefore take several ranks.
    """
    import math

    if not targets:
        return 0.0
    dcg = 0.0
    for target in targets:
        for rank, hit in enumerate(hits[:k], 1):
            if target.covered_by(hit.path, hit.start_line, hit.end_line):
                dcg += 1.0 / math.log2(rank + 1)
                break
    ideal = sum(1.0 / math.log2(rank + 1) for rank in range(1, min(k, len(targets)) + 1))
    return dcg / ideal


def grouped_mean(values: Sequence[float], groups: Sequence[str]) -> float | None:
    """Mean of the per-group means (groups in first-seen order): the benchmark averages each
    repository's questions first, so a repository with more questions does not weigh more."""
    by: dict[str, list[float]] = {}
    for value, group in zip(values, groups):
        by.setdefault(group, []).append(value)
    means = [sum(v) / len(v) for v in by.values()]
    return sum(means) / len(means) if means else None


def pack_recall(selected: Iterable[Hit], gold: Sequence[str]) -> float:
    """Fraction of gold files with at least one hit in the pack."""
    wanted = set(gold)
    return len(wanted & {h.path for h in selected}) / len(wanted)


def mean(values: Sequence[float]) -> float | None:
    """Arithmetic mean in the given order; None (undefined) for no values."""
    return sum(values) / len(values) if values else None


def resample_indices(n: int, seed: int, resamples: int = RESAMPLES):
    """``resamples`` × ``n`` task indices drawn with replacement, shared by every comparison."""
    import numpy as np

    return np.random.default_rng(seed).integers(0, n, size=(resamples, n))


def paired_difference(a: Sequence[float], b: Sequence[float], indices) -> tuple[float, list[float]] | None:
    """Mean of ``b − a`` per task and its 95 % percentile bootstrap interval."""
    import numpy as np

    if not a:
        return None
    diffs = np.asarray(b, dtype=np.float64) - np.asarray(a, dtype=np.float64)
    means = diffs[indices].mean(axis=1)
    low, high = np.percentile(means, [2.5, 97.5])
    return float(sum(diffs.tolist()) / len(diffs)), [float(low), float(high)]
