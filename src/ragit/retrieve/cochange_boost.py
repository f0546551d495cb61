"""Co-change boost: a re-rank stage after the code re-rank (ragit.retrieve.rerank).

A fix rarely touches one file: files that changed together with a strong hit in the snapshot's
history are likely to be needed with it. After the code re-rank, the best chunk of each of the
first ``files`` files ``f`` of the ranking is raised towards the strongest of the top ``hits``
files ``h`` it co-changed with:

    score(f) ← max(score(f), max over h ≠ f of min(score(f) × (1 + weight × P(f | h)), score(h)))

``P(f | h)`` comes from ragit.gitsnap.cochange (history reachable from the snapshot's commit only).
The boost is proportional to ``f``'s own score, so a partner must also answer the question (a file
that merely changes often with the top hit does not jump the ranking), and it is capped at the
vouching hit's score, so a partner never overtakes the hit that pulled it up: the top hit stays
first. Only candidates already in the pool move; no file is added. ``--explain`` shows the raise
as the additive factor ``cochange``. Pure and deterministic; ties keep the incoming order.
Measured on the history dev sets in docs/evaluation.md ("Co-change").
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Sequence

from ..gitsnap.cochange import cochange_at
from ..gitsnap.git import GitError
from .rerank import RerankResult

if TYPE_CHECKING:
    from ..gitsnap.cochange import CoChange
    from ..gitsnap.git import Git


# A raised partner stays this fraction below the hit that vouches for it: the engine breaks ties
# of final scores by path, which must not put a partner above its hit.
CAP_GAP = 1e-6


@dataclass(frozen=True)
class CochangeWeights:
    """The stage's constants (measured on the history dev sets, then fixed)."""

    weight: float = 1.0  # score(f) × weight × P(f | h) is the most f can gain from h
    hits: int = 3  # top files whose co-change partners are raised
    files: int = 50  # only the first ``files`` files of the ranking can be raised (the head it reorders)


def apply_cochange(result: RerankResult, paths: Sequence[str], stats: "CoChange",
                   weights: CochangeWeights = CochangeWeights()) -> RerankResult:
    """``result`` (the code re-rank's; candidate indices into ``paths``) with each file's best
    chunk raised by its co-change with the top files, re-sorted; ``result`` itself when nothing
    moved."""
    raised, last = cochange_raises(result.order, result.scores, paths, stats, weights)
    if not raised:
        return result
    scores = result.scores
    order = result.order
    new_scores = dict(scores)
    new_factors = dict(result.factors)
    for i in raised:
        value = raised[i]
        new_scores[i] = value
        new_factors[i] = {**new_factors.get(i, {}), "cochange": value - scores[i]}
    # scores only rise, so nothing after the last raised chunk moves: sort the head only
    # (stable: ties keep their order)
    order = sorted(order[: last + 1], key=new_scores.__getitem__, reverse=True) + list(order[last + 1:])
    return RerankResult(order, new_scores, new_factors)


def cochange_raises(order: Sequence[int], scores: "Sequence[float] | dict[int, float]", paths: Sequence[str],
                    stats: "CoChange", weights: CochangeWeights = CochangeWeights()) -> tuple[dict[int, float], int]:
    """The stage's raises: (the new score of each candidate it raises, the position in ``order`` of
    the last one); ``({}, 0)`` when nothing moves. ``order`` ranks the candidates (indices into
    ``paths`` and ``scores``), best first."""
    if not weights.weight or weights.hits <= 0 or not order or not stats.shared:
        return {}, 0
    top: list[tuple[str, float, dict[str, float]]] = []  # (file, ceiling, its partners)
    seen: set[str] = set()
    for i in order:  # the first ``hits`` files of the ranking
        p = paths[i]
        if p not in seen:
            seen.add(p)
            s = scores[i]
            top.append((p, s - CAP_GAP * abs(s), stats.partners(p)))  # strictly below h, whatever breaks ties
            if len(top) == weights.hits:
                break
    if not any(partners for _, _, partners in top):
        return {}, 0
    weight = weights.weight
    window = weights.files
    raised: dict[int, float] = {}
    last = 0  # position of the last raised chunk in ``order``
    seen = set()
    for at, i in enumerate(order):  # each of the first ``files`` files, on its best chunk
        f = paths[i]
        if f in seen:
            continue
        seen.add(f)
        if len(seen) > window:
            break
        own = scores[i]
        new = own
        for h, ceiling, partners in top:
            pf = partners.get(f)
            if pf is not None and h != f:
                candidate = own * (1.0 + weight * pf)
                if candidate > ceiling:
                    candidate = ceiling
                if candidate > new:
                    new = candidate
        if new > own:
            raised[i] = new
            last = at
    return raised, last


def snapshot_cochange(git: "Git", cache_root: Path | None, sha: str, *, keep_changes: bool = False,
                      keep_counts: bool = False) -> "CoChange | None":
    """The co-change statistics of snapshot ``sha`` (ragit.gitsnap.cochange.cochange_at), or None
    when git cannot give its history (a shallow or partial clone missing objects): the stage then
    changes nothing, and the question is still answered."""
    try:
        return cochange_at(git, cache_root, sha, keep_changes=keep_changes, keep_counts=keep_counts)
    except (GitError, OSError, ValueError):
        return None
