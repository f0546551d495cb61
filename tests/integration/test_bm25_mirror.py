"""The in-memory BM25 mirror equals SQLite FTS5's bm25() bit for bit (store/bm25.py)."""

from __future__ import annotations

import random

from hypothesis import HealthCheck, given, settings, strategies as st

from conftest import write_placeholder_config
from ragit import Repo
from ragit.retrieve.search import query_terms
from ragit.store import open_store_read

WORDS = ["token", "rotation", "store", "backend", "plan", "sendFile", "send_file", "HTTPServer", "the", "of",
         "auth", "context", "session", "refresh", "zebra", "glossary", "domain", "x"]


def _corpus(git_repo):
    rng = random.Random(3)
    files = {}
    for i in range(40):
        body = " ".join(rng.choice(WORDS) for _ in range(rng.randint(5, 80)))
        files[f"docs/d{i:02d}.md"] = f"# Title {rng.choice(WORDS)}\n\n{body}\n"
    files["src/app.py"] = "def sendFile(path):\n    return open(path)\n\n\nclass HTTPServer:\n    token = 1\n"
    write_placeholder_config(git_repo.root)
    git_repo.commit("corpus", files)
    repo = Repo.open(git_repo.root)
    repo.ingest(all=True)
    return repo


def test_mirror_equals_fts5_and_follows_new_ingests(git_repo):
    repo = _corpus(git_repo)
    store = open_store_read(repo.root, repo.config)
    mirror = store.bm25_mirror()
    try:
        for question, repeats in [("token rotation", 1), ("the of", 1), ("sendFile HTTPServer", 1),
                                  ("zebra glossary domain", 1), ("nothing here", 1),
                                  ("token token rotation token the token", 3), ("sendFile send file x x", 2)]:
            terms = query_terms(question, repeats)
            expected = dict(store.keyword_scores(terms))
            ids, scores = mirror.scores(terms)
            assert {int(i): float(s) for i, s in zip(ids, scores)} == expected
        generation = mirror.generation
    finally:
        store.close()
        mirror.close()
    git_repo.commit("more", {"docs/new.md": "# New\n\ntoken token token rotation\n"})
    repo.ingest(all=True)
    store = open_store_read(repo.root, repo.config)
    fresh = store.bm25_mirror()
    try:
        assert fresh.read_generation() != generation  # the cache notices the index changed
        terms = query_terms("token rotation")
        ids, scores = fresh.scores(terms)
        assert {int(i): float(s) for i, s in zip(ids, scores)} == dict(store.keyword_scores(terms))
    finally:
        store.close()
        fresh.close()


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
    cold = Repo(repo.root, repo.config, repo.git).query(question, top_k=10)  # first read: FTS5
    repo.query("warm up")  # the shared Repo is warm: its second keyword read uses the mirror
    warm = repo.query(question, top_k=10)
    assert [(h.chunk_id, h.score_keyword, h.score_final) for h in warm.hits] == \
           [(h.chunk_id, h.score_keyword, h.score_final) for h in cold.hits]
