"""Exact snapshot selection (knowledge §5): one commit's manifest, never a neighbour's.

``head-exact`` re-reads HEAD after loading and retries once if it moved; ``explicit-exact``
resolves ``--at`` once. A missing manifest names the nearest indexed ancestor only as a hint.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable

from ..errors import RagitError
from ..gitsnap.context import PendingContext, RepoContext
from ..gitsnap.git import Git
from ..gitsnap.watch import WorktreeWatch
from ..gitsnap.history import rev_list
from ..gitsnap.refs import resolve_at
from ..ingest.manifest import LoadedManifest, ManifestCache, list_manifest_shas, load_manifest


@dataclass
class Selection:
    requested_ref: str
    selection: str  # head-exact | explicit-exact
    resolved_sha: str | None
    pending: PendingContext
    loaded: LoadedManifest | None = None
    status: str = "indexed"

    @property
    def context(self) -> RepoContext:
        """The repository context; waits for the background dirty listing on first use."""
        return self.pending.result()

    @property
    def worktree_dirty(self) -> bool:
        return bool(self.context.dirty)

    def block(self) -> dict[str, Any]:
        """The snapshot metadata block (knowledge §5.6)."""
        return snapshot_block(self.requested_ref, self.resolved_sha, self.selection, self.status, self.context)


def snapshot_block(requested_ref: str, resolved_sha: str | None, selection: str, status: str,
                   context: RepoContext | None) -> dict[str, Any]:
    """The snapshot metadata block (knowledge §5.6); branch and dirtiness come from ``context``."""
    return {
        "requestedRef": requested_ref,
        "resolvedSha": resolved_sha,
        "selection": selection,
        "status": status,
        "branch": context.branch if context else None,
        "detached": context.detached if context else False,
        "worktreeDirty": bool(context.dirty) if context else False,
    }


def nearest_indexed_ancestor(git: Git, root: Path, config, sha: str) -> str | None:
    """First commit of ``git rev-list <sha>`` that has a manifest (a recovery hint only)."""
    catalogue = set(list_manifest_shas(root, config))
    if not catalogue:
        return None
    for commit in rev_list(git, sha):
        if commit in catalogue:
            return commit
    return None


def with_ancestor_hint(error: RagitError, git: Git, root: Path, config) -> RagitError:
    """Add ``nearestIndexedAncestor`` and the matching recovery to SNAPSHOT_NOT_INDEXED."""
    if error.code != "SNAPSHOT_NOT_INDEXED" or not error.details.get("resolvedSha"):
        return error
    sha = error.details["resolvedSha"]
    ancestor = nearest_indexed_ancestor(git, root, config, sha)
    details = {"resolvedSha": sha}
    if ancestor:
        details["nearestIndexedAncestor"] = ancestor
        recovery = f"ragit ingest --since {ancestor}"
        message = f"commit {sha} has no indexed snapshot (nearest indexed ancestor: {ancestor})"
    else:
        recovery = "ragit ingest --all"
        message = f"commit {sha} has no indexed snapshot"
    return RagitError("SNAPSHOT_NOT_INDEXED", message, details, recovery)


def _unborn_error() -> RagitError:
    return RagitError(
        "SNAPSHOT_NOT_INDEXED", "HEAD has no commit yet, so there is no snapshot", {"resolvedSha": None}, "git status"
    )


def select_snapshot(git: Git, root: Path, config, at: str | None, *,
                    trusted: Callable[[str, str], bool] | None = None,
                    cache: ManifestCache | None = None, watch: "WorktreeWatch | None" = None) -> Selection:
    """Select the exact snapshot for HEAD (``at`` None) or for ``--at`` (knowledge §5.2–5.4).

    ``trusted`` and ``cache`` are passed to :func:`load_manifest` (a read that only needs the
    manifest header); ``watch`` lets a warm process reuse its last dirty listing.
    """
    if at is not None:
        pending = PendingContext(git, watch=watch)
        try:
            sha = resolve_at(git, at)
            selection = Selection(at, "explicit-exact", sha, pending)
            try:
                selection.loaded = load_manifest(root, config, sha, trusted=trusted, cache=cache)
            except RagitError as exc:
                raise with_ancestor_hint(exc, git, root, config) from None
        except BaseException:
            pending.cancel()
            raise
        return selection

    for attempt in (1, 2):
        pending = PendingContext(git, watch=watch)
        try:
            if pending.head is None:
                raise _unborn_error()
            captured: RagitError | None = None
            loaded: LoadedManifest | None = None
            try:
                loaded = load_manifest(root, config, pending.head, trusted=trusted, cache=cache)
            except RagitError as exc:
                captured = exc
            final_head = pending.reread_head()
            if final_head == pending.head:
                if captured is not None:
                    raise with_ancestor_hint(captured, git, root, config)
                return Selection("HEAD", "head-exact", pending.head, pending, loaded)
            if attempt == 2:
                raise RagitError(
                    "REPOSITORY_STATE_CHANGED",
                    "HEAD moved while the snapshot was being selected",
                    {"selectedHead": pending.head, "finalHead": final_head, "attempts": 2},
                    "git status",
                )
        except BaseException:
            pending.cancel()
            raise
        pending.cancel()
    raise AssertionError("unreachable")  # pragma: no cover
