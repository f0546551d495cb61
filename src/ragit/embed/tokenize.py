"""Word tokenisation of knowledge §11.1: FTS query terms and the placeholder embedder.

A token is a maximal run of Unicode letters (``L*``) and numbers (``N*``) after lower-casing;
every other character separates tokens. ``[^\\W_]`` is exactly that class for ``str`` patterns
(``\\w`` is ``str.isalnum()`` plus ``_``), which a test checks over every code point, so one
C-level ``findall`` does the whole job.
"""

from __future__ import annotations

import re

_TOKEN = re.compile(r"[^\W_]+")


def tokenize(text: str) -> list[str]:
    """Lower-case ``text`` and return its letter/number runs, in order, duplicates kept."""
    return _TOKEN.findall(text.lower())
