"""Observation masking (context D.6): stale tool results become one-line placeholders.

The cheapest relief there is: no model call, the call/result pairs stay intact, and with an
offload store the original is kept on disk first so the placeholder's recall hint works.
"""

from __future__ import annotations

from collections.abc import Collection

from ..config import DEFAULTS
from .messages import Message, call_index, iter_results, json_len, result_tool_name
from .offload import RECALL_TOOL_NAME, OffloadStore, is_safe_id
from .tokens import CHARS_PER_TOKEN

MASK_PREFIX = "[masked:"
MIN_MASK_CHARS = 200
KEEP_ROUNDS: int = DEFAULTS["window"]["observation_mask_keep_rounds"]
DEFAULT_EXEMPT = frozenset({"use_skill", "recall_tool_result", "tool_result_recall", "ask_user"})
DEFAULT_EXEMPT_PREFIXES = ("memory_",)


def is_exempt(tool_name: str, exempt: Collection[str], prefixes: tuple[str, ...]) -> bool:
    return tool_name in exempt or tool_name.startswith(prefixes)


def mask_stale_observations(
    messages: list[Message],
    keep_rounds: int = KEEP_ROUNDS,
    *,
    store: OffloadStore | None = None,
    exempt: Collection[str] = DEFAULT_EXEMPT,
    exempt_prefixes: tuple[str, ...] = DEFAULT_EXEMPT_PREFIXES,
    recall_tool_name: str = RECALL_TOOL_NAME,
) -> int:
    """Mask tool results older than the ``keep_rounds`` newest rounds, in place; return the count.

    The configured recall tool is always exempt as well, whatever its name.
    """
    assistants = [i for i, m in enumerate(messages) if m.get("role") == "assistant"]
    if len(assistants) <= keep_rounds:
        return 0
    cutoff = assistants[-keep_rounds] if keep_rounds > 0 else len(messages)
    calls = call_index(messages)
    masked = 0
    for slot in iter_results(messages):
        if slot.index >= cutoff:
            break
        name = result_tool_name(slot, calls)
        if name == recall_tool_name or is_exempt(name, exempt, exempt_prefixes):
            continue
        content = slot.content
        if isinstance(content, str) and (content.startswith(MASK_PREFIX) or len(content) < MIN_MASK_CHARS):
            continue
        tokens = json_len(slot.holder) // CHARS_PER_TOKEN
        ref = slot.call_id
        if store is not None and not slot.sensitive and ref and is_safe_id(ref) and not store.has(ref):
            store.write(ref, content)
        slot.content = f"{MASK_PREFIX} {tokens:,} tokens, use {recall_tool_name} if needed]"
        masked += 1
    return masked
