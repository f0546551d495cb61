#!/usr/bin/env python3
"""Vector-only code search on the multi-language development set (codesearch_dev.jsonl).

For every repository of the task file, the code files under the task's ``root`` are read at the
task's ``commit`` straight from git objects (``git ls-tree -r`` + ``git cat-file --batch``, no
checkout; blobs missing from the mirror are skipped), chunked with ragit's own chunker
(``ragit.ingest.code.chunk_code``), embedded as ragit embeds a chunk (``title + "\\n" + text``)
and ranked by cosine with the question. Nothing but the vectors ranks: no BM25, no file
aggregation, no code-aware re-ranking.

Metric (bench/README.md, the published benchmark's definition): NDCG@10 over the ranked chunks.
A chunk covers a gold entry when its path matches (and, for a span gold ``{path, startLine,
endLine}``, its lines overlap the span); each gold entry counts once, at the first chunk that
covers it; a rank counts once (gain 1, discount 1/log2(rank + 1)); ideal = min(10, |gold|) hits
at ranks 1... Mean per repository, then mean over repositories; a category's score is the mean
over repositories of that repository's mean on the category; a language's score the mean of its
repositories. Recall@10 (fraction of gold entries covered in the top 10) is printed beside it.

Models (``--model LABEL=SPEC``, repeatable; default: ``minilm-static`` and ``code-static``):

* ``minilm-static`` / ``code-static``: ragit's providers, loaded through ``ragit.embed``.
* ``dir:PATH[,pre=code|none]``: any directory holding ``tokenizer.json`` + ``embeddings.safetensors``
  (a candidate model), loaded with :class:`ragit.embed.static.StaticEmbedder`, with or without
  one of ragit's code pre-processings (:data:`ragit.embed.codetext.PREPROCESSORS`: ``code`` =
  identifiers split and camelCase words kept, ``split`` = split only).

Chunk embeddings are cached under ``--cache`` (default ``/tmp/vector_codesearch``) per model
(its files' sha256 and pre-processing) and per repository's chunk texts, so a re-run after a
chunker change re-embeds only what changed.

    .venv/bin/python bench/vector_codesearch.py                       # both providers
    .venv/bin/python bench/vector_codesearch.py --model base=minilm-static \\
        --model split=dir:src/ragit/embed/models/minilm-l6-static-256,pre=code --json ''
"""

from __future__ import annotations

import argparse
import hashlib
import json
import math
import subprocess
import sys
import time
from collections import defaultdict
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "src"))

from ragit.ingest.code import chunk_code  # noqa: E402

TASKS = Path("/work/shared/bench/tasks/codesearch_dev.jsonl")
MIRRORS = Path("/work/.mirror")
MAX_BYTES = 1 << 20
K = 10

# Code files: the languages of the benchmark and their usual companions (headers, scripts).
CODE_EXTENSIONS = {
    ".py", ".pyi", ".js", ".jsx", ".mjs", ".cjs", ".ts", ".tsx", ".mts", ".cts", ".go", ".rs",
    ".java", ".kt", ".kts", ".scala", ".sc", ".swift", ".c", ".h", ".cc", ".cpp", ".cxx", ".hpp",
    ".hh", ".hxx", ".ipp", ".inl", ".cs", ".rb", ".rake", ".php", ".ex", ".exs", ".hs", ".lhs",
    ".lua", ".zig", ".sh", ".bash", ".zsh", ".fish", ".m", ".mm", ".erl", ".clj", ".dart",
}
SKIP_EXTENSIONS = {".md", ".rst", ".txt", ".json", ".yaml", ".yml", ".lock"}


# ----------------------------------------------------------------------------- corpus


def git_files(mirror: Path, commit: str, root: str) -> list[tuple[str, str]]:
    """(path, text) of the code files under ``root`` at ``commit``; missing blobs skipped."""
    cmd = ["git", "--git-dir", str(mirror), "ls-tree", "-r", "-l", "-z", commit]
    if root not in (".", ""):
        cmd += ["--", root.rstrip("/") + "/"]
    listing = subprocess.run(cmd, check=True, capture_output=True).stdout.decode("utf-8", "replace")
    wanted: list[tuple[str, str]] = []
    for entry in listing.split("\0"):
        if not entry:
            continue
        meta, path = entry.split("\t", 1)
        mode, kind, oid, size = meta.split()
        if kind != "blob" or mode == "120000" or size == "-" or int(size) > MAX_BYTES:
            continue
        name = path.rsplit("/", 1)[-1]
        ext = name[name.rfind("."):].lower() if "." in name else ""
        if ext in SKIP_EXTENSIONS or ext not in CODE_EXTENSIONS:
            continue
        wanted.append((oid, path))
    if not wanted:
        return []
    proc = subprocess.run(["git", "--git-dir", str(mirror), "cat-file", "--batch"],
                          input="".join(f"{oid}\n" for oid, _ in wanted).encode(),
                          check=True, capture_output=True)
    data, pos, out = proc.stdout, 0, []
    for oid, path in wanted:
        eol = data.index(b"\n", pos)
        header = data[pos:eol].split()
        pos = eol + 1
        if len(header) < 3 or header[1] == b"missing":
            continue
        size = int(header[2])
        blob = data[pos:pos + size]
        pos += size + 1
        if b"\0" in blob:
            continue
        try:
            text = blob.decode("utf-8")
        except UnicodeDecodeError:
            continue
        out.append((path, text.replace("\r\n", "\n").replace("\r", "\n")))
    return out


def load_corpus(tasks_path: Path = TASKS) -> list[dict]:
    """One entry per repository: its tasks and its chunks (path, start, end, embed text)."""
    tasks = [json.loads(line) for line in tasks_path.read_text().splitlines() if line.strip()]
    groups: dict[tuple, list[dict]] = defaultdict(list)
    for task in tasks:
        groups[(task["repo"], task["commit"], task["root"])].append(task)
    corpus = []
    for (repo, commit, root), repo_tasks in sorted(groups.items()):
        mirror = MIRRORS / repo.replace("/", "+") / "repo"
        chunks, chunkers = [], defaultdict(int)
        for path, text in git_files(mirror, commit, root):
            chunker, pieces = chunk_code(path, text, text)
            chunkers[chunker] += 1
            for piece in pieces:
                chunks.append((path, piece.start_line, piece.end_line, f"{piece.title}\n{piece.text}"))
        corpus.append({"repo": repo, "commit": commit, "root": root, "language": repo_tasks[0]["language"],
                       "tasks": repo_tasks, "chunks": chunks, "chunkers": dict(chunkers)})
    return corpus


# ----------------------------------------------------------------------------- metric


def _gold(entry) -> tuple[str, int | None, int | None]:
    if isinstance(entry, str):
        return entry, None, None
    return entry["path"], entry.get("startLine"), entry.get("endLine")


def _covers(path: str, start: int, end: int, gold: tuple[str, int | None, int | None]) -> bool:
    gpath, gstart, gend = gold
    if not (path == gpath or path.endswith("/" + gpath)):
        return False
    return gstart is None or gend is None or not (end < gstart or start > gend)


def score_task(ranked: list[tuple[str, int, int]], gold_entries: list) -> tuple[float, float]:
    """(NDCG@10, Recall@10) of one task's top chunks."""
    golds = [_gold(g) for g in gold_entries]
    ranks = set()
    found = 0
    for gold in golds:
        for rank, (path, start, end) in enumerate(ranked[:K], 1):
            if _covers(path, start, end, gold):
                ranks.add(rank)
                found += 1
                break
    dcg = sum(1.0 / math.log2(rank + 1) for rank in ranks)
    ideal = sum(1.0 / math.log2(rank + 1) for rank in range(1, min(K, len(golds)) + 1))
    return (dcg / ideal if ideal else 0.0), (found / len(golds) if golds else 0.0)


# ----------------------------------------------------------------------------- models


class Model:
    """A label, a cache key and an ``embed(texts) -> unit float32 rows`` function."""

    def __init__(self, label: str, spec: str):
        self.label, self.spec = label, spec
        if spec in ("minilm-static", "code-static"):
            from ragit.config import defaults
            from ragit.embed import load_embedder

            config = defaults()
            config.data["embedding"]["provider"] = spec
            self.embedder = load_embedder(config)
            directory = {"minilm-static": "minilm-l6-static-256", "code-static": "code-static-256"}[spec]
            model_dir = ROOT / "src" / "ragit" / "embed" / "models" / directory
            self.key = (f"{self.embedder.id}:{_pre_digest()}:"
                        f"{_files_digest([model_dir / 'tokenizer.json', model_dir / 'embeddings.safetensors'])}")
        elif spec.startswith("dir:"):
            from ragit.embed.static import StaticEmbedder

            parts = spec[4:].split(",")
            directory, options = Path(parts[0]), dict(p.split("=", 1) for p in parts[1:])
            pre = options.get("pre", "none")
            self.embedder = StaticEmbedder(f"bench:{directory}", directory / "tokenizer.json",
                                           directory / "embeddings.safetensors",
                                           preprocess=None if pre == "none" else pre)
            self.key = (f"{_files_digest([directory / 'tokenizer.json', directory / 'embeddings.safetensors'])}:"
                        f"{pre}:{_pre_digest()}")
        else:
            raise SystemExit(f"unknown model spec {spec!r}")

    def embed(self, texts: list[str]) -> np.ndarray:
        return np.asarray(self.embedder.embed(texts), dtype=np.float32)


def _pre_digest() -> str:
    """The pre-processing's source: part of every cache key, so editing it re-embeds."""
    return hashlib.sha256((ROOT / "src" / "ragit" / "embed" / "codetext.py").read_bytes()).hexdigest()[:12]


def _files_digest(paths) -> str:
    digest = hashlib.sha256()
    for path in paths:
        digest.update(Path(path).read_bytes())
    return digest.hexdigest()[:16]


def embed_cached(model: Model, texts: list[str], cache: Path | None, tag: str) -> np.ndarray:
    if cache is None:
        return model.embed(texts)
    digest = hashlib.sha256("\0".join(texts).encode("utf-8", "surrogatepass")).hexdigest()[:16]
    path = cache / hashlib.sha256(model.key.encode()).hexdigest()[:16] / f"{tag}-{digest}.npy"
    if path.exists():
        return np.load(path)
    vectors = model.embed(texts)
    path.parent.mkdir(parents=True, exist_ok=True)
    np.save(path, vectors)
    return vectors


# ----------------------------------------------------------------------------- evaluation


def evaluate(model: Model, corpus: list[dict], cache: Path | None) -> dict:
    per_repo, per_task = {}, []
    for repo in corpus:
        texts = [c[3] for c in repo["chunks"]]
        chunk_vecs = embed_cached(model, texts, cache, repo["repo"].replace("/", "+"))
        query_vecs = model.embed([t["query"] for t in repo["tasks"]])
        scores = query_vecs @ chunk_vecs.T
        cats = defaultdict(list)
        ndcgs, recalls = [], []
        for task, row in zip(repo["tasks"], scores):
            top = np.argsort(-row, kind="stable")[:K]
            ranked = [repo["chunks"][i][:3] for i in top]
            ndcg, recall = score_task(ranked, task["gold"])
            ndcgs.append(ndcg)
            recalls.append(recall)
            cats[task["category"]].append(ndcg)
            per_task.append({"id": task["id"], "ndcg10": round(ndcg, 4)})
        per_repo[repo["repo"]] = {
            "language": repo["language"], "ndcg10": float(np.mean(ndcgs)), "recall10": float(np.mean(recalls)),
            "categories": {c: float(np.mean(v)) for c, v in cats.items()}, "tasks": len(ndcgs),
            "chunks": len(texts),
        }
    overall = float(np.mean([r["ndcg10"] for r in per_repo.values()]))
    recall = float(np.mean([r["recall10"] for r in per_repo.values()]))
    categories = defaultdict(list)
    languages = defaultdict(list)
    for r in per_repo.values():
        for c, v in r["categories"].items():
            categories[c].append(v)
        languages[r["language"]].append(r["ndcg10"])
    return {
        "spec": model.spec, "key": model.key, "ndcg10": overall, "recall10": recall,
        "categories": {c: float(np.mean(v)) for c, v in sorted(categories.items())},
        "languages": {lang: float(np.mean(v)) for lang, v in sorted(languages.items())},
        "repos": per_repo, "tasks": per_task,
    }


def throughput(model: Model, corpus: list[dict], batch: int = 1024, repeats: int = 5) -> dict:
    """Embedding speed over every chunk text in ingest-sized batches, for a freshly loaded model
    in this process: best of ``repeats`` passes after one warm-up batch, by wall clock and by
    this process's CPU time (the latter is less disturbed by other work on a shared machine)."""
    texts = [c[3] for repo in corpus for c in repo["chunks"]]
    model.embed(texts[:batch])
    wall = cpu = float("inf")
    for _ in range(repeats):
        t0, c0 = time.perf_counter(), time.process_time()
        for start in range(0, len(texts), batch):
            model.embed(texts[start:start + batch])
        wall = min(wall, time.perf_counter() - t0)
        cpu = min(cpu, time.process_time() - c0)
    chars = sum(map(len, texts))
    return {"texts": len(texts), "chars": chars, "seconds": wall, "cpu_seconds": cpu,
            "texts_per_s": len(texts) / wall, "texts_per_cpu_s": len(texts) / cpu, "mb_per_s": chars / wall / 1e6}


def history_check(model: Model, tasks_path: Path, cache: dict[str, np.ndarray]) -> dict:
    """File-level vector-only check on a history set (bench/README.md): index the code files of
    the whole repository at each task's commit, rank files by their best chunk, and report
    Recall@5/@10 and MRR over the gold files. Chunk vectors are shared across commits by text."""
    tasks = [json.loads(line) for line in tasks_path.read_text().splitlines() if line.strip()]
    r5, r10, mrr = [], [], []
    for task in tasks:
        mirror = MIRRORS / task["repo"].replace("/", "+") / "repo"
        chunks = []
        for path, text in git_files(mirror, task["commit"], "."):
            for piece in chunk_code(path, text, text)[1]:
                chunks.append((path, f"{piece.title}\n{piece.text}"))
        missing = sorted({t for _, t in chunks if t not in cache})
        for start in range(0, len(missing), 1024):
            for text, vec in zip(missing[start:start + 1024], model.embed(missing[start:start + 1024])):
                cache[text] = vec
        if not chunks:
            continue
        matrix = np.stack([cache[t] for _, t in chunks])
        scores = matrix @ model.embed([task["query"]])[0]
        best: dict[str, float] = {}
        for (path, _), score in zip(chunks, scores):
            if score > best.get(path, -2.0):
                best[path] = float(score)
        ranked = sorted(best, key=lambda p: (-best[p], p))
        gold = set(task["gold"])
        r5.append(len(gold & set(ranked[:5])) / len(gold))
        r10.append(len(gold & set(ranked[:10])) / len(gold))
        first = next((i for i, p in enumerate(ranked, 1) if p in gold), None)
        mrr.append(1.0 / first if first else 0.0)
    return {"tasks": len(r5), "recall5": float(np.mean(r5)), "recall10": float(np.mean(r10)), "mrr": float(np.mean(mrr))}


def print_table(results: dict[str, dict]) -> None:
    labels = list(results)
    first = results[labels[0]]
    rows = [("overall NDCG@10", "ndcg10"), ("overall Recall@10", "recall10")]
    print("| " + " | ".join(["", *labels]) + " |")
    print("|" + "---|" * (len(labels) + 1))
    for name, key in rows:
        print(f"| {name} | " + " | ".join(f"{results[l][key]:.3f}" for l in labels) + " |")
    for cat in first["categories"]:
        print(f"| {cat} | " + " | ".join(f"{results[l]['categories'][cat]:.3f}" for l in labels) + " |")
    for lang in first["languages"]:
        print(f"| {lang} | " + " | ".join(f"{results[l]['languages'][lang]:.3f}" for l in labels) + " |")


def chunker_state() -> dict:
    source = (ROOT / "src" / "ragit" / "ingest" / "code.py").read_bytes()
    head = subprocess.run(["git", "-C", str(ROOT), "rev-parse", "HEAD"], capture_output=True, text=True).stdout.strip()
    return {"code_py_sha256": hashlib.sha256(source).hexdigest(), "git_head": head}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--model", action="append", default=[], metavar="LABEL=SPEC")
    parser.add_argument("--tasks", type=Path, default=TASKS)
    parser.add_argument("--cache", default="/tmp/vector_codesearch", help="'' disables the cache")
    parser.add_argument("--throughput", action="store_true",
                        help="also time embedding every chunk text once per model, uncached (texts/s)")
    parser.add_argument("--history", type=Path, default=None,
                        help="also run the file-level check on this history task file (e.g. hist_flask.jsonl)")
    parser.add_argument("--json", default=str(ROOT / "bench" / "vector_codesearch.json"),
                        help="where to write the results ('' = nowhere)")
    args = parser.parse_args(argv)
    specs = [m.split("=", 1) for m in args.model] or [["minilm-static", "minilm-static"],
                                                       ["code-static", "code-static"]]
    cache = Path(args.cache) if args.cache else None
    t0 = time.perf_counter()
    corpus = load_corpus(args.tasks)
    chunkers = defaultdict(int)
    for repo in corpus:
        for name, n in repo["chunkers"].items():
            chunkers[name] += n
    print(f"corpus: {len(corpus)} repositories, {sum(len(r['chunks']) for r in corpus):,} chunks, "
          f"{sum(len(r['tasks']) for r in corpus)} tasks, files per chunker {dict(sorted(chunkers.items()))} "
          f"({time.perf_counter() - t0:.1f} s)", file=sys.stderr)
    results = {}
    for label, spec in specs:
        t1 = time.perf_counter()
        model = Model(label, spec)
        results[label] = evaluate(model, corpus, cache)
        print(f"{label}: NDCG@10 {results[label]['ndcg10']:.4f} ({time.perf_counter() - t1:.1f} s)", file=sys.stderr)
        if args.throughput:
            results[label]["throughput"] = throughput(Model(label, spec), corpus)
        if args.history:
            results[label]["history"] = {args.history.name: history_check(model, args.history, {})}
    print_table(results)
    if args.throughput:
        print()
        print("| model | texts/s (wall) | texts per CPU-second | MB of text/s | seconds for all chunks |")
        print("|---|---|---|---|---|")
        for label, r in results.items():
            t = r["throughput"]
            print(f"| {label} | {t['texts_per_s']:,.0f} | {t['texts_per_cpu_s']:,.0f} | {t['mb_per_s']:.2f} | "
                  f"{t['seconds']:.2f} |")
    if args.history:
        print()
        print(f"| model | {args.history.name} R@5 | R@10 | MRR |")
        print("|---|---|---|---|")
        for label, r in results.items():
            h = r["history"][args.history.name]
            print(f"| {label} | {h['recall5']:.3f} | {h['recall10']:.3f} | {h['mrr']:.3f} |")
    if args.json:
        out = {
            "tasks": str(args.tasks), "chunker": {**chunker_state(), "files_per_chunker": dict(sorted(chunkers.items()))},
            "chunks": sum(len(r["chunks"]) for r in corpus),
            "models": {label: {k: v for k, v in r.items() if k != "tasks"} for label, r in results.items()},
        }
        Path(args.json).write_text(json.dumps(out, indent=1, sort_keys=False) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
