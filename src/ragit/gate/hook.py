"""``ragit gate``: the Claude Code ``PreToolUse`` hook for edit tools (knowledge §22.4).

Reached from :func:`ragit.cli.main.main` before click is imported. It reads the hook payload on
stdin, prints the hook's JSON (or nothing) and always exits 0: other tools, files outside the
repository and every failure of its own allow the edit (fail open). Read-only.
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path
from typing import Any

from .check import EDIT_TOOLS, MODES, evaluate, hook_output


def find_root(start: Path) -> Path | None:
    """The working tree containing ``start`` (a ``.git`` directory or file), without running git."""
    for p in (start, *start.parents):
        if (p / ".git").exists():
            return p
    return None


def edited_path(payload: dict[str, Any], root: Path) -> str | None:
    """The repository-relative path the tool is about to edit (None outside the repository)."""
    tool_input = payload.get("tool_input")
    if not isinstance(tool_input, dict):
        return None
    raw = tool_input.get("file_path") or tool_input.get("notebook_path")
    if not isinstance(raw, str) or not raw:
        return None
    path = Path(raw)
    if not path.is_absolute():
        base = payload.get("cwd")
        path = (Path(base) if isinstance(base, str) and base else root) / path
    try:
        return Path(os.path.normpath(path)).relative_to(root).as_posix()
    except ValueError:
        return None


def gate(payload: Any, cwd: str | None) -> dict[str, Any] | None:
    """The hook output for one payload (None: stay silent and allow)."""
    if not isinstance(payload, dict) or payload.get("tool_name") not in EDIT_TOOLS:
        return None
    start = Path(cwd) if cwd else Path(payload["cwd"]) if isinstance(payload.get("cwd"), str) else Path.cwd()
    root = find_root(start.resolve())
    if root is None:
        return None
    edited = edited_path(payload, root)
    if edited is None:
        return None
    from ..config import load_config
    from .served import find_record

    config = load_config(root)
    mode = (config.data.get("gate") or {}).get("mode", "warn")
    mode = mode if mode in MODES else "warn"
    session = payload.get("session_id")
    record = find_record(root, session if isinstance(session, str) else None)
    result = evaluate(root, edited, record, config["memory"]["working_dir"].strip("/"))
    return hook_output(result, edited, mode)


def main(args: list[str]) -> int:
    """``ragit gate [--cwd <path>]``: payload on stdin, hook JSON on stdout, exit 0."""
    cwd = None
    if len(args) >= 2 and args[0] == "--cwd":
        cwd = args[1]
    elif args and args[0].startswith("--cwd="):
        cwd = args[0].split("=", 1)[1]
    try:
        payload = json.loads(sys.stdin.read() or "null")
        out = gate(payload, cwd)
    except Exception:  # noqa: BLE001 - fail open: the gate never stands between the agent and its edit
        if os.environ.get("RAGIT_DEBUG") == "1":
            import traceback

            traceback.print_exc()
        return 0
    if out is not None:
        sys.stdout.write(json.dumps(out, ensure_ascii=False) + "\n")
        sys.stdout.flush()
    return 0
