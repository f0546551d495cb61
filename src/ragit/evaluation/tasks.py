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
class GoldEntry:
    """A relevant target: a whole file, or a line span of one (``start``/``end`` 1-based, inclusive)."""

    path: str
    start: int | None = None
    end: int | None = None

    def covered_by(self, path: str, start: int | None, end: int | None) -> bool:
        """A hit covers the entry when its path matches and, for a span, its lines overlap."""
        if path != self.path:
            return False
        if self.start is None or start is None or end is None:
            return True
        return start <= self.end and end >= self.start


@dataclass(frozen=True)
class Task:
    """One file-localisation task; ``line`` is its 0-based line in the task file.

    ``gold`` holds the gold files (a span's path); ``targets`` the gold entries as given, spans
    included, which the benchmark's NDCG@10 scores. Code-search tasks add ``root`` (search only
    under it), ``secondary`` (related, not scored), ``category`` and ``language``.
    """

    line: int
    id: str
    repo: str
    commit: str
    query: str
    gold: tuple[str, ...]
    fix_commit: str | None = None
    mentions_gold_name: bool | None = None
    targets: tuple[GoldEntry, ...] = ()
    root: str = "."
    secondary: tuple[GoldEntry, ...] = ()
    category: str | None = None
    language: str | None = None


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


def _relative(value: str, field: str, given: object) -> str:
    path = value.strip()
    if path.startswith("/") or ".." in path.split("/"):
        raise _fail(field, "path_outside_repo", f"{field} must be repository-relative", value=given)
    return path


def _line_number(item: dict, key: str, field: str) -> int:
    value = item.get(key)
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise _fail(f"{field}.{key}", "invalid_value", f"{field}.{key} must be a positive integer")
    return value


def _entries(value: object, field: str, *, required: bool) -> tuple[GoldEntry, ...]:
    """Gold or secondary entries: repository paths, or ``{path, startLine, endLine}`` spans."""
    if not isinstance(value, list) or (required and not value):
        reason = "empty" if value == [] else "not_array"
        raise _fail(field, reason, f"{field} must be a non-empty array of paths or spans" if required
                    else f"{field} must be an array of paths or spans")
    entries: list[GoldEntry] = []
    for i, item in enumerate(value):
        at = f"{field}[{i}]"
        if isinstance(item, str) and item.strip():
            entries.append(GoldEntry(_relative(item, at, item)))
        elif isinstance(item, dict):
            path = item.get("path")
            if not isinstance(path, str) or not path.strip():
                raise _fail(f"{at}.path", "not_string", f"{at}.path must be a non-empty path")
            start = _line_number(item, "startLine", at)
            end = _line_number(item, "endLine", at)
            if end < start:
                raise _fail(f"{at}.endLine", "invalid_value", f"{at}.endLine must not be before startLine")
            entries.append(GoldEntry(_relative(path, f"{at}.path", path), start, end))
        else:
            raise _fail(at, "not_string", f"{at} must be a non-empty path or a span object")
    return tuple(dict.fromkeys(entries))


def _root(obj: dict, prefix: str) -> str:
    if "root" not in obj:
        return "."
    value = _string(obj, "root", prefix)
    root = _relative(value, f"{prefix}.root", value).strip("/")
    return root or "."


def _optional_string(obj: dict, key: str, prefix: str) -> str | None:
    return _string(obj, key, prefix) if obj.get(key) is not None else None


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
    if "gold" not in obj:
        raise _fail(f"{prefix}.gold", "required", f"{prefix}.gold is required")
    targets = _entries(obj["gold"], f"{prefix}.gold", required=True)
    secondary = _entries(obj["secondary"], f"{prefix}.secondary", required=False) \
        if obj.get("secondary") is not None else ()
    return Task(
        line=line_no,
        id=_string(obj, "id", prefix),
        repo=_string(obj, "repo", prefix),
        commit=_sha(obj, "commit", prefix),
        query=_string(obj, "query", prefix),
        gold=tuple(dict.fromkeys(t.path for t in targets)),
        fix_commit=_sha(obj, "fix_commit", prefix) if obj.get("fix_commit") is not None else None,
        mentions_gold_name=mentions,
        targets=targets,
        root=_root(obj, prefix),
        secondary=secondary,
        category=_optional_string(obj, "category", prefix),
        language=_optional_string(obj, "language", prefix),
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
