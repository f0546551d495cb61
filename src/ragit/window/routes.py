"""Provider capabilities, model routes and the pluggable catalogue (context §3.1).

No window function branches on a provider name: what the reference tied to a vendor is a
capability flag, and the window a route has comes from a catalogue the host supplies.
A catalogue value, a client default and the unknown-route fallback are all marked
``estimated`` or by ``source``; none of them claims to be an account's server allowance [seed].
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from .messages import int_or_none

DEFAULT_WINDOW = 200_000


@dataclass(frozen=True)
class ProviderCapabilities:
    """What a route's provider does by itself; defaults describe a plain client-side route."""

    server_compaction: bool = False
    tool_result_clearing: bool = False
    max_cache_breakpoints: int = 4
    include_date: bool = True
    contract_known: bool = True
    allow_opaque_rewrite: bool = False


@dataclass(frozen=True)
class ModelRoute:
    """One (model, provider, source) route with its window facts.

    ``source`` is the access path (e.g. ``api`` or ``subscription``); ``reserve_is_planning_only``
    marks an output reserve that is only a local planning number (not sent to the provider);
    ``estimated`` marks a window that is a fallback rather than a catalogue fact.
    """

    model: str
    provider: str = "unknown"
    source: str = "default"
    window: int = DEFAULT_WINDOW
    input_cap: int | None = None
    output_reserve: int | None = None
    reserve_is_planning_only: bool = False
    estimated: bool = True
    capabilities: ProviderCapabilities = field(default_factory=ProviderCapabilities)


class ModelCatalog:
    """Routes by model name from host-supplied entries; unknown models get the 200K fallback.

    An entry is a mapping with any of ``provider``, ``source``, ``window``, ``input_cap``,
    ``output_reserve``, ``reserve_is_planning_only`` and ``capabilities`` (a
    :class:`ProviderCapabilities` or a mapping of its fields). A non-integer window is a bad
    entry: the route falls back to 200,000 and is marked ``estimated``.
    """

    def __init__(self, entries: Mapping[str, Mapping[str, Any]] | None = None) -> None:
        self._entries = dict(entries or {})

    def resolve(self, model: str, provider: str | None = None, source: str | None = None) -> ModelRoute:
        entry = self._entries.get(model)
        if entry is None:
            return ModelRoute(model=model, provider=provider or "unknown", source=source or "default")
        window = int_or_none(entry.get("window"))
        caps = entry.get("capabilities", ProviderCapabilities())
        if isinstance(caps, Mapping):
            caps = ProviderCapabilities(**caps)
        return ModelRoute(
            model=model,
            provider=provider or str(entry.get("provider", "unknown")),
            source=source or str(entry.get("source", "catalog")),
            window=DEFAULT_WINDOW if window is None else window,
            input_cap=int_or_none(entry.get("input_cap")),
            output_reserve=int_or_none(entry.get("output_reserve")),
            reserve_is_planning_only=bool(entry.get("reserve_is_planning_only", False)),
            estimated=window is None,
            capabilities=caps,
        )
