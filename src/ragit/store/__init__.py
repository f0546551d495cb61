"""Storage backends behind one protocol; ``store.backend`` (alias ``storage.backend``) picks the
implementation: ``sqlite`` (one file per clone, the default) or ``postgres`` (one database shared
by many repositories, clones and worktrees; DSN from ``RAGIT_DATABASE_URL`` else ``store.dsn``)."""

from __future__ import annotations

import subprocess
from pathlib import Path

from .base import SCHEMA_VERSION, Store

BACKENDS = ("sqlite", "postgres")


def store_dir(root: Path, config) -> Path:
    return Path(root) / config["storage"]["store_dir"]


def backend_of(config) -> str:
    """The configured backend: ``store.backend``, else the older ``storage.backend``."""
    from ..config import store_backend

    return store_backend(config)


_REPO_IDS: dict[str, str] = {}


def repository_id(root: Path, config) -> str:
    """The key of this repository in a shared database: ``store.repository_id`` when set, else
    ``git:<root commit>`` (the oldest root of HEAD's history, the same in every clone, fork and
    worktree), else ``path:<sha1 of the absolute root>`` for a repository without commits."""
    configured = str((config.data.get("store") or {}).get("repository_id", "") or "").strip()
    if configured:
        return configured
    key = str(root)
    hit = _REPO_IDS.get(key)
    if hit is not None:
        return hit
    try:
        out = subprocess.run(["git", "-C", str(root), "rev-list", "--max-parents=0", "HEAD"], capture_output=True,
                             text=True, timeout=30)
        roots = sorted(out.stdout.split()) if out.returncode == 0 else []
    except (OSError, subprocess.SubprocessError):
        roots = []
    if roots:
        value = "git:" + roots[0]
        _REPO_IDS[key] = value  # a root commit never changes; "no commits yet" may
        return value
    import hashlib

    return "path:" + hashlib.sha1(str(Path(root).resolve()).encode("utf-8")).hexdigest()


def _postgres(root: Path, config):
    from .pg_connect import configured_dsn

    return configured_dsn(config), repository_id(root, config)


def open_store_read(root: Path, config) -> Store:
    """Open the configured backend for reading (raises StoreMissing / StoreUnreadable, and
    ``STORE_UNAVAILABLE`` when a database cannot be reached)."""
    if backend_of(config) == "postgres":
        from .postgres import PostgresStore

        return PostgresStore.open_read(*_postgres(root, config))
    from .sqlite import SqliteStore

    return SqliteStore.open_read(store_dir(root, config))


def try_open_store(root: Path, config) -> Store | None:
    """The store opened read-only, or None when it is missing, unreadable or of another schema
    version, i.e. holds nothing this version can use (the caller decides whether that is an
    error)."""
    try:
        store = open_store_read(root, config)
    except Exception:
        return None
    try:
        if store.schema_version() == SCHEMA_VERSION:
            return store
    except Exception:
        pass
    store.close()
    return None


def open_store_write(root: Path, config) -> Store:
    if backend_of(config) == "postgres":
        from .postgres import PostgresStore

        return PostgresStore.open_write(*_postgres(root, config))
    from .sqlite import SqliteStore

    return SqliteStore.open_write(store_dir(root, config))


def store_exists(root: Path, config) -> bool:
    """Whether there is a store to open: the SQLite file, or (postgres) a database that holds
    ragit's schema. A server that does not answer counts as existing: opening it then reports
    ``STORE_UNAVAILABLE`` (this check never raises)."""
    if backend_of(config) == "postgres":
        from ..errors import RagitError
        from .pg_connect import configured_dsn, connect
        from .pg_schema import applied_versions

        dsn = configured_dsn(config)
        if not dsn:
            return False
        try:
            conn = connect(dsn)
        except RagitError:
            return True
        try:
            return bool(applied_versions(conn))
        except Exception:  # noqa: BLE001 - a fault after connecting: let the open report it
            return True
        finally:
            conn.close()
    from .sqlite import DB_NAME

    return (store_dir(root, config) / DB_NAME).is_file()


def store_holds_manifest(root: Path, config, commit_sha: str, manifest_sha256: str) -> bool:
    """Open the configured store, ask :func:`holds_manifest`, close it; False without a usable
    store (missing, unreadable, another schema version)."""
    store = try_open_store(root, config)
    if store is None:
        return False
    try:
        return holds_manifest(store, commit_sha, manifest_sha256)
    finally:
        store.close()


def holds_manifest(store: Store, commit_sha: str, manifest_sha256: str) -> bool:
    """Does ``store`` hold the snapshot published from exactly this manifest file? A shared
    store keeps every clone's manifest of a commit (``holds_manifest``); SQLite keeps one."""
    check = getattr(store, "holds_manifest", None)
    if check is not None:
        return bool(check(commit_sha, manifest_sha256))
    return store.snapshot_hash(commit_sha) == manifest_sha256


__all__ = ["BACKENDS", "SCHEMA_VERSION", "Store", "backend_of", "holds_manifest", "open_store_read",
           "open_store_write", "repository_id", "store_dir", "store_exists", "store_holds_manifest", "try_open_store"]
