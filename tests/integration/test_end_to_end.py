"""The memory plane end to end (issue: memory plane, "Done when"): an agent wraps a session,
recalls it in a new one, promotes a decision into a committed document that `query` finds at the
new HEAD, while git hooks keep the index at HEAD without anyone running `ingest`."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

PLACEHOLDER_CONFIG = '[embedding]\nprovider = "placeholder"\ndimensions = 64\n'


def ragit(root: Path, *args: str, stdin: str | None = None) -> dict:
    """A separate `python -m ragit` process per call, as an agent harness would run it."""
    proc = subprocess.run([sys.executable, "-m", "ragit", *args, "--cwd", str(root), "--format", "json"],
                          capture_output=True, text=True, input=stdin, timeout=60)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    return json.loads(proc.stdout)


def git(root: Path, *args: str) -> str:
    proc = subprocess.run(["git", *args], cwd=root, capture_output=True, text=True, timeout=30)
    assert proc.returncode == 0, proc.stderr
    return proc.stdout.strip()


def wait_for_manifest(root: Path, sha: str, timeout: float = 30.0) -> None:
    target = root / ".ragit" / "manifest" / f"{sha}.json"
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if target.exists() and "- manifest:" in (root / ".ragit/cache/hooks.log").read_text(errors="replace"):
            return
        time.sleep(0.05)
    raise AssertionError(f"the hooks never indexed {sha}")


def test_wrap_recall_promote_query_with_hooks(git_repo, monkeypatch):
    root = git_repo.root
    # no `ragit` on PATH: the hooks fall back to `<python> -m ragit`
    path = [d for d in os.environ.get("PATH", "").split(os.pathsep) if d and not (Path(d) / "ragit").exists()]
    monkeypatch.setenv("PATH", os.pathsep.join(path))
    (root / ".gitignore").write_text(".ragit/store/\n.ragit/cache/\n.ragit/sessions/\n.ragit/memory/\n")
    git_repo.commit("init", {".ragit/config.toml": PLACEHOLDER_CONFIG,
                             "docs/auth.md": "# Auth\n\nRefresh tokens are stored in the session.\n"})
    assert ragit(root, "ingest", "--all")["ok"]
    ragit(root, "hooks", "install")

    # 1. a commit is indexed by the post-commit hook, in the background
    sha = git_repo.commit("plan", {"docs/plan.md": "# Plan\n\nShip refresh-token rotation next.\n"})
    wait_for_manifest(root, sha)
    hits = ragit(root, "query", "refresh-token rotation plan")["data"]["hits"]
    assert any(h["path"] == "docs/plan.md" for h in hits)

    # 2. an agent wraps its session...
    wrap = {"goal": "rotate refresh tokens", "summary": "designed rotation; one loop open",
            "decisions": [{"title": "Rotate refresh tokens on every use",
                           "summary": "Each refresh issues a new token and revokes the old one."}],
            "openLoops": [{"title": "Finalize refresh-token boundary", "nextAction": "write the revocation test",
                           "status": "blocked"}],
            "nextActions": ["write the revocation test"]}
    session = ragit(root, "memory", "wrap", "--input", "-", stdin=json.dumps(wrap))["data"]["sessionId"]

    # 3. ...and a new session recalls it, with snapshot hits from HEAD
    recall = ragit(root, "memory", "recall", "rotate refresh tokens")["data"]
    assert recall["latestSessionId"] == session
    assert recall["openLoops"][0]["title"] == "Finalize refresh-token boundary"
    assert recall["snapshot"]["status"] == "indexed" and recall["snapshotSha"] == git(root, "rev-parse", "HEAD")

    # 4. the decision is promoted into a committed document and indexed at the new HEAD
    before = git(root, "rev-parse", "HEAD")
    promote = {"promotionCandidates": [{"kind": "decision", "title": "Rotate refresh tokens on every use",
                                        "summary": "Each refresh issues a new token and revokes the old one.",
                                        "evidence": [hits[0]["citation"]["id"]]}], "sourceSessionId": session}
    data = ragit(root, "memory", "promote", "--commit", "--input", "-", stdin=json.dumps(promote))["data"]
    assert data["committed"] and data["ingested"]
    head = git(root, "rev-parse", "HEAD")
    assert git(root, "rev-parse", "HEAD~1") == before and data["snapshotSha"] == head
    top = ragit(root, "query", "rotate refresh tokens on every use revokes the old one")["data"]
    assert top["snapshotSha"] == head
    assert top["hits"][0]["path"].startswith("docs/memory/decisions/")

    # 5. later commits keep being indexed by the hooks; nobody runs ingest
    sha = git_repo.commit("notes", {"docs/notes.md": "# Notes\n\nRevocation test written.\n"})
    wait_for_manifest(root, sha)
    status = ragit(root, "status")["data"]
    assert status["head"] == sha and status["snapshot"]["status"] == "indexed"
