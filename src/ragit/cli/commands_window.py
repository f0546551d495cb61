"""``window check | compact | recall``: the window toolkit over a transcript file (context §3.3).

The transcript may be in any format ``session mirror`` imports and may lie outside the
repository. ``check`` is read-only; ``compact`` runs one maintenance pass with the LLM-free
default summary and writes only when given ``--session`` (the ``compaction_summary``
artifact to sessions.db, masked originals to the offload store so the masking placeholders'
recall hint works); ``recall`` reads ``window.offload_dir/<session>/<ref>.json``.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click

from ..contract.describe import _CWD, _FMT, _spec, register
from ..contract.inputs import Validator
from .commands_session import (
    FROM_SPEC,
    TRANSCRIPT_SPEC,
    from_option,
    load_transcript,
    transcript_option,
)
from .common import common, resolve_root
from .app import cli
from .output import Output

if TYPE_CHECKING:
    from ..config import Config
    from ..window.budget import BudgetPolicy
    from ..window.tokens import TokenCounter

DEFAULT_KEEP_RECENT = 8
# import_transcript wants a session id; the window commands use one only with --session.
_UNNAMED_SESSION = "transcript"


@cli.group("window")
def window_group() -> None:
    """Context-window health, maintenance and offloaded tool results."""


def policy_options(f: Callable) -> Callable:
    f = click.option("--model", default=None, metavar="MODEL", help="Model whose window sets the policy.")(f)
    return click.option("--window", default=None, metavar="TOKENS", help="Context window in tokens.")(f)


def resolve_policy(window: str | None, model: str | None, v: Validator) -> BudgetPolicy:
    """The D.3 policy of ``--window`` / ``--model`` (an explicit window wins; neither → 200,000)."""
    from ..window.budget import resolve_budget

    size = None if window is None else v.cli_positive_int(window, "--window")
    name = None if model is None else v.text(model, "--model")
    return resolve_budget(window=size, model=name)


def configured_counter(config: Config) -> tuple[TokenCounter, str, list[str]]:
    """``window.token_counter``, its id as actually used (``heuristic`` on fallback), and warnings."""
    from ..window.tokens import get_counter

    name = config.get("window.token_counter")
    counter, warning = get_counter(name)
    return counter, name if warning is None else "heuristic", [warning] if warning else []


def window_messages(input_: str | None, from_: str | None, session: str | None, root: Path,
                    v: Validator) -> list[dict[str, Any]]:
    """The transcript's messages; an entry that is not a message object makes it malformed."""
    from ..window.messages import shape_problem

    transcript = load_transcript(input_, from_, session or _UNNAMED_SESSION, root, v)
    for index, message in enumerate(transcript.messages):
        if not isinstance(message, dict):
            raise v.fail("--input", "invalid_format", f"transcript entry {index} is not a message object")
        problem = shape_problem(message)
        if problem is not None:
            raise v.fail("--input", "invalid_format", f"transcript entry {index}: {problem}")
    return transcript.messages


def safe_session(session: str, v: Validator) -> str:
    """A session id that can name the offload directory."""
    from ..window.offload import check_session_id

    return check_session_id(v.text(session, "--session"), v, "--session")


def _steps_text(steps: list[dict[str, Any]]) -> list[str]:
    from ..contract.render import value

    return [f"- {s['step']}: " + " ".join(f"{k}={value(v)}" for k, v in s.items() if k != "step") for s in steps]


# ------------------------------------------------------------------ check

@window_group.command("check")
@transcript_option
@policy_options
@from_option
@common
def check_cmd(input_, window, model, from_, format_, cwd) -> Output:
    """Estimate a transcript's next request against the window budget, and show where its tokens go."""
    from ..config import load_config
    from ..contract.render import header
    from ..window.health import check_context
    from ..window.usage import breakdown

    v = Validator("window check")
    policy = resolve_policy(window, model, v)
    root, _ = resolve_root(cwd)
    config = load_config(root)
    messages = window_messages(input_, from_, None, root, v)
    counter, counter_name, warnings = configured_counter(config)
    metrics = check_context(messages, policy, counter=counter)
    data = {"metrics": metrics.to_dict(), "breakdown": breakdown(messages, "", "", 0, policy, counter=counter),
            "counter": counter_name, "warnings": warnings}

    def text() -> str:
        m, b = data["metrics"], data["breakdown"]
        p = m["policy"]
        lines = header("window check", [
            ("estimate", m["estimate"]), ("raw", m["raw"]), ("usage_pct", f"{m['usage_pct']:.2f}"),
            ("usage_pct_effective", f"{m['usage_pct_effective']:.2f}"), ("remaining", m["remaining"]),
            ("remaining_prompt", m["remaining_prompt"]), ("is_warning", m["is_warning"]),
            ("is_critical", m["is_critical"]), ("is_ceiling_exceeded", m["is_ceiling_exceeded"]),
            ("model", p["model"]), ("window", p["window"]), ("tier", p["tier"]), ("effective", p["effective"]),
            ("warning", p["warning"]), ("critical", p["critical"]), ("counter", data["counter"]),
        ], warnings)
        return "\n".join(lines + [""] + breakdown_text(b)) + "\n"

    return Output("window check", data, text, warnings, cwd=str(root))


def breakdown_text(b: dict[str, Any]) -> list[str]:
    """One ``- part: tokens (pct%)`` line per D.18 part."""
    rows = [("system_static", b["system_static"], b["pct"]["system_static"]),
            ("system_dynamic", b["system_dynamic"], b["pct"]["system_dynamic"]),
            ("tools", b["tools"], b["pct"]["tools"])]
    rows += [(f"messages.{k}", n, b["pct"]["messages"][k]) for k, n in b["messages"].items()]
    rows += [("pinned", b["pinned"], b["pct"]["pinned"]), ("free", b["free"], b["pct"]["free"])]
    return ["## Breakdown"] + [f"- {name}: {n} ({pct:.2f}%)" for name, n, pct in rows]


# ------------------------------------------------------------------ compact

@window_group.command("compact")
@transcript_option
@click.option("--keep-recent", default=None, metavar="N",
              help=f"Messages kept verbatim (default {DEFAULT_KEEP_RECENT}; capped by the tier).")
@click.option("--session", default=None, metavar="ID",
              help="Persist the compaction summary to sessions.db and masked results to the offload store.")
@click.option("--prune", is_flag=True, default=False,
              help="Allow lossy maintenance at the hard boundary: the D.12 prune and rewriting opaque history.")
@policy_options
@from_option
@common
def compact_cmd(input_, keep_recent, session, prune, window, model, from_, format_, cwd) -> Output:
    """Run one maintenance pass over a transcript: masking, tool-result summaries, LLM-free compaction."""
    from dataclasses import replace

    from ..config import load_config
    from ..sessions.store import SessionStore, session_db_path
    from ..window.events import EventBus
    from ..window.maintenance import maintain
    from ..window.messages import mask_messages
    from ..window.offload import open_offload_store

    v = Validator("window compact")
    keep = DEFAULT_KEEP_RECENT if keep_recent is None else v.cli_positive_int(keep_recent, "--keep-recent")
    session = None if session is None else safe_session(session, v)
    policy = resolve_policy(window, model, v)
    root, _ = resolve_root(cwd)
    config = load_config(root)
    messages = window_messages(input_, from_, session, root, v)
    counter, counter_name, warnings = configured_counter(config)

    store = offload = None
    if session is not None:
        store = SessionStore(session_db_path(root, config))
        offload = open_offload_store(root / config.get("window.offload_dir"), session,
                                     threshold=config.get("window.tool_offload_threshold"),
                                     ttl_hours=config.get("window.tool_offload_ttl_hours"))
    try:
        report = maintain(
            messages, policy, replace(policy.capabilities, allow_opaque_rewrite=prune), EventBus(),
            keep_recent=keep, observation_mask_keep_rounds=config.get("window.observation_mask_keep_rounds"),
            session_id=session, artifact_store=store, offload_store=offload,
            counter=counter, recall_tool_name=config.get("window.recall_tool_name"), allow_prune=prune,
        )
    finally:
        if store is not None:
            store.close()
    data = {"messages": mask_messages(messages), "report": report.to_dict(), "counter": counter_name,
            "warnings": warnings}

    def text() -> str:
        from ..contract.render import header

        r = data["report"]
        lines = header("window compact", [
            ("status", r["status"]), ("action", r["action"]), ("trigger", r["trigger"]), ("hard", r["hard"]),
            ("before_tokens", r["before_tokens"]), ("after_tokens", r["after_tokens"]),
            ("ineffective", r["ineffective"]), ("messages", len(data["messages"])), ("session", session),
            ("counter", data["counter"]),
        ], warnings)
        notice = [f"- notice: {r['notice']}"] if r["notice"] else []
        return "\n".join(lines + notice + ["", "## Steps"] + (_steps_text(r["steps"]) or ["- none"])) + "\n"

    return Output("window compact", data, text, warnings, cwd=str(root))


# ------------------------------------------------------------------ recall

@window_group.command("recall")
@click.argument("ref_id", required=False)
@click.option("--session", default=None, metavar="ID", help="Session whose offloaded result to read.")
@common
def recall_cmd(ref_id, session, format_, cwd) -> Output:
    """Print an offloaded tool result, or TOOL_RESULT_UNAVAILABLE with the reason."""
    from ..config import load_config
    from ..contract.jsonout import dumps
    from ..contract.render import header
    from ..window.offload import recall_offloaded

    v = Validator("window recall")
    if ref_id is None:
        raise v.fail("ref_id", "required", "a ref id is required")
    ref_id = v.text(ref_id, "ref_id")
    if session is None:
        raise v.fail("--session", "required", "window recall needs --session <id>")
    session = safe_session(session, v)
    root, _ = resolve_root(cwd)
    data = recall_offloaded(root, load_config(root), session, ref_id)

    def text() -> str:
        return "\n".join(header("window recall", [("ref_id", ref_id), ("session", session)]) + ["", dumps(data)])

    return Output("window recall", data, text, cwd=str(root))


# ------------------------------------------------------------------ describe

WINDOW_SPEC = {"name": "--window", "type": "number", "description": "Context window in tokens (wins over --model).",
               "defaultValue": 200000}
MODEL_SPEC = {"name": "--model", "type": "string", "description": "Model whose catalogue window sets the policy."}

register(_spec(
    "window check", "Estimate a transcript's next request against the window budget policy, with a usage breakdown.",
    related=["window compact", "context assemble"], mutating=False, raw_json=True,
    outputs=["metrics", "metrics.estimate", "metrics.is_warning", "metrics.is_critical", "metrics.policy",
             "breakdown", "counter", "warnings"],
    options=[TRANSCRIPT_SPEC, WINDOW_SPEC, MODEL_SPEC, FROM_SPEC, _FMT, _CWD],
    examples=["ragit window check --input transcript.jsonl",
              "ragit window check --input ~/.codex/sessions/2025/09/03/rollout.jsonl --window 128000"],
    errors=["INPUT_INVALID", "CONFIG_INVALID"], formats=("json", "json"),
))
register(_spec(
    "window compact", "Run one maintenance pass over a transcript: masking, tool-result summaries, the LLM-free "
    "compaction summary; lossy pruning only with --prune.",
    related=["window check", "window recall", "session search"], mutating=True, raw_json=True,
    outputs=["messages", "report", "report.status", "report.action", "report.steps", "counter", "warnings"],
    options=[TRANSCRIPT_SPEC,
             {"name": "--keep-recent", "type": "number", "description": "Messages kept verbatim (capped by the tier).",
              "defaultValue": DEFAULT_KEEP_RECENT},
             {"name": "--session", "type": "string",
              "description": "Persist the compaction summary to sessions.db and masked results to the offload store."},
             {"name": "--prune", "type": "boolean",
              "description": "Allow lossy maintenance at the hard boundary (D.12 prune, rewriting opaque history)."},
             WINDOW_SPEC, MODEL_SPEC, FROM_SPEC, _FMT, _CWD],
    examples=["ragit window compact --input transcript.jsonl --window 128000",
              "ragit window compact --input transcript.jsonl --session 7f3c2a9e --keep-recent 4 --prune"],
    errors=["INPUT_INVALID", "CONFIG_INVALID"], formats=("json", "json"),
))
register(_spec(
    "window recall", "Print a tool result that was offloaded (or masked) during a session.",
    related=["window compact"], mutating=False, outputs=["(the original tool result)"],
    arguments=[{"name": "ref_id", "type": "string", "required": True, "description": "The offloaded result's ref id."}],
    options=[{"name": "--session", "type": "string", "required": True, "description": "The session id."},
             _FMT, _CWD],
    examples=["ragit window recall toolu_01HkT5rWq8ZpB3nVx2Yc7LmA --session 7f3c2a9e-4b1d-4c8e-9f2a-1d6e5b8c0a47"],
    errors=["INPUT_INVALID", "TOOL_RESULT_UNAVAILABLE", "CONFIG_INVALID"], formats=("json", "json"),
))
