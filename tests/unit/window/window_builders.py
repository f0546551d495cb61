"""Message builders for the window tests, in both wire shapes."""

from __future__ import annotations

import json
from typing import Any

SHAPES = ("block", "openai")


def user(text: str, **extra: Any) -> dict[str, Any]:
    return {"role": "user", "content": text, **extra}


def assistant(text: str, **extra: Any) -> dict[str, Any]:
    return {"role": "assistant", "content": text, **extra}


def plain(n: int, size: int = 20, start: int = 0) -> list[dict[str, Any]]:
    """``n`` alternating user/assistant messages, the first a user message; ``seq`` from ``start``."""
    return [
        {"role": "user" if i % 2 == 0 else "assistant", "content": f"m{i:03d} " + "w" * size, "seq": start + i}
        for i in range(n)
    ]


def call(
    call_id: str, name: str = "run_bash", args: dict[str, Any] | None = None, shape: str = "block"
) -> dict[str, Any]:
    args = {"command": "ls"} if args is None else args
    if shape == "block":
        return {"role": "assistant", "content": [{"type": "tool_use", "id": call_id, "name": name, "input": args}]}
    return {
        "role": "assistant",
        "content": "",
        "tool_calls": [{"id": call_id, "type": "function", "function": {"name": name, "arguments": json.dumps(args)}}],
    }


def result(call_id: str, content: Any, name: str = "run_bash", shape: str = "block") -> dict[str, Any]:
    if shape == "block":
        return {"role": "user", "content": [{"type": "tool_result", "tool_use_id": call_id, "content": content}]}
    return {"role": "tool", "tool_call_id": call_id, "name": name, "content": content}


def pair(call_id: str, content: Any = "ok", name: str = "run_bash", args: dict[str, Any] | None = None,
         shape: str = "block") -> list[dict[str, Any]]:
    return [call(call_id, name, args, shape), result(call_id, content, name, shape)]


def result_content(message: dict[str, Any]) -> Any:
    """The content of the (single) tool result a message carries, in either shape."""
    if message.get("role") == "tool":
        return message["content"]
    return message["content"][0]["content"]


def pair_violations(messages: list[dict[str, Any]]) -> list[str]:
    """Results without an earlier call and calls without a result, in either shape."""
    called: set[str] = set()
    answered: set[str] = set()
    problems = []
    for message in messages:
        if message.get("role") == "assistant":
            content = message.get("content")
            for block in content if isinstance(content, list) else []:
                if isinstance(block, dict) and block.get("type") == "tool_use":
                    called.add(block["id"])
            for tc in message.get("tool_calls") or []:
                called.add(tc["id"])
        ids = []
        if message.get("role") == "tool":
            ids = [message.get("tool_call_id")]
        elif message.get("role") == "user" and isinstance(message.get("content"), list):
            blocks = [b for b in message["content"] if isinstance(b, dict) and b.get("type") == "tool_result"]
            ids = [b.get("tool_use_id") for b in blocks]
        for rid in ids:
            if rid not in called:
                problems.append(f"result without call: {rid}")
            if rid in answered:
                problems.append(f"duplicate result: {rid}")
            answered.add(rid)
    problems += [f"call without result: {cid}" for cid in sorted(called - answered)]
    return problems


class FakeSink:
    """In-memory ``ContextArtifactSink``."""

    def __init__(self) -> None:
        self.rows: list[dict] = []

    def upsert_context_artifact(self, *, session_id, kind, source_start_seq, source_end_seq, content, metadata,
                                token_count=None, model=None, provider=None) -> str:
        self.rows.append({"session_id": session_id, "kind": kind, "source_start_seq": source_start_seq,
                          "source_end_seq": source_end_seq, "content": content, "metadata": metadata,
                          "token_count": token_count, "model": model, "provider": provider})
        return f"art{len(self.rows)}"


class BrokenSink:
    def upsert_context_artifact(self, **kwargs) -> str:
        raise OSError("disk full")


class Recorder:
    """A summariser that records its calls and answers from a list (``None`` = failure)."""

    def __init__(self, *answers) -> None:
        self.answers = list(answers)
        self.calls: list[tuple[str, str, int]] = []

    def __call__(self, prompt: str, system: str, max_tokens: int) -> str | None:
        self.calls.append((prompt, system, max_tokens))
        answer = self.answers.pop(0) if self.answers else None
        if isinstance(answer, Exception):
            raise answer
        return answer
