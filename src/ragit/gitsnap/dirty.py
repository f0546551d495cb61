"""Dirty worktree paths (knowledge §6).

Dirty = every path whose working-tree or staged content differs from HEAD (a rename contributes
its old and new path), plus untracked, not ignored files; on an unborn HEAD every tracked and
untracked path. ``.ragit/`` never counts.

One ``git status --porcelain -z`` answers both halves in a single scan of the working tree, where
the spec's reference pair (``git diff --name-status --find-renames HEAD`` and ``git ls-files
--others --exclude-standard``) needs two; reads run it on every query, so the second process is
worth saving. The sets agree except for a path whose staged change was undone in the working
tree, which status still reports: it has an uncommitted (staged) change, so calling it dirty is
the safe side. With ``GIT_OPTIONAL_LOCKS=0`` (set for every git process) status never rewrites
``.git/index``. Output is NUL-separated and parsed without trimming, so paths with spaces,
newlines or leading blanks survive intact.
"""

from __future__ import annotations

from collections.abc import Collection

from ragit.gitsnap.git import MAX_PATHSPEC, Git, decode_path

RAGIT_DIR = ".ragit"

STATUS_CMD = ("status", "--porcelain=v1", "-z", "--untracked-files=all")


def parse_status(out: bytes) -> set[str]:
    """Paths of ``status --porcelain=v1 -z``: ``XY path``; renames and copies add the source."""
    fields = out.split(b"\0")
    paths: set[str] = set()
    i = 0
    while i < len(fields) and fields[i]:
        entry = fields[i]
        code, path = entry[:2], entry[3:]
        paths.add(decode_path(path))
        i += 1
        if code[:1] in (b"R", b"C") or code[1:2] in (b"R", b"C"):
            if code[:1] == b"R" or code[1:2] == b"R":
                paths.add(decode_path(fields[i]))
            i += 1
    return paths


def public_dirty(paths: set[str]) -> list[str]:
    """Sorted dirty paths without ragit's own directory."""
    return sorted(p for p in paths if p != RAGIT_DIR and not p.startswith(RAGIT_DIR + "/"))


def dirty_paths(git: Git, *, only: Collection[str] | None = None, untracked: bool = True) -> list[str]:
    """Sorted, unique dirty paths of the working tree against HEAD (all paths when unborn).

    ``only`` limits the answer to those paths, and git's scan with them when there are few:
    an incremental ingest then stats what changed, not the whole tree. ``untracked=False``
    leaves untracked files out (and git skips scanning for them): ingest reads the commit, which
    they are not part of, so they never block or warn (knowledge §7.3).
    """
    cmd = STATUS_CMD if untracked else (*STATUS_CMD[:-1], "--untracked-files=no")
    if only is None:
        return public_dirty(parse_status(git.run(*cmd)))
    wanted = set(only)
    if not wanted:
        return []
    spec = ("--", *(":(literal)" + p for p in sorted(wanted))) if len(wanted) <= MAX_PATHSPEC else ()
    return [p for p in public_dirty(parse_status(git.run(*cmd, *spec))) if p in wanted]
