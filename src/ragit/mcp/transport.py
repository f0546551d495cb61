"""The stdio transport of ``ragit mcp``: newline-delimited JSON-RPC that answers every request.

The SDK's own ``stdio_server`` validates each line as a whole JSON-RPC message and, when that
fails, hands the server an exception without the request id, so the request is never answered
and the client hangs: ``tools/call`` with array params, ``tools/list`` with string params, a
string with a lone surrogate escape. This transport parses each line itself (Python's reader,
which keeps lone surrogates and ``NaN`` so the tools can reject them with a typed error) and
answers what it cannot pass on (JSON-RPC 2.0 §5.1):

- a line that is not JSON → -32700 with id null;
- a request whose ``params`` is not an object, or a ``tools/call`` whose ``name`` is not a
  string or whose ``arguments`` is not an object → -32602 (invalid params) with its id;
- any other invalid message with a usable id → -32600 (invalid request); without one, id null.

When stdin ends, the requests already read are answered before the server stops (the SDK's
loop cancels the handlers still running at end of input, so a client that writes its requests and
closes stdin, ``ragit mcp < requests.jsonl`` say, lost the answers to the slow ones); a request
the client cancelled is not waited for. A client that wants the server gone sooner stops it the
way the MCP stdio transport says, with SIGTERM.

Like the SDK's, it claims the process's stdio while serving: fd 0 reads the null device and
fd 1 writes to stderr, so a stray ``print`` or child process can never corrupt the protocol;
both are restored on exit.
"""

from __future__ import annotations

import io
import json
import logging
import os
import re
import sys
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from typing import Any, BinaryIO

import anyio
import mcp_types as types
from anyio.streams.memory import MemoryObjectReceiveStream, MemoryObjectSendStream
from mcp.shared.message import SessionMessage

logger = logging.getLogger("ragit.mcp")

PARSE_ERROR = -32700
INVALID_REQUEST = -32600
INVALID_PARAMS = -32602


def _claim_stdio() -> tuple[BinaryIO, BinaryIO, Callable[[], None]]:
    """The wire ends of stdin/stdout, and a function that restores fds 0 and 1.

    Falls back to the sys streams' buffers (no claim) when they are not real descriptors.
    """
    try:
        in_fd, out_fd = sys.stdin.fileno(), sys.stdout.fileno()
    except (AttributeError, OSError, ValueError):
        return sys.stdin.buffer, sys.stdout.buffer, lambda: None
    sys.stdout.flush()
    wire_in, wire_out = os.dup(in_fd), os.dup(out_fd)
    _point(in_fd, os.devnull, os.O_RDONLY)
    try:
        os.dup2(sys.stderr.fileno(), out_fd)
    except (AttributeError, OSError, ValueError):  # no real stderr: stray output goes nowhere
        _point(out_fd, os.devnull, os.O_WRONLY)

    def restore() -> None:
        os.dup2(wire_out, out_fd)
        os.dup2(wire_in, in_fd)

    # closefd=False: the reader thread may still block on wire_in when serving ends
    return os.fdopen(wire_in, "rb", closefd=False), os.fdopen(wire_out, "wb", closefd=False), restore


def _point(fd: int, path: str, flags: int) -> None:
    """Make ``fd`` refer to ``path``."""
    target = os.open(path, flags)
    try:
        os.dup2(target, fd)
    finally:
        os.close(target)


def _request_id(obj: dict[str, Any]) -> str | int | None:
    """The message's id when it is a usable JSON-RPC id (a string or an integer, not a bool)."""
    rid = obj.get("id")
    return rid if isinstance(rid, (str, int)) and not isinstance(rid, bool) else None


def _error(rid: str | int | None, code: int, message: str, data: Any = None) -> SessionMessage:
    error = types.ErrorData(code=code, message=message, data=data) if data is not None else \
        types.ErrorData(code=code, message=message)
    return SessionMessage(types.JSONRPCError(jsonrpc="2.0", id=rid, error=error))


def params_error(obj: dict[str, Any]) -> str | None:
    """Why a request's params cannot reach a handler, or None: the checks the SDK's message
    model makes without keeping the id to answer with."""
    params = obj.get("params")
    if params is None:
        return None
    if not isinstance(params, dict):
        return f"params of {obj.get('method')} must be an object, not {_json_type(params)}"
    if obj.get("method") == "tools/call":
        if not isinstance(params.get("name"), str):
            return "tools/call needs params.name, the tool name as a string"
        arguments = params.get("arguments")
        if arguments is not None and not isinstance(arguments, dict):
            return f"tools/call params.arguments must be an object, not {_json_type(arguments)}"
    return None


def _json_type(value: Any) -> str:
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, (int, float)):
        return "a number"
    return {str: "a string", list: "an array", dict: "an object"}.get(type(value), "null")


# A JSON string literal (unrolled: no backtracking per character), a bracket, or a run of neither.
_TOKENS = re.compile(r'"[^"\\]*(?:\\.[^"\\]*)*"|[\[\]{}]|[^"\[\]{}]+', re.S)
SHALLOW_DEPTH = 200  # deeper than any argument limit (64), far below the parser's recursion limit


def _shallow(line: str) -> Any:
    """``line`` parsed with every container nested deeper than :data:`SHALLOW_DEPTH` left empty,
    or None when that is not JSON either."""
    out: list[str] = []
    depth = 0
    for match in _TOKENS.finditer(line):
        token = match.group()
        if token in ("[", "{"):
            depth += 1
            if depth <= SHALLOW_DEPTH + 1:
                out.append(token)
        elif token in ("]", "}"):
            if depth <= SHALLOW_DEPTH + 1:
                out.append(token)
            depth -= 1
        elif depth <= SHALLOW_DEPTH:
            out.append(token)
    try:
        return json.loads("".join(out))
    except (ValueError, RecursionError):
        return None


def screen(line: str) -> SessionMessage | None:
    """A line as the message to pass on, or the error response to send back instead.

    Returns None for a line that needs no answer (blank, or an invalid notification)."""
    if not line.strip():
        return None
    try:
        obj = json.loads(line)
    except RecursionError:
        # Too deep for Python's parser, yet it may be a request whose id must be answered: parse
        # it with its deepest containers emptied. What remains still nests deeper than any limit,
        # so a tool call fails typed (INPUT_INVALID, too_deep) and the client gets its answer.
        obj = _shallow(line)
        if obj is None:
            return _error(None, PARSE_ERROR, "Parse error: the message nests too deeply to be read")
    except ValueError as exc:
        return _error(None, PARSE_ERROR, f"Parse error: {str(exc)[:200]}")
    if not isinstance(obj, dict):
        return _error(None, INVALID_REQUEST, "Invalid Request: a message must be a JSON object (no batches)")
    rid = _request_id(obj)
    is_request = "method" in obj and "id" in obj
    if is_request and rid is not None and isinstance(obj.get("method"), str):
        problem = params_error(obj)
        if problem is not None:
            return _error(rid, INVALID_PARAMS, f"Invalid params: {problem}")
    try:
        message = types.jsonrpc_message_adapter.validate_python(obj, by_name=False)
    except Exception:  # noqa: BLE001 - pydantic's text echoes the message; keep it off the wire
        if "method" in obj and "id" not in obj:
            logger.warning("dropped an invalid notification")
            return None
        return _error(rid, INVALID_REQUEST, "Invalid Request: not a JSON-RPC 2.0 request, notification or response")
    return SessionMessage(message)


class _Unanswered:
    """Ids of the requests passed to the server and not yet answered."""

    def __init__(self) -> None:
        self.ids: set[Any] = set()
        self.changed = anyio.Event()

    def read(self, message: Any) -> None:
        if isinstance(message, types.JSONRPCRequest):
            self.ids.add(message.id)
        elif isinstance(message, types.JSONRPCNotification) and message.method == "notifications/cancelled":
            self._forget((message.params or {}).get("requestId"))

    def written(self, message: Any) -> None:
        if isinstance(message, (types.JSONRPCResponse, types.JSONRPCError)):
            self._forget(message.id)

    def _forget(self, rid: Any) -> None:
        # a cancellation's ``requestId`` is the client's to spell: only a string or an integer can
        # name a request (an array or object would not even hash; ``true`` would equal id 1)
        if type(rid) in (str, int) and rid in self.ids:
            self.ids.discard(rid)
            self.changed.set()

    async def drained(self) -> None:
        while self.ids:
            self.changed = anyio.Event()
            await self.changed.wait()


@asynccontextmanager
async def stdio_transport() -> AsyncIterator[tuple[MemoryObjectReceiveStream[Any], MemoryObjectSendStream[Any]]]:
    """Serve over the process's stdio: yields the (read, write) streams ``Server.run`` takes.

    On exit every reply already handed to the write stream is written before stdout is given
    back; a reader still blocked on stdin is abandoned, not waited for.
    """
    wire_in, wire_out, restore = _claim_stdio()
    lines_in = io.TextIOWrapper(wire_in, encoding="utf-8", errors="replace")
    lines_out = io.TextIOWrapper(wire_out, encoding="utf-8")
    to_server, read_stream = anyio.create_memory_object_stream[Any](0)
    write_stream, outgoing = anyio.create_memory_object_stream[SessionMessage](0)
    replies = write_stream.clone()  # the reader answers malformed lines on its own handle
    reader_scope = anyio.CancelScope()
    unanswered = _Unanswered()

    async def read_lines() -> None:
        with reader_scope:
            async with to_server, replies:
                while line := await anyio.to_thread.run_sync(lines_in.readline, abandon_on_cancel=True):
                    item = screen(line)
                    if item is None:
                        continue
                    if isinstance(item.message, types.JSONRPCError):
                        await replies.send(item)
                    else:
                        unanswered.read(item.message)
                        await to_server.send(item)
                await unanswered.drained()  # end of input: answer what was asked first

    def write(text: str) -> None:
        lines_out.write(text + "\n")
        lines_out.flush()

    async def write_lines() -> None:
        async with outgoing:
            async for item in outgoing:
                try:
                    text = item.message.model_dump_json(by_alias=True, exclude_unset=True)
                except Exception:  # noqa: BLE001 - one unserialisable reply must not stop the server
                    logger.exception("could not serialise a reply")
                    continue
                await anyio.to_thread.run_sync(write, text)
                unanswered.written(item.message)

    try:
        async with anyio.create_task_group() as tg:
            tg.start_soon(read_lines)
            tg.start_soon(write_lines)
            try:
                yield read_stream, write_stream
            finally:
                reader_scope.cancel()
                await write_stream.aclose()
    finally:
        restore()
