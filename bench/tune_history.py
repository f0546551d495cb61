"""`ragit tune` on the history development sets: does per-repository tuning pay, and is it safe?

For each set (a task file of ../shared/bench/tasks/ and the bare mirror holding its commits) this
runs the real command in a scratch directory with the default configuration:

    ragit tune --tasks <set>.jsonl --repo <mirror> --format json --cwd <base>/<set>

tune splits the tasks by a hash of their id into a training and a held-out half (as it always
does), searches on the training half and checks the best setting on the held-out half against
the default. The table gives, on the held-out half, the default R@5, the R@5 of the setting
chosen on training, the gain with its paired bootstrap 95 % interval, whether tune wrote the
setting, and the R@5 the repository ends with (the chosen setting when written, else the
default), with the command's CPU time (this process's children: the CLI and its git commands).

    python bench/tune_history.py                                  # the four history sets
    python bench/tune_history.py hist_flask --base /tmp/s7tune --shared-eval /tmp/s7tune/shared-eval
    python bench/tune_history.py --alpha 1.0 --json bench/tune_history_alpha1.json   # a vector-only start

The first run of a set indexes its ~150 commits (minutes of CPU). ``--shared-eval DIR`` links each
scratch directory's `.ragit/cache/eval` to DIR, so the sets share one evaluation store (it is
keyed by the configuration, not by the task set) and a re-run indexes nothing. Each run starts
from the default configuration (a config a previous run wrote is removed first). Writes
bench/tune_history.json.
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

HERE = Path(__file__).resolve().parent
TASKS = Path("/work/shared/bench/tasks")
MIRRORS = Path("/work/.mirror")
SETS = {
    "hist_flask": "pallets+flask",
    "hist_requests": "psf+requests",
    "hist_gin": "gin-gonic+gin",
    "hist_redux": "reduxjs+redux",
}


def _children_cpu() -> float:
    r = resource.getrusage(resource.RUSAGE_CHILDREN)
    return r.ru_utime + r.ru_stime


def run_set(name: str, base: Path, shared: Path | None, tasks_dir: Path, mirrors: Path,
            alpha: float | None = None) -> dict:
    scratch = base / (name if alpha is None else f"{name}-alpha{alpha}")
    cache = scratch / ".ragit" / "cache"
    cache.mkdir(parents=True, exist_ok=True)
    if shared is not None and not (cache / "eval").exists():
        shared.mkdir(parents=True, exist_ok=True)
        (cache / "eval").symlink_to(shared, target_is_directory=True)
    config = scratch / ".ragit" / "config.toml"
    if config.exists():
        config.unlink()  # start from the default configuration
    if alpha is not None:  # or from a deliberately off one: does tune find its way back?
        config.write_text(f"[retrieval]\nalpha = {alpha}\n", encoding="utf-8")
    env = dict(os.environ, PYTHONPATH=str(HERE.parent / "src"))
    cmd = [sys.executable, "-m", "ragit", "tune", "--tasks", str(tasks_dir / f"{name}.jsonl"),
           "--repo", str(mirrors / SETS[name] / "repo"), "--format", "json", "--cwd", str(scratch)]
    cpu, wall = _children_cpu(), time.perf_counter()
    proc = subprocess.run(cmd, capture_output=True, text=True, env=env, check=False)
    cpu, wall = _children_cpu() - cpu, time.perf_counter() - wall
    if proc.returncode != 0:
        raise SystemExit(f"{name}: exit {proc.returncode}\n{proc.stdout}\n{proc.stderr}")
    data = json.loads(proc.stdout)["data"]
    default = data["baseline"]["heldOut"]["recallAt5"]
    chosen = data["best"]["heldOut"]["recallAt5"]
    return {
        "set": name if alpha is None else f"{name} (alpha {alpha})", "tasks": data["tasks"], "train": data["train"], "heldOut": data["heldOut"],
        "defaultHeldOutR5": default, "chosenHeldOutR5": chosen, "gain": data["gain"], "ci95": data["ci95"],
        "written": data["written"], "decision": data["decision"], "afterTuneHeldOutR5": chosen if data["written"] else default,
        "chosen": data["best"]["changed"], "defaultTrainR5": data["baseline"]["train"]["recallAt5"],
        "chosenTrainR5": data["best"]["train"]["recallAt5"], "settingsTried": data["cost"]["settings"],
        "rankings": data["cost"]["rankings"], "ingestedCommits": data["cost"]["ingestedCommits"],
        "ingestCpuSeconds": data["cost"]["ingestCpuSeconds"], "searchCpuSeconds": data["cost"]["searchCpuSeconds"],
        "heldOutCpuSeconds": data["cost"]["heldOutCpuSeconds"], "commandCpuSeconds": cpu, "wallSeconds": wall,
        "tune": data,
    }


def _f(v) -> str:
    return "–" if v is None else f"{v:.3f}"


def table(rows: list[dict]) -> str:
    head = ("| set | train / held-out | default R@5 | chosen on train | gain [95 % CI] | written | after tune | "
            "chosen setting | settings | CPU s (search / held-out / command) |")
    lines = [head, "|" + "---|" * 10]
    for r in rows:
        ci = r["ci95"]
        gain = f"{r['gain']:+.3f} [{ci[0]:+.3f}, {ci[1]:+.3f}]" if ci else "–"
        chosen = ", ".join(f"{k} {v}" for k, v in r["chosen"].items()) or "(default)"
        lines.append(f"| {r['set']} | {r['train']} / {r['heldOut']} | {_f(r['defaultHeldOutR5'])} | "
                     f"{_f(r['chosenHeldOutR5'])} | {gain} | {'yes' if r['written'] else 'no'} | "
                     f"{_f(r['afterTuneHeldOutR5'])} | {chosen} | {r['settingsTried']} | "
                     f"{r['searchCpuSeconds']:.1f} / {r['heldOutCpuSeconds']:.1f} / {r['commandCpuSeconds']:.1f} |")
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("sets", nargs="*", help=f"any of {', '.join(SETS)} (default: all four)")
    parser.add_argument("--base", type=Path, default=Path("/tmp/s7tune"), help="scratch directories: <base>/<set>")
    parser.add_argument("--shared-eval", type=Path, default=None, help="one evaluation store for every set")
    parser.add_argument("--tasks-dir", type=Path, default=TASKS)
    parser.add_argument("--mirrors", type=Path, default=MIRRORS)
    parser.add_argument("--json", type=Path, default=HERE / "tune_history.json")
    parser.add_argument("--alpha", type=float, default=None,
                        help="start from retrieval.alpha = X instead of the default (a check of the write path)")
    args = parser.parse_args()
    unknown = [s for s in args.sets if s not in SETS]
    if unknown:
        parser.error(f"unknown set(s): {', '.join(unknown)}")
    rows = []
    for name in args.sets or list(SETS):  # one at a time: the machine's cores are shared
        rows.append(run_set(name, args.base, args.shared_eval, args.tasks_dir, args.mirrors, args.alpha))
        print(f"{name}: {rows[-1]['decision']}", file=sys.stderr, flush=True)
    print(table(rows))
    safe = all(r["afterTuneHeldOutR5"] >= r["defaultHeldOutR5"] for r in rows)
    print(f"\ntuned R@5 >= starting R@5 on the held-out half for every set: {'yes' if safe else 'NO'}")
    args.json.write_text(json.dumps({"sets": rows, "safe": safe}, indent=2) + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
