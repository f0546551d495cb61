"""Commit ancestry: recovery hints (§5.4), ``--since`` checks (§7.2), renames for ``verify``.

Plumbing commands only, so user configuration (``log.showSignature``, ``diff.renames``, ...)
cannot change what ragit reads.
"""

from __future__ import annotations

from datetime import datetime, timezone

from ragit.clock import format_iso
from ragit.gitsnap.git import Git, decode_path

_HEX = b"0123456789abcdef"


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
