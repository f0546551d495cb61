"""A/B of the in-process first index on the speed set: two (or more) ragit source trees in turn.

``index_speed.py --src`` measures one tree; comparing two of its runs made minutes apart on a
shared machine compares two loads as much as two trees. Here every repository of the speed set
(``index_speed.speed_set``, prepared as there: an empty repository borrowing the mirror's
objects, the task root as ``ingest.include``) is indexed by each tree in turn, alternating the
order every round, each run a fresh child that has imported ragit, loaded the embedder and done a
dry run (``index_speed.API_SETUP``) before the clock starts. Per run: wall time, process
CPU (all threads), the CPU of the processes the ingest waited for (``RUSAGE_CHILDREN``: git, and
the ingest's forked workers, ``ragit.ingest.workers``) and their sum, so work moved to a thread,
a worker or overlapped with git shows in the wall column, and the total CPU says what it cost.
Figures are medians per repository; the last rows are the means over repositories.

    python bench/index_ab.py --src /tmp/base/src --src src [--runs 3] [--only flask,redux]
                             [--workers N] [--out bench/index_ab.json]

``--workers N`` sets ``RAGIT_INGEST_WORKERS`` for every run (``1``: one process); given twice or
more, each value is a further column per tree (e.g. ``--src src --workers 1 --workers 2``).
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
from datetime import UTC, datetime
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
import index_speed as ix  # noqa: E402  (the speed set, its repositories, the children's environment)

CHILD = ix.API_SETUP + """
def kids():
    r = resource.getrusage(resource.RUSAGE_CHILDREN)
    return r.ru_utime + r.ru_stime
k, c, t = kids(), time.process_time(), time.perf_counter()
result = repo.ingest(all=True, at=commit)
cpu, children = time.process_time() - c, kids() - k
print(json.dumps({"wall_s": time.perf_counter() - t, "total_cpu_s": cpu + children, "cpu_s": cpu,
                  "children_cpu_s": children, "chunks": result.embedded_chunks}))
"""
METRICS = ("wall_s", "total_cpu_s", "cpu_s", "children_cpu_s")


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--src", type=Path, action="append", required=True, help="a ragit source tree (twice or more)")
    p.add_argument("--tasks", type=Path, default=ix.DEFAULT_TASKS, help="task file whose (repo, commit, root) are the set")
    p.add_argument("--mirrors", type=Path, default=ix.DEFAULT_MIRRORS, help="directory of <owner>+<name>/repo mirrors")
    p.add_argument("--runs", type=int, default=3, help="runs per tree and repository (median; default 3)")
    p.add_argument("--only", default="", help="comma-separated repository names to measure")
    p.add_argument("--workers", action="append", default=[],
                   help="RAGIT_INGEST_WORKERS for the runs; twice or more: one column per value and tree")
    p.add_argument("--out", type=Path, default=HERE / "index_ab.json", help="JSON results")
    args = p.parse_args(argv)
    srcs = [s.resolve() for s in args.src]
    only = {n for n in args.only.split(",") if n}
    started, load_start = datetime.now(UTC), list(os.getloadavg())
    rows: list[dict] = []
    with tempfile.TemporaryDirectory(prefix="ragit-index-ab-") as tmp:
        work = Path(tmp)
        columns = [(src, n) for src in srcs for n in (args.workers or [None])]
        envs = []
        for i, (src, n) in enumerate(columns):
            env = ix.child_env(src, work / f"pycache-{srcs.index(src)}")
            if n is not None:
                env["RAGIT_INGEST_WORKERS"] = n
            envs.append(env)
        for entry in ix.speed_set(args.tasks):
            name = entry["repo"].split("/")[1]
            if only and name not in only:
                continue
            repo = ix.prepare(work, args.mirrors, entry)
            runs: list[list[dict]] = [[] for _ in columns]
            for k in range(args.runs + 1):  # round 0 warms each tree's bytecode, untimed
                order = range(len(columns)) if k % 2 == 0 else reversed(range(len(columns)))
                for i in order:
                    out = subprocess.run([sys.executable, "-c", CHILD, str(repo), entry["commit"]], cwd=repo,
                                         env=envs[i], capture_output=True, text=True)
                    if out.returncode:
                        raise SystemExit(f"{name} with {columns[i]} failed:\n{out.stderr[-3000:]}")
                    if k:
                        runs[i].append(json.loads(out.stdout.strip().splitlines()[-1]))
            row = {"repo": name, "chunks": runs[0][0]["chunks"], "runs": runs,
                   "median": [{m: statistics.median(r[m] for r in tree) for m in METRICS} for tree in runs]}
            rows.append(row)
            print(f"| {name} | {row['chunks']} | {_cells(row['median'])} |", flush=True)
    means = [{m: statistics.mean(r["median"][i][m] for r in rows) for m in METRICS} for i in range(len(columns))]
    print(f"| **mean** | | {_cells(means)} |")
    print("(each column: wall / total CPU (process + children) / process CPU / children CPU (git, workers),"
          " seconds; columns: " + ", ".join(f"{s}" + (f" workers={n}" if n is not None else "") for s, n in columns) + ")")
    args.out.write_text(json.dumps({
        "benchmark": "index_ab", "date": started.isoformat(timespec="seconds"), "srcs": [str(s) for s, _ in columns],
        "workers": [n for _, n in columns],
        "runs": args.runs, "load_average_at_start": load_start, "load_average_at_end": list(os.getloadavg()),
        "means": means, "repos": rows}, indent=2) + "\n", encoding="utf-8")
    return 0


def _cells(medians: list[dict]) -> str:
    return " | ".join(" / ".join(f"{t[m]:.3f}" for m in METRICS) for t in medians)


if __name__ == "__main__":
    raise SystemExit(main())
