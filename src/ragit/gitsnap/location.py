"""Where a worktree's repository lives: its git dir and common dir, read from the files alone.

Both the read context (HEAD from the ref files) and the worktree watch (which directories to
watch) need them, so they live below both. A path in no repository is a typed failure.
"""

from __future__ import annotations

from pathlib import Path

from ragit.errors import RagitError


def git_dirs(root: Path) -> tuple[Path, Path] | None:
    """The git dir and common dir of the worktree at ``root`` (None when unusual: ask git)."""
    dot = root / ".git"
    try:
        if dot.is_dir():
            git_dir = dot
        elif dot.is_file():
            text = dot.read_text(encoding="utf-8").strip()
            if not text.startswith("gitdir: "):
                return None
            git_dir = Path(text[len("gitdir: "):])
            git_dir = git_dir if git_dir.is_absolute() else (root / git_dir).resolve()
        else:
            return None
        common = git_dir
        commondir = git_dir / "commondir"
        if commondir.is_file():
            rel = Path(commondir.read_text(encoding="utf-8").strip())
            common = rel if rel.is_absolute() else (git_dir / rel).resolve()
    except OSError:
        return None
    return git_dir, common


def git_required(cwd: Path) -> RagitError:
    """``GIT_REPOSITORY_REQUIRED`` for ``cwd``, which lies in no git repository."""
    return RagitError(
        "GIT_REPOSITORY_REQUIRED", f"{cwd} is not inside a git repository", {"cwd": str(cwd)}, "git init",
    )
