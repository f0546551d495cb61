"""Store and embedder checks that run after selection and before the question is embedded
(knowledge §5.5): a read either gets a store that holds this exact manifest, or a typed error."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING
from weakref import WeakKeyDictionary

from ..errors import RagitError
from ..store import SCHEMA_VERSION, holds_manifest, open_store_read

if TYPE_CHECKING:  # pragma: no cover
    from ..ingest.manifest import LoadedManifest
    from ..store.base import Store


def store_unavailable(sha: str, reason: str, message: str) -> RagitError:
    recovery = f"ragit migrate rebuild --at {sha}" if reason == "snapshot_not_in_store" else "ragit ingest --all"
    return RagitError("SNAPSHOT_STORE_UNAVAILABLE", message, {"resolvedSha": sha, "reason": reason}, recovery)


def require_rows(sha: str, ids: list[int], found: "dict") -> None:
    """Fail the read when the store gave no row for some of ``ids`` (keys of ``found``): a
    damaged store never answers with silently fewer hits."""
    if not all(map(found.__contains__, ids)):
        lost = sum(1 for r in ids if r not in found)
        raise store_unavailable(sha, "store_unreadable",
                                f"the store cannot serve snapshot {sha}: {lost} of its chunks are missing")


def open_checked_store(root: Path, config, loaded: "LoadedManifest", embedder_id: str,
                       store: "Store | None" = None) -> "Store":
    """Open the store read-only (or take ``store``) and verify schema, embedder and that it
    holds this manifest; closes the store when a check fails."""
    return checked_store(root, config, loaded, embedder_id, store)[0]


def checked_store(root: Path, config, loaded: "LoadedManifest", embedder_id: str,
                  store: "Store | None" = None) -> "tuple[Store, int | None]":
    """:func:`open_checked_store`, and the data version the checks read (a kept read store's;
    else None): the warm postings reader needs no currency read of its own while it holds
    (ragit.retrieve.search.VectorCache.postings)."""
    sha = loaded.manifest.commit_sha
    if store is None:
        from ..store.sqlite import StoreMissing, StoreUnreadable

        try:
            store = open_store_read(root, config)
        except StoreMissing:
            raise store_unavailable(sha, "store_missing", "the store does not exist") from None
        except StoreUnreadable as exc:
            raise store_unavailable(sha, "store_unreadable", f"the store cannot be read: {exc}") from None
    # a read store that no connection wrote to since it passed these checks passes again (its
    # own writes would not change its data version: only a read-only connection is remembered)
    data_version = None if getattr(store, "writable", True) else getattr(store, "data_version", None)
    checked = None
    if data_version is not None:
        try:
            checked = (data_version(), sha, loaded.sha256, loaded.manifest.params.embedder_id, embedder_id)
        except Exception:
            checked = None
        if checked is not None and _PASSED.get(store) == checked:
            return store, checked[0]
    try:
        version = store.schema_version()
        if version != SCHEMA_VERSION:
            raise store_unavailable(sha, "store_schema_mismatch", f"store schema {version} is not {SCHEMA_VERSION}")
        if loaded.manifest.params.embedder_id != embedder_id:
            raise store_unavailable(
                sha, "embedder_mismatch",
                f"snapshot was embedded with {loaded.manifest.params.embedder_id}, configured {embedder_id}",
            )
        if not holds_manifest(store, sha, loaded.sha256):
            raise store_unavailable(sha, "snapshot_not_in_store", f"the store does not hold the manifest of {sha}")
    except RagitError:
        store.close()
        raise
    except Exception as exc:  # sqlite errors on a damaged file
        store.close()
        raise store_unavailable(sha, "store_unreadable", f"the store cannot be read: {exc}") from None
    if checked is not None:
        _PASSED[store] = checked
        return store, checked[0]
    return store, None


# The checks each open store last passed: (its data version, snapshot, manifest digest, embedders).
# The version is read before the checks, so a write that lands during them fails the next match.
_PASSED: "WeakKeyDictionary[Store, tuple]" = WeakKeyDictionary()
