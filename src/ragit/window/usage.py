"""Context usage breakdown (context D.18) [ours]: where the estimate's tokens go.

Parts are computed cumulatively within the two groups the health check floors separately
(system text, messages): each part is the counter's count of everything up to it minus the
count of everything before it. So the parts add up exactly to the D.4 ``raw`` estimate,
with no rounding residue to explain away.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from .budget import BudgetPolicy
from .health import tools_overhead
from .messages import Message, protected_indices, thinking_blocks
from .tokens import HeuristicCounter, TokenCounter, UnitCounter

_HEURISTIC = HeuristicCounter()


def _is_result(block: Any) -> bool:
    return isinstance(block, dict) and block.get("type") == "tool_result"


def split_by_role(messages: Sequence[Message]) -> tuple[list[Message], list[Message], list[Message]]:
    """User, assistant and tool-result parts; a user message's result blocks count as results.

    Any other role (e.g. a system message inside the list) counts with the user part.
    """
    user: list[Message] = []
    assistant: list[Message] = []
    results: list[Message] = []
    for message in messages:
        role = message.get("role")
        if role == "assistant":
            assistant.append(message)
            continue
        if role == "tool":
            results.append(message)
            continue
        content = message.get("content")
        if not isinstance(content, list):
            user.append(message)
            continue
        found = [b for b in content if _is_result(b)]
        if not found:
            user.append(message)
            continue
        results.append({**message, "content": found})
        if len(found) < len(content):
            user.append({**message, "content": [b for b in content if not _is_result(b)]})
    return user, assistant, results


def message_parts(counter: TokenCounter, groups: list[list[Message]]) -> list[int]:
    """Cumulative counts of consecutive groups (they sum to the count of all of them).

    ragit's counters measure additive units and do this in one pass; any other
    :class:`TokenCounter` is asked for the count of each growing prefix.
    """
    if isinstance(counter, UnitCounter):
        return counter.count_message_parts(groups)
    parts, prefix, previous = [], [], 0
    for group in groups:
        prefix += group
        current = counter.count_messages(prefix)
        parts.append(current - previous)
        previous = current
    return parts


def breakdown(
    messages: Sequence[Message],
    system_static: str,
    system_dynamic: str,
    tools_tokens: int,
    policy: BudgetPolicy,
    *,
    counter: TokenCounter | None = None,
) -> dict[str, Any]:
    """Token counts per part, ``pinned`` (informational, inside the message parts), ``free`` and ``pct``.

    The system text is ``system_static + system_dynamic``, as :func:`check_context` sees it.
    """
    counter = counter or _HEURISTIC
    static = counter.count_text(system_static)
    dynamic = counter.count_text(system_static + system_dynamic) - static
    tools = tools_overhead(tools_tokens, policy)
    user, assistant, results = split_by_role(messages)
    counts = message_parts(counter, [user, assistant, results])
    parts = dict(zip(("user", "assistant", "tool_results"), counts, strict=True))
    raw = static + dynamic + tools + sum(parts.values())
    protected = set(protected_indices(list(messages)))
    # compaction keeps protected messages whole and every other message's thinking blocks verbatim
    pinned_list = [messages[i] for i in sorted(protected)] + [
        {"role": "assistant", "content": blocks}
        for i, m in enumerate(messages) if i not in protected and (blocks := thinking_blocks(m))
    ]
    pinned = counter.count_messages(pinned_list) if pinned_list else 0
    free = max(0, policy.effective - counter.apply_margin(raw))

    def pct(value: int) -> float:
        return value / policy.effective * 100

    return {
        "system_static": static,
        "system_dynamic": dynamic,
        "tools": tools,
        "messages": parts,
        "pinned": pinned,
        "free": free,
        "pct": {
            "system_static": pct(static),
            "system_dynamic": pct(dynamic),
            "tools": pct(tools),
            "messages": {k: pct(v) for k, v in parts.items()},
            "pinned": pct(pinned),
            "free": pct(free),
        },
    }
