"""``ragit serve``: answer forwarded read-only commands from one warm :class:`ragit.api.Repo`.

A request carries the client's command line, working directory, terminal flags and the
variables that change output; the server runs exactly the CLI's own code path
(:func:`ragit.cli.app.run`) with stdout and stderr captured, so the answer is the one the client
would have printed, byte for byte, with the same exit code. What makes a warm answer differ from
a cold one is refused, and the client then runs the command itself: another ragit build or
Python (the key), another environment, source files changed since the server started, an
internal error.

Requests are handled one at a time (the CLI's rendering swaps ``sys.stdout``, and a Repo is not
shared between threads); a client waits at most its timeout and then runs in-process. The warm
Repo is rebuilt whenever the configuration or anything under ``.ragit/store`` or
``.ragit/manifest`` changed since it was made, so an ingest needs no signal. The server exits
after an idle timeout, when ``.ragit`` is removed, when its socket is replaced or removed, on
``ragit serve --stop``, SIGTERM or SIGINT.
"""

from __future__ import annotations

import io
import os
import signal
import socket
import struct
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from .protocol import PER_REQUEST_ENV, at_socket, build_key, encode, matched_env, recv_frame, socket_path

DEFAULT_IDLE_SECONDS = 1800.0
POLL_SECONDS = 1.0  # how often an idle server looks at its idle time, .ragit and its socket
READ_SECONDS = 5.0  # a connected client must send its request within this
WARM_UP = (["query", "ragit serve warm-up", "--format", "json"],
           ["context", "pack", "ragit serve warm-up", "--format", "json"])


class AlreadyRunning(Exception):
    """Another server answers on this repository's socket."""

    def __init__(self, status: dict[str, Any]):
        super().__init__("a server is already running")
        self.status = status


class _Fallback(Exception):
    """The request must run in the client (the reason goes back to it)."""


class _Capture(io.TextIOBase):
    """A text stream that records writes as (fd, text) and reports the client's terminal flag."""

    def __init__(self, fd: int, tty: bool, sink: list[tuple[int, str]]):
        super().__init__()
        self._fd, self._tty, self._sink = fd, tty, sink

    @property
    def encoding(self) -> str:  # type: ignore[override]
        return "utf-8"

    def writable(self) -> bool:
        return True

    def isatty(self) -> bool:
        return self._tty

    def write(self, text: str) -> int:
        if text:
            if self._sink and self._sink[-1][0] == self._fd:
                self._sink[-1] = (self._fd, self._sink[-1][1] + text)
            else:
                self._sink.append((self._fd, text))
        return len(text)


class Server:
    """One repository's warm server on ``<root>/.ragit/cache/serve.sock``."""

    def __init__(self, root: Path, idle_seconds: float = DEFAULT_IDLE_SECONDS,
                 log: Callable[[str], None] | None = None):
        self.root = Path(root)
        self.path = socket_path(str(self.root))
        self.idle_seconds = idle_seconds
        self.log = log or (lambda line: None)
        self.key = build_key()
        self.env = matched_env(os.environ)
        self.started = time.time()
        self._started_ns = time.time_ns()
        self._last = time.monotonic()
        self._repo: Any = None
        self._repo_state: tuple | None = None
        self._inode: tuple[int, int] | None = None
        self._stop: str | None = None
        self.requests = 0
        self.fallbacks = 0

    # ---------------------------------------------------------------- lifecycle

    def serve(self) -> dict[str, Any]:
        """Bind, warm up, answer until a stop condition; returns what happened."""
        sock = self._bind()
        # SIGTERM and SIGINT end the loop after the request in hand (an interrupt must not
        # become some client's answer)
        previous = {sig: signal.signal(sig, self._on_signal) for sig in (signal.SIGTERM, signal.SIGINT)}
        try:
            self._warm_up()
            sock.listen(16)
            sock.settimeout(POLL_SECONDS)
            self.log(f"[ragit] serving {self.root} on {os.path.relpath(self.path, self.root)} "
                     f"(idle timeout {self.idle_seconds:g} s)")
            while self._stop is None:
                try:
                    conn, _ = sock.accept()
                except TimeoutError:
                    self._housekeeping()
                    continue
                except KeyboardInterrupt:
                    self._stop = "signal"
                    break
                try:
                    self._handle(conn)
                except KeyboardInterrupt:
                    self._stop = "signal"
                finally:
                    conn.close()
                    self._last = time.monotonic()
                if self._stop is None:
                    self._housekeeping()
        except KeyboardInterrupt:
            self._stop = "signal"
        finally:
            for sig, handler in previous.items():
                signal.signal(sig, handler)
            sock.close()
            self._unlink_own_socket()
        return self.status() | {"status": "stopped", "reason": self._stop}

    def status(self) -> dict[str, Any]:
        """What ``ragit serve --status`` prints."""
        return {
            "status": "running",
            "pid": os.getpid(),
            "root": str(self.root),
            "socket": os.path.relpath(self.path, self.root),
            "version": self.key[0],
            "idleTimeoutSeconds": self.idle_seconds,
            "uptimeSeconds": round(time.time() - self.started, 3),
            "idleSeconds": round(time.monotonic() - self._last, 3),
            "requests": self.requests,
            "fallbacks": self.fallbacks,
        }

    def _on_signal(self, signum: int, frame: Any) -> None:
        self._stop = "signal"

    def _bind(self) -> socket.socket:
        from .client import request

        os.makedirs(os.path.dirname(self.path), exist_ok=True)
        if os.path.lexists(self.path):
            try:
                reply = request(self.path, {"op": "status"}, 2.0)
            except Exception:  # noqa: BLE001 - nobody answers: a stale socket left by a killed server
                reply = None
            if reply is not None and reply.get("status") == "ok":
                raise AlreadyRunning(reply.get("data") or {})
            os.unlink(self.path)
        sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        mask = os.umask(0o177)  # the socket is born 0600: no window where others may connect
        try:
            at_socket(sock, self.path, "bind")
        finally:
            os.umask(mask)
        os.chmod(self.path, 0o600)
        st = os.stat(self.path)
        self._inode = (st.st_dev, st.st_ino)
        return sock

    def _unlink_own_socket(self) -> None:
        try:
            st = os.stat(self.path)
            if (st.st_dev, st.st_ino) == self._inode:
                os.unlink(self.path)
        except OSError:
            pass

    def _housekeeping(self) -> None:
        """Stop when idle too long, when ``.ragit`` is gone, or when the socket is not ours."""
        if self.idle_seconds > 0 and time.monotonic() - self._last >= self.idle_seconds:
            self._stop = "idle"
        elif not os.path.isdir(self.root / ".ragit"):
            self._stop = "removed"
        else:
            try:
                st = os.stat(self.path)
                if (st.st_dev, st.st_ino) != self._inode:
                    self._stop = "replaced"
            except OSError:
                self._stop = "removed"

    def _warm_up(self) -> None:
        """Import the read path and load the snapshot's vectors before the first client."""
        from .. import common

        common.repo_provider = self._provide_repo
        for argv in WARM_UP:
            try:
                self._run(argv + ["--cwd", str(self.root)], str(self.root), {}, (False, False))
            except _Fallback:  # a store that cannot answer yet: the first real request says why
                pass

    # ---------------------------------------------------------------- requests

    def _handle(self, conn: socket.socket) -> None:
        conn.settimeout(READ_SECONDS)
        if not self._same_user(conn):
            return
        try:
            message = recv_frame(conn)
        except (OSError, ValueError, EOFError, TypeError):
            return
        op = message.get("op")
        if op == "status":
            reply = {"status": "ok", "data": self.status()}
        elif op == "stop":
            self._stop = "stop"
            reply = {"status": "ok", "data": self.status() | {"status": "stopping"}}
        elif op == "run":
            reply = self._answer(message)
        else:
            reply = {"status": "error", "reason": "unknown op"}
        try:
            conn.settimeout(None)
            conn.sendall(encode(reply))
        except OSError:  # the client gave up (timeout) and runs the command itself
            pass

    def _same_user(self, conn: socket.socket) -> bool:
        option = getattr(socket, "SO_PEERCRED", None)
        if option is None:  # not Linux: the 0600 socket alone keeps others out
            return True
        try:
            _pid, uid, _gid = struct.unpack("3i", conn.getsockopt(socket.SOL_SOCKET, option, struct.calcsize("3i")))
        except OSError:
            return False
        return uid == os.getuid()

    def _answer(self, message: dict) -> dict[str, Any]:
        from .client import forwardable

        try:
            if message.get("key") != self.key:
                raise _Fallback("version")
            if message.get("env") != self.env:
                raise _Fallback("environment")
            if self._sources_changed():
                self._stop = "stale"
                raise _Fallback("stale")
            argv, cwd = message.get("argv"), message.get("cwd")
            tty, request_env = message.get("tty"), message.get("requestEnv")
            if (not isinstance(argv, list) or not all(isinstance(a, str) for a in argv) or not isinstance(cwd, str)
                    or not isinstance(request_env, dict) or not isinstance(tty, list) or len(tty) != 2):
                raise _Fallback("malformed")
            if not forwardable(argv):
                raise _Fallback("not forwardable")
            code, writes = self._run(argv, cwd, request_env, (bool(tty[0]), bool(tty[1])))
        except _Fallback as exc:
            self.fallbacks += 1
            return {"status": "fallback", "reason": str(exc)}
        self.requests += 1
        return {"status": "ok", "exit": code, "writes": writes}

    def _run(self, argv: list[str], cwd: str, request_env: dict, tty: tuple[bool, bool]) -> tuple[int, list]:
        """``ragit <argv>`` in this process as the client would run it: its directory, its
        per-call variables, its terminal flags; returns the exit code and the writes."""
        from ..app import run

        writes: list[tuple[int, str]] = []
        saved_env = {k: os.environ.get(k) for k in PER_REQUEST_ENV}
        saved_streams = sys.stdin, sys.stdout, sys.stderr
        try:
            os.chdir(cwd)
        except OSError:
            raise _Fallback("cwd") from None
        try:
            for k in PER_REQUEST_ENV:
                value = request_env.get(k)
                if isinstance(value, str):
                    os.environ[k] = value
                else:
                    os.environ.pop(k, None)
            sys.stdin = io.StringIO("")
            sys.stdout = _Capture(1, tty[0], writes)
            sys.stderr = _Capture(2, tty[1], writes)
            try:
                code = run(argv, on_internal_error=self._internal_error)
            except SystemExit as exc:
                code = _exit_code(exc, writes)
        finally:
            sys.stdin, sys.stdout, sys.stderr = saved_streams
            for k, value in saved_env.items():
                if value is None:
                    os.environ.pop(k, None)
                else:
                    os.environ[k] = value
            os.chdir(self.root)
        return code, writes

    @staticmethod
    def _internal_error(exc: BaseException) -> None:
        raise _Fallback(f"internal error: {type(exc).__name__}") from exc

    def _sources_changed(self) -> bool:
        """A loaded ragit module's file changed after the server started (an upgrade, an edit)."""
        for name, module in list(sys.modules.items()):
            if name != "ragit" and not name.startswith("ragit."):
                continue
            path = getattr(module, "__file__", None)
            try:
                if path and os.stat(path).st_mtime_ns > self._started_ns:
                    return True
            except OSError:
                return True
        return False

    # ---------------------------------------------------------------- the warm Repo

    def _provide_repo(self, root: Path, config: Any, git: Any) -> Any:
        """The warm Repo for this repository (rebuilt when its inputs changed), else a new one."""
        from ...api import Repo

        if Path(root) != self.root:
            return Repo(root, config, git)
        state = (config.data, str(config.path), config.exists, self._store_state())
        if self._repo is None or state != self._repo_state:
            self._repo = Repo(root, config, git)
            self._repo_state = state
        return self._repo

    def _store_state(self) -> tuple:
        """Names, sizes and times of the store's files and the manifests: what an ingest changes.

        Not the folders' own times, nor an empty SQLite write-ahead log or shared-memory file: a
        reader's connection creates those and the last one to close removes them, so replacing the
        warm Repo (the old one's connection closing) changed the state again, and every request
        rebuilt the Repo and answered cold (a 1M-chunk store: ≈ 0.44 s CPU a forwarded query
        instead of ≈ 0.015 s). A log holding data counts: a small ingest's commit may live there
        until a checkpoint."""
        entries = []
        for sub in ("store", "manifest"):
            folder = self.root / ".ragit" / sub
            try:
                with os.scandir(folder) as it:
                    for entry in it:
                        if entry.name.endswith("-shm"):  # readers touch it; it holds no data
                            continue
                        est = entry.stat()
                        if est.st_size == 0 and entry.name.endswith(("-wal", "-journal")):
                            continue
                        entries.append((sub, entry.name, est.st_ino, est.st_size, est.st_mtime_ns))
            except OSError:
                entries.append((sub, None))
        return tuple(sorted(entries, key=repr))


def _exit_code(exc: SystemExit, writes: list[tuple[int, str]]) -> int:
    """The process exit status ``SystemExit`` would give (a message goes to stderr, status 1)."""
    if exc.code is None:
        return 0
    if isinstance(exc.code, int):
        return exc.code
    writes.append((2, f"{exc.code}\n"))
    return 1
