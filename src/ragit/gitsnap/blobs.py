"""Blob content by object id, through ``git cat-file --batch`` (never one process per blob).

Content always comes from git objects, never from the working tree, so an uncommitted edit can
never leak into a snapshot. Ingest of a large repository reads thousands of blobs: one process
serves them all, a writer thread feeds requests while the caller consumes responses, so neither
side waits for the other and the pipes never deadlock.
"""

from __future__ import annotations

import re
import subprocess
import threading
from collections.abc import Iterable, Iterator
from types import TracebackType
from typing import IO, NoReturn

from ragit.gitsnap.git import Git, GitError, anonymous_file, git_env

_OID = re.compile(r"[0-9a-f]{40}")
_HEX = re.compile(r"[0-9a-fA-F]{4,40}")
_REQUEST_BLOCK = 512  # requests per pipe write
_FEW = 16  # up to this many ids, read_many asks the interactive process one by one


class MissingObject(LookupError):
    """The object is not in the repository (e.g. cut off by a shallow clone)."""

    def __init__(self, oid: str) -> None:
        super().__init__(f"object {oid} is missing")
        self.oid = oid


def _check_oid(oid: str) -> str:
    if _OID.fullmatch(oid) is None:
        raise ValueError(f"not a full lower-case object id: {oid!r}")
    return oid


class BlobReader:
    """Reads object content by id; use as a context manager so every git process is reaped.

    ``read`` serves single lookups from one long-lived interactive ``cat-file --batch``.
    ``read_many`` streams a whole batch through one buffered ``cat-file --batch --buffer`` fed by
    a writer thread: git then writes in large blocks instead of flushing after every object
    (10,000 blobs, 28 MB: git's own time about 25% lower, end to end about 10%). Call it once
    with all the ids it should read, not once per blob.
    """

    def __init__(self, git: Git) -> None:
        self._git = git
        self._interactive: _CatFile | None = None

    def __enter__(self) -> BlobReader:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()

    def close(self) -> None:
        """Let the interactive git process exit and reap it."""
        if self._interactive is not None:
            self._interactive.close()
            self._interactive = None

    def read(self, oid: str) -> bytes:
        """Content of one object; ``MissingObject`` when it is absent."""
        request = _check_oid(oid).encode() + b"\n"
        if self._interactive is None:
            self._interactive = _CatFile(self._git)
        cat = self._interactive
        try:
            cat.send(request)
            return cat.response(oid)
        except GitError:
            cat.close()
            self._interactive = None
            raise

    def read_many(self, oids: Iterable[str]) -> Iterator[tuple[str, bytes]]:
        """Stream ``(oid, content)`` in request order; stops at the first ``MissingObject``.

        A few ids (a one-file re-ingest) go through the interactive process instead: one git
        process and no writer thread fewer.
        """
        wanted = [_check_oid(oid) for oid in oids]
        if len(wanted) <= _FEW:
            for oid in wanted:
                yield oid, self.read(oid)
            return
        cat = _CatFile(self._git, "--buffer")
        writer = threading.Thread(target=_write_requests, args=(cat, wanted), daemon=True)
        writer.start()
        finished = False
        try:
            for oid in wanted:
                yield oid, cat.response(oid)
            finished = True
        finally:
            if not finished:  # abandoned, missing object or failure: requests may still be queued
                cat.kill()
            writer.join()
            cat.close()


class _CatFile:
    """One ``git cat-file --batch`` process and its response protocol."""

    def __init__(self, git: Git, *flags: str) -> None:
        self._stderr = anonymous_file()
        self.proc = subprocess.Popen(
            ["git", "cat-file", "--batch", *flags],
            cwd=git.root,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=self._stderr,
            env=git_env(),
        )
        assert self.proc.stdin is not None and self.proc.stdout is not None
        self.stdin: IO[bytes] = self.proc.stdin
        self._stdout: IO[bytes] = self.proc.stdout

    def send(self, data: bytes) -> None:
        try:
            self.stdin.write(data)
            self.stdin.flush()
        except BrokenPipeError:
            self._fail(b"git cat-file --batch exited")

    def response(self, oid: str) -> bytes:
        """The next answer, which must be for ``oid``."""
        header = self._stdout.readline()
        fields = header.split()
        if len(fields) == 2 and fields[1] == b"missing":
            raise MissingObject(oid)
        if len(fields) != 3 or fields[0] != oid.encode():
            self._fail(b"unexpected response: " + header if header else b"no response")
        size = int(fields[2])
        content = self._stdout.read(size)
        if len(content) != size or self._stdout.read(1) != b"\n":
            self._fail(b"truncated response")
        return content

    def _fail(self, what: bytes) -> NoReturn:
        """git exited or broke the protocol: stop it and raise with what it said."""
        self.kill()
        self._stderr.seek(0)
        stderr = self._stderr.read()
        raise GitError(("cat-file", "--batch"), self.proc.returncode, stderr or what)

    def kill(self) -> None:
        if self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait()

    def close(self) -> None:
        """EOF on stdin lets git exit; reap it and release the pipes."""
        try:
            self.stdin.close()
        except OSError:  # BrokenPipeError when git is already gone
            pass
        try:
            self.proc.wait(timeout=5)
        except subprocess.TimeoutExpired:
            self.kill()
        self._stdout.close()
        self._stderr.close()


def _write_requests(cat: _CatFile, oids: list[str]) -> None:
    """Writer thread: feed every request in blocks, then EOF so a buffered git flushes."""
    try:
        for start in range(0, len(oids), _REQUEST_BLOCK):
            cat.stdin.write(("\n".join(oids[start : start + _REQUEST_BLOCK]) + "\n").encode())
        cat.stdin.close()
    except OSError:  # BrokenPipeError once the reader killed git
        pass


def object_type(git: Git, oid: str) -> str | None:
    """``commit``, ``tree``, ``blob`` or ``tag`` for an existing object id or unique prefix.

    None when no such object exists (or the prefix is ambiguous or malformed).
    """
    if _HEX.fullmatch(oid) is None:
        return None
    result = git.call("cat-file", "-t", oid)
    if result.returncode != 0:
        return None
    return result.stdout.decode().strip()
