"""Atomic file publication (temp file in the target directory, fsync, rename), and the
``.ragit/.gitignore`` that every write under ``.ragit/`` keeps in place (knowledge §2.1)."""

from __future__ import annotations

import os
import uuid
from pathlib import Path

RAGIT_DIR = ".ragit"
# The rebuildable parts of .ragit/ (knowledge §2.1): `git add -A` must never stage them.
RAGIT_GITIGNORE_ENTRIES = ("store/", "cache/", "sessions/", "manifest/")
RAGIT_GITIGNORE = (
    "# written by ragit: rebuildable data (`ragit ingest`, `ragit migrate rebuild`) and raw transcripts\n"
    + "".join(f"{entry}\n" for entry in RAGIT_GITIGNORE_ENTRIES)
)


def ragit_dir_of(path: Path) -> Path | None:
    """The ``.ragit`` directory ``path`` lies in (or is), when that directory sits at the top of
    a git worktree (its parent holds ``.git``); None otherwise."""
    path = Path(os.path.abspath(path))
    for candidate in (path, *path.parents):
        if candidate.name == RAGIT_DIR:
            return candidate if (candidate.parent / ".git").exists() else None
    return None


def ensure_ragit_gitignore(path: Path) -> None:
    """Write ``.ragit/.gitignore`` when ``path`` is under a repository's ``.ragit/`` and the file
    is missing, so a store created without ``init`` is never committed by ``git add -A``.

    Called by every writer under ``.ragit/`` (atomic writes, store, lock, transcript store, tool
    offload) just before it writes; an existing file is left alone (a team may un-ignore
    ``manifest/``), ``init`` merges missing entries (:func:`updated_ragit_gitignore`).
    """
    directory = ragit_dir_of(path)
    if directory is None:
        return
    target = directory / ".gitignore"
    if not target.exists():
        _write_atomically(target, RAGIT_GITIGNORE.encode("utf-8"), None)


def updated_ragit_gitignore(text: str | None) -> str | None:
    """``.ragit/.gitignore`` with every missing entry appended, or None when nothing is missing.

    The user's lines stay as they are; an entry counts as present when listed in any spelling
    (``/store``, ``store/``) or deliberately negated (``!manifest/``: the team shares manifests).
    """
    if text is None:
        return RAGIT_GITIGNORE
    present = {line.strip().lstrip("!").lstrip("/").rstrip("/") + "/" for line in text.splitlines()
               if line.strip() and not line.lstrip().startswith("#")}
    missing = [entry for entry in RAGIT_GITIGNORE_ENTRIES if entry not in present]
    if not missing:
        return None
    return (text if not text or text.endswith("\n") else text + "\n") + "".join(f"{e}\n" for e in missing)


def atomic_write_bytes(target: Path, data: bytes, *, mode: int | None = None) -> None:
    """Write ``data`` to ``target`` so readers see the old or the new file, never a torn one."""
    target = Path(target)
    ensure_ragit_gitignore(target.parent)
    _write_atomically(target, data, mode)


def _write_atomically(target: Path, data: bytes, mode: int | None) -> None:
    target.parent.mkdir(parents=True, exist_ok=True)
    tmp = target.parent / f"{target.name}.{os.getpid()}.{uuid.uuid4().hex}.tmp"
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o644 if mode is None else mode)
    try:
        try:
            view = memoryview(data)
            while view:
                written = os.write(fd, view)
                view = view[written:]
            os.fsync(fd)
        finally:
            os.close(fd)
        if mode is not None:
            os.chmod(tmp, mode)
        os.replace(tmp, target)
    finally:
        if tmp.exists():
            tmp.unlink()


def atomic_write_text(target: Path, text: str, *, mode: int | None = None) -> None:
    atomic_write_bytes(target, text.encode("utf-8"), mode=mode)
