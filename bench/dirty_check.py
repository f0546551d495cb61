"""What a read's dirty-worktree check costs in git processes, and what the alternatives would.

Every `query`, `context pack` and `memory recall` reports `worktreeDirty` (knowledge §6): ragit
runs one ``git status`` (``ragit.gitsnap.dirty.STATUS_CMD``) and waits for it. On a large
worktree that process is most of a cold query's CPU (1M-chunk bench corpus: 166,667 tracked
files, ≈ 0.3 s of ≈ 0.6 s). This script clones a repository (``--repo``, default the 1M store's
worktree of ``vector_scale.py``; the source is only read), then measures, in fresh processes
with ragit's git environment (``GIT_OPTIONAL_LOCKS=0``), median user+sys CPU of ``--runs``:

- ``status``: what a read runs now (tracked and staged changes, untracked files, one process);
- ``diff --quiet HEAD`` without index preloading: a yes/no for tracked and staged changes that
  content-checks stat-only changes (as status does) and stops at the first changed path;
- ``ls-files --others --directory --no-empty-directory``: the untracked half;
- their sum: a boolean check run as the two steps, the second only on a clean tracked tree;

in three states of the clone: clean, one tracked file modified (a third of the way into the
index), and one untracked file added. Results print as a table and go to ``--out``
(default bench/dirty_check.json).

    .venv/bin/python bench/dirty_check.py
    .venv/bin/python bench/dirty_check.py --repo /path/to/big/repo --runs 7
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
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(HERE.parent / "src"))

import ingest_query as iq  # noqa: E402  (the launcher: rusage of one command)

from ragit.gitsnap.dirty import STATUS_CMD  # noqa: E402
from ragit.gitsnap.git import git_env  # noqa: E402

DEFAULT_REPO = Path("/tmp/ragit-vector-scale/default-1000000/repo")
EXCLUDE = (".", ":(exclude).ragit")
COMMANDS = {
    "status": ["git", *STATUS_CMD],
    "diff_quiet": ["git", "-c", "core.preloadIndex=false", "diff", "--quiet", "HEAD", "--", *EXCLUDE],
    "untracked": ["git", "ls-files", "-z", "--others", "--exclude-standard", "--directory",
                  "--no-empty-directory", "--", *EXCLUDE],
}


def cpu(repo: Path, argv: list[str], runs: int) -> tuple[float, int]:
    """Median CPU (user+sys) of ``runs`` fresh processes, and the last exit code."""
    env = {**iq.CHILD_ENV, **git_env()}
    times, code = [], 0
    for _ in range(runs):
        r = iq.run_cmd(argv, repo, check=False, env=env)
        times.append(r.cpu_s)
        code = r.returncode
    return statistics.median(times), code


def measure(repo: Path, runs: int) -> dict[str, float | int]:
    out: dict[str, float | int] = {}
    for name, argv in COMMANDS.items():
        out[f"{name}_cpu_s"], out[f"{name}_rc"] = cpu(repo, argv, runs)
    # the boolean check: untracked files are looked for only when no tracked change was found
    out["boolean_cpu_s"] = out["diff_quiet_cpu_s"] + (out["untracked_cpu_s"] if out["diff_quiet_rc"] == 0 else 0.0)
    return out


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--repo", type=Path, default=DEFAULT_REPO, help="repository to clone and measure")
    p.add_argument("--runs", type=int, default=5)
    p.add_argument("--out", type=Path, default=HERE / "dirty_check.json")
    args = p.parse_args(argv)
    work = Path(tempfile.mkdtemp(prefix="dirty-check-"))
    try:
        clone = work / "repo"
        subprocess.run(["git", "clone", "-q", str(args.repo), str(clone)], check=True)
        iq.settle_index(clone)
        files = subprocess.run(["git", "ls-files", "-z"], cwd=clone, check=True, capture_output=True).stdout.split(b"\0")
        files = [f for f in files if f]
        states: dict[str, dict] = {"clean": measure(clone, args.runs)}
        victim = clone / os.fsdecode(files[len(files) // 3])
        original = victim.read_bytes()
        victim.write_bytes(original + b"\nedited\n")
        states["tracked_modified"] = measure(clone, args.runs)
        victim.write_bytes(original)
        iq.settle_index(clone)
        (clone / "untracked-note.md").write_text("new\n", encoding="utf-8")
        states["untracked_added"] = measure(clone, args.runs)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    result = {"repo": str(args.repo), "tracked_files": len(files), "runs": args.runs, "states": states,
              "load_average": list(os.getloadavg()), "date": time.strftime("%Y-%m-%dT%H:%M:%S%z")}
    args.out.write_text(json.dumps(result, indent=2) + "\n", encoding="utf-8")
    print(f"{len(files):,} tracked files, median CPU of {args.runs} runs (s)\n")
    print("| state | status | diff --quiet HEAD | ls-files --others | boolean (both steps) |")
    print("|---|---:|---:|---:|---:|")
    for name, s in states.items():
        print(f"| {name} | {s['status_cpu_s']:.3f} | {s['diff_quiet_cpu_s']:.3f} (rc {s['diff_quiet_rc']}) "
              f"| {s['untracked_cpu_s']:.3f} | {s['boolean_cpu_s']:.3f} |")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
