"""The read pipeline shared by ``query`` and ``context pack`` (knowledge §12.2):

select the exact snapshot → check store and embedder → mask and embed the question → retrieve
→ re-mask → (the caller projects). Typed failures can only come from the first three steps.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..security.masking import mask_text
from .cochange_boost import snapshot_cochange
from .hits import Hit
from .remask import hits_redaction, remask_hits
from ..store import holds_manifest, try_open_store
from .readiness import checked_store
from .search import RetrievalParams, RowFilter, VectorCache, label_hits, rank_hits, score_snapshot
from .selection import Selection, ingest_wait_seconds, select_snapshot

if TYPE_CHECKING:  # pragma: no cover
    from ..gitsnap.watch import WorktreeWatch
    from ..embed.base import Embedder
    from ..gitsnap.git import Git
    from ..ingest.manifest import ManifestCache
    from ..security.masking import MaskResult
    from ..store.held import HeldStore
    from .sources import OverlaySource

DIRTY_WARNING = "working tree has uncommitted changes; results exclude them"


@lru_cache(maxsize=256)
def _masked_question(text: str) -> "MaskResult":
    """The question or goal masked (``mask_text``, a pure function of the text), remembered: a
    warm process is asked the same questions again."""
    return mask_text(text)


@dataclass
class Retrieval:
    """Hits of one read plus everything needed to report it."""

    text: str  # the masked question or goal
    text_masked_count: int
    scope: str
    selection: Selection
    hits: list[Hit]
    warnings: list[str]

    @property
    def snapshot_sha(self) -> str | None:
        return self.selection.resolved_sha

    def redaction(self, view: str, text_field: str, hits: list[Hit] | None = None) -> dict[str, Any]:
        """Redaction summary of the question/goal plus the hits actually reported."""
        count, sources = hits_redaction(self.hits if hits is None else hits, view)
        if self.text_masked_count:
            sources.insert(0, text_field)
        count += self.text_masked_count
        return {"applied": count > 0, "maskedCount": count, "sources": sources}


def retrieve(
    root: Path,
    git: "Git",
    config,
    text: str,
    *,
    top_k: int,
    scope: str = "durable",
    at: str | None = None,
    cache: VectorCache | None = None,
    embedder: "Embedder | None" = None,
    manifests: "ManifestCache | None" = None,
    watch: "WorktreeWatch | None" = None,
    row_filter: "RowFilter | None" = None,
    overlay_source: "OverlaySource | None" = None,
    ingest_wait: float | None = None,
    held: "HeldStore | None" = None,
) -> Retrieval:
    """Run selection, checks and hybrid retrieval for already-validated inputs; ``row_filter``
    (``--path``, ``--exclude-tests``) limits which snapshot chunks are candidates.

    A non-durable ``scope`` adds the candidates that ``overlay_source`` gives for it (the caller
    owns where they are kept); without a source only the snapshot is ranked. ``ingest_wait``
    (seconds; None = ``retrieval.ingest_wait_seconds``, 0 = ``--no-wait``) bounds the wait for a
    snapshot a running ingest is publishing (knowledge §5.7). ``held`` is a warm process's kept
    read store (ragit.store.held); without it the store is opened and closed for this read."""
    early, owned = held.get(root, config) if held is not None else (try_open_store(root, config), True)
    selection: Selection | None = None
    try:
        trusted = None
        if early is not None:
            def trusted(sha: str, digest: str) -> bool:
                try:
                    return holds_manifest(early, sha, digest)
                except Exception:
                    return False
        wait = ingest_wait_seconds(config) if ingest_wait is None else max(0.0, ingest_wait)
        selection = select_snapshot(git, root, config, at, trusted=trusted, cache=manifests, watch=watch,
                                    wait=wait)
        if embedder is not None:
            embedder_id = embedder.id
        else:  # (imported here: the embedder a caller lends needs neither, and tests replace load_embedder)
            from ..embed import embedder_id_for

            embedder_id = embedder_id_for(config)
        assert selection.loaded is not None
        sha = selection.loaded.manifest.commit_sha
        store, version = checked_store(root, config, selection.loaded, embedder_id, early)
        if store is not early:
            owned = True
    except BaseException:
        if early is not None and owned:
            early.close()
        elif held is not None:
            held.close()
        if selection is not None:
            selection.pending.cancel()
        raise
    warnings: list[str] = []
    try:
        if embedder is None:
            from ..embed import load_embedder

            embedder = load_embedder(config)
        masked = _masked_question(text)
        params = RetrievalParams.from_config(config)
        candidates = []
        if scope != "durable" and overlay_source is not None:
            at_snapshot = getattr(overlay_source, "candidates_at", None)  # SnapshotOverlaySource
            candidates = list(overlay_source.candidates(scope, warnings, snapshot_sha=sha) if at_snapshot is None
                              else at_snapshot(scope, warnings, sha, masked.text))
        snapshot = None
        overlay = []
        extra_raw: list[float] | None = None
        if candidates:
            from .overlay import fts_document

            extra = [fts_document(c) for c in candidates]
        if scope in ("durable", "all"):
            snapshot = score_snapshot(store, sha, embedder, masked.text, params, cache=cache,
                                      extra=extra if candidates else (), top_k=None if row_filter else top_k,
                                      version=version)
            extra_raw = snapshot.extra_raw
        elif candidates and params.keyword_enabled:
            # artifacts only: the snapshot lends its keyword statistics, nothing else is ranked
            from .search import keyword_scorer, load_matrix

            snap = cache.get(store, sha, embedder.id) if cache is not None else load_matrix(store, sha, embedder.id)
            extra_raw = keyword_scorer(store, snap, masked.text, extra, cache, params.term_repeats,
                                       version).extra_score
        elif candidates:
            extra_raw = [0.0] * len(candidates)
        if candidates:
            from .overlay import score_overlay

            overlay = score_overlay(candidates, masked.text, embedder, raw=extra_raw, params=params)
        rows_cache = cache.rows(store, sha, embedder.id) if cache is not None and snapshot is not None else None
        light_cache = cache.light_rows(store, sha, embedder.id) if rows_cache is not None else None
        cochange = None
        if snapshot is not None and params.rerank and params.cochange:
            cochange = snapshot_cochange(git, root, sha)
        hits = rank_hits(store, sha, snapshot, overlay, params, top_k, masked.text, rows_cache,
                         row_filter=row_filter, cochange=cochange, light_cache=light_cache)
    except BaseException:
        selection.pending.cancel()
        if not owned and held is not None:
            held.close()
        raise
    finally:
        if owned:
            store.close()
    remask_hits(hits)
    label_hits(hits)
    if selection.worktree_dirty:
        warnings.insert(0, DIRTY_WARNING)
    return Retrieval(masked.text, masked.count, scope, selection, hits, warnings)
