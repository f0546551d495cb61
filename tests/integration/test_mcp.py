"""`ragit mcp`: the MCP server over stdio, driven by the official SDK client (cli-contract §11).

One real server subprocess serves most calls; it reads `.ragit/config.toml` of the temp
repository (the placeholder embedder of `indexed_repo`).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import anyio
import pytest

from ragit.context.bridge import RETRIEVE_KEYS
from ragit.context.packet import CANDIDATE_FIELDS, REQUEST_FIELDS, TASK_ANCHOR_FIELDS
from ragit.contract.payloads import PACK_KEYS, QUERY_KEYS
from ragit.mcp import schemas
from ragit.mcp.tools import TOOLS
from ragit.memory.artifacts import CAPTURE_FIELDS, EVIDENCE_FIELDS
from ragit.memory.promote import CANDIDATE_KEYS as PROMOTION_KEYS
from ragit.memory.working import DECISION_KEYS, OPEN_LOOP_KEYS, WRAP_KEYS

READ_ONLY = {
    "query": True, "context_pack": True, "context_packet": True, "memory_recall": True, "memory_wrap": False,
    "artifact_capture": False, "tool_result_recall": True, "session_search": True, "verify_citation": True,
}
SNAPSHOT_KEYS = ["requestedRef", "resolvedSha", "selection", "status", "branch", "detached", "worktreeDirty"]
ANCHOR = {"goal": "locate a single test failure", "stopCondition": "stop when direct evidence is missing",
          "verificationTarget": "the failing test name"}
SECRET = "sk-abcdefghijklmnopqrstuvwxyz012345"

Body = Callable[[Any], Awaitable[Any]]


def run_server(root: Path, errlog: Path, body: Body) -> Any:
    """Spawn `ragit mcp --cwd root`, initialise a client session and run ``body(session)``.

    Every stdout line must be a protocol message: anything else reaches the message handler as
    an exception, and the call fails.
    """
    from mcp.client.session import ClientSession
    from mcp.client.stdio import StdioServerParameters, stdio_client

    params = StdioServerParameters(command=sys.executable, args=["-m", "ragit", "mcp", "--cwd", str(root)],
                                   env=dict(os.environ))
    stray: list[Exception] = []

    async def on_message(message: Any) -> None:
        if isinstance(message, Exception):
            stray.append(message)

    async def main() -> Any:
        with errlog.open("w", encoding="utf-8") as err:
            async with (stdio_client(params, errlog=err) as (read, write),
                        ClientSession(read, write, message_handler=on_message) as session):
                await session.initialize()
                return await body(session)

    result = anyio.run(main)
    assert stray == [], stray
    return result


async def call(session: Any, name: str, arguments: dict[str, Any], *, error: bool = False) -> dict[str, Any]:
    """Call a tool; the text content is always the serialised structured content or the failure block."""
    result = await session.call_tool(name, arguments)
    assert result.is_error is error, (name, result.structured_content)
    data = result.structured_content
    text = result.content[0].text
    if error:
        assert text.startswith(f"[ragit] error ({data['category']})\n- code: {data['code']}\n"), text
        assert list(data) == ["code", "category", "message", "retryable", "details", "recovery"]
    else:
        assert json.loads(text) == data
        assert list(data["snapshot"]) == SNAPSHOT_KEYS
    return data


def offload(root: Path, session: str, ref: str, result: Any) -> None:
    from ragit.window.offload import OffloadStore

    OffloadStore(root / ".ragit" / "cache" / "tool-offload", session).write(ref, result)


def mirror(root: Path) -> None:
    from ragit.sessions.store import SessionStore, session_db_path

    with SessionStore(session_db_path(root)) as store:
        store.mirror("s1", [{"role": "user", "content": "Why do we rotate the refresh token?"},
                            {"role": "assistant", "content": "A stolen refresh token becomes useless."}])


def test_server_lists_and_runs_every_tool(indexed_repo, tmp_path):
    root = indexed_repo.root
    head = indexed_repo.head()
    offload(root, "s1", "call_1", {"rows": [1, 2, 3], "text": "page 1"})
    offload(root, "s1", "call_2", "plain text result")
    mirror(root)
    # over MCP evidence files must lie inside the repository (.ragit/ never makes it dirty)
    (root / ".ragit" / "cache").mkdir(parents=True, exist_ok=True)
    (root / ".ragit" / "cache" / "test-output.txt").write_text(
        "FAILED tests/test_auth.py::test_rotate - AssertionError\n", encoding="utf-8")
    test_output = ".ragit/cache/test-output.txt"
    outside = tmp_path / "outside.txt"
    outside.write_text("secret elsewhere\n", encoding="utf-8")

    async def body(session):
        listing = await session.list_tools()
        tools = {t.name: t for t in listing.tools}
        assert list(tools) == list(READ_ONLY)
        assert {name: t.annotations.read_only_hint for name, t in tools.items()} == READ_ONLY
        for t in tools.values():
            assert t.input_schema["type"] == "object" and t.input_schema["properties"], t.name
            assert t.input_schema["additionalProperties"] is False
            assert t.output_schema["required"] == ["snapshot"]
        out: dict[str, Any] = {}

        out["query"] = await call(session, "query", {"question": "restore auth context", "view": "minimal"})
        out["pack"] = await call(session, "context_pack", {"goal": "token rotation", "budget": 300})
        out["ready"] = await call(session, "context_packet", {
            "taskAnchor": ANCHOR, "budgetUnits": 400, "retrieve": {"goal": "token rotation", "budget": 200},
            "evidence": [test_output]})
        out["outside"] = await session.call_tool("context_packet", {
            "taskAnchor": ANCHOR, "budgetUnits": 400, "evidence": [str(outside)]})
        out["blocked"] = await call(session, "context_packet", {
            "taskAnchor": ANCHOR, "budgetUnits": 8,
            "candidates": [{"id": "c1", "kind": "direct-evidence", "relevance": "current", "freshness": "fresh",
                            "sizeUnits": 3, "content": "assertion failure summary"}]})
        out["dry_wrap"] = await call(session, "memory_wrap", {"goal": "g", "summary": "s", "dryRun": True})
        out["wrap_dir_after_dry_run"] = (root / ".ragit" / "memory").exists()
        out["wrap"] = await call(session, "memory_wrap", {
            "goal": "finish token rotation", "summary": "rotation done, docs pending",
            "openLoops": [{"title": "update docs", "nextAction": "edit the ADR"}]})
        out["recall"] = await call(session, "memory_recall", {"goal": "finish token rotation"})
        out["capture"] = await call(session, "artifact_capture", {
            "scope": "session", "kind": "finding", "title": "Tokens rotate", "text": "Refresh tokens rotate on use."})
        out["recall_object"] = await call(session, "tool_result_recall", {"refId": "call_1", "sessionId": "s1"})
        out["recall_string"] = await call(session, "tool_result_recall", {"refId": "call_2", "sessionId": "s1"})
        out["search"] = await call(session, "session_search", {"query": "refresh token", "limit": 500})
        citation = out["query"]["hits"][0]["citation"]["id"]
        out["verify"] = await call(session, "verify_citation", {"citation": citation})

        # typed failures are tool errors carrying the §5 error object
        out["unknown_field"] = await call(session, "query", {"question": "x", "bogus": 1}, error=True)
        out["empty"] = await call(session, "context_pack", {"goal": "  "}, error=True)
        out["bad_view"] = await call(session, "memory_recall", {"goal": "g", "view": "huge"}, error=True)
        out["bad_packet"] = await call(session, "context_packet", {"taskAnchor": ANCHOR}, error=True)
        out["secret_ref"] = await call(session, "query", {"question": "x", "at": SECRET}, error=True)
        out["unavailable"] = await call(session, "tool_result_recall", {"refId": "nope", "sessionId": "s1"},
                                        error=True)
        out["unknown_tool"] = await call(session, "frobnicate", {}, error=True)

        # a new commit leaves HEAD unindexed, seen by the same long-running server
        cited = out["query"]["hits"][0]["path"]
        indexed_repo.commit("rewrite", {cited: "# Rewritten\n\nNothing of the old text is left.\n"})
        out["not_indexed"] = await call(session, "query", {"question": "restore auth context"}, error=True)
        out["drifted"] = await call(session, "verify_citation", {"citation": citation})
        out["search_after"] = await call(session, "session_search", {"query": "refresh token"})
        out["recall_degraded"] = await call(session, "memory_recall", {"goal": "finish token rotation"})
        return out

    out = run_server(root, tmp_path / "server.err", body)
    indexed = {"requestedRef": "HEAD", "resolvedSha": head, "selection": "head-exact", "status": "indexed",
               "branch": "main", "detached": False, "worktreeDirty": False}

    # the command's data, with its own snapshot block
    q = out["query"]
    assert list(q)[:4] == ["query", "scope", "snapshotSha", "snapshot"] and q["snapshot"] == indexed
    assert q["hits"] and "text" not in q["hits"][0]  # view minimal
    assert out["pack"]["snapshot"] == indexed and out["pack"]["usedTokens"] <= 300
    ready = out["ready"]
    assert ready["snapshot"] == indexed and ready["snapshotSha"] == head
    assert any(s["id"] == f"file:{test_output}" for s in ready["packet"]["selected"])
    assert out["outside"].is_error
    assert out["outside"].structured_content["details"]["reason"] == "path_outside_repo"
    assert out["recall"]["snapshot"] == indexed and out["recall"]["openLoops"][0]["title"] == "update docs"

    # commands without a snapshot block get HEAD's, appended last
    blocked = out["blocked"]
    assert (blocked["state"], blocked["phase"], list(blocked)[-1]) == ("blocked", "missing_provenance", "snapshot")
    assert blocked["snapshot"] == indexed
    assert out["dry_wrap"]["dryRun"] is True and out["wrap_dir_after_dry_run"] is False
    wrap = out["wrap"]
    assert wrap["dryRun"] is False and (root / wrap["currentPath"]).is_file() and wrap["snapshot"] == indexed
    assert out["recall"]["latestSessionId"] == wrap["sessionId"]
    capture = out["capture"]
    assert capture["artifactId"].startswith("art-") and capture["status"] == "captured"
    assert capture["boundSha"] == head and list(capture)[-1] == "snapshot"
    assert out["recall_object"] == {"rows": [1, 2, 3], "text": "page 1", "snapshot": indexed}
    assert out["recall_string"] == {"result": "plain text result", "snapshot": indexed}
    search = out["search"]
    assert search["matched"] is True and search["count"] >= 1 and search["hits"][0]["trust"] == "artifact"
    assert out["verify"]["status"] == "ok" and out["verify"]["snapshot"] == indexed

    details = out["unknown_field"]["details"]
    assert out["unknown_field"]["code"] == "INPUT_INVALID"
    assert (details["field"], details["reason"]) == ("input.bogus", "unknown_field")
    assert details["allowed"] == list(QUERY_KEYS) + ["view"]
    assert out["unknown_field"]["recovery"] == {"command": "ragit describe query"}
    assert out["empty"]["details"] == {"field": "input.goal", "reason": "empty"}
    assert (out["bad_view"]["details"]["field"], out["bad_view"]["details"]["reason"]) == ("view", "not_one_of")
    assert out["bad_packet"]["details"] == {"field": "input.budgetUnits", "reason": "required"}
    secret = out["secret_ref"]
    assert secret["code"] == "SNAPSHOT_REF_INVALID" and SECRET not in json.dumps(secret)
    assert out["unavailable"]["code"] == "TOOL_RESULT_UNAVAILABLE"
    assert out["unavailable"]["details"] == {"refId": "nope", "reason": "not_found"}
    assert out["unknown_tool"]["code"] == "COMMAND_UNKNOWN"

    new_head = indexed_repo.head()
    not_indexed = out["not_indexed"]
    assert (not_indexed["code"], not_indexed["category"]) == ("SNAPSHOT_NOT_INDEXED", "not_ready")
    assert not_indexed["details"]["resolvedSha"] == new_head
    drifted = out["drifted"]
    assert drifted["status"] == "changed" and drifted["head"] == new_head
    assert out["search_after"]["snapshot"] == dict(indexed, resolvedSha=new_head, status="missing")
    degraded = out["recall_degraded"]
    assert degraded["snapshot"]["status"] == "unavailable" and degraded["snapshot"]["resolvedSha"] == new_head
    assert "Traceback" not in (tmp_path / "server.err").read_text(encoding="utf-8")


def test_schemas_mirror_the_input_allow_lists():
    """Each schema's properties are exactly the allow-list its validator enforces (+ the MCP extras)."""
    properties = {tool.name: list(tool.input_schema["properties"]) for tool in TOOLS}
    assert properties == {
        "query": list(QUERY_KEYS) + ["view"],
        "context_pack": list(PACK_KEYS) + ["view"],
        "context_packet": list(REQUEST_FIELDS) + ["retrieve", "evidence"],
        "memory_recall": ["goal", "view"],
        "memory_wrap": list(WRAP_KEYS) + ["dryRun"],
        "artifact_capture": list(CAPTURE_FIELDS) + ["dryRun"],
        "tool_result_recall": ["refId", "sessionId"],
        "session_search": ["query", "scope", "session_id", "project_id", "limit", "prefer_trigram",
                           "include_artifacts", "artifact_kinds"],
        "verify_citation": ["citation"],
    }
    packet = schemas.CONTEXT_PACKET["properties"]
    assert list(packet["taskAnchor"]["properties"]) == list(TASK_ANCHOR_FIELDS)
    assert list(packet["candidates"]["items"]["properties"]) == list(CANDIDATE_FIELDS)
    assert list(packet["retrieve"]["properties"]) == list(RETRIEVE_KEYS)
    wrap = schemas.MEMORY_WRAP["properties"]
    assert list(wrap["decisions"]["items"]["properties"]) == list(DECISION_KEYS)
    assert list(wrap["openLoops"]["items"]["properties"]) == list(OPEN_LOOP_KEYS)
    assert list(wrap["promotionCandidates"]["items"]["properties"]) == list(PROMOTION_KEYS)
    assert list(schemas.ARTIFACT_CAPTURE["properties"]["evidence"]["items"]["properties"]) == list(EVIDENCE_FIELDS)
    with pytest.raises(ValueError):
        schemas.object_schema(("a", "b"), {"a": {"type": "string"}})


def test_tool_arguments_are_validated_like_cli_input(indexed_repo, cli):
    """The same payload fails the same way through --input and through the tool."""
    from ragit.mcp.tools import Workspace, call_tool

    indexed_repo.write("bad.json", json.dumps({"goal": "g", "summary": "s", "decisions": ["not an object"]}))
    r = cli("memory", "wrap", "--input", "bad.json", "--cwd", str(indexed_repo.root), "--format", "json")
    tool = call_tool(Workspace(indexed_repo.root, True), "memory_wrap",
                     {"goal": "g", "summary": "s", "decisions": ["not an object"]})
    assert r.code == 2 and tool.is_error
    assert tool.structured == r.json["error"]
    control = call_tool(Workspace(indexed_repo.root, True), "query", {"question": "bell \u0007"})
    assert control.structured["details"] == {"field": "input.question", "reason": "control_character"}


def test_describe_lists_the_tools(cli):
    from ragit.cli.commands_mcp import TOOL_NAMES

    assert TOOL_NAMES == tuple(tool.name for tool in TOOLS)
    r = cli("describe", "mcp")
    assert r.code == 0, r
    spec = r.json["data"]["spec"]
    assert spec["outputSchemaSummary"] == [f"tools/{tool.name}" for tool in TOOLS]
    assert [o["name"] for o in spec["options"]] == ["--cwd"]


def test_missing_cwd_fails_before_serving(tmp_path, cli):
    r = cli("mcp", "--cwd", str(tmp_path / "missing"))
    assert r.code == 2, r
    assert r.out == ""  # stdout belongs to the protocol: a start-up failure goes to stderr
    assert "- code: INPUT_INVALID" in r.err and '"reason":"file_not_found"' in r.err


def test_other_commands_do_not_import_the_sdk():
    code = ("import sys\nfrom ragit.cli.main import main\n"
            "try:\n    main(['--help'])\nexcept SystemExit:\n    pass\n"
            "print(sorted(m for m in sys.modules\n"
            "             if m.split('.')[0] in ('mcp', 'mcp_types') or m.startswith('ragit.mcp')))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip().splitlines()[-1] == "[]"
