"""Where a warm ``Repo.query`` spends its time, stage by stage (issue 15: warm p50 ≤ 1 ms at ≤ 10k chunks).

cProfile inflates Python-heavy code (the re-rank's loops) far more than numpy calls, so its split
misleads on small stores. This wraps the query's stages (selection, masking, scoring, pool, re-rank,
co-change, output) with a thread-CPU timer instead (one clock read each side: well under a
microsecond a stage), answers the first question (warm-up), then every question once (its first
look: what a question computes that a second asking finds cached), then ``--rounds`` more times
(steady), and prints each stage's inclusive p50 and mean per query for both (stages nest: ``rank_hits`` holds
``_reranked``, which holds ``rerank_pool``):

    python bench/query_stages.py REPO [--questions FILE] [--rounds N] [--json out.json]

Without ``--questions`` the questions are bench/warm_query.py's. The repository must be indexed
by the version measured (``Repo.ingest(all=True)``; bench/warm_query.py does it).
"""

from __future__ import annotations

import argparse
import functools
import json
import statistics
import sys
import time
from collections import defaultdict
from pathlib import Path

# (module, attribute, label): where each stage is looked up when the query calls it
STAGES = (
    ("ragit.retrieve.query", "retrieve", "retrieve"),
    ("ragit.retrieve.query", "select_snapshot", "select_snapshot"),
    ("ragit.retrieve.query", "checked_store", "checked_store"),
    ("ragit.security.masking", "mask_text", "mask_text"),
    ("ragit.retrieve.query", "score_snapshot", "score_snapshot"),
    ("ragit.retrieve.search", "vector_scores", "vector_scores"),
    ("ragit.retrieve.search", "question_cosines", "question_cosines"),
    ("ragit.retrieve.search", "_cosines32", "the einsum (_cosines32)"),
    ("ragit.retrieve.search", "_question_vectors", "question_vectors (embed)"),
    ("ragit.retrieve.search", "keyword_scorer", "keyword_scorer"),
    ("ragit.retrieve.vector_bound", "bounded_scores", "bounded_scores (warm, ≥ 20k rows)"),
    ("ragit.retrieve.vector_bound", "Sketch.upper", "Sketch.upper (row bounds)"),
    ("ragit.retrieve.vector_bound", "upper_vector", "upper_vector (bounds with the file blend)"),
    ("ragit.retrieve.search", "_scored_rows", "_scored_rows"),
    ("ragit.retrieve.query", "rank_hits", "rank_hits"),
    ("ragit.retrieve.keyword_bound", "pool_raw", "pool_raw"),
    ("ragit.retrieve.rerank", "pool_indices", "pool_indices"),
    ("ragit.retrieve.search", "_reranked", "_reranked"),
    ("ragit.retrieve.search", "_pool_order", "_pool_order"),
    ("ragit.retrieve.rowpaths", "RowPaths.of", "pool paths (RowPaths.of)"),
    ("ragit.retrieve.search", "_PoolRows.full", "whole rows (_PoolRows.full)"),
    ("ragit.retrieve.rerank", "rerank_pool", "rerank_pool"),
    ("ragit.retrieve.rerank", "_definitions", "rerank definitions"),
    ("ragit.retrieve.cochange_boost", "cochange_raises", "cochange_raises"),
    ("ragit.retrieve.docsite", "pool_site_raises", "pool_site_raises (docs-site stage)"),
    ("ragit.retrieve.precedent", "file_evidence", "file_evidence (precedent)"),
    ("ragit.retrieve.precedent", "precedent_raises", "precedent_raises"),
    ("ragit.retrieve.rerank", "stand_in", "stand_in test"),
    ("ragit.retrieve.rerank", "main_block", "main_block test"),
    ("ragit.retrieve.query", "remask_hits", "remask_hits"),
    ("ragit.retrieve.query", "label_hits", "label_hits"),
)


def instrument(spent: dict[str, int]) -> None:
    """Wrap every stage so that its thread-CPU nanoseconds add up in ``spent[label]``."""
    import importlib

    for module_name, attr, label in STAGES:
        module = importlib.import_module(module_name)
        owner_name, _, attr = attr.rpartition(".")  # ("Class.method": the class's attribute)
        owner = getattr(module, owner_name) if owner_name else module
        inner = getattr(owner, attr)

        @functools.wraps(inner)
        def timed(*args, _inner=inner, _label=label, **kwargs):
            started = time.thread_time_ns()
            try:
                return _inner(*args, **kwargs)
            finally:
                spent[_label] += time.thread_time_ns() - started

        setattr(owner, attr, timed)
        if not owner_name:  # and every module that imported the function by name (``from .x import f``)
            for other in list(sys.modules.values()):
                if getattr(other, "__name__", "").startswith("ragit.") and other.__dict__.get(attr) is inner:
                    setattr(other, attr, timed)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("repo", type=Path)
    ap.add_argument("--questions", type=Path, default=None, help="one question a line")
    ap.add_argument("--rounds", type=int, default=10)
    ap.add_argument("--top-k", type=int, default=10)
    ap.add_argument("--json", type=Path, default=None)
    args = ap.parse_args()

    if args.questions is not None:
        questions = [q.strip() for q in args.questions.read_text(encoding="utf-8").splitlines() if q.strip()]
    else:
        sys.path.insert(0, str(Path(__file__).parent))
        from warm_query import QUESTIONS as questions

    from ragit.api import Repo

    spent: dict[str, int] = defaultdict(int)
    instrument(spent)
    repo = Repo.open(args.repo)
    repo.query(questions[0], top_k=args.top_k)  # warm-up: the process, the snapshot, the store

    def one_pass(per: dict[str, list[int]]) -> None:
        for q in questions:
            spent.clear()
            started = time.thread_time_ns()
            repo.query(q, top_k=args.top_k)
            per["Repo.query"].append(time.thread_time_ns() - started)
            for _, _, label in STAGES:
                per[label].append(spent.get(label, 0))

    first: dict[str, list[int]] = defaultdict(list)
    one_pass(first)  # each question's first look
    per: dict[str, list[int]] = defaultdict(list)
    for _ in range(args.rounds):
        one_pass(per)

    def table(found: dict[str, list[int]]) -> dict:
        return {label: {"p50_us": round(statistics.median(v) / 1000, 1), "mean_us": round(statistics.mean(v) / 1000, 1)}
                for label, v in found.items()}

    firsts, rows = table(first), table(per)
    print(f"| stage (thread CPU µs) | first look p50 | first mean | steady p50 ({len(per['Repo.query'])} queries)"
          " | steady mean |\n|---|---|---|---|---|")
    for label, r in rows.items():
        f = firsts[label]
        print(f"| {label} | {f['p50_us']:.1f} | {f['mean_us']:.1f} | {r['p50_us']:.1f} | {r['mean_us']:.1f} |")
    if args.json:
        args.json.write_text(json.dumps({"repo": str(args.repo), "questions": len(questions), "rounds": args.rounds,
                                         "first": firsts, "stages": rows}, indent=2) + "\n", encoding="utf-8")

if __name__ == "__main__":
    main()
