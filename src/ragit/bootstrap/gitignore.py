"""The `.gitignore` lines init owns (knowledge §2.1): derived and private `.ragit/` paths.

Appending only what is missing, and never touching a complete file, keeps the user's file
(and its mtime) intact across repeated runs.
"""

from __future__ import annotations

IGNORED_PATHS = (".ragit/store/", ".ragit/cache/", ".ragit/sessions/")


def _normalized(line: str) -> str:
    """`/.ragit/store` and `.ragit/store/` name the same directory."""
    entry = line.strip().lstrip("/")
    return entry if entry.endswith("/") else entry + "/"


def missing_entries(text: str) -> list[str]:
    lines = [line for line in text.splitlines() if line.strip()]
    present = {_normalized(line) for line in lines if not line.lstrip().startswith(("#", "!"))}
    return [entry for entry in IGNORED_PATHS if entry not in present]


def updated_gitignore(text: str | None) -> str | None:
    """The new file content, or None when every entry is already there.

    No blank line is inserted before the appended block; a newline is added first only when
    the existing content lacks a trailing one.
    """
    current = text or ""
    missing = missing_entries(current)
    if not missing:
        return None
    if current and not current.endswith("\n"):
        current += "\n"
    return current + "".join(f"{entry}\n" for entry in missing)
