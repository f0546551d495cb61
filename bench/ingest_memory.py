"""Peak memory of a full ``ragit ingest --all`` as the corpus grows (issue 15: 1M chunks in <= 4 GB).

Builds typed Markdown corpora with bench/ingest_query.py's generator (fixed seed, ~6 chunks per
document) and runs ``ragit ingest --all`` on each as a child process under the launcher of
ingest_query.py, which reports the child's own CPU time and peak RSS (``wait4``: the largest of
the ingest's and each reaped worker's own peaks, never their sum). Since the ingest forks worker
processes (src/ragit/ingest/workers.py), the whole tree is also sampled from /proc
(bench/proctree.py, every ``--interval`` seconds): the peak of its summed RSS, and of its summed
PSS, which counts a page shared by n processes (the copy-on-write image a worker inherits, the
model mapped once) 1/n in each, so once in the sum: the memory the tree takes from the machine.
Every size runs with each ``--workers`` setting (RAGIT_INGEST_WORKERS; ``default`` leaves it
unset) and each ``--src`` (PYTHONPATH) for a before/after comparison in one run. The slope per
100k chunks of each figure (least squares over the sizes) projects 1M chunks.

The default sizes reach 300k chunks: from ``vectorindex.APPROX_MIN_ROWS`` (200,000) rows on, the
ingest also builds the IVF vector index at publish, so a projection from smaller corpora alone leaves
out the step that used to dominate peak memory (1,190 MB at 300k chunks before its heap reads
were bounded, against 235 MB at 100k); a projection through it overstates 1M, since 30k and 100k
have no index. The 300k corpus costs a few minutes of CPU. A run that fails or is stopped (kill
its ``ragit ingest``) keeps its peaks so far in the JSON, marked with its return code and left
out of the slope.

    python bench/ingest_memory.py [--docs 5000,16667,50000] [--workers default,1] [--src PATH ...]
                                  [--interval 0.05] [--timeline DIR] [--work DIR] [--out PATH]
    # the measured 1M point: vector_scale.py's corpus (written and ingested once by --build-only)
    python bench/vector_scale.py --build-only --sizes 1000000
    python bench/ingest_memory.py --repo /tmp/ragit-vector-scale/default-1000000/repo --workers default \
        --out /tmp/im1m.json
"""

from __future__ import annotations

import argparse
import functools
import json
import os
import random
import shutil
import sqlite3
import sys
import time
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

import ingest_query as iq  # noqa: E402  (the corpus generator and the measuring launcher)
from proctree import TreeSampler  # noqa: E402

WORKERS_ENV = "RAGIT_INGEST_WORKERS"


def corpus(work: Path, n_docs: int) -> Path:
    """A committed repository of ``n_docs`` typed docs (reused when already built)."""
    repo = work / f"docs-{n_docs}"
    if (repo / ".git").is_dir() and iq.git(repo, "rev-parse", "--verify", "-q", "HEAD"):
        return repo
    shutil.rmtree(repo, ignore_errors=True)
    iq.init_repo(repo)
    words, _ = iq.load_vocabulary()
    iq.write_typed_docs(repo, n_docs, iq.WordSampler(words, random.Random(iq.SEED)))
    iq.commit_all(repo, f"{n_docs} docs")
    return repo


def measure(repo: Path, src: str | None, workers: str, interval: float,
            timeline: Path | None) -> dict[str, Any]:
    """One cold full ingest (store removed first): CPU seconds, peak memory and chunk count.

    ``peak_rss_mb`` is the launcher's ``wait4`` figure (the largest single process: the ingest or
    one of the workers it reaped); ``tree_*`` are the peaks of the whole tree's sums, sampled every
    ``interval`` seconds (bench/proctree.py). ``workers``: ``default`` leaves RAGIT_INGEST_WORKERS
    unset, anything else sets it.
    """
    shutil.rmtree(repo / ".ragit", ignore_errors=True)
    env = dict(iq.CHILD_ENV)
    env.pop(WORKERS_ENV, None)
    if src:
        env["PYTHONPATH"] = src
    if workers != "default":
        env[WORKERS_ENV] = workers
    iq.run_cmd([iq.ragit_bin(), "init"], repo, env=env, check=False)
    sampler = TreeSampler(interval=interval, timeline=timeline is not None)
    run = iq.run_cmd([iq.ragit_bin(), "ingest", "--all", "--format", "json"], repo, env=env, sampler=sampler,
                     check=False)
    db = next((repo / ".ragit").rglob("ragit.db"))
    with sqlite3.connect(db) as conn:
        chunks = conn.execute("SELECT COUNT(*) FROM chunks").fetchone()[0]  # committed in batches: a stopped run's too
    if timeline is not None:
        timeline.mkdir(parents=True, exist_ok=True)
        name = timeline / f"{repo.name}-w{workers}-{int(time.time())}.csv"
        name.write_text("t_s,tree_rss_kb,tree_pss_kb,tree_pss_anon_kb,main_pss_kb,procs\n"
                        + "".join(",".join(map(str, r)) + "\n" for r in sampler.rows))
    point = {"chunks": chunks, "cpu_s": round(run.cpu_s, 2), "wall_s": round(run.wall_s, 2),
             "peak_rss_mb": round(run.max_rss_mb, 1), **sampler.summary()}
    if run.returncode:  # failed or stopped (a run past the time it has): its peaks so far, left out of the slope
        point["returncode"] = run.returncode
    return point


METRICS = ("peak_rss_mb", "tree_peak_rss_mb", "tree_peak_pss_mb", "tree_peak_pss_anon_mb")


def slope(points: list[dict[str, Any]], key: str = "peak_rss_mb") -> tuple[float, float]:
    """Least-squares (MB per 100k chunks, intercept MB) of ``key`` against chunks."""
    points = [p for p in points if not p.get("returncode")]
    xs = [p["chunks"] / 1e5 for p in points]
    ys = [p[key] for p in points]
    if len(xs) < 2:
        return float("nan"), ys[0] if ys else float("nan")
    mx, my = sum(xs) / len(xs), sum(ys) / len(ys)
    b = sum((x - mx) * (y - my) for x, y in zip(xs, ys)) / sum((x - mx) ** 2 for x in xs)
    return b, my - b * mx


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--docs", default="5000,16667,50000", help="corpus sizes in documents (~6 chunks each)")
    ap.add_argument("--src", action="append", default=[],
                    help="a src/ directory to run (PYTHONPATH); repeat for A/B; default: installed ragit")
    ap.add_argument("--workers", default="default,1",
                    help=f"comma-separated {WORKERS_ENV} settings to run at every size ('default': unset)")
    ap.add_argument("--interval", type=float, default=0.05,
                    help="seconds between samples of the process tree (its reads cost ~14 %% of a core at 0.025 s)")
    ap.add_argument("--timeline", type=Path, help="write each run's samples as CSV into this directory")
    ap.add_argument("--work", type=Path, default=Path("/tmp/ragit-ingest-memory"))
    ap.add_argument("--repo", type=Path,
                    help="measure this committed repository instead of the generated corpora (its .ragit is "
                         "removed first), e.g. vector_scale.py's 1M-chunk corpus")
    ap.add_argument("--out", type=Path, default=HERE / "ingest_memory.json")
    args = ap.parse_args()
    args.work.mkdir(parents=True, exist_ok=True)
    iq.cache_bytecode(args.work / "pycache")
    configs = [(src, w) for src in (args.src or [None]) for w in args.workers.split(",")]
    sizes = [int(s) for s in args.docs.split(",")]
    results: dict[str, list[dict[str, Any]]] = {label(*c): [] for c in configs}
    for n in [None] if args.repo else sizes:
        repo = args.repo.resolve() if args.repo else corpus(args.work, n)
        for src, workers in configs:  # interleaved, so load affects every configuration alike
            point = measure(repo, src, workers, args.interval, args.timeline)
            point["docs"] = n
            point["loadavg"] = [round(x, 2) for x in os.getloadavg()]
            results[label(src, workers)].append(point)
            iq.log(f"{label(src, workers)} {n} docs: {point}")
            write(args.out, results)  # after every point: a long run stopped early keeps what it measured
    print("| configuration | docs | chunks | CPU s | wall s | own peak RSS MB | tree peak RSS MB "
          "| tree peak PSS MB (anon) |")
    print("|---|---:|---:|---:|---:|---:|---:|---:|")
    for name, points in results.items():
        for p in points:
            print(f"| {name} | {p['docs']} | {p['chunks']} | {p['cpu_s']} | {p['wall_s']} | {p['peak_rss_mb']} "
                  f"| {p['tree_peak_rss_mb']} | {p['tree_peak_pss_mb']} ({p['tree_peak_pss_anon_mb']}) |")
    print()
    for name, s in write(args.out, results).items():
        if not s["projections"]:  # one size (--repo): measured, nothing to project
            continue
        print(f"{name}: projected to 1M chunks (MB): "
              + ", ".join(f"{k} {v['projected_1m_mb']}" for k, v in s["projections"].items()))


def label(src: str | None, workers: str) -> str:
    return f"{src or _installed()} workers={workers}"


@functools.lru_cache(maxsize=1)
def _installed() -> str:
    """The installed ragit, by revision (one git call per run, not per point)."""
    return f"installed ({iq.ragit_revision()['sha'][:8]})"


def write(out: Path, results: dict[str, list[dict[str, Any]]]) -> dict[str, Any]:
    """The points, each metric's slope and 1M projection, as JSON in ``out``, after the results
    of earlier runs under other labels that ``out`` holds (kept with its note: ``make bench``
    runs this every time, and the history of the figures stays readable); this run's come last,
    where bench/speed_table.py reads the newest."""
    summary = {}
    for name, points in results.items():
        projections = {}
        for key in METRICS:
            if sum(not p.get("returncode") for p in points) < 2:
                continue
            b, a = slope(points, key)
            projections[key] = {"mb_per_100k_chunks": round(b, 1), "intercept_mb": round(a, 1),
                                "projected_1m_mb": round(a + 10 * b, 1)}
        summary[name] = {"projections": projections, "points": points}
    try:
        earlier = json.loads(out.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        earlier = {}
    kept = {name: r for name, r in earlier.get("results", {}).items() if name not in summary}
    note = {"note": earlier["note"]} if earlier.get("note") else {}
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps({"date": time.strftime("%Y-%m-%d %H:%M:%S"), "loadavg": os.getloadavg(), **note,
                               "results": {**kept, **summary}}, indent=2) + "\n")
    return summary


if __name__ == "__main__":
    main()
