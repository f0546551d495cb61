"""What the ingest workers cost in CPU, process by process (issue 15: they trade CPU for wall).

A full ``ragit ingest --all`` of one repository, each run a fresh process on an empty index, for
every (source tree, ``RAGIT_INGEST_WORKERS``) variant in turn, the order alternating every round
(the machine is shared: only paired figures mean anything). The child runs the CLI in-process and
reports, from ``getrusage``: its own CPU and system time, its children's (the workers and git),
minor page faults of both, and each worker's own CPU as it sent its last result
(``Workers.cpu``); wall is the child's. Figures are medians.

    python bench/worker_cost.py --repo /tmp/docs1k                       # default workers vs one process
    python bench/worker_cost.py --repo /tmp/sympy --at <commit> --src /old/src --src src --runs 3
    python bench/worker_cost.py --repo R --workers -1 --workers 1 [--out bench/worker_cost.json]

``--repo`` is a git repository (its ``.ragit`` store, manifests and cache are deleted before
every run); ``--at`` indexes that commit from git objects (as ``repo_ingest.py`` does).
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent

CHILD = r"""
import atexit, json, os, resource, sys, time
t0 = time.perf_counter()
out = sys.argv[1]
import ragit.ingest.workers as w
info = {"workers_cpu": []}
finish = w.Workers.finish
def finished(self):
    finish(self)
    info["workers_cpu"] = list(self.cpu)
w.Workers.finish = finished
def report():
    s, c = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    info.update(wall_s=time.perf_counter() - t0, self_cpu_s=s.ru_utime + s.ru_stime, self_sys_s=s.ru_stime,
                children_cpu_s=c.ru_utime + c.ru_stime, children_sys_s=c.ru_stime,
                minor_faults=s.ru_minflt + c.ru_minflt)
    with open(out, "w") as fh:
        json.dump(info, fh)
atexit.register(report)  # the CLI leaves through os._exit after running the exit handlers
from ragit.cli.main import main
sys.argv = ["ragit", *sys.argv[2:]]
main()
"""


def clear(repo: Path) -> None:
    for sub in ("store", "manifest", "cache"):
        shutil.rmtree(repo / ".ragit" / sub, ignore_errors=True)


def variant_env(src: Path | None, workers: str, pycache: Path) -> dict[str, str]:
    """The child's environment: ``src`` first on PYTHONPATH, bytecode cached (as an installed
    ragit has it), ``RAGIT_INGEST_WORKERS`` set."""
    env = dict(os.environ)
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    env["PYTHONPYCACHEPREFIX"] = str(pycache)
    if src is not None:
        env["PYTHONPATH"] = str(src) + (os.pathsep + env["PYTHONPATH"] if env.get("PYTHONPATH") else "")
    env["RAGIT_INGEST_WORKERS"] = workers
    return env


def run_once(repo: Path, argv: list[str], env: dict[str, str]) -> dict[str, Any]:
    with tempfile.NamedTemporaryFile(suffix=".json") as report:
        proc = subprocess.run([sys.executable, "-c", CHILD, report.name, *argv], cwd=repo, env=env,
                              capture_output=True, text=True)
        if proc.returncode != 0:
            raise SystemExit(f"ingest failed ({proc.returncode}): {proc.stdout[-1500:]}{proc.stderr[-1500:]}")
        return json.loads(Path(report.name).read_text(encoding="utf-8"))


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--repo", type=Path, required=True, help="a git repository to ingest (its .ragit index is deleted)")
    p.add_argument("--at", help="index this commit (from git objects) instead of HEAD")
    p.add_argument("--src", type=Path, action="append", help="a ragit source tree (`src`); repeat to compare")
    p.add_argument("--workers", action="append", help="RAGIT_INGEST_WORKERS values (default: -1 and 1)")
    p.add_argument("--runs", type=int, default=5, help="rounds (median; default 5)")
    p.add_argument("--out", type=Path, default=HERE / "worker_cost.json", help="JSON results")
    args = p.parse_args(argv)

    srcs = args.src or [None]
    counts = args.workers or ["-1", "1"]
    work = Path(tempfile.mkdtemp(prefix="ragit-worker-cost-"))
    variants = [(f"{src or 'installed'} workers={n}", variant_env(src, n, work / f"pycache-{i}"))
                for i, (src, n) in enumerate((s, n) for s in srcs for n in counts)]
    ingest = ["ingest", "--all", "--format", "json"] + (["--at", args.at] if args.at else [])
    load_start = list(os.getloadavg())
    started = datetime.now(UTC)
    try:
        for _, env in variants:  # bytecode and page cache warm, nothing written
            clear(args.repo)
            run_once(args.repo, [*ingest, "--dry-run"], env)
        runs: dict[str, list[dict[str, Any]]] = {label: [] for label, _ in variants}
        for r in range(args.runs):
            for label, env in variants if r % 2 == 0 else variants[::-1]:
                clear(args.repo)
                runs[label].append(run_once(args.repo, ingest, env))
    finally:
        clear(args.repo)
        shutil.rmtree(work, ignore_errors=True)

    def med(rows: list[dict[str, Any]], key: str) -> float:
        return statistics.median(key(x) if callable(key) else x[key] for x in rows)  # type: ignore[operator]

    rows = []
    for label, rs in runs.items():
        rows.append({
            "variant": label, "wall_s": med(rs, "wall_s"),
            "cpu_s": med(rs, lambda x: x["self_cpu_s"] + x["children_cpu_s"]),
            "self_cpu_s": med(rs, "self_cpu_s"), "children_cpu_s": med(rs, "children_cpu_s"),
            "workers_cpu_s": med(rs, lambda x: sum(x["workers_cpu"])),
            "sys_s": med(rs, lambda x: x["self_sys_s"] + x["children_sys_s"]),
            "minor_faults": med(rs, "minor_faults"), "runs": rs,
        })
    print("| variant | wall s | CPU s | own CPU s | children CPU s | of which workers s | system s | minor faults |")
    print("|---|---|---|---|---|---|---|---|")
    for row in rows:
        print(f"| {row['variant']} | {row['wall_s']:.3f} | {row['cpu_s']:.3f} | {row['self_cpu_s']:.3f} |"
              f" {row['children_cpu_s']:.3f} | {row['workers_cpu_s']:.3f} | {row['sys_s']:.3f} | {row['minor_faults']:.0f} |")
    load_end = list(os.getloadavg())
    print(f"(medians of {args.runs}; load average {load_start[0]:.1f} -> {load_end[0]:.1f})")
    args.out.write_text(json.dumps({
        "benchmark": "worker_cost", "date": started.isoformat(timespec="seconds"), "repo": str(args.repo),
        "at": args.at, "runs": args.runs, "load_average_at_start": load_start, "load_average_at_end": load_end,
        "rows": rows,
    }, indent=2) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
