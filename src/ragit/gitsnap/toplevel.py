"""The worktree containing a directory, found from the file system alone.

For the code that runs before anything heavy is imported (the ``ragit serve`` client, the
``ragit gate`` hook): it walks up to the nearest ``.git`` entry (a directory, or the file of a
linked worktree), where git itself would stop, without starting git. Built-in modules only.
"""

from __future__ import annotations

import os


def worktree_root(start: str) -> str | None:
    """The nearest directory at or above ``start`` holding ``.git`` (None when there is none)."""
    here = os.path.abspath(start)
    while True:
        if os.path.lexists(os.path.join(here, ".git")):
            return here
        parent = os.path.dirname(here)
        if parent == here:
            return None
        here = parent
