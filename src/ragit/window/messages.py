"""Neutral messages in both wire shapes (context §3.1).

Every window function reads tool calls and results through these helpers, so the block
shape (``tool_use`` / ``tool_result`` blocks) and the ``tool_calls`` + ``role: "tool"``
shape behave alike everywhere and no caller branches on a provider.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

Message = dict[str, Any]

IMAGE_TYPES = frozenset({"image", "image_url", "input_image"})
PATH_ARG_KEYS = ("path", "file_path", "file", "filename")


_ENCODER = json.JSONEncoder(ensure_ascii=False)  # built once: sizing calls this per block


def dumps(value: Any) -> str:
    """``json(x)`` of the spec: ``ensure_ascii=False``, default separators, ``str`` fallback."""
    try:
        return _ENCODER.encode(value)
    except (TypeError, ValueError):
        return json.dumps(value, ensure_ascii=False, default=str)


def int_or_none(value: Any) -> int | None:
    """``value`` when it is an int (not a bool), else None: seqs and counts read from JSON."""
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def json_len(value: Any) -> int:
    return len(dumps(value))


@dataclass(frozen=True)
class ToolCall:
    """One tool call; ``args`` is the parsed argument object (``{}`` when unparsable)."""

    id: str
    name: str
    args: dict[str, Any]
    shape: str  # "block" | "openai"


def parse_args(raw: Any) -> dict[str, Any]:
    """Tool arguments as a dict: OpenAI sends a JSON string, the block shape a dict."""
    if isinstance(raw, dict):
        return raw
    if isinstance(raw, str) and raw.strip():
        try:
            parsed = json.loads(raw)
        except ValueError:
            return {}
        return parsed if isinstance(parsed, dict) else {}
    return {}


def shape_problem(message: Message) -> str | None:
    """Why a message's fields have types no transcript format uses (the window toolkit reads them
    as such), or None. A wrong type is malformed input, not something to guess around."""
    for key in ("role", "tool_call_id", "name"):
        if key in message and message[key] is not None and not isinstance(message[key], str):
            return f"{key} must be a string"
    content = message.get("content")
    if isinstance(content, list):
        for j, block in enumerate(content):
            if not isinstance(block, dict):
                if isinstance(block, str):
                    continue
                return f"content[{j}] must be an object or a string"
            if "type" in block and not isinstance(block["type"], str):
                return f"content[{j}].type must be a string"
    elif content is not None and not isinstance(content, (str, dict)):
        return "content must be a string, an array of blocks or null"
    calls = message.get("tool_calls")
    if calls is not None:
        if not isinstance(calls, list) or not all(isinstance(c, dict) for c in calls):
            return "tool_calls must be an array of objects"
    return None


def tool_calls(message: Message) -> list[ToolCall]:
    """Tool calls an assistant message makes, in order, in either shape."""
    if message.get("role") != "assistant":
        return []
    calls: list[ToolCall] = []
    content = message.get("content")
    if isinstance(content, list):
        for block in content:
            if isinstance(block, dict) and block.get("type") == "tool_use" and isinstance(block.get("id"), str):
                name = str(block.get("name") or "")
                calls.append(ToolCall(block["id"], name, parse_args(block.get("input")), "block"))
    for call in message.get("tool_calls") or []:
        if isinstance(call, dict) and isinstance(call.get("id"), str):
            fn = call.get("function") if isinstance(call.get("function"), dict) else {}
            calls.append(ToolCall(call["id"], str(fn.get("name") or ""), parse_args(fn.get("arguments")), "openai"))
    return calls


def call_ids(message: Message) -> list[str]:
    return [call.id for call in tool_calls(message)]


def result_ids(message: Message) -> list[str]:
    """Ids answered by a message: ``tool_result`` blocks of a user message or a tool message."""
    if message.get("role") == "tool":
        rid = message.get("tool_call_id")
        return [rid] if isinstance(rid, str) else []
    content = message.get("content")
    if message.get("role") != "user" or not isinstance(content, list):
        return []
    return [
        b["tool_use_id"]
        for b in content
        if isinstance(b, dict) and b.get("type") == "tool_result" and isinstance(b.get("tool_use_id"), str)
    ]


@dataclass
class ResultSlot:
    """A tool result wherever it lives: ``holder["content"]`` is its content.

    ``holder`` is the ``tool_result`` block (block shape) or the ``role: "tool"`` message
    (OpenAI shape); it is also what the spec sizes as ``json(block)``.
    """

    call_id: str | None
    holder: dict[str, Any]
    index: int  # message index
    name: str | None  # name carried by the result itself (OpenAI shape)

    @property
    def content(self) -> Any:
        return self.holder.get("content", "")

    @content.setter
    def content(self, value: Any) -> None:
        self.holder["content"] = value

    @property
    def sensitive(self) -> bool:
        return bool(self.holder.get("sensitive"))


def iter_results(messages: list[Message]) -> Iterator[ResultSlot]:
    """Every tool result in message order, in either shape."""
    for index, message in enumerate(messages):
        role = message.get("role")
        if role == "tool":
            rid = message.get("tool_call_id")
            yield ResultSlot(rid if isinstance(rid, str) else None, message, index, message.get("name"))
        elif role == "user" and isinstance(message.get("content"), list):
            for block in message["content"]:
                if isinstance(block, dict) and block.get("type") == "tool_result":
                    rid = block.get("tool_use_id")
                    yield ResultSlot(rid if isinstance(rid, str) else None, block, index, None)


def call_index(messages: list[Message]) -> dict[str, ToolCall]:
    """Tool call id → call, over the whole list (later duplicates win)."""
    index: dict[str, ToolCall] = {}
    for message in messages:
        for call in tool_calls(message):
            index[call.id] = call
    return index


def result_tool_name(slot: ResultSlot, calls: dict[str, ToolCall]) -> str:
    """The tool that produced a result: from its call, else the name the result carries."""
    call = calls.get(slot.call_id or "")
    if call is not None and call.name:
        return call.name
    return str(slot.name or "unknown")


def text_of(message: Message) -> str:
    """The plain text of a message: string content or its text blocks joined by newlines."""
    content = message.get("content")
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        parts = []
        for block in content:
            if isinstance(block, str):
                parts.append(block)
            elif isinstance(block, dict) and block.get("type") == "text" and isinstance(block.get("text"), str):
                parts.append(block["text"])
        return "\n".join(parts)
    return ""


def content_text(content: Any) -> str:
    """Readable text of a tool result's content (strings, text parts, else JSON)."""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        parts: list[str] = []
        for part in content:
            if isinstance(part, str):
                parts.append(part)
            elif isinstance(part, dict) and isinstance(part.get("text"), str):
                parts.append(part["text"])
        return "\n".join(parts)
    if content is None:
        return ""
    return dumps(content)


def image_count(content: Any) -> int:
    if isinstance(content, list):
        return sum(1 for p in content if isinstance(p, dict) and p.get("type") in IMAGE_TYPES)
    return 0


# Model reasoning the provider signs or encrypts: Anthropic ``thinking`` / ``redacted_thinking``
# blocks and Codex (OpenAI Responses) ``reasoning`` items. A provider accepts them back only
# byte for byte, and may drop them from earlier turns, so maintenance carries them verbatim
# instead of treating the whole history as opaque.
THINKING_TYPES = frozenset({"thinking", "redacted_thinking", "reasoning"})


def is_opaque_block(block: Any) -> bool:
    return isinstance(block, dict) and block.get("opaque") is True


def is_thinking_block(block: Any) -> bool:
    """A signed or encrypted reasoning block (kept verbatim by compaction, context §3.3)."""
    return isinstance(block, dict) and block.get("type") in THINKING_TYPES


def is_history_opaque(block: Any) -> bool:
    """An opaque block other than thinking, e.g. a native compaction block: text replacement
    and forced pruning would corrupt the provider state it encodes (D.9 ``opaque_history``)."""
    return is_opaque_block(block) and not is_thinking_block(block)


def has_opaque(message: Message) -> bool:
    """Whether ``message`` holds an opaque block that makes the history opaque (not thinking)."""
    content = message.get("content")
    return isinstance(content, list) and any(is_history_opaque(b) for b in content)


def thinking_blocks(message: Message) -> list[dict[str, Any]]:
    """The thinking blocks of ``message``, in order (the very objects, never copies)."""
    content = message.get("content")
    return [b for b in content if is_thinking_block(b)] if isinstance(content, list) else []


# Fields of a thinking block that carry the provider's signature or ciphertext: not text, never
# a secret, and any change (a masking false positive in base64) makes the block unusable.
THINKING_PAYLOAD_KEYS = ("signature", "encrypted_content", "data")


def mask_messages(messages: list[Any]) -> list[Any]:
    """A secret-masked copy of ``messages`` for output that leaves thinking payloads byte for byte.

    Every string is masked as usual (a thinking block's readable text too, so a secret the
    model thought about never leaks); only the signature / ciphertext fields are restored.
    """
    from ..security.masking import mask_value

    masked, _, _ = mask_value(messages)
    for original, copy in zip(messages, masked, strict=True):
        if not isinstance(original, dict) or not isinstance(original.get("content"), list):
            continue
        for block, out in zip(original["content"], copy["content"], strict=True):
            if is_thinking_block(block):
                out.update({key: block[key] for key in THINKING_PAYLOAD_KEYS if key in block})
    return masked


def opaque_types(messages: list[Message]) -> list[str]:
    """Sorted types of the history-opaque blocks in ``messages`` (for a refusal's explanation)."""
    return sorted({
        str(b.get("type") or "?")
        for m in messages if isinstance(m.get("content"), list)
        for b in m["content"] if is_history_opaque(b)
    })


def is_original_input(message: Message) -> bool:
    return message.get("role") == "user" and message.get("original_user_input") is True


def path_args(args: dict[str, Any]) -> list[str]:
    """Path-like argument values (``path``, ``file_path``, ``file``, ``filename``)."""
    return [args[k] for k in PATH_ARG_KEYS if isinstance(args.get(k), str) and args[k]]


def _has_calls(message: Message) -> bool:
    if message.get("role") != "assistant":
        return False
    content = message.get("content")
    return bool(message.get("tool_calls")) or (
        isinstance(content, list) and any(isinstance(b, dict) and b.get("type") == "tool_use" for b in content)
    )


def protected_indices(messages: list[Message]) -> list[int]:
    """Messages compaction must keep (D.9 step 1), ascending.

    The latest ``original_user_input`` message, every message with a history-opaque block, and
    the last tool batch's ``use_skill`` call with its result (the model may not have applied it
    yet). Thinking blocks are not protected here: compaction carries them forward verbatim.
    """
    protected = {i for i, m in enumerate(messages) if has_opaque(m)}
    original = next((i for i in range(len(messages) - 1, -1, -1) if is_original_input(messages[i])), None)
    if original is not None:
        protected.add(original)
    batch = next((i for i in range(len(messages) - 1, -1, -1) if _has_calls(messages[i])), None)
    if batch is not None:
        skills = {c.id for c in tool_calls(messages[batch]) if c.name == "use_skill"}
        if skills:
            protected.add(batch)
            protected.update(batch + slot.index for slot in iter_results(messages[batch:]) if slot.call_id in skills)
    return sorted(protected)
