"""Reactive recovery (context D.11): the provider said the request overflowed.

The provider's verdict outranks the local estimate, so recovery runs even when the estimate
looks low [seed]. It is bounded (``attempts_left``), judges progress by tokens removed rather
than message count, and leaves the question whether the next request is accepted to the
caller, who retries the same round.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import asdict, dataclass
from typing import Any

from .budget import DEFAULT_KEEP_RECENT, BudgetPolicy
from .compaction import ContextArtifactSink, Summarizer
from .events import EventBus
from .maintenance import EXHAUSTED_NOTICE
from .messages import Message
from .prune import prune_oldest
from .routes import ProviderCapabilities
from .strategy import StrategyOwner
from .summaries import summarize_tool_results
from .tokens import TokenCounter


@dataclass
class RecoveryReport:
    status: str  # recovered | context_exhausted | not_overflow
    progress: bool = False
    freed_tokens: int = 0
    freed_messages: int = 0
    notice: str | None = None

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def recover(
    messages: list[Message],
    policy: BudgetPolicy,
    error: Any,
    attempts_left: int,
    *,
    capabilities: ProviderCapabilities | None = None,
    hooks: EventBus | None = None,
    summarizer: Summarizer | None = None,
    is_overflow: Callable[[Any], bool] | None = None,
    keep_recent: int = DEFAULT_KEEP_RECENT,
    session_id: str | None = None,
    artifact_store: ContextArtifactSink | None = None,
    checkpoint: Callable[[list[Message]], None] | None = None,
    system: str = "",
    tools_tokens: int = 0,
    counter: TokenCounter | None = None,
    categories: Mapping[str, str] | None = None,
) -> RecoveryReport:
    """Shrink ``messages`` in place after a provider overflow ``error``.

    ``is_overflow`` is the host's classifier; without one the caller has already classified
    ``error`` as a context overflow. Steps: summarise tool results (done if that cleared a
    locally critical estimate), then the strategy at the aggressive ``keep_recent`` with
    ``hard=True`` (``none`` becomes ``prune``; a compaction that cannot run falls back to
    pruning the oldest messages unless the history is opaque).
    """
    if is_overflow is not None and not is_overflow(error):
        return RecoveryReport("not_overflow")
    if attempts_left <= 0:
        return RecoveryReport("context_exhausted", notice=EXHAUSTED_NOTICE)
    owner = StrategyOwner.configured(policy, capabilities, hooks, summarizer, session_id, artifact_store, checkpoint,
                                     counter, system, tools_tokens, categories)
    before, before_count = owner.metrics(messages), len(messages)
    was_critical = before.is_critical
    summarize_tool_results(messages, policy, categories=categories, counter=owner.counter)
    metrics = owner.metrics(messages)
    if not (was_critical and not metrics.is_critical):
        # the provider's overflow counts as critical, whatever the local estimate says
        strategy = owner.strategy(metrics, "prune" if owner.capabilities.server_compaction else "compact")
        keep = policy.aggressive_keep_recent(keep_recent)
        compacted = False
        if strategy == "compact":
            report, _ = owner.compact(messages, keep, "overflow", True)
            compacted = report is not None and report.did_compact
        if not compacted and not owner.prune_blocked(messages):
            messages[:] = prune_oldest(messages, keep, counter=owner.counter)
    # system text and tool overhead are the same on both sides, so raw estimates differ by
    # exactly the messages' tokens
    freed_tokens = max(0, before.raw - owner.metrics(messages).raw)
    freed_messages = max(0, before_count - len(messages))
    if freed_tokens <= 0:
        return RecoveryReport("context_exhausted", notice=EXHAUSTED_NOTICE)
    return RecoveryReport("recovered", True, freed_tokens, freed_messages)
