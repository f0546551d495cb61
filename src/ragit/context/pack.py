"""``context pack``: the ``citation-diverse-v2`` selector over ranked hits (context §1.3).

The selector never rescores, re-sorts, truncates or mutates hits. Budget units are
whitespace-separated pieces of a hit's complete text (``budgetUnit: words``, the seed's units)
or, with ``budgetUnit: tokens``, the configured token counter's count of that text; either way
``usedTokens <= budget`` always holds and a hit is never split.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable, Sequence

from ..contract.inputs import MAX_SAFE_INTEGER
from ..retrieve.hits import Hit

STRATEGY = "citation-diverse-v2"
NO_HIT_WARNING = "context pack budget admitted no complete hit"
BUDGET_UNITS = ("words", "tokens")


def cost(hit: Hit) -> int:
    """Content units (words) of the complete hit text."""
    return len(hit.text.split())


def token_cost(counter: Any) -> Callable[[Hit], int]:
    """The cost of a hit in ``counter``'s tokens (context §1.3 step 1 with ``--budget-unit tokens``):
    the count of its complete text, so the budget holds in the unit the caller's model bills."""
    return lambda hit: counter.count_text(hit.text)


def family(hit: Hit) -> str:
    """Source family: ``document:<path>``, ``artifact:<id>`` or ``evidence:<id>``."""
    source_type = hit.citation.get("sourceType")
    if source_type == "document":
        return f"document:{hit.path}"
    ident = hit.artifact_id if hit.artifact_id is not None else hit.citation.get("sourceId")
    return f"{'evidence' if source_type == 'evidence' else 'artifact'}:{ident}"


@dataclass(frozen=True)
class PackSelection:
    hits: tuple[Hit, ...]
    used_tokens: int
    candidate_hits: int
    unique_citations: int
    selected_sources: int
    duplicate_citations_skipped: int
    budget_rejected_hits: int
    warnings: tuple[str, ...]

    def summary(self) -> dict[str, Any]:
        return {
            "strategy": STRATEGY,
            "candidateHits": self.candidate_hits,
            "uniqueCitations": self.unique_citations,
            "selectedSources": self.selected_sources,
            "duplicateCitationsSkipped": self.duplicate_citations_skipped,
            "budgetRejectedHits": self.budget_rejected_hits,
        }


def select_hits(hits: Sequence[Hit], budget: int, cost_of: Callable[[Hit], int] = cost) -> PackSelection:
    """Dedupe by citation id, then a diversity pass (one per family) and a fill pass; ``cost_of``
    measures a hit in the budget's unit (words by default, :func:`token_cost` for tokens)."""
    if isinstance(budget, bool) or not isinstance(budget, int) or not 1 <= budget <= MAX_SAFE_INTEGER:
        raise ValueError("context budget must be a positive safe integer")
    seen: set[str] = set()
    unique: list[Hit] = []
    duplicates = 0
    for h in hits:
        if h.citation_id in seen:
            duplicates += 1
            continue
        seen.add(h.citation_id)
        unique.append(h)

    costs = [cost_of(h) for h in unique]
    used = 0
    chosen: list[int] = []
    taken: set[int] = set()
    represented: set[str] = set()
    for i, h in enumerate(unique):
        fam = family(h)
        if fam not in represented and used + costs[i] <= budget:
            chosen.append(i)
            taken.add(i)
            represented.add(fam)
            used += costs[i]
    for i in range(len(unique)):
        if i not in taken and used + costs[i] <= budget:
            chosen.append(i)
            taken.add(i)
            used += costs[i]

    selected = tuple(unique[i] for i in chosen)
    warnings = (NO_HIT_WARNING,) if hits and not selected else ()
    return PackSelection(
        hits=selected,
        used_tokens=used,
        candidate_hits=len(hits),
        unique_citations=len(unique),
        selected_sources=len({family(h) for h in selected}),
        duplicate_citations_skipped=duplicates,
        budget_rejected_hits=len(unique) - len(selected),
        warnings=warnings,
    )
