"""Paired A/B of warm ``Repo.query`` on small stores (issue 15: warm p50 ≤ 1 ms at ≤ 10k chunks):
two (or more) ragit source trees in turn, each on the same indexed repositories.

A warm 6k question moves by ±0.05 ms with the load of a shared machine, as much as most changes
to the query path, so runs minutes apart compare loads. Here each round starts a fresh process of
each tree in turn (``PYTHONPATH=<src>``, the order alternating every round) per repository; the
process opens the repository, answers two questions (warm-up), then

* ``new``: questions it has not seen (what ``ingest_query.py``'s "warm ``Repo.query`` p50, 6k
  chunks" row times: each question embedded, masked and its terms read for the first time),
* ``repeat``: the first of them again, several times (a process asked the same things again),

and reports per tree the median over rounds of the per-process p50 (thread CPU and wall). A
``docs`` repository (the 1,000-doc corpus ``ingest_query.py`` writes, 6,000 chunks) is asked
``ingest_query.make_questions``; any other is asked ``warm_query.QUESTIONS``. Every tree must
return the same hits (path and chunk id, every question), or the run fails. The stores are
only read: index each repository once (``Repo.open(p).ingest(all=True)``) before.

    python bench/warm_small_ab.py --src /tmp/base/src --src src --docs /tmp/docs1k --repo /tmp/gin \
        [--rounds 8] [--out /tmp/warm_small_ab.json]
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
import json, random, statistics, sys, time
sys.path.insert(0, {here!r})
from ragit.api import Repo
if {docs}:
    import ingest_query as iq
    questions = iq.make_questions(iq.WordSampler(iq.load_vocabulary()[0], random.Random(iq.SEED + 9)), 152)
    new, repeat = questions[1:151], questions[1:51] * 3
else:
    from warm_query import QUESTIONS as questions
    new, repeat = list(questions[:-1]), list(questions) * 6
repo = Repo.open({repo!r})
repo.query(questions[0]); repo.query(questions[-1])
hits = {{}}

def run(asked):
    cpu, wall = [], []
    for q in asked:
        started, started_cpu = time.perf_counter(), time.thread_time()
        result = repo.query(q)
        cpu.append((time.thread_time() - started_cpu) * 1e3)
        wall.append((time.perf_counter() - started) * 1e3)
        hits[q] = [[h.path, h.chunk_id] for h in result.hits]
    return {{"cpu_p50_ms": statistics.median(cpu), "wall_p50_ms": statistics.median(wall)}}

out = {{"new": run(new), "repeat": run(repeat)}}
out["hits"] = hits
print(json.dumps(out))
"""


def one(src: Path, repo: Path, docs: bool) -> dict:
    env = dict(os.environ, PYTHONPATH=str(src))
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    code = CHILD.format(here=str(HERE), repo=str(repo), docs=docs)
    done = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True)
    return json.loads(done.stdout.strip().splitlines()[-1])


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--src", type=Path, action="append", required=True, help="a ragit source tree (twice or more)")
    p.add_argument("--docs", type=Path, action="append", default=[], help="an indexed 1,000-doc corpus")
    p.add_argument("--repo", type=Path, action="append", default=[], help="an indexed code repository")
    p.add_argument("--rounds", type=int, default=8)
    p.add_argument("--out", type=Path, default=None)
    args = p.parse_args()
    if len(args.src) < 2:
        p.error("give --src at least twice")
    stores = [(r, True) for r in args.docs] + [(r, False) for r in args.repo]
    if not stores:
        p.error("give --docs or --repo")
    srcs = [str(s.resolve()) for s in args.src]
    runs: dict[str, dict[str, dict[str, list[float]]]] = {}
    loads = []
    for r in range(args.rounds):
        for repo, docs in stores:
            seen = None
            for src in (srcs if r % 2 == 0 else srcs[::-1]):
                found = one(Path(src), repo, docs)
                if seen is not None and found["hits"] != seen:
                    sys.exit(f"{repo}: {src} returned other hits than the other tree")
                seen = found["hits"]
                cell = runs.setdefault(str(repo), {}).setdefault(src, {})
                for kind in ("new", "repeat"):
                    for key, value in found[kind].items():
                        cell.setdefault(f"{kind}_{key}", []).append(value)
        loads.append(os.getloadavg()[0])
    table = {repo: {src: {key: statistics.median(values) for key, values in cell.items()} for src, cell in per.items()}
             for repo, per in runs.items()}
    print("| store | tree | new CPU p50 | new wall p50 | repeat CPU p50 | repeat wall p50 |\n|---|---|---|---|---|---|")
    for repo, per in table.items():
        for src, m in per.items():
            print(f"| {Path(repo).name} | {src} | {m['new_cpu_p50_ms']:.3f} | {m['new_wall_p50_ms']:.3f} "
                  f"| {m['repeat_cpu_p50_ms']:.3f} | {m['repeat_wall_p50_ms']:.3f} |")
    print(f"load average (1 min) over the rounds: {min(loads):.2f} to {max(loads):.2f}")
    if args.out is not None:
        args.out.write_text(json.dumps({"when": datetime.now(UTC).isoformat(timespec="seconds"), "rounds": args.rounds,
                                        "sources": srcs, "medians_ms": table, "runs_ms": runs, "load_1min": loads},
                                       indent=2) + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
