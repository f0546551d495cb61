"""The public Python API (`ragit.Repo`) drives the same engine as the CLI (DESIGN "each plane is a
library first"): open, ingest, query, pack, packet, typed `RagitError`s, and a warm second query
served from the cached snapshot matrix."""

from __future__ import annotations

import json
import re

import pytest
from conftest import SAMPLE_FILES, tree_snapshot, write_placeholder_config

import ragit

CITE = re.compile(r"^cite-[a-f0-9]{24}$")
A = {"goal": "locate a single test failure", "stopCondition": "stop when traceable direct evidence is missing",
     "verificationTarget": "the injected test name"}
CF = {"id": "current-failure", "kind": "direct-evidence", "source": "injected:test-output",
      "capturedAt": "2026-07-15", "relevance": "current", "freshness": "fresh", "sizeUnits": 3,
      "content": "expected status 401 but received 200"}


def wire(data):
    """The JSON form of an API dict: numbers rounded to 6 decimals as on every output path."""
    from ragit.contract.jsonout import dumps

    return json.loads(dumps(data))


def cli_data(cli, repo_root, *args, stdin=None):
    r = cli(*args, "--cwd", str(repo_root), "--format", "json", stdin=stdin)
    assert r.code == 0, r
    return r.json["data"]


@pytest.fixture
def committed(git_repo):
    write_placeholder_config(git_repo.root)
    git_repo.commit("initial", SAMPLE_FILES)
    return git_repo


@pytest.fixture
def api_repo(committed):
    """Indexed through the API itself."""
    repo = ragit.Repo.open(committed.root)
    result = repo.ingest(all=True)
    assert result.commit_sha == committed.head() and result.search_ready is True
    return repo


# ---------------------------------------------------------------- open / ingest


def test_public_names():
    assert set(ragit.__all__) >= {"Repo", "RagitError", "open_repo", "__version__"}
    from ragit.api import Repo
    from ragit.errors import RagitError

    assert ragit.Repo is Repo and ragit.RagitError is RagitError


def test_open_from_a_nested_directory(committed):
    repo = ragit.Repo.open(committed.root / "docs" / "adr")
    assert repo.root == committed.root
    assert ragit.open_repo(str(committed.root / "src")).root == committed.root


def test_open_outside_git_is_typed(tmp_path):
    plain = tmp_path / "plain"
    plain.mkdir()
    with pytest.raises(ragit.RagitError) as info:
        ragit.Repo.open(plain)
    err = info.value
    assert err.code == "GIT_REPOSITORY_REQUIRED" and err.category == "not_ready" and err.exit_code == 3
    assert err.details == {"cwd": str(plain)}


def test_ingest_matches_the_cli_result(committed, cli, tmp_path):
    repo = ragit.Repo.open(committed.root)
    dry = repo.ingest(all=True, dry_run=True)
    assert dry.to_dict()["mode"] == "dry-run"
    assert not (committed.root / ".ragit" / "manifest").exists()
    result = repo.ingest(all=True)
    data = result.to_dict()
    assert data["mode"] == "apply" and data["commitSha"] == committed.head()
    assert data["plannedFiles"] == sorted(SAMPLE_FILES)
    assert (committed.root / data["manifestPath"]).is_file()
    # the CLI sees the same published snapshot: a second ingest reuses everything
    again = cli_data(cli, committed.root, "ingest", "--all")
    assert again["commitSha"] == data["commitSha"]


# ---------------------------------------------------------------- query


def test_query_typed_result_and_handles(api_repo, committed):
    head = committed.head()
    result = api_repo.query("restore auth context")
    assert result.explain is False and 1 <= len(result.hits) <= 5
    hit = result.hits[0]
    assert hit.path == "src/auth.py" and hit.citation["sourceSha"] == head
    assert CITE.match(hit.citation_id)
    assert hit.handle() == f"{hit.path}@{head[:12]}:L{hit.start_line}-L{hit.end_line}"
    assert hit.trust == "repository" and hit.flags == []
    assert result.warnings == []
    assert result.retrieval.snapshot_sha == head


def test_query_to_dict_equals_cli_data(api_repo, committed, cli):
    for view in ("minimal", "default", "full"):
        api = wire(api_repo.query("token rotation", top_k=4, explain=True).to_dict(view))
        assert api == cli_data(cli, committed.root, "query", "token rotation", "--top-k", "4", "--explain",
                               "--view", view)


def test_query_at_and_scope(api_repo, committed):
    head = committed.head()
    result = api_repo.query("roadmap", at=head[:7], scope="ALL")
    data = result.to_dict()
    assert data["scope"] == "all" and data["snapshot"]["selection"] == "explicit-exact"
    assert data["snapshot"]["requestedRef"] == head[:7]


def test_explain_never_changes_hits(api_repo):
    plain = api_repo.query("rotate refresh token", top_k=8).to_dict("full")["hits"]
    explained = api_repo.query("rotate refresh token", top_k=8, explain=True).to_dict("full")["hits"]
    assert [{k: v for k, v in h.items() if k != "scoreBreakdown"} for h in explained] == plain
    assert all(h["scoreBreakdown"]["final"] == h["scoreFinal"] for h in explained)


# ---------------------------------------------------------------- pack


def test_pack_result_and_to_dict_equal_the_cli(api_repo, committed, cli):
    result = api_repo.pack("implementation plan for auth", budget=25)
    from ragit.api import PackResult

    assert isinstance(result, PackResult)
    assert result.budget == 25 and result.selection.used_tokens <= 25
    assert [h.citation_id for h in result.hits] == [h.citation_id for h in result.selection.hits]
    assert result.warnings == []
    for view in ("minimal", "default", "full"):
        assert wire(result.to_dict(view)) == cli_data(cli, committed.root, "context", "pack",
                                                "implementation plan for auth", "--budget", "25", "--view", view)
    # the default view is the CLI's default view
    assert wire(result.to_dict()) == cli_data(cli, committed.root, "context", "pack", "implementation plan for auth",
                                        "--budget", "25")


def test_pack_input_payload_equals_cli_input(api_repo, committed, cli):
    result = api_repo.pack("roadmap milestone", budget=10, at="HEAD", scope="durable")
    payload = json.dumps({"goal": "roadmap milestone", "budget": 10, "at": "HEAD", "scope": "durable"})
    assert wire(result.to_dict("minimal")) == cli_data(cli, committed.root, "context", "pack", "--input", "-",
                                                 "--view", "minimal", stdin=payload)


def test_pack_nothing_fits(api_repo):
    result = api_repo.pack("restore auth context", budget=1)
    assert result.hits == [] and result.warnings == ["context pack budget admitted no complete hit"]
    data = result.to_dict()
    assert data["selection"]["budgetRejectedHits"] == data["selection"]["uniqueCitations"] > 0


@pytest.mark.parametrize(
    "kwargs,field,reason",
    [
        ({"budget": 0}, "input.budget", "out_of_range"),
        ({"budget": -1}, "input.budget", "out_of_range"),
        ({"budget": 1.5}, "input.budget", "not_integer"),
        ({"budget": 2**53}, "input.budget", "out_of_range"),
        ({"budget": float("inf")}, "input.budget", "not_integer"),
        ({"budget": float("nan")}, "input.budget", "not_integer"),
        ({"budget": True}, "input.budget", "not_integer"),
        ({"budget": "12"}, "input.budget", "not_integer"),
        ({"scope": "bogus"}, "input.scope", "not_one_of"),
    ],
)
def test_pack_invalid_inputs_raise_before_retrieval(committed, kwargs, field, reason):
    repo = ragit.Repo.open(committed.root)  # never indexed: retrieval would fail differently
    before = tree_snapshot(committed.root)
    with pytest.raises(ragit.RagitError) as info:
        repo.pack("restore auth", **kwargs)
    err = info.value
    assert err.code == "INPUT_INVALID" and err.exit_code == 2 and err.category == "invalid_input"
    assert (err.details["field"], err.details["reason"]) == (field, reason)
    assert tree_snapshot(committed.root) == before


def test_pack_largest_safe_budget(api_repo):
    assert api_repo.pack("restore auth context", budget=2**53 - 1).to_dict()["budget"] == 2**53 - 1


def test_pack_empty_goal_and_bad_ref(api_repo):
    with pytest.raises(ragit.RagitError) as info:
        api_repo.pack("   ")
    assert info.value.code == "INPUT_INVALID" and info.value.details["reason"] == "empty"
    with pytest.raises(ragit.RagitError) as info:
        api_repo.pack("roadmap", at="main")
    assert info.value.code == "SNAPSHOT_REF_INVALID" and info.value.exit_code == 2


# ---------------------------------------------------------------- typed retrieval failures


def test_unindexed_snapshot_is_typed(committed):
    repo = ragit.Repo.open(committed.root)
    for call in (lambda: repo.query("roadmap"), lambda: repo.pack("roadmap")):
        with pytest.raises(ragit.RagitError) as info:
            call()
        err = info.value
        assert err.code == "SNAPSHOT_NOT_INDEXED" and err.exit_code == 3
        assert err.details == {"resolvedSha": committed.head()}
        assert err.to_dict()["recovery"] == {"command": "ragit ingest --all"}


def test_query_invalid_inputs(api_repo):
    cases = [({"top_k": 0}, "INPUT_INVALID"), ({"top_k": 1.5}, "INPUT_INVALID"), ({"at": "HEAD~1"}, "SNAPSHOT_REF_INVALID"),
             ({"scope": "nowhere"}, "INPUT_INVALID")]
    for kwargs, code in cases:
        with pytest.raises(ragit.RagitError) as info:
            api_repo.query("roadmap", **kwargs)
        assert info.value.code == code
    with pytest.raises(ragit.RagitError) as info:
        api_repo.query("")
    assert (info.value.details["field"], info.value.details["reason"]) == ("input.question", "empty")


# ---------------------------------------------------------------- packet


def test_packet_outcome_equals_cli_data(api_repo, committed, cli, tmp_path):
    ev = tmp_path / "failure.txt"
    ev.write_text("FAILED test_rotate\n")
    payload = {"taskAnchor": A, "budgetUnits": 40, "candidates": [CF],
               "retrieve": {"goal": "token rotation", "budget": 20}}
    outcome = api_repo.packet(payload, evidence=[str(ev)])
    assert outcome.ready is True and outcome.result.state == "ready"
    assert outcome.pack is not None and outcome.pack.budget == 20
    data = outcome.to_dict()
    assert list(data)[-3:] == ["snapshotSha", "snapshot", "warnings"]
    assert wire(data) == cli_data(cli, committed.root, "context", "packet", "--input", "-", "--evidence", str(ev),
                            stdin=json.dumps(payload))
    pointers = data["packet"]["pointers"]
    assert [p["id"] for p in pointers] == [h.citation_id for h in outcome.pack.hits]
    assert [p["reference"] for p in pointers] == [h.handle() for h in outcome.pack.hits]


def test_packet_retrieve_uses_the_pack_defaults(api_repo, committed):
    outcome = api_repo.packet({"taskAnchor": A, "budgetUnits": 8, "retrieve": {"goal": "roadmap"}})
    assert outcome.pack.budget == 1200 and outcome.pack.retrieval.scope == "durable"
    assert outcome.pack.retrieval.selection.block()["selection"] == "head-exact"
    assert [p["id"] for p in outcome.to_dict()["packet"]["pointers"]] == [h.citation_id for h in outcome.pack.hits]


def test_packet_blocked_is_a_result_not_an_error(committed):
    repo = ragit.Repo.open(committed.root)
    outcome = repo.packet({"taskAnchor": A, "budgetUnits": 8, "candidates": [{**CF, "capturedAt": ""}]})
    assert outcome.ready is False
    assert outcome.to_dict() == {"state": "blocked", "phase": "missing_provenance", "packet": None, "excluded": [],
                                 "unknowns": [{"id": "current-failure", "missing": ["capturedAt"]}], "refresh": [],
                                 "evidence": ["candidate provenance is incomplete"]}


@pytest.mark.parametrize(
    "payload,field,reason",
    [
        ({"taskAnchor": A, "budgetUnits": 0, "candidates": []}, "input.budgetUnits", "out_of_range"),
        ({"taskAnchor": A, "budgetUnits": 8, "candidates": [{**CF, "kind": "doc"}]}, "input.candidates[0].kind",
         "not_one_of"),
        ({"taskAnchor": A, "budgetUnits": 8, "retrieve": {"goal": "x", "budget": 0}}, "input.retrieve.budget",
         "out_of_range"),
        ({"taskAnchor": A, "budgetUnits": 8, "candidates": [], "bogus": 1}, "input.bogus", "unknown_field"),
    ],
)
def test_packet_invalid_requests_raise_input_invalid(committed, payload, field, reason):
    repo = ragit.Repo.open(committed.root)
    with pytest.raises(ragit.RagitError) as info:
        repo.packet(payload)
    assert info.value.code == "INPUT_INVALID" and info.value.exit_code == 2
    assert (info.value.details["field"], info.value.details["reason"]) == (field, reason)


def test_packet_retrieve_failure_is_typed(committed):
    repo = ragit.Repo.open(committed.root)
    with pytest.raises(ragit.RagitError) as info:
        repo.packet({"taskAnchor": A, "budgetUnits": 8, "retrieve": {"goal": "roadmap"}})
    assert info.value.code == "SNAPSHOT_NOT_INDEXED"


# ---------------------------------------------------------------- warm queries


def test_warm_query_reuses_the_cached_matrix(api_repo, committed, monkeypatch):
    from ragit.retrieve import search

    old = committed.head()
    loads = []
    real = search.load_matrix

    def counting(store, sha, embedder_id):
        loads.append(sha)
        return real(store, sha, embedder_id)

    monkeypatch.setattr(search, "load_matrix", counting)
    first = api_repo.query("restore auth context").to_dict("full")
    assert loads == [old]
    second = api_repo.query("restore auth context").to_dict("full")
    api_repo.query("a different question")
    api_repo.pack("restore auth context")
    assert loads == [old]  # served from the warm matrix
    assert second == first

    # a new snapshot invalidates the cache: the next query loads the new matrix once
    new = committed.commit("more", {"docs/extra.md": "# Extra\n\nwalrus notes\n"})
    api_repo.ingest(since=old)
    hits = api_repo.query("walrus notes").to_dict("full")["hits"]
    assert any("walrus" in h["text"] for h in hits)
    api_repo.query("walrus")
    assert loads == [old, new]
