"""Options and helpers shared by command modules."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Callable

import click

from ..errors import input_invalid

VIEWS = ("minimal", "default", "full")


def format_option(f: Callable) -> Callable:
    """``--format``; the value is read from raw argv by the shell (cli-contract §5.1)."""
    return click.option("--format", "format_", default=None, metavar="text|json|both", help="Output format.")(f)


def cwd_option(f: Callable) -> Callable:
    return click.option("--cwd", default=None, metavar="PATH", help="Run against another directory.")(f)


def view_option(f: Callable) -> Callable:
    return click.option("--view", default=None, metavar="minimal|default|full", help="Hit projection.")(f)


def input_option(f: Callable) -> Callable:
    return click.option("--input", "input_", default=None, metavar="PATH|-", help="JSON payload (- = stdin).")(f)


def dry_run_option(f: Callable) -> Callable:
    return click.option("--dry-run", is_flag=True, default=False, help="Analyse only; write nothing.")(f)


def common(f: Callable) -> Callable:
    return format_option(cwd_option(f))


def progress_printer(format_: str | None, default: str, label: str):
    """A one-line bar on stderr, only on a terminal and never in json format (cli-contract §8)."""
    import sys

    from .output import normalize_format

    if (normalize_format(format_) or default) == "json" or not sys.stderr.isatty():
        return None

    def report(stage: str, done: int, total: int) -> None:
        filled = 30 * done // total if total else 30
        sys.stderr.write(f"\r[ragit] {label} {stage:<8} [{'#' * filled}{'.' * (30 - filled)}] {done}/{total}")
        if done == total:
            sys.stderr.write("\n")
        sys.stderr.flush()

    return report


def check_view(value: str | None, command: str) -> str:
    if value is None:
        return "default"
    v = value.strip().lower()
    if v not in VIEWS:
        raise input_invalid("--view", "not_one_of", f"--view must be one of {', '.join(VIEWS)}",
                            command=command, value=value, allowed=list(VIEWS))
    return v


def requested_dir(cwd: str | None) -> Path:
    return Path(os.path.abspath(Path(cwd or os.getcwd()).expanduser()))


def resolve_root(cwd: str | None) -> tuple[Path, bool]:
    """The git worktree root of ``--cwd`` (or the process directory), else its absolute path."""
    from ..gitsnap.git import find_root

    here = requested_dir(cwd)
    root = find_root(here) if here.is_dir() else None
    return (root, True) if root is not None else (here, False)


def open_repo(cwd: str | None):
    """A :class:`ragit.api.Repo`, or GIT_REPOSITORY_REQUIRED outside git."""
    from ..api import Repo, git_required
    from ..config import load_config
    from ..gitsnap.git import Git

    root, in_git = resolve_root(cwd)
    if not in_git:
        raise git_required(root)
    return Repo(root, load_config(root), Git(root))
