"""Success and failure envelopes (cli-contract §4–5) and the failure text block."""

from __future__ import annotations

import json
from typing import Any

from .._version import __version__
from ..errors import RagitError


def success_envelope(command: str, cwd: str, data: Any, warnings: list[str] | None = None, ok: bool = True) -> dict:
    return {
        "command": command,
        "ok": ok,
        "version": __version__,
        "cwd": cwd,
        "data": data,
        "warnings": list(warnings or []),
    }


def failure_envelope(command: str, cwd: str, error: RagitError) -> dict:
    return {
        "command": command,
        "ok": False,
        "version": __version__,
        "cwd": cwd,
        "data": None,
        "warnings": [],
        "error": error.to_dict(),
    }


def failure_text(error: RagitError) -> str:
    """The stderr block of cli-contract §5.1 (five contractual ``- key:`` lines)."""
    from .jsonout import normalize_numbers

    details = json.dumps(normalize_numbers(error.details), ensure_ascii=False, separators=(",", ":"))
    return "\n".join(
        [
            f"[ragit] error ({error.category})",
            f"- code: {error.code}",
            f"- message: {error.message}",
            f"- retryable: {'true' if error.retryable else 'false'}",
            f"- details: {details}",
            f"- recovery: {error.recovery or 'none'}",
        ]
    ) + "\n"
