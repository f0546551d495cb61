"""`ragit mcp` driven by the official MCP TypeScript SDK client (tests/mcp_ts/client.mjs).

Claude Code, Cursor and Claude Desktop are built on that SDK, and unlike the Python SDK it
checks a result's structured content against the tool's declared output schema, so only this
client shows whether typed errors and compact outputs really reach those hosts. The SDK is
pinned by tests/mcp_ts/package-lock.json and installed with `npm ci` (by `make test`, or here
when node_modules is missing or stale). Node is required: without it this test fails, it
never skips.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

TS_DIR = Path(__file__).resolve().parents[1] / "mcp_ts"
SDK = "@modelcontextprotocol/sdk"
TOOLS = ["query", "context_pack", "context_packet", "memory_recall", "memory_wrap", "artifact_capture",
         "tool_result_recall", "session_search", "verify_citation"]


def versions(lockfile: Path) -> dict[str, str] | None:
    """Package path -> version of an npm lockfile (None when it does not exist)."""
    if not lockfile.is_file():
        return None
    packages = json.loads(lockfile.read_text(encoding="utf-8"))["packages"]
    return {path: meta.get("version", "") for path, meta in packages.items() if path.startswith("node_modules/")}


def ensure_sdk() -> str:
    """The path of node, after `npm ci` unless node_modules holds exactly the locked packages
    (npm records what it installed in node_modules/.package-lock.json)."""
    node, npm = shutil.which("node"), shutil.which("npm")
    if node is None or npm is None:
        pytest.fail("node and npm are required for the MCP TypeScript-client test (install Node.js >= 18)")
    locked = versions(TS_DIR / "package-lock.json")
    assert locked and f"node_modules/{SDK}" in locked
    if versions(TS_DIR / "node_modules" / ".package-lock.json") != locked:
        proc = subprocess.run([npm, "ci", "--no-audit", "--no-fund"], cwd=TS_DIR, capture_output=True,
                              text=True, timeout=300, check=False)
        assert proc.returncode == 0, f"npm ci failed:\n{proc.stdout}\n{proc.stderr}"
        assert versions(TS_DIR / "node_modules" / ".package-lock.json") == locked
    return node


def test_typescript_sdk_client_accepts_every_tool(indexed_repo, tmp_path):
    from ragit.sessions.store import SessionStore, session_db_path
    from ragit.window.offload import OffloadStore

    node = ensure_sdk()
    root = indexed_repo.root
    offloads = OffloadStore(root / ".ragit" / "cache" / "tool-offload", "s1")
    offloads.write("call_1", {"rows": [1, 2, 3], "text": "page 1"})
    offloads.write("call_2", "plain text result")
    with SessionStore(session_db_path(root)) as store:
        store.mirror("s1", [{"role": "user", "content": "Why do we rotate the refresh token?"}])
    (root / ".ragit" / "cache" / "test-output.txt").write_text("FAILED tests/test_auth.py::test_rotate\n",
                                                                encoding="utf-8")
    config = tmp_path / "client.json"
    config.write_text(json.dumps({
        "command": sys.executable, "args": ["-m", "ragit"], "repo": str(root), "sessionId": "s1",
        "refId": "call_1", "refIdText": "call_2", "evidence": ".ragit/cache/test-output.txt",
    }), encoding="utf-8")

    proc = subprocess.run([node, str(TS_DIR / "client.mjs"), str(config)], capture_output=True, text=True,
                          timeout=180, check=False)
    assert proc.stdout.strip(), proc.stderr
    report = json.loads(proc.stdout.strip().splitlines()[-1])
    assert report["failures"] == [], (report["failures"], proc.stderr[-3000:])
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert "Traceback" not in proc.stderr

    assert report["tools"] == TOOLS
    calls = report["calls"]
    for outcome in ("result", "tool_error"):
        assert {c["tool"] for c in calls if c["outcome"] == outcome} == set(TOOLS), outcome
    codes = {(c["tool"], c["case"]): c.get("code") for c in calls}
    assert codes[("query", "branch name as at")] == "SNAPSHOT_REF_INVALID"
    assert codes[("query", "topK 0")] == "INPUT_INVALID"
    assert codes[("verify_citation", "unknown citation")] == "CITATION_NOT_FOUND"
    assert codes[("frobnicate", "unknown tool")] == "COMMAND_UNKNOWN"
    assert all(c["reason"] == "unknown_field" for c in calls if c["case"] == "unknown argument")
    three_hits = next(c for c in calls if c["case"] == "default view")
    assert three_hits["bytes"] < 2500, three_hits  # three minimal hits, compact
