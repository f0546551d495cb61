"""Remembered manifest digests: which file a snapshot's manifest is, so a read can skip hashing it.

A read trusts a manifest's header only when the store holds a snapshot published from a file with
exactly that sha256 (ragit.ingest.manifest.load_manifest). Hashing the file costs a cold query
≈ 30 ms CPU at 1M chunks (36 MB). Publishing already knows the digest, so it records it here with
the file's identity: device, inode, size, mtime and ctime. A read whose ``fstat`` of the open
manifest gives the same identity takes the recorded digest instead of hashing, and still asks the
store about it; any other file, a missing or unreadable record, is hashed as before. Reads never
write here (a read is read-only, tests/fuzz ``write_on_read``).

Why the identity is enough: replacing the file (ragit writes manifests by rename) gives a new
inode, and writing into it sets its ctime to the file system's clock, which no user call can set
back. The one gap is a change within the same clock tick as the recorded ctime, so a record is
kept only when the file system's clock had already moved past that ctime before the digest was
computed from the file (a probe file's mtime, the file system's own clock; git's "racy clean"
problem, closed the same way). A fresh manifest of a small, fast ingest may get no record: its
reads hash it, as every read did before.
"""

from __future__ import annotations

import hashlib
import json
import os
from pathlib import Path

RECORD_DIR = Path(".ragit") / "cache" / "manifest"
FORMAT = 1
HASH_BLOCK = 1 << 20  # what a manifest's header read takes (and hashes) at a time


def record_path(root: Path | str, sha: str) -> Path:
    """Where the digest of ``sha``'s manifest is recorded."""
    return Path(root) / RECORD_DIR / f"{sha}.json"


def identity(st: os.stat_result) -> list[int]:
    """The parts of a file's ``stat`` that change whenever its content can have changed."""
    return [st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns, st.st_ctime_ns]


def remembered(root: Path | str, sha: str, st: os.stat_result) -> str | None:
    """The recorded sha256 of the manifest whose open file has ``st``, or None (no record, or
    a record of another file)."""
    try:
        doc = json.loads(record_path(root, sha).read_bytes())
        if doc.get("format") == FORMAT and doc.get("identity") == identity(st):
            digest = doc.get("sha256")
            return digest if isinstance(digest, str) else None
    except (OSError, ValueError, AttributeError):
        pass
    return None


def remember(root: Path | str, sha: str, manifest: Path | str, digest: str) -> bool:
    """Record ``manifest``'s identity with its sha256 when the file hashes to ``digest`` (the
    digest the store holds) and its ctime is safely in the past; False when no record is kept
    (a stale one is removed). Called after publishing, never by a read."""
    from ..fsutil import atomic_write_bytes, writing

    target = record_path(root, sha)
    with writing(target):
        clock = _fs_clock(target.parent)
        kept = None
        try:
            with open(manifest, "rb", buffering=0) as fh:
                before = os.fstat(fh.fileno())
                hashed = stream_digest(fh)[0]
                after = os.fstat(fh.fileno())
            if hashed == digest and identity(before) == identity(after) and before.st_ctime_ns < clock:
                kept = identity(before)
        except OSError:
            kept = None
        if kept is None:
            target.unlink(missing_ok=True)
            return False
    atomic_write_bytes(target, json.dumps({"format": FORMAT, "identity": kept, "sha256": digest}).encode("utf-8"))
    return True


def forget_others(root: Path | str, keep: set[str]) -> None:
    """Remove the records of manifests no longer published (their commits are not in ``keep``)."""
    directory = Path(root) / RECORD_DIR
    try:
        names = os.listdir(directory)
    except OSError:
        return
    for name in names:
        if name.endswith(".json") and name[:-5] not in keep:
            try:
                os.unlink(directory / name)
            except OSError:
                pass


def _fs_clock(directory: Path) -> int:
    """The file system's clock now: the mtime of a probe file created (and removed) in
    ``directory``, named as fsutil's temp files so a writer killed meanwhile leaves nothing
    that the next write there does not clean up."""
    import uuid

    directory.mkdir(parents=True, exist_ok=True)
    probe = directory / f"clock.{os.getpid()}.{uuid.uuid4().hex}.tmp"
    fd = os.open(probe, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o644)
    try:
        return os.fstat(fd).st_mtime_ns
    finally:
        os.close(fd)
        probe.unlink(missing_ok=True)


def stream_digest(fh) -> tuple[str, bytes]:
    """(sha256 hex digest, first block) of an unbuffered binary file from its position on, read
    a block at a time into one reused buffer."""
    digest = hashlib.sha256()
    head = b""
    buf = bytearray(HASH_BLOCK)
    view = memoryview(buf)
    while n := fh.readinto(buf):
        if not head:
            head = bytes(view[:n])
        digest.update(view[:n])
    return digest.hexdigest(), head
