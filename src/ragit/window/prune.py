"""Lossy pruning (context D.12) and the ``max_turns`` cap (D.10).

Pruning discards history, so it runs only at an explicit hard boundary [seed]; each function
returns a new, pair-repaired list and never mutates its input. Pair repair adds tombstone
results, which can outweigh a short result that was dropped, so every function checks the
outcome and keeps the input when pruning would not lower the token count: a prune never
increases it.
"""

from __future__ import annotations

from .budget import BudgetPolicy
from .messages import Message
from .pairs import repair_pairs
from .tokens import HeuristicCounter, TokenCounter

MAX_TURNS = 200


def _no_growth(original: list[Message], pruned: list[Message], counter: TokenCounter | None) -> list[Message]:
    """``pruned`` unless it counts more tokens than ``original``; then ``original``, pair-repaired
    (for a pair-valid history that is an unchanged copy)."""
    counter = counter or HeuristicCounter()
    return pruned if counter.count_messages(pruned) <= counter.count_messages(original) else repair_pairs(original)


def adaptive_prune(
    messages: list[Message], policy: BudgetPolicy, *, counter: TokenCounter | None = None
) -> list[Message]:
    """First message + last 2, plus middle messages newest-first while they fit the warning budget."""
    if len(messages) <= 3:
        return list(messages)
    counter = counter or HeuristicCounter()

    def size(message: Message) -> int:
        return counter.count_messages([message])

    first, middle, last = messages[0], messages[1:-2], messages[-2:]
    remaining = policy.warning - size(first) - sum(size(m) for m in last)
    kept: list[Message] = []
    if remaining >= 0:
        for message in reversed(middle):
            cost = size(message)
            if cost <= remaining:  # a message that does not fit is skipped; the scan goes on
                kept.append(message)
                remaining -= cost
    kept.reverse()
    return _no_growth(messages, repair_pairs([first, *kept, *last]), counter)


def prune_oldest(
    messages: list[Message], keep_recent: int = 10, *, counter: TokenCounter | None = None
) -> list[Message]:
    """First message + the last ``keep_recent`` (D.12.c); a list that short is returned unchanged."""
    if len(messages) <= keep_recent + 1:
        return list(messages)
    return _no_growth(messages, repair_pairs([messages[0], *messages[len(messages) - keep_recent:]]), counter)


def trim_to_max_turns(
    messages: list[Message], max_turns: int = MAX_TURNS, *, counter: TokenCounter | None = None
) -> list[Message]:
    """Keep the last ``2 × max_turns`` messages starting at a user message [ref]; else the input itself."""
    limit = 2 * max_turns
    if len(messages) <= limit:
        return messages
    kept = messages[len(messages) - limit:]
    start = next((i for i, m in enumerate(kept) if m.get("role") == "user"), 0)
    return _no_growth(messages, repair_pairs(kept[start:]), counter)
