"""``ragit serve``: forwarded read-only commands print byte for byte what they print in-process,
with the same exit code; every doubt falls back to in-process; the server's lifecycle.

Each command runs as a real subprocess (``python -m ragit``, the console path that forwards)
twice: with ``RAGIT_NO_SERVE=1`` (in-process) and without (answered by the running server). The
server's ``requests`` counter proves which path answered.
"""

from __future__ import annotations

import json
import os
import signal
import stat
import subprocess
import sys
import time
from pathlib import Path

import pytest

from conftest import write_placeholder_config

SOCKET = Path(".ragit") / "cache" / "serve.sock"


def run(repo: Path, *args: str, env: dict[str, str] | None = None, cwd: Path | None = None,
        stdin: str | None = None) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "ragit", *args], cwd=cwd or repo, capture_output=True,
                          env={**os.environ, **(env or {})}, input=stdin.encode() if stdin else None,
                          check=False, timeout=120)


def status(repo: Path) -> dict:
    out = run(repo, "serve", "--status", "--format", "json")
    assert out.returncode == 0, out
    return json.loads(out.stdout)["data"]


SERVING: dict[Path, "Served"] = {}


class Served:
    """A foreground ``ragit serve`` for one repository, stopped at the end of the test."""

    def __init__(self, repo: Path, *extra: str):
        self.repo = repo
        SERVING[repo] = self
        self.result: dict | None = None
        self.proc = subprocess.Popen([sys.executable, "-m", "ragit", "serve", "--format", "json", *extra],
                                     cwd=repo, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        deadline = time.monotonic() + 60
        while status(repo)["status"] != "running":
            assert self.proc.poll() is None, self.proc.communicate()
            assert time.monotonic() < deadline, "ragit serve did not start"
            time.sleep(0.05)

    def finish(self, timeout: float = 30) -> dict:
        """The foreground envelope's data once the server exited."""
        if self.result is None:
            out, err = self.proc.communicate(timeout=timeout)
            assert self.proc.returncode == 0, (out, err)
            self.result = json.loads(out)["data"]
        return self.result

    def stop(self) -> None:
        SERVING.pop(self.repo, None)
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            self.proc.communicate(timeout=30)


@pytest.fixture
def served(indexed_repo):
    server = Served(indexed_repo.root, "--idle-timeout", "300")
    yield server
    server.stop()


def same_both_ways(repo: Path, *args: str, env: dict[str, str] | None = None, cwd: Path | None = None) -> None:
    before = status(repo)["requests"]
    warm = run(repo, *args, env=env, cwd=cwd)
    after = status(repo)
    cold = run(repo, *args, env={**(env or {}), "RAGIT_NO_SERVE": "1"}, cwd=cwd)
    assert (warm.returncode, warm.stdout, warm.stderr) == (cold.returncode, cold.stdout, cold.stderr), args
    if after["status"] != "running" and repo in SERVING:
        reason = SERVING[repo].finish()["reason"]
        if reason == "stale":  # ragit's own source files were edited during the test: it must stop
            pytest.skip("ragit's sources changed while the server ran (it fell back and exited, as it must)")
        raise AssertionError(f"the server exited ({reason}) on {args}")
    assert after["requests"] == before + 1, f"not answered by the server: {args}"


GOLDEN = [
    ("query", "restore auth context", "--format", "json"),
    ("query", "restore auth context", "--format", "text"),
    ("query", "refresh token rotation"),  # piped default: both
    ("query", "refresh tokens", "--view", "full", "--explain", "--top-k", "3", "--format", "json"),
    ("query", "refresh tokens", "--view", "minimal", "--path", "docs/**", "--exclude-tests"),
    ("query", "milestones", "--at", "HEAD", "--format", "both"),
    ("context", "pack", "restore auth context", "--budget", "40", "--format", "json"),
    ("context", "pack", "roadmap milestone", "--view", "minimal", "--format", "text"),
    ("memory", "recall", "resume the auth work", "--format", "json"),
    # failures: the same envelope, text block and exit code
    ("query", "--format", "json"),  # no question: INPUT_INVALID, 2
    ("query", "x", "--top-k", "0"),  # both formats of a failure
    ("query", "x", "--at", "deadbeef", "--format", "json"),  # SNAPSHOT_REF_INVALID
    ("query", "x", "--bogus-option", "--format", "json"),  # usage error
    ("query", "x", "--format", "yaml"),  # invalid --format
    ("verify", "cite-000000000000000000000000", "--format", "json"),  # CITATION_NOT_FOUND
]


@pytest.mark.parametrize("args", GOLDEN, ids=[" ".join(a)[:60] for a in GOLDEN])
def test_forwarded_output_is_byte_for_byte_the_in_process_output(served, args):
    # RAGIT_NOW: recall's createdAt is the clock's; the server applies the client's value per call
    same_both_ways(served.repo, *args, env={"RAGIT_NOW": "2026-03-08T10:00:00.000Z"})


def test_golden_with_cwd_elsewhere_and_per_call_environment(served, tmp_path):
    repo = served.repo
    same_both_ways(repo, "query", "restore auth context", "--cwd", str(repo / "docs"), "--format", "json",
                   cwd=tmp_path)
    same_both_ways(repo, "memory", "recall", "auth", "--format", "json", env={"RAGIT_NOW": "2026-03-08T10:00:00.000Z"})
    hit = json.loads(run(repo, "query", "token rotation", "--format", "json").stdout)["data"]["hits"][0]
    same_both_ways(repo, "verify", hit["citation"]["id"], "--format", "json")
    payload = repo / "payload.json"  # --input <file> is forwarded (only stdin stays in-process)
    payload.write_text(json.dumps({"question": "restore auth context", "topK": 2}), encoding="utf-8")
    same_both_ways(repo, "query", "--input", "payload.json", "--format", "json")


def test_ingest_while_serving_is_seen_by_the_next_query(served, indexed_repo):
    repo = indexed_repo
    first = json.loads(run(repo.root, "query", "zebra migration", "--format", "json").stdout)["data"]
    repo.commit("zebra", {"docs/zebra.md": "# Zebra migration\n\nThe zebra migration moves herds north.\n"})
    assert run(repo.root, "ingest", "--since", "HEAD~1", "--format", "json").returncode == 0
    same_both_ways(repo.root, "query", "zebra migration", "--format", "json")
    after = json.loads(run(repo.root, "query", "zebra migration", "--format", "json").stdout)["data"]
    assert after["snapshotSha"] == repo.head() != first["snapshotSha"]
    assert after["hits"][0]["path"] == "docs/zebra.md"
    (repo.root / "docs" / "zebra.md").write_text("# Zebra\n\nEdited, not committed.\n", encoding="utf-8")
    same_both_ways(repo.root, "query", "zebra migration", "--format", "json")  # the dirty worktree is seen
    dirty = json.loads(run(repo.root, "query", "zebra", "--format", "json").stdout)["data"]["snapshot"]
    assert dirty["worktreeDirty"] is True
    (repo.root / ".ragit" / "config.toml").write_text(
        '[embedding]\nprovider = "placeholder"\nmodel = "sha1"\ndimensions = 64\n[retrieval]\ntop_k = 2\n',
        encoding="utf-8")
    same_both_ways(repo.root, "query", "zebra migration", "--format", "json")
    assert len(json.loads(run(repo.root, "query", "zebra", "--format", "json").stdout)["data"]["hits"]) == 2


def test_what_is_not_forwarded(served):
    repo = served.repo
    before = status(repo)
    for args in (["query", "x", "--help"], ["status", "--format", "json"], ["--version"]):
        assert run(repo, *args).returncode == 0
    piped = run(repo, "query", "--input", "-", "--format", "json", stdin='{"question": "auth"}')
    assert piped.returncode == 0 and json.loads(piped.stdout)["data"]["query"] == "auth"
    assert run(repo, "query", "auth", env={"RAGIT_NO_SERVE": "1"}).returncode == 0
    after = status(repo)
    assert (after["requests"], after["fallbacks"]) == (before["requests"], before["fallbacks"])


def test_another_environment_falls_back_and_is_counted(served):
    repo = served.repo
    before = status(repo)
    other = run(repo, "query", "restore auth context", "--format", "json", env={"RAGIT_SOMETHING": "1"})
    cold = run(repo, "query", "restore auth context", "--format", "json", env={"RAGIT_NO_SERVE": "1"})
    assert (other.returncode, other.stdout, other.stderr) == (cold.returncode, cold.stdout, cold.stderr)
    after = status(repo)
    assert after["fallbacks"] == before["fallbacks"] + 1 and after["requests"] == before["requests"]


def test_client_path_imports_neither_click_nor_numpy(served):
    probe = ("import atexit, sys\n"
             "atexit.register(lambda: sys.stderr.write(repr(sorted(m for m in ('click', 'numpy', 'json', 'typing')"
             " if m in sys.modules)) + '\\n'))\n"
             "sys.argv = ['ragit', 'query', 'restore auth context', '--format', 'json']\n"
             "from ragit.cli.main import main\nmain()\n")
    before = status(served.repo)["requests"]
    out = subprocess.run([sys.executable, "-c", probe], cwd=served.repo, capture_output=True, text=True, check=False)
    assert out.returncode == 0 and json.loads(out.stdout)["ok"] is True
    assert out.stderr.strip().splitlines()[-1] == "[]"
    assert status(served.repo)["requests"] == before + 1


def test_socket_is_private_and_status_stop(served):
    path = served.repo / SOCKET
    mode = os.stat(path).st_mode
    assert stat.S_ISSOCK(mode) and stat.S_IMODE(mode) == 0o600
    data = status(served.repo)
    assert data["status"] == "running" and data["pid"] == served.proc.pid and data["socket"] == str(SOCKET)
    again = run(served.repo, "serve", "--format", "json")  # a second server reports the first
    assert again.returncode == 0 and json.loads(again.stdout)["data"]["status"] == "already-running"
    stopped = run(served.repo, "serve", "--stop", "--format", "json")
    assert json.loads(stopped.stdout)["data"]["status"] == "stopped"
    assert served.finish()["reason"] == "stop"
    assert not path.exists()
    assert status(served.repo)["status"] == "not-running"
    assert json.loads(run(served.repo, "serve", "--stop", "--format", "json").stdout)["data"]["status"] == "not-running"


def test_stale_socket_falls_back_and_is_replaced(indexed_repo):
    repo = indexed_repo.root
    server = Served(repo)
    server.proc.kill()  # no cleanup: the socket file stays behind
    server.proc.communicate()
    assert (repo / SOCKET).exists()
    warm = run(repo, "query", "restore auth context", "--format", "json")
    cold = run(repo, "query", "restore auth context", "--format", "json", env={"RAGIT_NO_SERVE": "1"})
    assert warm.returncode == 0 and warm.stdout == cold.stdout
    assert status(repo)["status"] == "not-running"
    fresh = Served(repo)
    try:
        same_both_ways(repo, "query", "restore auth context", "--format", "json")
    finally:
        fresh.stop()


def test_idle_timeout_and_removed_ragit_end_the_server(git_repo):
    write_placeholder_config(git_repo.root)
    git_repo.commit("initial", {"README.md": "# Demo\n\nNothing indexed yet.\n"})
    repo = git_repo.root
    idle = Served(repo, "--idle-timeout", "1")
    assert idle.finish()["reason"] == "idle"
    removed = Served(repo, "--idle-timeout", "0")
    import shutil

    shutil.rmtree(repo / ".ragit")
    assert removed.finish()["reason"] == "removed"


def test_detach_and_option_errors(indexed_repo, tmp_path):
    repo = indexed_repo.root
    started = run(repo, "serve", "--detach", "--idle-timeout", "120", "--format", "json")
    try:
        data = json.loads(started.stdout)["data"]
        assert started.returncode == 0 and data["status"] == "started" and data["idleTimeoutSeconds"] == 120
        same_both_ways(repo, "context", "pack", "restore auth context", "--format", "json")
    finally:
        assert json.loads(run(repo, "serve", "--stop", "--format", "json").stdout)["data"]["status"] == "stopped"
    bad = run(repo, "serve", "--idle-timeout", "soon", "--format", "json")
    assert bad.returncode == 2 and json.loads(bad.stdout)["error"]["details"]["reason"] == "not_integer"
    mixed = run(repo, "serve", "--stop", "--status", "--format", "json")
    assert mixed.returncode == 2 and json.loads(mixed.stdout)["error"]["details"]["reason"] == "mixed_input"
    outside = run(repo, "serve", "--cwd", str(tmp_path), "--format", "json")
    assert outside.returncode == 3 and json.loads(outside.stdout)["error"]["code"] == "GIT_REPOSITORY_REQUIRED"


def test_one_warm_repo_answers_request_after_request(indexed_repo, monkeypatch):
    """The warm Repo is made once: the SQLite log and shared-memory files a reader's connection
    creates, and the last one to close removes, are no store change. Before, replacing the Repo
    closed its connection, which changed the store folder again, and every request rebuilt the
    Repo and answered cold."""
    from ragit.cli import common
    from ragit.cli.serve.server import Server

    server = Server(indexed_repo.root)
    monkeypatch.setattr(common, "repo_provider", server._provide_repo)
    monkeypatch.chdir(indexed_repo.root)
    repos = []
    for _ in range(4):
        code, _ = server._run(["query", "restore auth context", "--format", "json"], str(indexed_repo.root), {},
                              (False, False))
        assert code == 0
        repos.append(server._repo)
    assert all(repo is repos[0] for repo in repos)
