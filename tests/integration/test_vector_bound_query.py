"""A warm process's bounded vector scoring (ragit.retrieve.vector_bound) answers exactly as
scoring every row: the same hits, scores and breakdowns, bit for bit, while it scores fewer rows."""

from __future__ import annotations

import random

import pytest
from conftest import write_placeholder_config

from ragit import Repo
from ragit.retrieve import vector_bound

WORDS = ("token session rotate refresh store backend snapshot atomic write read cache index query "
         "vector keyword score rank pool file chunk path title commit branch merge config parser "
         "lexer syntax tree node graph edge weight bound sketch matrix row column").split()


def _files(count: int) -> dict[str, str]:
    rng = random.Random(11)
    out = {}
    for i in range(count):
        sections = [f"# Doc {i}\n\n" + " ".join(rng.choices(WORDS, k=30))]
        for j in range(rng.randint(1, 4)):
            sections.append(f"## Part {j}\n\n" + " ".join(rng.choices(WORDS, k=rng.randint(8, 40))))
        out[f"docs/{i % 7}/doc-{i:03d}.md"] = "\n\n".join(sections) + "\n"
    return out


QUESTIONS = ["how does the session token rotate", "snapshot store atomic write", "keyword score rank",
             "where is the parser lexer configured", "graph edge weight bound", "refresh cache index",
             "vector", "merge branch commit config path title"]


def _hits(repo: Repo) -> list:
    out = []
    for q in QUESTIONS:
        out.append([(h.path, h.chunk_id, h.score_final, h.score_vector, h.score_keyword, repr(h.breakdown))
                    for h in repo.query(q, top_k=10).hits])
    return out


def _count_scored(monkeypatch) -> list[int]:
    """Wrap bounded scoring: the list gets how many rows each call scored (−1: it fell back)."""
    scored: list[int] = []
    inner = vector_bound.bounded_scores

    def spy(*args, **kwargs):
        found = inner(*args, **kwargs)
        scored.append(-1 if found is None else len(found[0]))
        return found

    monkeypatch.setattr(vector_bound, "bounded_scores", spy)
    return scored


@pytest.mark.parametrize("normalization", ["file_blend", "none"])
def test_bounded_scoring_gives_the_hits_of_scoring_every_row(git_repo, monkeypatch, normalization):
    write_placeholder_config(git_repo.root)
    cfg = git_repo.root / ".ragit" / "config.toml"
    cfg.write_text(cfg.read_text() + f'\n[retrieval]\nvector_normalization = "{normalization}"\n')
    git_repo.commit("docs", _files(160))
    Repo.open(git_repo.root).ingest(all=True)

    every = Repo.open(git_repo.root)  # below SKETCH_MIN_ROWS: every row scored
    every.query(QUESTIONS[0])
    expected = _hits(every)

    monkeypatch.setattr(vector_bound, "SKETCH_MIN_ROWS", 0)
    scored = _count_scored(monkeypatch)
    bounded = Repo.open(git_repo.root)
    bounded.query(QUESTIONS[0])  # the first question builds no sketch (a one-shot process)
    assert not scored
    assert _hits(bounded) == expected
    entry = next(iter(bounded._cache.entries.values()))
    assert len(scored) == len(QUESTIONS) and all(0 < n < len(entry.rowids) for n in scored)


def test_a_filtered_query_scores_every_row(git_repo, monkeypatch):
    write_placeholder_config(git_repo.root)
    git_repo.commit("docs", _files(40))
    repo = Repo.open(git_repo.root)
    repo.ingest(all=True)
    monkeypatch.setattr(vector_bound, "SKETCH_MIN_ROWS", 0)
    calls = []
    monkeypatch.setattr(vector_bound, "bounded_scores", lambda *a, **k: calls.append(1))
    for q in QUESTIONS[:3]:
        repo.query(q, paths=["docs/1/*"])
    assert not calls


def test_bounded_scoring_keeps_the_docs_site_stage(git_repo, monkeypatch):
    """The docs-site stage (ragit.retrieve.docsite) reads the rows of the site's configuration
    files wherever they rank: a warm process scores them always, so a docs question brings the
    sidebar exactly as scoring every row does."""
    write_placeholder_config(git_repo.root)
    files = _files(600)
    files["website/sidebars.js"] = "module.exports = {\n  nav: ['intro', 'faq'],\n}\n"
    git_repo.commit("docs", files)
    Repo.open(git_repo.root).ingest(all=True)
    questions = ["Add a page about the session token", "docs for the snapshot store pages"]

    def hits(repo: Repo) -> list:
        return [[(h.path, h.chunk_id, h.score_final, repr(h.breakdown)) for h in repo.query(q, top_k=10).hits]
                for q in questions]

    every = Repo.open(git_repo.root)
    every.query(QUESTIONS[0])
    expected = hits(every)
    assert all("website/sidebars.js" in [h[0] for h in q] for q in expected)

    monkeypatch.setattr(vector_bound, "SKETCH_MIN_ROWS", 0)
    scored = _count_scored(monkeypatch)
    bounded = Repo.open(git_repo.root)
    bounded.query(QUESTIONS[0])
    assert hits(bounded) == expected
    rows = len(next(iter(bounded._cache.entries.values())).rowids)
    assert len(scored) == len(questions) and all(0 < n < rows for n in scored), (scored, rows)
