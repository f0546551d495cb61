"""``ragit serve``: keep a warm process for one repository that read-only commands forward to.

The server itself is :mod:`ragit.cli.serve.server`; this module parses the options, starts it in the
foreground or detached, and asks a running one for its status or to stop.
"""

from __future__ import annotations

import os
import sys
import time
from pathlib import Path
from typing import Any

import click

from ..contract.describe import _CWD, _FMT, _spec, register
from .app import cli
from .common import common, git_root
from .output import Output, effective_format

COMMAND = "serve"
START_SECONDS = 120.0  # how long --detach waits for the new server to answer (warm-up included)
STOP_SECONDS = 10.0  # how long --stop waits for the socket to disappear


@cli.command(COMMAND)
@click.option("--idle-timeout", "idle_timeout", default=None, metavar="SECONDS",
              help="Exit after this many seconds without a request (default 1800; 0 = never).")
@click.option("--detach", is_flag=True, default=False, help="Start in the background and return once it answers.")
@click.option("--stop", is_flag=True, default=False, help="Stop the repository's running server.")
@click.option("--status", "status_", is_flag=True, default=False, help="Report whether a server runs, and its counters.")
@common
def serve_cmd(idle_timeout, detach, stop, status_, format_, cwd) -> Output:
    """Answer read-only commands (query, context pack, ...) from a warm process until idle."""
    from ..errors import input_invalid
    from .serve.protocol import socket_path
    from .serve.server import DEFAULT_IDLE_SECONDS

    chosen = [name for name, on in (("--detach", detach), ("--stop", stop), ("--status", status_)) if on]
    if len(chosen) > 1:
        raise input_invalid(chosen[1], "mixed_input", f"{' and '.join(chosen)} cannot be combined",
                            command=COMMAND, conflicts=chosen)
    idle = int(DEFAULT_IDLE_SECONDS)
    if idle_timeout is not None:
        text = idle_timeout.strip()
        if not text.isdigit():
            raise input_invalid("--idle-timeout", "not_integer", f"--idle-timeout must be a whole number of "
                                f"seconds, got {idle_timeout!r}", command=COMMAND, value=idle_timeout)
        idle = int(text)
    root, _git = git_root(cwd)
    path = socket_path(str(root))
    if status_:
        data = _current(path) or _absent(root, path)
    elif stop:
        data = _stop(root, path)
    elif detach:
        data = _detach(root, path, idle)
    else:
        data = _foreground(root, idle, effective_format(format_, "json") != "json")
    return Output(COMMAND, data, lambda: serve_text(data), cwd=str(root))


def serve_text(data: dict[str, Any]) -> str:
    """``# ragit serve`` and one ``- key: value`` line per field."""
    lines = ["# ragit serve"]
    for key, value in data.items():
        shown = "none" if value is None else ("true" if value is True else "false" if value is False else value)
        lines.append(f"- {_snake(key)}: {shown}")
    return "\n".join(lines) + "\n"


def _snake(key: str) -> str:
    return "".join("_" + c.lower() if c.isupper() else c for c in key)


def _current(path: str) -> dict[str, Any] | None:
    """The running server's status, or None when nothing answers."""
    from .serve.client import request

    if not os.path.lexists(path):
        return None
    try:
        reply = request(path, {"op": "status"}, 5.0)
    except Exception:  # noqa: BLE001 - a stale socket: no server
        return None
    return reply.get("data") if reply.get("status") == "ok" else None


def _absent(root: Path, path: str) -> dict[str, Any]:
    return {"status": "not-running", "root": str(root), "socket": os.path.relpath(path, root)}


def _stop(root: Path, path: str) -> dict[str, Any]:
    from .serve.client import request

    if _current(path) is None:
        return _absent(root, path)
    try:
        reply = request(path, {"op": "stop"}, 5.0)
    except Exception:  # noqa: BLE001 - it went away between the two calls
        return _absent(root, path)
    deadline = time.monotonic() + STOP_SECONDS
    while os.path.lexists(path) and time.monotonic() < deadline:
        time.sleep(0.02)
    data = dict(reply.get("data") or {})
    data["status"] = "stopped" if not os.path.lexists(path) else "stopping"
    return data


def _detach(root: Path, path: str, idle: int) -> dict[str, Any]:
    import subprocess

    running = _current(path)
    if running is not None:
        return running | {"status": "already-running"}
    os.makedirs(os.path.dirname(path), exist_ok=True)
    argv = [sys.executable, "-m", "ragit", COMMAND, "--cwd", str(root), "--idle-timeout", str(idle),
            "--format", "json"]
    with open(os.path.join(os.path.dirname(path), "serve.log"), "ab") as log:
        child = subprocess.Popen(argv, cwd=root, stdin=subprocess.DEVNULL, stdout=log, stderr=log,
                                 start_new_session=True)
    deadline = time.monotonic() + START_SECONDS
    while time.monotonic() < deadline:
        running = _current(path)
        if running is not None and running.get("pid") == child.pid:
            return running | {"status": "started"}
        code = child.poll()
        if code is not None:
            from ..errors import RagitError

            running = _current(path)  # lost a race with another starter: that one serves
            if running is not None:
                return running | {"status": "already-running"}
            raise RagitError("INTERNAL_ERROR", f"ragit serve exited with status {code} before answering "
                             f"(see {os.path.relpath(log.name, root)})", {"type": "ServeStartFailed"})
        time.sleep(0.05)
    from ..errors import RagitError

    raise RagitError("INTERNAL_ERROR", "ragit serve did not answer in time", {"type": "ServeStartTimeout"})


def _foreground(root: Path, idle: int, verbose: bool) -> dict[str, Any]:
    from .serve.server import AlreadyRunning, Server

    def log(line: str) -> None:
        if verbose:
            sys.stderr.write(line + "\n")
            sys.stderr.flush()

    try:
        return Server(root, idle, log).serve()
    except AlreadyRunning as exc:
        return exc.status | {"status": "already-running"}


register(_spec(
    COMMAND, "Keep one warm process for this repository that answers query, context pack, context packet, "
             "memory recall and verify for the CLI, byte for byte, until it is idle.",
    related=["query", "context pack", "mcp", "status"],
    mutating=True,  # it creates .ragit/cache/serve.sock (and serve.log with --detach)
    outputs=["status", "pid", "root", "socket", "version", "idleTimeoutSeconds", "uptimeSeconds", "idleSeconds",
             "requests", "fallbacks", "reason"],
    options=[{"name": "--idle-timeout", "type": "integer",
              "description": "Exit after this many seconds without a request (0 = never).", "defaultValue": 1800},
             {"name": "--detach", "type": "boolean", "description": "Start in the background; return once it answers."},
             {"name": "--stop", "type": "boolean", "description": "Stop the repository's running server."},
             {"name": "--status", "type": "boolean", "description": "Report whether a server runs, and its counters."},
             _FMT, _CWD],
    examples=["ragit serve --detach", "ragit serve --status --format json", "ragit serve --stop",
              "ragit serve --idle-timeout 600"],
    errors=["INPUT_INVALID", "GIT_REPOSITORY_REQUIRED", "INTERNAL_ERROR"],
    formats=("json", "json"),
))
