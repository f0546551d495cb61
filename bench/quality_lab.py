"""Retrieval-quality lab: try score normalisations and fusions offline on real history tasks.

`ragit eval run` measures the shipped pipeline; this script caches, per task, the raw inputs of
the hybrid formula (cosine and raw BM25 per snapshot chunk, and the chunk's file) from the
evaluation store, then scores many variants of "what vector and keyword mean" in numpy within
seconds. It is how the defaults in docs/evaluation.md were chosen; it is not part of ragit.

    python bench/quality_lab.py /work/shared/bench/tasks/hist_flask.jsonl \
        --repo /work/.mirror/pallets+flask/repo --cwd /tmp/lab-flask

The first run indexes the task commits into the evaluation store of --cwd (as `ragit eval run`
does) and writes <cwd>/lab-<set>.pkl; later runs reuse both.
"""

from __future__ import annotations

import argparse
import json
import pickle
import sys
from pathlib import Path

import numpy as np


def collect(tasks_file: Path, repos: list[Path], cwd: Path) -> list[dict]:
    from ragit.config import load_config
    from ragit.embed import load_embedder
    from ragit.evaluation.run import eval_config, index_commits, locate, open_repository
    from ragit.evaluation.tasks import load_tasks
    from ragit.ingest.manifest import load_manifest
    from ragit.retrieve.readiness import open_checked_store
    from ragit.retrieve.search import load_matrix, query_terms
    from ragit.security.masking import mask_text

    config = load_config(cwd)
    embedder = load_embedder(config)
    tasks = load_tasks(tasks_file, str(tasks_file))
    gits = [open_repository(r, str(r)) for r in repos]
    where = locate(tasks, gits)
    tasks = [t for t in tasks if t.commit in where]
    ec = eval_config(config, [t.commit for t in tasks], embedder.id)
    index_commits(cwd, ec, [(t.commit, where[t.commit]) for t in tasks], embedder, None)
    out = []
    for n, task in enumerate(tasks, 1):
        loaded = load_manifest(cwd, ec, task.commit)
        store = open_checked_store(cwd, ec, loaded, embedder.id)
        try:
            snap = load_matrix(store, task.commit, embedder.id)
            q = mask_text(task.query).text
            vector = (snap.matrix @ embedder.embed([q])[0]).astype(np.float64)
            raw = np.zeros(len(snap.keys))
            terms = query_terms(q)
            if terms:
                index = {k: i for i, k in enumerate(snap.keys)}
                for path, cid, score in store.keyword_scores(task.commit, terms):
                    if (path, cid) in index:
                        raw[index[(path, cid)]] = score
        finally:
            store.close()
        out.append({"id": task.id, "gold": list(task.gold), "files": [k[0] for k in snap.keys],
                    "vector": vector.astype(np.float32), "raw": raw.astype(np.float32)})
        if n % 25 == 0 or n == len(tasks):
            print(f"[lab] {n}/{len(tasks)}", file=sys.stderr)
    print(file=sys.stderr)
    return out


def file_metrics(scores: np.ndarray, files: list[str], gold: list[str]) -> tuple[float, float, float]:
    """R@5, R@10, MRR of the file ranking by best chunk (ties broken by path)."""
    order = sorted(range(len(files)), key=lambda i: (-scores[i], files[i]))
    ranked: list[str] = []
    seen = set()
    for i in order:
        if files[i] not in seen:
            seen.add(files[i])
            ranked.append(files[i])
            if len(ranked) >= 100:
                break
    g = set(gold)
    r5 = len(g & set(ranked[:5])) / len(g)
    r10 = len(g & set(ranked[:10])) / len(g)
    mrr = next((1 / (i + 1) for i, f in enumerate(ranked) if f in g), 0.0)
    return r5, r10, mrr


def variants(alpha: float = 0.7):
    """name -> function(vector, raw, files) -> final score per row."""

    def kmax(raw):
        m = raw.max() if len(raw) else 0
        return raw / m if m > 0 else np.zeros_like(raw)

    def hybrid(v, k):
        return alpha * v + (1 - alpha) * k

    def vminmax(v):
        lo, hi = v.min(), v.max()
        return (v - lo) / (hi - lo) if hi > lo else np.zeros_like(v)

    def vgated(v, raw, top=50):
        # cosine only counts relative to the best lexical candidates' pool
        out = np.zeros_like(v)
        pool = np.argsort(-raw)[:top]
        pool = pool[raw[pool] > 0]
        if len(pool):
            out[pool] = v[pool]
        return out

    def vrel(v, raw):
        # cosine rescaled to the spread of the keyword candidates: max cosine ↦ 1, median ↦ 0
        med = np.median(v)
        hi = v.max()
        return np.clip((v - med) / (hi - med), 0, 1) if hi > med else np.zeros_like(v)

    def file_agg(score, files, beta=0.3):
        # boost each chunk by the mean of its file's other chunk scores
        by: dict[str, list[int]] = {}
        for i, f in enumerate(files):
            by.setdefault(f, []).append(i)
        out = score.copy()
        for idx in by.values():
            if len(idx) > 1:
                s = score[idx]
                out[idx] = s + beta * (s.sum() - s) / (len(idx) - 1)
        return out

    return {
        "keyword (alpha 0)": lambda v, r, f: kmax(r),
        "vector (alpha 1)": lambda v, r, f: v,
        "seed: raw cos + bm25/max": lambda v, r, f: hybrid(v, kmax(r)),
        "minmax cos": lambda v, r, f: hybrid(vminmax(v), kmax(r)),
        "relative cos (median..max)": lambda v, r, f: hybrid(vrel(v, r), kmax(r)),
        "cos gated to bm25 top50": lambda v, r, f: hybrid(vgated(v, r), kmax(r)),
        "relative cos, gated top50": lambda v, r, f: hybrid(vgated(vrel(v, r), r), kmax(r)),
        "seed + file agg": lambda v, r, f: file_agg(hybrid(v, kmax(r)), f),
        "relative cos + file agg": lambda v, r, f: file_agg(hybrid(vrel(v, r), kmax(r)), f),
        "keyword + file agg": lambda v, r, f: file_agg(kmax(r), f),
        "seed, keyword squared": lambda v, r, f: hybrid(v, kmax(r) ** 2),
        "gated top50 + file agg": lambda v, r, f: file_agg(hybrid(vgated(v, r), kmax(r)), f),
        "gated top100 + file agg": lambda v, r, f: file_agg(hybrid(vgated(v, r, 100), kmax(r)), f),
        "gated top20 + file agg": lambda v, r, f: file_agg(hybrid(vgated(v, r, 20), kmax(r)), f),
        "keyword squared + file agg": lambda v, r, f: file_agg(hybrid(v, kmax(r) ** 2), f),
        "seed + file agg 0.5": lambda v, r, f: file_agg(hybrid(v, kmax(r)), f, 0.5),
        "seed + file agg 0.15": lambda v, r, f: file_agg(hybrid(v, kmax(r)), f, 0.15),
    }


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("tasks", type=Path)
    ap.add_argument("--repo", type=Path, action="append", required=True)
    ap.add_argument("--cwd", type=Path, required=True)
    ap.add_argument("--alpha", type=float, default=0.7)
    ap.add_argument("--out", type=Path)
    args = ap.parse_args()
    args.cwd.mkdir(parents=True, exist_ok=True)
    cache = args.cwd / f"lab-{args.tasks.stem}.pkl"
    if cache.exists():
        data = pickle.loads(cache.read_bytes())
    else:
        data = collect(args.tasks, args.repo, args.cwd)
        cache.write_bytes(pickle.dumps(data))
    rows = []
    print(f"| variant ({args.tasks.stem}, {len(data)} tasks) | R@5 | R@10 | MRR |")
    print("|---|---|---|---|")
    for name, fn in variants(args.alpha).items():
        m = np.array([file_metrics(fn(t["vector"].astype(np.float64), t["raw"].astype(np.float64), t["files"]),
                                   t["files"], t["gold"]) for t in data])
        r5, r10, mrr = m.mean(axis=0)
        rows.append({"variant": name, "R@5": r5, "R@10": r10, "MRR": mrr})
        print(f"| {name} | {r5:.3f} | {r10:.3f} | {mrr:.3f} |")
    if args.out:
        args.out.write_text(json.dumps(rows, indent=2) + "\n")


if __name__ == "__main__":
    main()
