"""Storage backends behind one protocol; ``storage.backend`` picks the implementation."""

from __future__ import annotations

from pathlib import Path

from .base import SCHEMA_VERSION, Store


def store_dir(root: Path, config) -> Path:
    return Path(root) / config["storage"]["store_dir"]


def open_store_read(root: Path, config) -> Store:
    """Open the configured backend for reading (raises StoreMissing / StoreUnreadable)."""
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
    from .sqlite import SqliteStore

    return SqliteStore.open_write(store_dir(root, config))


def store_exists(root: Path, config) -> bool:
    from .sqlite import DB_NAME

    return (store_dir(root, config) / DB_NAME).is_file()


__all__ = ["SCHEMA_VERSION", "Store", "open_store_read", "open_store_write", "store_dir", "store_exists",
           "try_open_store"]
