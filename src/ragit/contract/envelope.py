"""Success and failure envelopes (cli-contract §4–5) and the failure text block."""

from __future__ import annotations

import json
from typing import Any

from .._version import __version__
from ..errors import RagitError


def _masked(value: Any) -> Any:
    from ..security.masking import mask_text

    return mask_text(value).text if isinstance(value, str) else value


def _masked_error(error: RagitError) -> RagitError:
    from ..security.masking import masked_error

    return masked_error(error)


def success_envelope(command: str, cwd: str, data: Any, warnings: list[str] | None = None, ok: bool = True) -> dict:
    return {
        "command": command,
        "ok": ok,
        "version": __version__,
        "cwd": cwd,
        "data": data,
        # warnings can quote what was read or typed: masked like every output (knowledge §10.2)
        "warnings": [_masked(w) for w in warnings or []],
    }


def failure_envelope(command: str, cwd: str, error: RagitError) -> dict:
    return {
        "command": command,
        "ok": False,
        "version": __version__,
        "cwd": cwd,
        "data": None,
        "warnings": [],
        "error": _masked_error(error).to_dict(),  # idempotent: callers may have masked it already
    }


def failure_text(error: RagitError) -> str:
    """The stderr block of cli-contract §5.1 (five contractual ``- key:`` lines)."""
    from .jsonout import normalize_numbers

    error = _masked_error(error)
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
