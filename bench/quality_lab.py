"""Retrieval-quality lab: score ranking variants offline on the development task sets.

`ragit eval run` measures the shipped pipeline end to end. This script reads every chunk of every
task's snapshot once from the evaluation stores (bench/lab_data.py) and then scores variants of the
keyword index, the fusion and the code re-rank in numpy within seconds, with ragit's own lexical
analysis (ragit.lexical) and re-rank (ragit.retrieve.rerank). It is how the defaults in
docs/evaluation.md were chosen and how each re-rank rule's ablation is measured; it is not part
of ragit.

    python bench/quality_lab.py codesearch --cwd /tmp/evalroot          # every repository mirror
    python bench/quality_lab.py hist_flask --ablate                        # one row per rule switched off
    python bench/quality_lab.py hist_flask --cochange --cwd /tmp/evalcode  # + the co-change boost, paired CIs
    python bench/quality_lab.py hist_redux --cochange --docsite --cwd /tmp/evalcode  # + the docs-site stage
    python bench/quality_lab.py hist_flask --docsite --cochange --misses docsite     # the tasks still missed
    # a rule no weight switches off (a path convention): score two source trees, then pair them
    PYTHONPATH=old/src python bench/quality_lab.py hist_flask ... --save-per /tmp/old.json
    PYTHONPATH=new/src python bench/quality_lab.py hist_flask ... --paired-with /tmp/old.json

Task sets are named by their file in ../shared/bench/tasks/; repositories are found under
/work/.mirror (any directory of bare clones works: --mirrors). The first run indexes the task
commits into <cwd>/.ragit/cache/eval (as `ragit eval run` does) and writes <cwd>/lab/<set>.pkl.

`--cochange` adds rows with the co-change boost (ragit.retrieve.cochange_boost) over statistics
mined by ragit.gitsnap.cochange from the history reachable from each task's commit (the snapshot's
own past: never the fix commit or anything after it), and prints each row's paired bootstrap 95 %
interval of the per-task difference against `default`. Mined change lists are cached under
--cochange-cache (one directory per repository). `--docsite` adds a row with the docs-site stage
(ragit.retrieve.docsite; after co-change with `--cochange`), compared with the row without it.
"""

from __future__ import annotations

import argparse
import dataclasses
import importlib
import json
import math
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))

from lab_data import LabData, load  # noqa: E402

TASKS_DIR = Path(__file__).resolve().parents[2] / "shared" / "bench" / "tasks"


# ---------------------------------------------------------------- keyword index


class KeywordIndex:
    """Per-field postings of one store's distinct rows, built with ragit.lexical."""

    def __init__(self, store, fields=("text", "title", "path")):
        from ragit.lexical import path_text, term_counts, title_name

        n = len(store.paths)
        self.n = n
        self.postings: dict[str, dict[str, tuple[np.ndarray, np.ndarray]]] = {}
        self.lengths = np.zeros(n, dtype=np.float64)
        for fname in fields:
            acc: dict[str, tuple[list[int], list[int]]] = {}
            for i in range(n):
                if fname == "text":
                    counts = term_counts(store.texts[i])
                elif fname == "title":
                    counts = term_counts(title_name(store.titles[i]))
                else:
                    counts = term_counts(path_text(store.paths[i]))
                for term, c in counts.items():
                    rows, tfs = acc.setdefault(term, ([], []))
                    rows.append(i)
                    tfs.append(c)
                    self.lengths[i] += c
            self.postings[fname] = {t: (np.array(r, dtype=np.int64), np.array(c, dtype=np.float64))
                                    for t, (r, c) in acc.items()}


def bm25(index: KeywordIndex, rows: np.ndarray, terms: list[str], weights: dict[str, float],
         k1: float = 1.2, b: float = 0.75, idf_kind: str = "fts5") -> np.ndarray:
    """BM25 of the snapshot ``rows`` with the snapshot's own statistics (N, df, avgdl)."""
    n = len(rows)
    score = np.zeros(n, dtype=np.float64)
    if not n or not terms:
        return score
    lengths = index.lengths[rows]
    avgdl = float(lengths.sum()) / n if n else 1.0
    norm = k1 * (1 - b + b * lengths / (avgdl or 1.0))
    for term in terms:
        tfw = None
        for fname, w in weights.items():
            hit = index.postings[fname].get(term)
            if hit is None or not w:
                continue
            if tfw is None:
                tfw = np.zeros(index.n, dtype=np.float64)
            tfw[hit[0]] += w * hit[1]
        if tfw is None:
            continue
        tf = tfw[rows]
        df = int(np.count_nonzero(tf))
        if not df:
            continue
        if idf_kind == "fts5":
            idf = math.log((n - df + 0.5) / (df + 0.5))
            idf = idf if idf > 0 else 1e-6
        else:  # lucene
            idf = math.log(1 + (n - df + 0.5) / (df + 0.5))
        score += idf * (tf * (k1 + 1)) / (tf + norm)
    return score


# ---------------------------------------------------------------- scoring one task


@dataclasses.dataclass
class Variant:
    name: str = "default"
    alpha: float = 0.7
    weights: tuple = (("text", 1.0), ("title", 2.0), ("path", 2.0))
    k1: float = 1.2
    b: float = 0.75
    idf: str = "fts5"
    term_repeats: int = 3
    file_blend: float = 0.3
    passage_words: int = 32
    rerank: dict | None = None  # RerankWeights overrides; None = ragit's defaults
    use_rerank: bool = True
    top: int = 100
    cochange: dict | None = None  # CochangeWeights overrides (+ "limit", "max_files"); None = no co-change stage
    docsite: dict | None = None  # DocsiteWeights overrides; None = no docs-site stage
    precedent: dict | None = None  # PrecedentWeights overrides; None = no precedent stage (needs cochange)


class LabRows:
    """The store side of ragit.retrieve.docsite for one lab snapshot: its rows by file name."""

    def __init__(self, paths: list[str], rows: np.ndarray):
        self.paths, self.rows = paths, rows

    def rows_named(self, sha, names) -> dict[int, str]:
        wanted = set(names)
        return {int(r): self.paths[r] for r in self.rows if self.paths[r].rpartition("/")[2] in wanted}


class History:
    """Co-change statistics per (repository, task commit, limit, max_files), mined on first use."""

    def __init__(self, tasks_file: Path, mirrors_root: Path, cache: Path):
        self.commits = {}
        for line in tasks_file.read_text().splitlines():
            if line.strip():
                t = json.loads(line)
                self.commits[t["id"]] = t["commit"]
        self.mirrors_root = mirrors_root
        self.cache = cache
        self.changes: dict[tuple[str, str, int], list] = {}
        self.stats: dict[tuple, object] = {}
        self.seconds = 0.0

    def get(self, task, limit: int, max_files: int):
        from ragit.gitsnap import cochange
        from ragit.gitsnap.cochange import _counted, load_changes, tally
        from ragit.gitsnap.git import Git

        cochange.CACHE_KEEP = 1000  # the lab reads snapshots across a whole history: keep every commit

        commit = self.commits[task.id]
        key = (task.repo, commit, limit, max_files)
        if key not in self.stats:
            started = time.perf_counter()
            ckey = (task.repo, commit, limit)
            git = Git(self.mirrors_root / task.repo.replace("/", "+") / "repo")
            if ckey not in self.changes:
                self.changes[ckey] = load_changes(git, self.cache / task.repo.replace("/", "+"), commit, limit)
            changes = self.changes[ckey]
            shas, counted = _counted(changes, max_files)
            # each counted commit's message terms, as ingest stores them (the precedent stage reads them)
            self.stats[key] = tally(len(changes), counted, self._said(git, task.repo, shas, limit))
            self.seconds += time.perf_counter() - started
        return self.stats[key]

    def _said(self, git, repo: str, shas: list[str], limit: int) -> list[str]:
        """The message terms of ``shas``, through ingest's own cache (``said.json`` beside the
        repository's cached change lists): each commit's message is read once."""
        from ragit.gitsnap import cochange

        root = self.cache / repo.replace("/", "+")
        said, keep = cochange._said_of(git, root, shas, cochange.CACHE_KEEP * limit)
        if keep is not None:
            cochange._write_said(cochange._said_file(root), keep)
        return said


class Lab:
    def __init__(self, data: LabData, embedder, history: History | None = None):
        self.data = data
        self.embedder = embedder
        self.history = history
        self.indexes: dict[str, KeywordIndex] = {}
        self.qvec: dict[tuple[str, int], np.ndarray] = {}
        self._keys: dict[str, list[tuple[str, str]]] = {}

    def _row_keys(self, store: str) -> list[tuple[str, str]]:
        """(path, chunk id) of every row of a store, in row order (the engine's tie order)."""
        cached = self._keys.get(store)
        if cached is None:
            st = self.data.stores[store]
            cached = [None] * len(st.paths)
            for key, row in st.index.items():
                cached[row] = key
            self._keys[store] = cached
        return cached

    def index(self, key: str) -> KeywordIndex:
        if key not in self.indexes:
            self.indexes[key] = KeywordIndex(self.data.stores[key])
        return self.indexes[key]

    def cosines(self, task, words: int, file_blend: float) -> np.ndarray:
        from ragit.retrieve.search import question_passages

        key = (task.query, words)
        if key not in self.qvec:
            from ragit.security.masking import mask_text

            self.qvec[key] = self.embedder.embed(question_passages(mask_text(task.query).text, words))
        q = self.qvec[key]
        m = self.data.matrix(task.store)[task.rows]
        cos = (m @ q.T).max(axis=1).astype(np.float64) if len(q) > 1 else (m @ q[0]).astype(np.float64)
        if not file_blend:
            return cos
        paths = self.data.stores[task.store].paths
        files = np.array([paths[r] for r in task.rows])
        uniq, inv = np.unique(files, return_inverse=True)
        sums = np.zeros((len(uniq), m.shape[1]), dtype=np.float64)
        np.add.at(sums, inv, m.astype(np.float64))
        norms = np.linalg.norm(sums, axis=1)
        fsum = np.bincount(inv, weights=cos, minlength=len(uniq))
        fcos = np.divide(fsum, norms, out=np.zeros_like(fsum), where=norms > 0)
        return (1 - file_blend) * cos + file_blend * fcos[inv]

    def rank(self, task, v: Variant):
        """(ordered snapshot positions, per-row hybrid) for one task under one variant."""
        from ragit.lexical import terms
        from ragit.security.masking import mask_text

        q = mask_text(task.query).text
        qterms = terms(q)
        if v.term_repeats <= 1:
            qterms = list(dict.fromkeys(qterms))
        else:
            from collections import Counter

            qterms = [t for t, n in Counter(qterms).items() for _ in range(min(n, v.term_repeats))]
        raw = bm25(self.index(task.store), task.rows, qterms, dict(v.weights), v.k1, v.b, v.idf)
        cos = self.cosines(task, v.passage_words, v.file_blend) if v.alpha > 0 else np.zeros(len(task.rows))
        best = raw.max() if len(raw) else 0.0
        kw = raw / best if best > 0 else raw
        hybrid = v.alpha * cos + (1 - v.alpha) * kw
        if not v.use_rerank:
            order = np.argsort(-hybrid, kind="stable")[: v.top]
            return order, hybrid
        from ragit.retrieve.rerank import RerankInput, RerankWeights, pool_indices, rerank

        st = self.data.stores[task.store]
        weights = RerankWeights(**(v.rerank or {}))
        keys = self._row_keys(task.store)  # ties cut as the engine cuts them: by (path, chunk id)
        pool = pool_indices(hybrid, kw, cos, weights.pool, v.top,
                            lambda tied: tied[sorted(range(len(tied)), key=lambda j: keys[task.rows[tied[j]]])])
        # the engine hands candidates over in comparator order (fused score, then path, title)
        pool = np.array(sorted(pool, key=lambda i: (-hybrid[i], st.paths[task.rows[i]], st.titles[task.rows[i]])))
        rows = task.rows[pool]
        inp = RerankInput(
            hybrid=hybrid[pool], paths=[st.paths[r] for r in rows], titles=[st.titles[r] for r in rows],
            texts=[st.texts[r] for r in rows],
        )
        # a source tree before session 32 has no __main__ block rule, one before session 34 no
        # stand-in rule (session 33 knew import blocks only)
        engine = importlib.import_module("ragit.retrieve.rerank")
        main_block = getattr(engine, "main_block", None)
        if main_block is not None:  # every candidate's, as the engine reads it for the possible hits
            inp = dataclasses.replace(inp, main_blocks=frozenset(
                j for j, (p, t, x) in enumerate(zip(inp.paths, inp.titles, inp.texts)) if main_block(p, t, x)))
        stand_in, import_block = getattr(engine, "stand_in", None), getattr(engine, "import_block", None)
        if stand_in is not None:
            asked = engine.read_question(q)
            inp = dataclasses.replace(inp, stand_ins=frozenset(
                j for j, (t, x) in enumerate(zip(inp.titles, inp.texts)) if stand_in(t, x, asked)))
        elif import_block is not None:
            inp = dataclasses.replace(inp, import_blocks=frozenset(
                j for j, (t, x) in enumerate(zip(inp.titles, inp.texts)) if import_block(t, x)))
        if v.cochange is None and v.docsite is None:
            result = rerank(q, inp, weights, v.top)
            return pool[np.array(result.order, dtype=np.int64)], hybrid
        result = rerank(q, inp, weights, len(pool))
        if v.cochange is not None:
            from ragit.gitsnap.cochange import DEFAULT_LIMIT, MAX_FILES
            from ragit.retrieve.cochange_boost import CochangeWeights, apply_cochange

            opts = dict(v.cochange)
            stats = self.history.get(task, opts.pop("limit", DEFAULT_LIMIT), opts.pop("max_files", MAX_FILES))
            result = apply_cochange(result, inp.paths, stats, CochangeWeights(**opts))
        if v.docsite is None:
            return pool[np.array(result.order[: v.top], dtype=np.int64)], hybrid
        from ragit.retrieve.docsite import DocsiteWeights, pool_site_raises

        adjusted = [result.scores[i] for i in range(len(pool))]
        added, _, raised = pool_site_raises(q, inp.paths, adjusted, LabRows(st.paths, task.rows), "", task.rows,
                                            hybrid, DocsiteWeights(**v.docsite))
        # ``task.rows`` holds store rows; the added rows are snapshot positions, as ``pool``'s
        positions = np.concatenate([pool, np.array(added, dtype=np.int64)])
        scores = adjusted + [float(hybrid[p]) for p in added]
        for j, value in raised.items():
            scores[j] = value
        # raises only move candidates up: a stable sort keeps every other tie as the stages left it
        order = sorted(list(result.order) + list(range(len(pool), len(scores))), key=scores.__getitem__, reverse=True)
        if v.precedent is not None and v.cochange is not None:
            from ragit.gitsnap.cochange import DEFAULT_LIMIT, MAX_FILES
            from ragit.retrieve.precedent import PrecedentWeights, file_evidence, precedent_raises
            from ragit.retrieve.search import query_terms

            weights_p = PrecedentWeights(**v.precedent)
            evidence = file_evidence(query_terms(q), self.history.get(task, DEFAULT_LIMIT, MAX_FILES), weights_p)
            paths = [st.paths[task.rows[p]] for p in positions]
            unit = float(max(hybrid[p] for p in positions))
            for j, value in precedent_raises(scores, paths, evidence, unit, weights_p).items():
                scores[j] = value
            order = sorted(order, key=scores.__getitem__, reverse=True)
        return positions[np.array(order[: v.top], dtype=np.int64)], hybrid


# ---------------------------------------------------------------- metrics


def ndcg10(hit_paths, hit_lines, targets) -> float:
    dcg = 0.0
    for t in targets:
        for rank, (p, (a, b)) in enumerate(zip(hit_paths[:10], hit_lines[:10]), 1):
            if t.covered_by(p, a, b):
                dcg += 1 / math.log2(rank + 1)
                break
    ideal = sum(1 / math.log2(r + 1) for r in range(1, min(10, len(targets)) + 1))
    return dcg / ideal


def paired_ci(base: list[dict], other: list[dict], key: str, seed: int = 0) -> tuple[float, float, float]:
    """Mean per-task difference ``other − base`` of ``key`` and its paired bootstrap 95 % interval
    (ragit.evaluation.metrics, 1,000 seeded resamples of the tasks)."""
    from ragit.evaluation.metrics import paired_difference, resample_indices

    got = paired_difference([p[key] for p in base], [p[key] for p in other], resample_indices(len(base), seed))
    return got[0], got[1][0], got[1][1]


def evaluate(lab: Lab, v: Variant) -> dict:
    per: list[dict] = []
    for task in lab.data.tasks:
        order, _ = lab.rank(task, v)
        st = lab.data.stores[task.store]
        rows = task.rows[order]
        paths = [st.paths[r] for r in rows]
        lines = [(st.starts[r], st.ends[r]) for r in rows]
        files = list(dict.fromkeys(paths))
        gold = set(task.gold)
        first = next((i for i, f in enumerate(files, 1) if f in gold), None)
        per.append({
            "id": task.id, "query": task.query, "top10": files[:10],
            "gold_ranks": {g: (files.index(g) + 1 if g in files else None) for g in task.gold},
            "repo": task.repo, "category": task.category, "language": task.language,
            "ndcg": ndcg10(paths, lines, task.targets),
            "r1": len(gold & set(files[:1])) / len(gold), "r5": len(gold & set(files[:5])) / len(gold),
            "r10": len(gold & set(files[:10])) / len(gold), "mrr": 1 / first if first else 0.0,
            "distinct10": len(set(paths[:10])),
        })
    return summarize(per)


def _repo_mean(rows: list[dict], key: str) -> float:
    by: dict[str, list[float]] = {}
    for r in rows:
        by.setdefault(r["repo"], []).append(r[key])
    return float(np.mean([np.mean(v) for v in by.values()])) if by else float("nan")


def summarize(per: list[dict]) -> dict:
    out = {"ndcg": _repo_mean(per, "ndcg"), "r1": float(np.mean([p["r1"] for p in per])),
           "r5": float(np.mean([p["r5"] for p in per])), "r10": float(np.mean([p["r10"] for p in per])),
           "mrr": float(np.mean([p["mrr"] for p in per])), "distinct10": float(np.mean([p["distinct10"] for p in per])),
           "per": per}
    for field in ("category", "language"):
        names = sorted({p[field] for p in per if p[field]})
        out[field] = {n: _repo_mean([p for p in per if p[field] == n], "ndcg") for n in names}
    return out


# ---------------------------------------------------------------- command line


def _base(v: Variant, per: dict) -> str:
    """The row a variant is compared with: the same without its last stage (``docsite`` for the
    precedent stage, ``cochange`` for the docs-site stage, when those rows were scored), else
    ``default``."""
    if v.precedent is not None:
        below = "docsite" if v.docsite is not None else "cochange"
        return below if below in per else "default"
    return "cochange" if v.docsite is not None and v.cochange is not None and "cochange" in per else "default"


def print_misses(per: list[dict], name: str) -> None:
    """The tasks whose gold ``name`` leaves outside the top 10: the question's first line, each gold
    file's rank among the first 100 files (- beyond), and the five first files."""
    missed = [p for p in per if p["r10"] < 1]
    print(f"\n{len(missed)} tasks miss gold in the top 10 under {name} "
          f"({sum(1 - p['r10'] for p in missed):.1f} units)")
    for p in missed:
        first = p["query"].strip().split("\n", 1)[0][:90]
        ranks = ", ".join(f"{g} {r if r else '-'}" for g, r in p["gold_ranks"].items())
        print(f"- {p['id']} \"{first}\": {ranks}\n    top: {', '.join(p['top10'][:5])}")


def print_paired(before: dict, after: dict) -> None:
    """Paired CIs of ``after`` − ``before`` (per set → variant → per-task rows, two runs of the same
    tasks), for every variant both hold, per set and pooled over the sets; and how many tasks moved."""
    print("\n## this run − the --paired-with run")
    print("| set | variant | NDCG@10 | R@5 | R@10 | MRR | tasks changed (top 10 / R@10) |")
    print("|---|---|---|---|---|---|---|")
    pooled: dict[str, tuple[list, list]] = {}
    for name, variants in after.items():
        for vname, rows in variants.items():
            base = before.get(name, {}).get(vname)
            if base is None or [r["id"] for r in base] != [r["id"] for r in rows]:
                continue
            pool = pooled.setdefault(vname, ([], []))
            pool[0].extend(base)
            pool[1].extend(rows)
            _paired_row(name, vname, base, rows)
    if len(after) > 1:
        for vname, (base, rows) in pooled.items():
            _paired_row("pooled", vname, base, rows)


def _paired_row(name: str, vname: str, base: list[dict], rows: list[dict]) -> None:
    cis = [paired_ci(base, rows, k) for k in ("ndcg", "r5", "r10", "mrr")]
    moved = sum(a["top10"] != b["top10"] for a, b in zip(base, rows))
    recall = sum(a["r10"] != b["r10"] for a, b in zip(base, rows))
    print(f"| {name} | {vname} | " + " | ".join(f"{d:+.3f} [{lo:+.3f}, {hi:+.3f}]" for d, lo, hi in cis)
          + f" | {moved} / {recall} |")


def task_set(name: str) -> Path:
    return Path(name) if name.endswith(".jsonl") else TASKS_DIR / f"{name}.jsonl"


def mirrors(root: Path) -> list[Path]:
    return sorted(p / "repo" for p in root.iterdir() if (p / "repo").is_dir())


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("sets", nargs="+", help="task sets: codesearch_dev, hist_flask, ... or paths")
    ap.add_argument("--cwd", type=Path, default=Path("/tmp/evalroot"))
    ap.add_argument("--mirrors", type=Path, default=Path("/work/.mirror"))
    ap.add_argument("--ablate", action="store_true", help="also score each re-rank rule switched off")
    ap.add_argument("--json", type=Path, default=None, help="write the results here")
    ap.add_argument("--variants", default=None, help="python file defining VARIANTS = [Variant(...), ...]")
    ap.add_argument("--cochange", action="store_true",
                    help="also score the co-change boost; print paired bootstrap CIs against default")
    ap.add_argument("--docsite", action="store_true",
                    help="also score the docs-site stage (after co-change with --cochange); paired CIs against the"
                         " row without it")
    ap.add_argument("--precedent", action="store_true",
                    help="also score the precedent stage (after co-change, and docs-site with --docsite); paired CIs"
                         " against the row without it")
    ap.add_argument("--misses", default=None, metavar="VARIANT",
                    help="print the tasks whose gold that variant leaves outside the top 10 (gold ranks, top 5)")
    ap.add_argument("--save-per", type=Path, default=None, metavar="FILE",
                    help="write every variant's per-task scores here (for a later --paired-with)")
    ap.add_argument("--paired-with", type=Path, default=None, metavar="FILE",
                    help="a --save-per file of another run (e.g. other source code): print each variant's paired"
                         " 95 %% CIs of this run minus that one, per set and pooled")
    ap.add_argument("--cochange-cache", type=Path, default=Path("/tmp/ragit-lab-cochange"),
                    help="where mined change lists are cached (one directory per repository)")
    args = ap.parse_args()

    from ragit.config import load_config
    from ragit.embed import load_embedder

    embedder = load_embedder(load_config(args.cwd))
    tag = embedder.id.split(":")[0]  # one cache per embedder (the config of --cwd chooses it)
    variants = [Variant("no re-rank", use_rerank=False), Variant("default")]
    if args.ablate:
        from ragit.retrieve.rerank import ABLATIONS

        variants += [Variant(f"without {name}", rerank=dict(off)) for name, off in ABLATIONS.items()]
    if args.cochange:
        variants += [Variant("cochange", cochange={})]
    if args.docsite:
        variants += [Variant("docsite", cochange={} if args.cochange else None, docsite={})]
    if args.precedent:
        variants += [Variant("precedent", cochange={}, docsite={} if args.docsite else None, precedent={})]
    if args.variants:
        scope = {"Variant": Variant}
        exec(Path(args.variants).read_text(), scope)
        variants = scope["VARIANTS"]
    results = {}
    pooled: dict[str, list[dict]] = {}
    per_set: dict[str, dict[str, list[dict]]] = {}
    for name in args.sets:
        path = task_set(name)
        started = time.perf_counter()
        data = load(path, mirrors(args.mirrors), args.cwd, args.cwd / "lab" / f"{path.stem}-{tag}.pkl")
        history = History(path, args.mirrors, args.cochange_cache) if any(v.cochange is not None for v in variants) \
            else None
        lab = Lab(data, embedder, history)
        print(f"\n## {path.stem} ({len(data.tasks)} tasks, loaded in {time.perf_counter() - started:.1f} s)")
        print("| variant | NDCG@10 | R@1 | R@5 | R@10 | MRR | files in top 10 |")
        print("|---|---|---|---|---|---|---|")
        results[path.stem] = {}
        per: dict[str, list[dict]] = per_set.setdefault(path.stem, {})
        for v in variants:
            r = evaluate(lab, v)
            per[v.name] = r["per"]
            pooled.setdefault(v.name, []).extend(r["per"])
            results[path.stem][v.name] = {k: r[k] for k in r if k != "per"}
            print(f"| {v.name} | {r['ndcg']:.3f} | {r['r1']:.3f} | {r['r5']:.3f} | {r['r10']:.3f} | {r['mrr']:.3f}"
                  f" | {r['distinct10']:.1f} |")
        if args.misses in per:
            print_misses(per[args.misses], args.misses)
        if (history is not None or args.docsite) and "default" in per:
            if history is not None:
                print(f"\nco-change statistics: {len(history.stats)} snapshots in {history.seconds:.1f} s")
            print("| variant − its base | NDCG@10 | R@5 | R@10 | MRR |")
            print("|---|---|---|---|---|")
            for v in variants:
                if v.cochange is None and v.docsite is None and v.precedent is None:
                    continue
                cis = {k: paired_ci(per[_base(v, per)], per[v.name], k) for k in ("ndcg", "r5", "r10", "mrr")}
                results[path.stem][v.name]["vs_default"] = cis
                print(f"| {v.name} | " + " | ".join(f"{d:+.3f} [{lo:+.3f}, {hi:+.3f}]" for d, lo, hi in cis.values())
                      + " |")
        if data.tasks and data.tasks[0].category:
            base = results[path.stem]["default" if args.ablate or args.cochange else variants[-1].name]
            print("\n" + "  ".join(f"{k} {v:.3f}" for k, v in base["category"].items()))
            print("  ".join(f"{k} {v:.3f}" for k, v in base["language"].items()))
    if len(args.sets) > 1 and "default" in pooled and any(v.cochange is not None or v.docsite is not None
                                                          for v in variants):
        print(f"\n## pooled over {', '.join(results)} ({len(pooled['default'])} tasks, per-task means)")
        print("| variant − its base | NDCG@10 | R@5 | R@10 | MRR |")
        print("|---|---|---|---|---|")
        for v in variants:
            if v.cochange is not None or v.docsite is not None:
                cis = {k: paired_ci(pooled[_base(v, pooled)], pooled[v.name], k) for k in ("ndcg", "r5", "r10", "mrr")}
                results.setdefault("pooled", {})[v.name] = {"vs_default": cis}
                print(f"| {v.name} | " + " | ".join(f"{d:+.3f} [{lo:+.3f}, {hi:+.3f}]" for d, lo, hi in cis.values())
                      + " |")
    if args.save_per:
        args.save_per.write_text(json.dumps(per_set))
    if args.paired_with:
        print_paired(json.loads(args.paired_with.read_text()), per_set)
    if args.json:
        args.json.write_text(json.dumps(results, indent=1, sort_keys=True))


if __name__ == "__main__":
    main()
