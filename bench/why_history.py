"""``why`` on the history dev sets: is the gold fix commit among the top 3, given the lines it touched?

    python bench/why_history.py                       # the four hist_* sets, bench/why_history.json
    python bench/why_history.py --sets hist_flask --json /tmp/out.json

For each task (``commit`` = the fix's parent, ``fix_commit`` = the fix, ``gold`` = the files it
modified) the range is the first hunk of ``git diff -U0 <parent> <fix> -- <gold>`` that adds lines,
over the gold files in order; when the fix only removed lines, the two lines around the first
removal (a removal at the top of a file leaves only the line after it, which git's line history
cannot connect to the removal: such a task counts as a miss). ``why`` runs on the bare mirror at the fix commit (a Git handle and a commit,
no worktree) and the task counts when the fix is among the first 3 commits reported. A second
column asks about the whole file (no range). CPU seconds per call include git's children.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "src"))

from ragit.errors import RagitError  # noqa: E402
from ragit.gitsnap.git import Git  # noqa: E402
from ragit.gitsnap.patches import parse_patch  # noqa: E402
from ragit.retrieve.why import why  # noqa: E402
from cputime import cpu_seconds  # noqa: E402

TASKS = Path("/work/shared/bench/tasks")
MIRRORS = Path("/work/.mirror")
SETS = ("hist_flask", "hist_requests", "hist_gin", "hist_redux")
TOP = 3


def touched_ranges(git: Git, parent: str, fix: str, path: str) -> tuple[list[tuple[int, int]], list[tuple[int, int]]]:
    """New-side line ranges of the fix's hunks in ``path``: those that add lines, and for hunks
    that only remove lines the two lines around the removal (git's line history can only see a
    removal between two lines it tracks). Both empty when the fix left no such file."""
    raw = git.run("-c", "diff.noprefix=false", "diff", "--no-color", "--no-ext-diff", "-U0", parent, fix, "--", path)
    added: list[tuple[int, int]] = []
    removed: list[tuple[int, int]] = []
    for diff in parse_patch(raw.decode("utf-8", "replace")):
        if diff.new_path is None:
            return [], []
        for hunk in diff.hunks:
            if hunk.new_range is not None:
                added.append(hunk.new_range)
            else:
                removed.append((max(1, hunk.new_start), hunk.new_start + 1))
    return added, removed


def _lines(git: Git, commit: str, path: str) -> int:
    data = git.run("cat-file", "-p", f"{commit}:{path}")
    return data.count(b"\n") + (0 if data.endswith(b"\n") or not data else 1)


def pick_range(git: Git, task: dict) -> tuple[str, int, int] | None:
    """The first added range of any gold file, else the first removal's surrounding lines."""
    fallback = None
    for gold in task["gold"]:
        added, removed = touched_ranges(git, task["commit"], task["fix_commit"], gold)
        if added:
            return gold, added[0][0], added[0][1]
        if removed and fallback is None:
            start, end = removed[0]
            fallback = gold, start, min(end, _lines(git, task["fix_commit"], gold))
    return fallback


def run_task(git: Git, task: dict) -> dict:
    fix = task["fix_commit"]
    picked = pick_range(git, task)
    if picked is None:
        return {"id": task["id"], "path": None, "range": {"rank": None, "error": "no_touched_lines"},
                "file": {"rank": None, "error": "no_touched_lines"}}
    gold, start, end = picked
    row = {"id": task["id"], "path": gold, "start": start, "end": end}
    for label, target in (("range", f"{gold}:L{start}-L{end}"), ("file", gold)):
        cpu = cpu_seconds()
        try:
            data = why(git, target, commit=fix, limit=TOP)
        except RagitError as exc:
            row[label] = {"rank": None, "error": exc.code}
            continue
        shas = [c["sha"] for c in data["commits"]]
        row[label] = {"rank": shas.index(fix) + 1 if fix in shas else None, "cpu": cpu_seconds() - cpu}
    return row


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--sets", nargs="*", default=list(SETS))
    ap.add_argument("--json", default=str(ROOT / "bench" / "why_history.json"))
    args = ap.parse_args()
    results: dict[str, dict] = {}
    rows_out = []
    for name in args.sets:
        tasks = [json.loads(line) for line in (TASKS / f"{name}.jsonl").read_text().splitlines() if line.strip()]
        git = Git(MIRRORS / tasks[0]["repo"].replace("/", "+") / "repo")
        wall = time.perf_counter()
        rows = [run_task(git, t) for t in tasks]
        wall = time.perf_counter() - wall
        summary: dict[str, object] = {"tasks": len(rows), "wallSeconds": round(wall, 2)}
        for label in ("range", "file"):
            ranks = [r[label].get("rank") for r in rows]
            cpus = sorted(r[label]["cpu"] for r in rows if "cpu" in r[label])
            summary[label] = {
                "top1": sum(1 for k in ranks if k == 1) / len(rows),
                "top3": sum(1 for k in ranks if k is not None and k <= TOP) / len(rows),
                "errors": sum(1 for r in rows if "error" in r[label]),
                "cpuMedianMs": round(1000 * cpus[len(cpus) // 2], 1) if cpus else None,
                "cpuP95Ms": round(1000 * cpus[int(0.95 * (len(cpus) - 1))], 1) if cpus else None,
            }
        results[name] = summary
        rows_out += [{"set": name, **r} for r in rows]
    every = [r for r in rows_out]
    overall = {label: sum(1 for r in every if r[label].get("rank") is not None and r[label]["rank"] <= TOP) / len(every)
               for label in ("range", "file")}
    print(f"{'set':<15} {'tasks':>5} {'range top1':>10} {'range top3':>10} {'file top3':>9} "
          f"{'errors':>6} {'cpu med ms':>10} {'cpu p95 ms':>10}")
    for name, s in results.items():
        r, f = s["range"], s["file"]
        print(f"{name:<15} {s['tasks']:>5} {r['top1']:>10.3f} {r['top3']:>10.3f} {f['top3']:>9.3f} "
              f"{r['errors']:>6} {r['cpuMedianMs']!s:>10} {r['cpuP95Ms']!s:>10}")
    print(f"{'all':<15} {len(every):>5} {'':>10} {overall['range']:>10.3f} {overall['file']:>9.3f}")
    misses = [r for r in rows_out if r["range"].get("rank") is None or r["range"]["rank"] > TOP]
    for r in misses[:20]:
        print(f"  miss {r['set']} {r['id']} {r['path']}:L{r.get('start')}-L{r.get('end')} {r['range']}")
    Path(args.json).write_text(json.dumps({"top": TOP, "sets": results, "overall": overall, "misses": misses},
                                          indent=2) + "\n")


if __name__ == "__main__":
    main()
