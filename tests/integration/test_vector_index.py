"""The approximate vector path (ragit.store.vectorindex): recall against exact search, exact
fallback for a missing, corrupt or stale index, exact results below the threshold, and an index
extended, not rebuilt, after a small commit."""

from __future__ import annotations

import json
import random

import numpy as np
import pytest

from conftest import write_placeholder_config
from ragit import Repo
from ragit.embed.placeholder import PlaceholderEmbedder
from ragit.retrieve import search
from ragit.store import vectorindex

WORDS = ("token session store snapshot vector index commit branch cache query rank fusion chunk file "
         "parser schema migrate config watch merge review budget window memory recall artifact packet "
         "mask secret blob heap graph table column filter cursor socket stream buffer thread signal").split()


def _docs(n: int, seed: int = 3) -> dict[str, str]:
    rng = random.Random(seed)
    out = {}
    for i in range(n):
        sections = [f"# Doc {i} {' '.join(rng.sample(WORDS, 3))}\n"]
        for s in range(3):
            sections.append(f"## Part {s} {rng.choice(WORDS)}\n\n{' '.join(rng.choices(WORDS, k=40))}\n")
        out[f"docs/d{i:03d}.md"] = "\n".join(sections)
    return out


def _questions(n: int = 40) -> list[str]:
    rng = random.Random(11)
    return [" ".join(rng.sample(WORDS, rng.choice((2, 3, 5)))) for _ in range(n)]


@pytest.fixture
def big_repo(git_repo, monkeypatch):
    """360 chunks, with the approximate threshold, list size and candidate counts lowered to scale
    (the index path then scores a fraction of the rows)."""
    monkeypatch.setattr(vectorindex, "APPROX_MIN_ROWS", 100)
    # 15 lists, of which a question probes 8 (placeholder vectors have little cluster structure)
    monkeypatch.setattr(vectorindex, "LIST_ROWS", 24)
    monkeypatch.setattr(vectorindex, "PROBE_LISTS", 8)
    monkeypatch.setattr(search, "VECTOR_CANDIDATES", 64)
    monkeypatch.setattr(search, "KEYWORD_CANDIDATES", 64)
    write_placeholder_config(git_repo.root)
    git_repo.commit("corpus", _docs(120))
    repo = Repo.open(git_repo.root)
    repo.ingest(all=True)
    return repo


def _heap(repo: Repo):
    return next((repo.root / ".ragit" / "store").glob("vectors-*.f32"))


def _hits(repo_root, questions, exact: bool, monkeypatch) -> list[list[tuple]]:
    monkeypatch.setattr(vectorindex, "APPROX_MIN_ROWS", 10**12 if exact else 100)
    repo = Repo.open(repo_root)
    return [[(h.path, h.chunk_id, h.score_final, h.score_vector, h.score_keyword) for h in repo.query(q).hits]
            for q in questions]


def _snapshot(repo: Repo):
    from ragit.store import open_store_read

    store = open_store_read(repo.root, repo.config)
    sha = repo.git.run("rev-parse", "HEAD").decode().strip()
    return store, sha


def test_index_is_built_at_ingest_and_used(big_repo):
    heap = _heap(big_repo)
    index_file, meta = vectorindex.index_paths(heap)
    assert index_file.exists() and meta.exists()
    store, sha = _snapshot(big_repo)
    try:
        snap = search.load_matrix(store, sha, PlaceholderEmbedder().id)
        assert snap.index is not None and snap.matrix is None  # the matrix is never gathered
    finally:
        store.close()


def test_approximate_recall_against_exact(big_repo, monkeypatch):
    questions = _questions()
    approx = _hits(big_repo.root, questions, False, monkeypatch)
    exact = _hits(big_repo.root, questions, True, monkeypatch)
    recall = [len({h[:2] for h in a} & {h[:2] for h in e}) / len(e) for a, e in zip(approx, exact) if e]
    assert sum(recall) / len(recall) >= 0.98
    # every hit both paths return has the exact path's vector and keyword scores, bit for bit (the
    # re-rank's boosts are relative to its pool, so a final score may differ where the pools do)
    for a, e in zip(approx, exact):
        scores = {h[:2]: h[3:] for h in e}
        for h in a:
            if h[:2] in scores:
                assert h[3:] == scores[h[:2]]


def test_candidate_scores_equal_exact_scores(big_repo):
    store, sha = _snapshot(big_repo)
    emb = PlaceholderEmbedder()
    try:
        snap = search.load_matrix(store, sha, emb.id)
        exact = search.vector_scores(snap, emb, "token session store", search.FILE_BLEND, search.PASSAGE_WORDS)
        rows, vector, _ = search.approximate_scores(snap, emb, "token session store", search.FILE_BLEND,
                                                 search.PASSAGE_WORDS, None)
        assert len(rows) < len(snap.rowids)
        assert np.array_equal(vector, exact[rows])
    finally:
        store.close()


@pytest.mark.parametrize("damage", ["missing", "corrupt", "stale", "bad_meta"])
def test_damaged_index_falls_back_to_exact(big_repo, monkeypatch, damage):
    questions = _questions(10)
    exact = _hits(big_repo.root, questions, True, monkeypatch)
    heap = _heap(big_repo)
    index_file, meta = vectorindex.index_paths(heap)
    if damage == "missing":
        index_file.unlink()
    elif damage == "corrupt":
        index_file.write_bytes(b"\0garbage" * (index_file.stat().st_size // 8))
    elif damage == "stale":  # the heap's last indexed row no longer matches (a rewritten heap)
        info = json.loads(meta.read_text())
        info["last_row"] = "0" * 40
        meta.write_text(json.dumps(info))
    else:
        meta.write_text("{not json")
    store, sha = _snapshot(big_repo)
    try:
        snap = search.load_matrix(store, sha, PlaceholderEmbedder().id)
        assert snap.index is None and snap.matrix is not None
    finally:
        store.close()
    assert _hits(big_repo.root, questions, False, monkeypatch) == exact


def test_below_threshold_results_are_exact(git_repo, monkeypatch):
    write_placeholder_config(git_repo.root)
    git_repo.commit("corpus", _docs(60))
    repo = Repo.open(git_repo.root)
    repo.ingest(all=True)
    heap = _heap(repo)
    assert not vectorindex.index_paths(heap)[0].exists()  # a small snapshot builds no index
    vectorindex.build(heap, PlaceholderEmbedder().dimensions)  # even with one, it stays exact
    questions = _questions(15)
    monkeypatch.setattr(vectorindex, "APPROX_MIN_ROWS", 10**12)
    exact = [[(h.path, h.chunk_id, h.score_final) for h in Repo.open(git_repo.root).query(q).hits] for q in questions]
    monkeypatch.undo()
    assert vectorindex.APPROX_MIN_ROWS == 200_000
    now = [[(h.path, h.chunk_id, h.score_final) for h in Repo.open(git_repo.root).query(q).hits] for q in questions]
    assert now == exact


def test_small_commit_keeps_the_index_and_scores_the_tail(big_repo, git_repo, monkeypatch):
    heap = _heap(big_repo)
    index_file, meta = vectorindex.index_paths(heap)
    before = json.loads(meta.read_text())
    git_repo.commit("one file", {"docs/new.md": "# Zebra quokka\n\nquokka zebra narwhal ocelot axolotl\n"})
    big_repo.ingest()
    after = json.loads(meta.read_text())
    assert after == before  # the index was not rebuilt or extended for a one-file commit
    hits = Repo.open(git_repo.root).query("quokka zebra narwhal").hits
    assert hits[0].path == "docs/new.md"  # a heap row past the index is still a candidate
    # once the tail outgrows its limit, the next ingest extends the index by the new rows only
    monkeypatch.setattr(vectorindex, "tail_limit", lambda indexed: 0)
    git_repo.commit("another", {"docs/new2.md": "# Yak\n\nyak walrus gecko\n"})
    big_repo.ingest()
    extended = json.loads(meta.read_text())
    rows = heap.stat().st_size // (PlaceholderEmbedder().dimensions * 4)
    assert extended["rows"] == rows > before["rows"]
    assert extended["size"] > before["size"] and extended["mean"] == before["mean"]  # same centre: extended
    assert Repo.open(git_repo.root).query("yak walrus gecko").hits[0].path == "docs/new2.md"


def test_one_question_maps_nothing_a_second_maps_the_heap(big_repo, monkeypatch):
    """A one-shot query reads the approximate path's rows with pread and maps nothing more (its
    memory holds what it reads); the second question of a process switches to the mapped,
    populated heap, with the same answers."""
    monkeypatch.setattr(vectorindex, "APPROX_MIN_ROWS", 100)
    populated = []
    real = vectorindex.populate
    monkeypatch.setattr(vectorindex, "populate", lambda view: populated.append(view) or real(view))
    repo = Repo.open(big_repo.root)
    question = "token session store"
    first = [(h.path, h.chunk_id, h.score_final) for h in repo.query(question).hits]
    (entry,) = repo._cache.entries.values()
    assert entry.index is not None and not entry.mapped and populated == []
    second = [(h.path, h.chunk_id, h.score_final) for h in repo.query(question).hits]
    assert entry.mapped and len(populated) == 2
    assert first == second and first


def test_staged_keyword_candidates_give_the_hits_of_scoring_them_all(big_repo):
    """Knowing the answer's pools (top_k), the approximate path scores a keyword candidate's file
    only if the candidate can reach the fused pool: fewer rows, the same hits and scores."""
    from ragit.retrieve.rerank import RerankWeights

    store, sha = _snapshot(big_repo)
    emb = PlaceholderEmbedder()
    params = search.RetrievalParams(rerank_weights=RerankWeights(pool=8))
    fewer = 0
    try:
        for q in _questions(30):
            whole = search.score_snapshot(store, sha, emb, q, params)
            staged = search.score_snapshot(store, sha, emb, q, params, top_k=5)
            assert set(staged.rowids.tolist()) <= set(whole.rowids.tolist())
            fewer += len(staged.rowids) < len(whole.rowids)
            hits = [[(h.path, h.chunk_id, h.score_final, h.score_vector, h.score_keyword)
                     for h in search.rank_hits(store, sha, scores, (), params, 5, q)] for scores in (whole, staged)]
            assert hits[0] == hits[1]
    finally:
        store.close()
    assert fewer
