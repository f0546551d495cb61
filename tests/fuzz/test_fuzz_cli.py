"""Fuzz every command that reads ``--input`` (a file or stdin) through the real CLI entry point,
in-process, against real repositories (issue 14 item 5; cli-contract §3.3–3.5, §5–6).

Each case is a valid payload from the command's own allow-list, or one hostile mutation of it
(deep nesting, lone surrogates, NaN/Infinity, huge strings, wrong types, unknown keys, control
characters, invalid UTF-8, empty or non-JSON input, bad paths and options). Every case must:
print no traceback, print one JSON envelope under ``--format json``, exit 0–4 with the exit code
of its error category, never answer INTERNAL_ERROR, reject what the contract rejects with the
reason it names, and write nothing when rejected (or when the command only reads). Counts go to
``tests/fuzz/last_run.json``.
"""

from __future__ import annotations

import pytest
from fuzzgen import ACTIVE_LIMITS, COMMANDS, CONTRACT_TEXT_BYTES, cli_case
from fuzzkit import (
    Places,
    build_repos,
    documented_limits,
    execute_cli,
    flush_stats,
    fuzz_settings,
    generates,
    git_env,
    head_of,
    seeded,
)
from hypothesis import given

# Cases per command per run (3,300 in all: about 30 s on one core).
EXAMPLES = {
    "query": 340, "context pack": 320, "context packet": 300, "context assemble": 260, "ingest": 300,
    "memory wrap": 320, "memory promote": 300, "artifact capture": 300, "window check": 280,
    "window compact": 300, "session mirror": 280,
}
MAX_FUZZED_PAYLOAD = 4_000_000  # a documented payload limit above this is not exercised in CI


def test_every_input_command_is_fuzzed():
    """The fuzzed set is exactly the commands `describe` marks as taking raw JSON input."""
    import json

    from fuzzkit import run_cli

    commands = json.loads(run_cli(["describe", "query", "--format", "json"]).out)["data"]["availableCommands"]
    takes_input = set()
    for name in commands:
        spec = json.loads(run_cli(["describe", *name.split(), "--format", "json"]).out)["data"]["spec"]
        if spec["supportsRawJsonInput"] or any(o["name"] == "--input" for o in spec["options"]):
            takes_input.add(name)
    assert takes_input == set(COMMANDS) == set(EXAMPLES)


@pytest.fixture(scope="module")
def places(tmp_path_factory):
    base = tmp_path_factory.mktemp("fuzz-cli")
    with git_env(base / "home"):
        repos = build_repos(base)
    yield Places(repos, {name: head_of(root) for name, root in repos.items()})
    flush_stats()


@pytest.mark.parametrize("name", list(EXAMPLES))
def test_cli_input_fuzz(name, places):
    """``EXAMPLES[name]`` generated invocations of one command, each checked against the contract."""
    command = COMMANDS[name]
    documented = documented_limits(name)
    # transcripts (and context assemble, whose messages are one) are files: the file limit applies
    payload = documented.get("file" if command.transcript or name == "context assemble" else "payload")
    ACTIVE_LIMITS.update(text=documented.get("text", CONTRACT_TEXT_BYTES), depth=documented.get("depth", 64),
                         payload=payload if payload is not None and payload <= MAX_FUZZED_PAYLOAD else None)

    @fuzz_settings(EXAMPLES[name])
    @seeded
    @given(case=cli_case(command))
    def fuzz(case):
        execute_cli(case, places)

    with generates("cli", EXAMPLES[name]):
        fuzz()
