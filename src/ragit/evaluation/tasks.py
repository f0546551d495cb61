"""The task file (knowledge §21): JSON Lines of ``{id, repo, commit, query, gold}``.

Validation is strict about the keys ``eval`` uses and silent about every other key, so the
project's benchmark files and SWE-bench-style exports load as they are. Every malformed line is
reported as ``tasks[<0-based line>].<key>`` before any work starts.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..errors import RagitError, input_invalid

COMMAND = "eval run"
_SHA = re.compile(r"[0-9a-fA-F]{40}")


@dataclass(frozen=True)
class Task:
    """One file-localisation task; ``line`` is its 0-based line in the task file."""

    line: int
    id: str
    repo: str
    commit: str
    query: str
    gold: tuple[str, ...]
    fix_commit: str | None = None
    mentions_gold_name: bool | None = None


def _fail(field: str, reason: str, message: str, **extra: Any) -> RagitError:
    return input_invalid(field, reason, message, command=COMMAND, **extra)


def _string(obj: dict, key: str, prefix: str) -> str:
    if key not in obj:
        raise _fail(f"{prefix}.{key}", "required", f"{prefix}.{key} is required")
    value = obj[key]
    if not isinstance(value, str):
        raise _fail(f"{prefix}.{key}", "not_string", f"{prefix}.{key} must be a string")
    if not value.strip():
        raise _fail(f"{prefix}.{key}", "empty", f"{prefix}.{key} must not be empty")
    return value


def _sha(obj: dict, key: str, prefix: str) -> str:
    value = _string(obj, key, prefix)
    if _SHA.fullmatch(value) is None:
        raise _fail(f"{prefix}.{key}", "invalid_format", f"{prefix}.{key} must be a full 40-hex commit SHA",
                    value=value)
    return value.lower()


def _gold(obj: dict, prefix: str) -> tuple[str, ...]:
    field = f"{prefix}.gold"
    if "gold" not in obj:
        raise _fail(field, "required", f"{field} is required")
    value = obj["gold"]
    if not isinstance(value, list) or not value:
        raise _fail(field, "empty" if value == [] else "not_array", f"{field} must be a non-empty array of paths")
    paths: list[str] = []
    for i, item in enumerate(value):
        if not isinstance(item, str) or not item.strip():
            raise _fail(f"{field}[{i}]", "not_string", f"{field}[{i}] must be a non-empty path")
        path = item.strip()
        if path.startswith("/") or ".." in path.split("/"):
            raise _fail(f"{field}[{i}]", "path_outside_repo", f"{field}[{i}] must be repository-relative",
                        value=item)
        paths.append(path)
    return tuple(dict.fromkeys(paths))


def parse_task(line_no: int, text: str) -> Task:
    """One non-blank line of a task file."""
    prefix = f"tasks[{line_no}]"
    try:
        obj = json.loads(text)
    except json.JSONDecodeError as exc:
        raise _fail(prefix, "invalid_json", f"{prefix} is not valid JSON: {exc.msg}") from None
    if not isinstance(obj, dict):
        raise _fail(prefix, "not_object", f"{prefix} must be a JSON object")
    mentions = obj.get("mentions_gold_name")
    if mentions is not None and not isinstance(mentions, bool):
        raise _fail(f"{prefix}.mentions_gold_name", "not_boolean", f"{prefix}.mentions_gold_name must be a boolean")
    return Task(
        line=line_no,
        id=_string(obj, "id", prefix),
        repo=_string(obj, "repo", prefix),
        commit=_sha(obj, "commit", prefix),
        query=_string(obj, "query", prefix),
        gold=_gold(obj, prefix),
        fix_commit=_sha(obj, "fix_commit", prefix) if obj.get("fix_commit") is not None else None,
        mentions_gold_name=mentions,
    )


def load_tasks(path: Path, given: str) -> list[Task]:
    """All tasks of ``path`` (``given`` is how the user spelled it, for messages)."""
    if not path.is_file():
        raise _fail("tasksFile", "file_not_found", f"{given} does not exist", value=given)
    try:
        text = path.read_bytes().decode("utf-8")
    except UnicodeDecodeError:
        raise _fail("tasksFile", "invalid_format", f"{given} is not UTF-8 text", value=given) from None
    tasks: list[Task] = []
    seen: dict[str, int] = {}
    for line_no, line in enumerate(text.removeprefix("\ufeff").split("\n")):
        if not line.strip():
            continue
        task = parse_task(line_no, line)
        if task.id in seen:
            raise _fail(f"tasks[{line_no}].id", "duplicate", f"task id {task.id!r} also appears on line {seen[task.id]}",
                        value=task.id)
        seen[task.id] = line_no
        tasks.append(task)
    return tasks
