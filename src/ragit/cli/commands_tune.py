"""``ragit tune``: retrieval settings chosen on the repository's own history (knowledge §22.5).

Paths given to ``tune`` (``--tasks``, ``--repo``) resolve against the process working directory,
as they do for ``eval``.
"""

from __future__ import annotations

from pathlib import Path

import click

from ..contract.describe import _CWD, _FMT, _spec, register
from ..contract.inputs import Validator
from .common import common, git_root, progress_printer, resolve_root, user_path
from .main import cli
from .output import Output



@cli.command("tune")
@click.option("--tasks", "tasks_file", default=None, metavar="FILE",
              help="Task file (JSON Lines); default: tasks mined from HEAD's history as `eval mine` does.")
@click.option("--repo", "repos", multiple=True, metavar="PATH",
              help="Repository holding the task commits (repeatable; default: the --cwd root).")
@click.option("--dry-run", "dry_run", is_flag=True, help="Search and check, write nothing (not even the cache).")
@common
def tune_cmd(tasks_file, repos, dry_run, format_, cwd) -> Output:
    """Search alpha, co-change and the re-rank weights on this repository's history; write the best only when its held-out gain is significant."""
    from ..config import CONFIG_RELPATH, load_config
    from ..evaluation.report import tune_text
    from ..evaluation.run import open_repository
    from ..evaluation.tasks import load_tasks
    from ..evaluation.tune import TuneRequest, run_tune, write_setting

    v = Validator("tune")
    if tasks_file is not None and not tasks_file.strip():
        raise v.fail("--tasks", "empty", "--tasks needs a file")
    if tasks_file is not None:
        tasks = _load(tasks_file, load_tasks)
        root, _ = resolve_root(cwd)
        gits = [open_repository(user_path(r), r) for r in repos] or [open_repository(root, str(root))]
    else:
        root, git = git_root(cwd)
        gits = [open_repository(user_path(r), r) for r in repos] or [git]
        tasks = _mined(root, git, load_config(root))
    config = load_config(root)
    request = TuneRequest(tasks_file, tasks, gits, dry_run)
    progress = progress_printer(format_, "json", "tune")
    if dry_run:
        import shutil
        import tempfile

        scratch = Path(tempfile.mkdtemp(prefix="ragit-tune-"))
        try:
            result = run_tune(root, config, request, eval_root=scratch, progress=progress)
        finally:
            shutil.rmtree(scratch, ignore_errors=True)
    else:
        result = run_tune(root, config, request, eval_root=root, progress=progress)
        if result.best is not None:
            write_setting(root, result.best)
            result.data["written"] = True
    result.data["configPath"] = CONFIG_RELPATH
    data = result.data
    return Output("tune", data, lambda: tune_text(data), data["warnings"], cwd=str(root))


def _load(given: str, load_tasks) -> list:
    """The task file, its failures named for ``tune`` (``--tasks``, ``ragit describe tune``)."""
    from ..errors import RagitError

    try:
        return load_tasks(user_path(given), given)
    except RagitError as exc:
        if exc.code != "INPUT_INVALID":
            raise
        details = dict(exc.details)
        if details.get("field") == "tasksFile":
            details["field"] = "--tasks"
        raise RagitError(exc.code, exc.message, details, "ragit describe tune") from None


def _mined(root: Path, git, config) -> list:
    """``eval mine``'s tasks of HEAD (default count and seed), parsed as a task file would be."""
    import json

    from ..evaluation.mine import mine_tasks
    from ..evaluation.tasks import parse_task

    result = mine_tasks(root, git, config)
    return [parse_task(i, json.dumps(t)) for i, t in enumerate(result.tasks)]


register(_spec(
    "tune", "Search retrieval settings (alpha, co-change, re-rank weights) on a training half of the repository's "
            "history tasks and write the best to .ragit/config.toml only when its held-out R@5 gain has a bootstrap "
            "95 % interval above zero.",
    related=["eval mine", "eval run", "config set"], mutating=True, dry_run=True,
    outputs=["baseline", "best", "gain", "ci95", "written", "decision", "dryRun", "tasksFile", "tasks", "train",
             "heldOut", "skipped", "metric", "searched", "cost", "configPath", "warnings"],
    options=[{"name": "--tasks", "type": "path",
              "description": "Task file (JSON Lines, as `eval run` reads); default: mined from HEAD like `eval mine`."},
             {"name": "--repo", "type": "path",
              "description": "Git repository holding task commits; repeatable, first match wins (default: --cwd root)."},
             {"name": "--dry-run", "type": "boolean", "description": "Write nothing: no config, no evaluation cache.",
              "defaultValue": False},
             _FMT, _CWD],
    examples=["ragit tune", "ragit tune --dry-run", "ragit tune --tasks tasks.jsonl --repo ../mirror.git"],
    errors=["INPUT_INVALID", "GIT_REPOSITORY_REQUIRED", "EMBEDDER_UNAVAILABLE", "STORE_WRITE_BUSY", "CONFIG_INVALID"],
    formats=("json", "json"),
))
