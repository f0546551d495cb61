"""Properties of the FTS sanitiser and transcript search (memory §8.1, §8.2)."""

from __future__ import annotations

import tempfile
from pathlib import Path

from hypothesis import given, settings
from hypothesis import strategies as st

from ragit.sessions.sanitize import sanitize_fts_query
from ragit.sessions.store import SessionStore

_DIR = tempfile.TemporaryDirectory()
_STORE = SessionStore(Path(_DIR.name) / "sessions.db")
_STORE.mirror("s1", [
    {"role": "user", "content": 'say "hi" to file-not-found v3.34 (NEAR) a*b ^c +d 한국어 검색'},
    {"role": "assistant", "content": [{"type": "text", "text": "AND OR NOT: column:filter"}]},
])

queries = st.text(alphabet=st.characters(blacklist_categories=("Cs",)), max_size=40) | st.lists(
    st.sampled_from(['"', "-", ".", ":", "(", ")", "*", "^", "+", "AND", "OR", "NOT", "NEAR", "hi", "한국어", "v3.34"]),
    max_size=6,
).map(" ".join)


@given(queries)
def test_sanitised_tokens_are_barewords_or_quoted_phrases(query):
    for token in sanitize_fts_query(query).split(" "):
        if not token:
            continue
        if token.startswith('"'):
            inner = token[1:-1]
            assert token.endswith('"') and len(token) >= 2
            assert inner.replace('""', "").count('"') == 0
        else:
            assert all((c.isascii() and (c.isalnum() or c == "_")) or (not c.isascii() and c.isalpha()) for c in token)


@settings(max_examples=150, deadline=None)
@given(queries, st.booleans())
def test_search_never_raises(query, trigram):
    hits = _STORE.search_messages(query, prefer_trigram=trigram)
    assert isinstance(hits, list)
    assert isinstance(_STORE.search_context_artifacts(query), list)
