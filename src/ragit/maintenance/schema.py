"""``ragit migrate`` with no sub-command: the store's versioned schema migrations (knowledge §18).

PostgreSQL: the migrations of ragit.store.pg_schema, each applied once in its own transaction
and recorded in ``ragit_migrations``. SQLite: the store is derived data and its layout has one
version at a time (``SCHEMA_VERSION``, recorded in ``meta.schema_version``); the one migration is
"create the store at this version", and a store of another version is replaced (its rows are
restored by ``ragit migrate rebuild``), exactly what an ingest would do. ``data`` is
``{backend, current, applied, pending}``: the version after this run, the versions it applied and
the ones still pending (with ``--dry-run``: the ones it would apply).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any


def migrate_schema(root: Path, config, *, dry_run: bool) -> tuple[dict[str, Any], list[str]]:
    """``(data, warnings)`` of one run."""
    from ..store import backend_of

    if backend_of(config) == "postgres":
        return _postgres(config, dry_run), []
    return _sqlite(root, config, dry_run)


def _postgres(config, dry_run: bool) -> dict[str, Any]:
    from ..store import pg_schema
    from ..store.pg_connect import configured_dsn, connect, driver_errors, unavailable

    dsn = configured_dsn(config)
    conn = connect(dsn)
    try:
        try:
            done = pg_schema.applied_versions(conn)
            todo = [m.version for m in pg_schema.pending(conn)]
            applied = [] if dry_run else pg_schema.apply_pending(conn)
        except driver_errors() as exc:
            raise unavailable(dsn, "connection_lost", f"the PostgreSQL connection failed: {exc}") from None
        except Exception as exc:  # noqa: BLE001 - a migration the server refused (e.g. no pgvector)
            import psycopg

            if isinstance(exc, psycopg.Error):
                raise unavailable(dsn, "migration_failed", f"applying the schema failed: {exc}") from None
            raise
    finally:
        conn.close()
    versions = done + applied
    return {"backend": "postgres", "current": max(versions) if versions else None, "applied": applied,
            "pending": todo if dry_run else []}


def _sqlite(root: Path, config, dry_run: bool) -> tuple[dict[str, Any], list[str]]:
    from ..store import SCHEMA_VERSION, store_dir
    from ..store.sqlite import DB_NAME, SqliteStore, StoreUnreadable

    directory = store_dir(root, config)
    current: int | None = None
    if (directory / DB_NAME).is_file():
        try:
            store = SqliteStore.open_read(directory)
            try:
                current = store.schema_version()
            finally:
                store.close()
        except StoreUnreadable:
            current = None
    todo = [] if current == SCHEMA_VERSION else [SCHEMA_VERSION]
    if dry_run or not todo:
        return {"backend": "sqlite", "current": current, "applied": [], "pending": todo}, []
    from ..store.lock import write_lock

    warnings: list[str] = []
    with write_lock(directory):
        store = SqliteStore.open_write(directory)
        try:
            if store.replaced:
                warnings.append(f"the store was replaced ({store.replaced}); ragit migrate rebuild restores its rows")
        finally:
            store.close()
    return {"backend": "sqlite", "current": SCHEMA_VERSION, "applied": todo, "pending": []}, warnings


def migrate_text(data: dict[str, Any]) -> str:
    def versions(values: list[int]) -> str:
        return ", ".join(str(v) for v in values) or "none"

    lines = ["# ragit migrate", f"- backend: {data['backend']}", f"- current: {data['current'] or 'none'}",
             f"- applied: {versions(data['applied'])}", f"- pending: {versions(data['pending'])}"]
    return "\n".join(lines) + "\n"
