"""Atomic file publication (temp file in the target directory, fsync, rename, directory fsync),
the ``.ragit/.gitignore`` that every write under ``.ragit/`` keeps in place (knowledge §2.1), and
the storage-failure boundary: a full, read-only or forbidden store is ``STORE_WRITE_FAILED``.

A writer killed between creating its temp file and the rename leaves
``<name>.<pid>.<uuid hex>.tmp`` behind; the next write into that directory removes the temp
files whose writer process is gone, and ``doctor`` reports them meanwhile (knowledge §4.3).
"""

from __future__ import annotations

import os
import re
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from .errors import storage_write_error

# <target name>.<writer pid>.<uuid4 hex>.tmp, as _write_atomically names its temp files
TEMP_NAME = re.compile(r"^.+\.(\d+)\.[0-9a-f]{32}\.tmp$")

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


@contextmanager
def writing(path: Path | str) -> Iterator[None]:
    """Turn a storage refusal while writing ``path`` (full disk, read-only file system,
    permission denied; OS or SQLite errors) into ``STORE_WRITE_FAILED``; anything else passes."""
    try:
        yield
    except Exception as exc:  # noqa: BLE001 - classified below, re-raised unchanged otherwise
        failure = storage_write_error(exc, path)
        if failure is None:
            raise
        raise failure from exc


def atomic_write_bytes(target: Path, data: bytes, *, mode: int | None = None) -> None:
    """Write ``data`` to ``target`` so readers see the old or the new file, never a torn one.

    A storage refusal is ``STORE_WRITE_FAILED`` and leaves the old file (or none) in place.
    """
    target = Path(target)
    ensure_ragit_gitignore(target.parent)
    _write_atomically(target, data, mode)


def _write_atomically(target: Path, data: bytes, mode: int | None) -> None:
    with writing(target):
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
    fsync_dir(target.parent)  # the rename itself must survive a power cut
    remove_stale_temps(target.parent)


def fsync_dir(directory: Path) -> None:
    """Make a rename in ``directory`` durable. Best effort once the rename has happened: a file
    system that cannot sync directories (some network or FUSE mounts) still has the new file."""
    try:
        fd = os.open(directory, os.O_RDONLY | getattr(os, "O_DIRECTORY", 0))
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)


def writer_alive(pid: int) -> bool:
    """Whether process ``pid`` exists (this process counts: its other threads may be writing)."""
    if pid == os.getpid():
        return True
    if pid <= 0:
        return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except OSError:  # EPERM: it exists, owned by someone else
        return True
    return True


def stale_temps(directory: Path) -> list[Path]:
    """Temp files of interrupted atomic writes in ``directory`` whose writer process is gone."""
    out = []
    try:
        entries = list(os.scandir(directory))
    except OSError:
        return []
    for entry in entries:
        m = TEMP_NAME.match(entry.name) if entry.name.endswith(".tmp") else None
        if m and not writer_alive(int(m.group(1))) and entry.is_file(follow_symlinks=False):
            out.append(Path(entry.path))
    return sorted(out)


def remove_stale_temps(directory: Path) -> int:
    """Remove what :func:`stale_temps` finds (a crash's leftovers); returns how many went."""
    removed = 0
    for path in stale_temps(directory):
        try:
            path.unlink()
            removed += 1
        except FileNotFoundError:  # another writer cleaned it first
            pass
        except OSError:  # cleaning up is never worth failing the write that succeeded
            pass
    return removed


def atomic_write_text(target: Path, text: str, *, mode: int | None = None) -> None:
    atomic_write_bytes(target, text.encode("utf-8"), mode=mode)
