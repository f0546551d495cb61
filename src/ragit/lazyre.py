"""Regular expressions compiled on their first use.

``re.compile`` runs the parser and compiler in Python (~0.05-0.3 ms a pattern). A module that
compiles a dozen at import charges that to every process importing it, though most of them
only serve inputs a one-shot read never meets (secret candidates, ``--input`` payloads).
"""

from __future__ import annotations

import re
from typing import Any


class LazyPattern:
    """Stands in for ``re.compile(source, flags)``: any attribute (``match``, ``search``,
    ``sub``, ``pattern``...) is the compiled pattern's, compiled at the first such access and
    then kept on this object, so later calls cost what a compiled pattern's do."""

    def __init__(self, source: str, flags: int = 0) -> None:
        self._source = source
        self._flags = flags

    def __getattr__(self, name: str) -> Any:  # only for names not set on the object yet
        if name.startswith("_"):
            raise AttributeError(name)
        compiled = self.__dict__.get("_compiled")
        if compiled is None:
            compiled = self._compiled = re.compile(self._source, self._flags)
        value = getattr(compiled, name)
        setattr(self, name, value)
        return value
