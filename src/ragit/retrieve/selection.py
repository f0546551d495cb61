"""Exact snapshot selection (knowledge §5): one commit's manifest, never a neighbour's.

``head-exact`` re-reads HEAD after loading and retries once if it moved; ``explicit-exact``
resolves ``--at`` once. A missing manifest names the nearest indexed ancestor only as a hint.
A missing manifest that a running ingest is publishing right now is waited for (§5.7), so a
read straight after a commit sees the hook's snapshot instead of failing.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Sequence

from ..errors import RagitError
from ..gitsnap.context import PendingContext, RepoContext
from ..gitsnap.git import Git
from ..gitsnap.watch import WorktreeWatch
from ..gitsnap.history import rev_list
from ..gitsnap.refs import is_commit_form, resolve_at, revision_commit
from ..ingest.manifest import LoadedManifest, ManifestCache, list_manifest_shas, load_manifest, manifest_relpath


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


def with_ancestor_hint(error: RagitError, git: Git, root: Path, config, *, explicit: bool = False) -> RagitError:
    """Add ``nearestIndexedAncestor`` and the matching recovery to SNAPSHOT_NOT_INDEXED.

    For an explicit ``--at`` the recovery indexes that exact commit (``ragit ingest --at <sha>``):
    a plain ``ragit ingest`` would index HEAD and leave the requested commit missing.
    """
    if error.code != "SNAPSHOT_NOT_INDEXED" or not error.details.get("resolvedSha"):
        return error
    sha = error.details["resolvedSha"]
    ancestor = nearest_indexed_ancestor(git, root, config, sha)
    details = {"resolvedSha": sha}
    at = f" --at {sha}" if explicit else ""
    if ancestor:
        details["nearestIndexedAncestor"] = ancestor
        recovery = f"ragit ingest --since {ancestor}{at}"
        message = f"commit {sha} has no indexed snapshot (nearest indexed ancestor: {ancestor})"
    else:
        recovery = f"ragit ingest{at}" if explicit else "ragit ingest --all"
        message = f"commit {sha} has no indexed snapshot"
    return RagitError("SNAPSHOT_NOT_INDEXED", message, details, recovery)


def with_exact_revision(error: RagitError, git: Git | None,
                        command: Callable[[str], Sequence[str]] | None = None) -> RagitError:
    """A read refused ``--at main`` (§5.1 accepts only commit forms); when the ref names a
    commit, say which (``details.resolvedSha``) and make the recovery the same command with
    ``--at <sha>``. ``command(sha)`` gives that command's words after ``ragit``; without it
    (a JSON payload, whose ``at`` cannot be swapped on a command line) the message names the SHA."""
    ref = error.details.get("ref")
    if (error.code != "SNAPSHOT_REF_INVALID" or git is None or not isinstance(ref, str)
            or "resolvedSha" in error.details or is_commit_form(ref)):
        return error
    sha = revision_commit(git, ref)
    if sha is None:
        return error
    import shlex

    recovery = "ragit " + shlex.join(command(sha)) if command is not None else error.recovery
    message = (f"{ref!r} names commit {sha}, but reads select a snapshot only by HEAD, a commit SHA or a hex "
               f"prefix: use {sha}")
    return RagitError("SNAPSHOT_REF_INVALID", message, {"ref": ref, "resolvedSha": sha}, recovery)


def exact_command(words: Sequence[str], options: Sequence[tuple[str, Any]]) -> list[str]:
    """A command line's words after ``ragit``: ``words``, then each option given (None and False
    are left out, True is a bare flag, a list or tuple repeats the option)."""
    out = list(words)
    for name, value in options:
        if value is None or value is False:
            continue
        if value is True:
            out.append(name)
        elif isinstance(value, (list, tuple)):
            for item in value:
                out += [name, str(item)]
        else:
            out += [name, str(value)]
    return out


def ingest_in_progress(sha: str, waited_ms: int) -> RagitError:
    """SNAPSHOT_INGEST_IN_PROGRESS: retryable, since the running ingest will publish ``sha``."""
    return RagitError(
        "SNAPSHOT_INGEST_IN_PROGRESS",
        f"commit {sha} is being indexed by a running ingest; its snapshot is not published yet",
        {"resolvedSha": sha, "waitedMs": waited_ms},
        "re-run the same command",
    )


def _load_waiting(root: Path, config, sha: str, wait: float, *, trusted: Callable[[str, str], bool] | None,
                  cache: ManifestCache | None) -> LoadedManifest:
    """Load the exact manifest of ``sha``; when it is missing while a running ingest indexes
    ``sha``, wait up to ``wait`` seconds for it (knowledge §5.7).

    Still missing with the ingest still running → SNAPSHOT_INGEST_IN_PROGRESS (retryable);
    the ingest ended without publishing → the usual SNAPSHOT_NOT_INDEXED.
    """
    try:
        return load_manifest(root, config, sha, trusted=trusted, cache=cache)
    except RagitError as exc:
        if exc.code != "SNAPSHOT_NOT_INDEXED":
            raise
        missing = exc
    from ..store import store_dir
    from ..store.lock import await_writer  # only a missing manifest looks for a running ingest

    target = Path(root) / manifest_relpath(config, sha)
    outcome = await_writer(store_dir(root, config), sha, wait, target.is_file)
    if outcome is None:
        outcome = _await_announced(Path(root), store_dir(root, config), sha, wait, target.is_file)
    if outcome is None and not target.is_file():  # (published between the load and the look)
        raise missing
    still_indexing, waited_ms = outcome or (False, 0)
    try:
        return load_manifest(root, config, sha, trusted=trusted, cache=cache)
    except RagitError as exc:
        if exc.code == "SNAPSHOT_NOT_INDEXED" and still_indexing:
            raise ingest_in_progress(sha, waited_ms) from None
        raise


ANNOUNCED_FRESH_SECONDS = 120.0  # an announcement older than this is a job that died: not waited for


def _await_announced(root: Path, store: Path, sha: str, wait: float,
                     published: Callable[[], bool]) -> tuple[bool, int] | None:
    """Wait for an ingest of ``sha`` that a Git hook announced but whose process has not taken the
    write lock yet (the window between ``git commit`` returning and the job's Python starting).

    None when no fresh announcement names ``sha``; else ``(still_indexing, waited_ms)`` as
    :func:`ragit.store.lock.await_writer` gives, handing over to it once the job holds the lock.
    """
    import time

    from ..hooks.script import PENDING_RELPATH
    from ..store.lock import POLL_SECONDS, await_writer, ms_since

    marker = root / PENDING_RELPATH

    def announced() -> bool:
        try:
            fresh = time.time() - marker.stat().st_mtime < ANNOUNCED_FRESH_SECONDS
            return fresh and marker.read_text(encoding="utf-8").strip() == sha
        except OSError:
            return False

    if not announced():
        return None
    if wait <= 0:
        return True, 0
    started = time.monotonic()
    deadline = started + wait
    while True:
        if published():
            return False, ms_since(started)
        left = deadline - time.monotonic()
        held = await_writer(store, sha, max(left, 0.0), published)
        if held is not None:
            return held[0], ms_since(started)
        if not announced():  # the job ended (or another commit's job took over): look again
            return False, ms_since(started)
        if left <= 0:
            return True, ms_since(started)
        time.sleep(min(POLL_SECONDS, left))


def ingest_wait_seconds(config) -> float:
    """``retrieval.ingest_wait_seconds`` (default 10); negative values mean 0."""
    value = config["retrieval"].get("ingest_wait_seconds", 10)
    return max(0.0, float(value))


def _unborn_error() -> RagitError:
    return RagitError(
        "SNAPSHOT_NOT_INDEXED", "HEAD has no commit yet, so there is no snapshot", {"resolvedSha": None}, "git status"
    )


def select_snapshot(git: Git, root: Path, config, at: str | None, *,
                    trusted: Callable[[str, str], bool] | None = None,
                    cache: ManifestCache | None = None, watch: "WorktreeWatch | None" = None,
                    wait: float = 0.0) -> Selection:
    """Select the exact snapshot for HEAD (``at`` None) or for ``--at`` (knowledge §5.2–5.4).

    ``trusted`` and ``cache`` are passed to :func:`load_manifest` (a read that only needs the
    manifest header); ``watch`` lets a warm process reuse its last dirty listing; ``wait`` is
    how long a missing manifest that a running ingest is publishing may be waited for (§5.7).
    """
    if at is not None:
        pending = PendingContext(git, watch=watch)
        try:
            sha = resolve_at(git, at)
            selection = Selection(at, "explicit-exact", sha, pending)
            try:
                selection.loaded = _load_waiting(root, config, sha, wait, trusted=trusted, cache=cache)
            except RagitError as exc:
                raise with_ancestor_hint(exc, git, root, config, explicit=True) from None
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
                loaded = _load_waiting(root, config, pending.head, wait, trusted=trusted, cache=cache)
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
