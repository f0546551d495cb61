"""Install, uninstall and inspect ragit's Git hooks (knowledge §14).

The hooks live where Git really looks for them (``git rev-parse --git-path hooks``: honours
``core.hooksPath`` and linked worktrees). A foreign hook is never overwritten: it is moved,
byte-identical and with its mode, to ``<name>.ragit-chained`` and run first by the managed hook;
``uninstall`` moves it back. This module is the single source of truth for hook states.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import Any

from ..config import Config
from ..fsutil import atomic_write_text
from ..gitsnap.git import Git
from .script import CHAINED_SUFFIX, MANAGED_MARKER, hook_script

HOOK_NAMES = ("post-commit", "post-merge", "post-checkout")
CONFIG_KEYS = {"post-commit": "post_commit", "post-merge": "post_merge", "post-checkout": "post_checkout"}


def is_managed(path: Path) -> bool:
    """True when the file at ``path`` contains the line ``# managed-by-ragit``."""
    try:
        text = Path(path).read_bytes().decode("utf-8", "replace")
    except OSError:
        return False
    return any(line.strip() == MANAGED_MARKER for line in text.splitlines())


def hook_state(hooks_dir: Path, name: str) -> str:
    """``installed``, ``chained``, ``external`` or ``absent`` for one hook name."""
    path = hooks_dir / name
    if not os.path.lexists(path):
        return "absent"
    if not is_managed(path):
        return "external"
    return "chained" if os.path.lexists(hooks_dir / f"{name}{CHAINED_SUFFIX}") else "installed"


def hook_states(git: Git) -> dict[str, str]:
    """State per hook name, for ``doctor`` and ``hooks status``."""
    hooks_dir = git.git_path("hooks")
    return {name: hook_state(hooks_dir, name) for name in HOOK_NAMES}


def _entry(root: Path, hooks_dir: Path, name: str, action: str, state: str) -> dict[str, str]:
    target = os.path.relpath(hooks_dir / name, root).replace(os.sep, "/")
    return {"name": name, "target": target, "action": action, "state": state}


def _data(root: Path, dry_run: bool, hooks: list[dict[str, str]]) -> dict[str, Any]:
    return {"dryRun": dry_run, "root": str(root), "hooks": hooks}


def install_hooks(root: Path, git: Git, config: Config, *, dry_run: bool = False,
                  python: str | None = None) -> dict[str, Any]:
    """Write the hooks enabled by ``hooks.*``; chain foreign ones; return the JSON ``data``.

    A hook disabled in the config is left as it is and reported with its current state.
    ``python`` is the interpreter the hooks fall back to when ``ragit`` is not on PATH.
    """
    hooks_dir = git.git_path("hooks")
    interpreter = python or sys.executable or "python3"
    hooks = []
    for name in HOOK_NAMES:
        state = hook_state(hooks_dir, name)
        path = hooks_dir / name
        chained = hooks_dir / f"{name}{CHAINED_SUFFIX}"
        writable = state != "external" or not os.path.lexists(chained)
        if config["hooks"][CONFIG_KEYS[name]] and writable:
            if dry_run:
                state = "planned"
            else:
                if state == "external":
                    os.rename(path, chained)
                hooks_dir.mkdir(parents=True, exist_ok=True)
                atomic_write_text(path, hook_script(name, interpreter), mode=0o755)
                state = hook_state(hooks_dir, name)
        hooks.append(_entry(root, hooks_dir, name, "install", state))
    return _data(root, dry_run, hooks)


def uninstall_hooks(root: Path, git: Git, *, dry_run: bool = False) -> dict[str, Any]:
    """Remove managed hooks and move chained originals back; return the JSON ``data``."""
    hooks_dir = git.git_path("hooks")
    hooks = []
    for name in HOOK_NAMES:
        state = hook_state(hooks_dir, name)
        if state in ("installed", "chained"):
            if dry_run:
                state = "planned"
            elif state == "chained":
                os.replace(hooks_dir / f"{name}{CHAINED_SUFFIX}", hooks_dir / name)
                state = "external"
            else:
                os.remove(hooks_dir / name)
                state = "absent"
        hooks.append(_entry(root, hooks_dir, name, "uninstall", state))
    return _data(root, dry_run, hooks)


def hooks_status(root: Path, git: Git) -> dict[str, Any]:
    """The state of every hook; read-only."""
    hooks_dir = git.git_path("hooks")
    hooks = [_entry(root, hooks_dir, name, "status", hook_state(hooks_dir, name)) for name in HOOK_NAMES]
    return _data(root, False, hooks)


def hooks_text(sub: str, data: dict[str, Any]) -> str:
    """``# ragit hooks <sub>``, the dry-run flag, then one line per hook."""
    lines = [f"# ragit hooks {sub}", f"- dry_run: {'true' if data['dryRun'] else 'false'}", ""]
    lines += [f"- {h['name']}: {h['state']} ({h['target']})" for h in data["hooks"]]
    return "\n".join(lines) + "\n"
