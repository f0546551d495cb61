"""The repository context of a read (knowledge §5.2 step 1) in one round of git processes.

HEAD, branch and the two dirty listings are independent questions, so their processes run
concurrently: the wall time of a cold context read is that of one git process, not four.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from ragit.gitsnap.dirty import UNTRACKED_CMD, diff_cmd, dirty_from_outputs, dirty_paths
from ragit.gitsnap.git import Git
from ragit.gitsnap.refs import branch_from_symref, current_branch, head_sha

# Prints the HEAD commit, then ``refs/heads/<branch>`` or ``HEAD`` when detached; fails when unborn.
_HEAD_CMD = ("rev-parse", "HEAD", "--symbolic-full-name", "HEAD", "--")


@dataclass
class RepoContext:
    """Where a read happens: worktree root, HEAD (None when unborn), branch and dirty paths."""

    root: Path
    head: str | None
    branch: str | None
    detached: bool
    dirty: list[str]


def read_context(git: Git, *, with_dirty: bool = True) -> RepoContext:
    """Read HEAD, branch and (optionally) dirty paths, concurrently where git allows."""
    commands: list[tuple[str, ...]] = [_HEAD_CMD]
    if with_dirty:
        commands += [diff_cmd("HEAD"), UNTRACKED_CMD]
    results = git.call_parallel(*commands)
    head_result = results[0]
    if head_result.returncode != 0:
        # Unborn HEAD (the common reason): ask the precise questions, which also surface any
        # other failure as a GitError.
        head = head_sha(git)
        branch = current_branch(git)
        return RepoContext(
            git.root,
            head,
            branch,
            head is not None and branch is None,
            dirty_paths(git, head) if with_dirty else [],
        )
    lines = head_result.stdout.decode("utf-8", "surrogateescape").split("\n")
    head, symref = lines[0], lines[1]
    branch = None if symref == "HEAD" else branch_from_symref(symref)
    dirty = dirty_from_outputs(results[1].checked(), results[2].checked()) if with_dirty else []
    return RepoContext(git.root, head, branch, branch is None, dirty)
