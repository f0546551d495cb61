"""Dirty worktree paths (knowledge §6).

Dirty = ``git diff --name-status -z --find-renames <HEAD>`` (staged and unstaged) plus untracked,
not ignored files; on an unborn HEAD every tracked and untracked path. ``.ragit/`` never counts.
Output is NUL-separated and parsed without trimming, so paths with spaces, newlines or leading
blanks survive intact.
"""

from __future__ import annotations

from ragit.gitsnap.git import Git, decode_path

RAGIT_DIR = ".ragit"

UNTRACKED_CMD = ("ls-files", "--others", "--exclude-standard", "-z")
ALL_PATHS_CMD = ("ls-files", "--cached", "--others", "--exclude-standard", "-z")


def diff_cmd(rev: str) -> tuple[str, ...]:
    """Worktree + index against ``rev``; ``--`` keeps a file named like the rev from confusing git.

    Like every porcelain ``git diff``, it compares content when stat data merely looks stale and
    then refreshes those stat entries in the index (a non-blocking, content-neutral cache update
    that git does not let ``GIT_OPTIONAL_LOCKS`` switch off).
    """
    return ("diff", "--name-status", "-z", "--find-renames", rev, "--")


def parse_name_status(out: bytes) -> set[str]:
    """Paths of ``--name-status -z`` output: a rename gives old and new path, a copy the new one."""
    fields = out.split(b"\0")
    paths: set[str] = set()
    i = 0
    while i < len(fields) and fields[i]:
        status = fields[i]
        if status[:1] == b"R":
            paths.add(decode_path(fields[i + 1]))
            paths.add(decode_path(fields[i + 2]))
            i += 3
        elif status[:1] == b"C":
            paths.add(decode_path(fields[i + 2]))
            i += 3
        else:
            paths.add(decode_path(fields[i + 1]))
            i += 2
    return paths


def parse_nul_list(out: bytes) -> set[str]:
    """Paths of a ``-z`` listing (``ls-files``, ``--name-only``)."""
    return {decode_path(field) for field in out.split(b"\0") if field}


def public_dirty(paths: set[str]) -> list[str]:
    """Sorted dirty paths without ragit's own directory."""
    return sorted(p for p in paths if p != RAGIT_DIR and not p.startswith(RAGIT_DIR + "/"))


def dirty_from_outputs(diff: bytes, untracked: bytes) -> list[str]:
    """Dirty paths from the outputs of ``diff_cmd`` and ``UNTRACKED_CMD``."""
    return public_dirty(parse_name_status(diff) | parse_nul_list(untracked))


def dirty_paths(git: Git, head: str | None) -> list[str]:
    """Sorted, unique dirty paths relative to the commit ``head`` (None = unborn HEAD)."""
    if head is None:
        return public_dirty(parse_nul_list(git.run(*ALL_PATHS_CMD)))
    diff, untracked = git.call_parallel(diff_cmd(head), UNTRACKED_CMD)
    return dirty_from_outputs(diff.checked(), untracked.checked())
