"""Golden ``memory recall`` envelopes, one per view, plus the degraded packet (memory §3).

Commit dates are fixed by conftest, so SHAs and citation ids are stable; ``RAGIT_NOW`` fixes
``createdAt``; the temporary root is replaced by ``<ROOT>``. Regenerate after an intended
change with ``RAGIT_UPDATE_GOLDENS=1 pytest tests/contract/test_recall_golden.py``.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from conftest import check_golden, write_placeholder_config

NOW = "2026-03-08T12:00:00.000Z"
SESSION = {
    "goal": "finish auth migration",
    "summary": "Token rotation moved into the store.",
    "constraints": ["keep the public API stable"],
    "decisions": [{"id": "rotate-refresh-tokens", "title": "Rotate refresh tokens",
                   "summary": "Rotate refresh tokens on every use so that a stolen token is useless; clients always "
                              "store the newest token returned by the server, and the server rejects any token "
                              "that was already used once, which also reveals replay attempts to the operators.",
                   "rationale": "Stolen tokens must expire on first reuse.",
                   "alternatives": ["sliding expiry"], "consequences": ["clients store the newest token"]}],
    "openLoops": [{"title": "Finalize refresh-token boundary", "status": "blocked",
                   "nextAction": "write the ADR", "blockingConditions": ["security review"]}],
    "nextActions": ["ship the migration"],
    "createdAt": "2026-03-08T11:00:00.000Z",
}


def recall_json(cli, root: Path, view: str) -> str:
    r = cli("memory", "recall", "rotate refresh tokens", "--view", view, "--format", "json", "--cwd", str(root))
    assert r.code == 0, r
    return r.out.replace(str(root), "<ROOT>")


def wrap(cli, root: Path) -> None:
    r = cli("memory", "wrap", "--input", "-", "--cwd", str(root), "--format", "json", stdin=json.dumps(SESSION))
    assert r.code == 0, r


@pytest.mark.parametrize("view", ["minimal", "default", "full"])
def test_recall_golden_per_view(indexed_repo, cli, monkeypatch, view):
    monkeypatch.setenv("RAGIT_NOW", NOW)
    wrap(cli, indexed_repo.root)
    check_golden(f"recall_{view}.json", recall_json(cli, indexed_repo.root, view))


def test_recall_golden_degraded(git_repo, cli, monkeypatch):
    monkeypatch.setenv("RAGIT_NOW", NOW)
    write_placeholder_config(git_repo.root)
    wrap(cli, git_repo.root)
    check_golden("recall_degraded.json", recall_json(cli, git_repo.root, "default"))
