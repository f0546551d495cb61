"""ragit and semble, paired on this machine (issue 15: "compare in one run, as ratios where a peer exists").

Issue 15 holds ragit's first index of the code-search benchmark's speed set to semble's
*published* mean (0.23 s) and its warm queries to semble's "about 1 ms", figures taken on
another machine. semble is on PyPI, so this script measures it here, repository by repository,
next to ragit, and reports the ratios:

1. a virtual environment with ``semble==0.7.0`` (``--semble-python`` to reuse one);
2. a stand-in for semble's model: its own, potion-code-16M, is on the Hugging Face hub, which
   this machine cannot reach. The stand-in is a model2vec model of the same kind (a WordPiece
   tokenizer, one float32 row of 256 numbers per token, mean-pooled and normalised) and the same
   vocabulary size: ragit's bundled ``code-static-256`` (29,525 tokens) plus the most frequent
   lower-cased words of the measured trees themselves as whole-word tokens, up to ``--vocab``
   (default 63,500, potion-code-16M's: bert-base-uncased plus ≈ 43k mined code tokens). A code
   vocabulary makes fewer tokens of a text, and one mined from the very files measured makes the
   fewest, so the stand-in errs on semble's side. The new tokens' rows are random: the cost is
   semble's, no quality figure is taken from it;
3. for each (repository, commit, root) of the task file (``bench/index_speed.py``'s speed set),
   the root's files at the commit are first written to a directory (``git archive`` from the
   mirror; semble reads a directory, ragit reads git objects); then, repository by repository,
   taking turns (who goes first alternating), ``--runs`` times:
   - semble: a fresh process loads the model, embeds one text, indexes the directory once to
     warm the grammars and the page cache (discarded), then times ``SembleIndex.from_path``
     (wall, and CPU of the process and any children; semble's default content, code; its disk
     cache points at an empty directory), and, in the last run, asks the benchmark's questions
     of that repository once, then ``--rounds`` more times with ``index.search(q)``: the p50 of
     each question's thread CPU;
   - ragit: ``index_speed.py``'s in-process child on the same commit (imports, embedder and
     a dry run warm; then ``Repo.ingest(all=True, at=commit)`` timed; warm ``Repo.query`` p50 the
     same way). ragit indexes docs and code, writes its SQLite store, manifest and co-change
     history; semble builds its index in memory.
4. a table per repository and the means, and ``bench/semble_peer.json`` (``--out``).

The warm-up pass gives semble its parsers and the page cache; any other per-process cache it
has is warm too, which only flatters semble. Compare the ratios, not the absolute figures: on
this shared VM both move with its load.

    python bench/semble_peer.py [--only gin,flask] [--runs 3] [--rounds 5] [--semble-python PY]
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
PROJECT = HERE.parent
SEMBLE = "semble==0.7.0"
MODEL = PROJECT / "src" / "ragit" / "embed" / "models" / "code-static-256"

sys.path.insert(0, str(HERE))
import index_speed as speed  # (the speed set, the mirror layout, ragit's in-process child)
import ingest_query as iq  # (machine facts, ragit's revision)

# Run by semble's interpreter: the stand-in model, once per run: ragit's code model's tokenizer and
# rows, its vocabulary grown to ``size`` with the most frequent words of the trees (random rows).
MAKE_MODEL = """
import collections, json, os, re, sys
import numpy as np
from safetensors.numpy import load_file, save_file
source, out, size, trees = sys.argv[1], sys.argv[2], int(sys.argv[3]), sys.argv[4:]
rows = load_file(source + "/embeddings.safetensors")["embeddings"].astype(np.float32)
tokenizer = json.load(open(source + "/tokenizer.json", encoding="utf-8"))
vocab = tokenizer["model"]["vocab"]
words = collections.Counter()
for tree in trees:
    for folder, _, files in os.walk(tree):
        for name in files:
            try:
                with open(os.path.join(folder, name), encoding="utf-8") as fh:
                    words.update(w.lower() for w in re.findall(r"[A-Za-z0-9_]+", fh.read()))
            except (OSError, UnicodeDecodeError):
                continue
limit = tokenizer["model"].get("max_input_chars_per_word", 100)
new = [w for w, _ in words.most_common() if w not in vocab and len(w) <= limit][:max(0, size - len(vocab))]
for word in new:
    vocab[word] = len(vocab)
rng = np.random.default_rng(0)
rows = np.vstack([rows, rng.standard_normal((len(new), rows.shape[1])).astype(np.float32) * 0.05])
save_file({"embeddings": rows}, out + "/model.safetensors")
json.dump(tokenizer, open(out + "/tokenizer.json", "w", encoding="utf-8"))
json.dump({"model_type": "model2vec", "architectures": ["StaticModel"], "hidden_dim": int(rows.shape[1]),
           "normalize": True}, open(out + "/config.json", "w"))
print(len(vocab))
"""

# Run by semble's interpreter: one timed index (after a discarded one) and, if asked, warm queries.
SEMBLE_CHILD = """
import json, os, resource, sys, time
model_dir, index_dir, questions, rounds = sys.argv[1], sys.argv[2], json.loads(sys.argv[3]), int(sys.argv[4])
from semble import SembleIndex
from semble.index.dense import load_model
model, _ = load_model(model_dir)
model.encode(["def load(self): return None"])
SembleIndex.from_path(index_dir, model_path=model_dir)  # grammars and page cache warm (discarded)
def _children():
    r = resource.getrusage(resource.RUSAGE_CHILDREN)
    return r.ru_utime + r.ru_stime
c, k, t = time.process_time(), _children(), time.perf_counter()
index = SembleIndex.from_path(index_dir, model_path=model_dir)
wall, cpu = time.perf_counter() - t, time.process_time() - c + _children() - k
for q in questions:
    index.search(q, top_k=10)
times = []
for _ in range(rounds):
    for q in questions:
        c = time.thread_time()
        index.search(q, top_k=10)
        times.append((time.thread_time() - c) * 1000)
print(json.dumps({"wall_s": wall, "cpu_s": cpu, "chunks": len(index.chunks),
                  "files": len({chunk.file_path for chunk in index.chunks}), "query_cpu_ms": times}))
"""


def log(msg: str) -> None:
    print(f"[semble_peer] {msg}", file=sys.stderr, flush=True)


def semble_python(work: Path, given: str | None) -> str:
    """An interpreter with semble installed: ``given``, or a new virtual environment in ``work``."""
    if given:
        return given
    venv = work / "semble-venv"
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
    python = str(venv / "bin" / "python")
    subprocess.run([python, "-m", "pip", "install", "-q", SEMBLE], check=True)
    return python


def export_tree(mirror: Path, commit: str, root: str, into: Path) -> Path:
    """The root's files at ``commit``, written under ``into``; the directory semble indexes."""
    into.mkdir(parents=True)
    archive = subprocess.run(["git", "--git-dir", str(mirror), "archive", "--format=tar", commit,
                              *([] if root == "." else [root])], capture_output=True, check=True)
    subprocess.run(["tar", "-x", "-C", str(into)], input=archive.stdout, check=True)
    return into if root == "." else into / root


def semble_run(python: str, env: dict[str, str], model: Path, tree: Path, questions: list[str],
               rounds: int) -> dict[str, Any]:
    out = subprocess.run([python, "-c", SEMBLE_CHILD, str(model), str(tree), json.dumps(questions), str(rounds)],
                         env=env, capture_output=True, text=True, check=True)
    return json.loads(out.stdout.strip().splitlines()[-1])


def ragit_run(repo: Path, commit: str, env: dict[str, str], questions: list[str], rounds: int) -> dict[str, Any]:
    out = subprocess.run([sys.executable, "-c", speed.API_CHILD, str(repo), commit, json.dumps(questions), str(rounds)],
                         cwd=repo, env=env, capture_output=True, text=True, check=True)
    child = json.loads(out.stdout.strip().splitlines()[-1])
    return {**child["ingest"], "query_cpu_ms": child["query_cpu_ms"]}


def p50(values: list[float]) -> float | None:
    return statistics.median(values) if values else None


def measure(entry: dict[str, Any], tree: Path, work: Path, mirrors: Path, python: str, model: Path, runs: int,
            rounds: int, ragit_env: dict[str, str], semble_env: dict[str, str]) -> dict[str, Any]:
    repo = speed.prepare(work, mirrors, entry)
    failed = speed.checkout(repo, entry["commit"])
    questions = [] if failed else entry["questions"]
    ragit_runs, semble_runs = [], []
    for k in range(runs):  # taking turns, who goes first alternating; the last run also times the warm queries
        asked = questions if k == runs - 1 else []
        iq.clear_index(repo)
        for who in (("ragit", "semble") if k % 2 == 0 else ("semble", "ragit")):
            if who == "ragit":
                ragit_runs.append(ragit_run(repo, entry["commit"], ragit_env, asked, rounds))
            else:
                semble_runs.append(semble_run(python, semble_env, model, tree, asked, rounds))
    shutil.rmtree(repo, ignore_errors=True)
    row: dict[str, Any] = {"semble_files": semble_runs[-1]["files"], "semble_chunks": semble_runs[-1]["chunks"]}
    for who, done in (("ragit", ragit_runs), ("semble", semble_runs)):
        row[f"{who}_runs"] = [{k: v for k, v in r.items() if k != "query_cpu_ms"} for r in done]
        row[f"{who}_wall_s"] = statistics.median(r["wall_s"] for r in done)
        row[f"{who}_cpu_s"] = statistics.median(r["cpu_s"] for r in done)
        row[f"{who}_query_p50_ms"] = p50(done[-1]["query_cpu_ms"])
    if failed:
        row["warm_query_skipped"] = failed
    return row


def ratio(a: float | None, b: float | None) -> float | None:
    return a / b if a is not None and b else None


def table(rows: list[dict[str, Any]]) -> str:
    head = ("| repo | semble chunks | index wall s: ragit / semble (ratio) | index CPU s: ragit / semble (ratio) |"
            " warm query CPU p50 ms: ragit / semble (ratio) |")
    lines = [head, "|---|---|---|---|---|"]

    def cell(a: float | None, b: float | None, fmt: str) -> str:
        if a is None or b is None:
            return "skipped"
        return f"{a:{fmt}} / {b:{fmt}} ({a / b:.2f}×)"

    ok = [r for r in rows if "error" not in r]
    for r in rows:
        if "error" in r:
            lines.append(f"| {r['repo']} | error: {r['error'][:90]} | | | |")
            continue
        lines.append(f"| {r['repo']} | {r['semble_chunks']} | {cell(r['ragit_wall_s'], r['semble_wall_s'], '.3f')} |"
                     f" {cell(r['ragit_cpu_s'], r['semble_cpu_s'], '.3f')} |"
                     f" {cell(r['ragit_query_p50_ms'], r['semble_query_p50_ms'], '.2f')} |")
    if ok:
        s = summary(rows)
        lines.append(f"| **mean** ({len(ok)}) | | {cell(s['ragit_wall_s'], s['semble_wall_s'], '.3f')} |"
                     f" {cell(s['ragit_cpu_s'], s['semble_cpu_s'], '.3f')} |"
                     f" {cell(s['ragit_query_p50_ms_median'], s['semble_query_p50_ms_median'], '.2f')} (medians) |")
    return "\n".join(lines)


def summary(rows: list[dict[str, Any]]) -> dict[str, Any]:
    ok = [r for r in rows if "error" not in r]
    if not ok:
        return {}
    out: dict[str, Any] = {"repositories": len(ok)}
    for who in ("ragit", "semble"):
        out[f"{who}_wall_s"] = statistics.mean(r[f"{who}_wall_s"] for r in ok)
        out[f"{who}_cpu_s"] = statistics.mean(r[f"{who}_cpu_s"] for r in ok)
        queried = [r[f"{who}_query_p50_ms"] for r in ok if r[f"{who}_query_p50_ms"] is not None]
        out[f"{who}_query_p50_ms_median"] = p50(queried)
        out[f"{who}_query_p50_ms_max"] = max(queried) if queried else None
    out["wall_ratio"] = ratio(out["ragit_wall_s"], out["semble_wall_s"])
    out["cpu_ratio"] = ratio(out["ragit_cpu_s"], out["semble_cpu_s"])
    out["query_ratio"] = ratio(out["ragit_query_p50_ms_median"], out["semble_query_p50_ms_median"])
    # the repositories where ragit's warm p50 is above semble's on the same questions
    out["query_slower_than_semble"] = [r["repo"] for r in ok if r["ragit_query_p50_ms"] is not None
                                       and r["semble_query_p50_ms"] is not None
                                       and r["ragit_query_p50_ms"] > r["semble_query_p50_ms"]]
    return out


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--tasks", type=Path, default=speed.DEFAULT_TASKS, help="task file whose (repo, commit, root) are the set")
    p.add_argument("--mirrors", type=Path, default=speed.DEFAULT_MIRRORS, help="directory of <owner>+<name>/repo mirrors")
    p.add_argument("--runs", type=int, default=3, help="timed indexes per repository and tool (median; default 3)")
    p.add_argument("--rounds", type=int, default=5, help="timed rounds of the warm queries (default 5)")
    p.add_argument("--only", default="", help="comma-separated repository names (e.g. gin,flask) to measure")
    p.add_argument("--semble-python", help="an interpreter with semble installed (default: a new venv)")
    p.add_argument("--vocab", type=int, default=63_500, help="the stand-in model's vocabulary size (default 63,500)")
    p.add_argument("--src", type=Path, help="measure the ragit of this source tree (its `src` directory)")
    p.add_argument("--out", type=Path, default=HERE / "semble_peer.json", help="JSON results")
    args = p.parse_args(argv)

    entries = speed.select(speed.speed_set(args.tasks), args.only)
    started, t_all, machine = datetime.now(UTC), time.perf_counter(), iq.machine_info()
    work = Path(tempfile.mkdtemp(prefix="ragit-semble-peer-"))
    rows: list[dict[str, Any]] = []
    try:
        python = semble_python(work, args.semble_python)
        version = subprocess.run([python, "-c", "import importlib.metadata as m; print(m.version('semble'))"],
                                 capture_output=True, text=True, check=True).stdout.strip()
        trees: dict[int, Path] = {}
        for k, entry in enumerate(entries):
            try:
                mirror = speed.mirror_of(args.mirrors, entry["repo"])
                trees[k] = export_tree(mirror, entry["commit"], entry["root"], work / "trees" / str(k))
            except (OSError, subprocess.CalledProcessError) as exc:
                log(f"{entry['repo']}: no tree ({exc})")
        model = work / "model"
        model.mkdir()
        vocab = int(subprocess.run([python, "-c", MAKE_MODEL, str(MODEL), str(model), str(args.vocab),
                                    *map(str, trees.values())], capture_output=True, text=True, check=True).stdout)
        ragit_env = speed.child_env(args.src, work / "pycache")
        semble_env = {**speed.child_env(None, work / "pycache-semble"), "SEMBLE_CACHE_LOCATION": str(work / "semble-cache"),
                      "HF_HUB_OFFLINE": "1"}
        semble_env.pop("PYTHONPATH", None)
        for k, entry in enumerate(entries):
            log(f"{entry['repo']} @ {entry['commit'][:12]} root {entry['root']}")
            row: dict[str, Any] = {key: v for key, v in entry.items() if key != "questions"}
            try:
                if k not in trees:
                    raise RuntimeError("the mirror could not write the tree (git archive)")
                row["load_average_before"] = list(os.getloadavg())
                row.update(measure(entry, trees[k], work, args.mirrors, python, model, args.runs, args.rounds,
                                   ragit_env, semble_env))
            except Exception as exc:  # noqa: BLE001 - one broken repository must not hide the others
                detail = exc.stderr[-300:] if isinstance(exc, subprocess.CalledProcessError) and exc.stderr else ""
                row["error"] = f"{type(exc).__name__}: {exc} {detail!s}".strip()
            rows.append(row)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    print(table(rows))
    speed.write_result(args.out, "semble_peer", started, t_all, args.src, machine,
                       semble={"version": version,
                               "model": f"stand-in: ragit's code-static-256 as a model2vec model (float32), "
                                        f"its vocabulary grown to {vocab:,} tokens with the trees' words"},
                       options={"tasks": str(args.tasks), "runs": args.runs, "rounds": args.rounds,
                                "only": args.only or None},
                       summary=summary(rows), repositories=rows)
    log(f"wrote {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
