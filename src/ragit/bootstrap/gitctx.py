"""The two Git operations init needs on a working tree that may not be a repository yet.

Both go through ``gitsnap.git`` so the child environment is the same as everywhere else
(no inherited ``GIT_DIR``, no optional locks: a dry-run never refreshes the index).
"""

from __future__ import annotations

from pathlib import Path

from ..errors import RagitError
from ..gitsnap.git import Git, decode_path


def git_init(root: Path) -> None:
    """Run ``git init`` in ``root``; a failure means init cannot go on without a repository."""
    result = Git(root).call("init", "-q")
    if result.returncode != 0:
        reason = result.stderr.decode("utf-8", "replace").strip()
        raise RagitError(
            "GIT_REPOSITORY_REQUIRED", f"git init failed: {reason}", {"cwd": str(root)}, "git init",
        )


def list_worktree_files(root: Path) -> list[str] | None:
    """Tracked plus untracked, not-ignored files (repo-relative), or None when Git refuses.

    Using Git's own view keeps ignored trees (virtualenvs, build output) out of the scan.
    """
    result = Git(root).call("ls-files", "-z", "--cached", "--others", "--exclude-standard")
    if result.returncode != 0:
        return None
    return sorted({decode_path(raw) for raw in result.stdout.split(b"\0") if raw})
