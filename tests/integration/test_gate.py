"""``ragit gate`` (knowledge §22.4, issue 17 item 3): the edit-time evidence gate.

A scripted session: the MCP server serves a pack (in this process, through the real tool call,
so it records the citations under this process's parent, as Claude Code's MCP server records
them under Claude), then ``ragit gate`` runs as Claude Code runs it, a child process reading the
PreToolUse payload on stdin. The cited file changes in the working tree → warn or block; an
unchanged tree → silence.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import SAMPLE_FILES, check_golden, tree_snapshot

from ragit.gate.served import record_path

SRC = str(Path(__file__).resolve().parents[2] / "src")


def gate(root: Path, payload, *, raw: str | None = None) -> subprocess.CompletedProcess:
    env = dict(os.environ, PYTHONPATH=SRC)
    text = raw if raw is not None else json.dumps(payload)
    return subprocess.run([sys.executable, "-m", "ragit", "gate", "--cwd", str(root)], input=text,
                          capture_output=True, text=True, env=env, check=False)


def edit(root: Path, path: str = "src/auth.py", tool: str = "Edit") -> dict:
    key = "notebook_path" if tool == "NotebookEdit" else "file_path"
    return {"session_id": "s-1", "hook_event_name": "PreToolUse", "tool_name": tool, "cwd": str(root),
            "tool_input": {key: str(root / path), "old_string": "a", "new_string": "b"}}


def serve_pack(root: Path, goal: str = "restore auth context TokenStore rotate") -> dict:
    from ragit.mcp.tools import Workspace, call_tool

    outcome = call_tool(Workspace(root, True), "context_pack", {"goal": goal, "budget": 2000})
    assert not outcome.is_error, outcome.text
    record = json.loads(Path(record_path(root, f"pid-{os.getppid()}")).read_text())
    assert record["command"] == "context pack" and record["citations"]
    # the digests let the gate search a changed file without reading git objects
    assert all(len(c["textDigest"]) == 40 and len(c["firstLineDigest"]) == 40 for c in record["citations"])
    return record


def set_mode(cli, root: Path, mode: str) -> None:
    r = cli("config", "set", "gate.mode", mode, "--cwd", str(root), "--format", "json")
    assert r.code == 0, r


def test_unchanged_session_passes_silently(indexed_repo):
    before = tree_snapshot(indexed_repo.root)
    serve_pack(indexed_repo.root)  # the read-only tool leaves the repository as it was
    assert tree_snapshot(indexed_repo.root) == before
    r = gate(indexed_repo.root, edit(indexed_repo.root))
    assert (r.returncode, r.stdout, r.stderr) == (0, "", "")
    assert tree_snapshot(indexed_repo.root) == before  # read-only


def test_cited_file_changed_is_blocked_in_block_mode(indexed_repo, cli):
    root = indexed_repo.root
    set_mode(cli, root, "block")
    record = serve_pack(root)
    cited = [c for c in record["citations"] if c["path"] == "src/auth.py"]
    assert cited
    (root / "src/auth.py").write_text(SAMPLE_FILES["src/auth.py"].replace("return token[::-1]", "return token"))
    r = gate(root, edit(root, "README.md"))  # any edit relies on the session's evidence
    assert r.returncode == 0
    out = json.loads(r.stdout)["hookSpecificOutput"]
    assert out["permissionDecision"] == "deny"
    reason = out["permissionDecisionReason"]
    assert "src/auth.py@" in reason and "(changed; served)" in reason and "ragit context pack" in reason
    check_golden("gate_block.json", r.stdout)


def test_cited_file_changed_is_warned_in_warn_mode(indexed_repo):
    root = indexed_repo.root  # default mode: warn
    serve_pack(root)
    (root / "src/auth.py").write_text(SAMPLE_FILES["src/auth.py"].replace("return token[::-1]", "return token"))
    r = gate(root, edit(root))
    out = json.loads(r.stdout)
    assert "permissionDecision" not in out["hookSpecificOutput"]
    assert "src/auth.py@" in out["hookSpecificOutput"]["additionalContext"]
    assert out["systemMessage"].startswith("ragit gate: ")
    check_golden("gate_warn.json", r.stdout)


def test_shifted_text_and_other_files_still_pass(indexed_repo):
    root = indexed_repo.root
    serve_pack(root)
    (root / "src/auth.py").write_text("# a comment above\n\n" + SAMPLE_FILES["src/auth.py"])  # lines move only
    (root / "NEW.md").write_text("unrelated\n")
    r = gate(root, edit(root))
    assert (r.returncode, r.stdout) == (0, "")


def test_deleted_cited_file_is_drift(indexed_repo, cli):
    root = indexed_repo.root
    set_mode(cli, root, "block")
    serve_pack(root)
    (root / "src/auth.py").unlink()
    out = json.loads(gate(root, edit(root, "README.md")).stdout)["hookSpecificOutput"]
    assert out["permissionDecision"] == "deny" and "(deleted; served)" in out["permissionDecisionReason"]


@pytest.mark.parametrize("tool", ["Bash", "Read", "Grep", "mcp__ragit__query"])
def test_other_tools_pass_silently(indexed_repo, cli, tool):
    root = indexed_repo.root
    set_mode(cli, root, "block")
    serve_pack(root)
    (root / "src/auth.py").write_text("changed\n")
    payload = {"session_id": "s", "tool_name": tool, "cwd": str(root), "tool_input": {"command": "ls"}}
    r = gate(root, payload)
    assert (r.returncode, r.stdout) == (0, "")


@pytest.mark.parametrize("tool", ["Write", "MultiEdit", "NotebookEdit"])
def test_every_edit_tool_is_gated(indexed_repo, cli, tool):
    root = indexed_repo.root
    set_mode(cli, root, "block")
    serve_pack(root)
    (root / "src/auth.py").write_text("changed\n")
    out = json.loads(gate(root, edit(root, "docs/new.ipynb", tool)).stdout)
    assert out["hookSpecificOutput"]["permissionDecision"] == "deny"


@pytest.mark.parametrize("raw", ["", "{not json", "[1, 2]", '{"tool_name": "Edit"}',
                                 '{"tool_name": "Edit", "tool_input": {"file_path": 7}}',
                                 '{"tool_name": "Edit", "tool_input": {"file_path": "/elsewhere/x.py"}}'])
def test_malformed_payload_fails_open(indexed_repo, cli, raw):
    root = indexed_repo.root
    set_mode(cli, root, "block")
    serve_pack(root)
    (root / "src/auth.py").write_text("changed\n")
    r = gate(root, None, raw=raw)
    assert (r.returncode, r.stdout) == (0, "")


def test_broken_record_and_config_fail_open(indexed_repo, cli):
    root = indexed_repo.root
    serve_pack(root)
    (root / "src/auth.py").write_text("changed\n")
    Path(record_path(root, f"pid-{os.getppid()}")).write_text("{broken")
    (root / ".ragit/config.toml").write_text("not = [toml")
    r = gate(root, edit(root))
    assert (r.returncode, r.stdout) == (0, "")


def test_memory_decision_citing_the_edited_file(git_repo, cli):
    git_repo.commit("one", {"src/a.py": "def a():\n    return 1\n\n\ndef b():\n    return 2\n"})
    payload = git_repo.root / ".ragit" / "wrap.json"
    payload.parent.mkdir(parents=True, exist_ok=True)
    payload.write_text(json.dumps({"goal": "g", "summary": "s", "decisions": [
        {"title": "a returns one", "summary": "s", "evidence": ["src/a.py:L1-L2"]},
        {"title": "b returns two", "summary": "s", "evidence": ["src/a.py:L5-L6"]}]}))
    assert cli("memory", "wrap", "--input", str(payload), "--cwd", str(git_repo.root), "--format", "json").code == 0
    # nothing drifted: the decisions are handed to the agent as context, the edit is allowed
    out = json.loads(gate(git_repo.root, edit(git_repo.root, "src/a.py")).stdout)["hookSpecificOutput"]
    assert "permissionDecision" not in out and 'decision "a returns one"' in out["additionalContext"]
    # another file: nothing cites it, silence
    assert gate(git_repo.root, edit(git_repo.root, "src/other.py")).stdout == ""
    (git_repo.root / "src/a.py").write_text("def a():\n    return 10\n\n\ndef b():\n    return 2\n")
    set_mode(cli, git_repo.root, "block")
    out = json.loads(gate(git_repo.root, edit(git_repo.root, "src/a.py")).stdout)["hookSpecificOutput"]
    assert out["permissionDecision"] == "deny"
    assert '(changed; decision "a returns one")' in out["permissionDecisionReason"]
    assert "b returns two" in out["permissionDecisionReason"]  # still current, listed as context


def test_packet_citations_are_recorded(indexed_repo):
    from ragit.mcp.tools import Workspace, call_tool

    root = indexed_repo.root
    task = {"goal": "restore auth", "stopCondition": "s", "verificationTarget": "v"}
    outcome = call_tool(Workspace(root, True), "context_packet", {
        "taskAnchor": task, "budgetUnits": 200, "retrieve": {"goal": "restore auth context", "budget": 2000}})
    assert not outcome.is_error, outcome.text
    record = json.loads(Path(record_path(root, f"pid-{os.getppid()}")).read_text())
    assert record["command"] == "context packet" and record["citations"]
    blob = indexed_repo.git("rev-parse", "HEAD:src/auth.py")
    assert all(c["blobId"] == indexed_repo.git("rev-parse", f"HEAD:{c['path']}") for c in record["citations"])
    assert any(c["blobId"] == blob for c in record["citations"])


def test_a_record_in_a_directory_others_can_write_is_ignored(indexed_repo, cli):
    root = indexed_repo.root
    set_mode(cli, root, "block")
    serve_pack(root)
    (root / "src/auth.py").write_text("changed\n")
    assert json.loads(gate(root, edit(root)).stdout)["hookSpecificOutput"]["permissionDecision"] == "deny"
    directory = Path(record_path(root, "x")).parent
    directory.chmod(0o777)
    try:
        assert gate(root, edit(root)).stdout == ""  # planted records are never trusted: fail open
    finally:
        directory.chmod(0o700)


def test_in_process_entry_and_describe(indexed_repo, cli):
    root = indexed_repo.root
    serve_pack(root)
    r = cli("gate", "--cwd", str(root), stdin=json.dumps(edit(root)))
    assert (r.code, r.out) == (0, "")
    d = cli("describe", "gate", "--format", "json")
    assert d.code == 0 and d.json["data"]["spec"]["path"] == "gate"
    assert d.json["data"]["spec"]["mutating"] is False


def test_gate_does_not_import_click_or_numpy(indexed_repo):
    code = ("import sys, io, json; sys.stdin = io.StringIO(json.dumps(%r)); from ragit.cli.main import main\n"
            "try:\n    main(['gate', '--cwd', %r])\nexcept SystemExit:\n    pass\n"
            "print(sorted(m for m in ('click', 'numpy', 'sqlite3') if m in sys.modules))"
            % (edit(indexed_repo.root), str(indexed_repo.root)))
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         env=dict(os.environ, PYTHONPATH=SRC), check=True).stdout
    assert out.strip().splitlines()[-1] == "[]"


def test_records_of_finished_clients_are_pruned(indexed_repo):
    from ragit.gate.served import record_path

    root = indexed_repo.root
    dead = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True,
                          text=True, check=True).stdout.strip()
    serve_pack(root)
    stale = Path(record_path(root, f"pid-{dead}"))
    stale.write_text("{}")
    serve_pack(root)
    assert not stale.exists() and Path(record_path(root, f"pid-{os.getppid()}")).exists()
    assert oct(stale.parent.stat().st_mode & 0o777) == "0o700"
