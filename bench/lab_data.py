"""Snapshot data for the retrieval-quality lab (bench/quality_lab.py): every chunk of every task's
snapshot, read once from the evaluation stores that `ragit eval run` builds, cached as a pickle.

For each task set the cache holds, per repository store, the distinct (path, chunk) rows with
their title, lines, text and vector, and per snapshot the rows it contains; per task its query,
gold entries, root, category and language. The lab scores ranking variants from this in numpy.
"""

from __future__ import annotations

import pickle
import sys
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np


@dataclass
class Store:
    """The distinct rows of one evaluation store (one repository and root)."""

    paths: list[str] = field(default_factory=list)
    titles: list[str] = field(default_factory=list)
    texts: list[str] = field(default_factory=list)
    starts: list[int] = field(default_factory=list)
    ends: list[int] = field(default_factory=list)
    doc_types: list[str] = field(default_factory=list)
    vectors: list[np.ndarray] = field(default_factory=list)
    index: dict[tuple[str, str], int] = field(default_factory=dict)  # (path, chunk id) -> row

    def add(self, row, vector) -> int:
        key = (row.path, row.chunk_id)
        at = self.index.get(key)
        if at is None:
            at = self.index[key] = len(self.paths)
            self.paths.append(row.path)
            self.titles.append(row.title)
            self.texts.append(row.text)
            self.starts.append(row.start_line)
            self.ends.append(row.end_line)
            self.doc_types.append(row.doc_type)
            self.vectors.append(np.asarray(vector, dtype=np.float32))
        return at


@dataclass
class LabTask:
    id: str
    repo: str
    query: str
    gold: tuple[str, ...]
    targets: tuple  # GoldEntry
    category: str | None
    language: str | None
    store: str  # key into LabData.stores
    rows: np.ndarray  # store row indices of the task's snapshot (sorted)


@dataclass
class LabData:
    embedder_id: str
    stores: dict[str, Store]
    tasks: list[LabTask]

    def matrix(self, key: str) -> np.ndarray:
        cache = self.__dict__.setdefault("_matrices", {})
        if key not in cache:
            cache[key] = np.vstack(self.stores[key].vectors) if self.stores[key].vectors else np.zeros((0, 1), np.float32)
        return cache[key]


def collect(tasks_file: Path, repos: list[Path], cwd: Path, config_overrides: dict | None = None) -> LabData:
    """Index the task commits as `ragit eval run` does (reusing its stores), then read every row."""
    from ragit.config import Config, load_config
    from ragit.embed import load_embedder
    from ragit.evaluation.run import index_roots, locate, open_repository
    from ragit.evaluation.tasks import load_tasks
    from ragit.ingest.manifest import load_manifest
    from ragit.retrieve.readiness import open_checked_store
    from ragit.retrieve.search import load_matrix

    config = load_config(cwd)
    if config_overrides:
        import copy

        data = copy.deepcopy(config.data)
        for dotted, value in config_overrides.items():
            section, key = dotted.split(".", 1)
            data[section][key] = value
        config = Config(data, config.path, config.exists)
    embedder = load_embedder(config)
    tasks = load_tasks(tasks_file, str(tasks_file))
    gits = [open_repository(r, str(r)) for r in repos]
    where = locate(tasks, gits)
    tasks = [t for t in tasks if t.commit in where]
    configs = index_roots(cwd, config, tasks, where, embedder, None)[0]

    stores: dict[str, Store] = {}
    snapshots: dict[tuple[str, str], np.ndarray] = {}
    out: list[LabTask] = []
    for n, task in enumerate(tasks, 1):
        ec = configs[task.root]
        skey = f"{task.repo}:{task.root}"
        store = stores.setdefault(skey, Store())
        if (skey, task.commit) not in snapshots:
            loaded = load_manifest(cwd, ec, task.commit)
            st = open_checked_store(cwd, ec, loaded, embedder.id)
            try:
                snap = load_matrix(st, task.commit, embedder.id)
                rows = st.fetch_rows(task.commit, [int(r) for r in snap.rowids])
            finally:
                st.close()
            idx = [store.add(rows[int(r)], snap.matrix[i]) for i, r in enumerate(snap.rowids)]
            snapshots[(skey, task.commit)] = np.array(sorted(idx), dtype=np.int64)
        out.append(LabTask(task.id, task.repo, task.query, task.gold, task.targets, task.category, task.language,
                           skey, snapshots[(skey, task.commit)]))
        if n % 50 == 0 or n == len(tasks):
            print(f"[lab] {n}/{len(tasks)} tasks read", file=sys.stderr)
    return LabData(embedder.id, stores, out)


def load(tasks_file: Path, repos: list[Path], cwd: Path, cache: Path, config_overrides: dict | None = None) -> LabData:
    if cache.is_file():
        with cache.open("rb") as fh:
            return pickle.load(fh)
    data = collect(tasks_file, repos, cwd, config_overrides)
    cache.parent.mkdir(parents=True, exist_ok=True)
    with cache.open("wb") as fh:
        pickle.dump(data, fh, protocol=pickle.HIGHEST_PROTOCOL)
    return data
