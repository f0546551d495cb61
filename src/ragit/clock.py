"""The one clock: ISO-8601 UTC with milliseconds, overridable by ``RAGIT_NOW`` for tests."""

from __future__ import annotations

import os
from datetime import datetime, timezone


def parse_iso(value: str) -> datetime:
    """Parse an ISO-8601 timestamp (``Z`` or offset); naive values are taken as UTC."""
    text = value.strip()
    if text.endswith("Z") or text.endswith("z"):
        text = text[:-1] + "+00:00"
    dt = datetime.fromisoformat(text)
    if dt.tzinfo is None:
        dt = dt.replace(tzinfo=timezone.utc)
    return dt.astimezone(timezone.utc)


def now() -> datetime:
    """Current UTC time, or ``RAGIT_NOW`` when set."""
    override = os.environ.get("RAGIT_NOW")
    if override:
        return parse_iso(override)
    return datetime.now(timezone.utc)


def format_iso(dt: datetime) -> str:
    """``2026-03-08T10:00:00.000Z``."""
    dt = dt.astimezone(timezone.utc)
    return dt.strftime("%Y-%m-%dT%H:%M:%S.") + f"{dt.microsecond // 1000:03d}Z"


def now_iso() -> str:
    return format_iso(now())
