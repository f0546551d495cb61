"""The tool-result offload store (context D.5): large results on disk, recalled by ref id.

Files are ``<offload_dir>/<session_id>/<ref_id>.json`` = ``{ref_id, result, offloaded_at}``,
secret-masked before they are written and published atomically, so a crash never leaves a
torn file and a recall never returns an unmasked secret. Expiry uses ragit's clock
(``RAGIT_NOW`` honoured), so TTL behaviour is testable without sleeping.
"""

from __future__ import annotations

import json
import re
import shutil
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..config import DEFAULTS
from .events import SESSION_ENDED, EventBus

# the tool an agent calls to load an offloaded (or masked) result back by its ref id
RECALL_TOOL_NAME: str = DEFAULTS["window"]["recall_tool_name"]

DEFAULT_THRESHOLD: int = DEFAULTS["window"]["tool_offload_threshold"]
DEFAULT_TTL_HOURS: float = DEFAULTS["window"]["tool_offload_ttl_hours"]

# Ids become file names: no separators, no leading dot, bounded length.
_SAFE_ID = re.compile(r"[A-Za-z0-9_][A-Za-z0-9_.:-]{0,199}")


def is_safe_id(value: str) -> bool:
    return bool(_SAFE_ID.fullmatch(value))


def check_session_id(session: str, v: Any, field: str) -> str:
    """``session`` when it can name an offload directory, else INPUT_INVALID on ``field``
    (``v``: a contract Validator)."""
    if not is_safe_id(session):
        raise v.fail(field, "invalid_format",
                     f"{field} must be letters, digits, _ . : - (at most 200, not starting with . : -)",
                     value=session)
    return session


@dataclass(frozen=True)
class RecallOutcome:
    """A recall: the stored result, or why not (``reason`` is a stable word for the CLI)."""

    result: Any = None
    reason: str | None = None  # invalid | disabled | not_found | expired | unreadable
    message: str | None = None

    @property
    def found(self) -> bool:
        return self.reason is None

    def as_tool_result(self) -> Any:
        """What the recall tool returns to a model: the result or ``{"error": ...}``."""
        return self.result if self.found else {"error": self.message}


class OffloadStore:
    """One session's offloaded results. ``threshold`` is in tokens (chars // 4), compared strictly."""

    def __init__(
        self,
        base_dir: Path,
        session_id: str,
        *,
        threshold: int = DEFAULT_THRESHOLD,
        ttl_hours: float = DEFAULT_TTL_HOURS,
    ) -> None:
        if not is_safe_id(session_id):
            from ..errors import input_invalid

            raise input_invalid("session_id", "invalid_format", f"session id {session_id!r} cannot name a directory")
        if threshold <= 0:
            from ..errors import input_invalid

            raise input_invalid(
                "window.tool_offload_threshold", "out_of_range", "an offload store needs a threshold > 0"
            )
        self.session_id = session_id
        self.threshold = threshold
        self.ttl_seconds = ttl_hours * 3600
        self.directory = Path(base_dir) / session_id
        from ..fsutil import ensure_ragit_gitignore, writing

        ensure_ragit_gitignore(self.directory)  # offloaded tool results stay out of `git add -A`
        with writing(self.directory):  # full, read-only or forbidden storage: STORE_WRITE_FAILED
            self.directory.mkdir(parents=True, exist_ok=True)

    def path_for(self, ref_id: str) -> Path:
        return self.directory / f"{ref_id}.json"

    def has(self, ref_id: str) -> bool:
        return is_safe_id(ref_id) and self.path_for(ref_id).is_file()

    def write(self, ref_id: str, result: Any) -> Any:
        """Mask ``result``, store it under ``ref_id`` atomically and return the masked value."""
        if not is_safe_id(ref_id):
            from ..errors import input_invalid

            raise input_invalid("call_id", "invalid_format", f"tool call id {ref_id!r} cannot name a file")
        from ..clock import now_iso
        from ..fsutil import atomic_write_text
        from ..security.masking import mask_value

        masked, _, _ = mask_value(result)
        record = {"ref_id": ref_id, "result": masked, "offloaded_at": now_iso()}
        atomic_write_text(self.path_for(ref_id), json.dumps(record, ensure_ascii=False, default=str))
        return masked

    def _read(self, path: Path) -> tuple[dict[str, Any] | None, bool]:
        """``(record, expired)``; ``record`` is ``None`` when the file is unreadable or malformed."""
        from ..clock import now, parse_iso

        try:
            record = json.loads(path.read_text(encoding="utf-8"))
            if not isinstance(record, dict) or "result" not in record:
                return None, False
            stamped = parse_iso(record["offloaded_at"])
        except (OSError, ValueError, KeyError, TypeError, AttributeError):
            return None, False
        return record, (now() - stamped).total_seconds() >= self.ttl_seconds

    def lookup(self, ref_id: str) -> RecallOutcome:
        if not ref_id:
            return RecallOutcome(reason="invalid", message="ref_id is required")
        path = self.path_for(ref_id)
        if not is_safe_id(ref_id) or not path.is_file():
            message = f"tool result {ref_id!r} not found (never offloaded, or cleaned up)"
            return RecallOutcome(reason="not_found", message=message)
        record, expired = self._read(path)
        if record is None:
            return RecallOutcome(reason="unreadable", message=f"tool result {ref_id!r} is unreadable")
        if expired:
            path.unlink(missing_ok=True)
            return RecallOutcome(reason="expired", message=f"tool result {ref_id!r} expired and was removed")
        return RecallOutcome(result=record["result"])

    def recall(self, ref_id: str) -> Any:
        return self.lookup(ref_id).as_tool_result()

    def cleanup_expired(self) -> int:
        """Remove expired and corrupt files (and the directory when it ends up empty)."""
        removed = 0
        if not self.directory.is_dir():
            return 0
        for path in sorted(self.directory.glob("*.json")):
            record, expired = self._read(path)
            if record is None or expired:
                path.unlink(missing_ok=True)
                removed += 1
        if not any(self.directory.iterdir()):
            self.directory.rmdir()
        return removed

    def cleanup_session(self) -> int:
        """Remove every offloaded result of the session and its directory."""
        if not self.directory.is_dir():
            return 0
        count = sum(1 for _ in self.directory.glob("*.json"))
        shutil.rmtree(self.directory, ignore_errors=True)
        return count

    def attach(self, bus: EventBus) -> None:
        """Clean this session up on ``session_ended`` (for this session id, or with none given)."""

        def on_session_ended(payload: dict[str, Any]) -> None:
            if payload.get("session_id") in (None, self.session_id):
                self.cleanup_session()

        bus.on(SESSION_ENDED, on_session_ended)


def open_offload_store(
    base_dir: Path,
    session_id: str,
    *,
    threshold: int = DEFAULT_THRESHOLD,
    ttl_hours: float = DEFAULT_TTL_HOURS,
) -> OffloadStore | None:
    """The session's store, or ``None`` when ``threshold`` is 0 (offloading disabled, D.5.i)."""
    if threshold <= 0:
        return None
    return OffloadStore(base_dir, session_id, threshold=threshold, ttl_hours=ttl_hours)


def recall(ref_id: str, store: OffloadStore | None) -> Any:
    """The ``recall_tool_result(ref_id)`` tool: the stored result or an error dict."""
    return lookup(ref_id, store).as_tool_result()


def lookup(ref_id: str, store: OffloadStore | None) -> RecallOutcome:
    if not ref_id:
        return RecallOutcome(reason="invalid", message="ref_id is required")
    if store is None:
        return RecallOutcome(reason="disabled", message="offloading not enabled")
    return store.lookup(ref_id)


def recall_offloaded(root: Path, config, session_id: str, ref_id: str) -> Any:
    """The offloaded result of ``ref_id`` in ``session_id`` (masked), or TOOL_RESULT_UNAVAILABLE.

    Shared by ``ragit window recall`` and the MCP ``tool_result_recall`` tool. Reads only: a
    missing session directory is ``not_found`` (an ``OffloadStore`` would create it).
    """
    from ..errors import RagitError
    from ..security.masking import mask_value

    threshold = config.get("window.tool_offload_threshold")
    base = Path(root) / config.get("window.offload_dir")
    if threshold <= 0:
        outcome = lookup(ref_id, None)
    elif not (base / session_id).is_dir():
        outcome = RecallOutcome(reason="not_found", message=f"no offloaded tool results for session {session_id!r}")
    else:
        store = OffloadStore(base, session_id, threshold=threshold, ttl_hours=config.get("window.tool_offload_ttl_hours"))
        outcome = store.lookup(ref_id)
    if not outcome.found:
        raise RagitError("TOOL_RESULT_UNAVAILABLE", outcome.message or outcome.reason,
                         {"refId": ref_id, "reason": outcome.reason}, "ragit window recall --help")
    return mask_value(outcome.result)[0]
