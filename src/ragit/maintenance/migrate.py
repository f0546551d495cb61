"""``migrate from-json-store | from-sqlitevss``: adopt the document set of a reference-CLI store
(knowledge §18).

Only the *paths* are taken from the legacy store: their content is re-read from HEAD's blobs,
masked, chunked and embedded like any ingest (legacy text and vectors are never reused), and the
HEAD manifest is published for exactly those paths that are candidates at HEAD.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from ..errors import input_invalid

JSON_STORE = ".ragit/store/index.json"
SQLITE_VSS_EXPORTS = (".ragit/sqlite-vss/export.json", ".ragit/sqlite-vss/records.json",
                      ".ragit/sqlite_vss/export.json")
_PATH_KEYS = ("path", "sourcePath", "source_path", "filePath", "file")


def legacy_source(root: Path, kind: str) -> Path:
    """The legacy file of ``kind`` (``json-store`` or ``sqlitevss``), or INPUT_INVALID file_not_found."""
    command = f"migrate from-{kind}"
    candidates = (JSON_STORE,) if kind == "json-store" else SQLITE_VSS_EXPORTS
    for rel in candidates:
        if (Path(root) / rel).is_file():
            return Path(root) / rel
    raise input_invalid("legacy_store", "file_not_found", f"no legacy store found ({', '.join(candidates)})",
                        command=command, value=list(candidates))


def _record_path(record: Any) -> str | None:
    if not isinstance(record, dict):
        return None
    for key in _PATH_KEYS:
        if isinstance(record.get(key), str) and record[key].strip():
            return record[key].strip()
    meta = record.get("metadata")
    return _record_path(meta) if isinstance(meta, dict) else None


def legacy_paths(path: Path, command: str) -> list[str]:
    """Repository paths named by a legacy store: its documents (json store) or records (export)."""
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise input_invalid("legacy_store", "invalid_json", f"{path.name} is not readable JSON: {exc}",
                            command=command) from None
    if isinstance(data, dict) and isinstance(data.get("documents"), dict):
        records: list[Any] = list(data["documents"].values())
    elif isinstance(data, dict) and isinstance(data.get("records"), list):
        records = data["records"]
    elif isinstance(data, list):
        records = data
    else:
        raise input_invalid("legacy_store", "invalid_format", f"{path.name} holds no documents or records",
                            command=command)
    out = set()
    for p in (_record_path(r) for r in records):
        if p:
            p = p.replace("\\", "/")
            while p.startswith("./"):
                p = p[2:]
            out.add(p)
    return sorted(out)


def migrate_from(root: Path, git, config, kind: str, *, dry_run: bool) -> dict[str, Any]:
    """Publish the HEAD snapshot for the legacy store's documents; raw JSON of knowledge §18."""
    from ..ingest.pipeline import IngestRequest, run_ingest

    command = f"migrate from-{kind}"
    paths = legacy_paths(legacy_source(root, kind), command)
    result = run_ingest(root, git, config, IngestRequest(mode="full", dry_run=dry_run, only=frozenset(paths)))
    admitted = set(result.planned_files) - {s["path"] for s in result.skipped_files}
    data: dict[str, Any] = {"mode": "dry-run" if dry_run else "apply", "docs": result.processed,
                            "chunks": result.chunks}
    if not dry_run:
        data["snapshotSha"] = result.commit_sha
    data["missing"] = [p for p in paths if p not in admitted]
    return data
