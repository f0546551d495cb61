"""The paths of a snapshot's rows, by position, kept by a warm process.

A question that names no identifier re-ranks its pool by paths alone (ragit.retrieve.rerank), and a
small repository's pool is much the same rows question after question. Kept in an object array
indexed by snapshot position, the pool's paths are one gather instead of a dictionary look-up per
row (and no row object is touched: after the question's pass over the vector matrix, each such
touch is a cache miss).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:  # pragma: no cover
    import numpy as np

    from ..store.base import Store

# Snapshots up to this many rows keep their paths by position (8 bytes a row, plus the paths
# read); larger ones are the approximate path's, whose scores cover other positions.
MAX_ROWS = 200_000
# A snapshot's rows' keys are read whole at their first miss (a warm process's second question,
# which also builds the vector sketch), with the re-rank's facts about each file
# (rerank.remember_paths, when they fit its cache): one read instead of one per question for the
# pool rows it sees first (100k rows, 16k files: ~0.25 s once instead of ~150 new rows and ~70
# new files a question, ~1 ms). Snapshots up to this many rows also mask every path then
# (remask.remember_paths: ~20 ms for 1,000 files, once; ~1 s at 100k, where a question masks only
# its hits' paths, ~10 new ones).
MASK_ROWS = 10_000


class RowPaths:
    """Path and chunk id of each row of one snapshot (``rowids``, ascending), read from the store on
    first use."""

    def __init__(self, rowids: "np.ndarray") -> None:
        import numpy as np

        self.rowids = rowids
        self._paths = np.empty(len(rowids), dtype=object)
        self._keys = np.empty(len(rowids), dtype=object)  # (path, chunk id) of each row
        self._known = np.zeros(len(rowids), dtype=bool)
        self._whole = False  # every row's key is read (a warm snapshot's from its second question)

    def of(self, positions: "np.ndarray", store: "Store", sha: str) -> list[str]:
        """The paths of the rows at ``positions``; a row the store cannot give fails the query
        (a damaged store never answers with silently fewer hits)."""
        self._read(positions, store, sha)
        return self._paths[positions].tolist()

    def keys(self, positions: "np.ndarray", store: "Store", sha: str) -> list[tuple[str, str]]:
        """``(path, chunk id)`` of the rows at ``positions`` (``Store.row_keys``: the content
        order a re-rank pool settles its ties by), read as :meth:`of` reads."""
        self._read(positions, store, sha)
        return self._keys[positions].tolist()

    def _read(self, positions: "np.ndarray", store: "Store", sha: str) -> None:
        import numpy as np

        if self._whole:
            return
        known = self._known[positions]
        if known.all():
            return
        asked = positions[~known]
        missing = np.flatnonzero(~self._known)
        ids = self.rowids[missing].tolist()
        keys = store.row_keys(ids)
        have = [at for at, r in zip(missing.tolist(), ids) if r in keys]
        found = [keys[r] for r in ids if r in keys]
        self._paths[have] = [key[0] for key in found]
        keys_at = self._keys
        for at, key in zip(have, found):  # (a tuple each: no broadcast)
            keys_at[at] = key
        self._known[have] = True
        self._whole = len(have) == len(ids)  # (each missing row read: every row is known)
        if len(missing) > len(asked):  # the whole snapshot: what is computed per file, now too
            from . import remask, rerank

            files = set(self._paths[have].tolist())
            if len(files) <= rerank.PATH_CACHE:
                rerank.remember_paths(files)
            if len(self.rowids) <= MASK_ROWS:
                remask.remember_paths(files)
        if len(have) < len(ids):  # only the rows asked for must be there
            from .readiness import require_rows

            require_rows(sha, self.rowids[asked].tolist(), keys)
