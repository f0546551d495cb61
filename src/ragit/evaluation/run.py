"""``eval run``: index every task's commit from git objects, then measure each mode (knowledge §21.2).

The evaluation store is keyed by what decides its content (schema, chunker, masking, the
configuration's ingest settings, the task root), not by the task set: BM25 statistics are each
snapshot's own (knowledge §11.4), so a snapshot scores the same whatever else the store holds.
A re-run, or a task set that changed by one task, indexes only the commits not yet there.
"""

from __future__ import annotations

import copy
import hashlib
import json
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..errors import RagitError
from .measure import ModeResult, TaskResult, evaluate_tasks
from .metrics import (
    ACC_KS,
    RECALL_KS,
    grouped_mean,
    mean,
    paired_difference,
    resample_indices,
)
from .tasks import Task

if TYPE_CHECKING:  # pragma: no cover
    from ..config import Config
    from ..embed.base import Embedder
    from ..gitsnap.cochange import CoChange
    from ..gitsnap.git import Git
    from ..retrieve.search import RetrievalParams

MODES = ("keyword", "vector", "hybrid")
DEFAULT_BUDGETS = (600, 1200, 2400)
EVAL_DIR = ".ragit/cache/eval"
COMPARED = ("recallAt5", "recallAt10", "mrr", "ndcgAt10")

Progress = Callable[[str, int, int], None]


@dataclass
class EvalRequest:
    tasks_file: str  # as given
    tasks: list[Task]
    repos: list[Git]
    modes: list[str]
    budgets: list[int]
    seed: int = 0
    per_task: Path | None = None  # write each task's ranking here (JSON Lines, ``--per-task``)


@dataclass
class EvalRun:
    data: dict[str, Any]
    ingested: int = 0  # commits indexed by this run (0 on a re-run)
    embedded_chunks: int = 0


@dataclass
class _ModeTotals:
    """Per-task values of one mode, in task order."""

    recall: dict[int, list[float]] = field(default_factory=lambda: {k: [] for k in RECALL_KS})
    acc: dict[int, list[float]] = field(default_factory=lambda: {k: [] for k in ACC_KS})
    mrr: list[float] = field(default_factory=list)
    ndcg: list[float] = field(default_factory=list)
    pack: dict[int, list[float]] = field(default_factory=dict)
    tokens: dict[int, list[float]] = field(default_factory=dict)
    seconds: list[float] = field(default_factory=list)

    def add(self, result: ModeResult) -> None:
        """Append one task's measurements (tasks are added in task order)."""
        for k in RECALL_KS:
            self.recall[k].append(result.ranked.recall[k])
        for k in ACC_KS:
            self.acc[k].append(result.ranked.acc[k])
        self.mrr.append(result.ranked.mrr)
        self.ndcg.append(result.ndcg)
        for budget, value in result.pack.items():
            self.pack[budget].append(value)
        for budget, value in result.tokens.items():
            self.tokens[budget].append(value)
        self.seconds.append(result.seconds)


def mode_alpha(mode: str, config: Config) -> float:
    return {"keyword": 0.0, "vector": 1.0}.get(mode, config["retrieval"]["alpha"])


def mode_variants(config: Config, modes: list[str]) -> "dict[str, RetrievalParams]":
    """Each mode's retrieval parameters: the configuration's, with the mode's alpha."""
    from ..retrieve.search import RetrievalParams

    return {m: RetrievalParams.from_config(config, alpha=mode_alpha(m, config)) for m in modes}


def open_repository(path: Path, given: str) -> Git:
    """A Git handle for ``path`` (worktree or bare repository), else GIT_REPOSITORY_REQUIRED."""
    from ..gitsnap.git import Git

    git = Git(path)
    if not path.is_dir() or git.call("rev-parse", "--git-dir").returncode != 0:
        raise RagitError("GIT_REPOSITORY_REQUIRED", f"{given} is not a Git repository",
                         {"repo": given, "path": str(path)}, "git init")
    return git


def locate(tasks: list[Task], repos: list[Git]) -> dict[str, Git]:
    """Commit -> the first repository holding it as a commit object (one batch query per repository)."""
    found: dict[str, Git] = {}
    wanted = list(dict.fromkeys(t.commit for t in tasks))
    for git in repos:
        ask = [sha for sha in wanted if sha not in found]
        if not ask:
            break
        out = git.run("cat-file", "--batch-check=%(objectname) %(objecttype)", input=("\n".join(ask) + "\n").encode())
        for line in out.decode().splitlines():
            sha, _, kind = line.partition(" ")
            if kind == "commit":
                found[sha] = git
    return found


def eval_config(config: Config, embedder_id: str, root: str = ".") -> Config:
    """The configuration of this task set's evaluation store under ``.ragit/cache/eval/<key>/``.

    A task's ``root`` restricts indexing to the files under it (``ingest.include``), as the
    code-search benchmark prescribes; every other setting is the configuration being measured.
    """
    from ..config import Config
    from ..ingest.pipeline import current_params
    from ..store import SCHEMA_VERSION

    data = copy.deepcopy(config.data)
    if root not in (".", ""):
        data["ingest"]["include"] = [f"{root}/**"]
    scoped = Config(data, config.path, config.exists)
    params = current_params(scoped, embedder_id)
    identity = json.dumps([SCHEMA_VERSION, params.chunker_version, params.masking_version, params.config_hash])
    key = hashlib.sha256(identity.encode()).hexdigest()[:16]
    data["storage"]["manifest_dir"] = f"{EVAL_DIR}/{key}/manifest"
    data["storage"]["store_dir"] = f"{EVAL_DIR}/{key}/store"
    if isinstance(data.get("store"), dict) and not data["store"].get("repository_id"):
        # a shared database (postgres): the evaluation store's snapshots under a key of their own
        data["store"]["repository_id"] = f"eval:{key}"
    return Config(data, config.path, config.exists)


def load_eval_embedder(config: Config, modes: list[str], warnings: list[str]) -> Embedder:
    """The configured embedder; keyword-only runs fall back to the placeholder when it is missing."""
    from ..embed import load_embedder

    try:
        return load_embedder(config)
    except RagitError as exc:
        if exc.code != "EMBEDDER_UNAVAILABLE" or modes != ["keyword"]:
            raise
    from ..embed.placeholder import PlaceholderEmbedder

    warnings.append("the configured embedder is unavailable; indexed with placeholder vectors (keyword mode ignores them)")
    return PlaceholderEmbedder()


def _indexed(root: Path, config: Config, sha: str, params, store) -> bool:
    from ..ingest.manifest import load_manifest
    from ..store import holds_manifest

    if store is None:
        return False
    try:
        # a manifest the store published is read by its header (the document list is not needed)
        loaded = load_manifest(root, config, sha, trusted=lambda s, digest: holds_manifest(store, s, digest))
    except RagitError:
        return False
    return loaded.manifest.params == params and holds_manifest(store, sha, loaded.sha256)


def index_commits(root: Path, config: Config, commits: list[tuple[str, Git]], embedder: Embedder,
                  progress: Progress | None, warnings: list[str] | None = None) -> tuple[int, int]:
    """Ingest every commit not yet in the evaluation store, in the given order; returns (ingested,
    embedded chunks). A commit whose clone lacks some blobs (a partial clone) is indexed without
    them and named in ``warnings``.

    The order is kept on purpose: it decides the store's row numbering, and the re-rank pool
    breaks ties among equal scores by row position, so another order can move a tied row in or
    out of a pool."""
    from ..ingest.pipeline import IngestRequest, current_params, run_ingest
    from ..ingest.publish import keyword_postings_deferred
    from ..store import open_store_read, store_exists

    params = current_params(config, embedder.id)
    store = open_store_read(root, config) if store_exists(root, config) else None
    try:
        todo = [(sha, git) for sha, git in commits if not _indexed(root, config, sha, params, store)]
    finally:
        if store is not None:
            store.close()
    embedded = 0
    with keyword_postings_deferred(root, config):  # refreshed once, after the last commit
        for n, (sha, git) in enumerate(todo, 1):
            result = run_ingest(root, git, config, IngestRequest(mode="full"), commit=sha, check_dirty=False,
                                embedder=embedder)
            embedded += result.embedded_chunks
            missing = sum(1 for f in result.skipped_files if f["reason"] == "missing_object")
            if missing and warnings is not None:
                warnings.append(f"{sha[:12]}: {missing} file(s) skipped, their git objects are missing from the clone")
            if progress:
                progress("index", n, len(todo))
    return len(todo), embedded


def index_roots(root: Path, config: Config, tasks: list[Task], located: dict[str, Git], embedder: Embedder,
                progress: Progress | None, warnings: list[str] | None = None) -> tuple[dict[str, Config], int, int]:
    """Index the tasks' commits, one evaluation store per task root (a root's files are indexed
    alone); returns each root's configuration and the commits and chunks indexed by this call."""
    by_root: dict[str, list[str]] = {}
    for t in tasks:
        commits = by_root.setdefault(t.root, [])
        if t.commit not in commits:
            commits.append(t.commit)
    configs = {r: eval_config(config, embedder.id, r) for r in by_root}
    ingested = embedded = 0
    for r, commits in by_root.items():
        done = index_commits(root, configs[r], [(sha, located[sha]) for sha in commits], embedder, progress,
                             warnings)
        ingested += done[0]
        embedded += done[1]
    return configs, ingested, embedded


def task_history(root: Path, located: dict[str, Git]) -> "Callable[[str], CoChange | None]":
    """Co-change statistics of a task's commit, as ``query`` reads them for its snapshot; each
    repository's mined change lists are cached under the evaluation store (one file per
    repository, so several repositories in one run do not evict each other)."""
    from ..retrieve.cochange_boost import snapshot_cochange

    def history(sha: str):
        git = located[sha]
        key = hashlib.sha256(str(git.root).encode()).hexdigest()[:16]
        return snapshot_cochange(git, root / ".ragit" / "cache" / "eval" / f"history-{key}", sha,
                                 keep_changes=True)

    return history


def run_eval(root: Path, config: Config, request: EvalRequest, *, embedder: Embedder | None = None,
             progress: Progress | None = None) -> EvalRun:
    """Evaluate ``request`` with the evaluation store under ``root``; returns the JSON ``data``."""
    warnings: list[str] = []
    located = locate(request.tasks, request.repos)
    runnable = [t for t in request.tasks if t.commit in located]
    skipped = [{"id": t.id, "reason": "commit_not_found"} for t in request.tasks if t.commit not in located]
    if embedder is None:
        embedder = load_eval_embedder(config, request.modes, warnings)
    clock = _Clock()
    configs, ingested, embedded = index_roots(root, config, runnable, located, embedder, progress, warnings)
    ingest_time = clock.lap()

    alphas = {m: mode_alpha(m, config) for m in request.modes}
    variants = mode_variants(config, request.modes)
    done = (lambda n: progress("evaluate", n, len(runnable))) if progress else None
    results = evaluate_tasks(root, configs, runnable, embedder, variants, request.budgets, done,
                             history=task_history(root, located))
    query_time = clock.lap()
    totals = {m: _ModeTotals(pack={b: [] for b in request.budgets}, tokens={b: [] for b in request.budgets})
              for m in request.modes}
    for result in results:
        for mode in request.modes:
            totals[mode].add(result.modes[mode])
    if not runnable:
        warnings.append("no task was evaluated; every metric is undefined")
    if request.per_task is not None:
        from ..fsutil import atomic_write_text

        atomic_write_text(request.per_task, per_task_lines(runnable, results, request.modes))

    data = {
        "tasksFile": request.tasks_file,
        "tasks": len(request.tasks),
        "evaluated": len(runnable),
        "skipped": skipped,
        "embedderId": embedder.id,
        "modes": [_mode_row(m, alphas[m], totals[m], request.budgets, runnable) for m in request.modes],
        "comparisons": _comparisons(request.modes, totals, len(runnable), request.seed),
        "timing": _timing(ingest_time, ingested, query_time, runnable, results),
        "warnings": warnings,
    }
    return EvalRun(data, ingested, embedded)


PER_TASK_FILES = 10  # files of each ranking ``--per-task`` writes


def per_task_lines(tasks: list[Task], results: list[TaskResult], modes: list[str]) -> str:
    """JSON Lines, one per task and mode in task order: where each gold file ranked (None: not in
    the top 100 hits' files), the first files returned and the task's metrics, so a run's misses
    can be read one by one (what ``eval run`` otherwise only reports as means)."""
    lines = []
    for task, result in zip(tasks, results):
        for mode in modes:
            m = result.modes[mode]
            rank = {path: i for i, path in enumerate(m.files, 1)}
            lines.append(json.dumps({
                "id": task.id, "mode": mode, "query": task.query,
                "gold": {path: rank.get(path) for path in task.gold},
                "files": m.files[:PER_TASK_FILES],
                "recallAt5": m.ranked.recall[5], "recallAt10": m.ranked.recall[10], "mrr": m.ranked.mrr,
                "ndcgAt10": m.ndcg,
            }, ensure_ascii=False))
    return "".join(line + "\n" for line in lines)


def _mode_row(mode: str, alpha: float, t: _ModeTotals, budgets: list[int], tasks: list[Task]) -> dict[str, Any]:
    repos = [task.repo for task in tasks]
    return {
        "mode": mode,
        "alpha": alpha,
        "recallAt1": mean(t.recall[1]),
        "recallAt5": mean(t.recall[5]),
        "recallAt10": mean(t.recall[10]),
        "accAt5": mean(t.acc[5]),
        "accAt10": mean(t.acc[10]),
        "mrr": mean(t.mrr),
        "ndcgAt10": grouped_mean(t.ndcg, repos),
        "byCategory": _breakdown(t, tasks, lambda task: task.category),
        "byLanguage": _breakdown(t, tasks, lambda task: task.language),
        "packRecall": {str(b): mean(t.pack[b]) for b in budgets},
        "tokensPerTask": {str(b): mean(t.tokens[b]) for b in budgets},
        "secondsPerTask": mean(t.seconds),
    }


def _breakdown(t: _ModeTotals, tasks: list[Task], key: Callable[[Task], str | None]) -> dict[str, Any]:
    """Metrics per category (or language), sorted by name; NDCG@10 averaged per repository first,
    as the benchmark does. Empty when no task names one."""
    out: dict[str, Any] = {}
    names = sorted({name for task in tasks if (name := key(task)) is not None})
    for name in names:
        idx = [i for i, task in enumerate(tasks) if key(task) == name]
        out[name] = {
            "tasks": len(idx),
            "ndcgAt10": grouped_mean([t.ndcg[i] for i in idx], [tasks[i].repo for i in idx]),
            "recallAt5": mean([t.recall[5][i] for i in idx]),
            "recallAt10": mean([t.recall[10][i] for i in idx]),
            "mrr": mean([t.mrr[i] for i in idx]),
        }
    return out


def _per_task(t: _ModeTotals, metric: str) -> list[float]:
    return {"recallAt5": t.recall[5], "recallAt10": t.recall[10], "mrr": t.mrr, "ndcgAt10": t.ndcg}[metric]


def _comparisons(modes: list[str], totals: dict[str, _ModeTotals], n: int, seed: int) -> list[dict[str, Any]]:
    """Every pair of modes (in mode order) × R@5, R@10, MRR: mean of b − a and its bootstrap CI."""
    indices = resample_indices(n, seed) if n else None
    out = []
    for i, a in enumerate(modes):
        for b in modes[i + 1:]:
            for metric in COMPARED:
                result = paired_difference(_per_task(totals[a], metric), _per_task(totals[b], metric), indices)
                diff, ci = result if result is not None else (None, None)
                out.append({"a": a, "b": b, "metric": metric, "diff": diff, "ci95": ci})
    return out


class _Clock:
    """Wall and CPU seconds since the last lap (CPU: this process's, not its git children's)."""

    def __init__(self) -> None:
        self._wall, self._cpu = time.perf_counter(), time.process_time()

    def lap(self) -> tuple[float, float]:
        wall, cpu = time.perf_counter(), time.process_time()
        spent = (wall - self._wall, cpu - self._cpu)
        self._wall, self._cpu = wall, cpu
        return spent


def _timing(ingest: tuple[float, float], ingested: int, query: tuple[float, float], tasks: list[Task],
            results: list[TaskResult]) -> dict[str, Any]:
    """Where the run's time went: indexing the commits not yet in the store, then the queries
    (scoring, ranking and measuring every mode of every task), wall and CPU seconds, with each
    task's wall seconds split into loading its snapshot, vector scores, keyword scores (its
    share of the batch's postings reads) and ranking (measured, never compared)."""
    n = len(tasks)
    return {
        "ingestSeconds": ingest[0],
        "ingestCpuSeconds": ingest[1],
        "ingestedCommits": ingested,
        "querySeconds": query[0],
        "queryCpuSeconds": query[1],
        "querySecondsPerTask": query[0] / n if n else None,
        "queryCpuSecondsPerTask": query[1] / n if n else None,
        "perTask": [{"id": task.id, **{k: r.timing[k] for k in ("seconds", "load", "vector", "keyword", "rank")}}
                    for task, r in zip(tasks, results)],
    }
