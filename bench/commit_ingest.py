"""What a commit costs an indexed repository: ``ragit ingest --since HEAD~1`` after a one-file commit.

The commit hook runs this after every commit (detached), so its cost is what a large store adds
to a developer's day; the standard is that it grows with what changed, not with the store. Each
round appends a line to one tracked file, commits, and runs ``ragit ingest --since HEAD~1 --format
json`` as a fresh process through ``ingest_query``'s launcher (wall time, CPU of the process and
the git children it waited for, peak RSS), with bytecode cached as an installed ragit has it. The
figures are medians over ``--rounds``; the first round is a warm-up (it may build the store's
derived files, e.g. the packed keyword postings after an upgrade of their format) and is
reported apart.

    python bench/commit_ingest.py --repo /tmp/ragit-vector-scale/default-1000000/repo [--rounds 5]
                                  [--file docs/...md] [--src DIR] [--out bench/commit_ingest.json]

The repository must be indexed at HEAD already (``vector_scale.py --build-only`` makes the 1M
store). Its history grows by ``--rounds`` + 1 commits; nothing else is changed.
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
from datetime import UTC, datetime
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
import index_speed as ix  # noqa: E402  (children's environment: --src, cached bytecode)
import ingest_query as iq  # noqa: E402  (the launcher, machine facts)


def one_commit(repo: Path, target: str, n: int, env: dict[str, str]) -> dict:
    """Append a line to ``target``, commit it, and ingest the commit as the hook does."""
    with open(repo / target, "a", encoding="utf-8") as fh:
        fh.write(f"\ncommit_ingest round {n}: signal thread graph and the session store\n")
    iq.git(repo, "-c", "user.email=bench@ragit", "-c", "user.name=bench", "commit", "-qam", f"commit_ingest {n}",
           capture=False)
    run = iq.run_cmd([iq.ragit_bin(), "ingest", "--since", "HEAD~1", "--format", "json"], repo, env=env)
    data = json.loads(run.stdout)["data"]
    return {"wall_s": run.wall_s, "cpu_s": run.cpu_s, "peak_rss_mb": run.max_rss_mb,
            "chunked": data.get("chunked"), "embedded_chunks": data.get("embeddedChunks")}


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--repo", type=Path, required=True, help="an indexed git repository (HEAD ingested)")
    p.add_argument("--file", help="the tracked file each round edits (default: the first file git lists)")
    p.add_argument("--rounds", type=int, default=5)
    p.add_argument("--src", type=Path, help="measure the ragit of this source tree (its `src` directory)")
    p.add_argument("--out", type=Path, default=HERE / "commit_ingest.json")
    args = p.parse_args()
    repo = args.repo.resolve()
    target = args.file or iq.git(repo, "ls-files").splitlines()[0]  # (the launcher finds ragit beside this Python)
    env = ix.child_env(args.src, repo.parent / "pycache")
    iq.log(f"{repo}: editing {target}" + (f" with {args.src}" if args.src else ""))
    warm = one_commit(repo, target, 0, env)
    rounds = [one_commit(repo, target, n, env) for n in range(1, args.rounds + 1)]
    summary = {key: statistics.median(r[key] for r in rounds) for key in ("wall_s", "cpu_s", "peak_rss_mb")}
    out = {"date": datetime.now(UTC).isoformat(timespec="seconds"), "repo": str(repo), "file": target,
           "src": str(args.src) if args.src else None, "machine": iq.machine_info(), "warm_up": warm, "rounds": rounds,
           "median": summary}
    args.out.write_text(json.dumps(out, indent=2) + "\n", encoding="utf-8")
    print("| measurement | value |")
    print("| --- | --- |")
    print(f"| first commit (warm-up) wall / CPU | {warm['wall_s']:.2f} / {warm['cpu_s']:.2f} s |")
    print(f"| one-file commit `ingest --since HEAD~1`, median of {args.rounds}: wall / CPU / peak RSS | "
          f"{summary['wall_s']:.2f} s / {summary['cpu_s']:.2f} s / {summary['peak_rss_mb']:.0f} MB |")
    print(f"| load average (1 min) | {out['machine'].get('load_average_at_start')} |")


if __name__ == "__main__":
    try:
        main()
    except subprocess.CalledProcessError as exc:  # pragma: no cover - a bench run
        raise SystemExit(f"[commit_ingest] {exc}")
