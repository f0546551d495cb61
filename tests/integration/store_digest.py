"""A SQLite store summed up table by table, for tests that compare two stores byte for byte."""

from __future__ import annotations

import hashlib
import sqlite3
from pathlib import Path

_TABLES = [
    ("blobs", "SELECT * FROM blobs ORDER BY blob_id, profile"),
    ("chunks", "SELECT rowid, * FROM chunks ORDER BY rowid"),
    ("fts_rows", "SELECT rowid, * FROM fts_rows ORDER BY rowid"),
    ("vocab", "SELECT term, doc, col, offset FROM chunks_vocab ORDER BY term, doc, col, offset"),
    ("vectors", "SELECT * FROM vectors ORDER BY chunk_id"),
    ("blob_norms", "SELECT * FROM blob_norms ORDER BY blob_id, chunker_key, embedder_id"),
    ("snapshot_rows", "SELECT * FROM snapshot_rows ORDER BY commit_sha"),
    ("snapshot_docs", "SELECT * FROM snapshot_docs ORDER BY commit_sha, path"),
    ("meta", "SELECT * FROM meta ORDER BY key"),
    ("snapshots", "SELECT commit_sha, params FROM snapshots ORDER BY commit_sha"),  # manifests: createdAt
]


def store_digest(root: Path, *, manifests: bool = False) -> dict[str, str]:
    """sha256 of every table (row ids included) and vector heap of ``root``'s store; with
    ``manifests`` also of each manifest file (equal only when written at the same RAGIT_NOW)."""
    db = sqlite3.connect(Path(root) / ".ragit" / "store" / "ragit.db")
    out = {name: hashlib.sha256(repr(db.execute(query).fetchall()).encode()).hexdigest() for name, query in _TABLES}
    db.close()
    for heap in sorted((Path(root) / ".ragit" / "store").glob("vectors-*.f32")):
        out[heap.name] = hashlib.sha256(heap.read_bytes()).hexdigest()
    if manifests:
        for manifest in sorted((Path(root) / ".ragit" / "manifest").rglob("*")):
            if manifest.is_file():
                out[f"manifest/{manifest.name}"] = hashlib.sha256(manifest.read_bytes()).hexdigest()
    return out
