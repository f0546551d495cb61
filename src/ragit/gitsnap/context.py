"""The repository context of a read (knowledge §5.2 step 1) with as few git processes as possible.

HEAD and branch are read from the ref files when they are plain (a loose or packed branch ref,
or a detached SHA), which needs no process; otherwise one ``rev-parse`` answers them, running
concurrently with the single ``status`` that lists dirty paths.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, NamedTuple

from ragit.gitsnap.dirty import STATUS_CMD, parse_status, public_dirty
from ragit.gitsnap.git import Git
from ragit.gitsnap.location import git_dirs
from ragit.gitsnap.refs import (branch_from_symref, current_branch, head_from_files, head_sha, head_sha_from,
                                read_ref_file)

if TYPE_CHECKING:
    from ragit.gitsnap.watch import WorktreeWatch

# Prints the git dir, the common dir, the HEAD commit, then ``refs/heads/<branch>`` or ``HEAD``
# when detached; fails when unborn.
_HEAD_CMD = ("rev-parse", "--absolute-git-dir", "--git-common-dir", "HEAD", "--symbolic-full-name", "HEAD", "--")


@dataclass
class RepoContext:
    """Where a read happens: worktree root, HEAD (None when unborn), branch and dirty paths."""

    root: Path
    head: str | None
    branch: str | None
    detached: bool
    dirty: list[str]


class HeadFiles(NamedTuple):
    """HEAD as read from the files: git dir, common dir, commit, branch and the full name of the
    ref HEAD points at (None when detached), whose file decides the commit."""

    git_dir: Path
    common_dir: Path
    head: str
    branch: str | None
    ref: str | None


def _head_from_files(root: Path) -> HeadFiles | None:
    """HEAD from the ref files, or None to ask git."""
    dirs = git_dirs(root)
    if dirs is None:
        return None
    git_dir, common = dirs
    try:
        content = read_ref_file(os.path.join(git_dir, "HEAD")).strip()
    except OSError:
        return None
    sha = head_sha_from(content, common)
    if sha is None:
        return None
    ref = content[5:].strip() if content.startswith("ref: ") else None
    return HeadFiles(git_dir, common, sha, branch_from_symref(ref) if ref is not None else None, ref)


class PendingContext:
    """HEAD and branch now, dirty paths later: ``git status`` runs in the background meanwhile.

    A read needs HEAD to select its snapshot, but dirty paths only for the snapshot block it
    reports at the end, so the status process overlaps with loading and scoring.
    """

    def __init__(self, git: Git, with_dirty: bool = True, watch: "WorktreeWatch | None" = None) -> None:
        self._git = git
        self._context: RepoContext | None = None
        self._watch = watch
        self._cached_dirty: list[str] | None = None
        self._kept: int | None = None  # the watch's event count HEAD is known unchanged since
        if watch is not None:
            known, self._kept = watch.head(lambda: _head_from_files(git.root))
        else:
            known = _head_from_files(git.root)
        if known is not None and with_dirty and watch is not None:
            self._cached_dirty = watch.listing(known.head)
        self._status = None
        if with_dirty and self._cached_dirty is None:
            self._token = watch.begin() if watch is not None else 0
            self._status = git.start(*STATUS_CMD)
        if known is not None:
            self.git_dir, self.common_dir = known.git_dir, known.common_dir
            self.head, self.branch = known.head, known.branch
            return
        self.git_dir = self.common_dir = None
        result = git.call(*_HEAD_CMD)
        if result.returncode != 0:
            # Unborn HEAD (the common reason): ask the precise questions, which also surface any
            # other failure as a GitError.
            self.head = head_sha(git)
            self.branch = current_branch(git)
            return
        lines = result.stdout.decode("utf-8", "surrogateescape").split("\n")
        self.git_dir = Path(lines[0])
        self.common_dir = Path(lines[1]) if Path(lines[1]).is_absolute() else git.root / lines[1]
        self.head, symref = lines[2], lines[3]
        self.branch = None if symref == "HEAD" else branch_from_symref(symref)

    @property
    def detached(self) -> bool:
        return self.head is not None and self.branch is None

    def reread_head(self) -> str | None:
        """HEAD now: unchanged when the watch saw no change to its files since it was read,
        else from the ref files when possible, else from git."""
        if self._kept is not None and self._watch is not None and self._watch.unchanged(self._kept):
            return self.head
        if self.git_dir is not None and self.common_dir is not None:
            sha = head_from_files(self.git_dir, self.common_dir)
            if sha is not None:
                return sha
        return head_sha(self._git)

    def result(self) -> RepoContext:
        """The full context, waiting for the dirty listing if it is still running."""
        if self._context is None:
            if self._cached_dirty is not None:
                dirty = self._cached_dirty
            elif self._status is not None:
                dirty = public_dirty(parse_status(self._status.result().checked()))
                if self._watch is not None:
                    self._watch.remember(self.head, dirty, self._token)
            else:
                dirty = []
            self._context = RepoContext(self._git.root, self.head, self.branch, self.detached, dirty)
        return self._context

    def cancel(self) -> None:
        if self._status is not None and self._context is None:
            self._status.cancel()


def read_context(git: Git, *, with_dirty: bool = True) -> RepoContext:
    """Read HEAD, branch and (optionally) dirty paths."""
    return PendingContext(git, with_dirty).result()
