"""Where a worktree's repository lives: its git dir and common dir, read from the files alone.

Both the read context (HEAD from the ref files) and the worktree watch (which directories to
watch) need them, so they live below both. A path in no repository is a typed failure.
"""

from __future__ import annotations

import errno
import os
from pathlib import Path
from stat import S_ISDIR, S_ISREG

from ragit.errors import RagitError

# the errors for which ``Path.is_dir()`` and ``Path.is_file()`` answer False instead of raising
_ABSENT = frozenset({errno.ENOENT, errno.ENOTDIR, errno.EBADF, errno.ELOOP})


def _mode(path: str) -> int:
    """``st_mode`` of ``path`` (links followed), 0 where ``Path.is_dir()``/``is_file()`` say False."""
    try:
        return os.stat(path).st_mode
    except OSError as exc:
        if exc.errno not in _ABSENT:
            raise
        return 0
    except ValueError:
        return 0


def git_dirs(root: Path) -> tuple[Path, Path] | None:
    """The git dir and common dir of the worktree at ``root`` (None when unusual: ask git).

    Every read asks (a warm query's HEAD comes from the files), so the usual layout costs two
    ``stat`` calls and no ``pathlib`` work beyond the two results."""
    dot = os.path.join(root, ".git")
    try:
        mode = _mode(dot)
        if S_ISDIR(mode):
            git_dir = Path(dot)
        elif S_ISREG(mode):
            text = Path(dot).read_text(encoding="utf-8").strip()
            if not text.startswith("gitdir: "):
                return None
            git_dir = Path(text[len("gitdir: "):])
            git_dir = git_dir if git_dir.is_absolute() else (Path(root) / git_dir).resolve()
        else:
            return None
        common = git_dir
        commondir = os.path.join(git_dir, "commondir")
        if S_ISREG(_mode(commondir)):
            rel = Path(Path(commondir).read_text(encoding="utf-8").strip())
            common = rel if rel.is_absolute() else (git_dir / rel).resolve()
    except OSError:
        return None
    return git_dir, common


def git_required(cwd: Path) -> RagitError:
    """``GIT_REPOSITORY_REQUIRED`` for ``cwd``, which lies in no git repository."""
    return RagitError(
        "GIT_REPOSITORY_REQUIRED", f"{cwd} is not inside a git repository", {"cwd": str(cwd)}, "git init",
    )
