"""Cost of the co-change signal: mining a repository's history and the per-query boost.

    python bench/cochange_cost.py                                   # flask's mirror at HEAD
    python bench/cochange_cost.py --repo /work/.mirror/psf+requests/repo --json out.json

Rows (CPU seconds of this process plus its git children, and wall):
* cold mine: no cache, the last ``--limit`` non-merge commits read with ``git diff-tree``;
* incremental: the cache holds the snapshot 50 commits back, the new snapshot mines the rest;
* cached load + count: what a fresh CLI process pays (read the cache, count the pairs);
* warm boost, synthetic: ``apply_cochange`` on a pool of 200 candidates over the 100 busiest
  files (every one a partner of the top hits: the worst case), statistics in memory;
* warm boost, real pools (with ``--lab-set``): the re-ranked pools of a task set's queries, read
  from the quality lab's cache, against the code re-rank on the same pools (interleaved rounds,
  the fastest round of each, so a loaded machine inflates both alike).
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import tempfile
from pathlib import Path

from cputime import measure


def _real_pools(name: str, cwd: Path, rounds: int) -> list[tuple[str, float, float, str]]:
    """Per-query CPU of the boost and of the code re-rank on the pools of ``name``'s queries."""
    import sys

    sys.path.insert(0, str(Path(__file__).resolve().parent))
    import quality_lab as ql
    from lab_data import load
    from ragit.config import load_config
    from ragit.embed import load_embedder
    from ragit.retrieve import cochange_boost, rerank as rr

    embedder = load_embedder(load_config(cwd))
    path = ql.task_set(name)
    data = load(path, [], cwd, cwd / "lab" / f"{path.stem}-{embedder.id.split(':')[0]}.pkl")
    lab = ql.Lab(data, embedder, ql.History(path, Path("/work/.mirror"), Path("/tmp/ragit-lab-cochange")))
    calls: list[tuple] = []  # (question, rerank input, weights, top) and the boost's arguments
    real_rerank, real_boost = rr.rerank, cochange_boost.apply_cochange

    def spy_rerank(question, inp, weights, top):
        calls.append(("rerank", (question, inp, weights, top)))
        return real_rerank(question, inp, weights, top)

    def spy_boost(result, paths, stats, weights=cochange_boost.CochangeWeights()):
        calls.append(("boost", (result, paths, stats, weights)))
        return real_boost(result, paths, stats, weights)

    rr.rerank, cochange_boost.apply_cochange = spy_rerank, spy_boost
    try:
        ql.evaluate(lab, ql.Variant("cochange", cochange={}))
    finally:
        rr.rerank, cochange_boost.apply_cochange = real_rerank, real_boost
    reranks = [a for kind, a in calls if kind == "rerank"]
    boosts = [a for kind, a in calls if kind == "boost"]
    best = {"rerank": (float("inf"), float("inf")), "boost": (float("inf"), float("inf"))}
    for _ in range(rounds):
        for kind, fn, argl in (("rerank", real_rerank, reranks), ("boost", real_boost, boosts)):
            _, cpu, wall = measure(lambda: [fn(*a) for a in argl])
            best[kind] = (min(best[kind][0], cpu / len(argl)), min(best[kind][1], wall / len(argl)))
    pool = sum(len(a[1]) for a in boosts) / len(boosts)
    return [(f"warm boost, {name} pools", *best["boost"], f"{len(boosts)} queries, mean pool {pool:.0f}"),
            (f"code re-rank, {name} pools (reference)", *best["rerank"], "same pools")]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--repo", type=Path, default=Path("/work/.mirror/pallets+flask/repo"))
    ap.add_argument("--rev", default="HEAD")
    ap.add_argument("--limit", type=int, default=None)
    ap.add_argument("--json", type=Path, default=None)
    ap.add_argument("--lab-set", default=None, help="also time real pools of this task set (e.g. hist_flask)")
    ap.add_argument("--lab-cwd", type=Path, default=Path("/tmp/evalcode"), help="the quality lab's --cwd")
    ap.add_argument("--rounds", type=int, default=7)
    args = ap.parse_args()

    from ragit.gitsnap import cochange
    from ragit.gitsnap.git import Git
    from ragit.retrieve.cochange_boost import apply_cochange
    from ragit.retrieve.rerank import RerankResult

    limit = args.limit or cochange.DEFAULT_LIMIT
    git = Git(args.repo)
    head = git.run("rev-parse", args.rev).decode().strip()
    back = git.run("rev-parse", f"{head}~50").decode().strip()
    rows = []
    cache = Path(tempfile.mkdtemp(prefix="ragit-cochange-bench-"))
    try:
        changes, cpu, wall = measure(lambda: cochange.load_changes(git, None, head, limit))
        rows.append(("cold mine", cpu, wall, f"{len(changes)} commits"))
        cochange.load_changes(git, cache, back, limit)
        _, cpu, wall = measure(lambda: cochange.load_changes(git, cache, head, limit))
        rows.append(("incremental (cache 50 commits back)", cpu, wall, ""))
        size = (cache / cochange.CACHE_DIR / "changes.json").stat().st_size
        stats, cpu, wall = measure(lambda: cochange.count(cochange.load_changes(git, cache, head, limit)))
        rows.append(("cached load + count", cpu, wall, f"cache {size / 1e6:.1f} MB, {len(stats.touched)} files"))
    finally:
        shutil.rmtree(cache)

    # a realistic pool: the files that changed most, two chunks each, the busiest on top
    files = sorted(stats.touched, key=lambda f: (-stats.touched[f], f))[:100]
    paths = [f for f in files for _ in range(2)]
    scores = {i: 1.0 - i / len(paths) for i in range(len(paths))}
    result = RerankResult(list(range(len(paths))), scores, {})
    boosted = apply_cochange(result, paths, stats)
    moved = sum(1 for f in boosted.factors.values() if "cochange" in f)
    stats.__dict__.pop("_partners", None)
    apply_cochange(result, paths, stats)  # the first query of a snapshot fills P(f | h) of its hits
    calls = 2000
    best_cpu = best_wall = float("inf")
    for _ in range(args.rounds):
        _, cpu, wall = measure(lambda: [apply_cochange(result, paths, stats) for _ in range(calls)])
        best_cpu, best_wall = min(best_cpu, cpu), min(best_wall, wall)
    rows.append(("warm boost, synthetic worst case", best_cpu / calls, best_wall / calls,
                 f"pool {len(paths)}, {moved} raised"))
    if args.lab_set:
        rows += _real_pools(args.lab_set, args.lab_cwd, args.rounds)

    print(f"repository {args.repo} at {head[:10]}, limit {limit}, cpu count {os.cpu_count()}")
    print("| step | CPU ms | wall ms | note |")
    print("|---|---|---|---|")
    for name, cpu, wall, note in rows:
        print(f"| {name} | {cpu * 1e3:.3f} | {wall * 1e3:.3f} | {note} |")
    if args.json:
        args.json.write_text(json.dumps({
            "repo": str(args.repo), "commit": head, "limit": limit,
            "rows": [{"step": n, "cpu_ms": c * 1e3, "wall_ms": w * 1e3, "note": t} for n, c, w, t in rows],
        }, indent=1))


if __name__ == "__main__":
    main()
