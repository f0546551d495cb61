"""Plain records that cross the gitsnap boundary."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class TreeEntry:
    """One entry of ``git ls-tree -r -l`` at a commit."""

    mode: str  # "100644", "100755", "120000" (symlink), "160000" (submodule)
    kind: str  # "blob" or "commit" (submodule)
    oid: str  # object id, 40 lower-case hex
    size: int | None  # blob size in bytes; None for submodules
    path: str  # repo-relative POSIX path
    missing: bool = False  # ``ls-tree -l`` printed ``BAD``: the blob is not in this clone
