"""Time of ``ragit eval run`` per task, split into indexing and queries (issue 15: ≤ 0.2 s per task
after ingest on ``swe_lite_dev``).

Runs ``python -m ragit eval run <set> --format json`` for each task set, in ``--cwd`` (its
evaluation store is reused: run once to index, then again to time the queries alone), with each
task's repository found by its ``repo`` field (``owner/name``) as ``<mirrors>/<owner>+<name>/repo``
or ``<mirrors>/<name>``. It prints the run's own ``timing`` (wall and CPU seconds of indexing and
of the queries, per task) with the process's CPU seconds and the load average, and writes JSON.
Read the CPU columns on a loaded machine. For an A/B, point PYTHONPATH at each version's ``src``.

    python bench/eval_speed.py --cwd /tmp/eval --mirrors /path/to/mirrors \\
        --tasks ../shared/bench/tasks/swe_lite_dev.jsonl ../shared/bench/tasks/hist_flask.jsonl \\
        [--json bench/eval_speed.json] [--mode hybrid] [--save-dir bench/]

``--save-dir bench/`` is how ``bench/eval_*.json`` (docs/evaluation.md) are written: every
repository a set names must be a mirror under ``--mirrors`` (``fetch`` puts them in /work/.mirror,
as ``<owner>+<name>/repo``); the first run of a set on an empty ``--cwd`` indexes its commits
(about 30 s a history set, 3 min for swe_lite_dev on two cores).
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import time
from pathlib import Path


def repositories(tasks_file: Path, mirrors: Path) -> list[Path]:
    """The mirror of every repository the task file names, in first-seen order."""
    names = dict.fromkeys(json.loads(line)["repo"] for line in tasks_file.read_text().splitlines() if line.strip())
    found = []
    for name in names:
        for candidate in (mirrors / name.replace("/", "+") / "repo", mirrors / name.split("/")[-1]):
            if candidate.is_dir():
                found.append(candidate)
                break
        else:
            raise SystemExit(f"no mirror of {name} under {mirrors}")
    return found


def run_set(tasks_file: Path, mirrors: Path, cwd: Path, mode: str = "all", save_dir: Path | None = None) -> dict:
    args = [sys.executable, "-m", "ragit", "eval", "run", str(tasks_file.resolve()), "--format", "json",
            "--mode", mode]
    for repo in repositories(tasks_file, mirrors):
        args += ["--repo", str(repo)]
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    started = time.perf_counter()
    proc = subprocess.run(args, cwd=cwd, capture_output=True, text=True, check=False)
    wall = time.perf_counter() - started
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if proc.returncode != 0:
        raise SystemExit(f"eval run failed on {tasks_file}: {proc.stdout[-2000:]}{proc.stderr[-2000:]}")
    if save_dir is not None:  # the whole `eval run` answer, as bench/eval_<set>.json keeps it
        save_dir.mkdir(parents=True, exist_ok=True)
        (save_dir / f"eval_{tasks_file.stem}.json").write_text(proc.stdout, encoding="utf-8")
    data = json.loads(proc.stdout)["data"]
    t = data["timing"]
    return {
        "tasks": tasks_file.stem, "evaluated": data["evaluated"], "ingestedCommits": t["ingestedCommits"],
        "ingestSeconds": t["ingestSeconds"], "ingestCpuSeconds": t["ingestCpuSeconds"],
        "querySeconds": t["querySeconds"], "queryCpuSeconds": t["queryCpuSeconds"],
        "querySecondsPerTask": t["querySecondsPerTask"], "queryCpuSecondsPerTask": t["queryCpuSecondsPerTask"],
        "processWallSeconds": wall,
        "processCpuSeconds": (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime),
        "loadAverage": list(os.getloadavg()),
    }


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--tasks", type=Path, nargs="+", required=True)
    ap.add_argument("--mirrors", type=Path, required=True, help="directory of the repositories (bare or not)")
    ap.add_argument("--cwd", type=Path, required=True, help="git repository holding the evaluation store")
    ap.add_argument("--json", type=Path, default=None)
    ap.add_argument("--mode", default="all", help="keyword|vector|hybrid|all (default all)")
    ap.add_argument("--save-dir", type=Path, default=None,
                    help="also write each set's whole `eval run` JSON here as eval_<set>.json (e.g. bench/)")
    args = ap.parse_args()

    rows = [run_set(path, args.mirrors, args.cwd, args.mode, args.save_dir) for path in args.tasks]
    print("| task set | tasks | commits indexed | ingest s (CPU) | query s/task | query CPU s/task | process CPU s |"
          " load average |")
    print("|---|---|---|---|---|---|---|---|")
    for r in rows:
        per_task = r["querySecondsPerTask"] or 0.0
        per_cpu = r["queryCpuSecondsPerTask"] or 0.0
        print(f"| {r['tasks']} | {r['evaluated']} | {r['ingestedCommits']} | {r['ingestSeconds']:.1f}"
              f" ({r['ingestCpuSeconds']:.1f}) | {per_task:.3f} | {per_cpu:.3f} | {r['processCpuSeconds']:.1f} |"
              f" {r['loadAverage'][0]:.1f} |")
    if args.json:
        args.json.write_text(json.dumps(rows, indent=2) + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
