"""A read store that a warm process keeps open between reads.

Opening the store (connect, PRAGMAs, schema check) costs about a quarter of a warm query, so a
long-lived ``Repo`` (the MCP server, ``ragit serve``, an API user) keeps one read connection.
It stays correct without any notification: in WAL mode every statement of an autocommit
connection sees the latest committed state, and the only change a kept connection cannot see,
the file replaced by a rebuild or a schema change, gives the database file a new inode, which
:meth:`HeldStore.get` checks with one ``stat`` per read.

A process's first read does not keep the store (its caller closes it as before), so a one-shot
CLI command leaves no connection open and its WAL side files are removed on close.
"""

from __future__ import annotations

import os
from pathlib import Path

from . import backend_of, store_dir, try_open_store
from .base import Store


class HeldStore:
    """The read store of one repository, opened once and kept from the second read on."""

    def __init__(self) -> None:
        self._store: Store | None = None
        self._ident: tuple[str, int, int] | None = None
        self._reads = 0
        self._paths: dict[tuple, str] = {}  # (root, storage.store_dir) → the database file

    def get(self, root: Path, config) -> tuple[Store | None, bool]:
        """``(store, owned)``: the store or None (missing, unreadable, other schema), and whether
        the caller must close it (True on a process's first read, False once it is held)."""
        self._reads += 1
        if backend_of(config) == "postgres":  # a server: nothing on disk to stat, the connection is kept
            return self._keep(("postgres", str(root), 0), root, config)
        key = (root, config["storage"]["store_dir"])
        path = self._paths.get(key)
        if path is None:
            from .sqlite import DB_NAME

            path = self._paths[key] = str(store_dir(root, config) / DB_NAME)
        try:
            stat = os.stat(path)
        except OSError:
            self.close()
            return None, True
        return self._keep((path, stat.st_dev, stat.st_ino), root, config)

    def _keep(self, ident: tuple[str, int, int], root: Path, config) -> tuple[Store | None, bool]:
        if self._store is not None and self._ident == ident:
            return self._store, False
        self.close()
        store = try_open_store(root, config)
        if store is None or self._reads < 2:
            return store, True
        self._store, self._ident = store, ident
        keep_warm = getattr(store, "keep_warm", None)
        if keep_warm is not None:
            keep_warm()
        return store, False

    def close(self) -> None:
        """Close the held store (a failed read calls this too: the next read reopens it)."""
        if self._store is not None:
            store, self._store, self._ident = self._store, None, None
            try:
                store.close()
            except Exception:
                pass
