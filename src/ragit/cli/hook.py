"""Claude Code hooks written by ``ragit setup claude-code``:
``python -m ragit.cli.hook <event> --cwd <repository root>``, the hook's JSON on stdin.

- ``session-start``: ``ragit memory recall`` (text, minimal view) is added to the session's
  context (``hookSpecificOutput.additionalContext``).
- ``post-tool-use``: a tool result larger than ``window.tool_offload_threshold`` tokens is
  offloaded (context D.5, the same store ``ragit window recall`` and the MCP tool
  ``tool_result_recall`` read) under its ``tool_use_id`` in the Claude session's id, and the
  model gets the stub with the ref id instead (``updatedToolOutput``) plus a one-line note.
- ``pre-compact`` and ``stop``: ``ragit memory wrap`` records the session: goal = the first
  user prompt, summary = the last assistant message, with the working state's constraints,
  decisions, open loops and next actions carried over so a hook never erases what the agent
  wrapped itself. One session record per Claude session (``createdAt`` = its first message).

The real commands run in-process through the CLI entry point. A hook never blocks or breaks
the session: whatever fails, it prints nothing and exits 0. A hook whose session runs outside
the repository (a user-scope hook in another project) does nothing.
"""

from __future__ import annotations

import io
import json
import sys
from contextlib import redirect_stderr, redirect_stdout
from pathlib import Path
from typing import Any, Callable

EVENTS = ("session-start", "post-tool-use", "pre-compact", "stop")
RECALL_GOAL = "resume the work of the previous session in this repository"
CONTEXT_LIMIT = 9000  # characters of recall text added to the context
GOAL_LIMIT = 500
SUMMARY_LIMIT = 4000


def run_cli(args: list[str], stdin: str | None = None) -> tuple[int, str]:
    """Run ``ragit <args>`` in this process; its exit code and stdout (stderr is discarded)."""
    from ..cli.main import main as cli_main

    out, err = io.StringIO(), io.StringIO()
    saved = sys.stdin
    code = 0
    try:
        if stdin is not None:
            sys.stdin = io.TextIOWrapper(io.BytesIO(stdin.encode("utf-8")), encoding="utf-8")
        with redirect_stdout(out), redirect_stderr(err):
            try:
                cli_main(args)
            except SystemExit as exc:
                code = exc.code if isinstance(exc.code, int) else (0 if exc.code is None else 1)
    finally:
        sys.stdin = saved
    return code, out.getvalue()


def _context(event: str, text: str) -> str:
    return json.dumps({"hookSpecificOutput": {"hookEventName": event, "additionalContext": text}},
                      ensure_ascii=False)


# ------------------------------------------------------------------ session start

def session_start(root: Path, payload: dict[str, Any]) -> str:
    code, text = run_cli(["memory", "recall", RECALL_GOAL, "--view", "minimal", "--format", "text",
                          "--cwd", str(root)])
    if code != 0 or not text.strip():
        return ""
    if len(text) > CONTEXT_LIMIT:
        text = text[:CONTEXT_LIMIT] + "\n[... cut; run `ragit memory recall <goal>` for the rest]\n"
    return _context("SessionStart", text)


# ------------------------------------------------------------------ post tool use

def post_tool_use(root: Path, payload: dict[str, Any]) -> str:
    session, ref = payload.get("session_id"), payload.get("tool_use_id")
    if "tool_response" not in payload or not isinstance(session, str) or not isinstance(ref, str):
        return ""
    from ..window.offload import OffloadStore, is_safe_id

    if not (is_safe_id(session) and is_safe_id(ref)):
        return ""
    from ..config import load_config
    from ..window.admission import admit_tool_result, one_representation, serialise
    from ..window.tokens import CHARS_PER_TOKEN

    config = load_config(root)
    threshold = config.get("window.tool_offload_threshold")
    result = payload["tool_response"]
    # cheap size check first: most results are small and must not create the session directory
    if threshold <= 0 or len(serialise(one_representation(result))) // CHARS_PER_TOKEN <= threshold:
        return ""
    store = OffloadStore(root / config.get("window.offload_dir"), session, threshold=threshold,
                         ttl_hours=config.get("window.tool_offload_ttl_hours"))
    facing = admit_tool_result(result, call_id=ref, tool_name=str(payload.get("tool_name") or "tool"), store=store)
    if not facing.offloaded:
        return ""
    how = (f"the ragit MCP tool tool_result_recall with refId={ref!r} and sessionId={session!r}, "
           f"or `ragit window recall {ref} --session {session}`")
    stub = dict(facing.content, hint=f"The full result (~{facing.original_tokens:,} tokens) is stored outside "
                                     f"the conversation; load it with {how}.")
    note = f"ragit offloaded this {payload.get('tool_name') or 'tool'} result as ref {ref}; recall it with {how}."
    return json.dumps({"hookSpecificOutput": {"hookEventName": "PostToolUse", "additionalContext": note,
                                              "updatedToolOutput": json.dumps(stub, ensure_ascii=False)}},
                      ensure_ascii=False)


# ------------------------------------------------------------------ pre compact / stop

def _text_of(content: Any) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "\n".join(str(b.get("text", "")) for b in content
                         if isinstance(b, dict) and b.get("type") == "text" and b.get("text"))
    return ""


def _is_prompt(message: dict[str, Any]) -> bool:
    content = message.get("content")
    if isinstance(content, list) and any(isinstance(b, dict) and b.get("type") == "tool_result" for b in content):
        return False
    text = _text_of(content).strip()
    return bool(text) and not text.startswith("<")  # skip command / system-reminder wrappers


def wrap_payload(root: Path, transcript: str, event: str) -> dict[str, Any] | None:
    """The ``memory wrap`` payload for a Claude Code transcript, or None when it has no prompt."""
    from ..config import load_config
    from ..memory.working import DECISION_KEYS, OPEN_LOOP_KEYS, read_json_object
    from ..sessions.importers import import_transcript

    messages = [m for m in import_transcript(transcript, "claude-code").messages if isinstance(m, dict)]
    prompts = [m for m in messages if m.get("role") == "user" and _is_prompt(m)]
    if not prompts:
        return None
    replies = [t for t in (_text_of(m.get("content")).strip() for m in messages if m.get("role") == "assistant") if t]
    goal = " ".join(_text_of(prompts[0].get("content")).split())[:GOAL_LIMIT]
    last = replies[-1] if replies else "(no assistant reply yet)"
    summary = (f"{last[:SUMMARY_LIMIT]}\n\n(Recorded by the Claude Code {event} hook from "
               f"{len(messages)} messages.)")
    payload: dict[str, Any] = {"goal": goal, "summary": summary}
    stamp = next((m.get("timestamp") for m in messages if isinstance(m.get("timestamp"), str)), None)
    if stamp:
        payload["createdAt"] = stamp
    config = load_config(root)
    working = read_json_object(root / config["memory"]["working_dir"] / "current.json") or {}
    for key, allowed in (("decisions", DECISION_KEYS), ("openLoops", OPEN_LOOP_KEYS)):
        items = [{k: v for k, v in item.items() if k in allowed}
                 for item in working.get(key) or [] if isinstance(item, dict)]
        if items:
            payload[key] = items
    for key in ("constraints", "nextActions"):
        if isinstance(working.get(key), list) and working[key]:
            payload[key] = working[key]
    return payload


def wrap(root: Path, payload: dict[str, Any], event: str) -> str:
    path = payload.get("transcript_path")
    if not isinstance(path, str) or not Path(path).is_file():
        return ""
    body = wrap_payload(root, Path(path).read_text(encoding="utf-8", errors="replace"), event)
    if body is None:
        return ""
    run_cli(["memory", "wrap", "--input", "-", "--format", "json", "--cwd", str(root)],
            stdin=json.dumps(body, ensure_ascii=False))
    return ""


HANDLERS: dict[str, Callable[[Path, dict[str, Any]], str]] = {
    "session-start": session_start,
    "post-tool-use": post_tool_use,
    "pre-compact": lambda root, payload: wrap(root, payload, "PreCompact"),
    "stop": lambda root, payload: wrap(root, payload, "Stop"),
}


def _inside(cwd: Any, root: Path) -> bool:
    if not isinstance(cwd, str) or not cwd:
        return True
    try:
        here = Path(cwd).resolve()
        base = root.resolve()
    except OSError:
        return False
    return here == base or base in here.parents


def main(argv: list[str] | None = None) -> int:
    """Run one hook; always 0, and stdout carries nothing but the hook's JSON answer."""
    try:
        args = list(sys.argv[1:] if argv is None else argv)
        raw = sys.stdin.read()
        if not args or args[0] not in HANDLERS or "--cwd" not in args[1:-1]:
            return 0
        root = Path(args[args.index("--cwd", 1) + 1])
        payload = json.loads(raw) if raw.strip() else {}
        if not isinstance(payload, dict) or not _inside(payload.get("cwd"), root):
            return 0
        with redirect_stderr(io.StringIO()):
            answer = HANDLERS[args[0]](root, payload)
        if answer:
            sys.stdout.write(answer + "\n")
            sys.stdout.flush()
    except BaseException:  # noqa: BLE001 - a hook must never fail the user's session
        return 0
    return 0


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
