"""A/B of ``vector_scale.py``'s warm rows: two (or more) ragit source trees in turn, same store.

Two runs of ``vector_scale.py --warm-only`` made minutes apart on a shared machine compare two
loads as much as two trees (a warm 100k question moves by ±0.2 ms with the load). Here each round
runs ``vector_scale.warm`` as the bench does (the approximate path's questions first, then the
exact path's, in one process: the exact row's process has the approximate row's caches) in a
fresh process of each tree in turn (``PYTHONPATH=<src>``, the order alternating every round), and
reports per tree the median over rounds of the per-process p50 CPU (the figure of the README row)
and the median of the paired differences. Every tree must return the same hits (path and chunk,
every question, both paths), or the run fails. The store is only read (no index, postings or
co-change step: run ``vector_scale.py`` once to build those).

    python bench/warm_scale_ab.py --src /tmp/base/src --src src [--size 100000] [--rounds 8]
                                  [--questions 200] [--exact-only] [--out bench/warm_scale_ab.json]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
from datetime import UTC, datetime
from pathlib import Path

HERE = Path(__file__).resolve().parent

CHILD = """
import json, random, sys
sys.path.insert(0, {here!r})
import ingest_query as iq, vector_scale as vs
from pathlib import Path
repo = Path({repo!r})
questions = iq.make_questions(iq.WordSampler(iq.load_vocabulary()[0], random.Random(7)), {questions})
out = {{}}
if not {exact_only}:
    out["approx"], out["approx_hits"] = vs.warm(repo, questions, exact=False)
out["exact"], out["exact_hits"] = vs.warm(repo, questions, exact=True)
print(json.dumps(out))
"""


def run_once(src: Path, repo: Path, questions: int, exact_only: bool) -> dict:
    """One process of tree ``src``: vector_scale.warm's figures and hits."""
    env = dict(os.environ, PYTHONPATH=str(src.resolve()))
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    code = CHILD.format(here=str(HERE), repo=str(repo), questions=questions, exact_only=exact_only)
    done = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True)
    return json.loads(done.stdout.strip().splitlines()[-1])


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--src", type=Path, action="append", required=True, help="a ragit source tree (twice or more)")
    p.add_argument("--size", type=int, default=100_000, help="the vector_scale store (default 100000)")
    p.add_argument("--work", type=Path, default=Path("/tmp/ragit-vector-scale"))
    p.add_argument("--rounds", type=int, default=8)
    p.add_argument("--questions", type=int, default=200)
    p.add_argument("--exact-only", action="store_true", help="the exact path's questions alone")
    p.add_argument("--out", type=Path, default=HERE / "warm_scale_ab.json")
    args = p.parse_args(argv)
    repo = args.work / f"default-{args.size}" / "repo"
    paths = ("exact",) if args.exact_only else ("approx", "exact")
    runs: dict[str, list[dict]] = {str(s): [] for s in args.src}
    load = [os.getloadavg()[0]]
    hits = None
    for round_ in range(args.rounds):
        for src in args.src if round_ % 2 == 0 else args.src[::-1]:
            got = run_once(src, repo, args.questions, args.exact_only)
            answer = [got[f"{path}_hits"] for path in paths]
            if hits is None:
                hits = answer
            elif answer != hits:
                raise SystemExit(f"{src}: the hits differ from the first tree's")
            runs[str(src)].append({path: got[path] for path in paths})
        load.append(os.getloadavg()[0])
    first = str(args.src[0])
    out = {"date": datetime.now(UTC).isoformat(timespec="seconds"), "repo": str(repo), "rounds": args.rounds,
           "questions": args.questions, "load_average": [min(load), max(load)], "trees": {}}
    print(f"load average {min(load):.1f}–{max(load):.1f}, {args.rounds} rounds, hits identical\n")
    print("| tree | path | p50 CPU per round (ms) | median | paired difference vs the first tree |")
    print("|---|---|---|---|---|")
    for src, rows in runs.items():
        out["trees"][src] = {}
        for path in paths:
            cpu = [r[path]["cpu_p50_ms"] for r in rows]
            diff = [a[path]["cpu_p50_ms"] - b[path]["cpu_p50_ms"] for a, b in zip(rows, runs[first])]
            out["trees"][src][path] = {"cpu_p50_ms": cpu, "median_ms": statistics.median(cpu),
                                       "paired_difference_ms": statistics.median(diff), "runs": [r[path] for r in rows]}
            print(f"| {src} | {path} | {', '.join(f'{c:.2f}' for c in cpu)} | {statistics.median(cpu):.3f} | "
                  f"{statistics.median(diff):+.3f} |")
    args.out.write_text(json.dumps(out, indent=2) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
