"""The single-writer lock of ingest and rebuild: ``.ragit/store/write.lock`` (knowledge §4.3)."""

from __future__ import annotations

import fcntl
import os
import time
from contextlib import contextmanager
from pathlib import Path
from typing import Iterator

from ..errors import RagitError

LOCK_NAME = "write.lock"


@contextmanager
def write_lock(store_dir: Path, timeout: float = 30.0) -> Iterator[None]:
    """Hold an OS file lock; give up with ``STORE_WRITE_BUSY`` after ``timeout`` seconds."""
    store_dir = Path(store_dir)
    store_dir.mkdir(parents=True, exist_ok=True)
    fd = os.open(store_dir / LOCK_NAME, os.O_RDWR | os.O_CREAT, 0o644)
    started = time.monotonic()
    try:
        while True:
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
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
        yield
    finally:
        try:
            fcntl.flock(fd, fcntl.LOCK_UN)
        finally:
            os.close(fd)
