"""Fuzz the nine MCP tools through ``call_tool``, the function the server runs for every
``tools/call`` (cli-contract §11; issue 14 item 5). Arguments come from each tool's own input
schema, valid or with one hostile mutation (non-object arguments, unknown tools, unknown keys,
wrong types, control characters, lone surrogates, NaN/Infinity, deep nesting, huge strings).

Every call must return an outcome (never raise): compact JSON text, a typed error object that is
never INTERNAL_ERROR, the reason the contract names for each hostile class, and no write when
the tool only reads, runs dry, or rejects its arguments. The real server over stdio is fuzzed
in test_fuzz_processes.py.
"""

from __future__ import annotations

import contextlib
import io
import os
import traceback
from pathlib import Path

import pytest
from fuzzgen import CONTRACT_TEXT_BYTES, HEAD, MCP_LIMITS, REPOS, mcp_case
from fuzzkit import (
    STATS,
    TRACEBACK,
    Places,
    build_repos,
    changes,
    conclude,
    documented_limits,
    flush_stats,
    fuzz_settings,
    generates,
    git_env,
    head_of,
    seeded,
    snapshot,
    substitute,
    tool_outcome_name,
    tool_violations,
)
from hypothesis import given
from hypothesis import strategies as st

from ragit.mcp.tools import TOOLS, Workspace, call_tool

# Calls per tool per run (1,500 in all: under 10 s on one core).
EXAMPLES = {"query": 200, "context_pack": 180, "context_packet": 180, "memory_recall": 140, "memory_wrap": 200,
            "artifact_capture": 180, "tool_result_recall": 120, "session_search": 150, "verify_citation": 150}


@pytest.fixture(scope="module")
def places(tmp_path_factory):
    documented = documented_limits("mcp")  # cli-contract §3.3: MCP arguments share the CLI's limits
    MCP_LIMITS.update(text=documented.get("text", CONTRACT_TEXT_BYTES), depth=documented.get("depth", 64),
                      payload=documented.get("payload"))
    base = tmp_path_factory.mktemp("fuzz-mcp")
    with git_env(base / "home"):
        repos = build_repos(base)
    yield Places(repos, {name: head_of(root) for name, root in repos.items()})
    flush_stats()


def test_every_tool_is_fuzzed():
    """A tool added to the server is fuzzed too (or this fails)."""
    assert {tool.name for tool in TOOLS} == set(EXAMPLES)


@pytest.mark.parametrize("tool", TOOLS, ids=[t.name for t in TOOLS])
def test_mcp_tool_fuzz(tool, places):
    """``EXAMPLES[tool]`` generated calls of one tool, in each of the four places at random."""
    workspaces = {name: Workspace(root, name != "plain") for name, root in places.repos.items()}

    @fuzz_settings(EXAMPLES[tool.name])
    @seeded
    @given(case=mcp_case(tool.name, tool.input_schema), repo=st.sampled_from(REPOS))
    def fuzz(case, repo):
        root = places.repos[repo]
        arguments = substitute(case.arguments, HEAD, places.heads[repo])
        roots = [root, Path(os.environ["HOME"])]
        before = snapshot(roots)
        err = io.StringIO()
        try:
            with contextlib.redirect_stderr(err):
                outcome = call_tool(workspaces[repo], case.name, arguments)
        except BaseException:  # noqa: BLE001 - call_tool must never raise
            conclude("mcp", tool.name, case.klass, "escaped",
                     [("traceback", traceback.format_exc().strip().splitlines()[-1])], f"{case.describe()} in {repo}")
            return
        wrote, transient = changes(before, snapshot(roots))
        if transient and tool.read_only:
            STATS.transient[f"mcp {tool.name}"] += 1
        dry = isinstance(arguments, dict) and arguments.get("dryRun") is True
        violations = tool_violations(outcome, case.expect, wrote,
                                     may_write=not tool.read_only and not dry and case.raw_tool is None)
        if TRACEBACK in err.getvalue():
            violations.append(("traceback", "a traceback was printed on stderr"))
        conclude("mcp", tool.name, case.klass, tool_outcome_name(outcome), violations, f"{case.describe()} in {repo}")

    with generates("mcp", EXAMPLES[tool.name]):
        fuzz()
