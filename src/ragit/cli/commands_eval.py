"""``eval mine`` and ``eval run``: retrieval quality on real history (knowledge §21).

Paths given to ``eval`` (``--out``, the task file, ``--repo``) resolve against the process
working directory, not ``--cwd``: the task file and the benchmark repositories usually live
outside the repository whose configuration is being measured.
"""

from __future__ import annotations

import re

import click

from ..contract.describe import _CWD, _FMT, _spec, register
from ..contract.inputs import MAX_SAFE_INTEGER, Validator
from .common import common, git_root, output_file, progress_printer, resolve_root, user_path
from .main import cli
from .output import Output

_MODES = ("keyword", "vector", "hybrid", "all")
_EXT = re.compile(r"[A-Za-z0-9_+-]+(?:\.[A-Za-z0-9_+-]+)*")


@cli.group("eval")
def eval_group() -> None:
    """Measure retrieval quality on real history."""



def _seed(v: Validator, value: str | None) -> int:
    if value is None:
        return 0
    text = value.strip()
    if not re.fullmatch(r"\+?\d+", text) or int(text) > MAX_SAFE_INTEGER:
        raise v.fail("--seed", "not_integer", f"--seed must be an integer between 0 and {MAX_SAFE_INTEGER}", value=value)
    return int(text)


# ------------------------------------------------------------------ eval mine

@eval_group.command("mine")
@click.option("--out", default=None, metavar="PATH", help="Task file to write (JSON Lines).")
@click.option("--count", default=None, metavar="N", help="Maximum number of tasks (default 150).")
@click.option("--ext", default=None, metavar="EXTS", help="Comma-separated gold file extensions.")
@click.option("--seed", default=None, metavar="N", help="Seed of the task selection (default 0).")
@common
def mine_cmd(out, count, ext, seed, format_, cwd) -> Output:
    """Mine file-localisation tasks from the history of HEAD."""
    from ..config import load_config
    from ..evaluation.mine import DEFAULT_COUNT, mine_tasks, render_tasks
    from ..evaluation.report import mine_text
    from ..fsutil import atomic_write_bytes

    v = Validator("eval mine")
    if out is None or not out.strip():
        raise v.fail("--out", "required", "--out is required")
    target = output_file(v, out)
    number = DEFAULT_COUNT if count is None else v.cli_positive_int(count, "--count")
    exts = None
    if ext is not None:
        items = [e.strip().removeprefix(".") for e in ext.split(",") if e.strip()]
        if not items or any(_EXT.fullmatch(e) is None for e in items):
            raise v.fail("--ext", "invalid_format", "--ext must list extensions like py,md", value=ext)
        exts = ["." + e for e in dict.fromkeys(items)]
    seed_value = _seed(v, seed)
    root, git = git_root(cwd)
    result = mine_tasks(root, git, load_config(root), count=number, extensions=exts, seed=seed_value)
    atomic_write_bytes(target, render_tasks(result.tasks))
    data = {"out": out, "tasks": len(result.tasks), "scanned": result.scanned, "skipped": result.skipped,
            "seed": seed_value, "warnings": result.warnings}
    return Output("eval mine", data, lambda: mine_text(data), data["warnings"], cwd=str(root))


# ------------------------------------------------------------------ eval run

@eval_group.command("run")
@click.argument("tasks_file", required=False)
@click.option("--repo", "repos", multiple=True, metavar="PATH", help="Repository holding task commits (repeatable).")
@click.option("--mode", default=None, metavar="keyword|vector|hybrid|all", help="Retrieval mode(s) (default all).")
@click.option("--budget", default=None, metavar="B,...", help="Pack budgets (default 600,1200,2400).")
@click.option("--seed", default=None, metavar="N", help="Seed of the bootstrap (default 0).")
@click.option("--baseline", default=None, metavar="FILE",
              help="JSON of an earlier `eval run --format json`: exit 3 when a metric dropped below it.")
@click.option("--max-drop", "max_drop", default=None, metavar="X",
              help="Largest allowed absolute drop of R@5, R@10, MRR or NDCG@10 against --baseline (default 0).")
@click.option("--per-task", "per_task", default=None, metavar="PATH",
              help="Also write each task's ranking here (JSON Lines: gold ranks, files, metrics per mode).")
@common
def run_cmd(tasks_file, repos, mode, budget, seed, baseline, max_drop, per_task, format_, cwd) -> Output:
    """Index each task's commit into the evaluation store and measure keyword, vector and hybrid retrieval."""
    from ..config import load_config
    from ..evaluation.baseline import load_baseline, parse_max_drop, regressions
    from ..evaluation.report import run_text
    from ..evaluation.run import (
        DEFAULT_BUDGETS,
        MODES,
        EvalRequest,
        open_repository,
        run_eval,
    )
    from ..evaluation.tasks import load_tasks

    v = Validator("eval run")
    if tasks_file is None or not tasks_file.strip():
        raise v.fail("tasksFile", "required", "the task file argument is required")
    chosen = v.choice(mode, "--mode", _MODES) if mode is not None else "all"
    modes = list(MODES) if chosen == "all" else [chosen]
    budgets = list(DEFAULT_BUDGETS)
    if budget is not None:
        items = budget.split(",")
        if not any(b.strip() for b in items):
            raise v.fail("--budget", "empty", "--budget needs at least one positive integer", value=budget)
        budgets = list(dict.fromkeys(v.cli_positive_int(b, "--budget") for b in items))
    seed_value = _seed(v, seed)
    if max_drop is not None and baseline is None:
        raise v.fail("--baseline", "required", "--max-drop needs --baseline")
    if baseline is not None and not baseline.strip():
        raise v.fail("--baseline", "empty", "--baseline needs a file")
    drop = parse_max_drop(max_drop)
    if per_task is not None and not per_task.strip():
        raise v.fail("--per-task", "empty", "--per-task needs a file")
    per_task_file = output_file(v, per_task, "--per-task") if per_task is not None else None
    tasks = load_tasks(user_path(tasks_file), tasks_file)
    gate = load_baseline(user_path(baseline), baseline, tasks, modes, drop) if baseline is not None else None

    root, _ = resolve_root(cwd)
    given = list(repos) or [str(root)]
    gits = [open_repository(user_path(r), r) for r in given]
    request = EvalRequest(tasks_file, tasks, gits, modes, budgets, seed_value, per_task_file)
    result = run_eval(root, load_config(root), request, progress=progress_printer(format_, "both", "eval"))
    data = result.data
    if per_task is not None:
        _before_warnings(data, perTask=per_task)
    ok = True
    if gate is not None:
        found = regressions(gate, data["modes"])
        _before_warnings(data, baseline={"file": baseline, "maxDrop": drop}, regressions=found)
        ok = not found
    return Output("eval run", data, lambda: run_text(data), data["warnings"], ok=ok, exit_code=0 if ok else 3,
                  cwd=str(root))


def _before_warnings(data: dict, **fields) -> None:
    """Add ``fields`` to ``data`` ahead of its ``warnings``, which the contract keeps last."""
    warnings = data.pop("warnings")
    data.update(fields)
    data["warnings"] = warnings


_RUN_OUTPUTS = ["tasksFile", "tasks", "evaluated", "skipped", "embedderId", "modes", "modes[].packRecall",
                "modes[].tokensPerTask", "modes[].secondsPerTask", "comparisons", "timing", "timing.perTask",
                "perTask", "baseline", "regressions", "warnings"]

register(_spec(
    "eval mine", "Mine file-localisation tasks (query = commit message, gold = modified files) from HEAD's history.",
    related=["eval run"], mutating=True, outputs=["out", "tasks", "scanned", "skipped", "seed", "warnings"],
    options=[{"name": "--out", "type": "path", "required": True, "description": "Task file to write (JSON Lines)."},
             {"name": "--count", "type": "number", "description": "Maximum number of tasks.", "defaultValue": 150},
             {"name": "--ext", "type": "string",
              "description": "Comma-separated gold extensions (default: source code of every language ragit knows, no docs)."},
             {"name": "--seed", "type": "number", "description": "Seed of the task selection.", "defaultValue": 0},
             _FMT, _CWD],
    examples=["ragit eval mine --out tasks.jsonl", "ragit eval mine --out tasks.jsonl --count 50 --ext py --seed 1"],
    errors=["INPUT_INVALID", "GIT_REPOSITORY_REQUIRED", "CONFIG_INVALID"], formats=("json", "json"),
))
register(_spec(
    "eval run", "Index each task's commit into the evaluation store and measure file recall, MRR and pack recall per mode.",
    related=["eval mine", "query", "context pack"], mutating=True, outputs=_RUN_OUTPUTS,
    arguments=[{"name": "tasks", "type": "path", "required": True, "description": "Task file (JSON Lines)."}],
    options=[{"name": "--repo", "type": "path",
              "description": "Git repository holding task commits; repeatable, first match wins (default: --cwd root)."},
             {"name": "--mode", "type": "enum", "description": "Retrieval mode(s).",
              "enum": list(_MODES), "defaultValue": "all"},
             {"name": "--budget", "type": "string", "description": "Comma-separated pack budgets.",
              "defaultValue": "600,1200,2400"},
             {"name": "--seed", "type": "number", "description": "Seed of the bootstrap resamples.", "defaultValue": 0},
             {"name": "--baseline", "type": "path",
              "description": "JSON envelope of an earlier `eval run --format json` on the same task file; a metric "
                             "that dropped more than --max-drop is listed in data.regressions, ok false, exit 3."},
             {"name": "--max-drop", "type": "number",
              "description": "Largest allowed absolute drop of R@5, R@10, MRR and NDCG@10 (needs --baseline).",
              "defaultValue": 0},
             {"name": "--per-task", "type": "path",
              "description": "Also write each task's ranking (JSON Lines, one line per task and mode: where each "
                             "gold file ranked, the first 10 files, the task's metrics); data.perTask names it."},
             dict(_FMT, defaultValue="both"), _CWD],
    examples=["ragit eval run tasks.jsonl", "ragit eval run bench/tasks/hist_flask.jsonl --repo ../flask --mode hybrid",
              "ragit eval run tasks.jsonl --baseline baseline.json --max-drop 0.01",
              "ragit eval run tasks.jsonl --mode hybrid --per-task misses.jsonl"],
    errors=["INPUT_INVALID", "GIT_REPOSITORY_REQUIRED", "EMBEDDER_UNAVAILABLE", "STORE_WRITE_BUSY", "CONFIG_INVALID"],
    formats=("both", "both"),
))
