"""The fuzz on real processes: a sample of CLI cases run both in-process and as
``python -m ragit`` (the in-process verdicts must hold for a real process, and argv bytes that
are not UTF-8 only exist there), and the real MCP server driven over stdio with raw JSON-RPC
lines: fuzzed tool calls, malformed envelopes and garbage. Every request with an id is answered
once, every stdout line is a JSON-RPC message, and nothing reaches stderr as a traceback.
"""

from __future__ import annotations

import itertools
import json
import os
import queue
from pathlib import Path
from typing import Any

import pytest
from fuzzgen import COMMANDS, CONTRACT_TEXT_BYTES, HEAD, ID, MCP_LIMITS, Case, Expect, cli_case, rpc_line
from fuzzkit import (
    TRACEBACK,
    Places,
    RawServer,
    build_repos,
    changes,
    cli_argv,
    cli_violations,
    conclude,
    documented_limits,
    flush_stats,
    fuzz_settings,
    git_env,
    head_of,
    outcome_of,
    error_of,
    process_argv,
    run_cli,
    run_process,
    seeded,
    snapshot,
    tool_violations,
    verdict,
)
from hypothesis import assume, given
from hypothesis import strategies as st

from ragit.mcp.tools import TOOLS, ToolOutcome

PROCESS_EXAMPLES = 36  # each is two runs: in-process, then a real process (~0.2 s)
STDIO_EXAMPLES = 300


@pytest.fixture(scope="module")
def places(tmp_path_factory):
    documented = documented_limits("mcp")
    MCP_LIMITS.update(text=documented.get("text", CONTRACT_TEXT_BYTES), depth=documented.get("depth", 64),
                      payload=documented.get("payload"))
    base = tmp_path_factory.mktemp("fuzz-proc")
    with git_env(base / "home"):
        repos = build_repos(base)
    yield Places(repos, {name: head_of(root) for name, root in repos.items()})
    flush_stats()


def differential(case: Case, places: Places) -> None:
    """Run ``case`` in-process and as a real process; both must meet the contract and agree."""
    argv, stdin = cli_argv(case, places)
    raw = process_argv(argv)
    if raw is None:  # a NUL, or a surrogate no byte decodes to, cannot be a process argument
        assume(False)
    roots = [places.repos[case.repo], Path(os.environ["HOME"])]
    inner = run_cli(argv, stdin)
    before = snapshot(roots)
    outer = run_process(raw, stdin)
    wrote, _ = changes(before, snapshot(roots))
    violations = cli_violations(case.command, case.fmt, outer, case.expect, wrote, may_write=case.writes_allowed)
    if verdict(inner, case.fmt) != verdict(outer, case.fmt):
        violations.append(("differs", f"in-process {verdict(inner, case.fmt)} != process {verdict(outer, case.fmt)}"))
    conclude("process", case.command, case.klass, outcome_of(outer.code, error_of(outer, case.fmt)), violations,
             f"python -m ragit {raw!r} stdin={stdin[:300]!r}")


def test_real_processes_agree_with_in_process_runs(places):
    @fuzz_settings(PROCESS_EXAMPLES)
    @seeded
    @given(case=st.sampled_from(list(COMMANDS.values())).flatmap(cli_case))
    def fuzz(case):
        differential(case, places)

    fuzz()


@pytest.mark.parametrize("argv, reason", [
    # argv bytes that are not UTF-8 reach Python as lone surrogates (surrogateescape)
    (["query", "--", "auth \udcff\udcfe token"], "lone_surrogate"),
    (["context", "pack", "--", "\udce9t\udce9"], "lone_surrogate"),
    (["query", "--input", "in\udcff.json"], "file_not_found"),
    (["window", "check", "--input", "/nonexistent/\udcff.jsonl"], "file_not_found"),
])
def test_undecodable_argv_bytes(places, argv, reason):
    """What only a real process can be given: the typed rejection, alike in-process."""
    case = Case(" ".join(argv[:2]) if argv[0] in ("context", "window") else argv[0], "argv_bytes", argv,
                with_input=False, expect=Expect(True, frozenset({reason})))
    assert process_argv(argv) is not None
    differential(case, places)


# ------------------------------------------------------------------ the stdio server


@pytest.fixture(scope="module")
def server(places, tmp_path_factory):
    errlog = tmp_path_factory.mktemp("fuzz-stdio") / "server.err"
    env = dict(os.environ, HOME=str(places.repos["indexed"].parent / "home"))
    env.pop("RAGIT_DEBUG", None)
    srv = RawServer(places.repos["indexed"], errlog, env)
    yield srv
    code = srv.close()
    stderr = srv.stderr_text()
    violations = [("traceback", "a traceback on the server's stderr")] if TRACEBACK in stderr else []
    if code != 0:
        violations.append(("exit_code", f"the server exited {code} when stdin closed"))
    conclude("stdio", "server", "shutdown", f"exit {code}", violations, stderr[-2000:])


def _as_outcome(result: dict[str, Any]) -> ToolOutcome:
    text = result["content"][0]["text"]
    if result.get("isError"):
        try:
            error = json.loads(text)
        except ValueError:
            error = None
        return ToolOutcome(None, text, True, error if isinstance(error, dict) else {})
    return ToolOutcome(result.get("structuredContent"), text)


def test_stdio_server_answers_every_request(places, server):
    ids = itertools.count(1)
    root = places.repos["indexed"]
    seen_ids: set[Any] = set()

    @fuzz_settings(STDIO_EXAMPLES)
    @seeded
    @given(line=rpc_line(list(TOOLS)))
    def fuzz(line):
        n = next(ids)
        rid: Any = n if line.id_kind == "int" else str(n) if line.id_kind == "str" else None
        data = line.text.replace(ID.encode(), str(n).encode()).replace(HEAD.encode(), places.heads["indexed"].encode())
        roots = [root, Path(os.environ["HOME"])]
        before = snapshot(roots)
        errors_before = server.stderr_text()
        violations: list[tuple[str, str]] = []
        server.send(data)
        ping = f"ping-{n}"
        server.send(json.dumps({"jsonrpc": "2.0", "id": ping, "method": "ping"}).encode())
        wanted = {ping} | ({rid} if line.answer and rid is not None else set())
        answers: dict[Any, list[dict[str, Any]]] = {}
        while wanted:
            try:
                message = server.recv(timeout=60)
            except (queue.Empty, EOFError) as exc:
                violations.append(("unanswered", f"no answer for {sorted(map(str, wanted))} ({type(exc).__name__})"))
                break
            except ValueError as exc:
                violations.append(("json", f"a stdout line is not JSON: {exc}"))
                continue
            if not isinstance(message, dict) or message.get("jsonrpc") != "2.0":
                violations.append(("json", f"not a JSON-RPC 2.0 message: {str(message)[:200]}"))
                continue
            answers.setdefault(message.get("id"), []).append(message)
            wanted.discard(message.get("id"))
        for key in {ping, rid} - {None}:  # the ids this case made up: each answered once, ever
            got = answers.get(key, [])
            if len(got) > 1 or (got and key in seen_ids):
                violations.append(("duplicate", f"{len(got)} answers for id {key!r}"))
            seen_ids.add(key)
        answer = answers.get(rid, [None])[0] if rid is not None else None
        outcome = "no answer required" if answer is None else "error" if "error" in answer else "result"
        if answer is not None and line.answer == "result":
            if "result" not in answer:
                violations.append(("protocol", f"a JSON-RPC error for a tool call: {str(answer['error'])[:300]}"))
            else:
                tool_outcome = _as_outcome(answer["result"])
                case = line.case
                tool = next((t for t in TOOLS if t.name == case.tool), None)
                wrote, _ = changes(before, snapshot(roots))
                dry = isinstance(case.arguments, dict) and case.arguments.get("dryRun") is True
                violations += tool_violations(tool_outcome, case.expect, wrote,
                                              may_write=tool is not None and not tool.read_only and not dry)
                outcome = ("error " + str((tool_outcome.error or {}).get("code"))) if tool_outcome.is_error else "result"
        elif answer is not None and line.answer == "error" and "error" not in answer:
            violations.append(("protocol", "a result where JSON-RPC invalid params (-32602) was due"))
        if TRACEBACK in server.stderr_text()[len(errors_before):]:
            violations.append(("traceback", "a traceback on the server's stderr"))
        conclude("stdio", line.kind if line.case is None else f"tools/call {line.case.tool}",
                 line.kind if line.case is None else line.case.klass, outcome, violations, line.describe())

    fuzz()
    assert server.proc.poll() is None, "the server exited while being fuzzed"
