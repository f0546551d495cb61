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
        self._column_weights = [float(w) for w in weights]
        # each occurrence as one integer, doc · ncols + column index, so SQLite hands over a whole
        # doclist as one string instead of a Python row per occurrence
        self._ncols = len(columns)
        self._code_sql = f"doc * {self._ncols} + CASE col " + " ".join(
            f"WHEN '{c}' THEN {i}" for i, c in enumerate(columns)) + " END"
        conn = sqlite3.connect(":memory:", check_same_thread=False)
        conn.execute("ATTACH ? AS s", (f"file:{db_path}?mode=rw",))
        conn.execute(f"CREATE VIRTUAL TABLE temp.v_inst USING fts5vocab(s, {table}, instance)")
        conn.execute("PRAGMA query_only = 1")
        self._conn = conn
        self.generation = self.read_generation()
        self._postings: dict[str, tuple] = {}
        self._doc_tokens = None
        self._norm = None

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

    def _row_norms(self):
        """``k1 · (1 − b + b · D / avgdl)`` per row id, computed once (the mirror is per generation)."""
        if self._norm is None:
            n_row, n_token = self._totals()
            avgdl = float(n_token) / float(n_row) if n_row else 1.0
            self._norm = K1 * (1 - B + B * self._tokens() / avgdl)
        return self._norm

    def _term(self, term: str):
        """(row ids, weighted hit counts) of one term; the rows containing it are ``len(ids)``."""
        import numpy as np

        hit = self._postings.get(term)
        if hit is None:
            # the occurrences in doclist (row) order; Σ w_col · hits_col per row is exact in
            # float64 (small integers times the column weights)
            text = self._conn.execute(f"SELECT group_concat({self._code_sql}) FROM temp.v_inst WHERE term = ?",
                                      (term,)).fetchone()[0]
            if text:
                codes = np.array(text.split(","), dtype=np.int64)
                docs = codes // self._ncols
                weights = np.asarray(self._column_weights, dtype=np.float64)[codes % self._ncols]
                if np.any(docs[1:] < docs[:-1]):  # not expected; cheap insurance
                    order = np.argsort(docs, kind="stable")
                    docs, weights = docs[order], weights[order]
                starts = np.flatnonzero(np.concatenate(([True], docs[1:] != docs[:-1])))
                hit = (docs[starts], np.add.reduceat(weights, starts))
            else:
                hit = (np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.float64))
            if len(self._postings) >= MAX_CACHED_TERMS:
                self._postings.pop(next(iter(self._postings)))
            self._postings[term] = hit
        return hit

    def _dense(self, terms: Sequence[str]):
        """(score per row id, matched per row id): each term's contribution added in query order,
        as FTS5 does (a term absent from a row adds exactly 0.0 there, so skipping it is exact)."""
        import numpy as np

        postings = [self._term(t) for t in terms]
        norm = self._row_norms()
        top = max([len(norm)] + [int(ids[-1]) + 1 for ids, _ in postings if len(ids)])
        if top > len(norm):  # rows newer than the docsize read (not expected within a generation)
            norm = np.concatenate([norm, np.full(top - len(norm), K1 * (1 - B))])
        score = np.zeros(top, dtype=np.float64)
        matched = np.zeros(top, dtype=bool)
        n_row = self._totals()[0]
        for ids, freq in postings:
            if not len(ids):
                continue
            n_hit = len(ids)
            idf = math.log((n_row - n_hit + 0.5) / (n_hit + 0.5))
            if idf <= 0.0:
                idf = 1e-6
            score[ids] += idf * ((freq * (K1 + 1.0)) / (freq + norm[ids]))
            matched[ids] = True
        return score, matched

    def scores(self, terms: Sequence[str]):
        """(row ids, −bm25) of every row matching any term — what ``keyword_scores`` returns."""
        import numpy as np

        score, matched = self._dense(terms)
        rowids = np.flatnonzero(matched).astype(np.int64)
        return rowids, score[rowids]

    def scores_at(self, terms: Sequence[str], rowids):
        """−bm25 of each of ``rowids`` (0.0 where it matches no term): a snapshot's keyword scores
        without materialising the other snapshots' matches."""
        import numpy as np

        score, _ = self._dense(terms)
        out = np.zeros(len(rowids), dtype=np.float64)
        inside = rowids < len(score)
        out[inside] = score[rowids[inside]]
        return out
