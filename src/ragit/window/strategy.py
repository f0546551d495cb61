"""The strategy owner (context D.10): who decides how a crowded window gives way.

The strategy comes from the route's capabilities; a ``context_overflow_action`` listener may
choose another, and a ``pre_compact`` listener may only change ``keep_recent`` or defer a
soft compaction. Model, provider, trigger and hardness are never taken from a listener [seed].
Maintenance (D.10) and recovery (D.11) share this owner so both apply one policy.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from .budget import BudgetPolicy
from .compaction import CompactReport, ContextArtifactSink, Summarizer, compact
from .events import CONTEXT_OVERFLOW_ACTION, POST_COMPACT, PRE_COMPACT, EventBus, emit
from .health import Metrics, check_context
from .messages import Message, has_opaque, opaque_types
from .routes import ProviderCapabilities
from .tokens import HeuristicCounter, TokenCounter

STRATEGIES = ("none", "compact", "prune")
KEEP_RECENT_BOUNDS = (1, 1000)


def resolve_strategy(metrics: Metrics, capabilities: ProviderCapabilities) -> str:
    """Server compaction: prune at critical, else none. Client side: compact at warning or critical."""
    if capabilities.server_compaction:
        return "prune" if metrics.is_critical else "none"
    return "compact" if metrics.is_critical or metrics.is_warning else "none"


def _answer_strategy(answer: Any) -> str | None:
    value = answer.get("strategy") if isinstance(answer, Mapping) else answer
    return value if isinstance(value, str) and value in STRATEGIES else None


def _rewritten_keep(answer: Any) -> int | None:
    value = answer.get("keep_recent") if isinstance(answer, Mapping) else None
    if isinstance(value, int) and not isinstance(value, bool):
        low, high = KEEP_RECENT_BOUNDS
        return max(low, min(value, high))
    return None


def _is_defer(answer: Any) -> bool:
    decision = answer.get("decision") if isinstance(answer, Mapping) else answer
    return decision == "defer"


@dataclass
class StrategyOwner:
    """One maintenance configuration: policy, capabilities, hooks and where summaries go."""

    policy: BudgetPolicy
    capabilities: ProviderCapabilities
    hooks: EventBus | None = None
    summarizer: Summarizer | None = None
    session_id: str | None = None
    artifact_store: ContextArtifactSink | None = None
    checkpoint: Callable[[list[Message]], None] | None = None
    counter: TokenCounter = field(default_factory=HeuristicCounter)
    system: str = ""
    tools_tokens: int = 0
    categories: Mapping[str, str] | None = None

    @classmethod
    def configured(cls, policy: BudgetPolicy, capabilities: ProviderCapabilities | None, hooks: EventBus | None,
                   summarizer: Summarizer | None, session_id: str | None,
                   artifact_store: ContextArtifactSink | None, checkpoint: Callable[[list[Message]], None] | None,
                   counter: TokenCounter | None, system: str, tools_tokens: int,
                   categories: Mapping[str, str] | None) -> "StrategyOwner":
        """An owner from a maintenance call's arguments: the policy's capabilities and the
        heuristic counter unless the caller gives its own."""
        return cls(policy, capabilities or policy.capabilities, hooks, summarizer, session_id, artifact_store,
                   checkpoint, counter or HeuristicCounter(), system, tools_tokens, categories)

    def metrics(self, messages: list[Message]) -> Metrics:
        return check_context(messages, self.policy, self.system, self.tools_tokens, counter=self.counter)

    def payload_base(self) -> dict[str, Any]:
        return {"model": self.policy.model, "provider": self.policy.provider}

    def strategy(self, metrics: Metrics, resolved: str | None = None) -> str:
        """The resolved strategy, unless a ``context_overflow_action`` listener picks a valid one."""
        resolved = resolved or resolve_strategy(metrics, self.capabilities)
        payload = {"metrics": metrics.to_dict(), **self.payload_base(), "strategy": resolved}
        for answer in emit(self.hooks, CONTEXT_OVERFLOW_ACTION, payload):
            chosen = _answer_strategy(answer)
            if chosen is not None:
                return chosen
        return resolved

    def prune_blocked(self, messages: list[Message]) -> bool:
        """Opaque history or an unknown contract blocks forced pruning unless rewrites are allowed.

        Thinking blocks do not: providers accept earlier turns without them, and a prune never
        rewrites a message it keeps.
        """
        return self.prune_block_reason(messages) is not None

    def prune_block_reason(self, messages: list[Message]) -> str | None:
        """Why forced pruning is blocked, in words, or ``None`` when it may run."""
        if self.capabilities.allow_opaque_rewrite:
            return None
        if not self.capabilities.contract_known:
            return "the provider's history contract is unknown (capabilities.contract_known=false)"
        if any(has_opaque(m) for m in messages):
            return (f"the history holds opaque blocks that are not thinking ({', '.join(opaque_types(messages))}); "
                    f"pruning them needs allow_opaque_rewrite (window compact --prune)")
        return None

    def compact(
        self, messages: list[Message], keep_recent: int, trigger: str, hard: bool
    ) -> tuple[CompactReport | None, int]:
        """Compact in place with the hooks; ``(None, keep)`` when a soft compaction was deferred."""
        payload = {**self.payload_base(), "message_count": len(messages), "keep_recent": keep_recent,
                   "trigger": trigger, "hard": hard}
        deferred = False
        for answer in emit(self.hooks, PRE_COMPACT, payload):
            deferred = deferred or _is_defer(answer)
            keep_recent = _rewritten_keep(answer) or keep_recent
        if deferred and not hard:
            return None, keep_recent
        new, report = compact(
            messages, self.policy, self.summarizer, keep_recent, self.session_id, self.artifact_store,
            trigger, self.capabilities, hard,
            system=self.system, tools_tokens=self.tools_tokens, counter=self.counter, categories=self.categories,
            require_reduction=True,  # the ladder must make progress, never grow the history
        )
        if report.did_compact:
            original = len(messages)
            messages[:] = new
            if self.checkpoint is not None:
                self.checkpoint(messages)
            emit(self.hooks, POST_COMPACT, {
                **self.payload_base(), "original_message_count": original, "new_message_count": len(messages),
                "keep_recent": keep_recent, "trigger": trigger, "persisted": report.artifact_id is not None,
            })
        return report, keep_recent
