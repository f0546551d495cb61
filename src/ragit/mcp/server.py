"""``ragit mcp``: the tools of :mod:`ragit.mcp.tools` served over stdio with the official MCP SDK.

The low-level ``Server`` is used on purpose: the input schemas come from ragit's own input
models (``ragit.mcp.schemas``), not from Python signatures, and every argument is validated by
those models, so a bad call fails with the same typed ``INPUT_INVALID`` as the CLI. Library
calls are blocking (git, SQLite, numpy); they run one at a time in a worker thread so the
protocol loop keeps answering pings and cancellations. While serving, the SDK points fd 1 at
stderr, so nothing but protocol messages can reach stdout.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import anyio
import anyio.to_thread
import mcp_types as types
from mcp.server.lowlevel import Server
from mcp.server.stdio import stdio_server

from .._version import __version__
from .schemas import OUTPUT
from .tools import TOOLS, Tool, Workspace, call_tool

INSTRUCTIONS = (
    "ragit serves commit-bound, cited context for the repository at {root}. Every result names the "
    "snapshot it came from (`snapshot`); cite hits by `citation.id` and check them later with "
    "verify_citation. Failures are tool errors whose structured content is ragit's error object "
    "(code, category, message, retryable, details, recovery)."
)


def protocol_tool(tool: Tool) -> types.Tool:
    """The listing entry of one tool; read-only tools carry the read-only hint."""
    return types.Tool(
        name=tool.name,
        title=tool.title,
        description=tool.description,
        input_schema=tool.input_schema,
        output_schema=OUTPUT,
        annotations=types.ToolAnnotations(
            title=tool.title,
            read_only_hint=tool.read_only,
            destructive_hint=None if tool.read_only else tool.destructive,
            open_world_hint=False,
        ),
    )


def build_server(workspace: Workspace) -> Server[Any]:
    """A server whose tools run against ``workspace``, one call at a time."""
    listing = types.ListToolsResult(tools=[protocol_tool(tool) for tool in TOOLS])
    lock = anyio.Lock()

    async def on_list_tools(ctx: Any, params: types.PaginatedRequestParams | None) -> types.ListToolsResult:
        return listing

    async def on_call_tool(ctx: Any, params: types.CallToolRequestParams) -> types.CallToolResult:
        async with lock:
            outcome = await anyio.to_thread.run_sync(call_tool, workspace, params.name, params.arguments)
        return types.CallToolResult(
            content=[types.TextContent(text=outcome.text)],
            structured_content=outcome.structured,
            is_error=outcome.is_error,
        )

    return Server(
        "ragit",
        version=__version__,
        instructions=INSTRUCTIONS.format(root=workspace.root),
        on_list_tools=on_list_tools,
        on_call_tool=on_call_tool,
    )


def serve(root: Path, in_git: bool) -> None:
    """Serve until the client closes stdin."""
    anyio.run(_serve, Workspace(root, in_git))


async def _serve(workspace: Workspace) -> None:
    server = build_server(workspace)
    async with stdio_server() as (read_stream, write_stream):
        await server.run(read_stream, write_stream, server.create_initialization_options())
