"""The forwarding client and protocol of ``ragit serve`` without a server: which command lines are
forwarded, where the socket is looked for, the frames, and the entry point's own fast paths."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import threading

import pytest

from ragit.cli.serve import client, protocol


@pytest.mark.parametrize("raw, expected", [
    (["query", "auth"], True),
    (["--format", "json", "query", "auth", "--top-k", "3"], True),
    (["context", "pack", "goal"], True),
    (["context", "packet", "--input", "req.json"], True),
    (["memory", "recall", "goal"], True),
    (["verify", "cite-000000000000000000000000"], True),
    (["query", "--input", "-"], False),  # stdin stays with the caller
    (["query", "--input=-"], False),
    (["query", "auth", "--help"], False),
    (["query", "-h"], False),
    (["--version"], False),
    (["ingest", "--all"], False),
    (["memory", "wrap", "--input", "x.json"], False),
    (["context", "assemble"], False),
    (["status"], False),
    ([], False),
    (["query", "--", "--help"], True),  # after --, --help is an argument
])
def test_forwardable(raw, expected):
    assert client.forwardable(raw) is expected


def test_disabled_and_timeout_from_environment(monkeypatch):
    monkeypatch.delenv("RAGIT_NO_SERVE", raising=False)
    assert client.disabled() is False
    for value, off in (("1", True), ("yes", True), ("0", False), ("", False)):
        monkeypatch.setenv("RAGIT_NO_SERVE", value)
        assert client.disabled() is off
    for value, seconds in (("2.5", 2.5), ("soon", protocol.DEFAULT_TIMEOUT), ("-1", protocol.DEFAULT_TIMEOUT)):
        monkeypatch.setenv("RAGIT_SERVE_TIMEOUT", value)
        assert client.timeout() == seconds


def test_repo_root_and_socket_lookup(git_repo, tmp_path):
    nested = git_repo.root / "a" / "b"
    nested.mkdir(parents=True)
    assert client.worktree_root(str(nested)) == str(git_repo.root)
    assert client.server_socket(str(git_repo.root)) is None  # nothing there
    cache = git_repo.root / ".ragit" / "cache"
    cache.mkdir(parents=True)
    (cache / "serve.sock").write_text("not a socket")
    assert client.server_socket(str(git_repo.root)) is None
    # no server: the command line runs in-process (forward says so, prints nothing)
    os.unlink(cache / "serve.sock")
    assert client.forward(["query", "x", "--cwd", str(nested)]) is None


def test_matched_env_leaves_out_per_call_and_client_variables():
    env = {"RAGIT_NOW": "x", "RAGIT_DEBUG": "1", "RAGIT_NO_SERVE": "1", "RAGIT_SERVE_TIMEOUT": "3",
           "RAGIT_EMBEDDER": "e", "GIT_CONFIG_GLOBAL": "/g", "PATH": "/bin", "HOME": "/h", "TERM": "xterm",
           "LC_ALL": "C", "OPENBLAS_NUM_THREADS": "1", "PYTHONHASHSEED": "0", "USER": "me"}
    assert protocol.matched_env(env) == {"RAGIT_EMBEDDER": "e", "GIT_CONFIG_GLOBAL": "/g", "PATH": "/bin",
                                         "HOME": "/h", "LC_ALL": "C", "OPENBLAS_NUM_THREADS": "1",
                                         "PYTHONHASHSEED": "0"}


def test_frames_round_trip_through_a_socket_with_a_long_path(tmp_path):
    deep = tmp_path / ("d" * 60) / ("e" * 60)
    deep.mkdir(parents=True)
    path = str(deep / "serve.sock")
    assert len(path) > 107
    server = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    protocol.at_socket(server, path, "bind")
    server.listen(1)
    here = os.getcwd()

    def answer() -> None:
        conn, _ = server.accept()
        with conn:
            message = protocol.recv_frame(conn)
            conn.sendall(protocol.encode({"status": "ok", "echo": message["argv"], "big": "x" * 3_000_000}))

    thread = threading.Thread(target=answer)
    thread.start()
    reply = client.request(path, {"op": "run", "argv": ["query", "ü"]}, 10.0)
    thread.join()
    server.close()
    assert reply["echo"] == ["query", "ü"] and len(reply["big"]) == 3_000_000
    assert os.getcwd() == here


def test_frame_errors():
    a, b = socket.socketpair()
    with a, b:
        a.sendall((protocol.MAX_FRAME + 1).to_bytes(4, "big"))
        with pytest.raises(ValueError):
            protocol.recv_frame(b)
    a, b = socket.socketpair()
    with a, b:
        a.sendall(b"\x00\x00")
        a.close()
        with pytest.raises(ValueError):
            protocol.recv_frame(b)


def test_version_fast_path_prints_what_click_prints():
    fast = subprocess.run([sys.executable, "-m", "ragit", "--version"], capture_output=True, text=True, check=False)
    via_click = subprocess.run([sys.executable, "-c", "import sys\nfrom ragit.cli.app import run\n"
                                "sys.exit(run(['--version']))"], capture_output=True, text=True, check=False)
    assert (fast.returncode, fast.stdout, fast.stderr) == (via_click.returncode, via_click.stdout, via_click.stderr)
    assert fast.stdout.startswith("ragit ")
