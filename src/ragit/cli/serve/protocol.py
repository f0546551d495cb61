"""What the CLI client and ``ragit serve`` agree on: where the socket is, how a message is framed,
which commands may be forwarded, and what must be equal for a server's answer to be the answer the
client would have computed itself.

This module is imported on every CLI start, before click: it imports only built-in modules.
Messages are ``marshal`` frames (a 4-byte big-endian length, then the data): ``marshal`` is built
into the interpreter, so the client pays no ``json``/``re`` import; both ends run the same ragit
build on the same Python (the key below), over a socket only its owner can open (mode 0600,
peer uid checked), and only plain dicts, lists, strings, numbers and booleans are exchanged.
"""

from __future__ import annotations

import marshal
import os
import sys

PROTOCOL = 1
SOCKET_PARTS = (".ragit", "cache", "serve.sock")
MAX_FRAME = 256 << 20  # a --view full answer over a large budget stays far below this

# Read-only commands whose answer a warm process gives byte for byte (cli-contract: read commands).
FORWARDED = frozenset({"query", "context pack", "context packet", "memory recall", "verify"})

# Applied by the server for the one request (they change output, and differ call by call).
PER_REQUEST_ENV = ("RAGIT_NOW", "RAGIT_DEBUG")
# Read by the client only.
CLIENT_ENV = ("RAGIT_NO_SERVE", "RAGIT_SERVE_TIMEOUT")
# Everything else that can change what a command prints (git's configuration and locale, the
# interpreter, BLAS threads that change float summation order): must equal the server's own.
_ENV_PREFIXES = ("RAGIT_", "GIT_", "PYTHON", "OPENBLAS_", "OMP_", "MKL_", "LC_")
_ENV_NAMES = frozenset({"HOME", "PATH", "LANG", "LANGUAGE", "TZ", "XDG_CONFIG_HOME"})

# How long a client waits for an answer before it runs the command itself (seconds). A query may
# legitimately wait for a running ingest (retrieval.ingest_wait_seconds, 10 by default).
DEFAULT_TIMEOUT = 30.0


def build_key() -> tuple[str, str, str, int]:
    """Which ragit build answers: its version, its package directory and the Python it runs on."""
    from ..._version import __version__

    package = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    return (__version__, package, sys.version, PROTOCOL)


def matched_env(environ: os._Environ | dict[str, str]) -> dict[str, str]:
    """The variables a server must share with a client to answer for it."""
    return {k: v for k, v in environ.items()
            if (k in _ENV_NAMES or k.startswith(_ENV_PREFIXES)) and k not in PER_REQUEST_ENV and k not in CLIENT_ENV}


def socket_path(root: str) -> str:
    """``<root>/.ragit/cache/serve.sock``."""
    return os.path.join(root, *SOCKET_PARTS)


def encode(message: dict) -> bytes:
    """One frame: length, then the marshalled message."""
    body = marshal.dumps(message)
    return len(body).to_bytes(4, "big") + body


def recv_frame(sock) -> dict:
    """Read one frame from ``sock``; ``ValueError`` on a short, oversized or malformed frame."""
    head = _recv_exact(sock, 4)
    size = int.from_bytes(head, "big")
    if size > MAX_FRAME:
        raise ValueError("frame too large")
    message = marshal.loads(_recv_exact(sock, size))
    if not isinstance(message, dict):
        raise ValueError("not a message")
    return message


def _recv_exact(sock, size: int) -> bytes:
    buf = bytearray()
    while len(buf) < size:
        chunk = sock.recv(min(size - len(buf), 1 << 20))
        if not chunk:
            raise ValueError("connection closed")
        buf += chunk
    return bytes(buf)


# sockaddr_un holds 108 bytes; a deeper socket is reached through its directory.
_SUN_PATH_MAX = 107


def at_socket(sock, path: str, action: str) -> None:
    """``sock.connect(path)`` or ``sock.bind(path)``; a path too long for ``sockaddr_un`` is used
    relative to its directory (the process changes directory for the call and back)."""
    call = getattr(sock, action)
    if len(os.fsencode(path)) <= _SUN_PATH_MAX:
        call(path)
        return
    here = os.getcwd()
    os.chdir(os.path.dirname(path))
    try:
        call(os.path.basename(path))
    finally:
        os.chdir(here)
