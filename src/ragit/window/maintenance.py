"""The overflow ladder (context D.10): one maintenance pass per request, in place.

Cheap steps first, lossy steps last: observation masking and tool-result shrinking, then a
structured summary, and protected pruning only at the explicit hard (critical) boundary.
Passing the 200K soft ceiling never forces deletion by itself, a failed soft summary keeps
the history as masking left it, and an exhausted window ends with a static notice and no
model call [seed].
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import asdict, dataclass, field
from typing import Any

from .budget import DEFAULT_KEEP_RECENT, BudgetPolicy
from .compaction import CompactReport, ContextArtifactSink, Summarizer
from .events import CONTEXT_CRITICAL, EventBus, emit
from .health import fits
from .masking import KEEP_ROUNDS, RECALL_TOOL_NAME, mask_stale_observations
from .messages import Message
from .offload import OffloadStore
from .prune import MAX_TURNS, adaptive_prune, prune_oldest, trim_to_max_turns
from .routes import ProviderCapabilities
from .strategy import StrategyOwner
from .summaries import summarize_tool_results
from .tokens import TokenCounter

EXHAUSTED_NOTICE = (
    "The context window is exhausted: the conversation is still over the critical threshold after "
    "compaction and pruning. Start a new session or compact this one; lossy pruning runs only when "
    "explicitly requested."
)


@dataclass
class MaintenanceReport:
    status: str = "ok"  # ok | context_exhausted
    action: str = "none"  # none | soft_maintenance | compact | prune
    trigger: str | None = None  # warning | critical | ceiling
    hard: bool = False
    steps: list[dict[str, Any]] = field(default_factory=list)
    before_tokens: int = 0
    after_tokens: int = 0
    ineffective: bool = False
    notice: str | None = None

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def _compact_step(report: CompactReport | None, keep_recent: int, trigger: str) -> dict[str, Any]:
    if report is None:
        return {"step": "compact", "trigger": trigger, "keep_recent": keep_recent,
                "did_compact": False, "reason": "deferred"}
    return {"step": "compact", "trigger": trigger, "keep_recent": keep_recent, **report.to_dict()}


class _Pass:
    """The state of one ``maintain`` call."""

    def __init__(self, messages: list[Message], owner: StrategyOwner, report: MaintenanceReport,
                 allow_prune: bool = True) -> None:
        self.messages = messages
        self.owner = owner
        self.report = report
        self.allow_prune = allow_prune

    def step(self, name: str, **details: Any) -> None:
        self.report.steps.append({"step": name, **details})

    def summarize(self) -> None:
        n, before, after = summarize_tool_results(
            self.messages, self.owner.policy, categories=self.owner.categories, counter=self.owner.counter
        )
        self.step("summarize_tool_results", summarized=n, before_tokens=before, after_tokens=after)

    def compact(self, keep_recent: int, trigger: str, hard: bool) -> bool:
        compact_report, keep = self.owner.compact(self.messages, keep_recent, trigger, hard)
        self.report.steps.append(_compact_step(compact_report, keep, trigger))
        if compact_report is not None and compact_report.did_compact:
            self.report.ineffective = compact_report.ineffective
            return True
        return False

    def prune(self, kind: str, pruner: Callable[[list[Message]], list[Message]]) -> bool:
        """Run a lossy prune when allowed; the step records why not, or the tokens before and after."""
        if not self.allow_prune:
            self.step("prune", kind=kind, removed=0, blocked="not_requested",
                      detail="lossy pruning runs only when explicitly requested (window compact --prune)")
            return False
        reason = self.owner.prune_block_reason(self.messages)
        if reason is not None:
            self.step("prune", kind=kind, removed=0, blocked="opaque_history", detail=reason)
            return False
        before = self.owner.metrics(self.messages).estimate
        pruned = pruner(self.messages)
        removed = len(self.messages) - len(pruned)
        self.messages[:] = pruned
        after = self.owner.metrics(pruned).estimate
        self.step("prune", kind=kind, removed=removed, before_tokens=before, after_tokens=after)
        return removed > 0 or after < before  # a prune that freed nothing is not the pass's action


def maintain(
    messages: list[Message],
    policy: BudgetPolicy,
    capabilities: ProviderCapabilities | None = None,
    hooks: EventBus | None = None,
    summarizer: Summarizer | None = None,
    *,
    keep_recent: int = DEFAULT_KEEP_RECENT,
    observation_mask_keep_rounds: int = KEEP_ROUNDS,
    session_id: str | None = None,
    artifact_store: ContextArtifactSink | None = None,
    offload_store: OffloadStore | None = None,
    checkpoint: Callable[[list[Message]], None] | None = None,
    system: str = "",
    tools_tokens: int = 0,
    counter: TokenCounter | None = None,
    max_turns: int = MAX_TURNS,
    categories: Mapping[str, str] | None = None,
    recall_tool_name: str = RECALL_TOOL_NAME,
    allow_prune: bool = True,
) -> MaintenanceReport:
    """Run the one maintenance pass of a request over ``messages`` (modified in place).

    ``allow_prune=False`` keeps the lossy D.12 prune out of the pass (a still-critical history
    then ends ``context_exhausted``), for callers that prune only on explicit request.

    ``keep_recent`` is the requested tail, capped by the tier; ``summarizer=None`` compacts
    with the deterministic default summary; ``checkpoint`` runs after a compaction replaced
    the history and before ``post_compact`` fires. [ours] The critical rung also masks stale
    observations before summarising tool results: the cheapest step always goes first.
    """
    owner = StrategyOwner.configured(policy, capabilities, hooks, summarizer, session_id, artifact_store, checkpoint,
                                     counter, system, tools_tokens, categories)
    metrics = owner.metrics(messages)
    report = MaintenanceReport(before_tokens=metrics.estimate)
    run = _Pass(messages, owner, report, allow_prune)
    trimmed = trim_to_max_turns(messages, max_turns, counter=owner.counter)
    if trimmed is not messages:
        run.step("max_turns", removed=len(messages) - len(trimmed))
        messages[:] = trimmed
        metrics = owner.metrics(messages)
    keep = policy.keep_recent(keep_recent)

    def mask() -> None:
        masked = mask_stale_observations(
            messages, observation_mask_keep_rounds, store=offload_store, recall_tool_name=recall_tool_name
        )
        run.step("mask", masked=masked)

    if metrics.is_critical:
        report.trigger, report.hard, report.action = "critical", True, "soft_maintenance"
        emit(hooks, CONTEXT_CRITICAL, {"metrics": metrics.to_dict(), "model": policy.model})
        mask()
        run.summarize()
        metrics = owner.metrics(messages)
        if metrics.is_critical:
            strategy = owner.strategy(metrics)
            if strategy == "compact" and run.compact(keep, "critical", True):
                report.action = "compact"
            elif strategy == "prune" and run.prune("prune_oldest",
                                                   lambda m: prune_oldest(m, keep, counter=owner.counter)):
                report.action = "prune"
            metrics = owner.metrics(messages)
        if metrics.is_critical:
            if run.prune("adaptive", lambda m: adaptive_prune(m, policy, counter=owner.counter)):
                report.action = "prune"
            metrics = owner.metrics(messages)
        if metrics.is_critical:
            report.status, report.notice = "context_exhausted", EXHAUSTED_NOTICE
    elif metrics.is_warning:
        report.trigger, report.action = "warning", "soft_maintenance"
        mask()
        if owner.strategy(metrics) == "compact":
            if run.compact(keep, "warning", False):
                report.action = "compact"
        else:
            run.summarize()
    elif metrics.is_ceiling_exceeded:
        report.trigger, report.action = "ceiling", "soft_maintenance"
        run.summarize()
        if owner.metrics(messages).is_ceiling_exceeded and run.compact(keep, "ceiling", False):
            report.action = "compact"
    # no step ran: the messages are the ones measured above
    report.after_tokens = owner.metrics(messages).estimate if report.steps else metrics.estimate
    return report


@dataclass
class PreparedRequest:
    """The request path's outcome: the maintenance report (``None`` if skipped) and the fit check."""

    report: MaintenanceReport | None
    fits: bool


def prepare_request(
    messages: list[Message],
    policy: BudgetPolicy,
    *,
    conversation_replaced: bool = False,
    capabilities: ProviderCapabilities | None = None,
    hooks: EventBus | None = None,
    summarizer: Summarizer | None = None,
    system: str = "",
    tools_tokens: int = 0,
    counter: TokenCounter | None = None,
    **maintain_options: Any,
) -> PreparedRequest:
    """The request path [seed]: maintain the caller's own conversation once, then a read-only fit check.

    ``policy`` and ``tools_tokens`` must already reflect the route and the tool allow-list after
    middleware. When middleware replaced the conversation, the original session is not
    summarised in its place (no maintenance runs). Root and auxiliary calls use this alike.
    """
    if conversation_replaced:
        return PreparedRequest(None, fits(messages, policy, system, tools_tokens, counter=counter))
    report = maintain(
        messages, policy, capabilities, hooks, summarizer,
        system=system, tools_tokens=tools_tokens, counter=counter, **maintain_options,
    )
    # the read-only fit check of the maintained messages: maintain's last estimate is exactly it
    return PreparedRequest(report, report.after_tokens <= policy.effective)
