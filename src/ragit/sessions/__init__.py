"""Transcripts, their full-text search, context artifacts and dreaming (memory §7–9).

Imports are lazy so that ``import ragit.sessions`` stays cheap.
"""

from __future__ import annotations

from typing import Any

_EXPORTS = {
    "SessionStore": "store", "session_db_path": "store", "session_search": "search",
    "sanitize_fts_query": "sanitize", "import_transcript": "importers", "dream": "dreaming",
    "DreamScheduler": "dreaming",
}

__all__ = sorted(_EXPORTS)


def __getattr__(name: str) -> Any:
    if name in _EXPORTS:
        from importlib import import_module

        return getattr(import_module(f"{__name__}.{_EXPORTS[name]}"), name)
    raise AttributeError(name)
