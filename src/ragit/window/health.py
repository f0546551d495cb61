"""Context health check (context D.4): one estimate, compared with the policy thresholds."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from .budget import BudgetPolicy
from .messages import Message
from .tokens import HeuristicCounter, TokenCounter

_HEURISTIC = HeuristicCounter()


@dataclass(frozen=True)
class Metrics:
    estimate: int
    raw: int
    usage_pct: float
    usage_pct_effective: float
    remaining: int
    remaining_prompt: int
    is_warning: bool
    is_critical: bool
    is_ceiling_exceeded: bool
    policy: BudgetPolicy

    def to_dict(self) -> dict[str, Any]:
        return {
            "estimate": self.estimate,
            "raw": self.raw,
            "usage_pct": self.usage_pct,
            "usage_pct_effective": self.usage_pct_effective,
            "remaining": self.remaining,
            "remaining_prompt": self.remaining_prompt,
            "is_warning": self.is_warning,
            "is_critical": self.is_critical,
            "is_ceiling_exceeded": self.is_ceiling_exceeded,
            "policy": self.policy.to_dict(),
        }


def tools_overhead(tools_tokens: int, policy: BudgetPolicy) -> int:
    """The real tool-schema size when known, else the default overhead (D.4.d)."""
    return tools_tokens if tools_tokens > 0 else policy.default_tools_overhead


def check_context(
    messages: Sequence[Message],
    policy: BudgetPolicy,
    system: str = "",
    tools_tokens: int = 0,
    *,
    counter: TokenCounter | None = None,
    active_window_start: Callable[[Sequence[Message]], int] | None = None,
) -> Metrics:
    """Estimate what the next request will cost and where it stands against the thresholds.

    ``active_window_start`` lets a host start the estimate after its last successful native
    compaction block [seed]; the messages before it stay in the list (replay bytes are kept).
    """
    counter = counter or _HEURISTIC
    counted = messages[active_window_start(messages):] if active_window_start else messages
    raw = counter.count_text(system) + counter.count_messages(counted) + tools_overhead(tools_tokens, policy)
    estimate = counter.apply_margin(raw)
    return Metrics(
        estimate=estimate,
        raw=raw,
        usage_pct=estimate / policy.window * 100,
        usage_pct_effective=estimate / policy.effective * 100,
        remaining=max(0, policy.window - estimate),
        remaining_prompt=max(0, policy.effective - estimate),
        is_warning=estimate >= policy.warning,
        is_critical=estimate >= policy.critical,
        is_ceiling_exceeded=estimate > policy.absolute_ceiling and policy.window > policy.absolute_ceiling,
        policy=policy,
    )


def fits(
    messages: Sequence[Message],
    policy: BudgetPolicy,
    system: str = "",
    tools_tokens: int = 0,
    *,
    counter: TokenCounter | None = None,
) -> bool:
    """The final, read-only fit check of the request path (D.10.k): no hook, no summary, no write.

    A request fits when its estimate is within the effective prompt budget (the window less
    the output reserve, bounded by a known input cap).
    """
    return check_context(messages, policy, system, tools_tokens, counter=counter).estimate <= policy.effective
