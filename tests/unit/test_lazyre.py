"""ragit.lazyre: a LazyPattern behaves as the compiled pattern and compiles once, on first use."""

from __future__ import annotations

import re

from ragit.lazyre import LazyPattern


def test_lazy_pattern_answers_as_the_compiled_one() -> None:
    source, flags = r"(?P<word>[a-z]+)_(\d+)", re.IGNORECASE
    lazy, compiled = LazyPattern(source, flags), re.compile(source, flags)
    assert "_compiled" not in lazy.__dict__  # nothing compiled yet
    for text in ("abc_12", "ABC_3 x_9", "none", ""):
        assert bool(lazy.match(text)) == bool(compiled.match(text))
        assert lazy.findall(text) == compiled.findall(text)
        assert lazy.sub("-", text) == compiled.sub("-", text)
    assert (lazy.pattern, lazy.flags, lazy.groupindex) == (compiled.pattern, compiled.flags, compiled.groupindex)
    first = lazy.__dict__["_compiled"]
    lazy.search("x_1")
    assert lazy.__dict__["_compiled"] is first  # compiled once
