"""Tool-result admission (context D.5): one representation → offload → hard guard.

A tool result enters the conversation once, in one form: an MCP envelope that repeats its
structured value as text is reduced to the structured value (the raw envelope stays in the
receipt log as evidence), a large result goes to the offload store and leaves a summary
plus a recall hint, and whatever stays inline is bounded by the hard guard. Offloading runs
before the guard [seed] (over reference code), so a large result is recallable rather than
cut.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

from ..config import DEFAULTS
from .budget import BudgetPolicy, resolve_budget
from .events import TOOL_RESULT_OFFLOADED, EventBus, emit
from .messages import IMAGE_TYPES, dumps
from .offload import RECALL_TOOL_NAME, OffloadStore
from .tokens import CHARS_PER_TOKEN

MAX_TOOL_RESULT_TOKENS: int = DEFAULTS["window"]["max_tool_result_tokens"]
SUMMARY_MAX_CHARS = 400
STATUS_KEYS = ("task_id", "task_type", "status", "error_message", "tier")
_SUMMARY_SOURCES = ("text", "content", "message", "output")


@dataclass
class ModelFacing:
    """What the model sees for one tool result, and how it got there."""

    content: Any
    call_id: str
    tool_name: str
    offloaded: bool = False
    truncated: bool = False
    original_tokens: int = 0
    receipt: dict[str, Any] = field(default_factory=dict)

    @property
    def ref_id(self) -> str | None:
        return self.call_id if self.offloaded else None


def _text_values(content: Any) -> list[Any] | None:
    """The JSON values the text blocks of ``content`` carry, or ``None`` if any block is not one."""
    blocks = [content] if isinstance(content, str) else content
    if not isinstance(blocks, list):
        return None
    values = []
    for block in blocks:
        is_text = isinstance(block, dict) and block.get("type") == "text"
        text = block if isinstance(block, str) else block.get("text") if is_text else None
        if not isinstance(text, str):
            return None
        try:
            values.append(json.loads(text))
        except ValueError:
            return None
    return values


def one_representation(result: Any) -> Any:
    """Reduce an envelope carrying the same value in ``content`` and ``structuredContent``."""
    if not isinstance(result, dict) or "structuredContent" not in result or result.get("isError"):
        return result
    structured = result["structuredContent"]
    values = _text_values(result.get("content", []))
    if values is not None and all(v == structured for v in values):
        return structured
    return result


def image_blocks(value: Any) -> Any | None:
    """The image block(s) of an image result, or ``None`` when ``value`` is not one."""
    def is_image(block: Any) -> bool:
        return isinstance(block, dict) and block.get("type") in IMAGE_TYPES

    if is_image(value):
        return value
    blocks = value.get("content") if isinstance(value, dict) and "type" not in value else value
    if isinstance(blocks, list) and blocks and all(is_image(b) for b in blocks):
        return blocks
    return None


def extract_summary(value: Any, limit: int = SUMMARY_MAX_CHARS) -> str:
    """A short description of a result (D.5.c): its summary, first text, or keys and preview."""
    if isinstance(value, dict):
        if "summary" in value:
            summary = value["summary"]
            text = summary if isinstance(summary, str) else str(summary)
        else:
            text = next((value[k] for k in _SUMMARY_SOURCES if isinstance(value.get(k), str)), None)
            if text is None:
                text = f"keys={list(value)[:10]} preview={dumps(value)}"
    else:
        text = str(value)
    return text[:limit]


def serialise(value: Any) -> str:
    """``json(x)``, or ``str(x)`` for what JSON cannot express (D.5 step 2)."""
    try:
        return dumps(value)
    except (TypeError, ValueError):
        return str(value)


def recall_hint(ref_id: str, tokens: int, recall_tool_name: str = RECALL_TOOL_NAME,
                session_id: str | None = None) -> str:
    """Names the real recall tool, the ref id and (when known) the session it is stored under."""
    session = f' and session "{session_id}"' if session_id else ""
    return (
        f"The full result (~{tokens:,} tokens) was stored outside the conversation. "
        f'Call {recall_tool_name} with ref_id "{ref_id}"{session} if you need more than this summary.'
    )


def guard_limit(policy: BudgetPolicy, max_tool_result_tokens: int) -> int:
    """Inline limit: 5 % of the window in the small tier, else the setting (0 = none)."""
    return policy.per_tool_result_cap if policy.tier.name == "small" else max_tool_result_tokens


def hard_guard(value: Any, text: str, tokens: int, limit: int) -> Any | None:
    """The truncated stand-in for an over-limit inline result, or ``None`` when it fits."""
    if limit <= 0 or tokens <= limit:
        return None
    if isinstance(value, dict) and "summary" in value:
        kept = {"summary": extract_summary(value, limit * 4)}
        kept.update({k: value[k] for k in STATUS_KEYS if k in value})
        kept.update({"_truncated": True, "_original_tokens": tokens})
        return kept
    return {"_truncated": True, "_original_tokens": tokens, "preview": text[: limit * 4]}


def admit_tool_result(
    result: Any,
    *,
    call_id: str,
    tool_name: str,
    sensitive: bool = False,
    policy: BudgetPolicy | None = None,
    store: OffloadStore | None = None,
    events: EventBus | None = None,
    max_tool_result_tokens: int = MAX_TOOL_RESULT_TOKENS,
    recall_tool_name: str = RECALL_TOOL_NAME,
    receipt_log: list[dict[str, Any]] | None = None,
) -> ModelFacing:
    """Turn one raw tool result into its model-facing form (D.5 pipeline).

    ``sensitive`` results are never written to disk; ``store=None`` disables offloading;
    ``receipt_log`` (timeline / tool log) receives the raw result unchanged. Without a
    ``policy`` the unknown-route policy applies (200K, small tier: a 10,000-token inline limit).
    """
    receipt = {"call_id": call_id, "tool_name": tool_name, "result": result}
    if receipt_log is not None:
        receipt_log.append(receipt)
    value = one_representation(result)
    images = image_blocks(value)
    if images is not None:
        return ModelFacing(images, call_id, tool_name, receipt=receipt)
    text = serialise(value)
    tokens = len(text) // CHARS_PER_TOKEN
    if store is not None and not sensitive and tokens > store.threshold:
        masked = store.write(call_id, value)
        stub = {
            "_offloaded": True,
            "_ref_id": call_id,
            "_original_tokens": tokens,
            "summary": extract_summary(masked),
            "hint": recall_hint(call_id, tokens, recall_tool_name, store.session_id),
        }
        emit(events, TOOL_RESULT_OFFLOADED, {"ref_id": call_id, "original_tokens": tokens, "call_id": call_id})
        return ModelFacing(stub, call_id, tool_name, offloaded=True, original_tokens=tokens, receipt=receipt)
    limit = guard_limit(policy or resolve_budget(), max_tool_result_tokens)
    guarded = hard_guard(value, text, tokens, limit)
    if guarded is not None:
        return ModelFacing(guarded, call_id, tool_name, truncated=True, original_tokens=tokens, receipt=receipt)
    return ModelFacing(value, call_id, tool_name, original_tokens=tokens, receipt=receipt)
