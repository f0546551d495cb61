"""Precedent boost: a re-rank stage after co-change and the docs-site stage.

A question about a change ("Depend on click now", "don't clear BadRequestKeyError args", an
issue's text) often resembles the message of an earlier commit, and the files that commit
changed are likely to be needed again: ``setup.py`` for a dependency, ``__init__.py`` and
``setup.py`` for a release, the module a bug class keeps coming back to. The snapshot's own
history (the commits the co-change statistics count, ragit.gitsnap.cochange: reachable from the
snapshot's commit, at most ``MAX_FILES`` paths each) is searched with BM25 over each commit's
message terms (:mod:`ragit.lexical`, the question's terms as a set); each of the ``commits``
best matches ``c`` with a positive score gives each of its ``k`` files ``sim(c) / k``, where
``sim(c)`` is its score over the score of a message holding every question term once at the
average length (the sum of their idfs), so a file's evidence ``e(f)`` is near 1 only when a past
message says what the question says and touched little else. The best chunk of each candidate
file is raised by

    score ← score + weight × min(1, e(f)) × best

(``best``: the best fused score of the pool, the unit of the re-rank's additive boosts). Only
candidates move; no file is added. ``--explain`` shows the raise as the additive factor
``precedent``. Pure and deterministic: ties keep the incoming order. Measured on the
development sets in docs/evaluation.md ("Session 21").
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import TYPE_CHECKING, Sequence

if TYPE_CHECKING:  # pragma: no cover
    from ..gitsnap.cochange import CoChange

_K1 = 1.2  # BM25 over messages: Lucene's idf and the usual saturation and length weight
_B = 0.75


@dataclass(frozen=True)
class PrecedentWeights:
    """The stage's constants (measured on the development sets, then fixed)."""

    weight: float = 0.2  # the most a file gains, in units of the pool's best fused score
    commits: int = 30  # best-matching past commits that vouch for their files


class _Messages:
    """The counted commits' messages as an inverted index (term → a commit ordinal per
    occurrence), built once per statistics object (a warm process keeps it; ~13 ms for 2,000
    long messages, 100k words); each term's commits and BM25 term weights ``tf·(k1 + 1) / (tf +
    k1·(1 − b + b·|d| / avgdl))`` made as numpy arrays on the term's first use."""

    __slots__ = ("postings", "lengths", "count", "arrays", "answers")

    def __init__(self, said: Sequence[str]):
        import numpy as np

        postings: dict[str, list[int]] = {}
        for k, text in enumerate(said):
            for w in text.split():
                postings.setdefault(w, []).append(k)
        words = np.array([text.count(" ") + 1 if text else 0 for text in said], dtype=np.float64)
        average = float(words.mean()) if len(said) and words.sum() else 1.0
        self.postings = postings
        self.lengths = _K1 * (1.0 - _B + _B * words / average)
        self.count = len(said)
        self.arrays: dict[str, tuple] = {}
        # file_evidence's answer per (question terms, weights): a warm process is asked the same
        # question again (``context pack`` then ``query``), and the answer is ~70 µs of numpy calls
        self.answers: dict[tuple, dict[str, float]] = {}

    def term(self, word: str) -> "tuple | None":
        """(commit ordinals, BM25 term weights) of ``word``, or None when no message says it."""
        got = self.arrays.get(word)
        if got is None:
            occurrences = self.postings.get(word)
            if not occurrences:
                return None
            import numpy as np

            ids, tf = np.unique(np.array(occurrences, dtype=np.int64), return_counts=True)
            tf = tf.astype(np.float64)
            got = self.arrays[word] = (ids, tf * (_K1 + 1.0) / (tf + self.lengths[ids]))
        return got


def _messages(stats: "CoChange") -> _Messages:
    cached = stats.__dict__.get("_messages")
    if cached is None:
        cached = stats.__dict__["_messages"] = _Messages(stats.said)
    return cached


def file_evidence(question_terms: Sequence[str], stats: "CoChange",
                  weights: PrecedentWeights = PrecedentWeights()) -> dict[str, float]:
    """``e(f)`` for every file a best-matching past commit changed (empty when none matches)."""
    if not stats.said or weights.commits <= 0 or not question_terms:
        return {}
    index = _messages(stats)
    key = (tuple(sorted(set(question_terms))), weights)  # (a fixed order: the same float sums every time)
    known = index.answers.get(key)
    if known is None:
        if len(index.answers) >= _ANSWERS_KEPT:
            index.answers.clear()
        known = index.answers[key] = _evidence(index, stats.counted, key[0], weights)
    return dict(known)


_ANSWERS_KEPT = 4096


def _evidence(index: _Messages, counted: Sequence[Sequence[str]], words: Sequence[str],
              weights: PrecedentWeights) -> dict[str, float]:
    """:func:`file_evidence` of the question's distinct terms ``words`` (sorted); ``counted``: each
    counted commit's files."""
    import numpy as np

    n = index.count
    norm = 0.0
    ids: list = []
    weights_of: list = []
    idfs: list[float] = []
    for word in words:
        found = index.term(word)
        df = len(found[0]) if found is not None else 0
        idf = math.log(1.0 + (n - df + 0.5) / (df + 0.5))
        norm += idf
        if found is not None:
            ids.append(found[0])
            weights_of.append(found[1])
            idfs.append(idf)
    if not ids or norm <= 0.0:
        return {}
    # one pass for every term: each commit's sum of idf × term weight, terms in the order above
    spans = [len(k) for k in ids]
    scores = np.bincount(np.concatenate(ids), np.concatenate(weights_of) * np.repeat(idfs, spans), minlength=n)
    matched = np.flatnonzero(scores > 0.0)
    if len(matched) > weights.commits:  # the best, ties to the newer commit (the smaller ordinal)
        cut = np.partition(scores[matched], len(matched) - weights.commits)[len(matched) - weights.commits]
        matched = matched[scores[matched] >= cut]
    best = matched[np.lexsort((matched, -scores[matched]))][: weights.commits].tolist()
    shares = (scores[best] / norm).tolist()
    evidence: dict[str, float] = {}
    for k, sim in zip(best, shares):
        files = counted[k]
        share = sim / len(files)
        for f in files:
            evidence[f] = evidence.get(f, 0.0) + share
    return evidence


def precedent_raises(scores: Sequence[float], paths: Sequence[str], evidence: dict[str, float], unit: float,
                     weights: PrecedentWeights = PrecedentWeights()) -> dict[int, float]:
    """The stage's raises: the new score of the best chunk (the highest score, the first on ties)
    of each candidate file with evidence; ``unit`` is the pool's best fused score."""
    if not evidence or not weights.weight or unit <= 0.0:
        return {}
    best: dict[str, int] = {}
    for i, f in enumerate(paths):
        if f in evidence:
            j = best.get(f)
            if j is None or scores[i] > scores[j]:
                best[f] = i
    step = weights.weight * unit
    raised: dict[int, float] = {}
    for f, i in best.items():
        e = evidence[f]
        if e:
            raised[i] = scores[i] + step * (e if e < 1.0 else 1.0)
    return raised
