"""The memory plane: working memory (wrap/recall/promote), knowledge artifacts, layered assembly.

Imports are lazy so that ``import ragit.memory`` stays cheap.
"""

from __future__ import annotations

from typing import Any

_EXPORTS = {
    # (``recall`` and ``promote`` are submodules of the same name: import their functions from them)
    "wrap": "working", "WrapInput": "working", "PromoteInput": "promote", "capture": "artifacts", "transition": "artifacts", "list_artifacts": "artifacts",
    "assemble": "layered", "ContextAssembler": "layered",
}

__all__ = sorted(_EXPORTS)


def __getattr__(name: str) -> Any:
    if name in _EXPORTS:
        from importlib import import_module

        return getattr(import_module(f"{__name__}.{_EXPORTS[name]}"), name)
    raise AttributeError(name)
