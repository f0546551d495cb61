"""Batch embedding alone: the default embedder's CPU over one repository's chunk texts.

The texts every ``embed``/``embed_packed`` call of a full ingest receives (default: sympy at
``repo_ingest.py``'s pinned commit) are collected once, in a child running the first ``--src``;
then each source tree embeds all of them, batch by batch as the ingest did, in a fresh process,
the trees taking turns ``--runs`` times. Per tree: the median CPU (``process_time``) of the embed
calls alone, peak RSS, and the sha256 of every vector byte, which must be the same for all trees.

    python bench/embed_batch.py [--repo sympy/sympy@<commit>] [--runs 3] [--src DIR ...]
                                [--out bench/embed_batch.json]
"""

from __future__ import annotations

import argparse
import json
import shutil
import statistics
import subprocess
import sys
import tempfile
from datetime import UTC, datetime
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
import index_speed as ix  # noqa: E402  (the mirror-borrowing repository, the children's environment)
import ingest_query as iq  # noqa: E402  (machine facts)
import repo_ingest as ri  # noqa: E402  (the pinned default repository)

COLLECT_CHILD = """
import pickle, sys
from ragit.api import Repo
from ragit.embed.static import StaticEmbedder
root, commit, out = sys.argv[1], sys.argv[2], sys.argv[3]
calls = []
def hooked(name):
    original = getattr(StaticEmbedder, name)
    def call(self, texts):
        calls.append((name, list(texts)))
        return original(self, texts)
    setattr(StaticEmbedder, name, call)
hooked("embed"); hooked("embed_packed")
Repo.open(root).ingest(all=True, at=commit)
with open(out, "wb") as fh:
    pickle.dump(calls, fh)
"""

EMBED_CHILD = """
import hashlib, json, pickle, resource, sys, time
import numpy
from ragit.config import defaults
from ragit.embed import load_embedder
with open(sys.argv[1], "rb") as fh:
    calls = pickle.load(fh)
embedder = load_embedder(defaults())
digest = hashlib.sha256()
start = time.process_time()
for name, texts in calls:
    digest.update(bytes(getattr(embedder, name)(texts)) if name == "embed_packed" else embedder.embed(texts).tobytes())
cpu = time.process_time() - start
print(json.dumps({"cpu_s": cpu, "peak_rss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
                  "sha256": digest.hexdigest()}))
"""


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--repo", default=ri.DEFAULT_REPO, help="owner/name[@commit] of a mirror (default: sympy, pinned)")
    p.add_argument("--mirrors", type=Path, default=ix.DEFAULT_MIRRORS, help="directory of <owner>+<name>/repo mirrors")
    p.add_argument("--runs", type=int, default=3, help="fresh-process runs per source tree (median; default 3)")
    p.add_argument("--src", type=Path, action="append", help="a source tree (its `src`) to measure; repeatable "
                   "(default: the ragit this script imports)")
    p.add_argument("--out", type=Path, default=HERE / "embed_batch.json", help="JSON results")
    args = p.parse_args(argv)

    name, commit = ri.resolve(args.mirrors, args.repo)
    sources: list[Path | None] = list(args.src) if args.src else [None]
    started = datetime.now(UTC)
    work = Path(tempfile.mkdtemp(prefix="ragit-embed-batch-"))
    try:
        repo = ix.prepare(work, args.mirrors, {"repo": name, "root": "."})
        texts = work / "texts.pickle"
        subprocess.run([sys.executable, "-c", COLLECT_CHILD, str(repo), commit, str(texts)], cwd=repo,
                       env=ix.child_env(sources[0], work / "pycache-collect"), check=True)
        runs: dict[int, list[dict]] = {i: [] for i in range(len(sources))}
        for _ in range(args.runs):
            for i, src in enumerate(sources):
                out = subprocess.run([sys.executable, "-c", EMBED_CHILD, str(texts)], capture_output=True, text=True,
                                     env=ix.child_env(src, work / f"pycache-{i}"), check=True)
                runs[i].append(json.loads(out.stdout))
    finally:
        shutil.rmtree(work, ignore_errors=True)
    rows = []
    for i, src in enumerate(sources):
        shas = {r["sha256"] for r in runs[i]}
        rows.append({"src": str(src) if src else "(installed)", "cpu_s": [round(r["cpu_s"], 3) for r in runs[i]],
                     "cpu_s_median": round(statistics.median(r["cpu_s"] for r in runs[i]), 3),
                     "peak_rss_mb": round(max(r["peak_rss_mb"] for r in runs[i])), "sha256": "/".join(sorted(shas))})
    identical = len({row["sha256"] for row in rows}) == 1
    print("| source | CPU s (median) | runs | peak RSS MB | vectors sha256 |")
    print("|---|---|---|---|---|")
    for row in rows:
        print(f"| {row['src']} | {row['cpu_s_median']:.3f} | {', '.join(map(str, row['cpu_s']))} |"
              f" {row['peak_rss_mb']} | {row['sha256'][:16]} |")
    print(f"vectors {'identical' if identical else 'DIFFER'} across sources ({name} @ {commit[:10]})")
    result = {"benchmark": "embed_batch", "date": started.isoformat(timespec="seconds"), "repo": name,
              "commit": commit, "runs": args.runs, "machine": iq.machine_info(), "sources": rows,
              "vectors_identical": identical}
    args.out.write_text(json.dumps(result, indent=2) + "\n", encoding="utf-8")
    return 0 if identical else 1


if __name__ == "__main__":
    raise SystemExit(main())
