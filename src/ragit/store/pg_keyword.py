"""The PostgreSQL keyword index: the postings the SQLite FTS5 index holds, as plain rows.

SQLite keeps, per (path, chunk) row, the three fields of :func:`ragit.store.bm25.index_fields`
in an FTS5 table with the ``ascii`` tokenizer, and ragit.store.bm25 reads a term's postings back
as (row ids, Σ field weight × occurrences). Here the same fields are tokenized the way FTS5's
``ascii`` tokenizer does (ASCII letters and digits plus every non-ASCII character form tokens,
ASCII letters folded to lower case) and each (term, row) pair stores that same weighted count.
:func:`ragit.store.bm25.snapshot_scores` then does the arithmetic for both backends, with each
snapshot's own statistics, so the keyword scores are the same floats by construction (the counts
are small integers, exact in float64 on both sides).
"""

from __future__ import annotations

import re
from collections.abc import Iterator

from .bm25 import FIELD_WEIGHTS, CachingPostings, Postings, index_fields

_TOKEN = re.compile(r"[0-9A-Za-z\x80-\U0010ffff]+")
_ASCII_LOWER = str.maketrans("ABCDEFGHIJKLMNOPQRSTUVWXYZ", "abcdefghijklmnopqrstuvwxyz")


def ascii_tokens(text: str) -> list[str]:
    """Tokens of ``text`` as FTS5's ``ascii`` tokenizer produces them."""
    return [t.translate(_ASCII_LOWER) for t in _TOKEN.findall(text)]


def row_postings(text: str, title: str, path: str) -> tuple[dict[str, float], int]:
    """(term → weighted count, the row's length D) of one keyword row, as the FTS5 index holds it."""
    fields = index_fields(text, title, path)
    weights: dict[str, float] = {}
    for weight, field in zip(FIELD_WEIGHTS, fields[:3]):
        for token in ascii_tokens(field):
            weights[token] = weights.get(token, 0.0) + weight
    return weights, fields[3]


class PgPostings(CachingPostings):
    """term → (row ids ascending, weighted counts) read from ``keyword_postings``; the interface
    of :class:`ragit.store.bm25.PostingsReader` (the generation: ``store_meta.keyword_generation``,
    which a write that publishes new keyword rows changes)."""

    def read_generation(self) -> str:
        row = self._conn.execute("SELECT value FROM store_meta WHERE key = 'keyword_generation'").fetchone()
        return row[0] if row else ""

    def _fetch(self, term: str) -> Postings:
        return self._read("term = %s", (term,))

    def within(self, term: str, first: int, last: int) -> Postings:
        """Postings of ``term`` on rows ``first``..``last`` only (never cached)."""
        return self._read("term = %s AND row_id BETWEEN %s AND %s", (term, first, last))

    def _read(self, where: str, params: tuple) -> Postings:
        import numpy as np

        ids, tfs = self._conn.execute(
            "SELECT string_agg(row_id::text, ',' ORDER BY row_id), string_agg(tf::text, ',' ORDER BY row_id)"
            f" FROM keyword_postings WHERE {where}", params).fetchone()
        if not ids:
            return np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.float64)
        return (np.array(ids.split(","), dtype=np.int64), np.array(tfs.split(","), dtype=np.float64))


def postings_rows(rows: list[tuple[int, dict[str, float]]]) -> Iterator[tuple[str, int, float]]:
    """(term, row id, weighted count) for COPY into ``keyword_postings``."""
    for row_id, weights in rows:
        for term, tf in weights.items():
            yield term, row_id, tf
