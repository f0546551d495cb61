"""The history sets' baseline on any task file: plain BM25 over 30-line chunks (issue 12's yardstick).

``../shared/bench/README.md`` states the history sets' targets as "the BM25 baseline + 5
points", where the baseline is BM25 over 30-line chunks of the language's source files with
code-aware tokens. It gives the figures for the dev repositories only; review also measures other
repositories. This script computes the same baseline for any task file (``ragit eval mine``'s
output, say) so ragit's hybrid figures on a repository nobody tuned on can be set beside it:

    python bench/bm25_baseline.py TASKS.jsonl --repo CLONE [--ext py,pyi] [--lines 30] [--json out.json]

* Files: every file of the task's commit whose extension is in ``--ext`` (default: the
  extensions of the task file's gold files, "the language's source files").
* Chunks: consecutive windows of ``--lines`` lines (no overlap), each scored by Okapi BM25
  (k1 1.2, b 0.75, idf ``ln(1 + (N - df + 0.5) / (df + 0.5))``) over ``ragit.lexical`` terms
  (identifier parts and joined forms, Snowball stems, stop words dropped): the code-aware tokens
  the README names. The question's distinct terms are the query.
* A file's rank is its best chunk's; R@k = share of gold files in the top k files, MRR = 1 / the
  first gold file's rank, means over tasks (the metrics of ``../shared/bench/README.md``).

Blobs are read once per run through ``git cat-file --batch`` and their chunks' terms cached by
blob id, so 100 commits of one repository cost about one tree's analysis plus what changed.
"""

from __future__ import annotations

import argparse
import json
import math
import sys
import time
from pathlib import Path


def _ext(path: str) -> str:
    name = path.rpartition("/")[2]
    return name.rpartition(".")[2].lower() if "." in name else ""


class Blobs:
    """Blob id → its chunks' term counts, read with ragit's ``BlobReader`` (one ``cat-file --batch``)."""

    def __init__(self, repo: Path, lines: int) -> None:
        from ragit.gitsnap.blobs import BlobReader
        from ragit.gitsnap.git import Git

        self.git = Git(repo)
        self.reader = BlobReader(self.git)
        self.lines = lines
        self.cache: dict[str, list[dict[str, int]]] = {}

    def chunks(self, sha: str) -> list[dict[str, int]]:
        found = self.cache.get(sha)
        if found is not None:
            return found
        from ragit.gitsnap.blobs import MissingObject
        from ragit.lexical import term_counts

        try:
            text = self.reader.read(sha).decode("utf-8", "replace").split("\n")
        except MissingObject:  # missing from a partial clone: no chunks
            text = []
        found = self.cache[sha] = [term_counts("\n".join(text[i:i + self.lines]))
                                   for i in range(0, len(text), self.lines)]
        return found

    def tree(self, commit: str, exts: set[str]) -> list[tuple[str, str]]:
        """(path, blob id) of the commit's files with one of ``exts`` (ragit's ``list_tree``)."""
        from ragit.gitsnap.tree import list_tree

        return [(e.path, e.oid) for e in list_tree(self.git, commit)
                if e.kind == "blob" and not e.missing and _ext(e.path) in exts]

    def close(self) -> None:
        self.reader.close()


def ranked_files(question: str, files: list[tuple[str, str]], blobs: Blobs, k1: float = 1.2,
                 b: float = 0.75) -> list[str]:
    """Files in order of their best chunk's BM25 score for ``question`` (ties: path order)."""
    from ragit.lexical import terms

    query = list(dict.fromkeys(terms(question)))
    chunks: list[tuple[str, dict[str, int], int]] = []
    df = dict.fromkeys(query, 0)
    total = 0
    for path, sha in files:
        for counts in blobs.chunks(sha):
            length = sum(counts.values())
            total += length
            chunks.append((path, counts, length))
            for t in query:
                if t in counts:
                    df[t] += 1
    n = len(chunks)
    if not n:
        return []
    avgdl = total / n or 1.0
    idf = {t: math.log(1 + (n - d + 0.5) / (d + 0.5)) for t, d in df.items() if d}
    best: dict[str, float] = {}
    for path, counts, length in chunks:
        score = 0.0
        for t, w in idf.items():
            f = counts.get(t)
            if f:
                score += w * f * (k1 + 1) / (f + k1 * (1 - b + b * length / avgdl))
        if score > best.get(path, 0.0):
            best[path] = score
    return sorted(best, key=lambda p: (-best[p], p))


def score(tasks: list[dict], repo: Path, exts: set[str] | None = None, lines: int = 30) -> dict:
    """Mean R@1, R@5, R@10 and MRR of the baseline over ``tasks`` (``exts``: the gold files' when None)."""
    exts = exts or {_ext(g) for t in tasks for g in t["gold"]} - {""}
    blobs = Blobs(repo, lines)
    sums = {"r1": 0.0, "r5": 0.0, "r10": 0.0, "mrr": 0.0}
    try:
        for t in tasks:
            order = ranked_files(t["query"], blobs.tree(t["commit"], exts), blobs)
            gold = set(t["gold"])
            rank = {p: i + 1 for i, p in enumerate(order) if p in gold}
            for k in (1, 5, 10):
                sums[f"r{k}"] += sum(1 for r in rank.values() if r <= k) / len(gold)
            sums["mrr"] += 1 / min(rank.values()) if rank else 0.0
    finally:
        blobs.close()
    return {"tasks": len(tasks), "extensions": sorted(exts), "lines": lines,
            **{k: round(v / max(1, len(tasks)), 4) for k, v in sums.items()}}


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("tasks", type=Path)
    p.add_argument("--repo", type=Path, required=True, help="a clone holding every task's commit")
    p.add_argument("--ext", default="", help="comma-separated source extensions (default: the gold files')")
    p.add_argument("--lines", type=int, default=30, help="lines per chunk (default 30)")
    p.add_argument("--json", type=Path, default=None, help="write the figures here")
    args = p.parse_args(argv)
    tasks = [json.loads(line) for line in args.tasks.read_text().splitlines() if line.strip()]
    exts = {e.strip().lstrip(".").lower() for e in args.ext.split(",") if e.strip()} or None
    started = time.perf_counter()
    result = score(tasks, args.repo, exts, args.lines)
    result["seconds"] = round(time.perf_counter() - started, 1)
    print(f"| {args.tasks.name} | {result['tasks']} | {','.join(result['extensions'])} | "
          f"{result['r5']:.3f} | {result['r10']:.3f} | {result['mrr']:.3f} |")
    if args.json:
        args.json.write_text(json.dumps(result, indent=2) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
