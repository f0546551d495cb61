"""The CLI side of ``ragit serve``: forward a read-only command to the repository's warm server and
print its answer, or say "run it yourself".

It runs before the CLI imports click or any command module, so it uses only built-in modules and
:mod:`ragit.cli.argv`. Every doubt means "run in-process": no socket, a socket that is not ours, a
refused or stale connection, a server of another build or environment, a timeout, a malformed
answer. Only a complete, well-formed answer is printed, so a fallback never prints twice.
"""

from __future__ import annotations

import os
import stat
import sys

from ...gitsnap.toplevel import worktree_root
from .. import argv as argvmod
from .protocol import (
    CLIENT_ENV,
    DEFAULT_TIMEOUT,
    FORWARDED,
    PER_REQUEST_ENV,
    at_socket,
    build_key,
    encode,
    matched_env,
    recv_frame,
    socket_path,
)


def forward(raw: list[str]) -> int | None:
    """Print the server's answer to ``ragit <raw>`` and return its exit code; None when the
    command must run in this process."""
    try:
        reply = _ask(raw)
    except KeyboardInterrupt:  # as in-process: interrupted, no envelope
        return 130
    except Exception:  # noqa: BLE001 - any failure of the round trip means "run it yourself"
        return None
    if reply is None:
        return None
    writes, code = reply
    for fd, text in writes:
        stream = sys.stdout if fd == 1 else sys.stderr
        stream.write(text)
        stream.flush()
    return code


def disabled() -> bool:
    """``RAGIT_NO_SERVE`` set to anything but empty or ``0``."""
    return os.environ.get(CLIENT_ENV[0], "") not in ("", "0")


def forwardable(raw: list[str]) -> bool:
    """A read-only command, without help/version and without stdin input."""
    if " ".join(argvmod.command_path(raw)) not in FORWARDED:
        return False
    for tok in raw:
        if tok == "--":
            break
        if tok in ("--help", "-h", "--version"):
            return False
    given = argvmod.raw_option(raw, ("--input",))
    return given is None or given != "-"


def server_socket(root: str) -> str | None:
    """The repository's socket when it exists, is a socket and belongs to this user."""
    path = socket_path(root)
    try:
        st = os.stat(path)
    except OSError:
        return None
    if not stat.S_ISSOCK(st.st_mode) or st.st_uid != os.getuid():
        return None
    return path


def timeout() -> float:
    """``RAGIT_SERVE_TIMEOUT`` seconds (default 30): then the client stops waiting."""
    try:
        value = float(os.environ.get(CLIENT_ENV[1], "") or DEFAULT_TIMEOUT)
    except ValueError:
        return DEFAULT_TIMEOUT
    return value if value > 0 else DEFAULT_TIMEOUT


def request(path: str, message: dict, wait: float) -> dict:
    """One round trip to the server at ``path``."""
    import _socket

    sock = _socket.socket(_socket.AF_UNIX, _socket.SOCK_STREAM)
    try:
        sock.settimeout(wait)
        at_socket(sock, path, "connect")
        sock.sendall(encode(message))
        return recv_frame(sock)
    finally:
        sock.close()


def _ask(raw: list[str]) -> tuple[list[tuple[int, str]], int] | None:
    if disabled() or not forwardable(raw):
        return None
    cwd = os.getcwd()
    given = argvmod.raw_option(raw, ("--cwd",))
    start = os.path.abspath(os.path.join(cwd, os.path.expanduser(given))) if given else cwd
    root = worktree_root(start)
    path = server_socket(root) if root is not None else None
    if path is None:
        return None
    environ = os.environ
    message = {
        "op": "run",
        "key": build_key(),
        "argv": list(raw),
        "cwd": cwd,
        "env": matched_env(environ),
        "requestEnv": {k: environ[k] for k in PER_REQUEST_ENV if k in environ},
        "tty": [_isatty(sys.stdout), _isatty(sys.stderr)],
    }
    reply = request(path, message, timeout())
    if reply.get("status") != "ok":
        return None
    writes, code = reply.get("writes"), reply.get("exit")
    if type(code) is not int or not isinstance(writes, list):
        return None
    for item in writes:
        if (not isinstance(item, tuple) or len(item) != 2 or item[0] not in (1, 2)
                or not isinstance(item[1], str)):
            return None
    return writes, code


def _isatty(stream) -> bool:
    try:
        return bool(stream.isatty())
    except (AttributeError, ValueError):
        return False
