"""Transcript importers: a host agent's session file -> neutral messages (memory §7, context §3.1).

Formats:

- ``messages``: a JSON array (or JSONL, one message per line) of neutral, OpenAI-style
  (``tool_calls`` / ``role: "tool"``) or Anthropic-style (content blocks) messages. An object
  ``{"messages": [...], "session_id": ...}`` is accepted too, as request bodies look like that.
- ``claude-code``: a Claude Code session file (``~/.claude/projects/<project>/<id>.jsonl``).
  ``user``/``assistant`` entries carry a ``message``; the streamed pieces of one assistant
  response (same ``message.id``) are joined into one message; meta entries (``isMeta``),
  sub-agent side chains (``isSidechain``) and every other entry type (``summary``,
  ``system``, ``file-history-snapshot``, ...) are skipped. Session id: ``sessionId``.
- ``codex``: a Codex CLI rollout file (``~/.codex/sessions/YYYY/MM/DD/rollout-*.jsonl``), both
  the current ``{timestamp, type, payload}`` envelope and the older bare-item lines.
  ``message``, ``function_call``/``custom_tool_call`` and their ``*_output`` items are kept;
  calls join the assistant message they follow (one round). ``reasoning`` items (encrypted,
  returned to the API byte for byte) are kept verbatim as opaque ``reasoning`` blocks of that
  round, so window maintenance can carry them like signed thinking; events are skipped.
  Session id: the ``session_meta`` payload's ``id`` (or the old header line's ``id``).
- ``auto`` picks one of the above from the content.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

from ragit.errors import input_invalid

FORMATS = ("auto", "messages", "claude-code", "codex")
_COMMAND = "session mirror"
_CODEX_ENVELOPES = frozenset({"session_meta", "response_item", "turn_context", "event_msg", "compacted"})
_CODEX_CALLS = frozenset({"function_call", "custom_tool_call", "local_shell_call"})
_CODEX_OUTPUTS = frozenset({"function_call_output", "custom_tool_call_output", "local_shell_call_output"})


@dataclass
class Transcript:
    """An imported transcript: the detected format, the session id and neutral messages."""

    format: str
    session_id: str | None
    messages: list[Any] = field(default_factory=list)


# ------------------------------------------------------------------ parsing


def _parse(text: str) -> tuple[list[Any], dict[str, Any] | None]:
    """Records of a JSON document or of JSONL; the second value is a ``{"messages": ...}`` wrapper."""
    stripped = text.strip()
    if not stripped:
        raise input_invalid("input", "invalid_json", "transcript is empty", command=_COMMAND)
    if stripped[0] in "[{":
        try:
            document = json.loads(stripped)
        except ValueError:
            document = None
        except RecursionError:
            raise input_invalid("input", "too_deep", "transcript nests too deeply", command=_COMMAND) from None
        if isinstance(document, list):
            return document, None
        if isinstance(document, dict):
            if isinstance(document.get("messages"), list):
                return document["messages"], document
            return [document], None
    records = []
    for number, line in enumerate(stripped.splitlines(), start=1):
        if not line.strip():
            continue
        try:
            records.append(json.loads(line))
        except RecursionError:
            raise input_invalid("input", "too_deep", f"transcript line {number} nests too deeply",
                                command=_COMMAND, line=number) from None
        except ValueError as exc:
            raise input_invalid(
                "input", "invalid_json", f"transcript line {number} is not JSON: {exc}", command=_COMMAND, line=number
            ) from None
    return records, None


def detect_format(records: list[Any]) -> str:
    """``codex``, ``claude-code`` or ``messages``, judged from the records' shapes."""
    for record in records:
        if not isinstance(record, dict):
            continue
        kind = _name(record.get("type"))
        if kind in _CODEX_ENVELOPES or kind in _CODEX_CALLS or kind in _CODEX_OUTPUTS:
            return "codex"
        if kind in ("user", "assistant") and isinstance(record.get("message"), dict):
            return "claude-code"
        content = record.get("content")
        if kind == "message" and isinstance(content, list) and any(
            isinstance(b, dict) and b.get("type") in ("input_text", "output_text") for b in content
        ):
            return "codex"
    return "messages"


# ------------------------------------------------------------------ neutral blocks


def _block(block: Any) -> Any:
    """One content block in neutral form (context §3.1)."""
    if not isinstance(block, dict):
        return block
    kind = block.get("type")
    if kind in ("input_text", "output_text"):
        return {"type": "text", "text": block.get("text", "")}
    if kind == "image_url":
        image = block.get("image_url")
        url = image.get("url") if isinstance(image, dict) else image
        return {"type": "image", "source": {"type": "url", "url": url}}
    if kind == "input_image":
        return {"type": "image", "source": {"type": "url", "url": block.get("image_url")}}
    if kind in ("thinking", "redacted_thinking"):
        return {**block, "opaque": True}
    if kind == "tool_result" and isinstance(block.get("content"), list):
        return {**block, "content": [_block(b) for b in block["content"]]}
    return block


def _content(content: Any) -> Any:
    return [_block(b) for b in content] if isinstance(content, list) else content


def _neutral_message(message: Any) -> Any:
    """A ``messages``-format entry in neutral form; non-dicts pass through (mirror skips them)."""
    if not isinstance(message, dict):
        return message
    out = dict(message)
    role = message.get("role")
    if role == "developer":
        out["role"] = "system"
    elif role == "function":  # legacy OpenAI function result
        out["role"] = "tool"
    if out.get("type") == "message":  # an Anthropic API response object
        del out["type"]
        if "stop_reason" in out and "finish_reason" not in out:
            out["finish_reason"] = out.pop("stop_reason")
    out["content"] = _content(message.get("content"))
    return out


def _text_only(blocks: list[Any]) -> Any:
    """Collapse a list of plain text blocks into one string; keep anything richer as blocks."""
    if blocks and all(isinstance(b, dict) and b.get("type") == "text" for b in blocks):
        return "\n".join(str(b.get("text", "")) for b in blocks)
    return blocks


# ------------------------------------------------------------------ claude code


def _claude_code(records: list[Any]) -> tuple[str | None, list[dict[str, Any]]]:
    session_id: str | None = None
    messages: list[dict[str, Any]] = []
    for entry in records:
        if not isinstance(entry, dict):
            continue
        if session_id is None and isinstance(entry.get("sessionId"), str):
            session_id = entry["sessionId"]
        message = entry.get("message")
        if entry.get("type") not in ("user", "assistant") or not isinstance(message, dict):
            continue
        if entry.get("isMeta") or entry.get("isSidechain"):
            continue
        role = message.get("role") if message.get("role") in ("user", "assistant") else entry["type"]
        content = _content(message.get("content"))
        response_id = message.get("id") if role == "assistant" else None
        previous = messages[-1] if messages else None
        if response_id and previous and previous.get("metadata", {}).get("message_id") == response_id:
            previous["content"] = _as_blocks(previous["content"]) + _as_blocks(content)
            if message.get("stop_reason"):
                previous["finish_reason"] = message["stop_reason"]
            continue
        neutral: dict[str, Any] = {"role": role, "content": content}
        if isinstance(entry.get("timestamp"), str):
            neutral["timestamp"] = entry["timestamp"]
        if role == "assistant" and message.get("stop_reason"):
            neutral["finish_reason"] = message["stop_reason"]
        metadata = {"uuid": entry.get("uuid"), "message_id": response_id, "model": message.get("model")}
        neutral["metadata"] = {k: v for k, v in metadata.items() if v is not None}
        messages.append(neutral)
    return session_id, messages


def _as_blocks(content: Any) -> list[Any]:
    if isinstance(content, list):
        return list(content)
    if content in (None, ""):
        return []
    return [{"type": "text", "text": str(content)}]


# ------------------------------------------------------------------ codex


def _codex_output(output: Any) -> Any:
    """The text of a call output; shell outputs are often JSON ``{"output": ..., "metadata": ...}``."""
    parsed = output
    if isinstance(output, str):
        try:
            parsed = json.loads(output)
        except (ValueError, RecursionError):  # not JSON (or too deep to be a shell result): text
            return output
    if isinstance(parsed, dict):
        for key in ("output", "content"):
            if isinstance(parsed.get(key), str):
                return parsed[key]
    return output if isinstance(output, str) else json.dumps(output, ensure_ascii=False)


def _name(value: Any) -> str | None:
    """A record's ``type`` (or an id) when it is a string; anything else (an object, an array, a
    number in a hand-edited or hostile file) names nothing and must not reach a set lookup."""
    return value if isinstance(value, str) else None


def _codex_call(item: dict[str, Any]) -> dict[str, Any]:
    kind = item.get("type")
    if kind == "custom_tool_call":
        arguments = item.get("input", "")
    elif kind == "local_shell_call":
        arguments = json.dumps(item.get("action", {}), ensure_ascii=False)
    else:
        arguments = item.get("arguments", "")
    name = _name(item.get("name")) or ("local_shell" if kind == "local_shell_call" else "")
    call_id = _name(item.get("call_id")) or _name(item.get("id")) or ""
    if not isinstance(arguments, str):
        arguments = json.dumps(arguments, ensure_ascii=False)
    return {"id": call_id, "type": "function", "function": {"name": name, "arguments": arguments}}


def _codex(records: list[Any]) -> tuple[str | None, list[dict[str, Any]]]:
    session_id: str | None = None
    messages: list[dict[str, Any]] = []
    names: dict[str, str] = {}
    for entry in records:
        if not isinstance(entry, dict):
            continue
        kind = _name(entry.get("type"))
        if kind == "session_meta":
            payload = entry.get("payload")
            if session_id is None and isinstance(payload, dict) and isinstance(payload.get("id"), str):
                session_id = payload["id"]
            continue
        if kind is None and "id" in entry and "timestamp" in entry:  # old header line
            session_id = session_id or (entry["id"] if isinstance(entry["id"], str) else None)
            continue
        item = entry.get("payload") if kind == "response_item" else entry
        if not isinstance(item, dict):
            continue
        timestamp = entry.get("timestamp")
        item_type = _name(item.get("type"))
        previous = messages[-1] if messages else None
        if item_type == "message":
            role = item.get("role")
            role = "system" if role == "developer" else role
            content = _text_only(_as_blocks(_content(item.get("content"))))
            if role == "assistant" and previous is not None and _reasoning_only(previous):
                previous["content"] = previous["content"] + _as_blocks(content)  # the round's answer
                continue
            message: dict[str, Any] = {"role": role, "content": content}
        elif item_type == "reasoning":
            block = {**item, "opaque": True}
            if previous is not None and previous["role"] == "assistant":
                previous["content"] = _as_blocks(previous["content"]) + [block]
                continue
            message = {"role": "assistant", "content": [block]}
        elif item_type in _CODEX_CALLS:
            call = _codex_call(item)
            names[call["id"]] = call["function"]["name"]
            if previous and previous["role"] == "assistant":
                previous.setdefault("tool_calls", []).append(call)
                continue
            message = {"role": "assistant", "content": "", "tool_calls": [call]}
        elif item_type in _CODEX_OUTPUTS:
            call_id = _name(item.get("call_id")) or ""
            message = {"role": "tool", "tool_call_id": call_id, "content": _codex_output(item.get("output"))}
            if call_id in names:
                message["name"] = names[call_id]
        else:
            continue
        if isinstance(timestamp, str):
            message["timestamp"] = timestamp
        messages.append(message)
    return session_id, messages


def _reasoning_only(message: dict[str, Any]) -> bool:
    """An assistant round that so far holds only reasoning: its answer message joins it."""
    content = message.get("content")
    return (message.get("role") == "assistant" and not message.get("tool_calls") and isinstance(content, list)
            and bool(content) and all(isinstance(b, dict) and b.get("type") == "reasoning" for b in content))


# ------------------------------------------------------------------ entry point


def import_transcript(text: str, fmt: str = "auto", session_id: str | None = None) -> Transcript:
    """Parse ``text`` as ``fmt`` and return its neutral messages in file order.

    ``session_id`` overrides the transcript's own id and is required when it has none
    (``INPUT_INVALID``, ``required``); unparseable input is ``INPUT_INVALID`` (``invalid_json``).
    """
    if fmt not in FORMATS:
        raise input_invalid("from", "not_one_of", f"unknown transcript format {fmt!r}", command=_COMMAND,
                            value=fmt, allowed=list(FORMATS))
    records, wrapper = _parse(text)
    chosen = "messages" if wrapper is not None and fmt == "auto" else fmt
    if chosen == "auto":
        chosen = detect_format(records)
    if chosen == "claude-code":
        own_id, messages = _claude_code(records)
    elif chosen == "codex":
        own_id, messages = _codex(records)
    else:
        own_id = None
        if wrapper is not None:
            candidate = wrapper.get("session_id", wrapper.get("sessionId"))
            own_id = candidate if isinstance(candidate, str) else None
        messages = [_neutral_message(m) for m in records]
    resolved = session_id if isinstance(session_id, str) and session_id.strip() else own_id
    if not resolved:
        raise input_invalid("session", "required", "the transcript has no session id; pass --session", command=_COMMAND)
    return Transcript(format=chosen, session_id=resolved, messages=messages)
