"""The bugs the fuzz suite found, each pinned by its smallest reproducer (issue 14 item 5)."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest
from conftest import tree_snapshot
from fuzzkit import snapshot

from ragit.sessions.importers import detect_format, import_transcript


def test_transcript_records_with_non_string_types_are_skipped_not_crashed(tmp_path, cli):
    """A codex record whose ``type`` (or call id) is an object raised ``TypeError: unhashable
    type`` in the importer: INTERNAL_ERROR for window check, window compact and session mirror."""
    records = [
        {"type": "session_meta", "payload": ["not", "an", "object"]},
        {"type": "response_item", "payload": {"type": {"nested": 1}, "role": "user", "content": "x"}},
        {"type": "response_item", "payload": {"type": "function_call", "name": {"n": 1}, "call_id": ["c"],
                                              "arguments": "{}"}},
        {"type": "response_item", "payload": {"type": "function_call_output", "call_id": {"c": 1}, "output": "ok"}},
        {"type": "response_item", "payload": {"type": "message", "role": "user",
                                              "content": [{"type": "input_text", "text": "hello"}]}},
    ]
    text = "\n".join(json.dumps(r) for r in records)
    assert detect_format([{"type": ["x"]}, {"type": "message", "content": 5}]) == "messages"
    transcript = import_transcript(text, "auto", "s1")
    assert transcript.format == "codex"
    assert [m["role"] for m in transcript.messages] == ["assistant", "tool", "user"]
    assert transcript.messages[0]["tool_calls"][0]["id"] == "" and transcript.messages[1]["tool_call_id"] == ""
    for argv in (["window", "check"], ["window", "compact"], ["session", "mirror", "--session", "s1"]):
        r = cli(*argv, "--input", "-", "--cwd", str(tmp_path), "--format", "json", stdin=text)
        assert r.code == 0, r


def test_promoted_file_names_stay_within_file_system_limits(indexed_repo, cli):
    """A 300-character candidate id made a 304-byte file name: ``OSError: File name too long``
    surfaced as INTERNAL_ERROR after validation had accepted the payload."""
    payload = [{"kind": "plan", "title": "t", "summary": "s", "id": "x" * 300},
               {"kind": "decision", "title": "é" * 200, "summary": "s"}]
    r = cli("memory", "promote", "--input", "-", "--cwd", str(indexed_repo.root), "--format", "json",
            stdin=json.dumps(payload))
    assert r.code == 0, r
    names = [path.rsplit("/", 1)[-1] for path in r.json["data"]["createdFiles"]]
    assert names[0] == "x" * 100 + ".md"
    assert all(len(name.encode("utf-8")) <= 103 for name in names)
    assert all((indexed_repo.root / path).is_file() for path in r.json["data"]["createdFiles"])
    # a `supersedes` path too long for the file system is a missing file, not an OSError
    payload = [{"kind": "plan", "title": "t", "summary": "s", "supersedes": "é" * 200}]
    r = cli("memory", "promote", "--input", "-", "--cwd", str(indexed_repo.root), "--format", "json",
            stdin=json.dumps(payload))
    assert r.code == 2 and r.json["error"]["details"]["reason"] == "file_not_found", r


def test_context_packet_validates_its_request_before_git(tmp_path, cli):
    """Outside a repository an invalid packet request gave GIT_REPOSITORY_REQUIRED (exit 3):
    the request was validated only after opening the repository (cli-contract §3.3)."""
    for payload, reason in (({"bogus": 1}, "unknown_field"), ([1], "invalid_format"),
                            ({"taskAnchor": {"goal": "g"}, "budgetUnits": 5}, "required")):
        r = cli("context", "packet", "--input", "-", "--cwd", str(tmp_path), "--format", "json",
                stdin=json.dumps(payload))
        assert r.code == 2, r
        assert r.json["error"]["details"]["reason"] == reason, r
    valid = {"taskAnchor": {"goal": "g", "stopCondition": "s", "verificationTarget": "v"}, "budgetUnits": 5,
             "candidates": []}
    r = cli("context", "packet", "--input", "-", "--cwd", str(tmp_path), "--format", "json", stdin=json.dumps(valid))
    assert r.code == 3 and r.json["error"]["code"] == "GIT_REPOSITORY_REQUIRED", r


def test_mcp_context_packet_validates_before_needing_git(tmp_path):
    from ragit.mcp.tools import Workspace, call_tool

    outcome = call_tool(Workspace(tmp_path, False), "context_packet", {"taskAnchor": {"goal": "g"}, "budgetUnits": 1})
    assert outcome.is_error and outcome.error["code"] == "INPUT_INVALID", outcome


def test_invalid_since_leaves_the_store_untouched(indexed_repo, cli):
    """``ingest --since`` with an unknown revision exited 2 after taking (and rewriting) the
    store's write lock; a rejected input must leave the disk as it was."""
    root = indexed_repo.root
    before = snapshot([root])
    for since in ("67b00", "not-a-rev"):
        r = cli("ingest", "--input", "-", "--cwd", str(root), "--format", "json", stdin=json.dumps({"since": since}))
        assert r.code == 2, r
    assert snapshot([root]) == before
    indexed_repo.commit("side", {"side.md": "# side\n"})
    indexed_repo.git("checkout", "-q", "-b", "other", "HEAD~1")
    indexed_repo.commit("other", {"other.md": "# other\n"})
    before = snapshot([root])
    r = cli("ingest", "--since", "main", "--cwd", str(root), "--format", "json")
    assert r.code == 2 and r.json["error"]["code"] == "INGEST_BASE_NOT_ANCESTOR", r
    assert snapshot([root]) == before


def test_stdio_server_answers_a_request_too_deep_to_parse(indexed_repo, tmp_path):
    """A tools/call nesting 3,000 levels made Python's parser raise RecursionError: the server
    answered a parse error with id null, so the client waiting for its id hung."""
    deep = '{"a":' * 3000 + "1" + "}" * 3000
    lines = [
        json.dumps({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
            "protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}}),
        '{"jsonrpc": "2.0", "method": "notifications/initialized"}',
        '{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"query","arguments":{"question":' + deep + "}}}",
        '{"jsonrpc":"2.0","id":8,"method":"tools/list","params":' + "[" * 50_000 + "]" * 50_000 + "}",
        "[" * 50_000 + "]" * 50_000,
    ]
    proc = subprocess.run([sys.executable, "-m", "ragit", "mcp", "--cwd", str(indexed_repo.root)],
                          input="\n".join(lines) + "\n", capture_output=True, text=True, timeout=120,
                          env=dict(os.environ))
    answers = {m["id"]: m for m in map(json.loads, proc.stdout.splitlines())}
    assert {7, 8, None} <= set(answers), (proc.stdout[-2000:], proc.stderr[-2000:])
    error = json.loads(answers[7]["result"]["content"][0]["text"])
    assert answers[7]["result"]["isError"] and error["details"]["reason"] == "too_deep"
    assert answers[8]["error"]["code"] == -32602
    assert answers[None]["error"]["code"] == -32600
    assert "Traceback" not in proc.stderr


def test_read_commands_leave_no_trace_but_sqlite_side_files(indexed_repo, cli):
    """What the fuzz counts as transient rather than a write: a read's only trace is the store
    directory's mtime (SQLite's WAL side files come and go); every file stays byte-identical."""
    before = tree_snapshot(indexed_repo.root)
    r = cli("query", "--input", "-", "--cwd", str(indexed_repo.root), "--format", "json",
            stdin=json.dumps({"question": "token rotation"}))
    assert r.code == 0, r
    assert tree_snapshot(indexed_repo.root) == before


def test_codex_role_of_any_type_is_imported(tmp_path, cli):
    """A codex message whose ``role`` is an object raised ``TypeError: unhashable type`` (a dict
    lookup keyed by the role)."""
    records = [{"type": "response_item", "payload": {"type": "message", "role": {"r": 1},
                                                     "content": [{"type": "input_text", "text": "x"}]}},
               {"type": "response_item", "payload": {"type": "message", "role": "developer", "content": "rules"}}]
    transcript = import_transcript("\n".join(json.dumps(r) for r in records), "codex", "s1")
    assert [m["role"] for m in transcript.messages] == [{"r": 1}, "system"]


def test_json_output_rounds_floats_of_any_magnitude(tmp_path, cli):
    """A float of 1e22 or more raised ``decimal.InvalidOperation`` while rounding the output to 6
    decimals (INTERNAL_ERROR from `window compact`, which echoes the transcript's messages)."""
    from ragit.contract.jsonout import round6

    assert round6(1e22) == 10**22 and round6(-2.5e300) == -25 * 10**299 and round6(0.1234565) == 0.123457
    text = json.dumps([{"role": "user", "content": "hi", "meta": {"n": 3.3998150896294946e+121}},
                       {"role": "assistant", "content": "ok"}])
    r = cli("window", "compact", "--input", "-", "--cwd", str(tmp_path), "--format", "json", stdin=text)
    assert r.code == 0, r
    assert r.json["data"]["messages"][0]["meta"]["n"] == 33998150896294946 * 10**105


MALFORMED_MESSAGES = [  # found by the fuzz; window/* crashed on each with INTERNAL_ERROR (TypeError)
    [{"role": "assistant", "content": [{"type": ["x"]}]}],  # window/messages.py is_thinking_block
    [{"role": "assistant", "content": None, "tool_calls": 5}],  # window/messages.py tool_calls
    [{"role": "user", "content": "q"},  # window/pairs.py _drop_orphans
     {"role": "assistant", "content": None,
      "tool_calls": [{"id": "a", "type": "function", "function": {"name": "b", "arguments": "{}"}}]},
     {"role": "tool", "tool_call_id": {}, "content": "x"}, {"role": "user", "content": "u"}],
]


@pytest.mark.parametrize("messages", MALFORMED_MESSAGES, ids=["block-type-array", "tool-calls-number", "call-id-object"])
def test_malformed_transcript_messages_are_typed_or_tolerated(tmp_path, cli, messages):
    """A transcript message with wrong-typed fields is rejected (INPUT_INVALID) or tolerated,
    never an INTERNAL_ERROR (cli-contract §3.5, §6). Pinned here because the fuzz reaches these
    shapes only in some test layouts."""
    for argv in (["window", "check"], ["window", "compact", "--window", "9000", "--prune", "--keep-recent", "1"]):
        r = cli(*argv, "--input", "-", "--cwd", str(tmp_path), "--format", "json", stdin=json.dumps(messages))
        assert r.code in (0, 2), r
