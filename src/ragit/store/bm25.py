"""An in-memory mirror of SQLite FTS5's ``bm25()`` for long-lived processes.

``bm25()`` is evaluated row by row inside SQLite; on a 100,000-chunk store a common word costs
tens of milliseconds per query. A warm process (the Python API, the MCP server) instead keeps
each query term's postings (row ids and per-column counts, read once from ``fts5vocab``) and the
rows' token counts, and evaluates the same formula in numpy: the same inputs, the same operations
in the same order, so the scores are bit-identical to FTS5's (a test compares them). The mirror
is tied to the index's generation (row and token totals); any change to the index drops it.

The formula (fts5_aux.c, ``fts5Bm25Function``), with k1 = 1.2, b = 0.75 and column weights w:
``idf_i = log((N − n_i + 0.5) / (n_i + 0.5))`` (1e-6 when ≤ 0), ``f_i = Σ w_col · hits_col``,
``score = Σ_i idf_i · f_i (k1 + 1) / (f_i + k1 (1 − b + b · D / avgdl))`` summed over the query's
phrases in order, where D is the row's token count and avgdl the index's tokens per row.
"""

from __future__ import annotations

import math
import sqlite3
from pathlib import Path
from typing import Sequence

K1 = 1.2
B = 0.75
MAX_CACHED_TERMS = 20_000  # postings kept per mirror (oldest dropped first)


def _varints(blob: bytes) -> list[int]:
    """SQLite varints (FTS5's encoding of the averages record and per-row column sizes)."""
    out = []
    i = 0
    n = len(blob)
    while i < n:
        value = 0
        for k in range(9):
            byte = blob[i]
            i += 1
            if k == 8:
                value = (value << 8) | byte
                break
            value = (value << 7) | (byte & 0x7F)
            if not byte & 0x80:
                break
        out.append(value)
    return out


class Bm25Mirror:
    """``bm25()`` of one FTS5 table, evaluated in numpy from cached postings."""

    def __init__(self, db_path: Path, table: str, columns: Sequence[str], weights: Sequence[float]):
        self.table = table
        self.weights = dict(zip(columns, weights))
        # the column weight of an occurrence, computed by SQLite while it walks the postings
        self._weight_sql = "CASE col " + " ".join(
            f"WHEN '{c}' THEN {float(w)!r}" for c, w in self.weights.items()) + " ELSE 1.0 END"
        conn = sqlite3.connect(":memory:", check_same_thread=False)
        conn.execute("ATTACH ? AS s", (f"file:{db_path}?mode=rw",))
        conn.execute(f"CREATE VIRTUAL TABLE temp.v_inst USING fts5vocab(s, {table}, instance)")
        conn.execute(f"CREATE VIRTUAL TABLE temp.v_row USING fts5vocab(s, {table}, row)")
        conn.execute("PRAGMA query_only = 1")
        self._conn = conn
        self.generation = self.read_generation()
        self._postings: dict[str, tuple] = {}
        self._doc_tokens = None

    def read_generation(self) -> bytes:
        """The averages record: changes whenever a row is added to (or removed from) the index."""
        row = self._conn.execute(f"SELECT block FROM s.{self.table}_data WHERE id = 1").fetchone()
        return bytes(row[0]) if row else b""

    def close(self) -> None:
        self._conn.close()

    def _totals(self) -> tuple[int, int]:
        values = _varints(self.generation)
        return (values[0], sum(values[1:])) if values else (0, 0)

    def _tokens(self):
        """Token count per row id (all columns), decoded once from the docsize table."""
        import numpy as np

        if self._doc_tokens is None:
            rows = self._conn.execute(f"SELECT id, sz FROM s.{self.table}_docsize").fetchall()
            top = max((r[0] for r in rows), default=0)
            tokens = np.zeros(top + 1, dtype=np.float64)
            for rowid, blob in rows:
                if rowid >= 0:
                    tokens[rowid] = sum(_varints(bytes(blob)))
            self._doc_tokens = tokens
        return self._doc_tokens

    def _term(self, term: str):
        """(row ids, weighted hit counts, rows containing the term) for one term."""
        import numpy as np

        hit = self._postings.get(term)
        if hit is None:
            # one (row, column weight) pair per occurrence, in row order (fts5vocab walks the
            # doclist); summing the weights per row gives Σ w_col · hits_col exactly (small
            # integers and weights are exact in float64)
            rows = self._conn.execute(f"SELECT doc, {self._weight_sql} FROM temp.v_inst WHERE term = ?",
                                      (term,)).fetchall()
            if rows:
                pairs = np.array(rows, dtype=np.float64)
                if np.any(pairs[1:, 0] < pairs[:-1, 0]):  # not expected; cheap insurance
                    pairs = pairs[np.argsort(pairs[:, 0], kind="stable")]
                docs = pairs[:, 0].astype(np.int64)
                starts = np.flatnonzero(np.concatenate(([True], docs[1:] != docs[:-1])))
                ids, values = docs[starts], np.add.reduceat(pairs[:, 1], starts)
            else:
                ids, values = np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.float64)
            n_hit = self._conn.execute("SELECT doc FROM temp.v_row WHERE term = ?", (term,)).fetchone()
            hit = (ids, values, n_hit[0] if n_hit else 0)
            if len(self._postings) >= MAX_CACHED_TERMS:
                self._postings.pop(next(iter(self._postings)))
            self._postings[term] = hit
        return hit

    def scores(self, terms: Sequence[str]):
        """(row ids, −bm25) of every row matching any term — what ``keyword_scores`` returns."""
        import numpy as np

        postings = [self._term(t) for t in terms]
        matched = [p for p in postings if len(p[0])]
        if not matched:
            return np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.float64)
        rowids = np.unique(np.concatenate([p[0] for p in matched]))
        n_row, n_token = self._totals()
        avgdl = float(n_token) / float(n_row)
        tokens = self._tokens()
        doc_len = tokens[rowids] if rowids.max() < len(tokens) else np.array(
            [tokens[r] if r < len(tokens) else 0.0 for r in rowids])
        norm = K1 * (1 - B + B * doc_len / avgdl)
        score = np.zeros(len(rowids), dtype=np.float64)
        for ids, freq, n_hit in postings:
            if not len(ids):
                continue  # a phrase absent from every row adds 0.0 to every score
            idf = math.log((n_row - n_hit + 0.5) / (n_hit + 0.5))
            if idf <= 0.0:
                idf = 1e-6
            f = np.zeros(len(rowids), dtype=np.float64)
            f[np.searchsorted(rowids, ids)] = freq
            score = score + idf * ((f * (K1 + 1.0)) / (f + norm))
        return rowids, score
