"""Publishing one snapshot (knowledge §4.3): store rows first, then the manifest, then cleanup.

Shared by ingest and ``snapshot import`` so both publish exactly the same way: the store
commits the snapshot's rows in one transaction, the manifest is renamed into place, store
snapshots without a manifest are dropped and the embedder's approximate index (and, for SQLite,
the packed keyword postings) are refreshed.
The caller holds the write lock.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from pathlib import Path
from typing import TYPE_CHECKING

from .manifest import Manifest, list_manifest_shas, publish_manifest

if TYPE_CHECKING:  # pragma: no cover
    from ..store.base import SnapshotWrite, Store


def publish_snapshot(root: Path, config, store: "Store", write: "SnapshotWrite", manifest: Manifest,
                     data: bytes) -> None:
    """Commit ``write`` to ``store``, then publish ``data`` as the manifest of ``manifest``.

    ``write.manifest_sha256`` must be the sha256 of ``data`` (or of the file already published
    when ``data`` equals it except ``createdAt``: that file is kept, knowledge §4.1).
    """
    from ..store.vectorindex import refresh as refresh_vector_index

    store.write_snapshot(write)
    publish_manifest(root, config, manifest, data)
    published = set(list_manifest_shas(root, config))
    if not getattr(store, "shared", False):  # a shared store's other snapshots are other clones'
        store.delete_snapshots([s for s in store.snapshot_shas() if s not in published])
    refresh_vector_index(store, write.embedder_id, write.commit_sha)
    deferred = _POSTINGS_DEFERRED.get()
    if deferred is None:
        _refresh_keyword_postings(store)
    else:
        deferred.append(True)
    _remember_digest(root, config, write.commit_sha, write.manifest_sha256, published)


def _remember_digest(root: Path, config, sha: str, digest: str, published: set[str]) -> None:
    """Record the published manifest's digest by file identity (ragit.ingest.manifestdigest), last,
    so its ctime is most likely in the past; an accelerator of reads, so a failure only leaves
    them hashing the file, as before."""
    from .manifest import manifest_relpath
    from .manifestdigest import forget_others, remember

    try:
        forget_others(root, published)
        remember(root, sha, Path(root) / manifest_relpath(config, sha), digest)
    except Exception:  # noqa: BLE001 - see above
        pass


def _refresh_keyword_postings(store: "Store") -> None:
    refresh = getattr(store, "refresh_keyword_postings", None)  # SQLite: ragit.store.packedpostings
    if refresh is not None:
        refresh()


# inside keyword_postings_deferred: one entry a snapshot published without its postings refresh
_POSTINGS_DEFERRED: ContextVar["list[bool] | None"] = ContextVar("ragit_postings_deferred", default=None)


@contextmanager
def keyword_postings_deferred(root: Path, config) -> Iterator[None]:
    """Publish snapshots without refreshing the packed keyword postings, then refresh them once,
    under the store's write lock, when the block ends having published any: for a caller that
    publishes many in a row (``eval run``'s evaluation store: ragit.evaluation.run.index_commits).
    Each refresh reads the index's postings of the new rows' terms, a cost that grows with the
    whole store (a shared evaluation store of 1.4 GB: 0.57 s a commit of requests, most of its
    ingest). A file left behind the index is never read (its recorded state no longer matches):
    queries in between, or after a block that failed, read ``fts5vocab`` as without it."""
    published: list[bool] = []
    token = _POSTINGS_DEFERRED.set(published)
    try:
        yield
    finally:
        _POSTINGS_DEFERRED.reset(token)
    if published:
        from ..store import open_store_write, store_dir
        from ..store.lock import write_lock

        with write_lock(store_dir(root, config)):
            store = open_store_write(root, config)
            try:
                _refresh_keyword_postings(store)
            finally:
                store.close()
