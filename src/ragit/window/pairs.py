"""Pair-safe boundaries and pair repair (context D.8).

Providers reject a tool result without its call and a call without its result, so every
trim, compaction and prune cuts at a pair-safe boundary and repairs what it keeps. Repair
never mutates its input: changed messages are copies.
"""

from __future__ import annotations

from .messages import Message, ToolCall, call_ids, result_ids, tool_calls

ORPHAN_TOMBSTONE = "[tool result removed: its tool call is no longer in the conversation]"
MISSING_TOMBSTONE = "[tool result unavailable: removed during context maintenance]"


def _owner_index(messages: list[Message], index: int) -> int:
    """The message a result at ``index`` answers: the previous one, skipping its sibling tool messages."""
    owner = index - 1
    while owner >= 0 and messages[owner].get("role") == "tool":
        owner -= 1
    return owner


def _answers_previous(messages: list[Message], index: int) -> bool:
    ids = result_ids(messages[index])
    if not ids:
        return False
    owner = _owner_index(messages, index)
    return owner >= 0 and bool(set(ids) & set(call_ids(messages[owner])))


def find_safe_boundary(messages: list[Message], keep_recent: int) -> int:
    """Cut index for keeping the last ``keep_recent`` messages without splitting a call/result pair.

    Start at ``len − keep_recent`` (floor 0) and move back while the message there answers
    calls of the previous message [ref]. [ours] For the ``role: "tool"`` shape the previous
    message is the assistant before the batch of tool messages, so parallel results move too.
    """
    boundary = max(len(messages) - max(keep_recent, 0), 0)
    while 0 < boundary < len(messages) and _answers_previous(messages, boundary):
        boundary -= 1
    return boundary


def _tombstone_block(call_id: str) -> dict:
    return {"type": "tool_result", "tool_use_id": call_id, "content": MISSING_TOMBSTONE}


def _drop_orphans(messages: list[Message]) -> list[Message]:
    """Keep a result only if it answers an open call of the assistant message right before its batch.

    A batch is the assistant message, its ``role: "tool"`` messages and at most one user
    message; any other message closes it, so a late result counts as an orphan.
    """
    out: list[Message] = []
    open_ids: set[str] = set()
    for message in messages:
        role = message.get("role")
        if role == "assistant":
            open_ids = set(call_ids(message))
        elif role == "tool":
            rid = message.get("tool_call_id")
            if rid not in open_ids:
                continue  # orphan or duplicate tool message
            open_ids.discard(rid)
        else:
            if role == "user" and isinstance(message.get("content"), list) and result_ids(message):
                message = _keep_results(message, open_ids)
            open_ids = set()
        out.append(message)
    return out


def _keep_results(message: Message, open_ids: set[str]) -> Message:
    blocks = []
    for block in message["content"]:
        if isinstance(block, dict) and block.get("type") == "tool_result":
            if block.get("tool_use_id") not in open_ids:
                continue
            open_ids.discard(block["tool_use_id"])
        blocks.append(block)
    if len(blocks) == len(message["content"]):
        return message
    return {**message, "content": blocks or [{"type": "text", "text": ORPHAN_TOMBSTONE}]}


def _fill_missing(messages: list[Message]) -> list[Message]:
    """Insert a tombstone result right after the batch of every call that has none."""
    out: list[Message] = []
    index = 0
    while index < len(messages):
        message = messages[index]
        out.append(message)
        index += 1
        calls = tool_calls(message)
        if not calls:
            continue
        answered: set[str] = set()
        # the batch: tool messages, then at most one user message carrying results
        while index < len(messages) and messages[index].get("role") == "tool":
            answered.update(result_ids(messages[index]))
            out.append(messages[index])
            index += 1
        nxt = messages[index] if index < len(messages) else None
        if nxt is not None and nxt.get("role") == "user":
            answered.update(result_ids(nxt))
        out.extend(_tool_message(c) for c in calls if c.shape == "openai" and c.id not in answered)
        missing_blocks = [_tombstone_block(c.id) for c in calls if c.shape == "block" and c.id not in answered]
        if not missing_blocks:
            continue
        if nxt is not None and nxt.get("role") == "user":
            content = nxt.get("content")
            blocks = content if isinstance(content, list) else [{"type": "text", "text": content}] if content else []
            lead = [b for b in blocks if isinstance(b, dict) and b.get("type") == "tool_result"]
            rest = [b for b in blocks if not (isinstance(b, dict) and b.get("type") == "tool_result")]
            out.append({**nxt, "content": lead + missing_blocks + rest})
            index += 1
        else:
            out.append({"role": "user", "content": missing_blocks})
    return out


def _tool_message(call: ToolCall) -> Message:
    return {"role": "tool", "tool_call_id": call.id, "name": call.name, "content": MISSING_TOMBSTONE}


def repair_pairs(messages: list[Message]) -> list[Message]:
    """A copy of ``messages`` in which every result has its call and every call its result.

    Orphan and duplicate results are dropped (a user message left empty gets a tombstone text,
    keeping role alternation); calls without a result get a tombstone result in their shape.
    """
    return _fill_missing(_drop_orphans(messages))
