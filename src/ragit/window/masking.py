"""Observation masking (context D.6): stale tool results become one-line placeholders.

The cheapest relief there is: no model call, the call/result pairs stay intact, and with an
offload store the original is kept on disk first so the placeholder's recall hint works. The
placeholder names the recall tool (``window.recall_tool_name``, by default ragit's MCP tool
``tool_result_recall``) with the ref id and session to pass it; when no store kept the
original it says so instead of promising a recall that would fail.
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


def placeholder(tokens: int, ref_id: str | None, recall_tool_name: str = RECALL_TOOL_NAME,
                session_id: str | None = None) -> str:
    """The D.6 placeholder: how to get the original back (tool, ref id, session), or that it is gone.

    ``session_id`` is the offload store's session when the original is stored there; ``None``
    means nothing kept it (no store, or a sensitive result).
    """
    if session_id is not None and ref_id:
        return (f"{MASK_PREFIX} {tokens:,} tokens, use {recall_tool_name} with ref_id {ref_id} "
                f"(session {session_id}) if needed]")
    if ref_id:
        return (f"{MASK_PREFIX} {tokens:,} tokens, ref_id {ref_id}; the original was not stored, "
                f"so {recall_tool_name} cannot return it]")
    return f"{MASK_PREFIX} {tokens:,} tokens; the result had no call id, so it cannot be recalled]"


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
        stored_in = None
        if store is not None and not slot.sensitive and ref and is_safe_id(ref):
            if not store.has(ref):
                store.write(ref, content)
            stored_in = store.session_id
        slot.content = placeholder(tokens, ref, recall_tool_name, stored_in)
        masked += 1
    return masked
