"""Query-time filters `--path GLOB` and `--exclude-tests` (knowledge §12.1, context §1): in the
CLI, the `--input` payload, the Python API and the MCP tools, for `query` and `context pack`."""

from __future__ import annotations

import json

import pytest

from conftest import write_placeholder_config

FILES = {
    "src/auth/tokens.py": "def rotate_token(token):\n    \"\"\"Rotate a refresh token.\"\"\"\n    return token[::-1]\n",
    "src/auth/session.py": "def refresh_session(session):\n    return rotate_token(session.token)\n",
    "tests/test_tokens.py": "def test_rotate_token():\n    assert rotate_token('ab') == 'ba'\n",
    "src/auth/tokens_test.go": "package auth\n\nfunc TestRotateToken(t *testing.T) { rotateToken() }\n",
    "docs/tokens.md": "# Tokens\n\nRefresh tokens rotate on every use.\n",
}


@pytest.fixture
def repo(git_repo, cli):
    write_placeholder_config(git_repo.root)
    git_repo.commit("initial", FILES)
    assert cli("ingest", "--all", "--cwd", str(git_repo.root), "--format", "json").code == 0
    return git_repo


def paths(result) -> list[str]:
    assert result.code == 0, result
    return [h["path"] for h in result.json["data"]["hits"]]


def test_path_globs_and_exclude_tests_in_query(repo, cli):
    base = ["query", "rotate refresh token", "--top-k", "20", "--cwd", str(repo.root), "--format", "json"]
    everything = paths(cli(*base))
    assert {"tests/test_tokens.py", "src/auth/tokens_test.go", "docs/tokens.md"} <= set(everything)
    assert set(paths(cli(*base, "--path", "src/**"))) == {"src/auth/tokens.py", "src/auth/session.py",
                                                          "src/auth/tokens_test.go"}
    assert set(paths(cli(*base, "--path", "docs/*.md", "--path", "tests/**"))) == {"docs/tokens.md",
                                                                                   "tests/test_tokens.py"}
    no_tests = set(paths(cli(*base, "--exclude-tests")))
    assert no_tests == {"src/auth/tokens.py", "src/auth/session.py", "docs/tokens.md"}  # Python and Go tests out
    assert paths(cli(*base, "--path", "tests/**", "--exclude-tests")) == []


def test_filters_keep_the_snapshot_statistics(repo, cli):
    """A filter removes candidates; it does not change what a term is worth (keyword statistics
    stay the snapshot's), and vector scores are untouched."""
    base = ["query", "rotate refresh token", "--top-k", "20", "--cwd", str(repo.root), "--format", "json"]
    full = {h["chunkId"] if "chunkId" in h else h["citation"]["id"]: h for h in cli(*base, "--view", "full").json["data"]["hits"]}
    only = cli(*base, "--path", "src/auth/session.py", "--view", "full").json["data"]["hits"]
    assert [h["path"] for h in only] == ["src/auth/session.py"]
    same = full[only[0]["citation"]["id"]]
    assert only[0]["scoreVector"] == same["scoreVector"]
    assert only[0]["scoreKeyword"] == 1.0  # the best remaining lexical match, normalised by max


def test_filters_in_input_payload_api_and_pack(repo, cli):
    from ragit import Repo

    payload = {"question": "rotate refresh token", "topK": 20, "paths": ["src/**"], "excludeTests": True}
    (repo.root / "q.json").write_text(json.dumps(payload))
    via_input = paths(cli("query", "--input", "q.json", "--cwd", str(repo.root), "--format", "json"))
    api = Repo.open(repo.root)
    via_api = [h.path for h in api.query("rotate refresh token", top_k=20, paths=["src/**"], exclude_tests=True).hits]
    assert via_input == via_api and set(via_api) == {"src/auth/tokens.py", "src/auth/session.py"}
    pack = cli("context", "pack", "rotate refresh token", "--path", "docs/**", "--cwd", str(repo.root),
               "--format", "json")
    assert paths(pack) == ["docs/tokens.md"]
    packed = api.pack("rotate refresh token", exclude_tests=True)
    assert all("test" not in h.path for h in packed.hits)


@pytest.mark.parametrize(("args", "field", "reason"), [
    (["--path", "../outside/**"], "--path", "glob_outside_repo"),
    (["--path", "a/**,b/**"], "--path", "invalid_value"),
])
def test_bad_path_globs_are_input_invalid(repo, cli, args, field, reason):
    r = cli("query", "token", *args, "--cwd", str(repo.root), "--format", "json")
    assert r.code == 2 and r.json["error"]["details"]["field"] == field
    assert r.json["error"]["details"]["reason"] == reason


@pytest.mark.parametrize(("payload", "field"), [
    ({"question": "t", "paths": "src/**"}, "input.paths"),
    ({"question": "t", "paths": [3]}, "input.paths[0]"),
    ({"question": "t", "paths": ["/etc/**"]}, "input.paths[0]"),
    ({"question": "t", "excludeTests": "yes"}, "input.excludeTests"),
])
def test_bad_filter_payloads_are_input_invalid(repo, cli, payload, field):
    (repo.root / "q.json").write_text(json.dumps(payload))
    r = cli("query", "--input", "q.json", "--cwd", str(repo.root), "--format", "json")
    assert r.code == 2 and r.json["error"]["details"]["field"] == field


def test_filters_mixed_with_input_are_rejected(repo, cli):
    (repo.root / "q.json").write_text(json.dumps({"question": "t"}))
    for flag in (["--path", "src/**"], ["--exclude-tests"]):
        r = cli("query", "--input", "q.json", *flag, "--cwd", str(repo.root), "--format", "json")
        assert r.code == 2 and r.json["error"]["details"]["reason"] == "mixed_input"
        r = cli("context", "pack", "--input", "q.json", *flag, "--cwd", str(repo.root), "--format", "json")
        assert r.code == 2 and r.json["error"]["details"]["reason"] == "mixed_input"


def test_mcp_tools_take_the_filters(repo):
    from ragit.mcp.schemas import CONTEXT_PACK, QUERY
    from ragit.mcp.tools import Workspace, call_tool

    for schema in (QUERY, CONTEXT_PACK):
        assert schema["properties"]["paths"]["type"] == "array"
        assert schema["properties"]["excludeTests"]["type"] == "boolean"
    ws = Workspace(repo.root, True)
    result = call_tool(ws, "query", {"question": "rotate refresh token", "topK": 20, "paths": ["tests/**"]})
    assert not result.is_error
    assert {h["path"] for h in result.structured["hits"]} == {"tests/test_tokens.py"}
    result = call_tool(ws, "context_pack", {"goal": "rotate refresh token", "excludeTests": True})
    assert not result.is_error and all("test" not in h["path"] for h in result.structured["hits"])
