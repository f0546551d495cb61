"""Commit ancestry: recovery hints (§5.4), ``--since`` checks (§7.2), renames for ``verify``.

Plumbing commands only, so user configuration (``log.showSignature``, ``diff.renames``, ...)
cannot change what ragit reads.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from datetime import datetime, timezone

from ragit.clock import format_iso
from ragit.gitsnap.git import Git, GitError, anonymous_file, decode_path, git_env

_HEX = b"0123456789abcdef"
BLOCK = 16  # commits in a block of diff_tree_stdin
READ_PAUSE = 0.002  # seconds diff_tree_stdin lets git's output gather between reads


def rev_list(git: Git, sha: str) -> list[str]:
    """``sha`` and its ancestors, newest first (``git rev-list``; a shallow clone stops early)."""
    return git.run("rev-list", sha, "--").decode().split()


def is_ancestor(git: Git, ancestor: str, descendant: str) -> bool:
    """``git merge-base --is-ancestor``: exit 0 yes, 1 no, anything else is a failure."""
    result = git.call("merge-base", "--is-ancestor", ancestor, descendant, allowed=(0, 1))
    return result.returncode == 0


def head_and_first_parent(git: Git) -> tuple[str, str | None] | None:
    """HEAD's commit and its first parent (None for a root commit or a shallow boundary) from
    one git process; None when HEAD is unborn."""
    result = git.call("rev-list", "--parents", "-n", "1", "HEAD", "--", allowed=(0, 128))
    if result.returncode != 0:
        from ragit.gitsnap.refs import head_sha

        head = head_sha(git)  # unborn → None; a broken repository raises as it always did
        return None if head is None else (head, first_parent(git, head))
    fields = result.stdout.decode().split()
    return fields[0], (fields[1] if len(fields) > 1 else None)


def first_parent(git: Git, sha: str) -> str | None:
    """The first parent of ``sha``; None for a root commit or a shallow clone's boundary."""
    result = git.call("rev-parse", "-q", "--verify", f"{sha}^1^{{commit}}", allowed=(0, 1))
    return result.stdout.decode().strip() if result.returncode == 0 else None


def commit_time(git: Git, sha: str) -> str:
    """Committer time of ``sha`` as ``2026-03-08T10:00:00.000Z``."""
    raw = git.run("cat-file", "commit", sha)
    for line in raw.split(b"\n"):
        if not line:
            break
        if line.startswith(b"committer "):
            seconds = int(line.rsplit(b" ", 2)[1])
            return format_iso(datetime.fromtimestamp(seconds, timezone.utc))
    raise ValueError(f"commit {sha} has no committer line")


def find_rename(git: Git, old_commit: str, new_commit: str, path: str) -> str | None:
    """Where git's rename detection says ``path`` of ``old_commit`` went in ``new_commit``."""
    out = git.run(
        "diff-tree", "-r", "-z", "--find-renames", "--diff-filter=R", "--name-status",
        old_commit, new_commit, "--",
    )
    fields = out.split(b"\0")
    for i in range(0, len(fields) - 2, 3):
        if decode_path(fields[i + 1]) == path:
            return decode_path(fields[i + 2])
    return None


def diff_tree_records(raw: bytes) -> list[tuple[str, list[tuple[str, tuple[str, ...]]]]]:
    """Parse ``git diff-tree --stdin -r -z --name-status`` output: each commit id in output order
    with its ``(status, paths)`` entries. A rename or copy (``R…``/``C…``, with ``-M``/``-C``)
    names two paths, old then new; every other status one. A commit with no change prints
    nothing, so it is absent."""
    out: list[tuple[str, list[tuple[str, tuple[str, ...]]]]] = []
    entries: list[tuple[str, tuple[str, ...]]] | None = None
    statuses: dict[bytes, str] = {}  # a few distinct statuses, decoded once
    tokens = raw.split(b"\0")
    i, n = 0, len(tokens)
    while i < n:
        tok = tokens[i].strip()
        i += 1
        if not tok:
            continue
        if len(tok) in (40, 64) and not tok.strip(_HEX):  # all hex digits: a status never is
            entries = []
            out.append((tok.decode(), entries))
            continue
        status = statuses.get(tok)
        if status is None:
            status = statuses[tok] = tok.decode("ascii", "replace")
        if entries is None:  # not this format
            break
        if tok[:1] in (b"R", b"C"):
            if i + 2 > n:  # cut short
                break
            entries.append((status, (decode_path(tokens[i]), decode_path(tokens[i + 1]))))
            i += 2
        else:
            if i + 1 > n:
                break
            entries.append((status, (decode_path(tokens[i]),)))
            i += 1
    return out


def diff_tree_stdin(git: Git, shas: Sequence[str], flags: Sequence[str], processes: int = 2) -> bytes:
    """``git diff-tree --stdin <flags>`` over the commits ``shas``: the output of one process,
    byte for byte (each commit's diff in input order), made by up to ``processes`` processes.

    A commit's diff depends on that commit alone, but not every commit costs the same: with
    ``-M`` a few commits whose added and deleted files are large hold most of the time (redux:
    three commits of 2,000 take 0.12 of 0.22 s). So the commits are cut into blocks of
    :data:`BLOCK`, dealt in turn to the processes (the costly commits end up spread out), each
    block followed by a line that is not a commit id, which ``diff-tree --stdin`` echoes and
    flushes: it marks where that block's output ends. Every process is given all its blocks at
    once and its output pipe is enlarged, so git never waits for the thread that reads it (an
    ingest's main thread holds the interpreter lock most of the time: blocks dealt as processes
    finished theirs left git idle, flask's mining 0.10 -> 0.19 s). The outputs are joined in order.
    """
    if processes < 2 or len(shas) <= 2 * BLOCK:
        return git.run("diff-tree", "--stdin", *flags, input="".join(f"{s}\n" for s in shas).encode())
    import selectors
    import subprocess
    import time

    mark = f"ragit-block-{os.urandom(8).hex()}\n".encode()  # never an object id; never in a path
    blocks = [shas[i:i + BLOCK] for i in range(0, len(shas), BLOCK)]
    count = min(processes, len(blocks))
    outputs: list[bytes] = [b""] * len(blocks)
    procs: list[subprocess.Popen] = []
    errors = []
    reading: dict[int, tuple[int, bytearray, list[int]]] = {}  # stdout fd -> (process, output, blocks left)
    writing: dict[int, tuple[int, memoryview]] = {}  # stdin fd -> (process, input left)
    selector = selectors.DefaultSelector()
    try:
        for k in range(count):
            errors.append(anonymous_file())
            proc = subprocess.Popen(["git", "diff-tree", "--stdin", *flags], cwd=git.root, stdin=subprocess.PIPE,
                                    stdout=subprocess.PIPE, stderr=errors[-1], env=git_env())
            procs.append(proc)
            assert proc.stdin is not None and proc.stdout is not None
            out, inp = proc.stdout.fileno(), proc.stdin.fileno()
            _grow_pipe(out)
            os.set_blocking(inp, False)
            mine = list(range(k, len(blocks), count))
            reading[out] = (k, bytearray(), mine)
            writing[inp] = (k, memoryview(b"".join("".join(f"{s}\n" for s in blocks[i]).encode() + mark
                                                  for i in mine)))
            selector.register(out, selectors.EVENT_READ)
            selector.register(inp, selectors.EVENT_WRITE)
        while reading:
            if not writing:  # let output gather in the enlarged pipes: fewer wake-ups, each taking
                time.sleep(READ_PAUSE)  # the interpreter lock from the ingest's main thread
            for key, _ in selector.select():
                fd = key.fd
                if fd in writing:
                    k, left = writing[fd]
                    try:
                        left = left[os.write(fd, left):]
                    except BrokenPipeError:  # git exited (a bad option, a broken repository)
                        raise _failed(procs[k], errors[k], flags) from None
                    if left:
                        writing[fd] = (k, left)
                    else:
                        selector.unregister(fd)
                        del writing[fd]
                        procs[k].stdin.close()  # end of input: git exits after its last block
                    continue
                k, out, mine = reading[fd]
                data = os.read(fd, 1 << 20)
                if not data:
                    if mine:  # git exited before finishing its blocks
                        raise _failed(procs[k], errors[k], flags)
                    selector.unregister(fd)
                    del reading[fd]
                    continue
                start = max(0, len(out) - len(mark))  # a mark may straddle two reads
                out += data
                while (at := out.find(mark, start)) >= 0:
                    outputs[mine.pop(0)] = bytes(out[:at])
                    del out[:at + len(mark)]
                    start = 0
        for proc, err in zip(procs, errors):
            if proc.wait() != 0:
                raise _failed(proc, err, flags)
        return b"".join(outputs)
    finally:
        selector.close()
        for proc in procs:
            if proc.poll() is None:
                proc.kill()
                proc.wait()
            for pipe in (proc.stdin, proc.stdout):
                if pipe is not None:
                    try:
                        pipe.close()
                    except OSError:  # BrokenPipeError: git is gone
                        pass
        for err in errors:
            err.close()


def _grow_pipe(fd: int) -> None:
    """Enlarge a pipe to 1 MiB where Linux allows it (else it keeps its size, which still works)."""
    import fcntl

    if hasattr(fcntl, "F_SETPIPE_SZ"):
        try:
            fcntl.fcntl(fd, fcntl.F_SETPIPE_SZ, 1 << 20)
        except OSError:
            pass


def _failed(proc, err, flags: Sequence[str]) -> GitError:
    """The error of a ``diff-tree --stdin`` process that failed, with what it wrote to stderr."""
    if proc.poll() is None:
        proc.kill()
    code = proc.wait()
    err.seek(0)
    return GitError(("diff-tree", "--stdin", *flags), code, err.read() or b"diff-tree --stdin ended early")
