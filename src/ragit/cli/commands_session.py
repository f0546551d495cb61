"""``session mirror | search | dream``: the transcript store from the command line (memory §7–9).

Transcripts are external material: ``--input`` may lie outside the repository, and control
characters (ANSI colours in captured tool output) are data to store, not invalid input.
``session search`` is read-only and never creates ``sessions.db``.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click

from ..contract.describe import _CWD, _FMT, _spec, register
from ..contract.inputs import Validator
from ..errors import RagitError
from ..sessions.importers import FORMATS as FROM_FORMATS
from .common import common, resolve_root
from .app import cli
from .output import Output

if TYPE_CHECKING:
    from ..sessions.importers import Transcript

_IMPORT_FIELDS = {"input": "--input", "from": "--from", "session": "--session"}


@cli.group("session")
def session_group() -> None:
    """Transcripts: mirror, full-text search and dreaming."""


def from_option(f: Callable) -> Callable:
    return click.option("--from", "from_", default=None, metavar="|".join(FROM_FORMATS),
                        help="Transcript format (default auto).")(f)


def transcript_option(f: Callable) -> Callable:
    return click.option("--input", "input_", default=None, metavar="PATH|-",
                        help="Transcript file (JSON array or JSONL; - = stdin); may lie outside the repository.")(f)


def load_transcript(input_: str | None, from_: str | None, session: str | None, root: Path,
                    v: Validator) -> Transcript:
    """Read and import ``--input`` as a neutral transcript, with errors named after this command's options.

    Every dict message without an integer ``seq`` gets its list index, the seq ``mirror`` gives
    it, so artifacts written from this list line up with the mirrored rows.
    """
    from ..contract.inputs import read_text_input
    from ..contract.limits import check_json_text, check_value
    from ..sessions.importers import import_transcript
    from ..sessions.transcripts import int_or_none

    if input_ is None:
        raise v.fail("--input", "required", f"{v.command} needs --input <path|->")
    fmt = v.choice(from_, "--from", FROM_FORMATS) if from_ is not None else "auto"
    text = read_text_input(input_, root, v, allow_outside=True)
    check_json_text(text, v)  # cli-contract §3.3 in every record, kept or not, before parsing
    try:
        transcript = import_transcript(text, fmt, session)
    except RagitError as exc:
        if exc.code != "INPUT_INVALID":
            raise
        details = dict(exc.details)
        field = _IMPORT_FIELDS.get(details.pop("field"), "--input")
        raise v.fail(field, details.pop("reason"), exc.message, **details) from None
    # lone surrogates and NaN/Infinity in what is kept (control characters are data here)
    check_value(transcript.messages, v, "input", budget=None, control=False, text_keys=False)
    for index, message in enumerate(transcript.messages):
        if isinstance(message, dict) and int_or_none(message.get("seq")) is None:
            message["seq"] = index
    return transcript


def _session_value(session: str | None, v: Validator) -> str | None:
    return None if session is None else v.text(session, "--session")


def _db_path(root: Path) -> Path:
    from ..config import load_config
    from ..sessions.store import session_db_path

    return session_db_path(root, load_config(root))


# ------------------------------------------------------------------ mirror

@session_group.command("mirror")
@transcript_option
@click.option("--session", default=None, metavar="ID", help="Session id (overrides the transcript's own).")
@from_option
@common
def mirror_cmd(input_, session, from_, format_, cwd) -> Output:
    """Mirror a transcript into sessions.db: upsert by seq, delete rows no longer present."""
    from ..contract.render import header
    from ..sessions.store import SessionStore

    v = Validator("session mirror")
    session = _session_value(session, v)
    root, _ = resolve_root(cwd)
    transcript = load_transcript(input_, from_, session, root, v)
    with SessionStore(_db_path(root)) as store:
        result = store.mirror(transcript.session_id, transcript.messages)
    data = {"sessionId": result.session_id, "format": transcript.format, "messages": result.messages,
            "deleted": result.deleted}

    def text() -> str:
        return "\n".join(header("session mirror", [("session_id", data["sessionId"]), ("format", data["format"]),
                                                   ("messages", data["messages"]), ("deleted", data["deleted"])]))

    return Output("session mirror", data, text, cwd=str(root))


# ------------------------------------------------------------------ search

def _one_line(text: Any) -> str:
    return " ".join(str(text).split())


def _seq(value: Any) -> str:
    return "none" if value is None else str(value)


def search_text(query: str, data: dict[str, Any]) -> str:
    """memory §8.4's layout: header, then one numbered line per hit and per artifact."""
    from ..contract.render import header

    lines = header("session search", [("query", query), ("matched", data["matched"]), ("count", data["count"]),
                                      ("artifact_count", data["artifact_count"])])
    rows = [f"[{h['session_id']} #{h['seq']} {h['role']}] {_one_line(h['snippet'])}" for h in data["hits"]]
    rows += [f"[{a['kind']} {a['session_id']} seq={_seq(a['source_start_seq'])}-{_seq(a['source_end_seq'])}] "
             f"{_one_line(a['snippet'])}" for a in data["artifacts"]]
    body = [f"{n}. {row}" for n, row in enumerate(rows, start=1)] or ["- none"]
    return "\n".join(lines + [""] + body) + "\n"


@session_group.command("search")
@click.argument("query", required=False)
@click.option("--session", default=None, metavar="ID", help="Only this session.")
@click.option("--limit", default=None, metavar="N", help="Maximum hits (default 20, at most 100).")
@click.option("--trigram", is_flag=True, default=False, help="Substring recall through the trigram index.")
@click.option("--include-artifacts", is_flag=True, default=False,
              help="Also search context artifacts (compaction summaries, dreams).")
@click.option("--artifact-kind", "artifact_kinds", multiple=True, metavar="KIND",
              help="Only artifacts of this kind (repeatable; implies --include-artifacts).")
@common
def search_cmd(query, session, limit, trigram, include_artifacts, artifact_kinds, format_, cwd) -> Output:
    """Full-text search over mirrored transcripts; read-only, a missing database is no match."""
    from ..sessions.search import DEFAULT_LIMIT, session_search

    v = Validator("session search")
    if query is None:
        raise v.fail("query", "required", "a query is required")
    query = v.text(query, "query")
    session = _session_value(session, v)
    count = DEFAULT_LIMIT if limit is None else v.cli_positive_int(limit, "--limit")
    kinds = [v.text(kind, "--artifact-kind") for kind in artifact_kinds]
    root, _ = resolve_root(cwd)
    data = session_search(
        _db_path(root), query=query, session_id=session, limit=count, prefer_trigram=trigram,
        include_artifacts=include_artifacts or bool(kinds), artifact_kinds=kinds,
    )
    return Output("session search", data, lambda: search_text(query, data), cwd=str(root))


# ------------------------------------------------------------------ dream

@session_group.command("dream")
@click.argument("session_id", required=False)
@click.option("--limit-messages", default=None, metavar="N", help="Only the last N messages.")
@click.option("--no-llm", is_flag=True, default=False, help="Write the LLM-free fallback summary.")
@common
def dream_cmd(session_id, limit_messages, no_llm, format_, cwd) -> Output:
    """Consolidate a session into a ``dream`` artifact now; not dreaming (up to date, no messages) is a result.

    ragit configures no summariser for the CLI yet, so every pass here is LLM-free and
    ``--no-llm`` only pins that down for scripts.
    """
    from ..contract.render import header
    from ..sessions.dreaming import dream

    v = Validator("session dream")
    if session_id is None:
        raise v.fail("session-id", "required", "a session id is required")
    session_id = v.text(session_id, "session-id")
    limit = None if limit_messages is None else v.cli_positive_int(limit_messages, "--limit-messages")
    root, _ = resolve_root(cwd)
    result = dream(_db_path(root), session_id, summarizer=None, limit_messages=limit)
    data = result.to_dict()

    def text() -> str:
        lines = header("session dream", [("session_id", session_id), ("did_dream", data["did_dream"]),
                                         ("artifact_id", data["artifact_id"]), ("error", data["error"]),
                                         ("llm_used", data["llm_used"])])
        return "\n".join(lines + ([""] + [data["content"].rstrip("\n")] if data["content"] else [])) + "\n"

    return Output("session dream", data, text, cwd=str(root))


# ------------------------------------------------------------------ describe

_SESSION = {"name": "--session", "type": "string", "description": "Session id."}
FROM_SPEC = {"name": "--from", "type": "enum", "description": "Transcript format.", "enum": list(FROM_FORMATS),
         "defaultValue": "auto"}
TRANSCRIPT_SPEC = {"name": "--input", "type": "path", "required": True,
                   "description": "Transcript file (JSON array or JSONL), or - for stdin; may lie outside the repository."}

register(_spec(
    "session mirror", "Mirror a transcript (neutral messages, Claude Code or Codex session file) into sessions.db.",
    related=["session search", "session dream", "window compact"], mutating=True, raw_json=True,
    outputs=["sessionId", "format", "messages", "deleted"],
    options=[TRANSCRIPT_SPEC,
             dict(_SESSION, description="Session id; overrides the transcript's own and is required when it has none."),
             FROM_SPEC, _FMT, _CWD],
    examples=["ragit session mirror --input ~/.claude/projects/acme/7f3c2a9e.jsonl",
              "ragit session mirror --input messages.json --session s1 --from messages"],
    errors=["INPUT_INVALID", "CONFIG_INVALID"], formats=("json", "json"),
))
register(_spec(
    "session search", "Full-text search over mirrored transcripts and, optionally, their context artifacts.",
    related=["session mirror", "session dream"], mutating=False,
    outputs=["matched", "count", "artifact_count", "scope", "hits", "hits[].snippet", "artifacts",
             "artifacts[].kind"],
    arguments=[{"name": "query", "type": "string", "required": True, "description": "Search words."}],
    options=[dict(_SESSION, description="Only this session."),
             {"name": "--limit", "type": "number", "description": "Maximum hits (at most 100).", "defaultValue": 20},
             {"name": "--trigram", "type": "boolean", "description": "Substring recall through the trigram index."},
             {"name": "--include-artifacts", "type": "boolean",
              "description": "Also search compaction summaries and dreams."},
             {"name": "--artifact-kind", "type": "string",
              "description": "Only artifacts of this kind (repeatable; implies --include-artifacts)."},
             dict(_FMT, defaultValue="both"), _CWD],
    examples=['ragit session search "refresh token"',
              'ragit session search rotation --session 7f3c2a9e --include-artifacts --artifact-kind dream'],
    errors=["INPUT_INVALID", "CONFIG_INVALID"], formats=("both", "both"),
))
register(_spec(
    "session dream", "Consolidate a session's transcript into a dream artifact (six headings, cited seq ranges).",
    related=["session search", "session mirror"], mutating=True,
    outputs=["did_dream", "artifact_id", "error", "content", "llm_used"],
    arguments=[{"name": "session-id", "type": "string", "required": True, "description": "The session to dream."}],
    options=[{"name": "--limit-messages", "type": "number", "description": "Only the last N messages."},
             {"name": "--no-llm", "type": "boolean", "description": "Write the LLM-free fallback summary."},
             _FMT, _CWD],
    examples=["ragit session dream 7f3c2a9e-4b1d-4c8e-9f2a-1d6e5b8c0a47",
              "ragit session dream s1 --limit-messages 200 --no-llm"],
    errors=["INPUT_INVALID", "CONFIG_INVALID"], formats=("json", "json"),
))
