"""Golden `ragit query` and `ragit context pack` envelopes on the `indexed_repo` fixture
(knowledge §12.7, §12.9; context §1.4; cli-contract §4, §9).

Commit dates are fixed by conftest, so SHAs and citation ids are stable; the placeholder embedder
is deterministic; the temporary root is replaced by ``<ROOT>``. Regenerate after an intended
change with ``RAGIT_UPDATE_GOLDENS=1 pytest tests/contract/test_query_goldens.py``.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from conftest import GOLDENS, check_golden

QUESTION = "restore auth context"
GOAL = "implementation plan for auth"

QUERY_CASES = {
    "query_minimal.json": ("--view", "minimal"),
    "query_default.json": ("--view", "default"),
    "query_full.json": ("--view", "full"),
    "query_explain.json": ("--view", "default", "--explain"),
}
# a budget that admits the diversity representatives and rejects some hits
PACK_CASES = {
    "pack_minimal.json": ("--budget", "40", "--view", "minimal"),
    "pack_default.json": ("--budget", "40", "--view", "default"),
}


def run_json(cli, root: Path, *args: str) -> str:
    r = cli(*args, "--format", "json", "--cwd", str(root))
    assert r.code == 0, r
    return r.out.replace(str(root), "<ROOT>")


@pytest.mark.parametrize("name", list(QUERY_CASES))
def test_query_golden(indexed_repo, cli, name):
    text = run_json(cli, indexed_repo.root, "query", QUESTION, *QUERY_CASES[name])
    check_golden(name, text)
    data = json.loads(text)["data"]
    assert json.loads(text)["cwd"] == "<ROOT>"
    assert all(("scoreBreakdown" in h) is ("--explain" in QUERY_CASES[name]) for h in data["hits"])
    assert data["explain"] is ("--explain" in QUERY_CASES[name])
    for hit in data["hits"]:
        if "scoreBreakdown" in hit:
            check_breakdown(hit)


def check_breakdown(hit: dict) -> None:
    """The golden's breakdown obeys knowledge §12.6 (values are rounded to 6 decimals)."""
    b = hit["scoreBreakdown"]
    r, v, k = b["retrieval"], b["retrieval"]["inputs"]["vector"], b["retrieval"]["inputs"]["keyword"]
    assert b["mode"] == "hybrid"
    assert (r["weight"], b["authority"]["weight"], b["recency"]["weight"]) == (0.8, 0.15, 0.05)
    assert (v["weight"], k["weight"]) == (0.7, 0.3)
    assert (v["score"], k["score"]) == (hit["scoreVector"], hit["scoreKeyword"])
    rerank = r.get("rerank", {"contribution": 0.0, "factors": {}})
    assert list(r)[-1] == ("rerank" if "rerank" in r else "inputs")  # the re-rank follows the inputs
    assert abs(r["score"] - (v["contribution"] + k["contribution"] + rerank["contribution"])) <= 3e-6
    assert set(rerank["factors"]) <= {"definition", "path", "file", "role", "diversity", "cochange", "docsite"}
    total = r["contribution"] + b["authority"]["contribution"] + b["recency"]["contribution"]
    assert abs(b["final"] - total) <= 3e-6
    assert b["final"] == hit["scoreFinal"]


@pytest.mark.parametrize("name", list(PACK_CASES))
def test_pack_golden(indexed_repo, cli, name):
    text = run_json(cli, indexed_repo.root, "context", "pack", GOAL, *PACK_CASES[name])
    check_golden(name, text)
    data = json.loads(text)["data"]
    sel = data["selection"]
    assert sel["budgetRejectedHits"] > 0 and data["selectedHits"] > 0  # the golden exercises both
    assert data["usedTokens"] <= data["budget"]


def test_query_input_form_matches_the_golden(indexed_repo, cli):
    payload = json.dumps({"question": QUESTION, "explain": True})
    r = cli("query", "--input", "-", "--view", "default", "--format", "json", "--cwd", str(indexed_repo.root),
            stdin=payload)
    assert r.code == 0, r
    assert r.out.replace(str(indexed_repo.root), "<ROOT>") == (GOLDENS / "query_explain.json").read_text(encoding="utf-8")


def test_pack_input_form_matches_the_golden(indexed_repo, cli):
    payload = json.dumps({"goal": GOAL, "budget": 40})
    r = cli("context", "pack", "--input", "-", "--view", "minimal", "--format", "json",
            "--cwd", str(indexed_repo.root), stdin=payload)
    assert r.code == 0, r
    assert r.out.replace(str(indexed_repo.root), "<ROOT>") == (GOLDENS / "pack_minimal.json").read_text(encoding="utf-8")


def test_explain_text_shows_the_rerank_factors(indexed_repo, cli):
    """Text `--explain` names the re-rank's contribution and factors after the two inputs."""
    r = cli("query", QUESTION, "--explain", "--view", "minimal", "--top-k", "5", "--cwd", str(indexed_repo.root),
            "--format", "text")
    assert r.code == 0
    lines = [line for line in r.out.splitlines() if "explanation:" in line]
    assert lines and any(" rerank=" in line for line in lines)
    for line in lines:
        if " rerank=" in line:
            assert line.index("keyword=") < line.index(" rerank=") < line.index("authority=")
            assert "(" in line and ")" in line
