"""Co-change mining's ``git diff-tree -M`` in one process against ``history.diff_tree_stdin``'s
shared-out processes, paired on the speed set (issue 15: a small repository's ingest waits for
its history, redux's 0.23 s of rename detection against 0.09 s of ingest CPU).

    python bench/cochange_mine_ab.py [--only redux,flask] [--runs 9] [--out bench/cochange_mine_ab.json]

Per repository (prepared as ``index_speed.prepare`` does: an empty repository borrowing the
mirror's objects), the commits the mining reads (the last 2,000 non-merge commits of the task's
commit) go through ``diff_tree_stdin`` with one process and with ``cochange.MINERS``, alternating
which runs first; the outputs must be equal byte for byte. Medians of wall, git CPU (children)
and this process's CPU (the thread that deals the blocks); the last row is the mean.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import statistics
import sys
import tempfile
import time
from datetime import UTC, datetime
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
import index_speed as ix  # noqa: E402


def _children() -> float:
    r = resource.getrusage(resource.RUSAGE_CHILDREN)
    return r.ru_utime + r.ru_stime


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--tasks", type=Path, default=ix.DEFAULT_TASKS)
    p.add_argument("--mirrors", type=Path, default=ix.DEFAULT_MIRRORS)
    p.add_argument("--only", default="", help="comma-separated repository names")
    p.add_argument("--runs", type=int, default=9)
    p.add_argument("--out", type=Path, default=HERE / "cochange_mine_ab.json")
    args = p.parse_args(argv)
    from ragit.gitsnap import cochange
    from ragit.gitsnap.git import Git
    from ragit.gitsnap.history import diff_tree_stdin

    only = {n for n in args.only.split(",") if n}
    columns = (1, cochange.MINERS)
    rows = []
    load_start = list(os.getloadavg())
    print(f"| repository | commits | wall 1 | wall {columns[1]} | git CPU 1 | git CPU {columns[1]} | thread CPU 1 | thread CPU {columns[1]} |")
    print("|---|---:|---:|---:|---:|---:|---:|---:|")
    with tempfile.TemporaryDirectory(prefix="ragit-mine-ab-") as tmp:
        for entry in ix.speed_set(args.tasks):
            name = entry["repo"].split("/")[1]
            if only and name not in only:
                continue
            git = Git(ix.prepare(Path(tmp), args.mirrors, entry))
            shas = git.run("rev-list", "--no-merges", f"--max-count={cochange.DEFAULT_LIMIT}", entry["commit"],
                           "--").decode().split()
            runs: dict[int, list[tuple[float, float, float]]] = {n: [] for n in columns}
            outputs = {}
            for k in range(args.runs + 1):  # round 0 warms the page cache, untimed
                for n in (columns if k % 2 == 0 else columns[::-1]):
                    kids, own, t = _children(), time.process_time(), time.perf_counter()
                    outputs[n] = diff_tree_stdin(git, shas, cochange.DIFF_FLAGS, n)
                    if k:
                        runs[n].append((time.perf_counter() - t, _children() - kids, time.process_time() - own))
                if outputs[columns[0]] != outputs[columns[1]]:
                    raise SystemExit(f"{name}: the outputs differ")
            med = {n: [statistics.median(r[i] for r in runs[n]) for i in range(3)] for n in columns}
            rows.append({"repo": name, "commits": len(shas), "median": {str(n): med[n] for n in columns}})
            a, b = med[columns[0]], med[columns[1]]
            print(f"| {name} | {len(shas)} | {a[0]:.3f} | {b[0]:.3f} | {a[1]:.3f} | {b[1]:.3f} | {a[2]:.3f} | {b[2]:.3f} |",
                  flush=True)
    means = {str(n): [statistics.mean(r["median"][str(n)][i] for r in rows) for i in range(3)] for n in columns}
    a, b = means[str(columns[0])], means[str(columns[1])]
    print(f"| **mean** | | {a[0]:.3f} | {b[0]:.3f} | {a[1]:.3f} | {b[1]:.3f} | {a[2]:.3f} | {b[2]:.3f} |")
    args.out.write_text(json.dumps({
        "benchmark": "cochange_mine_ab", "date": datetime.now(UTC).isoformat(timespec="seconds"),
        "runs": args.runs, "processes": list(columns), "load_average_at_start": load_start,
        "load_average_at_end": list(os.getloadavg()), "columns": ["wall_s", "git_cpu_s", "thread_cpu_s"],
        "means": means, "repos": rows}, indent=2) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
