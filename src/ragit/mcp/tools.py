"""The nine MCP tools (cli-contract §11): one command each, over the same library calls and input
models as the CLI, so a tool call and the command line validate, fail and answer alike.

This module knows nothing of the MCP SDK: :func:`call_tool` turns a tool name and its
arguments into a :class:`ToolOutcome` (structured content, text, error flag) that
``ragit.mcp.server`` only wraps into protocol types. That keeps the contract testable
without a server process. Outputs are compact (null-valued keys dropped, JSON without
indentation) because every byte lands in a model's context window.
"""

from __future__ import annotations

import json
import os
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..contract.inputs import Validator
from ..errors import RagitError
from . import schemas
from .limits import check_arguments

if TYPE_CHECKING:  # pragma: no cover
    from ..api import Repo
    from ..config import Config
    from ..gitsnap.git import Git


class Workspace:
    """The repository a server serves: its root, its configuration and a pool of warm
    :class:`~ragit.api.Repo` objects.

    A Repo keeps config, embedder, snapshot matrices, a warm postings connection, parsed
    manifests and a worktree watch between calls, so repeated calls are fast. Those caches are
    not made for concurrent use, so a call *leases* a Repo for its whole duration
    (:meth:`lease`): concurrent calls each get their own (a new one is built when every warm
    one is busy), and no Repo is ever touched by two threads at once. The configuration is
    reloaded, and the pool emptied, when ``.ragit/config.toml`` changes, so a long-running
    server never answers with a stale configuration.
    """

    def __init__(self, root: Path, in_git: bool, *, idle_repos: int = 4):
        self.root = root
        self.in_git = in_git
        self._lock = threading.Lock()  # guards the configuration stamp and the pool
        self._stamp: tuple[int, int] | None = None
        self._config: Config | None = None
        self._idle: list[Repo] = []
        self._max_idle = idle_repos

    def config(self) -> Config:
        """The current configuration (reloaded when its file changed)."""
        from ..config import CONFIG_RELPATH, load_config

        try:
            st = os.stat(self.root / CONFIG_RELPATH)
            stamp: tuple[int, int] | None = (st.st_mtime_ns, st.st_size)
        except OSError:
            stamp = None
        with self._lock:
            if self._config is None or stamp != self._stamp:
                self._config, self._stamp = load_config(self.root), stamp
                self._idle.clear()
            return self._config

    @contextmanager
    def lease(self) -> Iterator[Repo]:
        """A Repo for this call only (GIT_REPOSITORY_REQUIRED when the server runs outside git);
        it returns to the pool afterwards unless the configuration changed meanwhile."""
        from ..api import Repo

        git = self.require_git()
        config = self.config()
        with self._lock:
            repo = self._idle.pop() if self._idle else None  # the most recently used is the warmest
        if repo is None or repo.config is not config:
            repo = Repo(self.root, config, git)
        try:
            yield repo
        finally:
            with self._lock:
                if repo.config is self._config and len(self._idle) < self._max_idle:
                    self._idle.append(repo)

    def require_git(self) -> Git:
        """A git handle (stateless: one subprocess per call), or GIT_REPOSITORY_REQUIRED."""
        from ..api import git_required
        from ..gitsnap.git import Git

        if not self.in_git:
            raise git_required(self.root)
        return Git(self.root)

    def git(self) -> Git | None:
        """The git handle, or None outside a repository (memory and artifacts still work)."""
        return self.require_git() if self.in_git else None

    def snapshot(self) -> dict[str, Any]:
        """The §5.6 block for the current HEAD, computed as ``ragit status`` computes it."""
        from ..gitsnap.context import read_context
        from ..maintenance.status import snapshot_status

        git = self.git()
        block, _ = snapshot_status(self.root, self.config(), git, read_context(git) if git else None)
        return block


Run = Callable[[Workspace, dict[str, Any], Validator], Any]


@dataclass(frozen=True)
class Tool:
    """One tool: the command it maps, its input schema, and how to run it.

    ``own_snapshot``: the command's ``data`` carries its own snapshot block (when it has one,
    it wins over the HEAD block computed afterwards).
    """

    name: str
    command: str
    title: str
    description: str
    input_schema: dict[str, Any]
    run: Run
    read_only: bool = True
    destructive: bool = False
    own_snapshot: bool = False

    @property
    def keys(self) -> tuple[str, ...]:
        """The argument allow-list: exactly the schema's properties."""
        return tuple(self.input_schema["properties"])


@dataclass(frozen=True)
class ToolOutcome:
    """A result (``structured``, its compact JSON as ``text``) or a typed failure (``error``, the
    §5 error object, its compact JSON as ``text``, and no ``structured``: an output-schema-checking
    client would otherwise replace the typed error by a schema failure)."""

    structured: dict[str, Any] | None
    text: str
    is_error: bool = False
    error: dict[str, Any] | None = None


# ------------------------------------------------------------------ MCP-only arguments

DEFAULT_VIEW = "minimal"  # the cheapest projection for a model's window; `view` selects another


def _view(args: dict[str, Any], v: Validator) -> str:
    from ..contract.views import VIEWS

    return v.choice(args.pop("view"), "view", VIEWS) if "view" in args else DEFAULT_VIEW


def _dry_run(args: dict[str, Any], v: Validator) -> bool:
    return v.boolean(args.pop("dryRun"), "dryRun") if "dryRun" in args else False


def _evidence(args: dict[str, Any], v: Validator) -> list[str]:
    value = args.pop("evidence", None)
    if value is None:
        return []
    if not isinstance(value, list):
        raise v.fail("evidence", "invalid_format", "evidence must be an array of PATH[:kind] strings")
    return [v.text(item, f"evidence[{i}]") for i, item in enumerate(value)]


def _required_text(args: dict[str, Any], key: str, v: Validator) -> str:
    if args.get(key) is None:
        raise v.fail(key, "required", f"{key} is required")
    return v.text(args[key], key)


# ------------------------------------------------------------------ runs (CLI order: validate, then work)

def _exact_at(ws: Workspace, parse: Callable[[], Any]) -> Any:
    """Parse a read's arguments; an ``at`` such as ``master`` that names a commit is refused as on
    the CLI, with that commit named (``details.resolvedSha``) so the agent can retry with it."""
    try:
        return parse()
    except RagitError as exc:
        from ..gitsnap.git import Git
        from ..retrieve.selection import with_exact_revision

        raise with_exact_revision(exc, Git(ws.root) if ws.in_git else None) from None


def _query(ws: Workspace, args: dict[str, Any], v: Validator) -> Any:
    from ..contract.payloads import QueryInput

    view = _view(args, v)
    inp = _exact_at(ws, lambda: QueryInput.from_payload(args, ws.config()["retrieval"]["top_k"]))
    with ws.lease() as repo:
        return repo.query_input(inp).to_dict(view)


def _context_pack(ws: Workspace, args: dict[str, Any], v: Validator) -> Any:
    from ..contract.payloads import PackInput

    view = _view(args, v)
    inp = _exact_at(ws, lambda: PackInput.from_payload(args))
    with ws.lease() as repo:
        return repo.pack_input(inp).to_dict(view)


def _context_packet(ws: Workspace, args: dict[str, Any], v: Validator) -> Any:
    from ..context.bridge import check_request

    evidence = _evidence(args, v)
    check_request(args, evidence)  # the request is validated before a lease needs git (cli-contract §3.3)
    # over MCP a model chooses the paths: evidence files must lie inside the repository
    with ws.lease() as repo:
        return repo.packet(args, evidence=evidence, evidence_outside=False).to_dict()


def _memory_recall(ws: Workspace, args: dict[str, Any], v: Validator) -> Any:
    from ..memory.recall import check_goal, recall

    view = _view(args, v)
    goal = check_goal(args.get("goal"))
    if ws.in_git:  # the warm Repo keeps the embedder and snapshot matrices between calls
        with ws.lease() as repo:
            return repo.recall(goal).to_dict(view)
    return recall(ws.root, None, ws.config(), goal).to_dict(view)


def _memory_wrap(ws: Workspace, args: dict[str, Any], v: Validator) -> Any:
    from ..memory.working import WrapInput, wrap

    dry_run = _dry_run(args, v)
    inp = WrapInput.from_payload(args, ws.root)
    return wrap(ws.root, ws.git(), ws.config(), inp, dry_run=dry_run).to_dict()


def _artifact_capture(ws: Workspace, args: dict[str, Any], v: Validator) -> Any:
    from ..memory.artifacts import capture

    dry_run = _dry_run(args, v)
    return capture(ws.root, ws.config(), args, dry_run=dry_run)["artifact"]


def _tool_result_recall(ws: Workspace, args: dict[str, Any], v: Validator) -> Any:
    """``window recall``: reads ``window.offload_dir/<session>/<ref>.json``, never creates it."""
    from ..window.offload import check_session_id, recall_offloaded

    ref_id = _required_text(args, "refId", v)
    session = check_session_id(_required_text(args, "sessionId", v), v, "sessionId")
    return recall_offloaded(ws.root, ws.config(), session, ref_id)


def _session_search(ws: Workspace, args: dict[str, Any], v: Validator) -> Any:
    """The §8.4 tool: ``query`` is validated as on the CLI, the other parameters stay lenient."""
    from ..sessions.search import session_search
    from ..sessions.store import session_db_path

    query = _required_text(args, "query", v)
    params = {k: value for k, value in args.items() if k != "query"}
    return session_search(session_db_path(ws.root, ws.config()), query=query, **params)


def _verify_citation(ws: Workspace, args: dict[str, Any], v: Validator) -> Any:
    from ..retrieve.verify import verify_citation

    if args.get("citation") is None:
        raise v.fail("citation", "required", "citation is required")
    if not isinstance(args["citation"], str):
        raise v.fail("citation", "not_string", "citation must be a string")
    from ..contract.inputs import check_citation

    git = ws.require_git()
    check_citation(args["citation"])
    return verify_citation(ws.root, git, ws.config(), args["citation"])


TOOLS: tuple[Tool, ...] = (
    Tool("query", "query", "Query the snapshot",
         "Search the exact indexed snapshot of HEAD (or `at`) and return cited, scored hits. "
         "Arguments are the `ragit query --input` payload plus `view` (default minimal).",
         schemas.QUERY, _query, own_snapshot=True),
    Tool("context_pack", "context pack", "Pack cited context",
         "Pack cited hits for a goal under a strict content-unit budget (citation-diverse-v2). "
         "Arguments are the `ragit context pack --input` payload plus `view` (default minimal).",
         schemas.CONTEXT_PACK, _context_pack, own_snapshot=True),
    Tool("context_packet", "context packet", "Assemble a context packet",
         "Assemble an inspectable context packet (selected, pointers, excluded, unknowns, refresh) from "
         "candidates, a `retrieve` pack and `evidence` files. A blocked or refresh_required packet is a result, "
         "not an error.",
         schemas.CONTEXT_PACKET, _context_packet, own_snapshot=True),
    Tool("memory_recall", "memory recall", "Recall working memory",
         "Resume packet for a goal: working state, open loops, decisions and cited hits of HEAD's snapshot; "
         "degrades to working memory and reviewed artifacts when the snapshot is unavailable. "
         "`view` defaults to minimal.",
         schemas.MEMORY_RECALL, _memory_recall, own_snapshot=True),
    Tool("memory_wrap", "memory wrap", "Record the session",
         "Record a session and replace the working state and open-loop registry under .ragit/memory/. "
         "Arguments are the `ragit memory wrap --input` payload plus `dryRun`.",
         schemas.MEMORY_WRAP, _memory_wrap, read_only=False, destructive=True),
    Tool("artifact_capture", "artifact capture", "Capture an artifact",
         "Record a finding, harness fact or evidence as a new knowledge artifact (status captured). "
         "Arguments are the `ragit artifact capture --input` payload plus `dryRun`.",
         schemas.ARTIFACT_CAPTURE, _artifact_capture, read_only=False),
    Tool("tool_result_recall", "window recall", "Recall an offloaded tool result",
         "Return a tool result that was offloaded (or masked) during a session, or TOOL_RESULT_UNAVAILABLE "
         "with the reason.",
         schemas.TOOL_RESULT_RECALL, _tool_result_recall),
    Tool("session_search", "session search", "Search transcripts",
         "Full-text search over mirrored session transcripts and, optionally, their context artifacts.",
         schemas.SESSION_SEARCH, _session_search),
    Tool("verify_citation", "verify", "Verify a citation",
         "Check a citation id or path@sha:Lx-Ly handle against the HEAD commit: ok, shifted, changed, moved, "
         "deleted or withdrawn. A drifted citation is a result, not an error.",
         schemas.VERIFY_CITATION, _verify_citation),
)
BY_NAME: dict[str, Tool] = {tool.name: tool for tool in TOOLS}


# ------------------------------------------------------------------ calling

def with_snapshot(data: Any, own_snapshot: bool, snapshot: Callable[[], dict[str, Any]]) -> dict[str, Any]:
    """``data`` as structured output: its own snapshot block when it has one, else HEAD's appended
    last; non-objects (and objects whose ``snapshot`` key is not a snapshot block) go under ``result``."""
    if isinstance(data, dict) and "snapshot" in data and own_snapshot:
        return data
    out = dict(data) if isinstance(data, dict) and "snapshot" not in data else {"result": data}
    out["snapshot"] = snapshot()
    return out


def unknown_tool(name: str) -> RagitError:
    """COMMAND_UNKNOWN for a tool name this server does not serve (a long or odd name is cut)."""
    shown = name[:100].encode("utf-8", "backslashreplace").decode("utf-8")
    return RagitError("COMMAND_UNKNOWN", f"unknown tool {shown!r}; tools: {', '.join(BY_NAME)}",
                      {"command": shown}, "ragit describe mcp")


def compact(value: Any) -> Any:
    """``value`` without null-valued object keys, recursively (array items are kept)."""
    if isinstance(value, dict):
        return {k: compact(v) for k, v in value.items() if v is not None}
    if isinstance(value, list):
        return [compact(v) for v in value]
    return value


def compact_json(value: Any) -> str:
    """One line of JSON, no indentation, UTF-8 unescaped: the text content of every outcome."""
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"))


def call_tool(ws: Workspace, name: str, arguments: dict[str, Any] | None) -> ToolOutcome:
    """Validate and run one tool; a typed failure becomes an error outcome, never an exception.

    The limits (size, depth, lone surrogates, non-finite numbers) are checked first, before
    any pass that reads every character of a string (control characters, masking, tokenizing).
    """
    from ..contract.inputs import check_control_characters
    from ..contract.jsonout import normalize_numbers
    from ..errors import internal_error

    try:
        tool = BY_NAME.get(name)
        if tool is None:
            raise unknown_tool(name)
        v = Validator(tool.command)
        raw = {} if arguments is None else arguments
        if not isinstance(raw, dict):
            raise v.fail("input", "invalid_format", "input must be a JSON object")
        check_arguments(raw, v)
        args = dict(v.allowed_keys(raw, tool.keys))
        check_control_characters(args, "input", v)
        structured = compact(normalize_numbers(with_snapshot(tool.run(ws, args, v), tool.own_snapshot, ws.snapshot)))
        _record_served(ws, name, structured)
        return ToolOutcome(structured, compact_json(structured))
    except RagitError as exc:
        return error_outcome(exc)
    except Exception as exc:  # noqa: BLE001 - the contract turns everything else into INTERNAL_ERROR
        if os.environ.get("RAGIT_DEBUG") == "1":
            import traceback

            traceback.print_exc()
        return error_outcome(internal_error(exc))


def _record_served(ws: Workspace, name: str, structured: Any) -> None:
    """Keep the citations of the last pack, packet or query for the edit-time gate (ragit.gate.served)."""
    from ..gate.served import RECORDED_TOOLS, record_with_git

    if name in RECORDED_TOOLS and ws.in_git:
        record_with_git(ws.root, ws.require_git(), name, structured)


def error_outcome(exc: RagitError) -> ToolOutcome:
    """The §5 error object, secrets re-masked, as the text content (compact JSON) of a tool error."""
    from ..contract.jsonout import normalize_numbers
    from ..security.masking import masked_error

    error = normalize_numbers(masked_error(exc).to_dict())
    return ToolOutcome(None, compact_json(error), is_error=True, error=error)
