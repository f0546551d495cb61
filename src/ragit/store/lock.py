"""The single-writer lock of ingest and rebuild: ``.ragit/store/write.lock`` (knowledge §4.3).

The holder writes the commit it is indexing into the lock file, so a read whose snapshot is
missing can tell "being indexed right now" (wait for it, knowledge §5.7) from "not indexed".
The record is only believed while the OS lock is held: a crashed writer leaves nothing to wait for.

With ``store.backend = "postgres"`` the lock stays per clone: it still orders the writers of one
clone and tells its readers which commit is being indexed, but it does not (and need not) order
different clones sharing the database; their publications are serialised by PostgreSQL itself
(one transaction and an advisory lock per repository and commit, ragit.store.postgres).
"""

from __future__ import annotations

import fcntl
import json
import os
import time
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Callable, Iterator

from ..errors import RagitError

LOCK_NAME = "write.lock"
POLL_SECONDS = 0.025  # how often a waiting read looks at the lock and the manifest


@dataclass(frozen=True)
class Writer:
    """The process holding the write lock and the commit it records (None: not an ingest)."""

    commit_sha: str | None
    pid: int | None


@contextmanager
def write_lock(store_dir: Path, timeout: float = 30.0, *, target: str | None = None) -> Iterator[None]:
    """Hold an OS file lock; give up with ``STORE_WRITE_BUSY`` after ``timeout`` seconds.

    ``target`` is the commit an ingest publishes; it is recorded in the lock file while the
    lock is held (and cleared before release) for :func:`running_writer`.
    """
    store_dir = Path(store_dir)
    from ..fsutil import ensure_ragit_gitignore, writing

    ensure_ragit_gitignore(store_dir)  # knowledge §2.1: never let `git add -A` stage the store
    with writing(store_dir / LOCK_NAME):  # a read-only or full store fails here, typed
        store_dir.mkdir(parents=True, exist_ok=True)
        fd = os.open(store_dir / LOCK_NAME, os.O_RDWR | os.O_CREAT, 0o644)
    started = time.monotonic()
    acquired = False
    try:
        while True:
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                acquired = True
                break
            except BlockingIOError:
                waited = time.monotonic() - started
                if waited >= timeout:
                    raise RagitError(
                        "STORE_WRITE_BUSY",
                        "another ragit process is writing the store",
                        {"waitedMs": int(waited * 1000)},
                        "re-run the same command",
                    ) from None
                time.sleep(0.05)
        _record(fd, json.dumps({"commitSha": target, "pid": os.getpid()}).encode("utf-8") + b"\n")
        yield
    finally:
        try:
            if acquired:  # the record describes the holder only: cleared before anyone else can lock
                _record(fd, b"")
        finally:
            try:
                fcntl.flock(fd, fcntl.LOCK_UN)
            finally:
                os.close(fd)


def _record(fd: int, data: bytes) -> None:
    """Best effort: a record that cannot be written only costs readers their wait."""
    try:
        os.ftruncate(fd, 0)
        if data:
            os.pwrite(fd, data, 0)
    except OSError:
        pass


def running_writer(store_dir: Path) -> Writer | None:
    """The process holding the write lock now, with the commit it records; None when nobody
    holds it. Never creates the lock file (reads write nothing)."""
    try:
        fd = os.open(Path(store_dir) / LOCK_NAME, os.O_RDONLY)
    except OSError:
        return None
    try:
        for _ in range(40):  # a new holder writes its record right after locking: allow ~0.1 s
            try:
                fcntl.flock(fd, fcntl.LOCK_SH | fcntl.LOCK_NB)
            except BlockingIOError:
                pass
            except OSError:
                return None
            else:
                fcntl.flock(fd, fcntl.LOCK_UN)
                return None
            writer = _parse_record(os.pread(fd, 4096, 0))
            if writer is not None:
                return writer
            time.sleep(0.0025)
        return Writer(None, None)
    finally:
        os.close(fd)


def _parse_record(data: bytes) -> Writer | None:
    try:
        obj = json.loads(data.decode("utf-8"))
    except (UnicodeDecodeError, ValueError):
        return None
    if not isinstance(obj, dict):
        return None
    sha, pid = obj.get("commitSha"), obj.get("pid")
    return Writer(sha if isinstance(sha, str) else None, pid if isinstance(pid, int) else None)


def await_writer(store_dir: Path, commit_sha: str, limit_seconds: float,
                 published: Callable[[], bool]) -> tuple[bool, int] | None:
    """Wait (at most ``limit_seconds``) for the running writer that indexes ``commit_sha``.

    Returns None at once when no running writer records ``commit_sha``; otherwise
    ``(still_indexing, waited_ms)`` once ``published()`` holds, the writer has stopped or the
    limit has passed. A limit of 0 only looks (``(True, 0)``).
    """
    writer = running_writer(store_dir)
    if writer is None or writer.commit_sha != commit_sha:
        return None
    if limit_seconds <= 0:
        return True, 0
    started = time.monotonic()
    deadline = started + limit_seconds
    while True:
        if published():
            return False, ms_since(started)
        writer = running_writer(store_dir)
        if writer is None or writer.commit_sha != commit_sha:
            return False, ms_since(started)
        now = time.monotonic()
        if now >= deadline:
            return True, ms_since(started)
        time.sleep(min(POLL_SECONDS, deadline - now))


def ms_since(started: float) -> int:
    """Whole milliseconds since the monotonic clock read ``started`` (a wait's ``waitedMs``)."""
    return int((time.monotonic() - started) * 1000)
