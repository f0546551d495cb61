"""``hooks install | uninstall | status``: managed Git hooks that index new commits (knowledge §14)."""

from __future__ import annotations

from .common import common, dry_run_option, git_root
from .app import cli
from .output import Output

def _output(sub: str, data: dict) -> Output:
    from ..hooks import hooks_text

    return Output(f"hooks {sub}", data, lambda: hooks_text(sub, data), cwd=data["root"])


@cli.group("hooks")
def hooks_group() -> None:
    """Git hooks that index every new HEAD in the background."""


@hooks_group.command("install")
@dry_run_option
@common
def hooks_install_cmd(dry_run, format_, cwd) -> Output:
    """Install the hooks enabled by hooks.* (a foreign hook is chained, never overwritten)."""
    from ..config import load_config
    from ..hooks import install_hooks

    root, git = git_root(cwd)
    return _output("install", install_hooks(root, git, load_config(root), dry_run=dry_run))


@hooks_group.command("uninstall")
@dry_run_option
@common
def hooks_uninstall_cmd(dry_run, format_, cwd) -> Output:
    """Remove ragit's hooks and restore the hooks they chained."""
    from ..hooks import uninstall_hooks

    root, git = git_root(cwd)
    return _output("uninstall", uninstall_hooks(root, git, dry_run=dry_run))


@hooks_group.command("status")
@common
def hooks_status_cmd(format_, cwd) -> Output:
    """Report each hook as installed, chained, external or absent (read-only)."""
    from ..hooks import hooks_status

    root, git = git_root(cwd)
    return _output("status", hooks_status(root, git))
