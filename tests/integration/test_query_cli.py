"""`ragit query` through the CLI on real repositories (knowledge §5, §12; cli-contract §3–5)."""

from __future__ import annotations

import json
import re

import pytest

from conftest import tree_snapshot, write_placeholder_config

CITE = re.compile(r"^cite-[a-f0-9]{24}$")


def q(cli, repo, *args, **kw):
    return cli("query", *args, "--cwd", str(repo.root), **kw)


def test_query_json_basic_contract(indexed_repo, cli):
    head = indexed_repo.head()
    nested = indexed_repo.root / "docs" / "adr"
    r = cli("query", "restore auth context", "--cwd", str(nested), "--format", "json")
    assert r.code == 0, r
    env = r.json
    assert list(env) == ["command", "ok", "version", "cwd", "data", "warnings"]
    assert env["command"] == "query" and env["ok"] is True
    assert env["cwd"] == str(indexed_repo.root)
    data = env["data"]
    assert list(data) == ["query", "scope", "snapshotSha", "snapshot", "explain", "hits", "warnings", "redactionSummary"]
    assert data["snapshotSha"] == head
    assert data["snapshot"] == {"requestedRef": "HEAD", "resolvedSha": head, "selection": "head-exact",
                                "status": "indexed", "branch": "main", "detached": False, "worktreeDirty": False}
    assert data["explain"] is False
    assert 1 <= len(data["hits"]) <= 5
    for hit in data["hits"]:
        assert CITE.match(hit["citation"]["id"])
        assert hit["citation"]["sourceType"] == "document"
        assert hit["citation"]["sourceSha"] == head
        assert hit["scope"] == "durable" and hit["trust"] == "repository" and hit["flags"] == []
        assert "scoreBreakdown" not in hit
    assert env["warnings"] == data["warnings"] == []


def test_minimal_view_has_excerpt_and_no_text(indexed_repo, cli):
    r = q(cli, indexed_repo, "refresh tokens", "--view", "minimal", "--format", "json")
    hits = r.json["data"]["hits"]
    assert hits and all("excerpt" in h and "text" not in h and "docType" not in h for h in hits)
    assert all(len(h["excerpt"]) <= 123 for h in hits)
    full = q(cli, indexed_repo, "refresh tokens", "--view", "full", "--format", "json").json["data"]["hits"]
    assert all("text" in h and "excerpt" not in h for h in full)


def test_explain_breakdown_never_changes_ranking(indexed_repo, cli):
    plain = q(cli, indexed_repo, "rotate refresh token", "--format", "json").json["data"]
    explained = q(cli, indexed_repo, "rotate refresh token", "--explain", "--format", "json").json["data"]
    assert explained["explain"] is True
    strip = [{k: v for k, v in h.items() if k != "scoreBreakdown"} for h in explained["hits"]]
    assert strip == plain["hits"]
    for h in explained["hits"]:
        b = h["scoreBreakdown"]
        assert b["mode"] in ("hybrid", "keyword")
        assert b["final"] == h["scoreFinal"]


def test_query_is_byte_identical(indexed_repo, cli):
    a = q(cli, indexed_repo, "token rotation plan", "--format", "json", "--explain").out
    b = q(cli, indexed_repo, "token rotation plan", "--format", "json", "--explain").out
    assert a == b


def test_text_rendering(indexed_repo, cli):
    r = q(cli, indexed_repo, "restore auth context", "--view", "minimal", "--explain", "--format", "text")
    assert r.code == 0 and r.err == ""
    assert r.out.startswith("# ragit query\n- question: restore auth context\n- scope: durable\n")
    assert f"- resolved_sha: {indexed_repo.head()}" in r.out
    assert "- selection: head-exact" in r.out and "- explain: true" in r.out
    assert "[cite-" in r.out and "mode=hybrid" in r.out and "vector=" in r.out and "keyword=" in r.out


def test_both_format_is_text_blank_line_envelope(indexed_repo, cli):
    r = q(cli, indexed_repo, "roadmap")
    text, _, envelope = r.out.partition("\n\n{")
    assert text.startswith("# ragit query")
    assert json.loads("{" + envelope)["command"] == "query"


def test_dirty_worktree_warns_and_uses_committed_content(indexed_repo, cli):
    indexed_repo.write("docs/plan/roadmap.md", "# Roadmap\n\nuncommitted zebra content\n")
    r = q(cli, indexed_repo, "zebra", "--format", "json", "--view", "full")
    data = r.json["data"]
    assert data["snapshot"]["worktreeDirty"] is True
    assert data["warnings"] == ["working tree has uncommitted changes; results exclude them"]
    assert r.json["warnings"] == data["warnings"]
    assert all("zebra" not in h["text"] for h in data["hits"])
    text = q(cli, indexed_repo, "zebra", "--format", "text").out
    assert "- worktree_dirty: true" in text


def test_missing_snapshot_names_nearest_ancestor(indexed_repo, cli):
    base = indexed_repo.head()
    indexed_repo.git("checkout", "-q", "-b", "feature")
    feature = indexed_repo.commit("feature work", {"docs/new.md": "# New\n\nfeature doc\n"})
    r = q(cli, indexed_repo, "anything", "--format", "json")
    assert r.code == 3
    err = r.json["error"]
    assert err["code"] == "SNAPSHOT_NOT_INDEXED" and err["category"] == "not_ready"
    assert err["details"] == {"resolvedSha": feature, "nearestIndexedAncestor": base}
    assert err["recovery"] == {"command": f"ragit ingest --since {base}"}
    indexed_repo.git("checkout", "-q", "main")
    assert q(cli, indexed_repo, "anything", "--format", "json").code == 0


def test_at_selects_old_snapshot(indexed_repo, cli):
    old = indexed_repo.head()
    indexed_repo.commit("change", {"docs/plan/roadmap.md": "# Roadmap\n\nnew walrus milestone\n"})
    assert cli("ingest", "--since", old, "--cwd", str(indexed_repo.root), "--format", "json").code == 0
    new_hits = q(cli, indexed_repo, "walrus milestone", "--format", "json", "--view", "full").json["data"]["hits"]
    assert any("walrus" in h["text"] for h in new_hits)
    r = q(cli, indexed_repo, "walrus milestone", "--at", old[:8].upper(), "--format", "json", "--view", "full")
    data = r.json["data"]
    assert data["snapshot"]["selection"] == "explicit-exact" and data["snapshot"]["requestedRef"] == old[:8].upper()
    assert data["snapshotSha"] == old
    assert all("walrus" not in h["text"] for h in data["hits"])


@pytest.mark.parametrize("ref", ["not-a-sha", "main", "abc", "HEAD~1", "v1.0"])
def test_invalid_refs(indexed_repo, cli, ref):
    r = q(cli, indexed_repo, "snapshot", "--at", ref, "--format=json")
    assert r.code == 2 and r.err == ""
    err = r.json["error"]
    assert err["code"] == "SNAPSHOT_REF_INVALID" and err["category"] == "invalid_input" and err["retryable"] is False


def test_invalid_ref_text_goes_to_stderr(indexed_repo, cli):
    r = q(cli, indexed_repo, "snapshot", "--at", "not-a-sha", "--format", "text")
    assert r.code == 2 and r.out == ""
    assert "SNAPSHOT_REF_INVALID" in r.err and "- retryable: false" in r.err and "- recovery:" in r.err


def test_unindexed_head_default_format_prints_both(git_repo, cli):
    write_placeholder_config(git_repo.root)
    git_repo.commit("c", {"a.md": "# A\n\nalpha\n"})
    r = cli("query", "alpha", "--cwd", str(git_repo.root))
    assert r.code == 3
    assert r.json["error"]["code"] == "SNAPSHOT_NOT_INDEXED"
    assert "- code: SNAPSHOT_NOT_INDEXED" in r.err


def test_double_dash_makes_a_literal_question(indexed_repo, cli):
    r = cli("query", "--cwd", str(indexed_repo.root), "--", "--format=json")
    assert r.code == 0
    assert r.out.startswith("# ragit query\n- question: --format=json")


def test_options_anywhere(indexed_repo, cli):
    r = cli("--format=json", "query", "roadmap", "--cwd", str(indexed_repo.root))
    assert r.code == 0 and r.json["command"] == "query"


@pytest.mark.parametrize(
    "args,field,reason",
    [
        (["   "], "question", "empty"),
        (["x", "--top-k", "0"], "--top-k", "out_of_range"),
        (["x", "--top-k", "1.5"], "--top-k", "not_integer"),
        (["x", "--top-k", "abc"], "--top-k", "not_integer"),
        (["x", "--scope", "bogus"], "--scope", "not_one_of"),
        (["x", "--view", "wide"], "--view", "not_one_of"),
        (["x", "--format", "yaml"], "--format", "not_one_of"),
        (["x", "--bogus-option"], "--bogus-option", "usage"),
    ],
)
def test_invalid_inputs_are_typed_and_write_nothing(indexed_repo, cli, args, field, reason):
    before = tree_snapshot(indexed_repo.root)
    r = q(cli, indexed_repo, *args, "--format", "json") if "--format" not in args else q(cli, indexed_repo, *args)
    assert r.code == 2, r
    env = json.loads(r.out)
    assert env["error"]["code"] == "INPUT_INVALID"
    assert env["error"]["details"]["field"] == field
    assert env["error"]["details"]["reason"] == reason
    assert tree_snapshot(indexed_repo.root) == before


def test_bad_format_renders_as_both(indexed_repo, cli):
    r = q(cli, indexed_repo, "x", "--format", "yaml")
    assert r.code == 2
    assert r.json["error"]["details"]["reason"] == "not_one_of"
    assert "- code: INPUT_INVALID" in r.err


def test_input_payload(indexed_repo, cli):
    (indexed_repo.root / "q.json").write_text(json.dumps({"question": "restore auth context", "topK": 2,
                                                           "at": "HEAD", "explain": True}))
    r = q(cli, indexed_repo, "--input", "q.json", "--view", "minimal", "--format", "json")
    data = r.json["data"]
    assert len(data["hits"]) <= 2 and data["explain"] is True
    assert data["snapshot"]["selection"] == "explicit-exact"
    r2 = q(cli, indexed_repo, "--input", "-", "--format", "json", stdin='{"question": "roadmap"}')
    assert r2.code == 0 and r2.json["data"]["query"] == "roadmap"


@pytest.mark.parametrize(
    "payload,args,reason",
    [
        ('{"question": "x"}', ["--explain"], "mixed_input"),
        ('{"question": "x"}', ["positional"], "mixed_input"),
        ('{"question": "x", "extra": 1}', [], "unknown_field"),
        ('{"question": "x", "explain": "true"}', [], "not_boolean"),
        ('{"question": "bell\\u0007"}', [], "control_character"),
        ("{not json", [], "invalid_json"),
        ('{"question": "x", "topK": 1.5}', [], "not_integer"),
    ],
)
def test_input_payload_errors(indexed_repo, cli, payload, args, reason):
    (indexed_repo.root / "q.json").write_text(payload)
    before = tree_snapshot(indexed_repo.root)
    r = q(cli, indexed_repo, *args, "--input", "q.json", "--format", "json")
    assert r.code == 2
    assert r.json["error"]["details"]["reason"] == reason
    assert tree_snapshot(indexed_repo.root) == before


def test_input_outside_repo(indexed_repo, cli, tmp_path):
    (tmp_path / "outside.json").write_text('{"question": "x"}')
    r = q(cli, indexed_repo, "--input", "../outside.json", "--format", "json")
    assert r.json["error"]["details"]["reason"] == "path_outside_repo"
    r = q(cli, indexed_repo, "--input", "missing.json", "--format", "json")
    assert r.json["error"]["details"]["reason"] == "file_not_found"


def test_reads_create_nothing(indexed_repo, cli):
    before = tree_snapshot(indexed_repo.root)
    assert q(cli, indexed_repo, "roadmap", "--format", "json").code == 0
    assert cli("status", "--cwd", str(indexed_repo.root)).code == 0
    assert cli("doctor", "--cwd", str(indexed_repo.root)).code == 0
    assert tree_snapshot(indexed_repo.root) == before


def test_store_missing_is_typed(indexed_repo, cli):
    import shutil

    shutil.rmtree(indexed_repo.root / ".ragit" / "store")
    r = q(cli, indexed_repo, "roadmap", "--format", "json")
    assert r.code == 3
    assert r.json["error"]["code"] == "SNAPSHOT_STORE_UNAVAILABLE"
    assert r.json["error"]["details"]["reason"] == "store_missing"


def test_corrupt_manifest_exit_4(indexed_repo, cli):
    head = indexed_repo.head()
    path = indexed_repo.root / ".ragit" / "manifest" / f"{head}.json"
    path.write_text('{"commitSha":')
    r = q(cli, indexed_repo, "roadmap", "--format", "json")
    assert r.code == 4 and r.json["error"]["code"] == "SNAPSHOT_MANIFEST_INVALID"
    path.write_text(json.dumps({"commitSha": head, "parentSha": None, "createdAt": "x", "indexVersion": 999}))
    r = q(cli, indexed_repo, "roadmap", "--format", "json")
    assert r.code == 4 and r.json["error"]["code"] == "SNAPSHOT_SCHEMA_UNSUPPORTED"


def test_manifest_not_in_store_points_to_rebuild(indexed_repo, cli):
    head = indexed_repo.head()
    path = indexed_repo.root / ".ragit" / "manifest" / f"{head}.json"
    data = json.loads(path.read_text())
    data["createdAt"] = "2000-01-01T00:00:00.000Z"
    path.write_text(json.dumps(data))
    r = q(cli, indexed_repo, "roadmap", "--format", "json")
    assert r.code == 3
    err = r.json["error"]
    assert err["details"] == {"resolvedSha": head, "reason": "snapshot_not_in_store"}
    assert err["recovery"]["command"] == f"ragit migrate rebuild --at {head}"
