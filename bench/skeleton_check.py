#!/usr/bin/env python3
"""Does the Python skeleton (ragit.ingest.pyskeleton) give the definitions the whole file gives,
and what does it save? Session 37's check, kept for whoever changes the skeleton.

Every ``.py`` blob at HEAD of every mirror (``<mirrors>/<owner>+<name>/repo``) and every ``.py``
file of the running Python's standard library is parsed twice in this process, as the chunker
parses it: the whole file (``ast.parse``, as before session 37) and its skeleton (the whole file
when there is none, or when the skeleton does not parse, as ``code._python_tree`` does). The definitions
(``code._python_statements``: starts, titles, members) must be equal; a file that fails to parse
whole but whose skeleton parses (its only syntax errors lie inside function bodies) is counted
apart, as "newly parsed". CPU seconds of each way are printed in a table and written to ``--out``.

    .venv/bin/python bench/skeleton_check.py [--mirrors /work/.mirror] [--no-stdlib] [--out bench/skeleton_check.json]
"""

from __future__ import annotations

import argparse
import ast
import json
import subprocess
import sys
import sysconfig
import time
import warnings
from datetime import UTC, datetime
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent / "src"))

from ragit.ingest import code  # noqa: E402
from ragit.ingest.pyskeleton import skeleton  # noqa: E402
from ragit.ingest.text import split_lines  # noqa: E402


def _python_blobs(mirror: Path) -> list[tuple[str, str]]:
    """(path, LF text) of every ``.py`` blob at the mirror's HEAD that decodes as UTF-8."""
    listing = subprocess.run(["git", "-C", str(mirror), "ls-tree", "-r", "-z", "HEAD"],
                             capture_output=True, check=True).stdout.decode("utf-8", "replace")
    entries = [(line.split()[2], line.split("\t", 1)[1]) for line in listing.split("\0")
               if line.endswith(".py") and " blob " in line]
    if not entries:
        return []
    raw = subprocess.run(["git", "-C", str(mirror), "cat-file", "--batch"], capture_output=True, check=True,
                         input="".join(f"{oid}\n" for oid, _ in entries).encode("ascii")).stdout
    out, at = [], 0
    for _, path in entries:
        end = raw.index(b"\n", at)
        header = raw[at:end].split()
        if len(header) < 3:  # "<oid> missing": a partial clone
            at = end + 1
            continue
        size = int(header[2])
        data = raw[end + 1:end + 1 + size]
        at = end + 1 + size + 1
        try:
            out.append((path, data.decode("utf-8").replace("\r\n", "\n")))
        except UnicodeDecodeError:
            pass
    return out


def _definitions(source: str, parsed: str) -> list[tuple] | None:
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            tree = ast.parse(parsed)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return None
    found: list = []
    code._python_statements(tree.body, split_lines(source), 0, found, 0)
    return [(d.start, d.title, [(m.start, m.title) for m in d.member_defs()]) for d in found]


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--mirrors", type=Path, default=Path("/work/.mirror"))
    p.add_argument("--no-stdlib", action="store_true", help="leave out the standard library's files")
    p.add_argument("--out", type=Path, default=HERE / "skeleton_check.json")
    args = p.parse_args(argv)

    files: list[tuple[str, str]] = []
    for mirror in sorted(args.mirrors.glob("*/repo")):
        files += [(f"{mirror.parent.name}:{path}", text) for path, text in _python_blobs(mirror)]
    if not args.no_stdlib:
        for path in sorted(Path(sysconfig.get_paths()["stdlib"]).rglob("*.py")):
            try:
                files.append((f"stdlib:{path}", path.read_text(encoding="utf-8").replace("\r\n", "\n")))
            except (OSError, UnicodeDecodeError):
                pass

    t0 = time.process_time()
    whole = [_definitions(text, text) for _, text in files]
    t1 = time.process_time()
    cuts = [skeleton(text) for _, text in files]
    t2 = time.process_time()
    cut = []
    for (_, text), skeletal in zip(files, cuts):
        found = _definitions(text, skeletal) if skeletal is not None and skeletal is not text else None
        cut.append(found if found is not None else _definitions(text, text))
    t3 = time.process_time()

    differ = [name for (name, _), a, b in zip(files, whole, cut) if a is not None and a != b]
    newly = [name for (name, _), a, b in zip(files, whole, cut) if a is None and b is not None]
    result = {
        "benchmark": "skeleton_check", "date": datetime.now(UTC).isoformat(timespec="seconds"),
        "files": len(files), "megabytes": round(sum(len(t) for _, t in files) / 1e6, 1),
        "left_whole": sum(c is None for c in cuts), "whole_parse_failures": sum(a is None for a in whole),
        "differ": differ, "newly_parsed": newly,
        "cpu_s": {"whole_file": round(t1 - t0, 2), "skeleton": round(t2 - t1, 2), "skeleton_parse": round(t3 - t2, 2)},
    }
    print("| files | MB | definitions differ | newly parsed | left whole | whole-file parse CPU s | skeleton CPU s | skeleton parse CPU s |")
    print("|---|---|---|---|---|---|---|---|")
    print(f"| {result['files']} | {result['megabytes']} | {len(differ)} | {len(newly)} | {result['left_whole']} "
          f"| {result['cpu_s']['whole_file']} | {result['cpu_s']['skeleton']} | {result['cpu_s']['skeleton_parse']} |")
    for name in differ[:20]:
        print("differs:", name)
    for name in newly:
        print("newly parsed:", name)
    args.out.write_text(json.dumps(result, indent=2) + "\n", encoding="utf-8")
    return 1 if differ else 0


if __name__ == "__main__":
    sys.exit(main())
