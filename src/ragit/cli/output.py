"""What a command returns to the CLI shell, and how the shell prints it (cli-contract §3.1, §4–5)."""

from __future__ import annotations

import sys
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

FORMATS = ("text", "json", "both")
FORMAT_ALIASES = {"markdown": "text", "table": "text"}


@dataclass
class Output:
    """A command's result: data for JSON, a text rendering, warnings and the exit code."""

    command: str
    data: Any
    text: Callable[[], str]
    warnings: list[str] = field(default_factory=list)
    ok: bool = True
    exit_code: int = 0
    raw_json: bool = False  # print ``data`` without the envelope (migrate from-*)
    cwd: str = ""  # the envelope cwd: the git root, or the absolute requested directory


def stdout_is_terminal() -> bool:
    """True when stdout is a terminal: a person is reading, so the default format is ``text``
    (cli-contract §1.1); a closed or replaced stream counts as piped."""
    try:
        return sys.stdout.isatty()
    except (AttributeError, ValueError):
        return False


def effective_format(given: str | None, default: str) -> str:
    """The format a command renders in: ``given`` when recognised, else ``text`` on a terminal,
    else the command's piped ``default``."""
    return normalize_format(given) or ("text" if stdout_is_terminal() else default)


def normalize_format(value: str | None) -> str | None:
    """Trimmed, case-insensitive format with aliases; None when not recognised."""
    if value is None:
        return None
    v = value.strip().lower()
    v = FORMAT_ALIASES.get(v, v)
    return v if v in FORMATS else None


def emit(out: Output, fmt: str, cwd: str) -> int:
    """Print ``out`` in ``fmt`` on stdout; returns the exit code."""
    from ..contract.envelope import success_envelope
    from ..contract.jsonout import dumps

    if out.raw_json:
        payload = dumps(out.data)
    else:
        payload = dumps(success_envelope(out.command, cwd, out.data, out.warnings, out.ok))
    if fmt == "json":
        sys.stdout.write(payload)
    elif fmt == "text":
        sys.stdout.write(_ensure_newline(out.text()))
    else:
        sys.stdout.write(_ensure_newline(out.text()) + "\n" + payload)
    sys.stdout.flush()
    return out.exit_code


def emit_failure(command: str, cwd: str, error, fmt: str) -> int:
    from ..contract.envelope import failure_envelope, failure_text
    from ..contract.jsonout import dumps
    from ..security.masking import masked_error

    error = masked_error(error)

    if fmt in ("json", "both"):
        sys.stdout.write(dumps(failure_envelope(command, cwd, error)))
        sys.stdout.flush()
    if fmt in ("text", "both"):
        sys.stderr.write(failure_text(error))
        sys.stderr.flush()
    return error.exit_code


def _ensure_newline(text: str) -> str:
    return text if text.endswith("\n") else text + "\n"
