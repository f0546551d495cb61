"""Deterministic tool-result summarisation (context D.7).

A large tool result is replaced by a fact-preserving one-liner built only from the call's
arguments and the result itself (command, exit code, path, pattern, sizes): no model call,
nothing invented, and the same input always gives the same line. The same one-liners fill
"Completed Actions" in the LLM-free compaction summary (D.9).
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from typing import Any

from .budget import BudgetPolicy
from .masking import MASK_PREFIX
from .messages import (
    Message,
    call_index,
    content_text,
    dumps,
    image_count,
    iter_results,
    json_len,
    result_tool_name,
    tool_calls,
)
from .tokens import CHARS_PER_TOKEN, HeuristicCounter, TokenCounter

TRUNCATED_MARK = "…[truncated]"

# Tool name → category; hosts extend or override it with ``categories=``.
DEFAULT_CATEGORIES: dict[str, str] = {
    **dict.fromkeys(
        ("run_bash", "bash", "shell", "terminal", "exec", "run_command", "execute_command", "Bash"), "shell"
    ),
    **dict.fromkeys(("read_file", "file_read", "view", "cat", "Read"), "read"),
    **dict.fromkeys(
        ("write_file", "file_write", "edit_file", "apply_patch", "create_file", "str_replace",
         "Write", "Edit", "MultiEdit"),
        "write",
    ),
    **dict.fromkeys(("search_files", "grep", "rg", "ripgrep", "glob", "find_files", "Grep", "Glob"), "search"),
    **dict.fromkeys(("web_search", "web_fetch", "web_extract", "fetch_url", "WebSearch", "WebFetch"), "web"),
    **dict.fromkeys(("delegate_task", "subagent", "spawn_agent", "Task"), "delegate"),
    **dict.fromkeys(("note_save", "note_read", "note_search"), "memory"),
}

_EXIT_TEXT = re.compile(r"\b(?:exit[ _]code|returncode)\"?\s*[:=]\s*(-?\d+)", re.IGNORECASE)
_MATCHES_TEXT = re.compile(r"\b(?:total_count|matches|match_count|count)\"?\s*[:=]\s*(\d+)", re.IGNORECASE)


def tool_category(tool_name: str, categories: Mapping[str, str] | None = None) -> str:
    if categories and tool_name in categories:
        return categories[tool_name]
    if tool_name in DEFAULT_CATEGORIES:
        return DEFAULT_CATEGORIES[tool_name]
    return "memory" if tool_name.startswith("memory_") else "default"


def _first(args: dict[str, Any], *keys: str, default: Any = "?") -> Any:
    return next((args[k] for k in keys if args.get(k) not in (None, "")), default)


def _as_dict(content: Any) -> dict[str, Any] | None:
    if isinstance(content, dict):
        return content
    if isinstance(content, str) and content.lstrip().startswith("{"):
        try:
            parsed = json.loads(content)
        except ValueError:
            return None
        return parsed if isinstance(parsed, dict) else None
    return None


def exit_code(content: Any, text: str) -> str:
    """From ``exit_code`` / ``returncode`` keys, else an ``exit code: N`` pattern, else ``?``."""
    data = _as_dict(content)
    if data is not None:
        for key in ("exit_code", "returncode"):
            value = data.get(key)
            if isinstance(value, int) and not isinstance(value, bool):
                return str(value)
    match = _EXIT_TEXT.search(text)
    return match.group(1) if match else "?"


def _arg_preview(args: dict[str, Any]) -> str:
    parts = [f"{k}={(v if isinstance(v, str) else dumps(v))[:40]}" for k, v in list(args.items())[:2]]
    return " ".join(parts) if parts else "no arguments"


def one_liner(
    tool_name: str,
    args: dict[str, Any],
    content: Any,
    categories: Mapping[str, str] | None = None,
) -> str:
    """The D.7 template line for one call and its result.

    A result already masked (D.6) has no facts left to report; its placeholder, which names
    the recall tool and the ref id, stands in for them so a compaction summary keeps the way
    back to the original.
    """
    text = content_text(content)
    masked = text if isinstance(content, str) and text.startswith(MASK_PREFIX) else None
    chars = masked or f"{len(text):,} chars"
    category = tool_category(tool_name, categories)
    tag = f"[{tool_name}]"
    if category == "shell":
        command = str(_first(args, "command", "cmd", "script", default=""))[:120]
        lines = text.count("\n") + 1 if text.strip() else 0
        facts = masked or f"-> exit {exit_code(content, text)}, {lines:,} lines output"
        line = f"{tag} ran `{command}` {facts}"
    elif category == "read":
        path = _first(args, "path", "file_path", "file", "filename")
        start = _first(args, "start_line", "offset", "line", default=1)
        line = f"{tag} read {path} from line {start}, {chars}"
    elif category == "write":
        line = f"{tag} wrote {_first(args, 'path', 'file_path', 'file', 'filename')}, {chars}"
    elif category == "search":
        pattern = _first(args, "pattern", "query", "regex")
        path = _first(args, "path", "cwd", "directory", default=".")
        match = _MATCHES_TEXT.search(text)
        facts = masked or f"{match.group(1) if match else '?'} matches"
        line = f"{tag} searched `{pattern}` in {path}, {facts}"
    elif category == "web":
        line = f"{tag} looked up {_first(args, 'query', 'url', 'urls')}, {chars}"
    elif category == "delegate":
        task = str(_first(args, "task", "goal", "prompt", "description", default=""))[:100]
        line = f"{tag} delegated `{task}`, {chars}"
    elif category == "memory":
        action = _first(args, "action", default=tool_name)
        target = _first(args, "target", "key", "query", "name", default="")
        line = f"{tag} {action} {target}".rstrip() + (f" {masked}" if masked else "")
    else:
        line = f"{tag} called with {_arg_preview(args)}, {chars}"
    images = image_count(content)
    if images:
        line += f", {images} image payload(s) removed"
    return line


def _shrink_leaves(value: Any, limit: int) -> Any:
    if isinstance(value, str):
        return value[:limit] + TRUNCATED_MARK if len(value) > limit else value
    if isinstance(value, list):
        return [_shrink_leaves(v, limit) for v in value]
    if isinstance(value, dict):
        return {k: _shrink_leaves(v, limit) for k, v in value.items()}
    return value


def truncate_call_arguments(messages: list[Message], policy: BudgetPolicy) -> int:
    """Cut long string leaves of over-long tool-call arguments, keeping the JSON valid; in place."""
    changed = 0
    for message in messages:
        if message.get("role") != "assistant":
            continue
        touched = False
        content = message.get("content")
        for block in content if isinstance(content, list) else []:
            is_call = isinstance(block, dict) and block.get("type") == "tool_use"
            if is_call and json_len(block.get("input")) > policy.tool_args_max_chars:
                shrunk = _shrink_leaves(block.get("input"), policy.tool_arg_leaf_chars)
                touched |= shrunk != block.get("input")
                block["input"] = shrunk
        for call in message.get("tool_calls") or []:
            fn = call.get("function") if isinstance(call, dict) else None
            raw = fn.get("arguments") if isinstance(fn, dict) else None
            if not isinstance(raw, str) or len(raw) <= policy.tool_args_max_chars:
                continue
            try:
                parsed = json.loads(raw)
            except ValueError:
                continue  # not JSON: nothing can be cut while keeping it valid
            new = dumps(_shrink_leaves(parsed, policy.tool_arg_leaf_chars))
            if new != raw:
                fn["arguments"] = new
                touched = True
        changed += touched
    return changed


def _pending_skill_ids(messages: list[Message]) -> set[str]:
    """``use_skill`` calls of the newest assistant message: the model has not read them yet."""
    last = next((m for m in reversed(messages) if m.get("role") == "assistant"), None)
    return {c.id for c in tool_calls(last) if c.name == "use_skill"} if last else set()


def summarize_tool_results(
    messages: list[Message],
    policy: BudgetPolicy,
    *,
    categories: Mapping[str, str] | None = None,
    counter: TokenCounter | None = None,
) -> tuple[int, int, int]:
    """Replace large tool results by one-liners in place; return ``(n, before, after)`` tokens.

    ``n`` counts replaced results plus assistant messages whose arguments were cut.
    """
    counter = counter or HeuristicCounter()
    before = counter.count_messages(messages)
    calls = call_index(messages)
    pending = _pending_skill_ids(messages)
    seen: dict[str, str] = {}
    summarized = 0
    for slot in iter_results(messages):
        content = slot.content
        if isinstance(content, str) and len(content) < policy.min_tool_result_chars:
            continue
        rendered = dumps(content)
        tokens = len(rendered) // CHARS_PER_TOKEN
        if tokens <= policy.tool_summary_threshold or (slot.call_id in pending):
            continue
        if rendered in seen:
            head = f"[duplicate of tool result {seen[rendered]}]"
        else:
            seen[rendered] = slot.call_id or "?"
            call = calls.get(slot.call_id or "")
            head = one_liner(result_tool_name(slot, calls), call.args if call else {}, content, categories)
        slot.content = f"{head} [summarized from ~{tokens:,} tokens]"
        summarized += 1
    summarized += truncate_call_arguments(messages, policy)
    return summarized, before, counter.count_messages(messages)
