"""The read pipeline shared by ``query`` and ``context pack`` (knowledge §12.2):

select the exact snapshot → check store and embedder → mask and embed the question → retrieve
→ re-mask → (the caller projects). Typed failures can only come from the first three steps.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..contract.views import hits_redaction, project_hit, remask_hits
from .hits import Hit
from .readiness import open_checked_store
from .search import RetrievalParams, VectorCache, label_hits, search_snapshot
from .selection import Selection, select_snapshot

if TYPE_CHECKING:  # pragma: no cover
    from ..embed.base import Embedder
    from ..gitsnap.git import Git

SCOPES = ("durable", "session", "harness", "evidence", "all")
DIRTY_WARNING = "working tree has uncommitted changes; results exclude them"


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
) -> Retrieval:
    """Run selection, checks and hybrid retrieval for already-validated inputs."""
    from ..embed import embedder_id_for, load_embedder
    from ..security.masking import mask_text

    selection = select_snapshot(git, root, config, at)
    embedder_id = embedder.id if embedder is not None else embedder_id_for(config)
    assert selection.loaded is not None
    store = open_checked_store(root, config, selection.loaded, embedder_id)
    try:
        if embedder is None:
            embedder = load_embedder(config)
        masked = mask_text(text)
        hits: list[Hit] = []
        if scope in ("durable", "all"):
            hits = search_snapshot(
                store, selection.loaded.manifest.commit_sha, embedder, masked.text,
                RetrievalParams.from_config(config), top_k, cache=cache,
            )
    finally:
        store.close()
    remask_hits(hits)
    label_hits(hits)
    warnings = [DIRTY_WARNING] if selection.worktree_dirty else []
    return Retrieval(masked.text, masked.count, scope, selection, hits, warnings)


@dataclass
class QueryResult:
    retrieval: Retrieval
    explain: bool

    @property
    def hits(self) -> list[Hit]:
        return self.retrieval.hits

    @property
    def warnings(self) -> list[str]:
        return self.retrieval.warnings

    def to_dict(self, view: str = "default") -> dict[str, Any]:
        r = self.retrieval
        return {
            "query": r.text,
            "scope": r.scope,
            "snapshotSha": r.snapshot_sha,
            "snapshot": r.selection.block(),
            "explain": self.explain,
            "hits": [project_hit(h, view, explain=self.explain) for h in r.hits],
            "warnings": list(r.warnings),
            "redactionSummary": r.redaction(view, "query"),
        }
