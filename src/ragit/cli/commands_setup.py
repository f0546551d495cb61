"""``ragit setup <client>``: MCP entry, usage section and (Claude Code) hooks for an agent
client, merged into its own configuration files (cli-contract §12)."""

from __future__ import annotations

import click

from ..contract.describe import _CWD, _DRY, _FMT, _spec, register
from .common import common, dry_run_option, existing_root
from .app import cli
from .output import Output

COMMAND = "setup"


@cli.command("setup")
@click.argument("client", required=False)
@click.option("--scope", default=None, metavar="project|user",
              help="project: files in the repository (default); user: the client's user configuration.")
@dry_run_option
@click.option("--uninstall", is_flag=True, default=False, help="Remove exactly what setup added.")
@common
def setup_cmd(client, scope, dry_run, uninstall, format_, cwd) -> Output:
    """Wire ragit into claude-code, codex, cursor, opencode or vscode (MCP entry, AGENTS.md section,
    Claude Code hooks)."""
    from ..contract.inputs import Validator
    from ..errors import RagitError
    from ..setup.clients import CLIENT_ALIASES, CLIENTS, SCOPES
    from ..setup.edits import SetupEditError
    from ..setup.run import run_setup, setup_text

    v = Validator(COMMAND)
    if client is None:
        raise v.fail("client", "required", f"name a client: {', '.join(CLIENTS)}", allowed=list(CLIENTS))
    client = v.choice(client, "client", CLIENTS, CLIENT_ALIASES)
    scope = "project" if scope is None else v.choice(scope, "--scope", SCOPES)
    root, in_git = existing_root(cwd, COMMAND)
    try:
        data = run_setup(client, scope, root, in_git, dry_run=dry_run, uninstall=uninstall)
    except SetupEditError as exc:
        path = exc.path
        try:
            shown = path.relative_to(root).as_posix()
        except ValueError:
            shown = str(path)
        raise RagitError("CONFIG_INVALID", str(exc), {"path": shown, "reason": exc.reason}, "ragit doctor") from None
    return Output(COMMAND, data, lambda: setup_text(data, uninstall), data["warnings"], cwd=str(root))


register(_spec(
    "setup", "Wire ragit into an agent client: its MCP server entry in the client's own config file, a ragit "
             "section in AGENTS.md (and CLAUDE.md), and for Claude Code hooks for recall, offload and wrap.",
    related=["mcp", "memory recall", "memory wrap", "window recall", "hooks install"],
    mutating=True, dry_run=True,
    outputs=["client", "scope", "dryRun", "files", "files[].path", "files[].action", "files[].content", "warnings"],
    arguments=[{"name": "client", "type": "string", "required": True,
                "description": "claude-code, codex, cursor, opencode or vscode."}],
    options=[{"name": "--scope", "type": "enum", "description": "project: files in the repository; user: the "
              "client's user configuration.", "enum": ["project", "user"], "defaultValue": "project"},
             _DRY,
             {"name": "--uninstall", "type": "boolean",
              "description": "Remove exactly what setup added; files come back byte for byte."},
             _FMT, _CWD],
    examples=["ragit setup claude-code --dry-run", "ragit setup claude-code", "ragit setup cursor --scope user",
              "ragit setup codex --uninstall"],
    errors=["INPUT_INVALID", "CONFIG_INVALID"],
    formats=("json", "json"),
))
