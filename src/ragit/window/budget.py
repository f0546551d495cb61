"""Budget policy (context D.3): every window-derived number in one frozen object.

Callers resolve a :class:`BudgetPolicy` instead of re-deriving percentages, so the health
check, admission guard, summarisation and compaction always agree on the same budget.
Percentages are of the effective prompt budget (window − output reserve, bounded by a known
input cap) [seed]; all arithmetic is integer so the published table holds exactly.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any

from .routes import DEFAULT_WINDOW, ModelCatalog, ModelRoute, ProviderCapabilities
from .tokens import CHARS_PER_TOKEN, SAFETY_MARGIN, ceil_margin

ABSOLUTE_CEILING = 200_000  # a local soft maintenance preference, not a provider cap [seed]
DEFAULT_TOOLS_OVERHEAD = 10_000
MAX_OUTPUT_RESERVE = 20_000
MIN_PROMPT_BUDGET = 8_000
DEFAULT_KEEP_RECENT = 10
AGGRESSIVE_KEEP_FLOOR = 3
TOOL_SUMMARY_PCT = 2
TOOL_RESULT_CAP_PCT = 5
NATIVE_COMPACTION_FLOOR = 50_000
SUMMARY_MIN_TOKENS = 2_000
SUMMARY_MAX_TOKENS = 12_000
SUMMARY_WINDOW_PCT = 5
SUMMARY_SOURCE_PCT = 20


@dataclass(frozen=True)
class Tier:
    name: str
    max_window: int | None
    warning_pct: int
    critical_pct: int
    keep_recent_cap: int | None


TIERS: tuple[Tier, ...] = (
    Tier("small", 256_000, 50, 90, 5),
    Tier("standard", 512_000, 70, 90, 8),
    Tier("large", None, 80, 90, None),
)


def tier_for(window: int) -> Tier:
    return next(t for t in TIERS if t.max_window is None or window <= t.max_window)


@dataclass(frozen=True)
class BudgetPolicy:
    """A resolved budget: derived values as fields, the fixed constants of D.3 as defaults."""

    route: ModelRoute
    window: int
    tier: Tier
    output_reserve: int
    effective: int
    warning: int
    critical: int
    tool_summary_threshold: int
    per_tool_result_cap: int
    native_compaction_trigger: int
    max_summary_tokens: int
    chars_per_token: int = CHARS_PER_TOKEN
    default_tools_overhead: int = DEFAULT_TOOLS_OVERHEAD
    safety_margin: float = SAFETY_MARGIN
    absolute_ceiling: int = ABSOLUTE_CEILING
    summary_input_max_chars: int = 6_000
    summary_input_head_chars: int = 4_000
    summary_input_tail_chars: int = 1_500
    tool_args_max_chars: int = 1_500
    tool_args_head_chars: int = 1_200
    tool_args_tail_chars: int = 300
    summary_attempts: int = 3
    tool_arg_leaf_chars: int = 200
    min_tool_result_chars: int = 200

    @property
    def model(self) -> str:
        return self.route.model

    @property
    def provider(self) -> str:
        return self.route.provider

    @property
    def estimated(self) -> bool:
        return self.route.estimated

    @property
    def input_cap(self) -> int | None:
        return self.route.input_cap

    @property
    def capabilities(self) -> ProviderCapabilities:
        return self.route.capabilities

    def apply_margin(self, tokens: int) -> int:
        return ceil_margin(tokens, self.safety_margin)

    def keep_recent(self, requested: int = DEFAULT_KEEP_RECENT) -> int:
        """``requested`` capped by the tier (small 5, standard 8, large uncapped)."""
        cap = self.tier.keep_recent_cap
        return requested if cap is None else min(requested, cap)

    def aggressive_keep_recent(self, requested: int = DEFAULT_KEEP_RECENT) -> int:
        return max(AGGRESSIVE_KEEP_FLOOR, self.keep_recent(requested) // 2)

    def summary_output_tokens(self, source_tokens: int | None = None) -> int:
        """Summary ``max_tokens``: the policy maximum, or 20 % of a known source, clamped alike."""
        if source_tokens is None:
            return self.max_summary_tokens
        target = max(0, source_tokens) * SUMMARY_SOURCE_PCT // 100
        return max(SUMMARY_MIN_TOKENS, min(target, self.max_summary_tokens))

    def to_dict(self) -> dict[str, Any]:
        return {
            "model": self.model,
            "provider": self.provider,
            "source": self.route.source,
            "estimated": self.estimated,
            "window": self.window,
            "tier": self.tier.name,
            "output_reserve": self.output_reserve,
            "input_cap": self.input_cap,
            "effective": self.effective,
            "warning": self.warning,
            "critical": self.critical,
            "warning_pct": self.tier.warning_pct,
            "critical_pct": self.tier.critical_pct,
            "keep_recent_cap": self.tier.keep_recent_cap,
            "tool_summary_threshold": self.tool_summary_threshold,
            "per_tool_result_cap": self.per_tool_result_cap,
            "native_compaction_trigger": self.native_compaction_trigger,
            "max_summary_tokens": self.max_summary_tokens,
        }


def _window_value(value: Any) -> int | None:
    """An integer window (≤ 0 becomes 1), or ``None`` for a non-integer value."""
    if isinstance(value, bool) or not isinstance(value, int):
        return None
    return max(1, value)


def policy_for_route(route: ModelRoute) -> BudgetPolicy:
    """Derive every D.3 number from one route."""
    window = _window_value(route.window)
    if window is None:
        route = replace(route, window=DEFAULT_WINDOW, estimated=True)
        window = DEFAULT_WINDOW
    elif window != route.window:
        route = replace(route, window=window)
    tier = tier_for(window)
    reserve = route.output_reserve
    if reserve is None:
        reserve = min(MAX_OUTPUT_RESERVE, max(window - MIN_PROMPT_BUDGET, 0))
    prompt = window - reserve
    if route.input_cap is not None:
        prompt = min(prompt, route.input_cap)
    effective = max(prompt, 1)
    warning = max(1, effective * tier.warning_pct // 100)
    critical = max(warning + 1, effective * tier.critical_pct // 100)
    return BudgetPolicy(
        route=route,
        window=window,
        tier=tier,
        output_reserve=reserve,
        effective=effective,
        warning=warning,
        critical=critical,
        tool_summary_threshold=max(1, effective * TOOL_SUMMARY_PCT // 100),
        per_tool_result_cap=max(1, window * TOOL_RESULT_CAP_PCT // 100),
        native_compaction_trigger=max(NATIVE_COMPACTION_FLOOR, warning),
        max_summary_tokens=max(SUMMARY_MIN_TOKENS, min(window * SUMMARY_WINDOW_PCT // 100, SUMMARY_MAX_TOKENS)),
    )


def resolve_budget(
    window: int | None = None,
    model: str | None = None,
    catalog: ModelCatalog | None = None,
    *,
    provider: str | None = None,
    source: str | None = None,
) -> BudgetPolicy:
    """The policy for a model (via ``catalog``) or an explicit window, which wins over the catalogue.

    Unknown model and no window → 200,000 with ``estimated=True`` (D.3.e). An explicit integer
    window is the caller's fact (``estimated=False``); a non-integer one falls back like a bad
    catalogue entry.
    """
    route = (catalog or ModelCatalog()).resolve(model or "unknown", provider, source)
    if window is not None:
        explicit = _window_value(window)
        route = replace(route, window=DEFAULT_WINDOW if explicit is None else explicit, estimated=explicit is None)
    return policy_for_route(route)
