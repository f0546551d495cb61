"""``ragit mcp``: the tools of :mod:`ragit.mcp.tools` served over stdio with the official MCP SDK.

The low-level ``Server`` is used on purpose: the input schemas come from ragit's own input
models (``ragit.mcp.schemas``), not from Python signatures, and every argument is validated by
those models, so a bad argument fails with the same typed ``INPUT_INVALID`` as the CLI, as a
tool error the model can read and correct (MCP SEP-1303). Only what cannot name a tool call at
all is a JSON-RPC error -32602: params that are not an object, an unknown tool, arguments that
are not an object (their ``data`` is still ragit's error object).

Library calls are blocking (git, SQLite, numpy) and run in worker threads, so the protocol loop
keeps answering pings, listings and cancellations. Read-only calls run concurrently, each on a
Repo leased from the workspace's pool; the two writing tools run one at a time. The stdio
transport (``ragit.mcp.transport``) answers malformed lines the SDK would drop, and points
fd 1 at stderr while serving, so nothing but protocol messages can reach stdout.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import anyio
import anyio.to_thread
import mcp_types as types
from mcp.server.lowlevel import Server
from mcp.shared.exceptions import MCPError

from .._version import __version__
from .schemas import OUTPUT
from .tools import BY_NAME, TOOLS, Tool, ToolOutcome, Workspace, call_tool, error_outcome, unknown_tool
from .transport import INVALID_PARAMS, stdio_transport

# Worker threads for tool calls (the stdin reader keeps its own, so the loop never starves).
MAX_CONCURRENT_CALLS = 8

INSTRUCTIONS = (
    "ragit serves commit-bound, cited context for the repository at {root}. Every result names the "
    "snapshot it came from (`snapshot`); cite hits by `citation.id` and check them later with "
    "verify_citation. Retrieval tools answer in the minimal view unless `view` asks for more. A failure "
    "is a tool error whose text is ragit's error object as JSON (code, category, message, retryable, "
    "details, recovery); retry when `retryable` is true, else follow `recovery.command`."
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


def protocol_result(outcome: ToolOutcome) -> types.CallToolResult:
    """A tool result: structured content only on success (an error carries none, so a client
    that checks it against the output schema still sees the typed error in the text)."""
    content = [types.TextContent(text=outcome.text)]
    if outcome.is_error:
        return types.CallToolResult(content=content, is_error=True)
    return types.CallToolResult(content=content, structured_content=outcome.structured, is_error=False)


def invalid_params(outcome: ToolOutcome) -> MCPError:
    """JSON-RPC -32602 whose ``data`` is ragit's error object."""
    assert outcome.error is not None
    return MCPError(code=INVALID_PARAMS, message=f"Invalid params: {outcome.error['message']}", data=outcome.error)


def build_server(workspace: Workspace) -> Server[Any]:
    """A server whose tools run against ``workspace``: reads concurrently, writes one at a time."""
    listing = types.ListToolsResult(tools=[protocol_tool(tool) for tool in TOOLS])
    writes = anyio.Lock()
    limiter = anyio.CapacityLimiter(MAX_CONCURRENT_CALLS)

    async def on_list_tools(ctx: Any, params: types.PaginatedRequestParams | None) -> types.ListToolsResult:
        return listing

    async def on_call_tool(ctx: Any, params: types.CallToolRequestParams) -> types.CallToolResult:
        tool = BY_NAME.get(params.name)
        if tool is None:
            raise invalid_params(error_outcome(unknown_tool(params.name)))
        if tool.read_only:
            outcome = await anyio.to_thread.run_sync(call_tool, workspace, tool.name, params.arguments,
                                                     limiter=limiter)
        else:
            async with writes:
                outcome = await anyio.to_thread.run_sync(call_tool, workspace, tool.name, params.arguments,
                                                         limiter=limiter)
        return protocol_result(outcome)

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
    async with stdio_transport() as (read_stream, write_stream):
        await server.run(read_stream, write_stream, server.create_initialization_options())
