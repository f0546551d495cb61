"""`ragit context pack` through the CLI on real repositories (context.md §1; cli-contract §3–6, §9).

Each rule is checked on real output: input validation (before any retrieval), the fixed topK of
30, the citation-diverse-v2 selection compared with an independent re-implementation over the
`query --top-k 30` ranking, the worked examples of §1.5 reproduced through real corpora, both
counter invariants, masking, the exact budget warning, the data key order (incl. `modelTokens`),
the text header, the dirty-worktree warning and the typed failures with their exit codes.
"""

from __future__ import annotations

import json
import re
from decimal import ROUND_HALF_UP, Decimal

import pytest
from conftest import SAMPLE_FILES, family, reference_select, tree_snapshot, units, write_placeholder_config

CITE = re.compile(r"^cite-[a-f0-9]{24}$")
BUDGET_WARNING = "context pack budget admitted no complete hit"
DIRTY_WARNING = "working tree has uncommitted changes; results exclude them"
DATA_KEYS = ["goal", "scope", "snapshotSha", "snapshot", "budget", "usedTokens", "selectedHits", "selection",
             "warnings", "redactionSummary", "hits", "modelTokens", "budgetUnit"]
SELECTION_KEYS = ["strategy", "candidateHits", "uniqueCitations", "selectedSources", "duplicateCitationsSkipped",
                  "budgetRejectedHits"]
MAX_SAFE = 2**53 - 1


def pack(cli, repo, *args, **kw):
    return cli("context", "pack", *args, "--cwd", str(repo.root), **kw)


def pack_data(cli, repo, *args, **kw):
    r = pack(cli, repo, *args, "--format", "json", **kw)
    assert r.code == 0, r
    return r.json["data"]


def query_hits(cli, repo, question, top_k=30, view="full"):
    r = cli("query", question, "--top-k", str(top_k), "--view", view, "--format", "json", "--cwd", str(repo.root))
    assert r.code == 0, r
    return r.json["data"]["hits"]


def make_indexed(git_repo, cli, files, config_extra=""):
    write_placeholder_config(git_repo.root)
    if config_extra:
        cfg = git_repo.root / ".ragit" / "config.toml"
        cfg.write_text(cfg.read_text() + config_extra)
    git_repo.commit("corpus", files)
    r = cli("ingest", "--all", "--cwd", str(git_repo.root), "--format", "json")
    assert r.code == 0, r
    return git_repo


def assert_invariants(data: dict) -> None:
    sel = data["selection"]
    assert list(sel) == SELECTION_KEYS
    assert sel["strategy"] == "citation-diverse-v2"
    assert sel["uniqueCitations"] == data["selectedHits"] + sel["budgetRejectedHits"]
    assert sel["candidateHits"] == sel["uniqueCitations"] + sel["duplicateCitationsSkipped"]
    assert data["selectedHits"] == len(data["hits"])
    assert data["usedTokens"] <= data["budget"]
    assert sel["candidateHits"] <= 30
    for hit in data["hits"]:
        assert "scoreBreakdown" not in hit
        assert CITE.match(hit["citation"]["id"])
        assert list(hit["citation"]) == ["id", "sourceType", "sourceId", "sourceVersion", "sourceSha"]
    if "text" in (data["hits"][0] if data["hits"] else {}):
        assert data["usedTokens"] == sum(units(h["text"]) for h in data["hits"])


def score4(x: float) -> str:
    return str(Decimal(repr(x)).quantize(Decimal("0.0001"), rounding=ROUND_HALF_UP))


# ---------------------------------------------------------------- success shape


def test_json_contract_key_order_and_invariants(indexed_repo, cli):
    head = indexed_repo.head()
    nested = indexed_repo.root / "docs" / "plan"
    r = cli("context", "pack", "restore auth context", "--cwd", str(nested), "--format", "json")
    assert r.code == 0 and r.err == "", r
    env = r.json
    assert list(env) == ["command", "ok", "version", "cwd", "data", "warnings"]
    assert env["command"] == "context pack" and env["ok"] is True
    assert env["cwd"] == str(indexed_repo.root)
    data = env["data"]
    assert list(data) == DATA_KEYS
    assert data["goal"] == "restore auth context" and data["scope"] == "durable"
    assert data["snapshotSha"] == data["snapshot"]["resolvedSha"] == head
    assert data["snapshot"] == {"requestedRef": "HEAD", "resolvedSha": head, "selection": "head-exact",
                                "status": "indexed", "branch": "main", "detached": False, "worktreeDirty": False}
    assert data["budget"] == 1200
    assert data["warnings"] == env["warnings"] == []
    assert data["redactionSummary"] == {"applied": False, "maskedCount": 0, "sources": []}
    assert list(data["modelTokens"]) == ["counter", "tokens"]
    assert data["modelTokens"]["counter"] == "heuristic"
    assert_invariants(data)
    # the sample corpus has 8 chunks, all of which fit the default budget
    assert data["selectedHits"] == data["selection"]["candidateHits"] == 8
    for hit in data["hits"]:
        assert hit["citation"]["sourceType"] == "document" and hit["citation"]["sourceSha"] == head
        assert hit["scope"] == "durable" and hit["trust"] == "repository" and hit["flags"] == []


@pytest.mark.parametrize("view", ["minimal", "default", "full"])
def test_views_project_hits_like_query_and_never_expose_breakdown(indexed_repo, cli, view):
    data = pack_data(cli, indexed_repo, "token rotation", "--view", view)
    assert_invariants(data)
    by_id = {h["citation"]["id"]: h for h in query_hits(cli, indexed_repo, "token rotation", view=view)}
    for hit in data["hits"]:
        assert hit == by_id[hit["citation"]["id"]]  # the same projection as query (no explain)
        if view == "full":
            assert "text" in hit and "excerpt" not in hit
        else:
            assert "excerpt" in hit and "text" not in hit
            assert len(hit["excerpt"]) <= {"minimal": 120, "default": 200}[view] + 3
        assert ("docType" in hit) is (view != "minimal")
        assert ("scoreVector" in hit) is (view != "minimal")


@pytest.mark.parametrize("goal", ["restore auth context", "implementation plan for auth", "roadmap milestone"])
@pytest.mark.parametrize("budget", [1, 2, 9, 20, 40, 1200])
def test_selection_matches_reference_over_query_ranking(indexed_repo, cli, goal, budget):
    """The pack never rescores or re-sorts: it is citation-diverse-v2 over the query top-30 list."""
    data = pack_data(cli, indexed_repo, goal, "--budget", str(budget), "--view", "full")
    expected = reference_select(query_hits(cli, indexed_repo, goal), budget)
    assert data["hits"] == expected["hits"]
    assert data["usedTokens"] == expected["usedTokens"]
    assert data["selection"] == expected["selection"]
    assert_invariants(data)


def test_diversity_representatives_come_before_fill_hits(indexed_repo, cli):
    data = pack_data(cli, indexed_repo, "restore auth context", "--view", "full")
    families = [family(h) for h in data["hits"]]
    reps = data["selection"]["selectedSources"]
    assert reps == 4 and len(set(families[:reps])) == reps
    assert set(families[reps:]) <= set(families[:reps])
    # a fill hit may out-score a later representative, so the list is not globally score-sorted
    scores = [h["scoreFinal"] for h in data["hits"]]
    assert scores[:reps] == sorted(scores[:reps], reverse=True)
    assert scores[reps:] == sorted(scores[reps:], reverse=True)
    assert scores != sorted(scores, reverse=True)


def test_model_tokens_sum_the_counter_over_selected_texts(indexed_repo, cli):
    data = pack_data(cli, indexed_repo, "restore auth context", "--budget", "30", "--view", "full")
    assert data["modelTokens"] == {"counter": "heuristic", "tokens": sum(len(h["text"]) // 4 for h in data["hits"])}


def test_model_tokens_counter_never_affects_selection(indexed_repo, cli):
    base = pack_data(cli, indexed_repo, "restore auth context", "--budget", "30", "--view", "full")
    cfg = indexed_repo.root / ".ragit" / "config.toml"
    cfg.write_text(cfg.read_text() + '\n[window]\ntoken_counter = "o200k_base"\n')
    other = pack_data(cli, indexed_repo, "restore auth context", "--budget", "30", "--view", "full")
    assert other["modelTokens"]["counter"] in ("o200k_base", "heuristic")
    if other["modelTokens"]["counter"] == "heuristic":  # rank file unavailable: heuristic plus a warning
        assert other["warnings"]
    for key in ("hits", "usedTokens", "selectedHits", "selection", "budget"):
        assert other[key] == base[key]


def test_json_is_byte_identical_across_runs(indexed_repo, cli):
    runs = [pack(cli, indexed_repo, "token rotation plan", "--budget", "25", "--format", fmt).out
            for fmt in ("json", "json", "both", "both")]
    assert runs[0] == runs[1] and runs[2] == runs[3]
    assert runs[2].endswith(runs[0])


# ---------------------------------------------------------------- worked examples (§1.5)


def test_worked_nothing_fits_budget_one(indexed_repo, cli):
    # every chunk of the sample corpus has at least two words
    assert min(units(h["text"]) for h in query_hits(cli, indexed_repo, "restore auth context")) >= 2
    r = pack(cli, indexed_repo, "restore auth context", "--budget", "1", "--format", "json")
    assert r.code == 0 and r.json["ok"] is True
    data = r.json["data"]
    assert data["hits"] == [] and data["usedTokens"] == 0 and data["selectedHits"] == 0
    assert data["warnings"] == [BUDGET_WARNING] and r.json["warnings"] == [BUDGET_WARNING]
    assert data["selection"]["candidateHits"] == data["selection"]["uniqueCitations"] == 8
    assert data["selection"]["budgetRejectedHits"] == 8 and data["selection"]["selectedSources"] == 0
    assert data["modelTokens"] == {"counter": "heuristic", "tokens": 0}
    text = pack(cli, indexed_repo, "restore auth context", "--budget", "1", "--format", "text").out
    assert "- warnings: 1\n" in text and f"- warning: {BUDGET_WARNING}\n" in text
    assert text.endswith("\n\n- none\n")


def test_no_candidates_means_no_budget_warning(indexed_repo, cli):
    # a non-durable scope without artifacts retrieves nothing: no hit was rejected, so no warning
    data = pack_data(cli, indexed_repo, "restore auth context", "--budget", "1", "--scope", "session")
    assert data["scope"] == "session" and data["hits"] == [] and data["warnings"] == []
    assert data["selection"]["candidateHits"] == 0
    assert_invariants(data)


def test_worked_oversized_first_hit_does_not_block_a_smaller_one(indexed_repo, cli):
    ranked = query_hits(cli, indexed_repo, "restore auth context")
    assert units(ranked[0]["text"]) > 2 and ranked[0]["path"] == "src/auth.py"
    data = pack_data(cli, indexed_repo, "restore auth context", "--budget", "2", "--view", "full")
    # `import os` is the only 2-word chunk; it belongs to the same family as the oversized top hit
    assert [(h["path"], h["text"]) for h in data["hits"]] == [("src/auth.py", "import os")]
    assert data["usedTokens"] == 2 and data["selection"]["budgetRejectedHits"] == 7
    assert data["warnings"] == []


def test_worked_oversized_first_on_its_own_corpus(git_repo, cli):
    repo = make_indexed(git_repo, cli, {"docs/big.md": "# Big\n\none two three four\n",
                                        "docs/small.md": "# Small\n\none two\n"})
    ranked = query_hits(cli, repo, "one two three four")
    assert [h["text"] for h in ranked] == ["one two three four", "one two"]
    data = pack_data(cli, repo, "one two three four", "--budget", "2", "--view", "full")
    assert [h["text"] for h in data["hits"]] == ["one two"]
    assert data["usedTokens"] == 2 and data["selection"]["budgetRejectedHits"] == 1
    assert_invariants(data)


def test_worked_diversity_then_fill(git_repo, cli):
    repo = make_indexed(git_repo, cli, {
        "docs/a.md": "# A1\n\none two\n\n# A2\n\none\n",
        "docs/b.md": "# B\n\none two\n",
        "docs/c.md": "# C\n\none two\n",
    })
    data = pack_data(cli, repo, "one two", "--budget", "7", "--view", "full")
    assert data["usedTokens"] == 7
    assert data["selection"] == {"strategy": "citation-diverse-v2", "candidateHits": 4, "uniqueCitations": 4,
                                 "selectedSources": 3, "duplicateCitationsSkipped": 0, "budgetRejectedHits": 0}
    # three representatives (one per file), then the second docs/a.md hit as fill
    assert sorted(h["path"] for h in data["hits"][:3]) == ["docs/a.md", "docs/b.md", "docs/c.md"]
    assert (data["hits"][3]["path"], data["hits"][3]["text"]) == ("docs/a.md", "one")
    assert data["hits"] == reference_select(query_hits(cli, repo, "one two"), 7)["hits"]
    # one unit less: the fill hit no longer fits, the three representatives stay
    six = pack_data(cli, repo, "one two", "--budget", "6", "--view", "full")
    assert six["hits"] == data["hits"][:3] and six["selection"]["budgetRejectedHits"] == 1


def test_worked_duplicate_citation_keeps_first(git_repo, cli):
    # identical files share blob, chunk and so citation id: two hits, one citation
    repo = make_indexed(git_repo, cli, {"docs/x.md": "alpha beta gamma\n", "docs/y.md": "alpha beta gamma\n"})
    ranked = query_hits(cli, repo, "alpha beta")
    assert len(ranked) == 2 and ranked[0]["citation"]["id"] == ranked[1]["citation"]["id"]
    data = pack_data(cli, repo, "alpha beta", "--budget", "10", "--view", "full")
    assert data["selection"] == {"strategy": "citation-diverse-v2", "candidateHits": 2, "uniqueCitations": 1,
                                 "selectedSources": 1, "duplicateCitationsSkipped": 1, "budgetRejectedHits": 0}
    assert data["hits"] == [ranked[0]] and data["usedTokens"] == 3


def test_retrieval_top_k_is_thirty(git_repo, cli):
    sections = "".join(f"## Part {i}\n\nshared widget note number {i}\n\n" for i in range(40))
    repo = make_indexed(git_repo, cli, {"docs/many.md": "# Many\n\n" + sections})
    assert len(query_hits(cli, repo, "shared widget note", top_k=40)) == 40
    data = pack_data(cli, repo, "shared widget note", "--budget", str(MAX_SAFE), "--view", "full")
    assert data["selection"]["candidateHits"] == 30 and data["selectedHits"] == 30
    assert data["hits"] == reference_select(query_hits(cli, repo, "shared widget note", top_k=30), MAX_SAFE)["hits"]


# ---------------------------------------------------------------- text rendering


@pytest.mark.parametrize("view", ["minimal", "full"])
def test_text_header_lines_and_hit_list(indexed_repo, cli, view):
    head = indexed_repo.head()
    r = pack(cli, indexed_repo, "restore auth context", "--budget", "30", "--view", view)  # default: both
    assert r.code == 0 and r.err == ""
    text, sep, envelope = r.out.partition("\n\n{")
    assert sep
    data = json.loads("{" + envelope)["data"]
    full = pack_data(cli, indexed_repo, "restore auth context", "--budget", "30", "--view", "full")["hits"]
    sel, mt = data["selection"], data["modelTokens"]
    header = [
        "# ragit context pack",
        "- goal: restore auth context",
        f"- snapshot: {head}",
        "- requested_ref: HEAD",
        f"- resolved_sha: {head}",
        "- selection: head-exact",
        "- status: indexed",
        "- branch: main",
        "- detached: false",
        "- worktree_dirty: false",
        "- budget: 30",
        "- budget_unit: words",
        f"- used_tokens: {data['usedTokens']}",
        f"- model_tokens: {mt['tokens']} ({mt['counter']})",
        f"- selected_hits: {data['selectedHits']}",
        "- selection_strategy: citation-diverse-v2",
        f"- candidate_hits: {sel['candidateHits']}",
        f"- unique_citations: {sel['uniqueCitations']}",
        f"- selected_sources: {sel['selectedSources']}",
        f"- duplicate_citations_skipped: {sel['duplicateCitationsSkipped']}",
        f"- budget_rejected_hits: {sel['budgetRejectedHits']}",
        "- warnings: 0",
        f"- view: {view}",
        "- redaction_applied: false",
        "- masked_count: 0",
    ]
    lines = text.split("\n")
    assert lines[: len(header) + 1] == header + [""]
    body = lines[len(header) + 1:]
    firsts = [line for line in body if re.match(r"^\d+\. ", line)]
    assert len(firsts) == data["selectedHits"] >= 1
    for n, (line, hit) in enumerate(zip(firsts, data["hits"]), 1):
        c = hit["citation"]
        assert line == (f"{n}. [{c['id']}] `{hit['path']}@{c['sourceSha'][:12]}:L{hit['startLine']}-L{hit['endLine']}`"
                        f" · {hit['sectionTitle']} · score={score4(full[n - 1]['scoreFinal'])}")
    assert "explanation:" not in text and "mode=" not in text


def test_text_only_format_prints_no_json(indexed_repo, cli):
    r = pack(cli, indexed_repo, "roadmap", "--format", "text")
    assert r.code == 0 and r.err == ""
    assert r.out.startswith("# ragit context pack\n- goal: roadmap\n")
    assert "{" not in r.out.split("\n\n", 1)[0]
    for needle in ("- resolved_sha:", "- status: indexed", "- selection_strategy: citation-diverse-v2",
                   "- candidate_hits:", "- unique_citations:", "- selected_sources:",
                   "- duplicate_citations_skipped:", "- budget_rejected_hits:", "- model_tokens: "):
        assert needle in r.out


# ---------------------------------------------------------------- masking


def test_goal_is_masked_and_reported(indexed_repo, cli):
    data = pack_data(cli, indexed_repo, "restore auth AKIAABCDEFGHIJKLMNOP context")
    assert data["goal"] == "restore auth AKIAAB*** context"
    assert data["redactionSummary"] == {"applied": True, "maskedCount": 1, "sources": ["goal"]}
    text = pack(cli, indexed_repo, "restore auth AKIAABCDEFGHIJKLMNOP context", "--format", "text").out
    assert "AKIAABCDEFGHIJKLMNOP" not in text
    assert "- goal: restore auth AKIAAB*** context" in text
    assert "- redaction_applied: true" in text and "- masked_count: 1" in text


def test_hits_are_masked_before_selection_and_in_output(git_repo, cli):
    # ingest without masking: the store holds raw secrets, so only read-time masking hides them
    repo = make_indexed(git_repo, cli, {"docs/ops.md": "# Ops\n\ntoken = 5 alpha\n",
                                        "docs/keys.md": "# Keys\n\nalpha key AKIAABCDEFGHIJKLMNOP here\n"},
                        config_extra="\n[security]\nsecret_masking = false\n")
    # raw `token = 5 alpha` has 4 units; masked `token: *** alpha` has 3, and only then fits
    r = pack(cli, repo, "alpha", "--budget", "3", "--view", "full", "--format", "json")
    data = r.json["data"]
    assert [h["text"] for h in data["hits"]] == ["token: *** alpha"]
    assert data["usedTokens"] == 3
    assert data["redactionSummary"] == {"applied": True, "maskedCount": 1, "sources": ["hits[0].text"]}
    assert "AKIAABCDEFGHIJKLMNOP" not in r.out and "token = 5" not in r.out
    wide = pack(cli, repo, "alpha", "--view", "minimal", "--format", "both")
    assert "AKIAABCDEFGHIJKLMNOP" not in wide.out and "token = 5" not in wide.out
    red = json.loads("{" + wide.out.partition("\n\n{")[2])["data"]["redactionSummary"]
    assert red["applied"] is True and red["maskedCount"] == 2
    assert sorted(red["sources"]) == ["hits[0].excerpt", "hits[1].excerpt"]


# ---------------------------------------------------------------- dirty worktree, --at, scope


def test_dirty_worktree_warns_before_the_budget_warning(indexed_repo, cli):
    indexed_repo.write("docs/plan/roadmap.md", "# Roadmap\n\nuncommitted zebra\n")
    r = pack(cli, indexed_repo, "zebra roadmap", "--format", "json", "--view", "full")
    data = r.json["data"]
    assert r.code == 0 and data["snapshot"]["worktreeDirty"] is True
    assert data["warnings"] == r.json["warnings"] == [DIRTY_WARNING]
    assert all("zebra" not in h["text"] for h in data["hits"])
    r = pack(cli, indexed_repo, "zebra roadmap", "--budget", "1", "--format", "json")
    assert r.json["data"]["warnings"] == r.json["warnings"] == [DIRTY_WARNING, BUDGET_WARNING]
    text = pack(cli, indexed_repo, "zebra roadmap", "--budget", "1", "--format", "text").out
    assert "- worktree_dirty: true\n" in text and "- warnings: 2\n" in text
    assert f"- warning: {DIRTY_WARNING}\n- warning: {BUDGET_WARNING}\n" in text


def test_at_selects_an_exact_older_snapshot(indexed_repo, cli):
    old = indexed_repo.head()
    indexed_repo.commit("change", {"docs/plan/roadmap.md": "# Roadmap\n\nnew walrus milestone\n"})
    assert cli("ingest", "--since", old, "--cwd", str(indexed_repo.root), "--format", "json").code == 0
    assert any("walrus" in h["text"] for h in pack_data(cli, indexed_repo, "walrus milestone", "--view", "full")["hits"])
    data = pack_data(cli, indexed_repo, "walrus milestone", "--at", old[:10].upper(), "--view", "full")
    assert data["snapshot"]["selection"] == "explicit-exact"
    assert data["snapshot"]["requestedRef"] == old[:10].upper()
    assert data["snapshotSha"] == data["snapshot"]["resolvedSha"] == old
    assert all("walrus" not in h["text"] and h["citation"]["sourceSha"] == old for h in data["hits"])


def test_scope_is_case_insensitive(indexed_repo, cli):
    data = pack_data(cli, indexed_repo, "restore auth context", "--scope", " ALL ")
    assert data["scope"] == "all"
    assert data["hits"] == pack_data(cli, indexed_repo, "restore auth context")["hits"]  # no artifacts


# ---------------------------------------------------------------- input validation


BAD_CLI_BUDGETS = [("0", "out_of_range"), ("-1", "out_of_range"), ("1.5", "not_integer"),
                   (str(2**53), "out_of_range"), ("abc", "not_integer"), ("1e3", "not_integer"),
                   ("inf", "not_integer"), ("nan", "not_integer"), ("", "not_integer")]
BAD_JSON_BUDGETS = [("0", "out_of_range"), ("-1", "out_of_range"), ("1.5", "not_integer"),
                    (str(2**53), "out_of_range"), ("9007199254740992.0", "out_of_range"),
                    # cli-contract §3.3: the literals (and 1e400, which parses to infinity) are hostile input
                    ("Infinity", "non_finite_number"), ("-Infinity", "non_finite_number"), ("NaN", "non_finite_number"),
                    ("1e400", "non_finite_number"), ("true", "not_integer"), ('"12"', "not_integer"),
                    ("null", "not_integer"), ("[1]", "not_integer")]


@pytest.fixture
def unindexed_repo(git_repo):
    """Committed but never ingested: any retrieval would fail SNAPSHOT_NOT_INDEXED."""
    git_repo.commit("initial", SAMPLE_FILES)
    return git_repo


@pytest.mark.parametrize("joined", [True, False], ids=["--budget=N", "--budget N"])
@pytest.mark.parametrize("budget,reason", BAD_CLI_BUDGETS)
def test_cli_budget_rejected_before_retrieval(unindexed_repo, cli, budget, reason, joined):
    before = tree_snapshot(unindexed_repo.root)
    option = [f"--budget={budget}"] if joined else ["--budget", budget]
    r = pack(cli, unindexed_repo, "restore auth", *option, "--format", "json")
    assert r.code == 2, r
    err = r.json["error"]
    assert err["code"] == "INPUT_INVALID" and err["category"] == "invalid_input" and err["retryable"] is False
    assert err["details"]["field"] == "--budget" and err["details"]["reason"] == reason
    assert err["recovery"] == {"command": "ragit describe context pack"}
    assert r.json["data"] is None and r.json["command"] == "context pack"
    assert tree_snapshot(unindexed_repo.root) == before


@pytest.mark.parametrize("budget,reason", BAD_JSON_BUDGETS)
def test_json_budget_rejected_before_retrieval(unindexed_repo, cli, budget, reason):
    before = tree_snapshot(unindexed_repo.root)
    r = pack(cli, unindexed_repo, "--input", "-", "--format", "json", stdin=f'{{"goal": "auth", "budget": {budget}}}')
    assert r.code == 2, r
    assert r.json["error"]["code"] == "INPUT_INVALID"
    assert r.json["error"]["details"]["field"] == "input.budget"
    assert r.json["error"]["details"]["reason"] == reason
    assert tree_snapshot(unindexed_repo.root) == before


def test_valid_budget_on_unindexed_repo_reaches_selection(unindexed_repo, cli):
    # the contrast case: with a valid budget the same call fails at snapshot selection
    before = tree_snapshot(unindexed_repo.root)
    r = pack(cli, unindexed_repo, "restore auth", "--budget", "5", "--format", "json")
    assert r.code == 3 and r.json["error"]["code"] == "SNAPSHOT_NOT_INDEXED"
    assert r.json["error"]["details"] == {"resolvedSha": unindexed_repo.head()}
    assert r.json["error"]["recovery"] == {"command": "ragit ingest --all"}
    assert tree_snapshot(unindexed_repo.root) == before  # not even .ragit/ is created


@pytest.mark.parametrize("scope", ["session", "harness", "evidence", "all"])
def test_non_durable_scopes_still_need_the_exact_snapshot(unindexed_repo, cli, scope):
    r = pack(cli, unindexed_repo, "restore auth", "--scope", scope, "--format", "json")
    assert r.code == 3 and r.json["error"]["code"] == "SNAPSHOT_NOT_INDEXED"


def test_working_memory_is_never_packed(indexed_repo, cli):
    wrap = cli("memory", "wrap", "--input", "-", "--cwd", str(indexed_repo.root), "--format", "json",
               stdin=json.dumps({"goal": "zebra quokka migration", "summary": "zebra quokka summary"}))
    assert wrap.code == 0, wrap
    for scope in ("durable", "all"):
        data = pack_data(cli, indexed_repo, "zebra quokka", "--scope", scope, "--view", "full")
        assert data["hits"] and all("quokka" not in h["text"] and not h["path"].startswith(".ragit/")
                                    for h in data["hits"])


@pytest.mark.parametrize("budget", [str(MAX_SAFE), f"{MAX_SAFE}.0", "1200"])
def test_largest_safe_budget_accepted(indexed_repo, cli, budget):
    as_cli = "." not in budget
    if as_cli:
        data = pack_data(cli, indexed_repo, "restore auth context", "--budget", budget)
    else:  # a JSON number whose value is an integer
        data = pack_data(cli, indexed_repo, "--input", "-", stdin=f'{{"goal": "restore auth context", "budget": {budget}}}')
    assert data["budget"] == int(budget.split(".")[0])
    assert data["selectedHits"] == 8 and data["selection"]["budgetRejectedHits"] == 0
    assert_invariants(data)


@pytest.mark.parametrize(
    "args,field,reason",
    [
        (["   "], "goal", "empty"),
        ([], "goal", "required"),
        (["bell\u0007"], "goal", "control_character"),
        (["x", "--scope", "bogus"], "--scope", "not_one_of"),
        (["x", "--view", "wide"], "--view", "not_one_of"),
        (["x", "--format", "yaml"], "--format", "not_one_of"),
        (["x", "--top-k", "3"], "--top-k", "usage"),
        (["x", "--explain"], "--explain", "usage"),  # a pack never exposes the breakdown
    ],
)
def test_invalid_cli_inputs_on_unindexed_repo(unindexed_repo, cli, args, field, reason):
    before = tree_snapshot(unindexed_repo.root)
    fmt = [] if "--format" in args else ["--format", "json"]
    r = pack(cli, unindexed_repo, *args, *fmt)
    assert r.code == 2, r
    env = r.json
    assert env["error"]["code"] == "INPUT_INVALID"
    assert env["error"]["details"]["field"] == field and env["error"]["details"]["reason"] == reason
    assert tree_snapshot(unindexed_repo.root) == before


@pytest.mark.parametrize("ref", ["main", "not-a-sha", "abc", "HEAD~1", "v1.0"])
def test_invalid_at_is_a_ref_error(indexed_repo, cli, ref):
    r = pack(cli, indexed_repo, "roadmap", "--at", ref, "--format=json")
    assert r.code == 2 and r.err == ""
    err = r.json["error"]
    assert err["code"] == "SNAPSHOT_REF_INVALID" and err["category"] == "invalid_input"
    if ref == "main":  # a branch is refused, but names its commit and the exact command (knowledge §5.1)
        sha = indexed_repo.head()
        assert err["details"] == {"ref": "main", "resolvedSha": sha}
        assert err["recovery"] == {"command": f"ragit context pack roadmap --at {sha} --format json "
                                              f"--cwd {indexed_repo.root}"}
    else:
        assert err["recovery"] == {"command": "git rev-parse --verify HEAD"}


def test_input_file_and_stdin_equal_positional(indexed_repo, cli):
    positional = pack_data(cli, indexed_repo, "implementation plan for auth", "--budget", "25", "--view", "minimal")
    # under .ragit/ the payload file does not make the worktree dirty
    (indexed_repo.root / ".ragit" / "pack.json").write_text(json.dumps({"goal": "implementation plan for auth",
                                                                        "budget": 25}))
    from_file = pack_data(cli, indexed_repo, "--input", ".ragit/pack.json", "--view", "minimal")
    from_stdin = pack_data(cli, indexed_repo, "--input", "-", "--view", "minimal",
                           stdin='{"goal": "  implementation plan for auth ", "budget": 25}')
    assert from_file == from_stdin == positional


def test_input_at_head_is_explicit_and_scope_durable_is_allowed(indexed_repo, cli):
    payload = json.dumps({"goal": "implementation plan for auth", "budget": 1200, "at": "HEAD", "scope": "durable"})
    r = pack(cli, indexed_repo, "--input", "-", "--scope", "durable", "--format", "json", "--view", "minimal",
             stdin=payload)
    assert r.code == 0, r
    data = r.json["data"]
    assert data["snapshot"]["selection"] == "explicit-exact" and data["snapshot"]["requestedRef"] == "HEAD"
    assert data["budget"] == 1200 and data["scope"] == "durable"


def test_input_defaults_budget_1200(indexed_repo, cli):
    data = pack_data(cli, indexed_repo, "--input", "-", stdin='{"goal": "roadmap"}')
    assert data["budget"] == 1200 and data["snapshot"]["selection"] == "head-exact"


@pytest.mark.parametrize(
    "extra,conflicts",
    [
        (["goal words"], ["goal"]),
        (["--budget", "10"], ["--budget"]),
        (["--at", "HEAD"], ["--at"]),
        (["--scope", "session"], ["--scope"]),
        (["--budget-unit", "tokens"], ["--budget-unit"]),
        (["goal words", "--budget", "10", "--at", "HEAD"], ["goal", "--budget", "--at"]),
    ],
)
def test_mixed_input_rejected(indexed_repo, cli, extra, conflicts):
    before = tree_snapshot(indexed_repo.root)
    r = pack(cli, indexed_repo, "--input", "-", *extra, "--format", "json", stdin='{"goal": "roadmap"}')
    assert r.code == 2, r
    details = r.json["error"]["details"]
    assert details["reason"] == "mixed_input" and details["conflicts"] == conflicts
    assert tree_snapshot(indexed_repo.root) == before


@pytest.mark.parametrize(
    "payload,field,reason",
    [
        ('{"budget": 10}', "input.goal", "required"),
        ('{"goal": ""}', "input.goal", "empty"),
        ('{"goal": "   "}', "input.goal", "empty"),
        ('{"goal": 5}', "input.goal", "not_string"),
        ('{"goal": "x", "topK": 3}', "input.topK", "unknown_field"),
        ('{"goal": "x", "scope": "bogus"}', "input.scope", "not_one_of"),
        ('{"goal": "x", "at": ""}', "input.at", "empty"),
        ('{"goal": "x", "at": 7}', "input.at", "not_string"),
        ('{"goal": "x", "budgetUnit": "bytes"}', "input.budgetUnit", "not_one_of"),
        ('{"goal": "x", "budgetUnit": 1}', "input.budgetUnit", "not_string"),
        ('{"goal": "bell\\u0007"}', "input.goal", "control_character"),
        ("{not json", "--input", "invalid_json"),
        ('["goal"]', "input", None),
    ],
)
def test_input_payload_errors(unindexed_repo, cli, payload, field, reason):
    (unindexed_repo.root / "pack.json").write_text(payload)
    before = tree_snapshot(unindexed_repo.root)
    r = pack(cli, unindexed_repo, "--input", "pack.json", "--format", "json")
    assert r.code == 2, r
    assert r.json["error"]["code"] == "INPUT_INVALID"
    assert r.json["error"]["details"]["field"] == field
    if reason is not None:
        assert r.json["error"]["details"]["reason"] == reason
    assert tree_snapshot(unindexed_repo.root) == before


def test_input_at_with_a_branch_name_is_a_ref_error(indexed_repo, cli):
    r = pack(cli, indexed_repo, "--input", "-", "--format", "json", stdin='{"goal": "x", "at": "main"}')
    assert r.code == 2 and r.json["error"]["code"] == "SNAPSHOT_REF_INVALID"


def test_input_path_rules(indexed_repo, cli, tmp_path):
    (tmp_path / "outside.json").write_text('{"goal": "x"}')
    r = pack(cli, indexed_repo, "--input", "../outside.json", "--format", "json")
    assert r.code == 2 and r.json["error"]["details"]["reason"] == "path_outside_repo"
    r = pack(cli, indexed_repo, "--input", str(tmp_path / "outside.json"), "--format", "json")
    assert r.code == 2 and r.json["error"]["details"]["reason"] == "path_outside_repo"
    r = pack(cli, indexed_repo, "--input", "missing.json", "--format", "json")
    assert r.code == 2 and r.json["error"]["details"]["reason"] == "file_not_found"


# ---------------------------------------------------------------- failures and exit codes


def test_missing_snapshot_names_the_ancestor_and_never_packs_it(indexed_repo, cli):
    base = indexed_repo.head()
    indexed_repo.git("checkout", "-q", "-b", "feature")
    feature = indexed_repo.commit("feature", {"docs/new.md": "# New\n\nfeature doc\n"})
    r = pack(cli, indexed_repo, "roadmap")  # default format both: envelope on stdout, text on stderr
    assert r.code == 3
    err = r.json["error"]
    assert err["code"] == "SNAPSHOT_NOT_INDEXED" and err["category"] == "not_ready"
    assert err["details"] == {"resolvedSha": feature, "nearestIndexedAncestor": base}
    assert err["recovery"] == {"command": f"ragit ingest --since {base}"}
    assert r.json["command"] == "context pack" and r.json["data"] is None
    assert "- code: SNAPSHOT_NOT_INDEXED" in r.err and "- retryable: false" in r.err


def test_failure_format_text_writes_only_stderr(indexed_repo, cli):
    r = pack(cli, indexed_repo, "roadmap", "--at", "not-a-sha", "--format", "text")
    assert r.code == 2 and r.out == ""
    assert "- code: SNAPSHOT_REF_INVALID" in r.err and "- recovery: git rev-parse --verify HEAD" in r.err


def test_store_missing_exit_3(indexed_repo, cli):
    import shutil

    shutil.rmtree(indexed_repo.root / ".ragit" / "store")
    r = pack(cli, indexed_repo, "roadmap", "--format", "json")
    assert r.code == 3
    assert r.json["error"]["code"] == "SNAPSHOT_STORE_UNAVAILABLE"
    assert r.json["error"]["details"]["reason"] == "store_missing"


def test_corrupt_or_unsupported_manifest_exit_4(indexed_repo, cli):
    head = indexed_repo.head()
    path = indexed_repo.root / ".ragit" / "manifest" / f"{head}.json"
    path.write_text('{"commitSha":')
    r = pack(cli, indexed_repo, "roadmap", "--format", "json")
    assert r.code == 4 and r.json["error"]["code"] == "SNAPSHOT_MANIFEST_INVALID"
    assert r.json["error"]["category"] == "corrupt_or_incompatible"
    path.write_text(json.dumps({"commitSha": head, "parentSha": None, "createdAt": "x", "indexVersion": 999}))
    r = pack(cli, indexed_repo, "roadmap", "--format", "json")
    assert r.code == 4 and r.json["error"]["code"] == "SNAPSHOT_SCHEMA_UNSUPPORTED"


def test_outside_git_is_typed(tmp_path, cli):
    plain = tmp_path / "plain"
    plain.mkdir()
    r = cli("context", "pack", "roadmap", "--cwd", str(plain), "--format", "json")
    assert r.code == 3 and r.json["error"]["code"] == "GIT_REPOSITORY_REQUIRED"
    assert r.json["cwd"] == str(plain)
    assert list(plain.iterdir()) == []


def test_pack_writes_nothing(indexed_repo, cli):
    before = tree_snapshot(indexed_repo.root)
    assert pack(cli, indexed_repo, "roadmap", "--format", "json").code == 0
    assert pack(cli, indexed_repo, "roadmap", "--budget", "1", "--format", "text").code == 0
    assert tree_snapshot(indexed_repo.root) == before


def test_options_anywhere_and_nested_cwd(indexed_repo, cli):
    nested = indexed_repo.root / "docs"
    r = cli("context", f"--cwd={nested}", "pack", "roadmap", "--format=json")
    assert r.code == 0 and r.json["command"] == "context pack" and r.json["cwd"] == str(indexed_repo.root)
    r = cli("--format=json", "context", "pack", "--cwd", str(indexed_repo.root), "--", "--budget=3")
    assert r.code == 0 and r.json["data"]["goal"] == "--budget=3" and r.json["data"]["budget"] == 1200


# ---------------------------------------------------------------- --budget-unit (context §1.1, §1.3)


def test_budget_unit_defaults_to_words(indexed_repo, cli):
    data = pack_data(cli, indexed_repo, "restore auth context", "--budget", "30", "--view", "full")
    assert data["budgetUnit"] == "words"
    assert data["usedTokens"] == sum(units(h["text"]) for h in data["hits"]) <= 30


@pytest.mark.parametrize("budget", [1, 12, 30, 60, 400])
def test_budget_unit_tokens_counts_the_token_counter_over_complete_hit_text(indexed_repo, cli, budget):
    data = pack_data(cli, indexed_repo, "restore auth context", "--budget", str(budget), "--budget-unit", "tokens",
                     "--view", "full")
    tokens = [len(h["text"]) // 4 for h in data["hits"]]  # the heuristic counter (D.2)
    assert data["budgetUnit"] == "tokens" and data["budget"] == budget
    assert data["usedTokens"] == sum(tokens) <= budget
    assert data["modelTokens"] == {"counter": "heuristic", "tokens": data["usedTokens"]}
    # the same citation-diverse-v2 selection, costed in tokens, over the query ranking
    ranked = query_hits(cli, indexed_repo, "restore auth context")
    expected = reference_select(ranked, budget, cost=lambda h: len(h["text"]) // 4)
    assert [h["citation"]["id"] for h in data["hits"]] == [h["citation"]["id"] for h in expected["hits"]]


def test_budget_unit_tokens_admits_more_than_words_for_the_same_number(indexed_repo, cli):
    words = pack_data(cli, indexed_repo, "restore auth context", "--budget", "20")
    tokens = pack_data(cli, indexed_repo, "restore auth context", "--budget", "20", "--budget-unit", "TOKENS")
    assert tokens["budgetUnit"] == "tokens" and words["budgetUnit"] == "words"
    assert tokens["usedTokens"] <= 20 and words["usedTokens"] <= 20


def test_budget_unit_in_the_input_payload(indexed_repo, cli):
    r = pack(cli, indexed_repo, "--input", "-", "--format", "json",
             stdin='{"goal": "restore auth context", "budget": 25, "budgetUnit": "tokens"}')
    assert r.code == 0, r
    data = r.json["data"]
    assert data["budgetUnit"] == "tokens" and data["usedTokens"] <= 25
    assert data == pack_data(cli, indexed_repo, "restore auth context", "--budget", "25", "--budget-unit", "tokens")


def test_bad_budget_unit_is_rejected_before_retrieval(unindexed_repo, cli):
    before = tree_snapshot(unindexed_repo.root)
    r = pack(cli, unindexed_repo, "x", "--budget-unit", "bytes", "--format", "json")
    assert r.code == 2, r
    assert r.json["error"]["details"] == {"field": "--budget-unit", "reason": "not_one_of", "value": "bytes",
                                          "allowed": ["words", "tokens"]}
    assert tree_snapshot(unindexed_repo.root) == before


def test_budget_unit_text_line(indexed_repo, cli):
    r = pack(cli, indexed_repo, "roadmap", "--budget", "30", "--budget-unit", "tokens", "--format", "text")
    assert r.code == 0 and "\n- budget: 30\n- budget_unit: tokens\n- used_tokens: " in r.out
