"""Managed Git hooks that index new commits in the background (knowledge §14)."""

from __future__ import annotations

from .install import (
    HOOK_NAMES,
    hook_state,
    hook_states,
    hooks_status,
    hooks_text,
    install_hooks,
    is_managed,
    uninstall_hooks,
)
from .script import CHAINED_SUFFIX, FAILURE_LINE, MANAGED_MARKER, hook_script

__all__ = [
    "CHAINED_SUFFIX",
    "FAILURE_LINE",
    "HOOK_NAMES",
    "MANAGED_MARKER",
    "hook_script",
    "hook_state",
    "hook_states",
    "hooks_status",
    "hooks_text",
    "install_hooks",
    "is_managed",
    "uninstall_hooks",
]
