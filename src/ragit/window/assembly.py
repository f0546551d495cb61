"""Cache-stable prompt assembly (context D.17).

The system prompt is a static prefix (stable bytes a provider can cache) and one dynamic
section behind the literal ``<dynamic_context>`` boundary. Per-turn facts (date, memory,
runtime rules) are assembled once, in the dynamic section; nothing is injected into the
history, which grows only by real turns, so each request's messages are an exact prefix of
the next request's [seed] (over reference code, which appended a per-round reminder).
Cache-marker placement belongs to provider adapters, not here.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from .routes import ModelRoute

BOUNDARY = "<dynamic_context>"
BOUNDARY_CLOSE = "</dynamic_context>"
IDENTITY_MAX_LINES = 40
MEMORY_MAX_LINES = 20
PATTERNS_MAX = 20
PATTERN_MAX_CHARS = 120
RUNTIME_MAX = 5


@dataclass(frozen=True)
class StaticLayers:
    """Cacheable layers, in prompt order; ``identity`` is used only when ``persona`` is on."""

    base: str = ""
    style: str = ""
    heuristics: str = ""
    identity: str = ""
    rules: str = ""
    persona: bool = True


@dataclass(frozen=True)
class DynamicLayers:
    """Per-turn layers. ``date`` (``YYYY-MM-DD``) defaults to the clock's UTC date;
    ``include_date`` overrides the route's capability; ``audit`` keeps the model card and date only."""

    model_card: str = ""
    guidance: str = ""
    surface: str = ""
    date: str | None = None
    include_date: bool | None = None
    project_memory: str = ""
    learned_patterns: tuple[str, ...] = ()
    runtime_insights: tuple[str, ...] = ()
    runtime_rules: tuple[str, ...] = ()
    user_context: str = ""
    audit: bool = False


@dataclass(frozen=True)
class PromptParts:
    static: str
    dynamic: str
    boundary: str
    text: str
    promote_dynamic_cache: bool

    def to_dict(self) -> dict[str, Any]:
        return {
            "static": self.static,
            "dynamic": self.dynamic,
            "boundary": self.boundary,
            "text": self.text,
            "promoteDynamicCache": self.promote_dynamic_cache,
        }


def _clean(text: str) -> str:
    """Layer text that cannot forge or close the boundary (exactly one marker per prompt)."""
    return text.replace(BOUNDARY, "<dynamic-context>").replace(BOUNDARY_CLOSE, "</dynamic-context>").strip()


def _head_lines(text: str, limit: int) -> str:
    return "\n".join(text.splitlines()[:limit])


def _tagged(tag: str, body: str) -> str:
    return f"<{tag}>\n{body}\n</{tag}>" if body else ""


def _bullets(items: tuple[str, ...], limit: int, max_chars: int | None = None) -> str:
    lines = [_clean(item)[:max_chars] if max_chars else _clean(item) for item in items if item.strip()]
    return "\n".join(f"- {line}" for line in lines[:limit])


def static_text(layers: StaticLayers) -> str:
    identity = _head_lines(_clean(layers.identity), IDENTITY_MAX_LINES) if layers.persona else ""
    parts = [_clean(layers.base), _clean(layers.style), _clean(layers.heuristics), identity, _clean(layers.rules)]
    return "\n\n".join(p for p in parts if p)


def dynamic_text(layers: DynamicLayers, route: ModelRoute | None = None) -> str:
    include_date = layers.include_date
    if include_date is None:
        include_date = route.capabilities.include_date if route is not None else True
    date = ""
    if include_date:
        if layers.date is None:
            from ..clock import now

            date = now().date().isoformat()
        else:
            date = _clean(layers.date)
    model_card = _tagged("model_card", _clean(layers.model_card))
    date_layer = f"<current_date>{date}</current_date>" if date else ""
    if layers.audit:
        parts = [model_card, date_layer]
    else:
        insights = _bullets(layers.runtime_insights, RUNTIME_MAX)
        rules = _bullets(layers.runtime_rules, RUNTIME_MAX)
        blocks = (f"Insights:\n{insights}" if insights else "", f"Rules:\n{rules}" if rules else "")
        runtime = "\n".join(block for block in blocks if block)
        parts = [
            model_card,
            _tagged("model_guidance", _clean(layers.guidance)),
            _tagged("surface", _clean(layers.surface)),
            date_layer,
            _tagged("project_memory", _head_lines(_clean(layers.project_memory), MEMORY_MAX_LINES)),
            _tagged("learned_patterns", _bullets(layers.learned_patterns, PATTERNS_MAX, PATTERN_MAX_CHARS)),
            _tagged("runtime_rules", runtime),
            _tagged("user_context", _clean(layers.user_context)),
        ]
    return "\n\n".join(p for p in parts if p)


def build_prompt(
    static_layers: StaticLayers, dynamic_layers: DynamicLayers, route: ModelRoute | None = None
) -> PromptParts:
    """Assemble the system prompt: static prefix, the boundary, then the closed dynamic section."""
    static = static_text(static_layers)
    dynamic = dynamic_text(dynamic_layers, route)
    text = f"{static}\n\n{BOUNDARY}\n{dynamic}\n{BOUNDARY_CLOSE}"
    return PromptParts(static, dynamic, BOUNDARY, text, promote_dynamic_cache=not static)
