"""ragit.store.packed.RowTable: the snapshot rows a store packs, held as columns, read back as the
same tuples in the same order as the ``fetchall`` they replace (so packing gives the same bytes)."""

from __future__ import annotations

import sqlite3

from ragit.store.packed import RowTable, file_norms, pack_rows

_ROWS = [
    (1, 10, "a.md", "b1", "k", None, 0, 5),
    (2, 11, "a.md", "b1", "k", None, 1, 7),
    (3, 40, "c.md", "b2", "k", 2.5, 0, 3),
    (4, 10, "b.md", "b1", "k", None, 0, 5),  # the same blob (and chunk) at another path
    (5, 41, "c.md", "b2", "k", 2.5, 1, 9),
]


def _cursor(rows):
    conn = sqlite3.connect(":memory:")
    conn.execute("CREATE TABLE r(rowid_ INTEGER, slot INTEGER, path TEXT, blob TEXT, k TEXT, norm REAL, o INTEGER, t INTEGER)")
    conn.executemany("INSERT INTO r VALUES (?,?,?,?,?,?,?,?)", rows)
    return conn.execute("SELECT * FROM r ORDER BY rowid_")


def test_rows_read_back_as_fetched(monkeypatch) -> None:
    monkeypatch.setattr(RowTable, "_BATCH", 2)  # several batches
    table = RowTable.collect(_cursor(_ROWS))
    assert table.missing == 0
    assert list(table) == _ROWS and [table[i] for i in range(len(table))] == _ROWS and table[1:3] == _ROWS[1:3]
    assert len(table.doc_keys) == 3  # one per (path, blob, key, norm)


def test_packs_the_same_bytes_and_norms(monkeypatch) -> None:
    monkeypatch.setattr(RowTable, "_BATCH", 2)
    def norms(segments):
        return [float(sum(seg)) for seg in segments]

    remembered: list = []
    expected = pack_rows(_ROWS, lambda rows: file_norms(rows, norms, lambda c: remembered.append(c)))
    got_remembered: list = []
    table = RowTable.collect(_cursor(_ROWS))
    assert isinstance(table, RowTable)
    assert pack_rows(table, lambda rows: file_norms(rows, norms, lambda c: got_remembered.append(c))) == expected
    assert got_remembered == remembered == [[("b1", "k", 21.0)]]


def test_a_row_without_a_slot_is_counted(monkeypatch) -> None:
    monkeypatch.setattr(RowTable, "_BATCH", 2)
    rows = [*_ROWS[:2], (6, None, "d.md", "b3", "k", None, 0, 1)]
    table = RowTable.collect(_cursor(rows))
    assert table.missing == 1 and list(table) == rows


def test_one_batch_stays_the_fetched_list(monkeypatch) -> None:
    monkeypatch.setattr(RowTable, "_BATCH", 6)
    assert RowTable.collect(_cursor(_ROWS)) == _ROWS and RowTable.collect(_cursor([])) == []
