"""Full index of one large repository (issue 15: "sympy full ingest ≤ 10 s CPU").

The repository is read from its mirror (``<mirrors>/<owner>+<name>/repo``) at a pinned commit, the
same way ``index_speed.py`` reads the speed set: an empty repository borrows the mirror's objects
through git alternates and ``ragit ingest --all --at <commit>`` runs as a fresh process on an empty
index, ``--runs`` times, with the default configuration (every text file, the default embedder).
Each run's wall time, CPU time (the process and the git children it waited for) and peak RSS come
from ``os.wait4``; the figures are medians. ``--profile PATH`` adds one in-process cProfile of the
same ingest and prints its top functions.

    python bench/repo_ingest.py [--repo sympy/sympy@<commit>] [--runs N] [--src DIR] [--profile PATH]
                                [--out bench/repo_ingest.json]

The default commit is the mirror's HEAD when this script was written (sympy 42,897 chunks); the
issue's 41,088-chunk figure was an older commit.
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
import time
from datetime import UTC, datetime
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
import index_speed as ix  # noqa: E402  (the mirror-borrowing repository and the measured ingest)
import ingest_query as iq  # noqa: E402  (machine facts, ragit's revision)

DEFAULT_REPO = "sympy/sympy@e950d313a932bc6cccbc95376b3821cd2f8b5af4"
TARGET_CPU_S = {"sympy/sympy": 10.0}

PROFILE_CHILD = """
import cProfile, pstats, sys
from ragit.api import Repo
root, commit, out = sys.argv[1], sys.argv[2], sys.argv[3]
repo = Repo.open(root)
cProfile.runctx("repo.ingest(all=True, at=commit)", globals(), {"repo": repo, "commit": commit}, out)
pstats.Stats(out).sort_stats("tottime").print_stats(25)
"""


def resolve(mirrors: Path, spec: str) -> tuple[str, str]:
    """``owner/name[@commit]`` → (owner/name, full commit id); no commit means the mirror's HEAD."""
    name, _, commit = spec.partition("@")
    out = subprocess.run(["git", "-C", str(ix.mirror_of(mirrors, name)), "rev-parse", "--verify", f"{commit or 'HEAD'}^{{commit}}"],
                         capture_output=True, text=True, check=True)
    return name, out.stdout.strip()


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--repo", default=DEFAULT_REPO, help="owner/name[@commit] of a mirror (default: sympy, pinned)")
    p.add_argument("--mirrors", type=Path, default=ix.DEFAULT_MIRRORS, help="directory of <owner>+<name>/repo mirrors")
    p.add_argument("--runs", type=int, default=3, help="fresh-process ingests (median; default 3)")
    p.add_argument("--src", type=Path, help="measure the ragit of this source tree (its `src` directory)")
    p.add_argument("--profile", type=Path, help="also write an in-process cProfile of one ingest here")
    p.add_argument("--out", type=Path, default=HERE / "repo_ingest.json", help="JSON results")
    args = p.parse_args(argv)

    mirror = ix.mirror_of(args.mirrors, args.repo.partition("@")[0])
    if not mirror.exists():  # (make bench goes on to the other rows)
        print(f"[repo_ingest] no mirror at {mirror}: nothing measured, {args.out} left as it is", file=sys.stderr)
        return 0
    name, commit = resolve(args.mirrors, args.repo)
    started = datetime.now(UTC)
    load_start = list(os.getloadavg())
    t_all = time.perf_counter()
    work = Path(tempfile.mkdtemp(prefix="ragit-repo-ingest-"))
    env = ix.child_env(args.src, work / "pycache")
    try:
        repo = ix.prepare(work, args.mirrors, {"repo": name, "root": "."})
        row = ix.measure(repo, commit, args.runs, env, api=False, questions=[], rounds=0)
        if args.profile is not None:
            iq.clear_index(repo)
            subprocess.run([sys.executable, "-c", PROFILE_CHILD, str(repo), commit, str(args.profile)], cwd=repo,
                           env=env, check=True)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    target = TARGET_CPU_S.get(name)
    print("| repository | commit | files | chunks | wall s | CPU s | peak RSS MB | target CPU |")
    print("|---|---|---|---|---|---|---|---|")
    print(f"| {name} | {commit[:10]} | {row['files']} | {row['chunks']} | {row['cli_wall_s']:.2f} |"
          f" {row['cli_cpu_s']:.2f} | {row['cli_peak_rss_mb']:.0f} | {'' if target is None else f'≤ {target:g} s'} |")
    ix.write_result(args.out, "repo_ingest", started, t_all, args.src,
                    {**iq.machine_info(), "load_average_at_start": load_start},
                    repo=name, commit=commit, runs=args.runs, target_cpu_s=target, **row)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
