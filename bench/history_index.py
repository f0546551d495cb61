"""Cost of the history index behind ``query --scope history`` on the bench mirrors.

    python bench/history_index.py                       # four mirrors, bench/history_index.json
    python bench/history_index.py --repos pallets+flask --json /tmp/out.json

Rows per repository (CPU seconds of this process plus its git children, and wall):
* cold: an empty index filled with the last 1,000 commits reachable from HEAD (what the first
  ``ingest`` adds);
* incremental: the index holds HEAD~50's window, then HEAD's is added (about 50 new commits);
* no-op: the same ingest again (nothing new: one ``rev-list`` and one query of the index);
* search: the FTS5 search of the history set's first 30 task queries at HEAD (median, p95).
The index file's size and its commit and entry counts are reported with the cold row.
"""

from __future__ import annotations

import argparse
import json
import shutil
import sqlite3
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "src"))

from ragit.gitsnap.git import Git  # noqa: E402
from ragit.history import index as hi  # noqa: E402
from ragit.lexical import terms  # noqa: E402
from cputime import measure  # noqa: E402

MIRRORS = Path("/work/.mirror")
TASKS = Path("/work/shared/bench/tasks")
REPOS = {"pallets+flask": "hist_flask", "psf+requests": "hist_requests", "gin-gonic+gin": "hist_gin",
         "reduxjs+redux": "hist_redux"}


def run(name: str) -> dict:
    git = Git(MIRRORS / name / "repo")
    head = git.run("rev-parse", "HEAD").decode().strip()
    older = git.run("rev-parse", "HEAD~50").decode().strip()
    work = Path(tempfile.mkdtemp(prefix="ragit-history-bench-"))
    try:
        added, cpu, wall = measure(lambda: hi.update_index(git, work, head), 3)
        path = hi.index_file(work)
        db = sqlite3.connect(path)
        entries = db.execute("SELECT count(*) FROM entries").fetchone()[0]
        db.close()
        out = {"cold": {"commits": added, "entries": entries, "mb": round(path.stat().st_size / 1e6, 2),
                        "cpu": cpu, "wall": wall}}
        shutil.rmtree(work / ".ragit")
        hi.update_index(git, work, older)
        added, cpu, wall = measure(lambda: hi.update_index(git, work, head), 3)
        out["incremental"] = {"commits": added, "cpu": cpu, "wall": wall}
        added, cpu, wall = measure(lambda: hi.update_index(git, work, head), 3)
        out["noop"] = {"commits": added, "cpu": cpu, "wall": wall}
        tasks = [json.loads(line) for line in (TASKS / f"{REPOS[name]}.jsonl").read_text().splitlines()[:30]]
        cpus = []
        for t in tasks:
            _, cpu, _ = measure(lambda: hi.search(git, work, head, terms(t["query"])), 3)
            cpus.append(cpu)
        cpus.sort()
        out["search"] = {"queries": len(cpus), "cpuMedianMs": round(1000 * cpus[len(cpus) // 2], 1),
                         "cpuP95Ms": round(1000 * cpus[int(0.95 * (len(cpus) - 1))], 1)}
        return out
    finally:
        shutil.rmtree(work, ignore_errors=True)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--repos", nargs="*", default=list(REPOS))
    ap.add_argument("--json", default=str(ROOT / "bench" / "history_index.json"))
    args = ap.parse_args()
    results = {name: run(name) for name in args.repos}
    print(f"{'repository':<16} {'commits':>7} {'entries':>7} {'MB':>5} {'cold cpu s':>10} {'incr (n) cpu s':>15} "
          f"{'no-op cpu s':>11} {'search med/p95 ms':>18}")
    for name, r in results.items():
        c, i, n, s = r["cold"], r["incremental"], r["noop"], r["search"]
        print(f"{name:<16} {c['commits']:>7} {c['entries']:>7} {c['mb']:>5} {c['cpu']:>10} "
              f"{str(i['cpu']) + ' (' + str(i['commits']) + ')':>15} {n['cpu']:>11} "
              f"{str(s['cpuMedianMs']) + ' / ' + str(s['cpuP95Ms']):>18}")
    Path(args.json).write_text(json.dumps(results, indent=2) + "\n")


if __name__ == "__main__":
    main()
