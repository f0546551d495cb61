"""Init's config write: create `.ragit/config.toml`, or add only the keys it lacks [ours].

The reference overwrote the file. Here the user's values, and when possible their comments and
layout, survive: missing keys are inserted as text at the end of their table (missing tables
are appended), and the result is re-parsed to prove nothing else changed. If the layout is
too unusual for that (dotted keys, odd headers), the file is re-rendered canonically instead,
still with every existing value kept.
"""

from __future__ import annotations

import re
import tomllib
from typing import Any

from ..config import DEFAULTS, Config, render_config

_HEADER = re.compile(r"^\s*\[\s*([A-Za-z0-9_-]+)\s*\]\s*(?:#.*)?$")
_ANY_HEADER = re.compile(r"^\s*\[")


def wanted_config(project_name: str, mode: str, strategy: str) -> dict[str, dict[str, Any]]:
    """Every default key, with the values init itself decides (knowledge §3)."""
    wanted = {section: dict(table) for section, table in DEFAULTS.items()}
    wanted["project"].update(name=project_name, mode=mode)
    wanted["init"].update(strategy=strategy, merge_existing=True)
    return wanted


def render_new(wanted: dict[str, dict[str, Any]]) -> str:
    return render_config(Config(wanted))


def _missing(raw: dict[str, Any], wanted: dict[str, dict[str, Any]]) -> dict[str, dict[str, Any]]:
    missing: dict[str, dict[str, Any]] = {}
    for section, table in wanted.items():
        present = raw.get(section)
        if section in raw and not isinstance(present, dict):
            continue  # a non-table value under a section name is the user's; leave it alone
        keys = {k: v for k, v in table.items() if k not in (present or {})}
        if keys:
            missing[section] = keys
    return missing


def _key_lines(section: str, keys: dict[str, Any]) -> list[str]:
    """``key = value`` lines rendered exactly as the canonical writer would."""
    rendered = render_config(Config({section: keys})).splitlines()
    return [line for line in rendered[1:] if line]


def _insert_textually(text: str, missing: dict[str, dict[str, Any]]) -> str:
    lines = text.splitlines()
    headers = {}
    for index, line in enumerate(lines):
        match = _HEADER.match(line)
        if match and match.group(1) not in headers:
            headers[match.group(1)] = index
    inserts: list[tuple[int, list[str]]] = []
    appended: list[str] = []
    for section, keys in missing.items():
        if section in headers:
            start = headers[section]
            end = next((i for i in range(start + 1, len(lines)) if _ANY_HEADER.match(lines[i])), len(lines))
            while end > start + 1 and not lines[end - 1].strip():
                end -= 1  # insert before the blank lines that separate tables
            inserts.append((end, _key_lines(section, keys)))
        else:
            appended += ["", f"[{section}]", *_key_lines(section, keys)]
    for position, new_lines in sorted(inserts, reverse=True):
        lines[position:position] = new_lines
    if appended:
        while lines and not lines[-1].strip():
            lines.pop()
        if not lines:
            appended = appended[1:]  # no blank line at the top of an otherwise empty file
    return "\n".join(lines + appended) + "\n"


def merged_config(text: str, wanted: dict[str, dict[str, Any]]) -> str | None:
    """The file with missing keys added, or None when nothing is missing (file left as is)."""
    raw = tomllib.loads(text)
    missing = _missing(raw, wanted)
    if not missing:
        return None
    expected = {section: dict(value) if isinstance(value, dict) else value for section, value in raw.items()}
    for section, keys in missing.items():
        expected.setdefault(section, {}).update(keys)
    candidate = _insert_textually(text, missing)
    try:
        if tomllib.loads(candidate) == expected:
            return candidate
    except tomllib.TOMLDecodeError:
        pass
    return render_config(Config(expected))
