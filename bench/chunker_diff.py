#!/usr/bin/env python3
"""Which languages' chunks a change to the code chunker alters (docs/architecture.md, "Per-language
chunker revisions").

Every structured-code file (tree-sitter languages; Python's ``ast`` chunker too with
``--python``) of the evaluation repositories is chunked with two ragit source trees, each in a
child process (``chunk_code(path, text, text, "1")``, read from git objects, no checkout): the
code-search repositories at their task commit, and gin, redux, flask, requests and sympy at the
mirror's HEAD. The table counts per chunker language the files whose chunks (titles, line
ranges, text) differ; ``NEEDS REVISION`` marks a language whose chunks changed under an
unchanged chunker name (the same chunk ids would name different chunks: bump its
``Language.revision``).

    .venv/bin/python bench/chunker_diff.py --old /work/main/src --new src [--json out.json]
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import subprocess
import sys
import tempfile
from collections import defaultdict
from pathlib import Path

MIRROR = Path("/work/.mirror")
TASKS = Path("/work/shared/bench/tasks/codesearch_dev.jsonl")
AT_HEAD = ("gin-gonic/gin", "reduxjs/redux", "pallets/flask", "psf/requests", "sympy/sympy")


def repositories(tasks: Path, mirror: Path) -> list[tuple[str, str]]:
    """(git dir, commit) of every code-search repository at its task commit, then the others at HEAD."""
    pairs: dict[str, str] = {}
    for line in tasks.read_text(encoding="utf-8").splitlines():
        if line.strip():
            task = json.loads(line)
            pairs.setdefault(task["repo"], task["commit"])
    out = [(str(mirror / repo.replace("/", "+") / "repo"), commit) for repo, commit in pairs.items()]
    out += [(str(mirror / repo.replace("/", "+") / "repo"), "HEAD") for repo in AT_HEAD]
    return [(git, commit) for git, commit in out if Path(git).is_dir()]


def dump(pairs: list[tuple[str, str]], python: bool) -> dict[str, list[str]]:
    """{git dir:path -> [chunker, digest of the chunks]} with the ragit on ``sys.path``."""
    from ragit.ingest.code import chunk_code, language_for
    from ragit.ingest.skips import content_skip
    from ragit.ingest.text import decode_blob

    out: dict[str, list[str]] = {}
    for git, commit in pairs:
        listing = subprocess.run(["git", "-C", git, "ls-tree", "-r", commit], capture_output=True, text=True,
                                 check=True).stdout
        for row in listing.splitlines():
            meta, path = row.split("\t", 1)
            _, kind, blob = meta.split()
            language = language_for(path)
            if kind != "blob" or language is None or (language == "python" and not python):
                continue
            data = subprocess.run(["git", "-C", git, "cat-file", "blob", blob], capture_output=True, check=True).stdout
            text, skip = decode_blob(data)
            if skip or content_skip(text):
                continue
            chunker, chunks = chunk_code(path, text, text, "1")
            shape = [[c.title, c.start_line, c.end_line, c.text] for c in chunks]
            out[f"{git}:{path}"] = [chunker, hashlib.sha1(json.dumps(shape).encode()).hexdigest()]
    return out


def run_with(src: str, pairs: list[tuple[str, str]], python: bool) -> dict[str, list[str]]:
    with tempfile.TemporaryDirectory() as tmp:
        pairs_file, out_file = Path(tmp) / "pairs.json", Path(tmp) / "out.json"
        pairs_file.write_text(json.dumps(pairs), encoding="utf-8")
        cmd = [sys.executable, __file__, "--dump", str(pairs_file), str(out_file)] + (["--python"] if python else [])
        subprocess.run(cmd, check=True, env=dict(os.environ, PYTHONPATH=src))
        return json.loads(out_file.read_text(encoding="utf-8"))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--old", help="the src directory of the ragit before the change")
    parser.add_argument("--new", help="the src directory of the ragit after it")
    parser.add_argument("--python", action="store_true", help="chunk Python files too")
    parser.add_argument("--json", default="", help="write the table here")
    parser.add_argument("--dump", nargs=2, metavar=("PAIRS", "OUT"), help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.dump:
        pairs = [tuple(p) for p in json.loads(Path(args.dump[0]).read_text(encoding="utf-8"))]
        Path(args.dump[1]).write_text(json.dumps(dump(pairs, args.python)), encoding="utf-8")
        return
    if not (args.old and args.new):
        parser.error("--old and --new are required")
    pairs = repositories(TASKS, MIRROR)
    old, new = run_with(args.old, pairs, args.python), run_with(args.new, pairs, args.python)
    rows: dict[str, dict] = defaultdict(lambda: {"files": 0, "differ": 0, "sameName": 0, "names": set()})
    for key, (chunker, digest) in old.items():
        row = rows[chunker]
        row["files"] += 1
        after = new.get(key, ["", ""])
        row["names"].add(after[0])
        if after[1] != digest:
            row["differ"] += 1
            row["sameName"] += after[0] == chunker  # different chunks under the same ids
    table = []
    print(f"{'chunker (old)':22} {'files':>6} {'differ':>6}  new name(s)")
    for chunker in sorted(rows):
        row = rows[chunker]
        names = sorted(row["names"])
        flag = f"  NEEDS REVISION ({row['sameName']} files)" if row["sameName"] else ""
        print(f"{chunker:22} {row['files']:6} {row['differ']:6}  {', '.join(names)}{flag}")
        table.append({"chunker": chunker, "files": row["files"], "differ": row["differ"], "new": names,
                      "differUnderSameName": row["sameName"]})
    if args.json:
        Path(args.json).write_text(json.dumps({"repositories": pairs, "languages": table}, indent=1) + "\n",
                                   encoding="utf-8")


if __name__ == "__main__":
    main()
