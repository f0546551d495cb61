"""A/B of cold ``ragit query --format json``: two (or more) ragit source trees in turn, same stores.

``ingest_query.py`` and ``vector_scale.py --cold-only`` measure one tree; two of their runs made
minutes apart on a shared machine compare two loads as much as two trees. Here each repository's
cold query runs as a fresh process of each tree in turn (``PYTHONPATH=<src>``, the order alternating
every round, one discarded warm-up round), through ``ingest_query``'s launcher: wall time, CPU
(user + system, with the ``git status`` the query waits for) and peak RSS of that process alone.
Every tree must return the same hits, hit by hit (the JSON ``data.hits``), or the run fails.
Figures are medians per repository and tree. A query writes nothing of ragit's, so the prebuilt
stores of ``vector_scale.py`` may be measured as they are (git's index is settled first, as
``ingest_query.cold_cli`` does).

    python bench/cold_ab.py --src /tmp/base/src --src src --repo /tmp/ragit-vector-scale/default-1000000/repo
                            [--question "period owner taking"] [--runs 7] [--out bench/cold_ab.json]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
from datetime import UTC, datetime
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
import ingest_query as iq  # noqa: E402  (the launcher, the children's environment, the question set)

DEFAULT_QUESTION = "period owner taking"  # vector_scale.py's cold question (questions[1] of its set)
METRICS = ("wall_s", "cpu_s", "peak_rss_mb")


def run_once(src: Path, repo: Path, question: str) -> tuple[dict[str, float], str]:
    """One cold query of tree ``src`` in ``repo``: its figures and its hits as canonical JSON."""
    env = dict(iq.CHILD_ENV, PYTHONPATH=str(src.resolve()))
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    run = iq.run_cmd([iq.ragit_bin(), "query", question, "--format", "json"], repo, env=env)
    hits = json.dumps(run.json()["data"]["hits"], sort_keys=True)
    return {"wall_s": run.wall_s, "cpu_s": run.cpu_s, "peak_rss_mb": run.max_rss_mb}, hits


def measure(srcs: list[Path], repo: Path, question: str, runs: int) -> dict:
    """Median figures per tree on one repository; raises when the trees' hits differ."""
    iq.settle_index(repo)
    figures: dict[str, list[dict[str, float]]] = {str(s): [] for s in srcs}
    hits: dict[str, str] = {}
    for round_ in range(runs + 1):
        for src in srcs if round_ % 2 == 0 else srcs[::-1]:
            got, answer = run_once(src, repo, question)
            if hits.setdefault(str(src), answer) != answer:
                raise SystemExit(f"{src}: two runs answered differently in {repo}")
            if round_:
                figures[str(src)].append(got)
    if len(set(hits.values())) != 1:
        raise SystemExit(f"the trees' hits differ in {repo}")
    return {"repo": str(repo), "question": question, "runs": runs, "hits": len(json.loads(hits[str(srcs[0])])),
            "trees": {s: {m: statistics.median(r[m] for r in rows) for m in METRICS} | {"runs": rows}
                      for s, rows in figures.items()}}


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--src", type=Path, action="append", required=True, help="a ragit source tree (twice or more)")
    p.add_argument("--repo", type=Path, action="append", required=True, help="an indexed repository (repeatable)")
    p.add_argument("--question", default=DEFAULT_QUESTION)
    p.add_argument("--runs", type=int, default=7, help="measured runs per tree and repository (median; default 7)")
    p.add_argument("--out", type=Path, default=HERE / "cold_ab.json")
    args = p.parse_args(argv)
    out = {"date": datetime.now(UTC).isoformat(timespec="seconds"), "machine": iq.machine_info(),
           "load_average_at_start": list(os.getloadavg()), "repos": []}
    print("| repository | tree | wall s | CPU s | peak RSS MB |\n| --- | --- | ---: | ---: | ---: |")
    for repo in args.repo:
        sec = measure(args.src, repo, args.question, args.runs)
        out["repos"].append(sec)
        for src, fig in sec["trees"].items():
            print(f"| {repo.parent.name}/{repo.name} | {src} | {fig['wall_s']:.3f} | {fig['cpu_s']:.3f} | "
                  f"{fig['peak_rss_mb']:.0f} |")
    out["load_average_at_end"] = list(os.getloadavg())
    print(f"load average {out['load_average_at_start'][0]:.1f} -> {out['load_average_at_end'][0]:.1f}; "
          "hits identical across trees")
    args.out.write_text(json.dumps(out, indent=2) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
