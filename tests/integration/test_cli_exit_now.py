"""The console entry ends an ingest without the interpreter's teardown (issue 15): the command's
output, its store and its files are complete all the same, and an in-process call still returns
through ``sys.exit`` (tests and hooks drive the CLI in-process)."""

from __future__ import annotations

import json
import os
import sqlite3
import subprocess
import sys

import pytest

from ragit.cli.main import _exit_kind, main


def test_exit_kinds() -> None:
    assert _exit_kind(["ingest", "--all", "--format", "json"]) == (False, True)
    assert _exit_kind(["--format", "json", "ingest"]) == (False, True)
    assert _exit_kind(["query", "token"]) == (True, True)
    assert _exit_kind(["eval", "run", "tasks.jsonl"]) == (False, False)
    assert _exit_kind(["serve"]) == (False, False)


def test_console_ingest_leaves_a_complete_store(git_repo) -> None:
    root = git_repo.root
    git_repo.commit("base", {
        "docs/a.md": "# Token rotation\n\nSessions renew their token every hour.\n",
        "src/auth.py": "def rotate(session):\n    return session.renew()\n",
    })
    env = {k: v for k, v in os.environ.items() if k != "RAGIT_SERVE_TIMEOUT"}
    env["RAGIT_NO_SERVE"] = "1"
    run = subprocess.run([sys.executable, "-m", "ragit", "ingest", "--all", "--cwd", str(root), "--format", "json"],
                         capture_output=True, text=True, env=env, check=True)
    json.loads(run.stdout)  # the whole output was flushed
    store = root / ".ragit" / "store"
    assert not list(store.glob("*-wal")) and not list(store.glob("*-shm"))  # the store was closed
    conn = sqlite3.connect(store / "ragit.db")
    try:
        assert conn.execute("SELECT COUNT(*) FROM snapshot_docs").fetchone()[0] == 2
    finally:
        conn.close()


def test_in_process_ingest_returns_through_sys_exit(git_repo) -> None:
    git_repo.commit("base", {"docs/a.md": "# A\n\nText.\n"})
    with pytest.raises(SystemExit) as exc:
        main(["ingest", "--all", "--cwd", str(git_repo.root), "--format", "json"])
    assert exc.value.code == 0
