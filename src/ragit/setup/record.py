"""The setup record: what ``ragit setup <client> --scope <scope>`` added, per file, so that
``--uninstall`` removes exactly that.

Kept per repository, outside the worktree when the repository is a Git one
(``$GIT_DIR/ragit/setup/<client>-<scope>.json``: never committed, never shown by
``git status``), else under ``.ragit/setup/``. It holds only what setup wrote and the text it
replaced inside its own entries, never a copy of a client file (``~/.claude.json`` holds
credentials).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

RECORD_VERSION = 1


def record_path(root: Path, in_git: bool, client: str, scope: str) -> Path:
    name = f"{client}-{scope}.json"
    if in_git:
        from ..gitsnap.git import Git

        return Git(root).git_path("ragit/setup") / name
    return root / ".ragit" / "setup" / name


def missing_dirs(path: Path) -> list[str]:
    """The directories that writing ``path`` would create, deepest first."""
    out: list[str] = []
    parent = path.parent
    while not parent.exists():
        out.append(str(parent))
        if parent.parent == parent:
            break
        parent = parent.parent
    return out


def load(path: Path) -> dict[str, Any] | None:
    """The record, or None when there is none (or it is unreadable: then setup starts afresh)."""
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    if not isinstance(data, dict) or data.get("version") != RECORD_VERSION or not isinstance(data.get("files"), list):
        return None
    return data


def others(path: Path) -> list[dict[str, Any]]:
    """The other setups' records of the same repository (other clients or scopes)."""
    out = []
    directory = path.parent
    if directory.is_dir():
        for candidate in sorted(directory.glob("*.json")):
            if candidate.name != path.name:
                data = load(candidate)
                if data is not None:
                    out.append(data)
    return out


def users(path: str, records: list[dict[str, Any]]) -> list[str]:
    """``<client> (<scope> scope)`` of every record that wrote into the file at ``path``."""
    return [f"{r.get('client')} ({r.get('scope')} scope)" for r in records
            if any(isinstance(f, dict) and f.get("path") == path for f in r.get("files", []))]


def owner_record(path: str, records: list[dict[str, Any]]) -> dict[str, Any] | None:
    """Another setup's record of ``path`` (a shared AGENTS.md), to share its section's origin."""
    for r in records:
        for f in r.get("files", []):
            if isinstance(f, dict) and f.get("path") == path and f.get("ops"):
                return f
    return None


def render(client: str, scope: str, root: Path, files: list[dict[str, Any]], record_dirs: list[str]) -> str:
    """Deterministic text, so an unchanged setup rewrites nothing."""
    data = {"version": RECORD_VERSION, "client": client, "scope": scope, "root": str(root),
            "files": files, "recordDirs": record_dirs}
    return json.dumps(data, indent=2, ensure_ascii=False) + "\n"
