"""Each command imports only its own command modules (ragit.cli.main.COMMAND_MODULES), and gets
exactly the command tree that importing every module would give it."""

from __future__ import annotations

import json
import subprocess
import sys

from ragit.cli.main import COMMAND_MODULES

_TREE = r"""
import json, sys, click
import ragit.cli.main as m
m._register(sys.argv[1] if sys.argv[1] != "-" else None)
def walk(cmd, prefix):
    out = {prefix: sorted(p.name for p in cmd.params)}
    if isinstance(cmd, click.Group):
        for name, sub in cmd.commands.items():
            out.update(walk(sub, (prefix + " " + name).strip()))
    return out
print(json.dumps(walk(m.cli, "")))
"""


def _tree(command: str) -> dict:
    out = subprocess.run([sys.executable, "-c", _TREE, command], capture_output=True, text=True, check=True)
    return json.loads(out.stdout)


def test_every_command_is_mapped_and_gets_its_whole_tree():
    full = _tree("-")
    top = {path.split(" ")[0] for path in full if path}
    assert top - {"describe"} == set(COMMAND_MODULES)
    for command in COMMAND_MODULES:
        partial = _tree(command)
        mine = {p: v for p, v in full.items() if p == command or p.startswith(command + " ")}
        assert {p: v for p, v in partial.items() if p == command or p.startswith(command + " ")} == mine, command
