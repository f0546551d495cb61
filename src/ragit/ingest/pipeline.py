"""Ingest: turn one commit's tree into a published snapshot (knowledge §7).

Content addressing does the heavy lifting: a (blob id, chunking profile) already in the store is
never read, chunked or embedded again, so the cost of an ingest grows with what changed. The
store rows are committed in one transaction before the manifest is renamed into place.
"""

from __future__ import annotations

import functools
import hashlib
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable

from ..clock import now_iso
from ..errors import RagitError
from .ids import chunker_key as make_chunker_key
from .ids import document_id
from .markup import doc_chunker
from .manifest import (
    DocLines,
    LoadedManifest,
    Manifest,
    ManifestDoc,
    ManifestParams,
    doc_line,
    load_manifest,
    manifest_relpath,
    render_lines,
    same_except_created,
)

if TYPE_CHECKING:  # pragma: no cover
    from ..embed.base import Embedder
    from ..gitsnap.git import Git
    from ..store.base import BlobRecord, Store

EMBED_BATCH = 256
# Stored chunks lacking a vector are read back this many at a time (chunk_texts' own slice).
REEMBED_SLICE = 500
PARAMS_DIFFER_WARNING = "base snapshot parameters differ; performed a full ingest"
BASE_NOT_STORED_WARNING = "base snapshot is not in the store; performed a full ingest"
STORE_REPLACED_WARNING = ("the store could not be used and was created afresh; `ragit migrate rebuild` restores "
                          "the other snapshots")

Progress = Callable[[str, int, int], None]

# git paths are decoded with surrogateescape (ragit.gitsnap.git.decode_path): a surrogate in a
# path means its bytes are not UTF-8
_UNDECODABLE = re.compile("[\udc80-\udcff]")


def utf8_name(path: str) -> bool:
    """Whether a tree path is valid UTF-8 (else it is skipped as ``path_not_utf8``, knowledge §8.1)."""
    return _UNDECODABLE.search(path) is None


def display_name(path: str) -> str:
    """A tree path as outputs show it: undecodable bytes as ``\\xNN`` (readable, valid UTF-8)."""
    return path.encode("utf-8", "surrogateescape").decode("utf-8", "backslashreplace")


@dataclass
class IngestRequest:
    mode: str = "full"
    since: str | None = None
    files: list[str] = field(default_factory=list)
    paths: list[str] = field(default_factory=list)
    dry_run: bool = False
    # publish exactly these paths (those that are candidates) and nothing else: `migrate from-*`
    only: frozenset[str] | None = None
    # `ingest --at <rev>`: index this revision instead of HEAD (knowledge §7.1)
    at: str | None = None


@dataclass
class IngestResult:
    mode: str
    processed: int
    skipped: int
    masked: int
    commit_sha: str
    base_sha: str | None  # the indexed snapshot an incremental ingest built on (--since resolved)
    manifest_path: str
    search_ready: bool
    planned_files: list[str]
    deleted_document_ids: list[str]
    full_snapshot: bool
    dirty_candidates: list[str]
    would_fail: bool
    reused: int
    chunked: int
    embedded_chunks: int
    skipped_files: list[dict[str, str]]
    warnings: list[str]
    chunks: int = 0  # chunks of the processed documents (reported by `migrate from-*`, not by ingest)

    def to_dict(self) -> dict[str, Any]:
        return {
            "mode": self.mode,
            "processed": self.processed,
            "skipped": self.skipped,
            "masked": self.masked,
            "commitSha": self.commit_sha,
            "baseSha": self.base_sha,
            "manifestPath": self.manifest_path,
            "searchReady": self.search_ready,
            "plannedFiles": self.planned_files,
            "deletedDocumentIds": self.deleted_document_ids,
            "fullSnapshot": self.full_snapshot,
            "dirtyCandidates": self.dirty_candidates,
            "wouldFail": self.would_fail,
            "reused": self.reused,
            "chunked": self.chunked,
            "embeddedChunks": self.embedded_chunks,
            "skippedFiles": self.skipped_files,
            "warnings": self.warnings,
        }


def current_params(config, embedder_id: str) -> ManifestParams:
    from ..security.masking import MASKING_VERSION

    masking = MASKING_VERSION if config["security"]["secret_masking"] else None
    return ManifestParams(config["ingest"]["chunker_version"], masking, embedder_id, config.config_hash())


def profile_for(kind: str, params: ManifestParams) -> str:
    """Chunking profile known before the blob is read: the chunker key of the candidate's kind."""
    return make_chunker_key(kind, params.chunker_version, params.masking_version)


def profile_kind(kind: str, path: str) -> str:
    """The chunking profile's kind of a candidate: a doc's chunker, which its file name gives
    (``markdown``, ``rst``, ``asciidoc``), or ``code``. A store whose ``.rst`` records were cut as
    Markdown finds none under ``rst``, so ingest cuts those blobs again."""
    return doc_chunker(path) if kind == "markdown" else kind


def superseded(chunker: str) -> bool:
    """True for a code chunker of an earlier revision of its language's table
    (:data:`ragit.ingest.languages.SUPERSEDED`). A profile names the kind only (the language's
    chunker is known once the blob is read), so a store record made before a revision is found
    under the same profile; its blob is chunked again, and an upgraded ragit's ``ingest --all``
    gives every file the current cut instead of keeping the old one for unchanged blobs."""
    if not chunker.startswith("code:"):
        return False
    return chunker in _superseded_names()


@functools.cache
def _superseded_names() -> frozenset[str]:
    """The language tables' earlier chunker names, imported only once a code record is reused."""
    from .languages import SUPERSEDED

    return SUPERSEDED


@dataclass
class _Evaluated:
    """Outcome of one evaluated candidate."""

    path: str
    blob_id: str
    kind: str
    doc: ManifestDoc | None = None
    skip: str | None = None
    reused: bool = False
    masked: int = 0


def _not_indexed_unborn() -> RagitError:
    return RagitError(
        "SNAPSHOT_NOT_INDEXED", "HEAD has no commit yet; commit something before ingesting",
        {"resolvedSha": None}, "git status",
    )


def _base_not_indexed(mode: str, base_sha: str | None, at: str | None = None) -> RagitError:
    return RagitError(
        "INGEST_BASE_NOT_INDEXED",
        f"ingest --{'since' if mode == 'since' else mode} needs an indexed base snapshot",
        {"mode": mode, "baseSha": base_sha},
        _full_ingest(at),
    )


def _full_ingest(at: str | None) -> str:
    """The recovery that indexes the same commit in full (``--at`` kept: HEAD is not it)."""
    return "ragit ingest --all" if at is None else f"ragit ingest --all --at {at}"


def _load_base(root: Path, config, sha: str, mode: str, stored: Callable[[str, str], bool],
               at: str | None = None) -> LoadedManifest:
    try:
        return load_manifest(root, config, sha, trusted=stored, with_lines=True)
    except RagitError as exc:
        if exc.code == "SNAPSHOT_NOT_INDEXED":
            raise _base_not_indexed(mode, sha, at) from None
        raise


def _stored_hash_check(root: Path, config) -> Callable[[str, str], bool]:
    """``trusted(sha, digest)``: does the store hold a snapshot published from exactly this file?

    Answers are remembered for the ingest's lifetime: loading the base and checking that the
    store holds it ask the same question (one store open instead of two).
    """
    from ..store import store_holds_manifest

    answers: dict[tuple[str, str], bool] = {}

    def trusted(sha: str, digest: str) -> bool:
        if (sha, digest) not in answers:
            answers[(sha, digest)] = store_holds_manifest(root, config, sha, digest)
        return answers[(sha, digest)]

    return trusted


def run_ingest(root: Path, git: "Git", config, request: IngestRequest, **kwargs: Any) -> IngestResult:
    """Ingest ``commit`` (default HEAD) into the store and publish its manifest (see ``_run``).

    Runs with the cyclic garbage collector paused: ingest builds many small, acyclic objects
    (ragit.gcpause).
    """
    from ..gcpause import paused

    with paused():
        return _run(root, git, config, request, **kwargs)


def _run(
    root: Path,
    git: "Git",
    config,
    request: IngestRequest,
    *,
    commit: str | None = None,
    check_dirty: bool = True,
    embedder: "Embedder | None" = None,
    progress: Progress | None = None,
    on_commit: Callable[[str], None] | None = None,
) -> IngestResult:
    """Ingest ``commit`` (default HEAD) into the store and publish its manifest.

    ``check_dirty=False`` and an explicit ``commit`` serve ``eval run``, which indexes historic
    commits from git objects without looking at the working tree. ``request.at`` (``ingest
    --at``) is resolved once to the commit indexed; unless it is HEAD the worktree plays no
    part (knowledge §7.1). From here on "head" is the commit being indexed. ``on_commit`` is
    told it as soon as it is known and valid (the API starts its co-change mining then).
    """
    from contextlib import nullcontext

    from ..gitsnap.history import first_parent, head_and_first_parent
    from ..gitsnap.refs import head_sha, resolve_revision
    from ..store import store_dir
    from ..store.lock import write_lock

    at_sha: str | None = None  # the resolved --at commit, named in recoveries
    if commit is None and request.at is not None:
        commit = at_sha = resolve_revision(git, request.at)
        check_dirty = check_dirty and commit == head_sha(git)
    if commit is None:
        found = head_and_first_parent(git)  # one git process for both
        if found is None:
            raise _not_indexed_unborn()
        head, parent = found
        head_parent: Callable[[], str | None] = lambda: parent  # noqa: E731
    else:
        head = commit
        head_parent = functools.cache(lambda: first_parent(git, head))  # one git process at most
    # An invalid --since (not a commit, not an ancestor) fails before the lock is touched: a
    # rejected input leaves the store as it was (cli-contract §3.3).
    since_sha = _resolve_since(git, request, head, head_parent, at_sha) if request.mode == "since" else None
    started: Callable[[], None] | None = None
    if on_commit is not None:
        # a full ingest may fork workers, which must come before the thread ``on_commit`` starts:
        # it is told once the workers are forked or known not to be (ragit.ingest.workers)
        if request.mode == "full" and not request.dry_run and _may_fork(config):
            started = functools.partial(on_commit, head)
        else:
            on_commit(head)
    # An apply holds the write lock, recording `head`, from here on rather than only while it
    # writes: a read of `head` that finds no manifest then waits for this run (knowledge §5.7).
    # Only when the store exists: a failing first ingest must not create `.ragit/`.
    locked = not request.dry_run and store_dir(root, config).is_dir()
    with write_lock(store_dir(root, config), target=head) if locked else nullcontext():
        return _ingest_commit(root, git, config, request, head, head_parent, at_sha, since_sha,
                              check_dirty=check_dirty, embedder=embedder, progress=progress, locked=locked,
                              started=started)


def _may_fork(config) -> bool:
    """Whether this ingest may fork workers (``ingest.workers``, ``RAGIT_INGEST_WORKERS``)."""
    from .workers import planned_workers

    return planned_workers(config) >= 2


def _resolve_since(git: "Git", request: IngestRequest, head: str, head_parent: Callable[[], str | None],
                   at_sha: str | None) -> str:
    """The commit of ``--since``, which must be ``head``, its parent or an ancestor."""
    from ..gitsnap.history import is_ancestor
    from ..gitsnap.refs import FULL_SHA, resolve_revision

    assert request.since is not None
    # a hook's --since is HEAD's parent: already known to be a commit and an ancestor;
    # anything else is any revision (HEAD~1, a branch, a tag), resolved once (knowledge §7.1)
    since = request.since.lower()
    since_sha = (since if FULL_SHA.fullmatch(since) and since == head_parent()
                 else resolve_revision(git, request.since))
    if since_sha not in (head, head_parent()) and not is_ancestor(git, since_sha, head):
        target = "HEAD" if at_sha is None else f"{request.at} ({head})"
        raise RagitError(
            "INGEST_BASE_NOT_ANCESTOR", f"{request.since} ({since_sha}) is not an ancestor of {target}",
            {"since": request.since, "resolvedSha": since_sha, "head": head}, _full_ingest(at_sha),
        )
    return since_sha


def _ingest_commit(root: Path, git: "Git", config, request: IngestRequest, head: str,
                   head_parent: Callable[[], str | None], at_sha: str | None, since_sha: str | None, *,
                   check_dirty: bool, embedder: "Embedder | None", progress: Progress | None,
                   locked: bool, started: Callable[[], None] | None = None) -> IngestResult:
    """The body of :func:`_run` for the resolved commit ``head`` (and ``since_sha``, the
    resolved ``--since``); ``locked`` tells whether the caller already holds the write lock;
    ``started`` is called when the evaluation starts (:func:`_evaluate`)."""
    from contextlib import nullcontext

    from ..embed import embedder_id_for
    from ..gitsnap.dirty import dirty_paths
    from ..gitsnap.tree import changed_paths, list_tree
    from .discovery import GITIGNORE, gitignore_changed, listing_scope, matches_filter, select_candidates

    embedder_id = embedder.id if embedder is not None else embedder_id_for(config)
    params = current_params(config, embedder_id)
    warnings: list[str] = []
    stored = _stored_hash_check(root, config)

    # ---- base selection (knowledge §7.2)
    mode = request.mode
    base: LoadedManifest | None = None
    changed: set[str] | None = None
    if mode == "since":
        assert since_sha is not None
        base = _load_base(root, config, since_sha, "since", stored, at_sha)
        changed = set(changed_paths(git, since_sha, head)) if since_sha != head else set()
    elif mode in ("files", "paths"):
        base = _existing_manifest(root, config, head, stored)
        if base is None:
            parent = head_parent()
            base = _existing_manifest(root, config, parent, stored) if parent else None
        if base is None:
            raise _base_not_indexed(mode, None, at_sha)
    if base is not None and base.manifest.params != params:
        warnings.append(PARAMS_DIFFER_WARNING)
        base = None
        mode = "full"
    # carrying base documents over is only sound when the store holds the base's rows
    if base is not None and not stored(base.manifest.commit_sha, base.sha256):
        warnings.append(BASE_NOT_STORED_WARNING)
        base = None
        mode = "full"
    full_eval = mode == "full" or (mode == "since" and changed is not None and gitignore_changed(changed))

    # ---- candidates and the evaluation set
    from ..gitsnap.blobs import BlobReader

    # an incremental ingest lists only what changed (and the .gitignore files judging it)
    narrow = mode == "since" and not full_eval
    # (a full one, the part of the tree the include patterns can reach)
    entries = (list_tree(git, head, only=changed, also_named=GITIGNORE) if narrow
               else list_tree(git, head, within=listing_scope(config), also_named=GITIGNORE))
    with BlobReader(git) as reader:
        candidates = select_candidates(entries, config, reader.read)
        if request.only is not None:
            candidates = [c for c in candidates if c.path in request.only]

        comparison = base if base is not None else _previous_manifest(root, config, head, head_parent, stored)
        base_lines = base.doc_lines() if base is not None else None
        if full_eval:
            evaluated = list(candidates)
            scope_paths: set[str] | None = None
        elif mode == "since":
            assert changed is not None
            scope_paths = set(changed)
            evaluated = [c for c in candidates if c.path in scope_paths]
        else:
            selected = _selector(request)
            evaluated = [c for c in candidates if selected(c.path)]
            assert base_lines is not None  # --files/--path always have a base
            scope_paths = ({p for p in base_lines.paths() if selected(p)} | {c.path for c in evaluated}
                           | set(request.paths))
        planned = sorted(display_name(c.path) for c in evaluated)
        if started is not None:
            from .workers import MIN_PARALLEL_BYTES

            if sum(c.size or 0 for c in evaluated) < MIN_PARALLEL_BYTES:
                started()  # too few bytes to fork for, even were all new: the thread need not wait
                started = None

        # ---- dirty candidates (knowledge §7.3)
        blocking: list[str] = []
        dirty_code = 0
        if check_dirty:
            # --since asks git about its changed paths only; --files/--path select by pattern
            in_scope = _selector(request) if mode in ("files", "paths") else None
            for path in dirty_paths(git, only=scope_paths if in_scope is None else None, untracked=False):
                if (in_scope is not None and not in_scope(path)) or not utf8_name(path):
                    continue  # a name that is not UTF-8 is never indexed, so it never blocks
                kind = matches_filter(path, config)
                if kind == "markdown":
                    blocking.append(path)
                elif kind == "code":
                    dirty_code += 1
        blocking.sort()
        if dirty_code:
            warnings.append(f"{dirty_code} code file(s) have uncommitted changes; their committed content was indexed")
        if blocking and not request.dry_run:
            raise RagitError(
                "INGEST_CANDIDATES_DIRTY",
                f"{len(blocking)} document(s) have uncommitted changes: {', '.join(blocking)}",
                {"dirtyCandidates": blocking}, "git status --short",
            )

        # ---- evaluate
        from ..store import open_store_write, store_dir, try_open_store
        from ..store.lock import write_lock

        # reported: the exact commit an incremental ingest built on (``--since HEAD~1`` resolved)
        incremental_base = base.manifest.commit_sha if base is not None and scope_paths is not None else None
        if request.dry_run:
            store = try_open_store(root, config)
            try:
                outcome = _evaluate(evaluated, config, params, store, reader, None, progress, dry_run=True)
            finally:
                if store is not None:
                    store.close()
            new_lines = _merge_lines(base_lines, scope_paths, outcome.docs)
            return _result(
                "dry-run", outcome, head, incremental_base, manifest_relpath(config, head), False, planned,
                _deleted(comparison, new_lines, scope_paths, base_lines), full_eval and request.only is None, blocking,
                bool(blocking), 0,
                warnings,
            )

        with nullcontext() if locked else write_lock(store_dir(root, config), target=head):
            store = open_store_write(root, config)
            try:
                if getattr(store, "replaced", None):
                    warnings.append(f"{STORE_REPLACED_WARNING} ({store.replaced})")
                outcome = _evaluate(evaluated, config, params, store, reader, embedder, progress, dry_run=False,
                                    batched=True, git=git, started=started)
                # an incremental ingest carries the base's other documents over as their manifest
                # lines and store rows, so its cost follows the change, not the repository
                delta = base is not None and scope_paths is not None
                new_lines = _merge_lines(base_lines, scope_paths, outcome.docs)
                manifest = Manifest(
                    commit_sha=head,
                    parent_sha=head_parent(),
                    created_at=now_iso(),
                    params=params,
                    ingest_mode="paths" if request.only is not None else mode,
                    base_sha=base.manifest.commit_sha if base is not None else None,
                )
                data = render_lines(manifest, new_lines.lines)
                target = Path(root) / manifest_relpath(config, head)
                if target.is_file():
                    existing = target.read_bytes()
                    if same_except_created(existing, data):
                        data = existing
                from ..store.base import SnapshotDoc, SnapshotWrite

                write = SnapshotWrite(
                    commit_sha=head,
                    manifest_sha256=hashlib.sha256(data).hexdigest(),
                    params=params.to_dict(),
                    created_at=manifest.created_at,
                    docs=[SnapshotDoc(d.path, d.doc_type, d.blob_id, manifest.chunker_key(d))
                          for d in (outcome.docs[p] for p in sorted(outcome.docs))],
                    new_blobs=outcome.new_blobs,
                    new_chunks=outcome.new_chunks,
                    embedder_id=embedder_id,
                    vector_ids=outcome.vector_ids,
                    vectors=outcome.vectors,
                    dims=outcome.dims,
                    fts_paths=None if base is None else sorted({e.path for e in outcome.evaluated if e.doc}),
                    base_sha=base.manifest.commit_sha if delta else None,
                    # a path that is not UTF-8 was never indexed: nothing of it to replace
                    replaced_paths=(sorted(p for p in scope_paths if utf8_name(p))
                                    if delta and scope_paths is not None else None),
                    keyword_fields=outcome.analysed,
                )
                from .publish import publish_snapshot

                publish_snapshot(root, config, store, write, manifest, data)
            finally:
                store.close()
        return _result(
            "apply", outcome, head, incremental_base, manifest_relpath(config, head), True, planned,
            _deleted(comparison, new_lines, scope_paths, base_lines), full_eval and request.only is None, blocking, False,
            outcome.embedded,
            warnings,
        )


def _selector(request: IngestRequest) -> Callable[[str], bool]:
    """``--files`` globs and ``--path`` paths select the union of what they match."""
    from .globs import GlobSet

    globs = GlobSet(request.files) if request.files else None
    listed = set(request.paths)
    return lambda path: path in listed or (globs is not None and globs.matches(path))


def _existing_manifest(root: Path, config, sha: str | None,
                       stored: Callable[[str, str], bool] | None = None) -> LoadedManifest | None:
    if sha is None:
        return None
    try:
        return load_manifest(root, config, sha, trusted=stored, with_lines=stored is not None)
    except RagitError as exc:
        if exc.code == "SNAPSHOT_NOT_INDEXED":
            return None
        raise


def _previous_manifest(root: Path, config, head: str, head_parent: Callable[[], str | None],
                       stored: Callable[[str, str], bool] | None = None) -> LoadedManifest | None:
    """What a full ingest compares against to report deletions: HEAD's own or its parent's
    (only its paths are needed, so a file the store published is read as lines, unvalidated)."""
    for sha in (head, head_parent()):
        try:
            found = _existing_manifest(root, config, sha, stored)
        except RagitError:
            found = None
        if found is not None:
            return found
    return None


def _merge_lines(base_lines: DocLines | None, scope_paths: set[str] | None,
                 admitted: dict[str, ManifestDoc]) -> DocLines:
    """The new snapshot's document lines: base minus (removed ∪ re-evaluated) plus admitted;
    full evaluation (no scope): admitted only."""
    lines = {p: doc_line(d) for p, d in admitted.items()}
    if scope_paths is None or base_lines is None:
        return DocLines([lines[p] for p in sorted(lines)])
    return base_lines.replace(scope_paths, lines)


def _deleted(comparison: LoadedManifest | None, new_lines: DocLines, scope_paths: set[str] | None,
             base_lines: DocLines | None) -> list[str]:
    """Document ids of the comparison manifest's paths that the new snapshot lacks. When the
    comparison is the base of an incremental ingest, only its scope can have lost documents."""
    if comparison is None:
        return []
    if base_lines is not None and scope_paths is not None:
        return sorted(document_id(p) for p in base_lines.having(scope_paths) - new_lines.having(scope_paths))
    kept = set(new_lines.paths())
    return sorted(document_id(p) for p in comparison.paths() if p not in kept)


def _result(mode, outcome, head, base_sha, manifest_path, ready, planned, deleted, full, dirty, would_fail, embedded,
            warnings):
    missing = sum(1 for e in outcome.evaluated if e.skip == "missing_object")
    if missing:
        warnings = [*warnings, f"{missing} file(s) skipped: their git objects are missing from this clone"
                               " (partial or shallow clone); fetch them to index them"]
    unnamed = [e.path for e in outcome.evaluated if e.skip == "path_not_utf8"]
    if unnamed:
        shown = ", ".join(unnamed[:5]) + (", …" if len(unnamed) > 5 else "")
        warnings = [*warnings, f"{len(unnamed)} file(s) skipped: their names are not valid UTF-8 ({shown});"
                               " rename them to index them"]
    processed = [e for e in outcome.evaluated if e.doc is not None]
    return IngestResult(
        mode=mode,
        processed=len(processed),
        skipped=len(outcome.evaluated) - len(processed),
        masked=sum(e.masked for e in outcome.evaluated),
        commit_sha=head,
        base_sha=base_sha,
        manifest_path=manifest_path,
        search_ready=ready,
        planned_files=planned,
        deleted_document_ids=deleted,
        full_snapshot=full,
        dirty_candidates=dirty,
        would_fail=would_fail,
        reused=sum(1 for e in processed if e.reused),
        chunked=sum(1 for e in processed if not e.reused),
        embedded_chunks=embedded,
        skipped_files=[{"path": e.path, "reason": e.skip} for e in outcome.evaluated if e.skip],
        warnings=warnings,
        chunks=sum(len(e.doc.chunks) for e in processed),
    )


@dataclass
class _Outcome:
    evaluated: list[_Evaluated]
    docs: dict[str, ManifestDoc]
    new_blobs: list["BlobRecord"]
    new_chunks: list
    vector_ids: list[str]
    vectors: bytes | None
    dims: int = 0
    embedded: int = 0  # chunks embedded (also those already committed in batches)
    analysed: dict | None = None  # (path, chunk id) -> keyword fields made by ingest workers


def _evaluate(candidates, config, params: ManifestParams, store: "Store | None", reader, embedder,
              progress: Progress | None, *, dry_run: bool, batched: bool = False, git: "Git | None" = None,
              started: Callable[[], None] | None = None) -> _Outcome:
    """Reuse, or read + mask + chunk, every evaluated candidate; embed what is new.

    ``batched``: new blobs, chunks and vectors are committed to the store in batches as they are
    made (:mod:`ragit.ingest.batches`), so memory holds a batch of them, not all; the outcome
    then carries none of them and the snapshot write only publishes. With enough new blobs (and
    ``git``, which workers read them from) the per-blob work runs in forked workers
    (:mod:`ragit.ingest.workers`), which give the same rows;
    ``started`` is called once they are forked, or it is known none will be (the API starts
    its co-change mining thread then: threads come after a fork, never before).
    """
    from .batches import RowSink
    from .blobwork import BlobChunker, stream_present
    from .blobwork import doc_type as type_of
    from .skips import path_skip

    supported = set(config["ingest"]["supported_types"])
    max_bytes = config["ingest"]["max_file_bytes"]
    keys = [(c.blob_id, profile_for(profile_kind(c.kind, c.path), params)) for c in candidates]
    known = store.get_blobs(keys) if store is not None else {}

    evaluated: list[_Evaluated] = []
    docs: dict[str, ManifestDoc] = {}
    new_blobs: dict[tuple[str, str], BlobRecord] = {}
    blob_keys: dict[str, list[tuple[str, str]]] = {}  # blob id -> its keys in new_blobs
    reembed: list[str] = []

    def load() -> "Embedder":
        nonlocal embedder
        if embedder is None:
            from ..embed import load_embedder

            embedder = load_embedder(config)
        return embedder

    write_batch = getattr(store, "write_batch", None) if batched and not dry_run else None
    sink = None if dry_run else RowSink(
        load, None if write_batch is None else
        (lambda b, c, ids, v, d: write_batch(b, c, params.embedder_id, ids, v, d)), EMBED_BATCH, progress)

    def admit(c, record: BlobRecord, reused: bool) -> _Evaluated:
        ev = _Evaluated(c.path, c.blob_id, c.kind, masked=record.masked_count, reused=reused)
        if record.skip_reason:
            ev.skip = record.skip_reason
            return ev
        doc_type = type_of(c.path, c.kind, record, supported)
        if doc_type is None:
            ev.skip = "unsupported_type"
            return ev
        ev.doc = ManifestDoc(c.path, c.blob_id, doc_type, record.chunker,
                             tuple((s.start_line, s.end_line) for s in record.chunks))
        return ev

    # 1. candidates whose blob the store already knows
    pending = []
    for c, key in zip(candidates, keys):
        record = known.get(key)
        if not utf8_name(c.path):  # cannot be written to a manifest or cited: skipped, reported readably
            evaluated.append(_Evaluated(display_name(c.path), c.blob_id, c.kind, skip="path_not_utf8"))
            continue
        path_reason = "missing_object" if c.missing else path_skip(c.path)
        if path_reason is not None:
            evaluated.append(_Evaluated(c.path, c.blob_id, c.kind, skip=path_reason))
        elif c.size is not None and c.size > max_bytes:
            evaluated.append(_Evaluated(c.path, c.blob_id, c.kind, skip="too_large"))
        elif record is not None and not superseded(record.chunker):
            ev = admit(c, record, reused=True)
            evaluated.append(ev)
            if ev.doc is not None:
                reembed.extend(s.chunk_id for s in record.chunks)
        else:
            evaluated.append(None)  # placeholder, filled below in order
            pending.append((len(evaluated) - 1, c, key))

    # 2. read, mask and chunk new blobs (each (blob, profile) once, at its first candidate), as
    # git streams them (one ``cat-file --batch``, overlapping this work), or in forked workers; a
    # blob's bytes are dropped after its last candidate, so memory holds a few blobs, never the
    # whole tree
    uses: dict[str, int] = {}
    for _, c, _ in pending:
        uses[c.blob_id] = uses.get(c.blob_id, 0) + 1
    chunker = BlobChunker(params)
    rows = sink is not None
    workers = None if sink is None or git is None else _fork_workers(pending, config, store, chunker, load, git,
                                                                      progress)
    if started is not None:
        started()
    stream = stream_present(reader, list(uses), progress) if workers is None else None
    contents: dict[str, bytes | None] = {}
    analysed: dict[tuple[str, str], tuple] = {}  # (path, chunk id) -> keyword fields a worker made
    absent: set[tuple[str, str]] = set()  # keys whose blob is not in this clone (made() said so once)

    def made(c, key) -> tuple | None:
        """(record, chunk rows, vectors or None, keyword fields or None) of a new (blob,
        profile); None when the blob is absent from this clone."""
        if workers is not None:
            return workers.next()
        while c.blob_id not in contents:  # read on up to it, in stream order
            oid, data = next(stream)
            contents[oid] = data
        data = contents[c.blob_id]
        return None if data is None else (*chunker(c, key[1], data, rows), None, None)

    def release(blob_id: str) -> None:
        """After a blob's last candidate: its rows can be written (settled), then dropped."""
        if not uses[blob_id]:
            contents.pop(blob_id, None)
            for k in blob_keys.pop(blob_id, ()):
                del new_blobs[k]
            if sink is not None:
                sink.settle(blob_id)

    try:
        for slot, c, key in pending:
            uses[c.blob_id] -= 1
            record = new_blobs.get(key)
            if record is None:
                fresh = None if key in absent else made(c, key)
                if fresh is None:  # listed, but absent from this clone
                    absent.add(key)
                    evaluated[slot] = _Evaluated(c.path, c.blob_id, c.kind, skip="missing_object")
                    release(c.blob_id)
                    continue
                record, new_chunks, vectors, fields = fresh
                new_blobs[key] = record
                blob_keys.setdefault(c.blob_id, []).append(key)
                if sink is not None:
                    ids = [n.chunk_id for n in new_chunks]
                    if vectors is not None:
                        sink.known(ids, vectors)
                    if fields is not None:
                        analysed.update(zip(((c.path, cid) for cid in ids), fields))
                    sink.add(c.blob_id, record, new_chunks, [(n.chunk_id, n.title, n.text) for n in new_chunks])
            evaluated[slot] = admit(c, record, reused=False)
            if evaluated[slot].doc is not None and sink is not None:
                sink.admit(c.blob_id, [s.chunk_id for s in record.chunks])
            release(c.blob_id)
        if workers is not None:
            workers.finish()
    finally:
        if stream is not None:
            stream.close()
        if workers is not None:
            workers.close()
    for ev in evaluated:
        if ev.doc is not None:
            docs[ev.path] = ev.doc

    # 3. embeddings: new chunks (embedded as their blobs settle), then stored chunks lacking a
    # vector for this embedder (their chunk ids never equal a new chunk's: a blob's profile
    # fixes its chunker key), read back a slice at a time
    if sink is None:
        return _Outcome(evaluated, docs, [], [], [], None, 0)
    sink.settle_all()
    if reembed and store is not None:
        missing = sorted(store.missing_vectors(list(dict.fromkeys(reembed)), params.embedder_id))
        for start in range(0, len(missing), REEMBED_SLICE):
            texts = store.chunk_texts(missing[start:start + REEMBED_SLICE])
            sink.add_vectors_only([(cid, title, text) for cid, (title, text) in texts.items()])
    sink.finish()
    return _Outcome(evaluated, docs, sink.blobs, sink.chunks, sink.vector_ids, sink.vectors(), sink.dims,
                    sink.embedded_count, analysed or None)


def _fork_workers(pending, config, store: "Store | None", chunker, load: Callable[[], "Embedder"], git: "Git",
                  progress: Progress | None):
    """Workers for the new blobs of ``pending`` when there are enough of them and forking is
    possible and safe (:mod:`ragit.ingest.workers`), else None (this process does the work)."""
    from . import workers as w

    count = w.planned_workers(config)
    if count < 2 or not pending:
        return None
    jobs: list[tuple[int, tuple]] = []
    sizes: list[int] = []
    seen: set[tuple[str, str]] = set()
    for _, c, key in pending:
        if key not in seen:
            seen.add(key)
            jobs.append((len(jobs), (c, key[1])))
            sizes.append(c.size or 0)
    total = sum(sizes)
    count = min(count, len(jobs), total // w.MIN_WORKER_BYTES)
    if total < w.MIN_PARALLEL_BYTES or count < 2 or not w.can_fork():
        return None
    embedder = load()
    if not w.batch_independent(embedder):
        return None
    # keyword fields too, for a store that takes them (SQLite), within a memory budget
    analyse = w.ANALYSE_CHARS // count if getattr(store, "takes_keyword_fields", False) else 0
    w.preload(code=any(c.kind == "code" for _, (c, _) in jobs), keyword=analyse > 0,
              pieces=hasattr(embedder, "embed_with_words"))  # (the static models: StaticEmbedder)
    work = w.chunk_share(git, chunker, embedder, config["ingest"]["supported_types"], analyse, EMBED_BATCH)
    try:
        return w.Workers(w.shares(jobs, sizes, count), work,
                         None if progress is None else lambda done, total: progress("read", done, total),
                         w.BlobWire().decode)
    except OSError:  # no fork now (process or memory limits): this process does the work
        return None
