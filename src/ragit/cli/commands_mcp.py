"""``ragit mcp``: serve ragit's tools to an MCP client over stdio (cli-contract §11).

The server module, and with it the MCP SDK, is imported only when the command runs, so
``ragit --help`` and every other command start without it.
"""

from __future__ import annotations

from ..contract.describe import _CWD, _spec, register
from .common import cwd_option, existing_root
from .app import cli

# The tools of ragit.mcp.tools.TOOLS, in listing order (a test keeps the two equal).
TOOL_NAMES = ("query", "context_pack", "context_packet", "memory_recall", "memory_wrap", "artifact_capture",
              "tool_result_recall", "session_search", "verify_citation")


@cli.command("mcp")
@cwd_option
def mcp_cmd(cwd: str | None) -> None:
    """Serve ragit's tools to an MCP client over stdio (JSON-RPC on stdout, logs on stderr)."""
    root, in_git = existing_root(cwd, "mcp")
    from ..mcp.server import serve

    serve(root, in_git)


register(_spec(
    "mcp", "Serve query, context pack/packet, memory recall/wrap, artifact capture, tool-result recall, "
           "session search and citation verification as MCP tools over stdio.",
    related=["query", "context pack", "context packet", "memory recall", "memory wrap", "artifact capture",
             "window recall", "session search", "verify"],
    mutating=True,
    outputs=[f"tools/{name}" for name in TOOL_NAMES],
    options=[_CWD],
    examples=["ragit mcp", "ragit mcp --cwd ~/src/project"],
    errors=["INPUT_INVALID"],
    formats=("json", "json"),
))
