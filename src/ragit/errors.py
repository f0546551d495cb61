"""Typed failures shared by every plane.

One exception class carries a stable ``code``; the code fixes the category, exit code and
retryability (cli-contract §6), so callers never disagree about how a failure is reported.
"""

from __future__ import annotations

import errno
import os
from typing import Any

# category -> exit code
CATEGORY_EXIT: dict[str, int] = {
    "invalid_input": 2,
    "not_ready": 3,
    "transient": 3,
    "corrupt_or_incompatible": 4,
    "io": 3,
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
    "STORE_UNAVAILABLE": ("transient", True),
    "SNAPSHOT_MANIFEST_INVALID": ("corrupt_or_incompatible", False),
    "SNAPSHOT_SCHEMA_UNSUPPORTED": ("corrupt_or_incompatible", False),
    "SNAPSHOT_BUNDLE_INVALID": ("corrupt_or_incompatible", False),
    "CONFIG_INVALID": ("corrupt_or_incompatible", False),
    "STORE_WRITE_FAILED": ("io", False),
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
    """Wrap an unexpected exception as ``INTERNAL_ERROR``.

    A storage failure that only a write can cause (full disk, read-only file system, an SQLite
    write refused) is no bug, so it becomes ``STORE_WRITE_FAILED`` even when the write site did
    not name it: the last line of defence of cli-contract §6's ``io`` category.
    """
    for cause in _chain(exc):
        reason = write_failure_reason(cause, writing=False)
        if reason is not None:
            return store_write_failed(getattr(cause, "filename", None), reason, cause)
    return RagitError(
        "INTERNAL_ERROR",
        f"unexpected {type(exc).__name__}: {exc}",
        {"type": type(exc).__name__},
        "ragit doctor",
    )


def _chain(exc: BaseException) -> list[BaseException]:
    """``exc`` and the exceptions it was raised from or during, innermost last (cycles cut)."""
    out: list[BaseException] = []
    current: BaseException | None = exc
    while current is not None and current not in out and len(out) < 16:
        out.append(current)
        current = current.__cause__ or current.__context__
    return out


# ---------------------------------------------------------------- storage write failures

# errno -> STORE_WRITE_FAILED reason; the first four arise only from writes
_ERRNO_REASONS: dict[int, str] = {
    errno.ENOSPC: "disk_full",
    errno.EDQUOT: "disk_full",
    errno.EFBIG: "disk_full",  # a file-size limit (RLIMIT_FSIZE, a quota): no room for this write
    errno.EROFS: "read_only",
    errno.EACCES: "permission_denied",
    errno.EPERM: "permission_denied",
}
_WRITE_ONLY_ERRNOS = frozenset({errno.ENOSPC, errno.EDQUOT, errno.EFBIG, errno.EROFS})

# SQLite primary result codes (sqlite3.Error.sqlite_errorcode & 0xff)
_SQLITE_PERM, _SQLITE_READONLY, _SQLITE_IOERR, _SQLITE_FULL, _SQLITE_CANTOPEN = 3, 8, 10, 13, 14
# extended SQLITE_IOERR codes of a failed write (WRITE, FSYNC, DIR_FSYNC, TRUNCATE, SHMSIZE,
# SHMMAP): the OS refused to store bytes, which is what a full disk or a size limit looks like
_SQLITE_WRITE_IOERRS = frozenset({778, 1034, 1290, 1546, 4874, 5386})


def write_failure_reason(exc: BaseException, path: str | os.PathLike[str] | None = None, *,
                         writing: bool = True) -> str | None:
    """``disk_full``, ``read_only`` or ``permission_denied`` when ``exc`` says the storage
    refused a write; None for anything else.

    ``writing`` says the caller knows it was writing (``path``, when given, is what it wrote):
    then a permission error or an SQLite open failure counts too, refined by looking at the
    file system (a read-only mount, a directory without write permission). Without it only
    failures no read can cause are recognised.
    """
    if isinstance(exc, OSError):
        reason = _ERRNO_REASONS.get(exc.errno or 0)
        if reason is None or (not writing and exc.errno not in _WRITE_ONLY_ERRNOS):
            return None
        if reason == "permission_denied" and path is not None and _read_only_mount(path):
            return "read_only"
        return reason
    code = getattr(exc, "sqlite_errorcode", None)
    if type(exc).__module__ != "sqlite3" or not isinstance(code, int):
        return None
    primary = code & 0xFF
    if primary == _SQLITE_FULL or code in _SQLITE_WRITE_IOERRS:
        return "disk_full"
    if primary in (_SQLITE_READONLY, _SQLITE_PERM) or (writing and primary == _SQLITE_CANTOPEN):
        if path is not None and _read_only_mount(path):
            return "read_only"
        if path is not None and not _writable(path):
            return "permission_denied"
        return "read_only" if primary == _SQLITE_READONLY else "permission_denied"
    return None


def _nearest_existing(path: str | os.PathLike[str]) -> str:
    current = os.path.abspath(os.fspath(path))
    while not os.path.exists(current) and os.path.dirname(current) != current:
        current = os.path.dirname(current)
    return current


def _read_only_mount(path: str | os.PathLike[str]) -> bool:
    try:
        return bool(os.statvfs(_nearest_existing(path)).f_flag & os.ST_RDONLY)
    except OSError:
        return False


def _writable(path: str | os.PathLike[str]) -> bool:
    """Whether this process may write ``path`` (or create it in its nearest existing directory)."""
    existing = _nearest_existing(path)
    if os.path.isfile(existing) and not os.access(existing, os.W_OK):
        return False
    directory = existing if os.path.isdir(existing) else os.path.dirname(existing)
    return os.access(directory, os.W_OK | os.X_OK)


_REASON_TEXT = {"disk_full": "the disk is full (or a size limit was reached)",
                "read_only": "the file system is read-only", "permission_denied": "permission denied"}


def store_write_failed(path: str | os.PathLike[str] | None, reason: str,
                       cause: BaseException | None = None) -> RagitError:
    """``STORE_WRITE_FAILED`` (category ``io``): nothing was published, earlier snapshots stay readable."""
    where = os.fsdecode(path) if path is not None else None
    message = f"cannot write {where or 'the store'}: {_REASON_TEXT[reason]}"
    if cause is not None:
        message += f" ({cause})"
    return RagitError("STORE_WRITE_FAILED", message, {"path": where, "reason": reason}, "ragit doctor")


def storage_write_error(exc: BaseException, path: str | os.PathLike[str] | None) -> RagitError | None:
    """The ``STORE_WRITE_FAILED`` of a failure while writing ``path``, or None when ``exc`` is
    not a storage refusal (a bug stays a bug)."""
    reason = write_failure_reason(exc, path, writing=True)
    if reason is None:
        return None
    return store_write_failed(getattr(exc, "filename", None) or path, reason, exc)
