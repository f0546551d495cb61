"""``context assemble``: cache-stable prompt assembly (D.17) and usage breakdown (D.18) from a payload.

Read-only, and deterministic for a given payload and clock (``RAGIT_NOW``): the static
prefix is stable bytes a provider can cache; per-turn facts live behind the one
``<dynamic_context>`` boundary. With ``memory`` the layered assembler (memory §6) supplies
the project memory layer, reading the repository and sessions.db without creating anything.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..contract.describe import _CWD, _FMT, _spec, register
from ..contract.inputs import Validator
from .commands_context import context_group
from .commands_window import (
    MODEL_SPEC,
    WINDOW_SPEC,
    breakdown_text,
    configured_counter,
    policy_options,
    resolve_policy,
)
from .common import common, input_option, resolve_root
from .output import Output

if TYPE_CHECKING:
    from ..window.assembly import DynamicLayers, StaticLayers
    from ..window.routes import ModelRoute

PAYLOAD_KEYS = ("static", "dynamic", "audit", "includeDate", "memory", "messages", "toolsTokens")
STATIC_KEYS = ("base", "style", "heuristics", "identity", "rules")
DYNAMIC_TEXT_KEYS = ("modelCard", "guidance", "surface", "projectMemory", "userContext")
DYNAMIC_KEYS = (*DYNAMIC_TEXT_KEYS, "learnedPatterns", "runtimeRules")
RUNTIME_KEYS = ("insights", "rules")
MEMORY_KEYS = ("sessionId", "subjectId")


def _string(v: Validator, value: Any, field: str) -> str:
    if not isinstance(value, str):
        raise v.fail(field, "not_string", f"{field} must be a string")
    return value


def _strings(v: Validator, value: Any, field: str) -> tuple[str, ...]:
    if not isinstance(value, list):
        raise v.fail(field, "not_string", f"{field} must be an array of strings")
    return tuple(_string(v, item, f"{field}[{i}]") for i, item in enumerate(value))


def _object(v: Validator, payload: dict[str, Any], key: str, allowed: tuple[str, ...], field: str) -> dict[str, Any]:
    return v.allowed_keys(payload[key], allowed, field) if key in payload else {}


def _messages(v: Validator, value: Any) -> list[dict[str, Any]]:
    """A transcript in any shape the ``messages`` importer takes, normalised like ``window check``'s."""
    from ..sessions.importers import import_transcript

    if not isinstance(value, list):
        raise v.fail("input.messages", "not_one_of", "input.messages must be an array of message objects")
    for i, message in enumerate(value):
        if not isinstance(message, dict):
            raise v.fail(f"input.messages[{i}]", "not_one_of", f"input.messages[{i}] must be a message object")
    if not value:
        return []
    return import_transcript(json.dumps(value, ensure_ascii=False), "messages", "assemble").messages


def _memory_ids(v: Validator, payload: dict[str, Any]) -> tuple[str, str] | None:
    """``(sessionId, subjectId)`` of ``input.memory`` (each optional), or None without it."""
    if "memory" not in payload:
        return None
    memory = v.allowed_keys(payload["memory"], MEMORY_KEYS, "input.memory")
    return tuple(v.text(memory[k], f"input.memory.{k}") if k in memory else "" for k in MEMORY_KEYS)


def _project_memory(root: Path, ids: tuple[str, str]) -> str:
    """The layered assembler's ``_llm_summary`` (default loaders over the repository and sessions.db)."""
    from ..memory.layered import assemble

    return assemble(*ids, root=root)["_llm_summary"]


def _layers(payload: dict[str, Any], route: ModelRoute, v: Validator) -> tuple[StaticLayers, DynamicLayers]:
    """Validated static and dynamic layers (project memory left to the caller)."""
    from ..window.assembly import DynamicLayers, StaticLayers

    static = _object(v, payload, "static", STATIC_KEYS, "input.static")
    dynamic = _object(v, payload, "dynamic", DYNAMIC_KEYS, "input.dynamic")
    runtime = _object(v, dynamic, "runtimeRules", RUNTIME_KEYS, "input.dynamic.runtimeRules")
    texts = {k: _string(v, dynamic[k], f"input.dynamic.{k}") for k in DYNAMIC_TEXT_KEYS if k in dynamic}
    include_date = route.capabilities.include_date
    if "includeDate" in payload:
        include_date = v.boolean(payload["includeDate"], "input.includeDate")
    return (
        StaticLayers(**{k: _string(v, static[k], f"input.static.{k}") for k in STATIC_KEYS if k in static}),
        DynamicLayers(
            model_card=texts.get("modelCard", ""), guidance=texts.get("guidance", ""),
            surface=texts.get("surface", ""), project_memory=texts.get("projectMemory", ""),
            user_context=texts.get("userContext", ""),
            learned_patterns=_strings(v, dynamic.get("learnedPatterns", []), "input.dynamic.learnedPatterns"),
            runtime_insights=_strings(v, runtime.get("insights", []), "input.dynamic.runtimeRules.insights"),
            runtime_rules=_strings(v, runtime.get("rules", []), "input.dynamic.runtimeRules.rules"),
            include_date=include_date,
            audit=v.boolean(payload["audit"], "input.audit") if "audit" in payload else False,
        ),
    )


def _tools_tokens(v: Validator, payload: dict[str, Any]) -> int:
    value = payload.get("toolsTokens", 0)
    if isinstance(value, bool) or not isinstance(value, int):
        raise v.fail("input.toolsTokens", "not_integer", "input.toolsTokens must be an integer ≥ 0")
    if value < 0:
        raise v.fail("input.toolsTokens", "out_of_range", "input.toolsTokens must be ≥ 0", value=value)
    return value


@context_group.command("assemble")
@input_option
@policy_options
@common
def assemble_cmd(input_, window, model, format_, cwd) -> Output:
    """Assemble the system prompt (static prefix, dynamic section) and the context usage breakdown."""
    from dataclasses import replace

    from ..config import load_config
    from ..contract.inputs import load_json_input
    from ..contract.limits import FILE_LIMIT_BYTES
    from ..contract.render import header
    from ..security.masking import mask_value
    from ..window.assembly import build_prompt
    from ..window.usage import breakdown

    v = Validator("context assemble")
    if input_ is None:
        raise v.fail("--input", "required", "context assemble needs --input <path|->")
    policy = resolve_policy(window, model, v)
    root, _ = resolve_root(cwd)
    # its messages are a transcript: the file limit, not the request payload limit
    payload = v.allowed_keys(load_json_input(input_, root, v, limit=FILE_LIMIT_BYTES), PAYLOAD_KEYS)
    payload = mask_value(payload)[0]  # caller text becomes prompt output: secrets masked (knowledge §10.2)
    static_layers, dynamic_layers = _layers(payload, policy.route, v)
    memory_ids = _memory_ids(v, payload)
    messages = _messages(v, payload["messages"]) if "messages" in payload else None
    tools_tokens = _tools_tokens(v, payload)
    config = load_config(root)
    counter, counter_name, warnings = configured_counter(config)
    if memory_ids is not None and not dynamic_layers.project_memory.strip():
        dynamic_layers = replace(dynamic_layers, project_memory=_project_memory(root, memory_ids))

    parts = build_prompt(static_layers, dynamic_layers, policy.route)
    usage = None
    if messages is not None:
        # the boundary markup is sent too: it counts with the dynamic part, so the parts sum to D.4's raw
        usage = breakdown(messages, parts.static, parts.text[len(parts.static):], tools_tokens, policy,
                          counter=counter)
    data = {**parts.to_dict(), "breakdown": usage, "counter": counter_name, "warnings": warnings}

    def text() -> str:
        lines = header("context assemble", [
            ("static_chars", len(data["static"])), ("dynamic_chars", len(data["dynamic"])),
            ("promote_dynamic_cache", data["promoteDynamicCache"]), ("counter", data["counter"]),
        ], warnings)
        usage_lines = [""] + breakdown_text(usage) if usage is not None else []
        return "\n".join(lines + usage_lines + ["", "## Prompt", data["text"]]) + "\n"

    return Output("context assemble", data, text, warnings, cwd=str(root))


register(_spec(
    "context assemble", "Assemble a cache-stable system prompt (static prefix, one dynamic section) and its "
    "context usage breakdown.",
    related=["window check", "context pack"], mutating=False, raw_json=True,
    outputs=["static", "dynamic", "boundary", "text", "promoteDynamicCache", "breakdown", "counter", "warnings"],
    options=[{"name": "--input", "type": "path", "required": True,
              "description": "Payload JSON (static, dynamic, audit, includeDate, memory, messages, toolsTokens)."},
             WINDOW_SPEC, MODEL_SPEC, _FMT, _CWD],
    examples=["ragit context assemble --input prompt.json",
              "ragit context assemble --input prompt.json --window 128000 --format text"],
    errors=["INPUT_INVALID", "CONFIG_INVALID"], formats=("json", "json"),
))
