"""How memory payloads read their fields: trimmed required and optional text, string lists.

``memory wrap`` and ``memory promote`` validate the same kinds of field (wrap records the
promotion candidates that promote later turns into documents), so both read them from here.
"""

from __future__ import annotations

from typing import Any

from ..contract.inputs import Validator, validate_repo_path


def string_list(value: Any, v: Validator, field: str, *, repo_paths: bool = False) -> list[str]:
    """Non-arrays → ``[]``; non-strings dropped; items trimmed; empties dropped.

    With ``repo_paths`` every item must be repository-relative (no absolute path, no ``..``).
    """
    if not isinstance(value, list):
        return []
    out: list[str] = []
    for i, item in enumerate(value):
        if not isinstance(item, str) or not item.strip():
            continue
        out.append(validate_repo_path(item, v, f"{field}[{i}]") if repo_paths else item.strip())
    return out


def required_text(obj: dict, key: str, v: Validator, field: str) -> str:
    if key not in obj:
        raise v.fail(f"{field}.{key}", "required", f"{field}.{key} is required")
    return v.text(obj[key], f"{field}.{key}")


def optional_text(obj: dict, key: str, v: Validator, field: str) -> str | None:
    """A trimmed string, or None when the key is absent, null or blank."""
    value = obj.get(key)
    if value is None:
        return None
    return v.text(value, f"{field}.{key}", allow_empty=True) or None
