"""``ragit gate``: the edit-time evidence gate, a Claude Code ``PreToolUse`` hook (knowledge §22.4).

:func:`ragit.cli.main.main` runs it before click is imported (it runs before every edit); this
module only makes it visible to ``--help`` and ``describe`` and serves callers of ``app.run``.
"""

from __future__ import annotations

import sys

import click

from ..contract.describe import _spec, register
from .app import cli


@cli.command("gate")
@click.option("--cwd", "cwd", default=None, help="The repository (default: the payload's cwd).")
def gate_cmd(cwd: str | None) -> None:
    """PreToolUse hook for edit tools: warn or block when cited evidence drifted (payload on stdin)."""
    from ..gate.hook import main

    sys.exit(main(["--cwd", cwd] if cwd else []))


register(_spec(
    "gate", "Claude Code PreToolUse hook for Edit, Write, MultiEdit and NotebookEdit: checks the citations of the "
    "session's last served pack, packet or query, and memory decisions and open loops citing the edited file, "
    "against the working tree; gate.mode warn (context) or block (deny). Fails open; read-only.",
    related=["setup", "verify", "memory verify", "context pack"], mutating=False,
    outputs=["hookSpecificOutput.hookEventName", "hookSpecificOutput.permissionDecision",
             "hookSpecificOutput.permissionDecisionReason", "hookSpecificOutput.additionalContext", "systemMessage"],
    options=[{"name": "--cwd", "type": "string", "description": "The repository (default: the payload's cwd)."}],
    examples=["ragit gate --cwd . < pretooluse-payload.json", "ragit config set gate.mode block"],
    errors=[], formats=("json", "json"),
))
