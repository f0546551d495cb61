"""A query's answer does not depend on the store's history (cli-contract §9): when more rows tie
at the re-rank pool's threshold than it admits, the cut follows (path, chunk id), not the row ids
that the order of past ingests gave the rows."""

from __future__ import annotations

import shutil

import numpy as np
from conftest import write_placeholder_config

import ragit
from ragit.retrieve.rerank import _top

BODY = "def quokka_handler():\n    return 'quokka handler ledger'\n"
QUESTIONS = ("quokka handler", "quokka ledger", "handler")


def _answers(root) -> list[list[tuple[str, float]]]:
    repo = ragit.Repo.open(root)
    return [[(h.path, h.score_final) for h in repo.query(q, top_k=10).hits] for q in QUESTIONS]


def test_same_answers_whatever_order_the_store_ingested_commits(git_repo, cli):
    write_placeholder_config(git_repo.root)
    git_repo.commit("b files first", {f"pkg/b{i:03d}.py": BODY for i in range(120)})
    assert cli("ingest", "--all", "--cwd", str(git_repo.root), "--format", "json").code == 0
    git_repo.commit("a files", {f"pkg/a{i:03d}.py": BODY for i in range(60)})
    assert cli("ingest", "--cwd", str(git_repo.root), "--format", "json").code == 0
    grown = _answers(git_repo.root)  # the b files' rows have the lowest row ids here

    shutil.rmtree(git_repo.root / ".ragit" / "store")
    assert cli("ingest", "--all", "--cwd", str(git_repo.root), "--format", "json").code == 0
    fresh = _answers(git_repo.root)  # one ingest: row ids follow the tree
    assert grown == fresh
    assert grown[0][0][0] == "pkg/a000.py"  # 180 equal rows for a pool of 100: content decides


def test_top_cuts_ties_by_the_given_order():
    scores = np.array([5.0, 1.0, 1.0, 1.0, 1.0, 0.5])
    assert _top(scores, 3).tolist() == [0, 1, 2]  # no order given: the first rows
    assert sorted(_top(scores, 3, lambda tied: tied[::-1]).tolist()) == [0, 3, 4]
    assert _top(scores, 6, lambda tied: 1 / 0).tolist() == [0, 1, 2, 3, 4, 5]  # nothing cut: never asked
