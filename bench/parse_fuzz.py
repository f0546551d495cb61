#!/usr/bin/env python3
"""Chunking never hangs: real files cut and shuffled, each chunked in a forked child with a timeout.

A tree-sitter grammar can loop where no parse budget reaches it (a scanner spinning inside one
parse step: tree-sitter-kotlin 1.1 on a file ending in an annotation), or a grammar without a
budget can recover from errors for minutes (TSX on shuffled lines); either hangs an ingest for
good. Every structured-code file of the evaluation mirrors (their HEAD) is a seed; each try
takes one at random (languages in turn), keeps at most 60 KB, mutates it one of three ways

* ``cut``: the text up to a random character (files that end mid-token, without a newline);
* ``drop``: a run of up to 30 lines removed (unbalanced brackets), then perhaps cut;
* ``shuffle``: up to 60 of its lines in random order;

and chunks it (``chunk_code(path, text, text, "2")``) in a forked child. A child still running
after ``--timeout`` seconds (the parse budget is 2 s per file) is killed and its input saved to
``--save-dir``. Prints tries and hangs per language and writes ``--json``.

    .venv/bin/python bench/parse_fuzz.py --seconds 1500 [--seed 1] [--only kotlin,tsx] \\
        [--src src] [--save-dir /tmp/parse_fuzz] [--json /tmp/parse_fuzz.json]
"""

from __future__ import annotations

import argparse
import json
import os
import random
import subprocess
import sys
import time
import warnings
from collections import Counter
from pathlib import Path

MIRRORS = Path("/work/.mirror")
MAX_BYTES = 60_000


def seeds(mirrors: Path, extensions: dict[str, str], only: set[str]) -> dict[str, list[tuple[Path, str, str]]]:
    """(git dir, blob, path) of every file with a grammar, by language key."""
    by_language: dict[str, list[tuple[Path, str, str]]] = {}
    for git_dir in sorted(mirrors.glob("*/repo")):
        listing = subprocess.run(["git", f"--git-dir={git_dir}", "ls-tree", "-r", "HEAD"],
                                 capture_output=True, text=True).stdout
        for line in listing.splitlines():
            meta, path = line.split("\t", 1)
            _, kind, blob = meta.split()
            key = extensions.get(Path(path).suffix)
            if kind == "blob" and key is not None and (not only or key in only):
                by_language.setdefault(key, []).append((git_dir, blob, path))
    return by_language


def mutate(text: str, rng: random.Random) -> tuple[str, str]:
    """One of the three mutations above: (its name, the text)."""
    roll = rng.random()
    if roll < 0.5:
        return "cut", text[:rng.randrange(len(text) + 1)]
    lines = text.split("\n")
    if roll < 0.8:
        at = rng.randrange(len(lines) + 1)
        text = "\n".join(lines[:at] + lines[at + rng.randrange(1, 30):])
        return "drop", text[:rng.randrange(len(text) + 1)] if rng.random() < 0.5 else text
    rng.shuffle(lines)
    return "shuffle", "\n".join(lines[:rng.randrange(1, 60)])


def chunks_in_time(chunk_code, path: str, text: str, timeout: float) -> bool:
    """Whether a forked child chunks ``text`` within ``timeout`` seconds (it is killed if not)."""
    pid = os.fork()
    if pid == 0:  # pragma: no cover - the child
        try:
            chunk_code(path, text, text, "2")
        finally:
            os._exit(0)
    started = time.monotonic()
    while time.monotonic() - started < timeout:
        done, _ = os.waitpid(pid, os.WNOHANG)
        if done:
            return True
        time.sleep(0.002)
    os.kill(pid, 9)
    os.waitpid(pid, 0)
    return False


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--seconds", type=float, default=600, help="how long to try (default 600)")
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--only", default="", help="comma-separated language keys (default: every grammar)")
    p.add_argument("--src", type=Path, default=Path(__file__).resolve().parent.parent / "src")
    p.add_argument("--mirrors", type=Path, default=MIRRORS)
    p.add_argument("--timeout", type=float, default=10.0, help="seconds a child may take (default 10)")
    p.add_argument("--save-dir", type=Path, default=Path("/tmp/parse_fuzz"))
    p.add_argument("--json", type=Path, default=Path("/tmp/parse_fuzz.json"))
    args = p.parse_args()

    sys.path.insert(0, str(args.src))
    warnings.filterwarnings("ignore")
    from ragit.ingest.code import _parser, chunk_code
    from ragit.ingest.languages import LANGUAGES

    extensions = {ext: key for key, spec in LANGUAGES.items() for ext in spec.extensions}
    by_language = seeds(args.mirrors, extensions, set(filter(None, args.only.split(","))))
    languages = sorted(by_language)
    for key in languages:
        _parser(key)  # loaded once, before the forks
    rng = random.Random(args.seed)
    tries: Counter[str] = Counter()
    hangs: list[dict[str, str | int]] = []
    args.save_dir.mkdir(parents=True, exist_ok=True)
    deadline = time.monotonic() + args.seconds
    while languages and time.monotonic() < deadline:
        key = languages[sum(tries.values()) % len(languages)]
        git_dir, blob, path = rng.choice(by_language[key])
        data = subprocess.run(["git", f"--git-dir={git_dir}", "cat-file", "blob", blob], capture_output=True).stdout
        how, text = mutate(data[:MAX_BYTES].decode("utf-8", "replace"), rng)
        tries[key] += 1
        if not chunks_in_time(chunk_code, path, text, args.timeout):
            saved = args.save_dir / f"{key}-{sum(tries.values())}{Path(path).suffix}"
            saved.write_text(text, encoding="utf-8")
            hangs.append({"language": key, "seed": f"{git_dir.parent.name}:{path}", "mutation": how,
                          "chars": len(text), "saved": str(saved)})
            print(f"HANG {key} {path} ({how}, {len(text)} chars) -> {saved}", flush=True)

    hung = Counter(h["language"] for h in hangs)
    print("\n| language | seed files | tries | hangs |\n|---|---|---|---|")
    for key in sorted(by_language):
        print(f"| {key} | {len(by_language[key])} | {tries[key]} | {hung[key]} |")
    print(f"| all | {sum(map(len, by_language.values()))} | {sum(tries.values())} | {len(hangs)} |")
    args.json.write_text(json.dumps({"benchmark": "parse_fuzz", "seconds": args.seconds, "seed": args.seed,
                                     "timeout_s": args.timeout, "tries": dict(tries), "hangs": hangs},
                                    indent=2) + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
