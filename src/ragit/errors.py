"""Typed failures shared by every plane.

One exception class carries a stable ``code``; the code fixes the category, exit code and
retryability (cli-contract §6), so callers never disagree about how a failure is reported.
"""

from __future__ import annotations

from typing import Any

# category -> exit code
CATEGORY_EXIT: dict[str, int] = {
    "invalid_input": 2,
    "not_ready": 3,
    "transient": 3,
    "corrupt_or_incompatible": 4,
    "internal": 1,
}

# code -> (category, retryable)
ERROR_CODES: dict[str, tuple[str, bool]] = {
    "INPUT_INVALID": ("invalid_input", False),
    "COMMAND_UNKNOWN": ("invalid_input", False),
    "CONFIG_KEY_UNKNOWN": ("invalid_input", False),
    "SNAPSHOT_REF_INVALID": ("invalid_input", False),
    "SNAPSHOT_REF_AMBIGUOUS": ("invalid_input", False),
    "INGEST_BASE_NOT_ANCESTOR": ("invalid_input", False),
    "ARTIFACT_NOT_FOUND": ("invalid_input", False),
    "ARTIFACT_TRANSITION_INVALID": ("invalid_input", False),
    "CITATION_NOT_FOUND": ("invalid_input", False),
    "SNAPSHOT_NOT_INDEXED": ("not_ready", False),
    "SNAPSHOT_STORE_UNAVAILABLE": ("not_ready", False),
    "INGEST_BASE_NOT_INDEXED": ("not_ready", False),
    "INGEST_CANDIDATES_DIRTY": ("not_ready", False),
    "EMBEDDER_UNAVAILABLE": ("not_ready", False),
    "GIT_REPOSITORY_REQUIRED": ("not_ready", False),
    "GIT_COMMIT_FAILED": ("not_ready", False),
    "TOOL_RESULT_UNAVAILABLE": ("not_ready", False),
    "REPOSITORY_STATE_CHANGED": ("transient", True),
    "STORE_WRITE_BUSY": ("transient", True),
    "SNAPSHOT_INGEST_IN_PROGRESS": ("transient", True),
    "SNAPSHOT_MANIFEST_INVALID": ("corrupt_or_incompatible", False),
    "SNAPSHOT_SCHEMA_UNSUPPORTED": ("corrupt_or_incompatible", False),
    "CONFIG_INVALID": ("corrupt_or_incompatible", False),
    "INTERNAL_ERROR": ("internal", False),
}


class RagitError(Exception):
    """A failure with a stable code, details and a recovery command."""

    def __init__(
        self,
        code: str,
        message: str,
        details: dict[str, Any] | None = None,
        recovery: str | None = None,
    ) -> None:
        if code not in ERROR_CODES:
            raise ValueError(f"unknown error code {code!r}")
        super().__init__(message)
        self.code = code
        self.message = message
        self.details: dict[str, Any] = dict(details or {})
        self.recovery = recovery

    @property
    def category(self) -> str:
        return ERROR_CODES[self.code][0]

    @property
    def retryable(self) -> bool:
        return ERROR_CODES[self.code][1]

    @property
    def exit_code(self) -> int:
        return CATEGORY_EXIT[self.category]

    def to_dict(self) -> dict[str, Any]:
        """The ``error`` object of the failure envelope (cli-contract §5), in emission order."""
        return {
            "code": self.code,
            "category": self.category,
            "message": self.message,
            "retryable": self.retryable,
            "details": self.details,
            "recovery": {"command": self.recovery},
        }

    def __repr__(self) -> str:  # pragma: no cover - debugging aid
        return f"RagitError({self.code!r}, {self.message!r}, {self.details!r})"


def input_invalid(
    field: str,
    reason: str,
    message: str | None = None,
    *,
    command: str | None = None,
    **extra: Any,
) -> RagitError:
    """Build an ``INPUT_INVALID`` failure; ``extra`` adds ``value``, ``allowed`` or ``conflicts``."""
    details: dict[str, Any] = {"field": field, "reason": reason}
    details.update(extra)
    recovery = f"ragit describe {command}" if command else "ragit --help"
    return RagitError("INPUT_INVALID", message or f"invalid {field}: {reason}", details, recovery)


def internal_error(exc: BaseException) -> RagitError:
    """Wrap an unexpected exception as ``INTERNAL_ERROR``."""
    return RagitError(
        "INTERNAL_ERROR",
        f"unexpected {type(exc).__name__}: {exc}",
        {"type": type(exc).__name__},
        "ragit doctor",
    )
