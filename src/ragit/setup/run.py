"""``ragit setup <client>``: plan every file change first, then write (cli-contract §12).

Planning reads and edits everything in memory, so a file that cannot be edited safely fails the
whole command before anything is written; ``--dry-run`` stops after planning. The record is
written before the client files on install and removed after them on uninstall, so an
interrupted run can always be finished or undone by running the command again.
"""

from __future__ import annotations

import os
import stat
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from . import record as records
from .clients import client_files
from .edits import SetupEditError, install, restore, shared


@dataclass
class Change:
    """One planned file change; ``content`` is the text written (None: the file is deleted)."""

    path: Path
    display: str
    action: str  # create | update | remove | unchanged
    content: str | None
    remove_dirs: list[str] = field(default_factory=list)


def display_path(path: Path, root: Path) -> str:
    """Repository-relative inside the repository, absolute elsewhere."""
    try:
        return Path(path).relative_to(root).as_posix()
    except ValueError:
        return str(path)


def read_text(path: Path, display: str) -> str | None:
    """The file's exact text (no newline translation), None when missing."""
    try:
        data = path.read_bytes()
    except FileNotFoundError:
        return None
    except IsADirectoryError:
        raise SetupEditError(path, "not_a_file", f"{display} is a directory") from None
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        raise SetupEditError(path, "invalid_format", f"{display} is not UTF-8 text") from None


def _action(current: str | None, new: str | None) -> str:
    if new is None:
        return "unchanged" if current is None else "remove"
    if current is None:
        return "create"
    return "unchanged" if new == current else "update"


@dataclass
class Plan:
    """The client files' changes, the record's change (None: no record involved), warnings."""

    changes: list[Change]
    record: Change | None
    warnings: list[str]


def plan_install(client: str, scope: str, root: Path, in_git: bool, home: Path, env: dict[str, str]) -> Plan:
    rec_path = records.record_path(root, in_git, client, scope)
    old = records.load(rec_path)
    prior = {f["path"]: f for f in (old or {}).get("files", []) if isinstance(f, dict) and "path" in f}
    wanted = client_files(client, scope, root, home, env)
    siblings = records.others(rec_path)
    warnings = list(wanted.warnings)
    changes: list[Change] = []
    files: list[dict[str, Any]] = []
    for spec in wanted.files:
        display = display_path(spec.path, root)
        current = read_text(spec.path, display)
        before = prior.pop(str(spec.path), None)
        claim = before if before is not None and before.get("shared") else None
        if claim is not None:
            before = None  # a claim on another setup's section: nothing of ours to take out
        dirs = before["createdDirs"] if before and before.get("created") else records.missing_dirs(spec.path)
        result = install(spec, current, before, display, dirs)
        warnings += result.warnings
        origin = records.owner_record(str(spec.path), siblings) or claim
        if result.record is None and origin is not None and spec.kind == "md":
            files.append(shared(origin, result.text))
        elif result.record is not None:
            files.append(result.record)
        changes.append(Change(spec.path, display, _action(current, result.text), result.text))
    for before in prior.values():  # a file an earlier run wrote that this run no longer targets
        changes.append(_uninstall_change(before, root, warnings, siblings))
    rec_display = display_path(rec_path, root)
    current_record = read_text(rec_path, rec_display)
    record_change = None
    if files:
        # the record directory's origin is shared by every record in it, so the last one removed
        # takes away the directories the first one created
        first = old or (siblings[0] if siblings else None)
        dirs = first.get("recordDirs", []) if first else records.missing_dirs(rec_path)
        text = records.render(client, scope, root, files, dirs)
        record_change = Change(rec_path, rec_display, _action(current_record, text), text)
    elif current_record is not None:
        record_change = Change(rec_path, rec_display, "remove", None, (old or {}).get("recordDirs", []))
    return Plan(changes, record_change, warnings)


def _uninstall_change(before: dict[str, Any], root: Path, warnings: list[str],
                      siblings: list[dict[str, Any]]) -> Change:
    path = Path(before["path"])
    display = display_path(path, root)
    current = read_text(path, display)
    still = records.users(before["path"], siblings)
    if still and current is not None:
        warnings.append(f"{display}: ragit section kept, still used by the setup of {', '.join(still)}")
        return Change(path, display, "unchanged", current)
    restored = restore(current, before, display)
    warnings += restored.warnings
    return Change(path, display, _action(current, restored.text), restored.text,
                  before.get("createdDirs", []) if restored.text is None else [])


def plan_uninstall(client: str, scope: str, root: Path, in_git: bool) -> Plan:
    rec_path = records.record_path(root, in_git, client, scope)
    old = records.load(rec_path)
    if old is None:
        return Plan([], None, [f"no setup record for {client} ({scope} scope) in this repository: nothing to remove"])
    warnings: list[str] = []
    siblings = records.others(rec_path)
    changes = [_uninstall_change(f, root, warnings, siblings) for f in old["files"]
               if isinstance(f, dict) and "path" in f]
    return Plan(changes, Change(rec_path, display_path(rec_path, root), "remove", None, old.get("recordDirs", [])),
                warnings)


def _write(change: Change) -> None:
    from ..fsutil import atomic_write_text

    target = Path(os.path.realpath(change.path))  # a symlinked dotfile stays a symlink
    if change.content is None:
        target.unlink(missing_ok=True)
        for directory in change.remove_dirs:  # deepest first; only when setup created them
            try:
                os.rmdir(directory)
            except OSError:
                break
        return
    mode = stat.S_IMODE(target.stat().st_mode) if target.exists() else None
    atomic_write_text(target, change.content, mode=mode)


def apply(plan: Plan, *, uninstall: bool) -> None:
    """Write the planned changes: the record first on install, last on uninstall."""
    record = [plan.record] if plan.record is not None else []
    for change in (plan.changes + record if uninstall else record + plan.changes):
        if change.action != "unchanged":
            _write(change)


def run_setup(client: str, scope: str, root: Path, in_git: bool, *, dry_run: bool, uninstall: bool,
              home: Path | None = None, env: dict[str, str] | None = None) -> dict[str, Any]:
    """Plan (and unless ``dry_run`` apply) the setup; the command's JSON ``data``."""
    home = Path.home() if home is None else home
    env = dict(os.environ) if env is None else env
    plan = plan_uninstall(client, scope, root, in_git) if uninstall else plan_install(
        client, scope, root, in_git, home, env)
    if not dry_run:
        apply(plan, uninstall=uninstall)
    files = []
    for change in plan.changes + ([plan.record] if plan.record is not None else []):
        entry: dict[str, Any] = {"path": change.display, "action": change.action}
        if dry_run:
            entry["content"] = change.content if change.action in ("create", "update") else None
        files.append(entry)
    return {"client": client, "scope": scope, "dryRun": dry_run, "files": files, "warnings": plan.warnings}


def setup_text(data: dict[str, Any], uninstall: bool) -> str:
    """``# ragit setup``, the header lines, one line per file; a dry run adds each new content."""
    from ..contract.render import header

    lines = header("setup", [("client", data["client"]), ("scope", data["scope"]), ("dry_run", data["dryRun"]),
                             ("uninstall", uninstall)], data["warnings"])
    lines += ["", "## Files"]
    lines += [f"- {f['action']} {f['path']}" for f in data["files"]] or ["- none"]
    if data["dryRun"]:
        for f in data["files"]:
            if f["action"] in ("create", "update"):
                content = f["content"]
                lines += ["", f"## {f['path']} ({f['action']})", content[:-1] if content.endswith("\n") else content]
            elif f["action"] == "remove":
                lines += ["", f"## {f['path']} (remove)", "(file deleted)"]
    return "\n".join(lines) + "\n"
