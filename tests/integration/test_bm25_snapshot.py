"""BM25 with each snapshot's own statistics (knowledge §11.4, ragit.store.bm25).

The store's postings give the scores a plain reference BM25 computes from the snapshot's chunk
texts; a warm process's caching reader gives the same floats as a cold read; and a snapshot's
scores do not move when other commits are indexed into the same store.
"""

from __future__ import annotations

import math
import random

from hypothesis import HealthCheck, given, settings, strategies as st

from conftest import write_placeholder_config
from ragit import Repo
from ragit.retrieve.search import keyword_raw, load_matrix, query_terms
from ragit.store import open_store_read
from ragit.store.bm25 import B, FIELD_WEIGHTS, K1, field_counts

WORDS = ["token", "rotation", "store", "backend", "plan", "sendFile", "send_file", "HTTPServer", "the", "of",
         "auth", "context", "session", "refresh", "zebra", "glossary", "domain", "x", "tokens", "rotating"]


def _files(seed: int, n: int = 40) -> dict[str, str]:
    rng = random.Random(seed)
    files = {}
    for i in range(n):
        body = " ".join(rng.choice(WORDS) for _ in range(rng.randint(5, 80)))
        files[f"docs/d{i:02d}.md"] = f"# Title {rng.choice(WORDS)}\n\n{body}\n"
    files["src/app.py"] = "def sendFile(path):\n    return open(path)\n\n\nclass HTTPServer:\n    token = 1\n"
    return files


def _corpus(git_repo):
    write_placeholder_config(git_repo.root)
    git_repo.commit("corpus", _files(3))
    repo = Repo.open(git_repo.root)
    repo.ingest(all=True)
    return repo


def _reference(rows, terms) -> dict[int, float]:
    """Okapi BM25 written out from the definition: N, df and avgdl of ``rows`` alone."""
    docs = {}
    for rowid, row in rows.items():
        counts = field_counts(row.text, row.title, row.path)
        tf = {}
        for weight, c in zip(FIELD_WEIGHTS, counts):
            for term, n in c.items():
                tf[term] = tf.get(term, 0.0) + weight * n
        docs[rowid] = (tf, sum(sum(c.values()) for c in counts))
    n = len(docs)
    avgdl = sum(length for _, length in docs.values()) / n
    out = {rowid: 0.0 for rowid in docs}
    for term in terms:
        df = sum(1 for tf, _ in docs.values() if term in tf)
        if not df:
            continue
        idf = max(math.log((n - df + 0.5) / (df + 0.5)), 0.0) or 1e-6
        for rowid, (tf, length) in docs.items():
            f = tf.get(term, 0.0)
            if f:
                out[rowid] += idf * f * (K1 + 1) / (f + K1 * (1 - B + B * length / avgdl))
    return out


def _scores(repo, sha: str, question: str, repeats: int = 1, cache=None) -> dict[int, float]:
    store = open_store_read(repo.root, repo.config)
    try:
        snap = load_matrix(store, sha, repo.embedder_id if hasattr(repo, "embedder_id") else "placeholder:sha1:64:v1")
        raw, _ = keyword_raw(store, snap, question, cache=cache, term_repeats=repeats)
        return {int(r): float(s) for r, s in zip(snap.rowids, raw)}
    finally:
        store.close()


def test_snapshot_scores_equal_a_reference_bm25(git_repo):
    repo = _corpus(git_repo)
    sha = git_repo.head()
    store = open_store_read(repo.root, repo.config)
    try:
        snap = load_matrix(store, sha, "placeholder:sha1:64:v1")
        rows = store.fetch_rows(sha, [int(r) for r in snap.rowids])
    finally:
        store.close()
    for question, repeats in [("token rotation", 1), ("the of", 1), ("sendFile HTTPServer", 1),
                              ("zebra glossary domain", 1), ("nothing here", 1),
                              ("token token rotation token the token", 3), ("sendFile send file x x", 2)]:
        expected = _reference(rows, query_terms(question, repeats))
        got = _scores(repo, sha, question, repeats)
        assert got.keys() == expected.keys()
        for rowid, value in expected.items():
            assert math.isclose(got[rowid], value, rel_tol=1e-12, abs_tol=1e-12), (question, rowid)


def test_a_snapshot_scores_the_same_whatever_else_the_store_holds(git_repo):
    """Per-snapshot statistics: indexing other commits into the store moves no score of this one."""
    repo = _corpus(git_repo)
    first = git_repo.head()
    before = {q: _scores(repo, first, q) for q in ("token rotation", "sendFile", "zebra the plan")}
    for seed in (5, 8):  # commits with very different word statistics
        git_repo.commit(f"rewrite {seed}", {**_files(seed, 60), "docs/extra.md": "token " * 300})
        repo.ingest(all=True)
    after = {q: _scores(repo, first, q) for q in before}
    assert after == before


def test_warm_reader_follows_new_ingests(git_repo):
    from ragit.retrieve.search import VectorCache

    repo = _corpus(git_repo)
    cache = VectorCache()
    sha = git_repo.head()
    cold = _scores(repo, sha, "token rotation")
    store = open_store_read(repo.root, repo.config)
    try:
        cache.postings(store)  # the first read uses the store's own reader
        reader = cache.postings(store)
        generation = reader.generation
    finally:
        store.close()
    assert _scores(repo, sha, "token rotation", cache=cache) == cold
    git_repo.commit("more", {"docs/new.md": "# New\n\ntoken token token rotation\n"})
    repo.ingest(all=True)
    store = open_store_read(repo.root, repo.config)
    try:
        assert cache.postings(store).generation != generation  # the cache notices the index changed
    finally:
        store.close()
    assert _scores(repo, git_repo.head(), "token rotation", cache=cache) == _scores(repo, git_repo.head(),
                                                                                    "token rotation")


_SHARED: dict = {}


def _shared_repo(tmp_path_factory):
    if "repo" not in _SHARED:
        import subprocess

        from conftest import GitRepo

        root = tmp_path_factory.mktemp("mirror") / "repo"
        root.mkdir()
        subprocess.run(["git", "init", "-q", "-b", "main", str(root)], check=True)
        _SHARED["repo"] = _corpus(GitRepo(root))
    return _SHARED["repo"]


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.lists(st.sampled_from(WORDS), min_size=1, max_size=6))
def test_warm_queries_equal_cold_queries(tmp_path_factory, words):
    repo = _shared_repo(tmp_path_factory)
    question = " ".join(words)
    cold = Repo(repo.root, repo.config, repo.git).query(question, top_k=10)  # first read: the store's reader
    repo.query("warm up")  # the shared Repo is warm: its second keyword read uses the caching reader
    warm = repo.query(question, top_k=10)
    assert [(h.chunk_id, h.score_keyword, h.score_final) for h in warm.hits] == \
           [(h.chunk_id, h.score_keyword, h.score_final) for h in cold.hits]
