"""Scoring and ranking the tasks of ``eval run``, one evaluation store at a time.

An evaluation store holds many commits, and the keyword index's postings cover all of them: a
term read for one question costs the whole store, not the question's snapshot. So tasks are
taken in batches per store. Each task's snapshot is loaded and vector-scored on its own
(its matrix dropped straight after), then every distinct keyword term of the batch is read
once and cut to the rows of the snapshots that ask for it (:class:`ragit.store.bm25.SharedPostings`),
and each task is ranked and measured under every mode. The scores are those of
``retrieve.search.keyword_raw`` and ``vector_scores`` bit for bit; only the reading is shared.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from .metrics import RankMetrics, file_ranking, ndcg_at_k, pack_recall, rank_metrics
from .tasks import Task

if TYPE_CHECKING:  # pragma: no cover
    import numpy as np

    from ..config import Config
    from ..embed.base import Embedder
    from ..gitsnap.cochange import CoChange
    from ..retrieve.search import RetrievalParams
    from ..store.base import Store

TOP_K = 100
# snapshot rows of one batch: what its tasks hold in memory (row ids, lengths and vector scores,
# 20 bytes a row, plus their postings) against how often a term shared by tasks is read again
BATCH_ROWS = 1_000_000


@dataclass
class ModeResult:
    """One task's measurements under one mode."""

    ranked: RankMetrics
    ndcg: float
    pack: dict[int, float]
    tokens: dict[int, float]
    seconds: float  # what this mode alone would have cost: load + its scores + ranking
    files: list[str] = field(default_factory=list)  # the ranked files (``eval run --per-task``)


@dataclass
class TaskResult:
    modes: dict[str, ModeResult]
    timing: dict[str, float]  # load, vector, keyword, rank (all modes) and their sum, seconds


@dataclass
class _Prepared:
    """A task whose snapshot is loaded and vector-scored, waiting for its keyword scores."""

    index: int  # position in the task list
    task: Task
    masked: str
    terms: list[str]
    rowids: "np.ndarray"
    lengths: "np.ndarray"
    vector: "np.ndarray"
    timing: dict[str, float] = field(default_factory=dict)


def evaluate_tasks(root: Path, configs: dict[str, Config], tasks: list[Task], embedder: Embedder,
                   variants: "dict[str, RetrievalParams]", budgets: list[int],
                   done: Callable[[int], None] | None = None,
                   history: "Callable[[str], CoChange | None] | None" = None) -> list[TaskResult]:
    """Every task measured under every variant (a mode of ``eval run``, a setting ``tune``
    tries), in task order; ``done(n)`` after each task. A task's vector and keyword scores are
    computed once and ranked under each variant, so variants differ only in what ranking reads
    (alpha, re-rank weights, the co-change stage); ``budgets = []`` skips the pack measurements.
    ``history(commit)`` gives a task's co-change statistics (None: no co-change stage)."""
    results: list[TaskResult | None] = [None] * len(tasks)
    finished = 0
    for task_root in dict.fromkeys(t.root for t in tasks):
        config = configs[task_root]
        indices = [i for i, t in enumerate(tasks) if t.root == task_root]
        store: Store | None = None
        try:
            batch: list[_Prepared] = []
            rows = 0
            for i in indices:
                prepared, store = _prepare(root, config, i, tasks[i], embedder, variants, store)
                batch.append(prepared)
                rows += len(prepared.rowids)
                if rows >= BATCH_ROWS or i == indices[-1]:
                    for p in _rank_batch(store, batch, variants, budgets, history):
                        results[p[0]] = p[1]
                        finished += 1
                        if done:
                            done(finished)
                    batch, rows = [], 0
        finally:
            if store is not None:
                store.close()
    return [r for r in results if r is not None]


def _needs_vector(n: int, variants: "dict[str, RetrievalParams]") -> bool:
    return n > 0 and any(v.alpha > 0 for v in variants.values())


def _needs_keyword(n: int, config: Config, variants: "dict[str, RetrievalParams]") -> bool:
    return n > 0 and config["retrieval"]["keyword_enabled"] and any(v.alpha < 1 for v in variants.values())


def _prepare(root: Path, config: Config, index: int, task: Task, embedder: Embedder,
             variants: "dict[str, RetrievalParams]", store: Store | None) -> tuple[_Prepared, Store]:
    """Load the task's snapshot (opening and checking the store on the first task), score its
    rows by vector and note its keyword terms; the matrix is not kept."""
    import numpy as np

    from ..ingest.manifest import load_manifest
    from ..retrieve.readiness import open_checked_store
    from ..retrieve.search import RetrievalParams, load_matrix, query_terms, vector_scores
    from ..security.masking import mask_text
    from ..store import holds_manifest

    started = time.perf_counter()
    # the open store vouches for a manifest it published, so only its header is parsed
    trusted = None if store is None else (lambda sha, digest: holds_manifest(store, sha, digest))
    loaded = load_manifest(root, config, task.commit, trusted=trusted)
    store = open_checked_store(root, config, loaded, embedder.id, store=store)
    masked = mask_text(task.query).text
    snap = load_matrix(store, task.commit, embedder.id)
    params = RetrievalParams.from_config(config)
    n = len(snap.rowids)
    terms = query_terms(masked, params.term_repeats) if _needs_keyword(n, config, variants) else []
    load = time.perf_counter() - started
    started = time.perf_counter()
    if _needs_vector(n, variants):
        vector = vector_scores(snap, embedder, masked, params.file_blend, params.passage_words)
    else:
        vector = np.zeros(n, dtype=np.float64)
    timing = {"load": load, "vector": time.perf_counter() - started}
    return _Prepared(index, task, masked, terms, snap.rowids, snap.lengths, vector, timing), store


def _rank_batch(store: Store, batch: list[_Prepared], variants: "dict[str, RetrievalParams]", budgets: list[int],
                history: "Callable[[str], CoChange | None] | None" = None) -> list[tuple[int, TaskResult]]:
    """Keyword-score the batch with each term read once, then rank and measure every task."""
    import numpy as np

    from ..store.bm25 import SharedPostings, snapshot_scores

    asking = {p.index: i for i, p in enumerate(q for q in batch if q.terms)}
    shared = (SharedPostings(store.postings().within, [(p.rowids, p.terms) for p in batch if p.terms])
              if asking else None)
    out = []
    for p in batch:
        started = time.perf_counter()
        if shared is not None and p.index in asking:
            i = asking[p.index]
            # keyword_raw's scores for this snapshot (no extra documents), from the shared reads
            raw = snapshot_scores(shared.reader(i), p.terms, p.rowids, p.lengths)[0]
            read = shared.seconds[i]
        else:
            raw, read = np.zeros(len(p.rowids), dtype=np.float64), 0.0
        p.timing["keyword"] = read + time.perf_counter() - started
        out.append((p.index, _measure(store, p, raw, variants, budgets, history)))
    return out


def _measure(store: Store, p: _Prepared, raw: "np.ndarray", variants: "dict[str, RetrievalParams]",
             budgets: list[int], history: "Callable[[str], CoChange | None] | None" = None) -> TaskResult:
    """Rank the task's scores under every variant; file metrics, NDCG and pack recall of each."""
    from ..context.pack import select_hits
    from ..contract.payloads import PACK_TOP_K
    from ..retrieve.remask import remask_hits
    from ..retrieve.search import SnapshotScores, rank_hits

    wants = history is not None and any(v.rerank and v.cochange for v in variants.values())
    cochange = history(p.task.commit) if wants else None
    scores = SnapshotScores(p.rowids, p.vector, raw)
    rows: dict = {}  # chunk rows fetched once for every variant
    measured: dict[str, ModeResult] = {}
    rank_total = 0.0
    for mode, params in variants.items():
        alpha = params.alpha
        started = time.perf_counter()
        hits = rank_hits(store, p.task.commit, scores, (), params, TOP_K, p.masked, rows_cache=rows,
                         cochange=cochange)
        files = file_ranking(hits)
        ranked = rank_metrics(files, p.task.gold)
        ndcg = ndcg_at_k(hits, p.task.targets)
        pack: dict[int, float] = {}
        tokens: dict[int, float] = {}
        candidates = hits[:PACK_TOP_K]
        if budgets:
            remask_hits(candidates)
        for budget in budgets:
            selection = select_hits(candidates, budget)
            pack[budget] = pack_recall(selection.hits, p.task.gold)
            tokens[budget] = float(selection.used_tokens)
        spent = time.perf_counter() - started
        rank_total += spent
        seconds = (p.timing["load"] + (p.timing["vector"] if alpha > 0 else 0.0)
                   + (p.timing["keyword"] if alpha < 1 else 0.0) + spent)
        measured[mode] = ModeResult(ranked, ndcg, pack, tokens, seconds, files)
    p.timing["rank"] = rank_total
    timing = {"seconds": p.timing["load"] + p.timing["vector"] + p.timing["keyword"] + rank_total, **p.timing}
    return TaskResult(measured, timing)
