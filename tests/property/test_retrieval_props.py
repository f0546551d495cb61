"""Properties of `query` and `context pack` over random questions and budgets on one real,
indexed repository built once per module (knowledge §9, §12.6; context §1.3; cli-contract §9):

* the same input gives byte-identical JSON (in-process CLI, fresh `Repo` per call);
* `--explain` never changes the hits, only adds the breakdown;
* a pack keeps `usedTokens <= budget` and both counter invariants, and is exactly
  citation-diverse-v2 over the query's top-30 ranking;
* every citation id matches `^cite-[a-f0-9]{24}$`.
"""

from __future__ import annotations

import contextlib
import io
import json
import re
import subprocess

import pytest
from conftest import GIT_ENV, SAMPLE_FILES, family, reference_select, units, write_placeholder_config
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

CITE = re.compile(r"^cite-[a-f0-9]{24}$")
MAX_SAFE = 2**53 - 1
BUDGET_WARNING = "context pack budget admitted no complete hit"
SETTINGS = settings(max_examples=25, deadline=None,
                    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])

WORDS = ["restore", "auth", "context", "token", "rotation", "refresh", "roadmap", "milestone", "store",
         "query", "plan", "session", "client", "citation", "diverse", "selection", "widget", "gear",
         "secret", "import", "os", "class", "newest", "ship", "backend", "packs"]
SECTION_WORDS = ["widget", "gear", "spring", "lever", "valve", "piston", "rotor", "axle", "cam", "bolt"]


def _corpus() -> dict[str, str]:
    files = dict(SAMPLE_FILES)
    # an identical copy shares blob, chunk and citation ids: duplicate citations in the ranking
    files["docs/copy/001-auth.md"] = SAMPLE_FILES["docs/adr/001-auth.md"]
    # enough chunks that the fixed topK of 30 truncates, with varied sizes (1 to 12 words)
    parts = []
    for i in range(36):
        words = [SECTION_WORDS[(i * 7 + j) % len(SECTION_WORDS)] for j in range(1 + i % 12)]
        parts.append(f"## Part {i}\n\n{' '.join(words)}\n")
    files["docs/parts.md"] = "# Parts\n\n" + "\n".join(parts)
    files["src/gear.py"] = "def turn_gear(widget):\n    \"\"\"Turn the widget gear.\"\"\"\n    return widget\n"
    return files


@pytest.fixture(scope="module")
def corpus_root(tmp_path_factory):
    """One indexed repository for the whole module (built with its own isolated git env)."""
    from ragit import Repo

    root = tmp_path_factory.mktemp("retrieval-props") / "repo"
    home = tmp_path_factory.mktemp("retrieval-props-home")
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("HOME", str(home))
        mp.setenv("GIT_CONFIG_GLOBAL", str(home / ".gitconfig"))
        for key, value in GIT_ENV.items():
            mp.setenv(key, value)
        for key in ("RAGIT_NOW", "RAGIT_DEBUG", "RAGIT_SKIP_HOOKS", "RAGIT_EMBEDDER"):
            mp.delenv(key, raising=False)
        root.mkdir()
        subprocess.run(["git", "init", "-q", "-b", "main", str(root)], check=True)
        write_placeholder_config(root)
        for path, text in _corpus().items():
            target = root / path
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_text(text, encoding="utf-8")
        subprocess.run(["git", "add", "-A"], cwd=root, check=True)
        subprocess.run(["git", "commit", "-q", "-m", "corpus"], cwd=root, check=True)
        result = Repo.open(root).ingest(all=True)
        assert result.search_ready
    return root


@pytest.fixture(scope="module")
def corpus_head(corpus_root):
    return subprocess.run(["git", "rev-parse", "HEAD"], cwd=corpus_root, check=True, capture_output=True,
                          text=True).stdout.strip()


@pytest.fixture(scope="module")
def warm_repo(corpus_root):
    from ragit import Repo

    return Repo.open(corpus_root)


def run_cli(*args: str) -> tuple[int, str]:
    """The real entry point in-process; stdout captured."""
    from ragit.cli.main import main

    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        try:
            main(list(args))
            code = 0
        except SystemExit as exc:
            code = exc.code if isinstance(exc.code, int) else 1
    return code, out.getvalue()


questions = st.one_of(
    st.lists(st.sampled_from(WORDS), min_size=1, max_size=6).map(" ".join),
    st.text(alphabet=st.characters(blacklist_categories=("Cc", "Cs")), min_size=1, max_size=30)
    .filter(lambda s: s.strip() != ""),
)
budgets = st.one_of(st.integers(1, 60), st.integers(1, 400), st.just(MAX_SAFE))
views = st.sampled_from(["minimal", "default", "full"])


def wire(data):
    from ragit.contract.jsonout import dumps

    return json.loads(dumps(data))


@settings(SETTINGS, max_examples=15)  # four real CLI runs per example
@given(question=questions, view=views, explain=st.booleans(), budget=budgets)
def test_same_input_gives_byte_identical_json(corpus_root, question, view, explain, budget):
    # `--` keeps a question such as "-0" positional
    q_args = ["query", "--view", view, "--top-k", "30", "--format", "json", "--cwd", str(corpus_root)]
    q_args += ["--explain", "--", question] if explain else ["--", question]
    first = run_cli(*q_args)
    assert first[0] == 0, first
    assert run_cli(*q_args) == first
    p_args = ["context", "pack", "--budget", str(budget), "--view", view, "--format", "json",
              "--cwd", str(corpus_root), "--", question]
    first = run_cli(*p_args)
    assert first[0] == 0, first
    assert run_cli(*p_args) == first
    env = json.loads(first[1])
    assert env["warnings"] == env["data"]["warnings"]


@SETTINGS
@given(question=questions, top_k=st.integers(1, 40), view=views)
def test_explain_never_changes_hits(warm_repo, question, top_k, view):
    plain = wire(warm_repo.query(question, top_k=top_k).to_dict(view))
    explained = wire(warm_repo.query(question, top_k=top_k, explain=True).to_dict(view))
    assert plain["explain"] is False and explained["explain"] is True
    assert [{k: v for k, v in h.items() if k != "scoreBreakdown"} for h in explained["hits"]] == plain["hits"]
    assert all("scoreBreakdown" not in h for h in plain["hits"])
    for hit in explained["hits"]:
        assert hit["scoreBreakdown"]["final"] == hit["scoreFinal"]
        assert hit["scoreBreakdown"]["mode"] in ("hybrid", "keyword")
    for key in ("query", "scope", "snapshotSha", "snapshot", "warnings", "redactionSummary"):
        assert plain[key] == explained[key]
    assert len(plain["hits"]) <= top_k
    for hit in plain["hits"]:
        assert CITE.match(hit["citation"]["id"])


@SETTINGS
@given(question=questions, budget=budgets, unit=st.sampled_from(["words", "tokens"]))
def test_pack_budget_and_counter_invariants(warm_repo, question, budget, unit):
    # words: whitespace pieces; tokens: the configured (heuristic) counter, chars // 4 (context D.2)
    cost = units if unit == "words" else (lambda text: len(text) // 4)
    data = wire(warm_repo.pack(question, budget=budget, budget_unit=unit).to_dict("full"))
    sel = data["selection"]
    assert data["budget"] == budget and data["budgetUnit"] == unit
    assert data["usedTokens"] <= budget
    assert data["usedTokens"] == sum(cost(h["text"]) for h in data["hits"])
    assert sel["uniqueCitations"] == data["selectedHits"] + sel["budgetRejectedHits"]
    assert sel["candidateHits"] == sel["uniqueCitations"] + sel["duplicateCitationsSkipped"]
    assert data["selectedHits"] == len(data["hits"])
    assert sel["selectedSources"] == len({family(h) for h in data["hits"]})
    assert sel["candidateHits"] <= 30
    assert len({h["citation"]["id"] for h in data["hits"]}) == len(data["hits"])
    assert (BUDGET_WARNING in data["warnings"]) is (sel["candidateHits"] > 0 and not data["hits"])
    for hit in data["hits"]:
        assert "scoreBreakdown" not in hit
        assert CITE.match(hit["citation"]["id"])
    ranked = wire(warm_repo.query(question, top_k=30).to_dict("full"))["hits"]
    assert sel["candidateHits"] == len(ranked)
    assert data["hits"] == reference_select(ranked, budget, cost=lambda h: cost(h["text"]))["hits"]


@SETTINGS
@given(question=questions, view=views)
def test_every_citation_id_has_the_contract_shape(warm_repo, corpus_head, question, view):
    hits = wire(warm_repo.query(question, top_k=40).to_dict(view))["hits"]
    hits += wire(warm_repo.pack(question, budget=MAX_SAFE).to_dict(view))["hits"]
    for hit in hits:
        c = hit["citation"]
        assert CITE.match(c["id"])
        assert list(c) == ["id", "sourceType", "sourceId", "sourceVersion", "sourceSha"]
        assert c["sourceType"] == "document" and re.fullmatch(r"[0-9a-f]{40}", c["sourceId"])
        assert c["sourceSha"] == corpus_head
