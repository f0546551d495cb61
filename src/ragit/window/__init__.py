"""Window-maintenance toolkit (context §3): budget, health, admission, compaction, assembly.

Names are re-exported lazily (PEP 562) so ``import ragit.window`` costs nothing until a name
is used: CLI start-up is part of latency.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

_EXPORTS: dict[str, str] = {
    "ProviderCapabilities": "routes", "ModelRoute": "routes", "ModelCatalog": "routes",
    "TokenCounter": "tokens", "HeuristicCounter": "tokens", "BpeCounter": "tokens", "get_counter": "tokens",
    "BudgetPolicy": "budget", "resolve_budget": "budget",
    "EventBus": "events", "EVENTS": "events",
    "Metrics": "health", "check_context": "health", "fits": "health",
    "OffloadStore": "offload", "open_offload_store": "offload", "recall": "offload", "RecallOutcome": "offload",
    "ModelFacing": "admission", "admit_tool_result": "admission",
    "mask_stale_observations": "masking",
    "summarize_tool_results": "summaries",
    "find_safe_boundary": "pairs", "repair_pairs": "pairs",
    "compact": "compaction", "CompactReport": "compaction", "ContextArtifactSink": "compaction",
    "Summarizer": "compaction", "default_summary": "compaction",
    "maintain": "maintenance", "MaintenanceReport": "maintenance", "prepare_request": "maintenance",
    "PreparedRequest": "maintenance",
    "recover": "recovery", "RecoveryReport": "recovery",
    "adaptive_prune": "prune", "prune_oldest": "prune", "trim_to_max_turns": "prune",
    "build_prompt": "assembly", "StaticLayers": "assembly", "DynamicLayers": "assembly", "PromptParts": "assembly",
    "breakdown": "usage",
}

__all__ = sorted(_EXPORTS)


def __getattr__(name: str) -> Any:
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module 'ragit.window' has no attribute {name!r}")
    value = getattr(importlib.import_module(f".{module}", __name__), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(_EXPORTS))


if TYPE_CHECKING:  # pragma: no cover - for type checkers and IDEs only
    from .admission import ModelFacing, admit_tool_result  # noqa: F401
    from .assembly import DynamicLayers, PromptParts, StaticLayers, build_prompt  # noqa: F401
    from .budget import BudgetPolicy, resolve_budget  # noqa: F401
    from .compaction import CompactReport, ContextArtifactSink, Summarizer, compact, default_summary  # noqa: F401
    from .events import EVENTS, EventBus  # noqa: F401
    from .health import Metrics, check_context, fits  # noqa: F401
    from .maintenance import MaintenanceReport, PreparedRequest, maintain, prepare_request  # noqa: F401
    from .masking import mask_stale_observations  # noqa: F401
    from .offload import OffloadStore, RecallOutcome, open_offload_store, recall  # noqa: F401
    from .pairs import find_safe_boundary, repair_pairs  # noqa: F401
    from .prune import adaptive_prune, prune_oldest, trim_to_max_turns  # noqa: F401
    from .recovery import RecoveryReport, recover  # noqa: F401
    from .routes import ModelCatalog, ModelRoute, ProviderCapabilities  # noqa: F401
    from .summaries import summarize_tool_results  # noqa: F401
    from .tokens import BpeCounter, HeuristicCounter, TokenCounter, get_counter  # noqa: F401
    from .usage import breakdown  # noqa: F401
