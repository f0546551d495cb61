"""`ragit init` as a library call: the eight steps of knowledge §13 in order.

Everything that can fail on bad input or a bad environment (options, terminal, config, Git)
is checked before the first write, so a failed init leaves the disk as it was.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..config import load_config
from ..errors import RagitError, input_invalid
from ..gitsnap.git import find_root
from . import gitctx
from .apply import apply_bootstrap, inspect_bootstrap
from .census import take_census
from .drafts import DraftContext
from .knowledge import knowledge_map, maturity
from .plan import draft_paths, plan_actions
from .report import next_actions
from .scan import detect_mode, scan_repository

MODES = ("auto", "empty", "existing", "monorepo", "docs-heavy")
STRATEGIES = ("minimal", "balanced", "full")
STEPS = (
    "check repository", "scan", "detect mode", "document census", "knowledge map", "plan", "apply", "report",
)
GIT_INIT_PROMPT = "Not a Git repository. Run git init? [Y/n]"
_YES = ("", "y", "yes")


@dataclass(frozen=True)
class InitResult:
    """``root`` is the resolved repository root (the envelope ``cwd``); ``data`` the JSON data."""

    root: Path
    data: dict[str, Any]


def _choice(value: str, allowed: tuple[str, ...], field: str) -> str:
    normalized = value.strip().lower()
    if normalized not in allowed:
        raise input_invalid(
            field, "not_one_of", f"{field} must be one of {', '.join(allowed)}, got {value!r}",
            command="init", value=value, allowed=list(allowed),
        )
    return normalized


def _stdin_confirm(question: str) -> str:
    """Ask on stderr (stdout stays clean for JSON), answer from stdin; EOF answers no."""
    sys.stderr.write(question + " ")
    sys.stderr.flush()
    line = sys.stdin.readline()
    return line.strip() if line else "n"


def _accepted(answer: str | bool) -> bool:
    """Empty means yes (the prompt's default); anything unclear declines, never runs git init."""
    if isinstance(answer, bool):
        return answer
    return answer.strip().lower() in _YES


def _requested_path(cwd: Path) -> Path:
    path = Path(os.path.abspath(Path(cwd).expanduser()))  # like the failure envelope's cwd
    if not path.exists():
        raise input_invalid("--cwd", "file_not_found", f"{path} does not exist", command="init", value=str(cwd))
    if not path.is_dir():
        raise input_invalid("--cwd", "invalid_format", f"{path} is not a directory", command="init", value=str(cwd))
    return path


def _announce(progress: Callable[[str], None] | None, index: int) -> None:
    if progress is not None:
        progress(f"[{index}/{len(STEPS)}] {STEPS[index - 1]}")


def _repository_required(root: Path, message: str) -> RagitError:
    return RagitError("GIT_REPOSITORY_REQUIRED", message, {"cwd": str(root)}, "ragit init --yes --git-init")


def run_init(
    cwd: Path,
    *,
    yes: bool,
    mode: str = "auto",
    strategy: str = "balanced",
    dry_run: bool = False,
    git_init: bool = False,
    confirm: Callable[[str], str | bool] | None = None,
    progress: Callable[[str], None] | None = None,
    create_store: Callable[[Path], None] | None = None,
) -> InitResult:
    """Inspect the repository at ``cwd``, reuse its docs, write what is missing.

    ``yes`` selects non-interactive mode. Interactive mode asks through ``confirm``: given the
    prompt, it returns the raw answer (empty, ``y`` or ``yes`` accept; anything else declines)
    or a bool; without one, stdin must be a terminal. ``git_init`` pre-answers the prompt.
    ``progress`` receives each ``[i/8] <label>`` step line. ``create_store`` is called with
    the store directory when no store exists yet (not in dry-run). With ``dry_run`` nothing
    on disk changes, not even ``git init``.
    """
    requested_mode = _choice(mode, MODES, "--mode")
    strategy = _choice(strategy, STRATEGIES, "--strategy")
    if not yes and confirm is None:
        if not sys.stdin.isatty():
            error = input_invalid(
                "--yes", "tty_required",
                "interactive init needs a terminal; pass --yes to run without prompts", command="init",
            )
            error.recovery = "ragit init --yes"
            raise error
        confirm = _stdin_confirm

    _announce(progress, 1)
    requested = _requested_path(cwd)
    found_root = find_root(requested)
    root = found_root or requested
    config = load_config(root)
    paths = draft_paths(config)
    git = {"wasRepository": found_root is not None, "initialized": False}
    if found_root is None:
        if yes and not git_init:
            raise _repository_required(root, f"{root} is not a Git repository")
        if not yes and not git_init and not _accepted(confirm(GIT_INIT_PROMPT)):
            raise _repository_required(root, "init needs a Git repository; git init was declined")
        if not dry_run:
            gitctx.git_init(root)
            git["initialized"] = True

    _announce(progress, 2)
    scan = scan_repository(root, config, git["wasRepository"] or git["initialized"])
    _announce(progress, 3)
    repository_mode = detect_mode(scan) if requested_mode == "auto" else requested_mode
    _announce(progress, 4)
    census = take_census(root, scan, config["ingest"]["max_file_bytes"])
    _announce(progress, 5)
    kmap = knowledge_map(scan, census)
    scores = maturity(scan, census.coverage)
    _announce(progress, 6)
    plan = plan_actions(root, paths, repository_mode, strategy, census.coverage, kmap)
    _announce(progress, 7)
    if dry_run:
        bootstrap = inspect_bootstrap(root, config, git)
    else:
        ctx = DraftContext(repository_mode, strategy, scan, census, kmap, config)
        bootstrap = apply_bootstrap(root, config, plan, ctx, git, create_store)
    _announce(progress, 8)
    data = {
        "executionMode": "non-interactive" if yes else "interactive",
        "repositoryMode": repository_mode,
        "strategy": strategy,
        "scan": scan.to_data(),
        "coverage": census.coverage,
        "maturity": scores,
        "knowledgeMap": kmap,
        "actions": plan.to_data(dry_run),
        "bootstrap": bootstrap,
        "nextActions": next_actions(dry_run, bootstrap["storage"]["migrationRequired"]),
    }
    return InitResult(root, data)
