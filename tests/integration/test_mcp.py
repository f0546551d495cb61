"""`ragit mcp`: the MCP server over stdio, driven by the official SDK client (cli-contract §11).

One real server subprocess serves most calls; it reads `.ragit/config.toml` of the temp
repository (the placeholder embedder of `indexed_repo`).
"""

from __future__ import annotations

import json
import os
import queue
import subprocess
import sys
import threading
import time
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import anyio
import pytest
from mcp.shared.exceptions import MCPError

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


ERROR_KEYS = ["code", "category", "message", "retryable", "details", "recovery"]


def tool_error(result: Any) -> dict[str, Any]:
    """The error object of a tool error: its text content, as compact JSON; no structured content
    (the TypeScript SDK would check it against the output schema and drop the typed error)."""
    assert result.is_error is True
    assert result.structured_content is None
    text = result.content[0].text
    assert "\n" not in text
    data = json.loads(text)
    assert list(data) == ERROR_KEYS
    return data


def has_null_key(value: Any) -> bool:
    if isinstance(value, list):
        return any(has_null_key(v) for v in value)
    if isinstance(value, dict):
        return any(v is None or has_null_key(v) for v in value.values())
    return False


async def call(session: Any, name: str, arguments: dict[str, Any], *, error: bool = False) -> dict[str, Any]:
    """Call a tool; the text content is the compact JSON of the structured content or of the error object."""
    result = await session.call_tool(name, arguments)
    assert result.is_error is error, (name, result.content[0].text[:500])
    if error:
        return tool_error(result)
    data = result.structured_content
    text = result.content[0].text
    assert json.loads(text) == data and "\n" not in text
    assert not has_null_key(data), data
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
        out["branch_ref"] = await call(session, "query", {"question": "x", "at": "main"}, error=True)
        out["branch_ref_pack"] = await call(session, "context_pack", {"goal": "x", "at": "main"}, error=True)
        out["unavailable"] = await call(session, "tool_result_recall", {"refId": "nope", "sessionId": "s1"},
                                        error=True)
        try:  # naming no tool is a protocol error, still typed through its data
            await session.call_tool("frobnicate", {})
            out["unknown_tool"] = None
        except MCPError as exc:
            out["unknown_tool"] = (exc.error.code, exc.error.data)

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
    assert tool_error(out["outside"])["details"]["reason"] == "path_outside_repo"
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

    # a branch names a commit: refused as on the CLI, with the commit to retry with
    for key in ("branch_ref", "branch_ref_pack"):
        assert out[key]["code"] == "SNAPSHOT_REF_INVALID" and out[key]["details"]["resolvedSha"] == head
        assert head in out[key]["message"]

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
    rpc_code, data = out["unknown_tool"]
    assert rpc_code == -32602 and data["code"] == "COMMAND_UNKNOWN" and list(data) == ERROR_KEYS

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
    assert r.code == 2 and tool.is_error and tool.structured is None
    assert tool.error == r.json["error"] == json.loads(tool.text)
    control = call_tool(Workspace(indexed_repo.root, True), "query", {"question": "bell \u0007"})
    assert control.error["details"] == {"field": "input.question", "reason": "control_character"}


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


# ---------------------------------------------------------------- raw JSON-RPC (what SDK clients never send)

class RawServer:
    """`ragit mcp` as a subprocess driven with raw JSON-RPC lines on stdin.

    SDK clients never send malformed requests, so only raw lines show that every request is
    answered. A thread pumps stdout lines into a queue, so a missing answer is a timeout.
    """

    def __init__(self, root: Path, errlog: Path):
        self._err = errlog.open("w", encoding="utf-8")
        self.proc = subprocess.Popen([sys.executable, "-m", "ragit", "mcp", "--cwd", str(root)],
                                     stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=self._err)
        self.lines: queue.Queue[bytes | None] = queue.Queue()
        threading.Thread(target=self._pump, daemon=True).start()
        self.send({"jsonrpc": "2.0", "id": 1, "method": "initialize",
                   "params": {"protocolVersion": "2025-06-18", "capabilities": {},
                              "clientInfo": {"name": "raw", "version": "1"}}})
        assert self.recv()["id"] == 1
        self.send({"jsonrpc": "2.0", "method": "notifications/initialized"})

    def _pump(self) -> None:
        assert self.proc.stdout is not None
        for line in self.proc.stdout:
            self.lines.put(line)
        self.lines.put(None)

    def send(self, message: dict[str, Any] | str) -> None:
        line = message if isinstance(message, str) else json.dumps(message)
        assert self.proc.stdin is not None
        self.proc.stdin.write(line.encode("utf-8") + b"\n")
        self.proc.stdin.flush()

    def recv(self, timeout: float = 20.0) -> dict[str, Any]:
        line = self.lines.get(timeout=timeout)  # queue.Empty: the request was never answered
        assert line is not None, "the server exited"
        return json.loads(line)

    def close(self) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.close()
        self.proc.wait(timeout=20)
        self._err.close()

    def __enter__(self) -> RawServer:
        return self

    def __exit__(self, *exc: object) -> None:
        if self.proc.poll() is None:
            self.close()


def rpc_call(rid: int | str, name: str, arguments: Any) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "id": rid, "method": "tools/call", "params": {"name": name, "arguments": arguments}}


def error_text(response: dict[str, Any]) -> dict[str, Any]:
    """The error object of a tool error in a raw response."""
    result = response["result"]
    assert result["isError"] is True and "structuredContent" not in result, result
    return json.loads(result["content"][0]["text"])


def test_malformed_requests_are_answered(indexed_repo, tmp_path):
    """Each of these went unanswered (the client hung) or is answered with the right code."""
    deep: Any = "x"
    for _ in range(100):
        deep = [deep]
    requests: list[dict[str, Any] | str] = [
        {"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": ["query", {"question": "x"}]},
        {"jsonrpc": "2.0", "id": 3, "method": "tools/list", "params": "all"},
        rpc_call(4, "frobnicate", {}),
        rpc_call(5, "query", [1, 2]),
        {"jsonrpc": "2.0", "id": 6, "method": "tools/call", "params": {"arguments": {}}},
        # a lone surrogate escape and a NaN literal: Python's reader keeps them, the tool rejects them
        '{"jsonrpc":"2.0","id":"s7","method":"tools/call","params":{"name":"query","arguments":{"question":"\\ud800"}}}',
        '{"jsonrpc":"2.0","id":8,"method":"tools/call","params":{"name":"query","arguments":{"question":"x","topK":NaN}}}',
        rpc_call(9, "query", {"question": "x", "paths": deep}),
        rpc_call(10, "query", {"question": "x", "bogus": 1}),
        "this is not JSON",
        "[1, 2]",
        {"jsonrpc": "1.0", "id": 11, "method": "ping"},
    ]
    with RawServer(indexed_repo.root, tmp_path / "server.err") as server:
        for request in requests:
            server.send(request)
        answers = [server.recv() for _ in requests]
        server.send({"jsonrpc": "2.0", "id": 12, "method": "ping"})
        assert server.recv() == {"jsonrpc": "2.0", "id": 12, "result": {}}  # still serving
    by_id = {a["id"]: a for a in answers if a["id"] is not None}
    anonymous = [a["error"]["code"] for a in answers if a["id"] is None]

    for rid in (2, 3, 4, 5, 6):
        assert by_id[rid]["error"]["code"] == -32602, by_id[rid]
    assert "an array" in by_id[2]["error"]["message"] and "a string" in by_id[3]["error"]["message"]
    unknown = by_id[4]["error"]["data"]
    assert unknown["code"] == "COMMAND_UNKNOWN" and list(unknown) == ERROR_KEYS
    assert error_text(by_id["s7"])["details"] == {"field": "input.question", "reason": "lone_surrogate"}
    assert error_text(by_id[8])["details"] == {"field": "input.topK", "reason": "non_finite_number"}
    assert error_text(by_id[9])["details"]["reason"] == "too_deep"
    # a schema mismatch inside the arguments is a tool error the model can read (MCP SEP-1303)
    assert error_text(by_id[10])["details"]["reason"] == "unknown_field"
    assert by_id[11]["error"]["code"] == -32600
    assert sorted(anonymous) == [-32700, -32600]
    assert "Traceback" not in (tmp_path / "server.err").read_text(encoding="utf-8")


def test_huge_arguments_are_rejected_by_size_first(indexed_repo, tmp_path):
    """A 10 MB question is refused by its length before any pass reads it, and not echoed."""
    ten_mb = "restore auth context " * 500_000
    with RawServer(indexed_repo.root, tmp_path / "server.err") as server:
        started = time.monotonic()
        server.send(rpc_call(2, "query", {"question": ten_mb}))
        question = server.recv(timeout=30)
        question_s = time.monotonic() - started
        server.send(rpc_call(3, "session_search", {"query": ten_mb}))
        search = server.recv(timeout=30)
        server.send(rpc_call(4, "memory_wrap", {"goal": "g", "summary": ten_mb}))
        payload = server.recv(timeout=30)
    assert error_text(question)["details"] == {"field": "input.question", "reason": "too_large"}
    assert error_text(search)["details"] == {"field": "input.query", "reason": "too_large"}
    assert error_text(payload)["details"] == {"field": "input", "reason": "too_large"}
    assert question_s < 10, question_s  # about 0.1 s: parsing the line is the only pass over it
    assert all(len(json.dumps(r)) < 2000 for r in (question, search, payload))
    assert not (indexed_repo.root / ".ragit" / "memory").exists()


def test_a_slow_call_does_not_block_the_others(indexed_repo, tmp_path):
    """While a slow session search runs, listings, pings, a read and a write all answer.

    The slow call is real: FTS5 evaluates an AND of N identical terms in about N x matching rows,
    so 3,500 repetitions of a word over 2,000 mirrored messages take seconds.
    """
    _slow_search_repo(indexed_repo.root)
    with RawServer(indexed_repo.root, tmp_path / "server.err") as server:
        server.send(rpc_call(2, "query", {"question": "warm up the repo"}))
        assert "result" in server.recv()
        started = time.monotonic()
        server.send(rpc_call(10, "session_search", {"query": " ".join(["token"] * 3500)}))
        time.sleep(0.2)  # the slow call is running
        sent = time.monotonic()
        server.send({"jsonrpc": "2.0", "id": 11, "method": "tools/list"})
        server.send({"jsonrpc": "2.0", "id": 12, "method": "ping"})
        server.send(rpc_call(13, "query", {"question": "restore auth context"}))
        server.send(rpc_call(14, "memory_wrap", {"goal": "g", "summary": "s", "dryRun": True}))
        order, at = [], {}
        for _ in range(5):
            answer = server.recv(timeout=60)
            order.append(answer["id"])
            at[answer["id"]] = time.monotonic()
            assert "error" not in answer and not answer["result"].get("isError"), answer
    slow_s = at[10] - started
    assert slow_s > 1.0, f"the slow call took {slow_s:.2f} s: pick a slower real operation"
    assert order[-1] == 10, order
    assert max(at[i] for i in (11, 12, 13, 14)) - sent < 0.5 * slow_s, {i: at[i] - sent for i in at}


def _slow_search_repo(root: Path) -> None:
    """Mirror enough messages that a session search of 3,500 identical terms takes seconds."""
    from ragit.sessions.store import SessionStore, session_db_path

    with SessionStore(session_db_path(root)) as store:
        store.mirror("s1", [{"role": "user", "content": f"refresh token rotation note {i}"} for i in range(2000)])


def test_requests_read_before_end_of_input_are_answered(indexed_repo, tmp_path):
    """A client that writes its requests and closes stdin gets every answer: the SDK's loop
    cancelled the handlers still running at end of input, so the slow one went unanswered."""
    _slow_search_repo(indexed_repo.root)
    with RawServer(indexed_repo.root, tmp_path / "server.err") as server:
        server.send(rpc_call(2, "session_search", {"query": " ".join(["token"] * 3500)}))
        server.send(rpc_call(3, "query", {"question": "restore auth context"}))
        assert server.proc.stdin is not None
        server.proc.stdin.close()  # end of input while both calls run
        answers = {a["id"]: a for a in (server.recv(timeout=60), server.recv(timeout=60))}
        assert server.proc.wait(timeout=60) == 0
    assert set(answers) == {2, 3}
    assert all("error" not in a and not a["result"].get("isError") for a in answers.values()), answers


def test_a_cancelled_request_is_not_waited_for_at_end_of_input(indexed_repo, tmp_path):
    """A request the client cancelled gets no answer (MCP: the receiver should not send one),
    so the end of input must not wait for it: the server exits."""
    _slow_search_repo(indexed_repo.root)
    with RawServer(indexed_repo.root, tmp_path / "server.err") as server:
        server.send(rpc_call(2, "session_search", {"query": " ".join(["token"] * 3500)}))
        # ids no request can have are ignored (an array once took the server down: unhashable)
        for odd in ([2], {"id": 2}, None, 2.5, True):
            server.send({"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": odd}})
        server.send({"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": 2}})
        assert server.proc.stdin is not None
        server.proc.stdin.close()
        assert server.proc.wait(timeout=60) == 0
        assert server.lines.get(timeout=10) is None  # stdout closed with no answer to the cancelled call


# ---------------------------------------------------------------- outputs, limits, the warm pool

def test_outputs_are_compact_and_minimal_by_default(indexed_repo, cli):
    """No null-valued keys, one-line JSON, minimal view unless `view` asks; the declared output
    schema still validates (a detached HEAD has no `branch`)."""
    import jsonschema

    from ragit.mcp.tools import Workspace, call_tool

    ws = Workspace(indexed_repo.root, True)
    minimal = call_tool(ws, "query", {"question": "restore auth context", "topK": 3})
    default = call_tool(ws, "query", {"question": "restore auth context", "topK": 3, "view": "default"})
    full = call_tool(ws, "query", {"question": "restore auth context", "topK": 1, "view": "full"})
    hit = minimal.structured["hits"][0]
    assert "excerpt" in hit and "scoreVector" not in hit and "text" not in hit
    assert "scoreVector" in default.structured["hits"][0] and "text" in full.structured["hits"][0]
    assert "artifactId" not in hit and "confidence" not in hit  # null in the CLI's data
    assert minimal.text == json.dumps(minimal.structured, ensure_ascii=False, separators=(",", ":"))
    cli_data = cli("query", "restore auth context", "--top-k", "3", "--view", "minimal",
                   "--cwd", str(indexed_repo.root), "--format", "json").json["data"]
    assert cli_data["hits"][0]["artifactId"] is None
    pretty = json.dumps(cli_data, ensure_ascii=False, indent=2)
    assert len(minimal.text) < 0.75 * len(pretty), (len(minimal.text), len(pretty))
    recall = call_tool(ws, "memory_recall", {"goal": "restore auth context"})
    assert not recall.is_error and not has_null_key(recall.structured)

    indexed_repo.git("checkout", "-q", "--detach")
    detached = call_tool(ws, "verify_citation", {"citation": hit["citation"]["id"]})
    assert detached.structured["snapshot"]["detached"] is True and "branch" not in detached.structured["snapshot"]
    for outcome in (minimal, default, full, recall, detached):
        jsonschema.validate(outcome.structured, schemas.OUTPUT)


def test_argument_limits():
    """64 KB of UTF-8 per question or goal (wherever it sits), 1 MiB per call, 64 levels."""
    from ragit.contract.inputs import Validator
    from ragit.errors import RagitError
    from ragit.mcp.limits import DEPTH_LIMIT, PAYLOAD_LIMIT_BYTES, TEXT_LIMIT_BYTES, check_arguments

    def reason(args: dict[str, Any]) -> tuple[str, str] | None:
        try:
            check_arguments(args, Validator("query"))
        except RagitError as exc:
            return exc.details["field"], exc.details["reason"]
        return None

    assert reason({"question": "x" * TEXT_LIMIT_BYTES}) is None
    assert reason({"question": "x" * (TEXT_LIMIT_BYTES + 1)}) == ("input.question", "too_large")
    assert reason({"question": "é" * (TEXT_LIMIT_BYTES // 2 + 1)}) == ("input.question", "too_large")  # bytes, not chars
    assert reason({"retrieve": {"goal": "g" * 70_000}}) == ("input.retrieve.goal", "too_large")
    assert reason({"summary": "s" * 60_000}) is None  # not a question: only the payload limit applies
    assert reason({"candidates": [{"content": "c" * 60_000}] * (PAYLOAD_LIMIT_BYTES // 60_000 + 1)}) == ("input", "too_large")
    nested: Any = "x"
    for _ in range(DEPTH_LIMIT - 1):
        nested = [nested]
    assert reason({"paths": nested}) is None
    assert reason({"paths": [nested]})[1] == "too_deep"
    assert reason({"topK": float("inf")}) == ("input.topK", "non_finite_number")
    assert reason({"goal": "ok", "\ud800": 1}) == ("input", "lone_surrogate")


def test_concurrent_calls_share_one_workspace_safely(indexed_repo, monkeypatch):
    """Threads calling read tools at once get exactly the answers of one-at-a-time calls: each
    call leases its own Repo, so no Repo cache is used by two threads."""
    from concurrent.futures import ThreadPoolExecutor

    from ragit.mcp.tools import Workspace, call_tool

    monkeypatch.setenv("RAGIT_NOW", "2026-03-08T12:00:00.000Z")  # recall stamps createdAt
    calls = [("query", {"question": "restore auth context"}), ("context_pack", {"goal": "token rotation"}),
             ("memory_recall", {"goal": "rotate tokens"}), ("query", {"question": "roadmap milestone", "view": "full"})]
    expected = [call_tool(Workspace(indexed_repo.root, True), name, dict(args)).text for name, args in calls]
    ws = Workspace(indexed_repo.root, True)
    with ThreadPoolExecutor(max_workers=8) as pool:
        results = list(pool.map(lambda i: call_tool(ws, *calls[i % len(calls)]).text, range(48)))
    assert results == [expected[i % len(calls)] for i in range(48)]
