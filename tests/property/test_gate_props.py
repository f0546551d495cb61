"""The gate finds cited lines by digest exactly where verify's text search finds them
(ragit.gate.check.locate_digest vs ragit.ingest.text.locate_block), and parses the stored handle
form of memory §10 the way the memory side writes it."""

from __future__ import annotations

from hypothesis import given, settings, strategies as st

from ragit.gate.check import Range, locate_digest, parse_stored
from ragit.ingest.text import locate_block, text_digest

LINES = st.lists(st.sampled_from(["a", "b", "c", "", "  d", "é"]), min_size=1, max_size=30)


@settings(max_examples=300, deadline=None)
@given(lines=LINES, cited=LINES, near=st.integers(min_value=1, max_value=30))
def test_digest_search_matches_text_search(lines, cited, near):
    cited = cited[:5]
    r = Range("p", "0" * 40, near, near + len(cited) - 1, "served", "", text_digest(cited), text_digest(cited[:1]))
    assert locate_digest(lines, r) == locate_block(lines, cited, near)


@given(path=st.text(st.characters(blacklist_categories=("Cs",), blacklist_characters="\n"), min_size=1, max_size=40),
       blob=st.text("0123456789abcdef", min_size=40, max_size=40),
       start=st.integers(min_value=1, max_value=10**6), length=st.integers(min_value=0, max_value=100))
def test_stored_handles_round_trip(path, blob, start, length):
    handle = f"{path}@{blob}:L{start}-L{start + length}"
    assert parse_stored(handle) == (path, blob, start, start + length)
    assert parse_stored(f"{path}@{blob[:12]}:L{start}-L{start + length}") is None
