"""``ragit gate``: the Claude Code ``PreToolUse`` hook for edit tools (knowledge §22.4).

Reached from :func:`ragit.cli.main.main` before click is imported. It reads the hook payload on
stdin, prints the hook's JSON (or nothing) and always exits 0: other tools, files outside the
repository and every failure of its own allow the edit (fail open). Read-only. A payload for
another tool is answered after importing ``json`` only.
"""

from __future__ import annotations

import json
import os
import sys

TYPE_CHECKING = False
if TYPE_CHECKING:  # pragma: no cover
    from typing import Any

from ..gitsnap.toplevel import worktree_root  # os only
from .check import EDIT_TOOLS, MODES  # check.py loads json and os only

DEFAULT_WORKING_DIR = ".ragit/memory/working"


def edited_path(payload: dict[str, Any], root: str) -> str | None:
    """The repository-relative path the tool is about to edit (None outside the repository)."""
    tool_input = payload.get("tool_input")
    if not isinstance(tool_input, dict):
        return None
    raw = tool_input.get("file_path") or tool_input.get("notebook_path")
    if not isinstance(raw, str) or not raw:
        return None
    if not os.path.isabs(raw):
        base = payload.get("cwd")
        raw = os.path.join(base if isinstance(base, str) and base else root, raw)
    rel = os.path.relpath(os.path.normpath(raw), root)
    if rel == os.curdir or rel == os.pardir or rel.startswith(os.pardir + os.sep) or os.path.isabs(rel):
        return None
    return rel.replace(os.sep, "/")


def settings(root: str) -> tuple[str, str]:
    """``(gate.mode, memory.working_dir)`` from ``.ragit/config.toml``; defaults without a file,
    and without parsing it when it sets neither (the common case). A broken file raises: the
    caller fails open."""
    try:
        with open(os.path.join(root, ".ragit", "config.toml"), encoding="utf-8") as fh:
            text = fh.read()
    except FileNotFoundError:
        return "warn", DEFAULT_WORKING_DIR
    if "gate" not in text and "working_dir" not in text:
        return "warn", DEFAULT_WORKING_DIR
    simple = _simple_values(text)
    if simple is None:  # a form the line reader does not know: the full TOML parser (imports typing)
        import tomllib

        data = tomllib.loads(text)
        simple = {("gate", "mode"): (data.get("gate") or {}).get("mode"),
                  ("memory", "working_dir"): (data.get("memory") or {}).get("working_dir")}
    mode = simple.get(("gate", "mode")) or "warn"
    working = simple.get(("memory", "working_dir")) or DEFAULT_WORKING_DIR
    return (mode if mode in MODES else "warn"), str(working).strip("/")


def _simple_values(text: str) -> dict[tuple[str, str], str] | None:
    """``gate.mode`` and ``memory.working_dir`` when the file states them as ``key = "value"`` lines
    under ``[gate]`` / ``[memory]`` headers (what ``ragit config set`` writes); None when either
    appears in another form."""
    wanted = {("gate", "mode"), ("memory", "working_dir")}
    table, out = "", {}
    for raw in text.splitlines():
        line = raw.strip()
        if not line or line.startswith("#"):
            continue
        if line.startswith("["):
            table = line.strip("[] \t")
            continue
        key, eq, value = line.partition("=")
        key = key.strip()
        if (table, key) not in wanted:
            if table in ("gate", "memory") or "gate" in key or "working_dir" in key:
                if not eq or key.strip('"') in ("mode", "working_dir") or "." in key or "{" in value:
                    return None
            continue
        value = value.strip()
        quote = value[:1]
        end = value.find(quote, 1) if quote in ('"', "'") else -1
        rest = value[end + 1 :].strip() if end > 0 else "x"
        if end < 0 or (rest and not rest.startswith("#")) or "\\" in value[1:end]:
            return None
        out[(table, key)] = value[1:end]
    return out


def gate(payload: Any, cwd: str | None) -> dict[str, Any] | None:
    """The hook output for one payload (None: stay silent and allow)."""
    if not isinstance(payload, dict) or payload.get("tool_name") not in EDIT_TOOLS:
        return None
    start = cwd or (payload["cwd"] if isinstance(payload.get("cwd"), str) else os.getcwd())
    root = worktree_root(start)
    if root is None:
        return None
    edited = edited_path(payload, root)
    if edited is None:
        return None
    from .check import evaluate, hook_output
    from .served import find_record

    mode, working_dir = settings(root)
    record = find_record(root)
    return hook_output(evaluate(root, edited, record, working_dir), edited, mode)


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
