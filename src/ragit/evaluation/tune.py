"""``ragit tune`` (knowledge §22.5): the retrieval settings that work best on this repository's
own history, written only when a held-out check says the gain is real.

The tasks are ``eval mine``'s (or a given task file). They are split once, by a hash of each task
id, into a training half and a held-out half (:func:`split_tasks`). A small documented space is
searched on the training half, every setting ranked from the same per-task scores
(``measure.evaluate_tasks``): nothing is re-indexed per setting, and the evaluation store is the
one ``eval run`` keeps. The best training setting is then compared with the current configuration
on the held-out half, task by task; the configuration is written only when the paired bootstrap
95 % interval of the held-out R@5 gain lies above zero.

Search space (:data:`ALPHAS`, :data:`RERANK_VALUES`, :data:`CHUNK_SIZES`), in four stages:

1. ``retrieval.alpha`` ∈ ALPHAS ∪ {current} × ``retrieval.cochange`` on / off;
2. from the best of stage 1, each re-rank key alone over its values (the others as they are);
3. the keys that beat stage 1 alone, combined;
4. chunk size: the best setting so far with the other ``ingest.chunker_version`` ("2" halves the
   code chunk limits). The chunker decides what the store holds, so this stage indexes every task
   commit once more, into an evaluation store of its own, and ranks one setting there.
"""

from __future__ import annotations

import copy
import hashlib
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from .measure import TaskResult, evaluate_tasks
from .metrics import mean, paired_difference, resample_indices
from .run import index_roots, locate, task_history
from .tasks import Task

if TYPE_CHECKING:  # pragma: no cover
    from ..config import Config
    from ..embed.base import Embedder
    from ..gitsnap.git import Git
    from ..retrieve.search import RetrievalParams

ALPHAS = (0.0, 0.3, 0.5, 0.7, 0.85, 1.0)
RERANK_VALUES: dict[str, tuple[float, ...]] = {
    "rerank_definition": (0.0, 0.5, 1.0, 2.0),
    "rerank_path": (0.0, 0.5, 1.0, 1.5),
    "rerank_file": (0.0, 0.2, 0.4),
    "rerank_role": (0.3, 0.5, 0.7),
}
CHUNK_SIZES = ("1", "2")  # ingest.chunker_version: "2" halves the code chunk limits
TUNED = ("alpha", "cochange", *RERANK_VALUES, "chunker_version")  # [retrieval] keys, then [ingest]'s
INGEST_KEYS = ("chunker_version",)
METRIC = "recallAt5"
REPORTED = ("recallAt5", "recallAt10", "mrr", "ndcgAt10")
MIN_SPLIT = 10  # tasks each half needs: fewer cannot show a gain worth writing
SPLIT_SALT = "ragit-tune:"

Setting = dict[str, Any]
Progress = Callable[[str, int, int], None]


@dataclass
class TuneRequest:
    tasks_file: str | None  # as given; None when the tasks were mined
    tasks: list[Task]
    repos: list[Git]
    dry_run: bool = False
    seed: int = 0


@dataclass
class TuneResult:
    data: dict[str, Any]
    best: Setting | None  # the setting to write (None: nothing to write)


def split_tasks(tasks: list[Task]) -> tuple[list[Task], list[Task]]:
    """(train, held-out): a task is held out when sha256(``ragit-tune:<id>``) is odd.

    A hash of the id, not the order or the dates: the same task always lands on the same side
    (a task file that grows keeps every earlier task's side), the halves are exchangeable samples
    of the same history (so the held-out interval estimates the gain on tasks like these), and a
    given task file needs no git look-up to be split.
    """
    train, held = [], []
    for t in tasks:
        odd = int(hashlib.sha256((SPLIT_SALT + t.id).encode("utf-8")).hexdigest(), 16) & 1
        (held if odd else train).append(t)
    return train, held


def current_setting(config: Config) -> Setting:
    r = config["retrieval"]
    from ..retrieve.rerank import CONFIG_DEFAULTS

    out: Setting = {"alpha": float(r["alpha"]), "cochange": bool(r["cochange"])}
    for key in RERANK_VALUES:
        out[key] = float(r.get(key, CONFIG_DEFAULTS[key]))
    out["chunker_version"] = str(config["ingest"]["chunker_version"])
    return out


def _tables(setting: Setting) -> dict[str, dict[str, Any]]:
    """``setting`` split into the config tables its keys belong to."""
    return {"retrieval": {k: v for k, v in setting.items() if k not in INGEST_KEYS},
            "ingest": {k: v for k, v in setting.items() if k in INGEST_KEYS}}


def configured(config: Config, setting: Setting) -> Config:
    """``config`` with ``setting`` in its ``[retrieval]`` and ``[ingest]`` tables (a copy)."""
    from ..config import Config

    data = copy.deepcopy(config.data)
    for table, values in _tables(setting).items():
        data[table].update(values)
    return Config(data, config.path, config.exists)


def params_of(config: Config, setting: Setting) -> RetrievalParams:
    from ..retrieve.search import RetrievalParams

    return RetrievalParams.from_config(configured(config, setting))


def candidates_stage1(current: Setting) -> list[Setting]:
    alphas = sorted(set(ALPHAS) | {current["alpha"]})
    out = []
    for cochange in (current["cochange"], not current["cochange"]):
        out += [dict(current, alpha=a, cochange=cochange) for a in alphas]
    return out


def candidates_stage2(best: Setting) -> list[Setting]:
    return [dict(best, **{key: v}) for key, values in RERANK_VALUES.items() for v in values if v != best[key]]


def changed(setting: Setting, current: Setting) -> dict[str, Any]:
    return {k: setting[k] for k in TUNED if setting[k] != current[k]}


def summary(results: list[TaskResult], name: str) -> dict[str, float | None]:
    """Means of the reported metrics of one variant over the tasks measured."""
    per = per_task(results, name)
    return {m: mean(per[m]) for m in REPORTED}


def per_task(results: list[TaskResult], name: str) -> dict[str, list[float]]:
    rows = [r.modes[name] for r in results]
    return {"recallAt5": [r.ranked.recall[5] for r in rows], "recallAt10": [r.ranked.recall[10] for r in rows],
            "mrr": [r.ranked.mrr for r in rows], "ndcgAt10": [r.ndcg for r in rows]}


def _rank_key(metrics: dict[str, float | None], n_changed: int, order: int) -> tuple:
    """Best on training: highest R@5, then MRR, then R@10 (means rounded to 9 decimals, so float
    noise never decides), then the fewest keys changed from the current configuration, then the
    earliest in search order."""
    def r(key: str) -> float:
        v = metrics[key]
        return round(v, 9) if v is not None else -1.0

    return (r("recallAt5"), r("mrr"), r("recallAt10"), -n_changed, -order)


@dataclass
class _Searcher:
    """Ranks settings on one task set, each stage from one pass of scores; counts its work."""

    root: Path
    configs: dict[str, Config]
    config: Config
    tasks: list[Task]
    embedder: Embedder
    history: Callable
    progress: Progress | None = None
    rankings: int = 0
    passes: int = 0

    def measure(self, settings: list[Setting], stage: str) -> list[TaskResult]:
        variants = {str(i): params_of(self.config, s) for i, s in enumerate(settings)}
        done = (lambda n: self.progress(stage, n, len(self.tasks))) if self.progress else None
        results = evaluate_tasks(self.root, self.configs, self.tasks, self.embedder, variants, [], done,
                                 history=self.history)
        self.rankings += len(settings) * len(self.tasks)
        self.passes += 1
        return results


def search(searcher: _Searcher, current: Setting, rerank_on: bool) -> tuple[Setting, list[dict[str, Any]]]:
    """The best setting on the training tasks, and every setting tried with its training metrics."""
    tried: list[tuple[Setting, dict[str, float | None], int]] = []  # (setting, metrics, stage)

    def run(settings: list[Setting], stage: int) -> None:
        fresh = [s for s in settings if all(s != t[0] for t in tried)]
        fresh = [s for i, s in enumerate(fresh) if s not in fresh[:i]]
        if not fresh:
            return
        results = searcher.measure(fresh, f"stage {stage}")
        tried.extend((s, summary(results, str(i)), stage) for i, s in enumerate(fresh))

    def best_of(pool) -> tuple[Setting, dict[str, float | None]]:
        ranked = max(((s, m, i) for i, (s, m, _) in enumerate(tried) if any(s == p for p in pool)),
                     key=lambda x: _rank_key(x[1], len(changed(x[0], current)), x[2]))
        return ranked[0], ranked[1]

    run(candidates_stage1(current), 1)
    best, best_metrics = best_of([t[0] for t in tried])
    if rerank_on:
        run(candidates_stage2(best), 2)
        winners: dict[str, Any] = {}
        base_key = _rank_key(best_metrics, 0, 0)[:3]
        for key in RERANK_VALUES:
            alone = [t for t in tried if t[2] == 2 and changed(t[0], best) and set(changed(t[0], best)) == {key}]
            top = max(alone, key=lambda t: _rank_key(t[1], 0, 0)[:3], default=None)
            if top is not None and _rank_key(top[1], 0, 0)[:3] > base_key:
                winners[key] = top[0][key]
        if len(winners) > 1:
            run([dict(best, **winners)], 3)
        best, best_metrics = best_of([t[0] for t in tried])
    searched = [{"stage": stage, "changed": changed(s, current), **{m: metrics[m] for m in REPORTED}}
                for s, metrics, stage in tried]
    return best, searched


def run_tune(root: Path, config: Config, request: TuneRequest, *, eval_root: Path, embedder: Embedder | None = None,
             progress: Progress | None = None) -> TuneResult:
    """Search on the training half, check on the held-out half; ``eval_root`` holds the
    evaluation store (the repository root, or a temporary directory for ``--dry-run``)."""
    warnings: list[str] = []
    located = locate(request.tasks, request.repos)
    runnable = [t for t in request.tasks if t.commit in located]
    skipped = [{"id": t.id, "reason": "commit_not_found"} for t in request.tasks if t.commit not in located]
    train, held = split_tasks(runnable)
    current = current_setting(config)
    data: dict[str, Any] = {
        "baseline": {"settings": current, "train": None, "heldOut": None},
        "best": None, "gain": None, "ci95": None, "written": False, "decision": None,
        "dryRun": request.dry_run, "tasksFile": request.tasks_file, "tasks": len(request.tasks),
        "train": len(train), "heldOut": len(held), "skipped": skipped, "metric": METRIC,
        "searched": [], "cost": None, "configPath": ".ragit/config.toml", "warnings": warnings,
    }
    if len(train) < MIN_SPLIT or len(held) < MIN_SPLIT:
        data["decision"] = "too_few_tasks"
        warnings.append(f"{len(runnable)} task(s) split into {len(train)} train / {len(held)} held-out; "
                        f"each half needs at least {MIN_SPLIT}: nothing was searched")
        return TuneResult(data, None)

    if embedder is None:
        from ..embed import load_embedder

        embedder = load_embedder(config)
    started = (time.perf_counter(), time.process_time())
    configs, ingested, _ = index_roots(eval_root, config, runnable, located, embedder, progress, warnings)
    indexed = (time.perf_counter(), time.process_time())
    history = task_history(eval_root, located)
    searcher = _Searcher(eval_root, configs, config, train, embedder, history, progress)
    best, searched = search(searcher, current, bool(config["retrieval"]["rerank"]))
    searched_at = (time.perf_counter(), time.process_time())

    # stage 4, chunk size: the best setting with the other chunker, on a store indexed that way
    other = next(v for v in CHUNK_SIZES if v != current["chunker_version"]) \
        if current["chunker_version"] in CHUNK_SIZES else CHUNK_SIZES[0]
    sized = dict(best, chunker_version=other)
    sized_config = configured(config, sized)
    sized_configs, sized_ingested, _ = index_roots(eval_root, sized_config, runnable, located, embedder, progress,
                                                   warnings)
    sized_searcher = _Searcher(eval_root, sized_configs, sized_config, train, embedder, history, progress)
    sized_metrics = summary(sized_searcher.measure([sized], "stage 4"), "0")
    searched.append({"stage": 4, "changed": changed(sized, current), **{m: sized_metrics[m] for m in REPORTED}})
    best_row = next(r for r in searched if r["changed"] == changed(best, current))
    if _rank_key(sized_metrics, len(changed(sized, current)), 0) > _rank_key(best_row, len(changed(best, current)), 0):
        best = sized
    sized_at = (time.perf_counter(), time.process_time())

    # the held-out check: the current configuration against the best training setting, task by
    # task (each ranked on the store its chunker built)
    checker = _Searcher(eval_root, configs, config, held, embedder, history, progress)
    if best["chunker_version"] == current["chunker_version"]:
        settings = [current] if best == current else [current, best]
        results = checker.measure(settings, "held-out")
        base_per = per_task(results, "0")
        best_per = per_task(results, str(len(settings) - 1))
    else:
        base_per = per_task(checker.measure([current], "held-out"), "0")
        sized_checker = _Searcher(eval_root, sized_configs, sized_config, held, embedder, history, progress)
        best_per = per_task(sized_checker.measure([best], "held-out"), "0")
        checker.passes, checker.rankings = checker.passes + sized_checker.passes, \
            checker.rankings + sized_checker.rankings
    diff = paired_difference(base_per[METRIC], best_per[METRIC], resample_indices(len(held), request.seed))
    finished = (time.perf_counter(), time.process_time())

    gain, ci95 = diff if diff is not None else (None, None)
    train_of = {tuple(sorted(s["changed"].items())): s for s in searched}
    data["baseline"]["train"] = _metrics_only(train_of.get(()))
    data["baseline"]["heldOut"] = {m: mean(base_per[m]) for m in REPORTED}
    data["best"] = {"settings": best, "changed": changed(best, current),
                    "train": _metrics_only(train_of.get(tuple(sorted(changed(best, current).items())))),
                    "heldOut": {m: mean(best_per[m]) for m in REPORTED}}
    data["gain"], data["ci95"] = gain, ci95
    if best == current:
        data["decision"] = "no_better_setting"
    elif ci95 is None or not ci95[0] > 0:
        data["decision"] = "ci_includes_zero"
    else:
        data["decision"] = "dry_run" if request.dry_run else "written"
    data["searched"] = searched
    data["cost"] = {
        "settings": len(searched), "scoringPasses": searcher.passes + sized_searcher.passes + checker.passes,
        "rankings": searcher.rankings + sized_searcher.rankings + checker.rankings,
        "ingestedCommits": ingested + sized_ingested,
        "ingestSeconds": indexed[0] - started[0], "ingestCpuSeconds": indexed[1] - started[1],
        "searchSeconds": searched_at[0] - indexed[0], "searchCpuSeconds": searched_at[1] - indexed[1],
        "chunkSizeSeconds": sized_at[0] - searched_at[0], "chunkSizeCpuSeconds": sized_at[1] - searched_at[1],
        "heldOutSeconds": finished[0] - sized_at[0], "heldOutCpuSeconds": finished[1] - sized_at[1],
    }
    return TuneResult(data, best if data["decision"] in ("written", "dry_run") else None)


def _metrics_only(row: dict[str, Any] | None) -> dict[str, Any] | None:
    return None if row is None else {m: row[m] for m in REPORTED}


def write_setting(root: Path, setting: Setting) -> None:
    """Write ``setting`` into ``.ragit/config.toml`` (loaded fresh, every other key kept), atomically."""
    from ..config import load_config, write_config

    config = load_config(root)
    for table, values in _tables(setting).items():
        config.data[table].update(values)
    write_config(root, config)
