"""History tasks from repositories no rule was tuned on: ragit's default hybrid beside plain BM25.

Issue 12 holds the history sets (flask, requests, gin, redux) to "the BM25 baseline + 5 points",
and review measures other repositories too. This script mines file-localisation tasks from the
history of other repositories (``ragit eval mine``: a commit's message is the question, the
source files it changed are the gold), runs ``ragit eval run`` on them with the default
configuration (hybrid; docs indexed as in a normal repository) and computes the baseline of
``../shared/bench/README.md`` on the same tasks (``bm25_baseline.py``: BM25 over 30-line chunks
of the gold files' language, code-aware tokens):

    python bench/heldout_history.py                       # the six repositories below (≈ 4 min)
    python bench/heldout_history.py --only cobra,gson --json /tmp/h.json

Task files are kept in ``bench/heldout/`` (mined once, ``--count 100 --seed 0`` at the mirror's
HEAD, the repository named ``owner/name``), so a later run asks the same questions; delete one to
mine it again. Nothing here feeds a default: these repositories are for checking, not tuning.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
import bm25_baseline as bl  # noqa: E402

# One per language family the history dev sets do not cover (Java, Rust, TypeScript, Lua) and two
# beside them (a Python CLI library, a Go one); all are code-search mirrors, none a history set.
REPOS = ("pallets/click", "spf13/cobra", "google/gson", "serde-rs/serde", "vitest-dev/vitest",
         "nvim-telescope/telescope.nvim")
TASKS_DIR = HERE / "heldout"


def mirror_of(mirrors: Path, name: str) -> Path:
    return mirrors / name.replace("/", "+") / "repo"


def mined(name: str, mirror: Path, work: Path, count: int, seed: int) -> Path:
    """The task file of ``name``: ``bench/heldout/<name>.jsonl``, mined from a clone when absent."""
    out = TASKS_DIR / f"{name.split('/')[-1]}.jsonl"
    if out.exists():
        return out
    clone = work / "clone"
    shutil.rmtree(clone, ignore_errors=True)
    subprocess.run(["git", "clone", "-q", "--shared", str(mirror), str(clone)], check=True)
    raw = work / "mined.jsonl"
    subprocess.run([sys.executable, "-m", "ragit", "eval", "mine", "--out", str(raw), "--count", str(count),
                    "--seed", str(seed), "--format", "json"], cwd=clone, check=True, capture_output=True)
    lines = []
    for line in raw.read_text().splitlines():
        if line.strip():
            task = json.loads(line)
            task["repo"] = name  # a clone of a mirror names itself "<owner>+<name>/repo"
            task["id"] = f"{name}@{task['fix_commit'][:10]}"
            lines.append(json.dumps(task))
    TASKS_DIR.mkdir(exist_ok=True)
    out.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return out


def ragit_hybrid(tasks: Path, mirror: Path, cwd: Path) -> dict:
    proc = subprocess.run([sys.executable, "-m", "ragit", "eval", "run", str(tasks), "--repo", str(mirror),
                           "--mode", "hybrid", "--format", "json"], cwd=cwd, capture_output=True, text=True)
    if proc.returncode != 0:
        raise SystemExit(f"eval run failed on {tasks}: {proc.stdout[-2000:]}{proc.stderr[-2000:]}")
    data = json.loads(proc.stdout)["data"]
    mode = next(m for m in data["modes"] if m["mode"] == "hybrid")
    return {"tasks": data["evaluated"], "r5": mode["recallAt5"], "r10": mode["recallAt10"], "mrr": mode["mrr"]}


def baseline(tasks: Path, mirror: Path) -> dict:
    return bl.score([json.loads(line) for line in tasks.read_text().splitlines() if line.strip()], mirror)


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--mirrors", type=Path, default=Path("/work/.mirror"))
    p.add_argument("--only", default="", help="comma-separated repository names (default: all six)")
    p.add_argument("--count", type=int, default=100)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--json", type=Path, default=HERE / "heldout_history.json")
    args = p.parse_args(argv)
    wanted = {w.strip() for w in args.only.split(",") if w.strip()}
    repos = [r for r in REPOS if not wanted or r.split("/")[-1] in wanted]
    work = Path(tempfile.mkdtemp(prefix="ragit-heldout-"))
    rows = []
    print("| repository | tasks | BM25 R@5 / R@10 / MRR | ragit hybrid R@5 / R@10 / MRR | Δ R@5 / R@10 |")
    print("|---|---|---|---|---|")
    try:
        for name in repos:
            mirror = mirror_of(args.mirrors, name)
            if not mirror.is_dir():
                print(f"| {name} | no mirror at {mirror} | | | |")
                continue
            tasks = mined(name, mirror, work, args.count, args.seed)
            cwd = work / name.replace("/", "+")
            cwd.mkdir(parents=True, exist_ok=True)
            subprocess.run(["git", "init", "-q", str(cwd)], check=True)
            started = time.perf_counter()
            ours = ragit_hybrid(tasks, mirror, cwd)
            base = baseline(tasks, mirror)
            row = {"repo": name, "tasks": ours["tasks"], "bm25": base, "ragit": ours,
                   "seconds": round(time.perf_counter() - started, 1)}
            rows.append(row)
            print(f"| {name} | {ours['tasks']} | {base['r5']:.3f} / {base['r10']:.3f} / {base['mrr']:.3f} | "
                  f"{ours['r5']:.3f} / {ours['r10']:.3f} / {ours['mrr']:.3f} | "
                  f"{ours['r5'] - base['r5']:+.3f} / {ours['r10'] - base['r10']:+.3f} |", flush=True)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    if rows:
        mean = {k: sum(r["ragit"][k] - r["bm25"][k] for r in rows) / len(rows) for k in ("r5", "r10", "mrr")}
        print(f"| mean Δ | | | | {mean['r5']:+.3f} / {mean['r10']:+.3f} |")
        args.json.write_text(json.dumps({"benchmark": "heldout_history", "rows": rows, "mean_delta": mean,
                                         "load_average": list(os.getloadavg())}, indent=2) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
