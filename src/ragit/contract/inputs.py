"""Validation of every user input (cli-contract §3): typed ``INPUT_INVALID`` before any work.

These helpers never touch git, the store or the embedder; ``load_input`` only reads the named
file (or stdin). The size, depth and hostile-value limits live in :mod:`ragit.contract.limits`,
shared with the Python API and the MCP server.
"""

from __future__ import annotations

import math
import os
import re
import sys
from pathlib import Path
from typing import Any, Iterable, Mapping

from ..errors import RagitError, input_invalid
from .limits import CONTROL_RE, FILE_LIMIT_BYTES, PAYLOAD_LIMIT_BYTES, check_text, check_value, parse_json

MAX_SAFE_INTEGER = 2**53 - 1
_CONTROL_RE = CONTROL_RE


class Validator:
    """Binds the command path so every error names ``ragit describe <command>`` as recovery."""

    def __init__(self, command: str):
        self.command = command

    def fail(self, field: str, reason: str, message: str | None = None, **extra: Any) -> RagitError:
        return input_invalid(field, reason, message, command=self.command, **extra)

    # ---- generic values

    def text(self, value: Any, field: str, *, allow_empty: bool = False) -> str:
        """A trimmed, non-empty string without control characters or lone surrogates, within
        the size limits (64 KB for a question or goal)."""
        if not isinstance(value, str):
            raise self.fail(field, "not_string", f"{field} must be a string")
        check_text(value, self, field)
        if _CONTROL_RE.search(value):
            raise self.fail(field, "control_character", f"{field} contains a control character")
        value = value.strip()
        if not value and not allow_empty:
            raise self.fail(field, "empty", f"{field} must not be empty")
        return value

    def choice(self, value: Any, field: str, allowed: Iterable[str], aliases: Mapping[str, str] | None = None) -> str:
        """Trimmed, case-insensitive member of ``allowed``."""
        allowed = list(allowed)
        if not isinstance(value, str):
            raise self.fail(field, "not_string", f"{field} must be a string", allowed=allowed)
        norm = value.strip().lower()
        if aliases:
            norm = aliases.get(norm, norm)
        if norm not in allowed:
            raise self.fail(field, "not_one_of", f"{field} must be one of {', '.join(allowed)}", value=value, allowed=allowed)
        return norm

    def cli_positive_int(self, value: str, field: str) -> int:
        """A decimal integer literal in 1 .. 2^53-1 given on the command line."""
        text = value.strip()
        if not re.fullmatch(r"[+-]?\d+", text):
            raise self.fail(field, "not_integer", f"{field} must be a positive integer", value=value)
        number = int(text)
        if number < 1 or number > MAX_SAFE_INTEGER:
            raise self.fail(field, "out_of_range", f"{field} must be between 1 and {MAX_SAFE_INTEGER}", value=value)
        return number

    def json_positive_int(self, value: Any, field: str) -> int:
        """A JSON number whose value is an integer in 1 .. 2^53-1 (booleans rejected)."""
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            raise self.fail(field, "not_integer", f"{field} must be a positive integer")
        if isinstance(value, float):
            if not math.isfinite(value) or not value.is_integer():
                raise self.fail(field, "not_integer", f"{field} must be a positive integer", value=value if math.isfinite(value) else str(value))
            value = int(value)
        if value < 1 or value > MAX_SAFE_INTEGER:
            raise self.fail(field, "out_of_range", f"{field} must be between 1 and {MAX_SAFE_INTEGER}", value=value)
        return value

    def boolean(self, value: Any, field: str) -> bool:
        if not isinstance(value, bool):
            raise self.fail(field, "not_boolean", f"{field} must be a boolean")
        return value

    def allowed_keys(self, obj: Any, allowed: Iterable[str], field: str = "input") -> dict:
        if not isinstance(obj, dict):
            raise self.fail(field, "invalid_format", f"{field} must be a JSON object")
        allowed = list(allowed)
        for key in obj:
            if key not in allowed:
                raise self.fail(f"{field}.{key}", "unknown_field", f"unknown field {key!r}", allowed=allowed)
        return obj

    def mixed(self, conflicts: list[str]) -> None:
        if conflicts:
            raise self.fail(
                "--input", "mixed_input",
                "--input cannot be combined with " + ", ".join(conflicts),
                conflicts=conflicts,
            )


def check_control_characters(value: Any, field: str, validator: Validator) -> None:
    """Reject control characters in every string of a parsed JSON value, and every hostile
    value of cli-contract §3.3 (deep nesting, lone surrogates, NaN/Infinity, a question or
    goal over 64 KB): the check of a payload that did not come through :func:`load_json_input`
    (a Python API call, an MCP tool call)."""
    check_value(value, validator, field, budget=None)


def resolve_input_path(spec: str, root: Path, validator: Validator, *, field: str = "--input",
                       allow_outside: bool = False) -> Path:
    """Resolve a user path against the repository root; it must stay inside unless allowed."""
    raw = Path(spec).expanduser()
    path = raw if raw.is_absolute() else Path(root) / raw
    resolved = Path(os.path.normpath(path))
    if not allow_outside:
        try:
            rel = os.path.relpath(resolved, root)
        except ValueError:
            rel = str(resolved)
        if rel == ".." or rel.startswith("../") or os.path.isabs(rel):
            raise validator.fail(field, "path_outside_repo", f"{spec} is outside the repository", value=spec)
    return resolved


def read_text_input(spec: str, root: Path, validator: Validator, *, field: str = "--input",
                    allow_outside: bool = False, limit: int = FILE_LIMIT_BYTES) -> str:
    """The raw text of ``--input`` (``-`` = stdin); more than ``limit`` bytes is ``too_large``,
    found without reading past the limit."""
    if spec == "-":
        data = sys.stdin.buffer.read(limit + 1)
    else:
        path = resolve_input_path(spec, root, validator, field=field, allow_outside=allow_outside)
        try:
            if not path.is_file():
                raise validator.fail(field, "file_not_found", f"{spec} does not exist", value=spec)
            with path.open("rb") as fh:
                data = fh.read(limit + 1)
        except OSError as exc:  # a name too long, a permission: no file this command can read
            raise validator.fail(field, "file_not_found", f"{spec} cannot be read: {exc.strerror}",
                                 value=spec) from None
    if len(data) > limit:
        raise validator.fail(field, "too_large", f"{field} is larger than {limit} bytes")
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        raise validator.fail(field, "invalid_format", f"{spec} is not UTF-8 text", value=spec) from None


def load_json_input(spec: str, root: Path, validator: Validator, *, allow_outside: bool = False,
                    limit: int = PAYLOAD_LIMIT_BYTES) -> Any:
    """Read, parse and check a ``--input`` payload: invalid JSON, the limits of
    :mod:`ragit.contract.limits` (``limit`` bytes of text at most) and control characters."""
    text = read_text_input(spec, root, validator, allow_outside=allow_outside, limit=limit)
    return parse_json(text, validator, budget=None)


def validate_glob_list(text: str, validator: Validator, field: str) -> list[str]:
    """Comma-separated globs, trimmed, empties dropped; none may leave the repository."""
    if _CONTROL_RE.search(text):
        raise validator.fail(field, "control_character", f"{field} contains a control character")
    patterns = [p.strip() for p in text.split(",") if p.strip()]
    if not patterns:
        raise validator.fail(field, "empty", f"{field} needs at least one pattern")
    for p in patterns:
        if p.startswith("/") or p.startswith("../") or "/../" in p or p == ".." or p.endswith("/..") or re.match(r"^[A-Za-z]:[\\/]", p):
            raise validator.fail(field, "glob_outside_repo", f"pattern {p!r} leaves the repository", value=p)
    return patterns


def validate_repo_path(value: Any, validator: Validator, field: str) -> str:
    """A repo-relative POSIX path: not absolute, no ``..`` segment, no control characters."""
    text = validator.text(value, field)
    norm = text.replace("\\", "/")
    while norm.startswith("./"):
        norm = norm[2:]
    if norm.startswith("/") or any(seg == ".." for seg in norm.split("/")):
        raise validator.fail(field, "path_outside_repo", f"{text} is not a repository-relative path", value=text)
    return norm.rstrip("/")


def check_citation(citation: str) -> None:
    """``verify``'s argument: within the text limit and valid Unicode (cli-contract §3.3); the
    same check for the CLI and the MCP tool, before the citation is parsed."""
    check_text(citation, Validator("verify"), "citation")
