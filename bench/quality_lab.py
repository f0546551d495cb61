"""Retrieval-quality lab: try score normalisations and fusions offline on real history tasks.

`ragit eval run` measures the shipped pipeline; this script caches, per task, the raw inputs of
the hybrid formula (cosine and raw BM25 per snapshot chunk, and the chunk's file) from the
evaluation store, then scores many variants of "what vector and keyword mean" in numpy within
seconds. It is how the defaults in docs/evaluation.md were chosen; it is not part of ragit.

    python bench/quality_lab.py /work/shared/bench/tasks/hist_flask.jsonl \
        --repo /work/.mirror/pallets+flask/repo --cwd /tmp/lab-flask

The first run indexes the task commits into the evaluation store of --cwd (as `ragit eval run`
does) and writes <cwd>/lab-<set>.pkl; later runs reuse both. Options replay the ablations of
docs/evaluation.md: --fts (FTS layouts), --file-blend, --passage-words, --term-repeats, --file-bm25.
"""

from __future__ import annotations

import argparse
import json
import pickle
import re
import sqlite3
import sys
from pathlib import Path

import numpy as np


def collect(tasks_file: Path, repos: list[Path], cwd: Path) -> list[dict]:
    from ragit.config import load_config
    from ragit.embed import load_embedder
    from ragit.evaluation.run import eval_config, index_commits, locate, open_repository
    from ragit.evaluation.tasks import load_tasks
    from ragit.ingest.manifest import load_manifest
    from ragit.retrieve.readiness import open_checked_store
    from ragit.retrieve.search import keyword_raw, load_matrix, vector_scores
    from ragit.security.masking import mask_text

    config = load_config(cwd)
    embedder = load_embedder(config)
    tasks = load_tasks(tasks_file, str(tasks_file))
    gits = [open_repository(r, str(r)) for r in repos]
    where = locate(tasks, gits)
    tasks = [t for t in tasks if t.commit in where]
    ec = eval_config(config, [t.commit for t in tasks], embedder.id)
    index_commits(cwd, ec, [(t.commit, where[t.commit]) for t in tasks], embedder, None)
    out = []
    for n, task in enumerate(tasks, 1):
        loaded = load_manifest(cwd, ec, task.commit)
        store = open_checked_store(cwd, ec, loaded, embedder.id)
        try:
            snap = load_matrix(store, task.commit, embedder.id)
            q = mask_text(task.query).text
            vector = vector_scores(snap, embedder, q)
            raw = keyword_raw(store, snap, q)[0]
            rows = store.fetch_rows(task.commit, [int(r) for r in snap.rowids])
        finally:
            store.close()
        files = [rows[int(r)].path for r in snap.rowids]
        # cosine of the question with each file's mean chunk vector, per row
        qv = embedder.embed([q])[0]
        index: dict[str, list[int]] = {}
        for i, f in enumerate(files):
            index.setdefault(f, []).append(i)
        file_cos = np.zeros(len(files), dtype=np.float32)
        for idx in index.values():
            mean = snap.matrix[idx].astype(np.float64).sum(axis=0)
            norm = np.linalg.norm(mean)
            file_cos[idx] = float(mean @ qv / norm) if norm else 0.0
        out.append({"id": task.id, "query": q, "gold": list(task.gold), "rowids": snap.rowids.copy(),
                    "files": files, "vector": vector.astype(np.float32), "raw": raw.astype(np.float32),
                    "file_cos": file_cos, "store": str(store.path), "matrix": np.array(snap.matrix),
                    "file_index": snap.files.copy(), "file_norms": snap.file_norms.copy()})
        if n % 25 == 0 or n == len(tasks):
            print(f"[lab] {n}/{len(tasks)}", file=sys.stderr)
    return out


FTS_VARIANTS = {
    "unicode61 (shipped v1)": ("unicode61 remove_diacritics 2", False, (1.0, 2.0, 2.0)),
    "porter": ("porter unicode61 remove_diacritics 2", False, (1.0, 2.0, 2.0)),
    "symbols": ("unicode61 remove_diacritics 2", True, (1.0, 2.0, 2.0, 1.0)),
    "porter + symbols": ("porter unicode61 remove_diacritics 2", True, (1.0, 2.0, 2.0, 1.0)),
    "porter + symbols, title 3 path 3": ("porter unicode61 remove_diacritics 2", True, (1.0, 3.0, 3.0, 1.0)),
    "porter + symbols, symbols 2": ("porter unicode61 remove_diacritics 2", True, (1.0, 2.0, 2.0, 2.0)),
    "porter + symbols, path 4": ("porter unicode61 remove_diacritics 2", True, (1.0, 2.0, 4.0, 1.0)),
    "symbols + file names": ("unicode61 remove_diacritics 2", "names", (1.0, 2.0, 2.0, 1.0)),
}

_FILE_NAME = re.compile(r"(?<![\w.])([A-Za-z0-9_][\w-]*\.[A-Za-z][A-Za-z0-9]{0,5})\b")


def file_name_term(name: str) -> str:
    """``sessions.py`` → ``sessionspy``: a file name as one FTS term."""
    return re.sub(r"[^a-z0-9]", "", name.lower())


def fts_raw(data: list[dict], variant: str, workdir: Path) -> None:
    """Recompute every task's raw BM25 with an experimental FTS layout built from the eval store."""
    import sqlite3

    from ragit.embed.tokenize import tokenize
    from ragit.lexical import symbol_terms, symbols_field
    from ragit.store.sqlite import fts_expression

    tokenizer, symbols, weights = FTS_VARIANTS[variant]
    db = workdir / ("fts-" + "".join(c if c.isalnum() else "_" for c in variant) + ".db")
    if not db.exists():
        src = sqlite3.connect(data[0]["store"])
        rows = src.execute("SELECT r.rowid, r.path, c.title, c.text FROM fts_rows r JOIN chunks c"
                           " ON c.chunk_id = r.chunk_id").fetchall()
        src.close()
        conn = sqlite3.connect(db)
        cols = "text, title, path" + (", symbols" if symbols else "")
        conn.execute(f"CREATE VIRTUAL TABLE f USING fts5({cols}, content='', tokenize='{tokenizer}')")
        conn.executemany(
            f"INSERT INTO f(rowid, {cols}) VALUES (?, ?, ?, ?{', ?' if symbols else ''})",
            [(r, text, title, path) + ((symbols_field(title + chr(10) + text + chr(10) + path)
                                        + (" " + file_name_term(path.rsplit("/", 1)[-1]) if symbols == "names" else ""),)
                                       if symbols else ())
             for r, path, title, text in rows])
        conn.commit()
        conn.close()
    conn = sqlite3.connect(db)
    w = ", ".join(str(x) for x in weights)
    for t in data:
        names = [file_name_term(n) for n in _FILE_NAME.findall(t["query"])] if symbols == "names" else []
        terms = list(dict.fromkeys(tokenize(t["query"]) + (symbol_terms(t["query"]) if symbols else []) + names))
        raw = np.zeros(len(t["rowids"]))
        if terms:
            res = conn.execute(f"SELECT rowid, -bm25(f, {w}) FROM f WHERE f MATCH ?", (fts_expression(terms),)).fetchall()
            if res:
                ids = np.array([r[0] for r in res], dtype=np.int64)
                sc = np.array([r[1] for r in res])
                pos = np.minimum(np.searchsorted(t["rowids"], ids), len(t["rowids"]) - 1)
                inside = t["rowids"][pos] == ids
                raw[pos[inside]] = sc[inside]
        t["raw"] = raw.astype(np.float32)
    conn.close()


def use_passages(data: list[dict], words: int) -> None:
    """Recompute the cosines with the question split into passages (ragit's question_cosines)."""
    from ragit.config import defaults
    from ragit.embed import load_embedder
    from ragit.retrieve.search import question_cosines

    embedder = load_embedder(defaults())
    for t in data:
        cos = question_cosines(t["matrix"], embedder, t["query"], words)
        sums = np.bincount(t["file_index"], weights=cos, minlength=len(t["file_norms"]))
        fc = np.divide(sums, t["file_norms"], out=np.zeros_like(sums), where=t["file_norms"] > 0)
        t["vector"], t["file_cos"] = cos.astype(np.float32), fc[t["file_index"]].astype(np.float32)


def use_repeats(data: list[dict], repeats: int) -> None:
    """Recompute raw BM25 in the evaluation store with each question term kept up to ``repeats`` times."""
    from ragit.retrieve.search import query_terms
    from ragit.store.sqlite import fts_expression

    conn = sqlite3.connect(data[0]["store"])
    for t in data:
        res = conn.execute("SELECT rowid, -bm25(chunks_fts, 1.0, 2.0, 2.0, 1.0) FROM chunks_fts WHERE chunks_fts MATCH ?",
                           (fts_expression(query_terms(t["query"], repeats)),)).fetchall()
        t["raw"] = _scatter(t["rowids"], res)
    conn.close()


def use_file_bm25(data: list[dict], workdir: Path, beta: float) -> None:
    """Blend a file-level BM25 (each snapshot file's chunks as one FTS document) into the raw keyword
    score: raw ← (1 − β)·raw/max + β·file/max (so keyword mode sees it too)."""
    from ragit.retrieve.search import query_terms
    from ragit.store.sqlite import fts_expression

    db = workdir / "fts-files.db"
    fresh = not db.exists()
    conn = sqlite3.connect(db)
    if fresh:
        conn.execute("CREATE VIRTUAL TABLE f USING fts5(text, title, path, symbols, content='',"
                     " tokenize='unicode61 remove_diacritics 2')")
        src = sqlite3.connect(data[0]["store"])
        content = {r[0]: r[1:] for r in src.execute(
            "SELECT r.rowid, c.title, c.text FROM fts_rows r JOIN chunks c ON c.chunk_id = r.chunk_id")}
        src.close()
    from ragit.lexical import symbols_field

    keys: dict[tuple, int] = {}
    for t in data:
        by: dict[str, list[int]] = {}
        for r, f in zip(t["rowids"], t["files"]):
            by.setdefault(f, []).append(int(r))
        t["file_key"] = {}
        for f, rows in by.items():
            key = tuple(sorted(rows))
            if key not in keys:
                keys[key] = len(keys) + 1
                if fresh:
                    title = "\n".join(content[r][0] for r in key)
                    text = "\n".join(content[r][1] for r in key)
                    conn.execute("INSERT INTO f(rowid, text, title, path, symbols) VALUES (?, ?, ?, ?, ?)",
                                 (keys[key], text, title, f, symbols_field(title + "\n" + text + "\n" + f)))
            t["file_key"][f] = keys[key]
    conn.commit()
    for t in data:
        found = dict(conn.execute("SELECT rowid, -bm25(f, 1.0, 2.0, 2.0, 1.0) FROM f WHERE f MATCH ?",
                                  (fts_expression(query_terms(t["query"])),)).fetchall())
        per_file = np.array([found.get(t["file_key"][f], 0.0) for f in t["files"]])
        raw = t["raw"].astype(np.float64)
        top, ftop = raw.max(initial=0.0), per_file.max(initial=0.0)
        t["raw"] = ((1 - beta) * (raw / top if top > 0 else raw) + beta * (per_file / ftop if ftop > 0 else per_file))
    conn.close()


def _scatter(rowids: np.ndarray, results: list) -> np.ndarray:
    raw = np.zeros(len(rowids))
    if results:
        ids = np.array([r[0] for r in results], dtype=np.int64)
        sc = np.array([r[1] for r in results])
        pos = np.minimum(np.searchsorted(rowids, ids), len(rowids) - 1)
        inside = rowids[pos] == ids
        raw[pos[inside]] = sc[inside]
    return raw


def file_metrics(scores: np.ndarray, files: list[str], gold: list[str]) -> tuple[float, float, float]:
    """R@5, R@10, MRR of the file ranking by best chunk (ties broken by path)."""
    order = sorted(range(len(files)), key=lambda i: (-scores[i], files[i]))
    ranked: list[str] = []
    seen = set()
    for i in order:
        if files[i] not in seen:
            seen.add(files[i])
            ranked.append(files[i])
            if len(ranked) >= 100:
                break
    g = set(gold)
    r5 = len(g & set(ranked[:5])) / len(g)
    r10 = len(g & set(ranked[:10])) / len(g)
    mrr = next((1 / (i + 1) for i, f in enumerate(ranked) if f in g), 0.0)
    return r5, r10, mrr


def variants(alpha: float = 0.7):
    """name -> function(vector, raw, files) -> final score per row."""

    def kmax(raw):
        m = raw.max() if len(raw) else 0
        return raw / m if m > 0 else np.zeros_like(raw)

    def hybrid(v, k):
        return alpha * v + (1 - alpha) * k

    def vminmax(v):
        lo, hi = v.min(), v.max()
        return (v - lo) / (hi - lo) if hi > lo else np.zeros_like(v)

    def vgated(v, raw, top=50):
        # cosine only counts relative to the best lexical candidates' pool
        out = np.zeros_like(v)
        pool = np.argsort(-raw)[:top]
        pool = pool[raw[pool] > 0]
        if len(pool):
            out[pool] = v[pool]
        return out

    def vunion(v, raw, top=50, vtop=10):
        # cosine counts for the lexical top-`top` and for the vector top-`vtop`
        out = np.zeros_like(v)
        pool = np.argsort(-raw)[:top]
        pool = pool[raw[pool] > 0]
        keep = np.union1d(pool, np.argsort(-v)[:vtop])
        out[keep] = v[keep]
        return out

    def vrel(v, raw):
        # cosine rescaled to the spread of the keyword candidates: max cosine ↦ 1, median ↦ 0
        med = np.median(v)
        hi = v.max()
        return np.clip((v - med) / (hi - med), 0, 1) if hi > med else np.zeros_like(v)

    def file_agg(score, files, beta=0.3):
        # boost each chunk by the mean of its file's other chunk scores
        by: dict[str, list[int]] = {}
        for i, f in enumerate(files):
            by.setdefault(f, []).append(i)
        out = score.copy()
        for idx in by.values():
            if len(idx) > 1:
                s = score[idx]
                out[idx] = s + beta * (s.sum() - s) / (len(idx) - 1)
        return out

    return {
        "keyword (alpha 0)": lambda v, r, f: kmax(r),
        "vector (alpha 1)": lambda v, r, f: v,
        "seed formula: vector + bm25/max": lambda v, r, f: hybrid(v, kmax(r)),
        "minmax cos": lambda v, r, f: hybrid(vminmax(v), kmax(r)),
        "relative cos (median..max)": lambda v, r, f: hybrid(vrel(v, r), kmax(r)),
        "cos gated to bm25 top50": lambda v, r, f: hybrid(vgated(v, r), kmax(r)),
        "relative cos, gated top50": lambda v, r, f: hybrid(vgated(vrel(v, r), r), kmax(r)),
        "seed + file agg": lambda v, r, f: file_agg(hybrid(v, kmax(r)), f),
        "relative cos + file agg": lambda v, r, f: file_agg(hybrid(vrel(v, r), kmax(r)), f),
        "keyword + file agg": lambda v, r, f: file_agg(kmax(r), f),
        "seed, keyword squared": lambda v, r, f: hybrid(v, kmax(r) ** 2),
        "union bm25 top50 + cos top10": lambda v, r, f: hybrid(vunion(v, r), kmax(r)),
        "union bm25 top50 + cos top20": lambda v, r, f: hybrid(vunion(v, r, 50, 20), kmax(r)),
        "union bm25 top100 + cos top10": lambda v, r, f: hybrid(vunion(v, r, 100, 10), kmax(r)),
        "union 50+10 + file agg": lambda v, r, f: file_agg(hybrid(vunion(v, r), kmax(r)), f),
        "relative cos, union 50+10": lambda v, r, f: hybrid(vunion(vrel(v, r), r), kmax(r)),
        "gated top50 + file agg": lambda v, r, f: file_agg(hybrid(vgated(v, r), kmax(r)), f),
        "gated top100 + file agg": lambda v, r, f: file_agg(hybrid(vgated(v, r, 100), kmax(r)), f),
        "gated top20 + file agg": lambda v, r, f: file_agg(hybrid(vgated(v, r, 20), kmax(r)), f),
        "keyword squared + file agg": lambda v, r, f: file_agg(hybrid(v, kmax(r) ** 2), f),
        "seed + file agg 0.5": lambda v, r, f: file_agg(hybrid(v, kmax(r)), f, 0.5),
        "seed + file agg 0.15": lambda v, r, f: file_agg(hybrid(v, kmax(r)), f, 0.15),
    }


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("tasks", type=Path)
    ap.add_argument("--repo", type=Path, action="append", required=True)
    ap.add_argument("--cwd", type=Path, required=True)
    ap.add_argument("--alpha", type=float, default=0.7)
    ap.add_argument("--out", type=Path)
    ap.add_argument("--fts", choices=list(FTS_VARIANTS), help="rescore keywords with an experimental FTS layout")
    ap.add_argument("--only", nargs="*", help="fusion variants to print (default: all)")
    ap.add_argument("--file-blend", type=float, default=0.3,
                    help="weight of the file cosine in the vector score (ragit's default 0.3; 0 = raw cosine)")
    ap.add_argument("--passage-words", type=int, default=0, help="embed questions as passages of N words")
    ap.add_argument("--term-repeats", type=int, default=1, help="keep each question term up to N times")
    ap.add_argument("--file-bm25", type=float, default=0.0, help="blend a file-level BM25 into keyword, weight β")
    args = ap.parse_args()
    args.cwd.mkdir(parents=True, exist_ok=True)
    cache = args.cwd / f"lab-{args.tasks.stem}.pkl"
    if cache.exists():
        data = pickle.loads(cache.read_bytes())
    else:
        data = collect(args.tasks, args.repo, args.cwd)
        cache.write_bytes(pickle.dumps(data))
    if args.fts:
        fts_raw(data, args.fts, args.cwd)
    if args.passage_words:
        use_passages(data, args.passage_words)
    if args.term_repeats > 1:
        use_repeats(data, args.term_repeats)
    if args.file_bm25:
        use_file_bm25(data, args.cwd, args.file_bm25)
    for t in data:
        t["vector"] = (1 - args.file_blend) * t["vector"].astype(np.float64) + args.file_blend * t["file_cos"]
    rows = []
    print(f"| variant ({args.tasks.stem}, {len(data)} tasks, fts: {args.fts or 'store'}) | R@5 | R@10 | MRR |")
    print("|---|---|---|---|")
    for name, fn in variants(args.alpha).items():
        if args.only and name not in args.only:
            continue
        m = np.array([file_metrics(fn(t["vector"].astype(np.float64), t["raw"].astype(np.float64), t["files"]),
                                   t["files"], t["gold"]) for t in data])
        r5, r10, mrr = m.mean(axis=0)
        rows.append({"variant": name, "R@5": r5, "R@10": r10, "MRR": mrr})
        print(f"| {name} | {r5:.3f} | {r10:.3f} | {mrr:.3f} |")
    if args.out:
        args.out.write_text(json.dumps(rows, indent=2) + "\n")


if __name__ == "__main__":
    main()
