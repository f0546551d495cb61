"""Options and helpers shared by command modules."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any, Callable

import click


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

    from .output import effective_format

    if effective_format(format_, default) == "json" or not sys.stderr.isatty():
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
    from ..contract.inputs import Validator
    from ..contract.views import VIEWS

    return Validator(command).choice(value, "--view", VIEWS)


def user_path(given: str) -> Path:
    """A path the user typed (``~`` expanded), made absolute against the process directory."""
    return Path(os.path.abspath(os.path.expanduser(given)))


def output_file(v: Any, out: str, option: str = "--out") -> Path:
    """``--out`` (or ``option``) as an absolute path: not a directory, and in a directory that
    exists (``v``: the command's Validator, which raises the typed INPUT_INVALID)."""
    target = user_path(out)
    if target.is_dir():
        raise v.fail(option, "invalid_format", f"{out} is a directory", value=out)
    if not target.parent.is_dir():
        raise v.fail(option, "file_not_found", f"the directory of {out} does not exist", value=out)
    return target


def requested_dir(cwd: str | None) -> Path:
    return Path(os.path.abspath(Path(cwd or os.getcwd()).expanduser()))


def resolve_root(cwd: str | None) -> tuple[Path, bool]:
    """The git worktree root of ``--cwd`` (or the process directory), else its absolute path."""
    from ..gitsnap.git import find_root

    here = requested_dir(cwd)
    root = find_root(here) if here.is_dir() else None
    return (root, True) if root is not None else (here, False)


def existing_root(cwd: str | None, command: str) -> tuple[Path, bool]:
    """:func:`resolve_root` for commands that also work outside git; ``--cwd`` must exist."""
    from ..contract.inputs import Validator

    root, in_git = resolve_root(cwd)
    if not root.is_dir():
        raise Validator(command).fail("--cwd", "file_not_found", f"{root} is not a directory", value=cwd)
    return root, in_git


def git_root(cwd: str | None, place: tuple[Path, bool] | None = None):
    """The worktree root and its ``Git``, or GIT_REPOSITORY_REQUIRED outside git."""
    from ..api import git_required
    from ..gitsnap.git import Git

    root, in_git = place if place is not None else resolve_root(cwd)
    if not in_git:
        raise git_required(root)
    return Path(root), Git(root)


# Set by a warm process (``ragit serve``): called with (root, config, git) instead of building a
# new Repo, so commands it runs reuse its long-lived Repo (vectors, manifests, embedder).
repo_provider: Callable[[Path, Any, Any], Any] | None = None


def open_repo(cwd: str | None, place: tuple[Path, bool] | None = None, config=None):
    """A :class:`ragit.api.Repo`, or GIT_REPOSITORY_REQUIRED outside git.

    ``place`` (from :func:`resolve_root`) and ``config`` spare a command that already has them
    a second ``git rev-parse`` and config parse.
    """
    from ..config import load_config

    root, git = git_root(cwd, place)
    config = config if config is not None else load_config(root)
    if repo_provider is not None:
        return repo_provider(root, config, git)
    from ..api import Repo

    return Repo(root, config, git)


def check_mixed_input(v, flags: list[tuple[str, bool]], scope: str | None) -> None:
    """``--input`` carries the fields these flags set: reject them beside it. ``--scope durable``
    (the default) may stay, any scope given must still be a valid one."""
    from ..contract.payloads import SCOPES

    scope_given = scope is not None and scope.strip().lower() != "durable"
    v.mixed([name for name, on in [*flags, ("--scope", scope_given)] if on])
    if scope is not None:
        v.choice(scope, "--scope", SCOPES)
