"""The baseline gate of ``eval run`` (knowledge §21.2): fail a CI job when retrieval got worse.

A baseline is the JSON envelope an earlier ``eval run --format json`` printed. It is checked
before any work: a file that is not such an envelope, or one measured on another task set, would
make the gate compare numbers that mean different things, so both are ``INPUT_INVALID``. Values
are compared as the envelope prints them (6 decimals), so a re-run that changed nothing drops by
exactly 0 and passes ``--max-drop 0``.
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..errors import RagitError, input_invalid
from .tasks import Task

GATED = ("recallAt5", "recallAt10", "mrr", "ndcgAt10")
COMMAND = "eval run"
# float slack of the comparison: both sides are 6-decimal values, a drop is a multiple of 1e-6
_SLACK = 1e-9
_HINT = "save one with `ragit eval run <tasks> --format json > baseline.json`"


@dataclass(frozen=True)
class Baseline:
    given: str  # the path as given
    max_drop: float
    modes: dict[str, dict[str, Any]]  # mode -> its row in the baseline's data.modes


def _bad(given: str, message: str, **extra: Any) -> RagitError:
    return input_invalid("--baseline", "invalid_format", f"{given}: {message}; {_HINT}", command=COMMAND,
                         value=given, **extra)


def parse_max_drop(value: str | None) -> float:
    """``--max-drop``: an absolute drop in [0, 1] (every gated metric lies in [0, 1]); default 0."""
    if value is None:
        return 0.0
    text = value.strip()
    try:
        number = float(text)
    except ValueError:
        raise input_invalid("--max-drop", "invalid_format", "--max-drop must be a number like 0.01",
                            command=COMMAND, value=value) from None
    if not math.isfinite(number) or not 0 <= number <= 1:
        raise input_invalid("--max-drop", "out_of_range", "--max-drop must be within [0, 1]", command=COMMAND,
                            value=value)
    return number


def load_baseline(path: Path, given: str, tasks: list[Task], modes: list[str], max_drop: float) -> Baseline:
    """Read and check the baseline envelope against this run's tasks and modes."""
    if not path.is_file():
        raise input_invalid("--baseline", "file_not_found", f"{given} does not exist; {_HINT}", command=COMMAND,
                            value=given)
    try:
        envelope = json.loads(path.read_text(encoding="utf-8"))
    except UnicodeDecodeError:
        raise _bad(given, "not UTF-8 text") from None
    except json.JSONDecodeError as exc:
        raise input_invalid("--baseline", "invalid_json", f"{given} is not JSON ({exc.msg}); {_HINT}",
                            command=COMMAND, value=given) from None
    if not isinstance(envelope, dict) or envelope.get("command") != COMMAND or envelope.get("ok") is not True:
        raise _bad(given, "not the envelope of a successful `eval run`")
    data = envelope.get("data")
    rows = data.get("modes") if isinstance(data, dict) else None
    if not isinstance(rows, list) or not all(isinstance(r, dict) and isinstance(r.get("mode"), str) for r in rows):
        raise _bad(given, "data.modes is missing or malformed")
    by_mode: dict[str, dict[str, Any]] = {}
    for row in rows:
        for metric in GATED:
            value = row.get(metric)
            if value is not None and (isinstance(value, bool) or not isinstance(value, (int, float))):
                raise _bad(given, f"data.modes[{row['mode']}].{metric} is not a number")
        by_mode[row["mode"]] = row
    _check_tasks(given, data, tasks)
    missing = [m for m in modes if m not in by_mode]
    if missing:
        raise _bad(given, f"the baseline has no {', '.join(missing)} mode; run it with the same --mode",
                   conflicts=["--mode"])
    return Baseline(given, max_drop, by_mode)


def _check_tasks(given: str, data: dict[str, Any], tasks: list[Task]) -> None:
    """The baseline measured the same task set: the same number of tasks and, where the envelope
    lists them (``timing.perTask`` and ``skipped``), the same task ids."""
    if data.get("tasks") != len(tasks):
        raise _bad(given, f"it measured {data.get('tasks')} task(s), this task file has {len(tasks)}: "
                          "a different task file", conflicts=["tasksFile"])
    timing = data.get("timing")
    per_task = timing.get("perTask") if isinstance(timing, dict) else None
    skipped = data.get("skipped")
    if isinstance(per_task, list) and isinstance(skipped, list):
        ids = {t.get("id") for t in per_task + skipped if isinstance(t, dict)}
        if ids != {t.id for t in tasks}:
            raise _bad(given, "it measured other task ids: a different task file", conflicts=["tasksFile"])


def regressions(baseline: Baseline, modes: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Every (mode, metric) whose value fell by more than ``max_drop`` below the baseline, in mode
    then metric order; values as printed (6 decimals)."""
    from ..contract.jsonout import round6

    out = []
    for row in modes:
        before = baseline.modes.get(row["mode"])
        if before is None:
            continue
        for metric in GATED:
            old, new = before.get(metric), row.get(metric)
            if old is None or new is None:
                continue
            if float(old) - float(round6(new)) > baseline.max_drop + _SLACK:
                out.append({"mode": row["mode"], "metric": metric, "baseline": old, "value": new})
    return out
