"""Bare-name questions on any repository: does the file that defines a name rank first?

The code-search benchmark's ``symbol`` category asks for a bare name (``JsonReader``) and expects
the defining file; its dev half has 58 such questions. This probe makes as many as a repository
offers, on code nobody tuned on: it picks names that the repository's source defines exactly once
(Python read with ``ast``; TypeScript/JavaScript, Go, Rust, Ruby, PHP, Kotlin and Swift with
declaration patterns of their own, independent of ragit's chunker and re-rank), asks each name
alone with ``Repo.query`` and records the defining file's rank among the hits' files:

    python bench/symbol_probe.py REPO [REPO ...] [--names 40] [--seed 7] [--json out.json]

Each REPO is a git work tree; it is indexed first (``Repo.ingest``, a no-op when HEAD is indexed).
Test, example and ``.d.ts`` files are not asked about (their names are defined for the tests),
and a name is skipped when any file, tests included, declares it more than once. Session 30 ran it
on npm and Debian sources (docs/evaluation.md, "Session 30").
"""

from __future__ import annotations

import argparse
import ast
import collections
import json
import random
import re
import sys
from pathlib import Path

_MODIFIERS = r"(?:(?:public|internal|private|protected|fileprivate|open|final|static|abstract|sealed|data|inline|value" \
             r"|override|suspend|actual|expect|annotation|enum|readonly|mutating|@objc|@MainActor)\s+)*"
PATTERNS = {
    "ts": re.compile(r"^\s*(?:export\s+)?(?:declare\s+)?(?:abstract\s+)?(?:default\s+)?"
                     r"(?:class|interface|function\*?|type|enum|const|let)\s+([A-Za-z_$][\w$]*)", re.M),
    "go": re.compile(r"^(?:func\s+(?:\([^)]*\)\s*)?|type\s+)([A-Za-z_]\w*)", re.M),
    "rs": re.compile(r"^\s*(?:pub(?:\([^)]*\))?\s+)?(?:async\s+)?(?:unsafe\s+)?(?:const\s+)?"
                     r"(?:struct|enum|trait|fn|type|union)\s+([A-Za-z_]\w*)", re.M),
    "rb": re.compile(r"^\s*(?:(?:class|module)\s+(?:[A-Z]\w*::)*([A-Z]\w*)|def\s+(?:self\.)?([a-z_]\w*[?!]?))", re.M),
    "php": re.compile(r"^\s*(?:(?:abstract|final|public|private|protected|static|readonly)\s+)*"
                      r"(?:class|interface|trait|enum|function)\s+([A-Za-z_]\w*)", re.M),
    "kt": re.compile(rf"^\s*{_MODIFIERS}(?:class|interface|object|fun|typealias)\s+(?:<[^>]*>\s*)?"
                     r"(?:[A-Za-z_]\w*\.)?([A-Za-z_]\w*)", re.M),
    "swift": re.compile(rf"^\s*{_MODIFIERS}(?:class|struct|protocol|enum|func|actor|typealias)\s+([A-Za-z_]\w*)", re.M),
}
EXTENSIONS = {".ts": "ts", ".tsx": "ts", ".js": "ts", ".mjs": "ts", ".go": "go", ".rs": "rs", ".rb": "rb",
              ".php": "php", ".kt": "kt", ".swift": "swift", ".py": "py"}
_SKIP = re.compile(r"(^|/)(tests?|__tests__|spec|testing|bench|benches|benchmarks?|examples?|docs?|vendor|node_modules)/"
                   r"|_test\.go$|_spec\.rb$|Tests?\.(?:php|kt|swift)$|\.(?:test|spec)\.[jt]sx?$|\.d\.ts$"
                   r"|(^|/)test_[^/]*\.py$|(^|/)conftest\.py$")


def _python_names(data: bytes, top_only: bool) -> list[str]:
    try:
        tree = ast.parse(data)
    except (SyntaxError, ValueError):
        return []
    kinds = (ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)
    nodes = tree.body if top_only else ast.walk(tree)
    return [n.name for n in nodes if isinstance(n, kinds)]


def defined_once(root: Path) -> dict[str, str]:
    """Name → the one non-test file defining it, for names no file (tests included) declares twice."""
    where: dict[str, set[str]] = collections.defaultdict(set)
    counts: collections.Counter[str] = collections.Counter()
    for path in sorted(p for p in root.rglob("*") if p.is_file() and ".git" not in p.parts):
        kind = EXTENSIONS.get(path.suffix)
        if kind is None:
            continue
        rel = path.relative_to(root).as_posix()
        data = path.read_bytes()
        if kind == "py":
            everywhere, own = _python_names(data, False), _python_names(data, True)
        else:
            found = [next(g for g in m.groups() if g) for m in PATTERNS[kind].finditer(data.decode("utf-8", "replace"))]
            everywhere, own = found, found
        counts.update(everywhere)
        if not _SKIP.search(rel):
            for name in own:
                where[name].add(rel)
    return {name: next(iter(files)) for name, files in where.items()
            if len(files) == 1 and counts[name] == 1 and len(name) >= 5 and not name.startswith("_")
            and name != "main"}


def probe(root: Path, names: int, seed: int) -> dict:
    from ragit.api import Repo

    repo = Repo.open(root)
    repo.ingest()  # (incremental: nothing to do when HEAD is indexed)
    pool = sorted(defined_once(root).items())
    random.Random(seed).shuffle(pool)
    rows = []
    for name, gold in pool[:names]:
        hits = repo.query(name, top_k=10).to_dict()["hits"]
        files = list(dict.fromkeys(h["path"] for h in hits))
        rows.append({"name": name, "gold": gold, "rank": files.index(gold) + 1 if gold in files else None,
                     "files": files[:3]})
    ranks = [r["rank"] for r in rows]
    return {"repo": str(root), "names": len(rows), "rank1": sum(1 for r in ranks if r == 1),
            "mrr": round(sum(1 / r for r in ranks if r) / max(1, len(rows)), 4),
            "misses": [r for r in rows if r["rank"] != 1]}


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("repos", nargs="+", type=Path)
    p.add_argument("--names", type=int, default=40, help="names asked per repository (default 40)")
    p.add_argument("--seed", type=int, default=7)
    p.add_argument("--json", type=Path, default=None)
    args = p.parse_args(argv)
    results = []
    print("| repository | names | at rank 1 | MRR |")
    print("|---|---|---|---|")
    for root in args.repos:
        result = probe(root.resolve(), args.names, args.seed)
        results.append(result)
        print(f"| {root.name} | {result['names']} | {result['rank1']} | {result['mrr']:.3f} |", flush=True)
    for result in results:
        for miss in result["misses"]:
            print(f"  {Path(result['repo']).name}: {miss['name']} in {miss['gold']}: rank {miss['rank']}, "
                  f"first {miss['files']}", file=sys.stderr)
    if args.json:
        args.json.write_text(json.dumps({"benchmark": "symbol_probe", "results": results}, indent=2) + "\n",
                             encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
