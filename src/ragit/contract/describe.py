"""``describe``: the machine-readable contract of every leaf command (cli-contract §7).

One static registry; the CLI options and this registry are checked against each other by a
test, so agents can trust what ``describe`` says.
"""

from __future__ import annotations

from typing import Any

from ..errors import RagitError
from .limits import describe_limits

_FMT = {"name": "--format", "type": "enum",
        "description": "Output format (absent: text on a terminal, defaultFormat when piped).",
        "enum": ["text", "json", "both"]}
_CWD = {"name": "--cwd", "type": "path", "description": "Run against another directory (resolved to its git root)."}
_VIEW = {"name": "--view", "type": "enum", "description": "Hit projection.", "enum": ["minimal", "default", "full"],
         "defaultValue": "default"}
_INPUT = {"name": "--input", "type": "path", "description": "JSON payload file, or - for stdin."}
_DRY = {"name": "--dry-run", "type": "boolean", "description": "Analyse only; write nothing at all."}
_SCOPE = {"name": "--scope", "type": "enum", "description": "Durable snapshot and/or the explicit artifact overlay.",
          "enum": ["durable", "session", "harness", "evidence", "all", "history"], "defaultValue": "durable"}
_AT = {"name": "--at", "type": "string", "description": "HEAD, a full commit SHA or a unique hex prefix."}
_PATH_FILTER = {"name": "--path", "type": "string",
                "description": "Only files matching this glob are candidates (repeatable; JSON paths)."}
_EXCLUDE_TESTS = {"name": "--exclude-tests", "type": "boolean",
                  "description": "Leave test files out (JSON excludeTests)."}
_NO_WAIT = {"name": "--no-wait", "type": "boolean",
            "description": "Fail at once (SNAPSHOT_INGEST_IN_PROGRESS) instead of waiting up to "
                          "retrieval.ingest_wait_seconds for a running ingest of the selected commit."}

_SNAPSHOT_ERRORS = ["INPUT_INVALID", "SNAPSHOT_REF_INVALID", "SNAPSHOT_REF_AMBIGUOUS", "SNAPSHOT_NOT_INDEXED",
                    "SNAPSHOT_STORE_UNAVAILABLE", "EMBEDDER_UNAVAILABLE", "REPOSITORY_STATE_CHANGED",
                    "SNAPSHOT_MANIFEST_INVALID", "SNAPSHOT_SCHEMA_UNSUPPORTED", "GIT_REPOSITORY_REQUIRED",
                    "CONFIG_INVALID", "SNAPSHOT_INGEST_IN_PROGRESS"]


def _spec(path: str, description: str, *, related: list[str], mutating: bool, dry_run: bool = False,
          raw_json: bool = False, outputs: list[str], arguments: list[dict] | None = None,
          options: list[dict], examples: list[str], errors: list[str], formats: tuple[str, str]) -> dict[str, Any]:
    words = path.split()
    group = words[0] if len(words) > 1 else "root"
    return {
        "path": path,
        "description": description,
        "group": group,
        "docSlug": "commands/" + "/".join(words),
        "relatedCommands": related,
        "stability": "mutating" if mutating else "read-only",
        "mutating": mutating,
        "supportsDryRun": dry_run,
        "supportsRawJsonInput": raw_json,
        "outputSchemaSummary": outputs,
        "arguments": arguments or [],
        "options": options,
        "examples": examples,
        "errorCodes": errors,
        "defaultFormat": formats[0],
        "failureFormat": formats[1],
        "limits": describe_limits(),  # cli-contract §3.3: the same for every command and for MCP
    }


REGISTRY: dict[str, dict[str, Any]] = {}


def _add(spec: dict[str, Any]) -> None:
    REGISTRY[spec["path"]] = spec


_add(_spec(
    "init", "Discover the repository, reuse its docs, write missing drafts, config and an empty store.",
    related=["ingest", "status", "hooks install"], mutating=True, dry_run=True,
    outputs=["executionMode", "repositoryMode", "strategy", "scan", "coverage", "maturity", "knowledgeMap",
             "actions", "bootstrap", "nextActions"],
    options=[{"name": "--yes", "type": "boolean", "description": "Non-interactive run (alias --non-interactive)."},
             {"name": "--mode", "type": "enum", "description": "Repository mode.",
              "enum": ["auto", "empty", "existing", "monorepo", "docs-heavy"], "defaultValue": "auto"},
             {"name": "--strategy", "type": "enum", "description": "How many drafts to plan.",
              "enum": ["minimal", "balanced", "full"], "defaultValue": "balanced"},
             _DRY,
             {"name": "--merge-existing", "type": "boolean", "description": "Reuse existing docs (always on).",
              "defaultValue": True},
             {"name": "--git-init", "type": "boolean", "description": "Allow git init in non-interactive mode."},
             dict(_FMT, description="Output format (alias --output)."), _CWD],
    examples=["ragit init --yes", "ragit init --yes --dry-run --format json"],
    errors=["INPUT_INVALID", "GIT_REPOSITORY_REQUIRED", "CONFIG_INVALID"], formats=("text", "text"),
))
_add(_spec(
    "describe", "Print the machine-readable contract of a command.",
    related=["--help"], mutating=False, outputs=["command", "availableCommands", "spec"],
    arguments=[{"name": "command", "type": "string", "required": True, "description": "Command path, e.g. context pack."}],
    options=[_FMT], examples=["ragit describe query", "ragit describe context pack --format text"],
    errors=["COMMAND_UNKNOWN"], formats=("json", "text"),
))
_add(_spec(
    "config set", "Set one configuration value, typed by its current value.",
    related=["config get", "doctor"], mutating=True, outputs=["key", "value", "previous"],
    arguments=[{"name": "key", "type": "string", "required": True, "description": "section.key"},
               {"name": "value", "type": "string", "required": True, "description": "New value (lists: JSON array or comma list)."}],
    options=[_FMT, _CWD], examples=["ragit config set retrieval.top_k 8", "ragit config set ingest.doc_globs '[\"**/*.md\"]'"],
    errors=["INPUT_INVALID", "CONFIG_KEY_UNKNOWN", "CONFIG_INVALID"], formats=("text", "text"),
))
_add(_spec(
    "ingest", "Index HEAD's (or --at's) docs and code from git objects into a published, commit-bound snapshot.",
    related=["status", "query", "doctor"], mutating=True, dry_run=True, raw_json=True,
    outputs=["mode", "processed", "skipped", "masked", "commitSha", "baseSha", "manifestPath", "searchReady",
             "plannedFiles",
             "deletedDocumentIds", "fullSnapshot", "dirtyCandidates", "wouldFail", "reused", "chunked",
             "embeddedChunks", "skippedFiles", "warnings"],
    options=[{"name": "--all", "type": "boolean", "description": "Evaluate every candidate at HEAD (default)."},
             {"name": "--since", "type": "string",
              "description": "Evaluate paths changed since an indexed ancestor: any revision (HEAD~1, a branch, "
                             "a tag, a SHA prefix), resolved once."},
             {"name": "--files", "type": "string", "description": "Comma-separated globs to re-evaluate."},
             {"name": "--path", "type": "path", "description": "Repository path to re-evaluate (repeatable)."},
             {"name": "--at", "type": "string",
              "description": "Index this commit instead of HEAD: any revision, resolved once; combines with "
                             "every selector; the worktree plays no part unless it is HEAD."},
             _INPUT, _DRY, _FMT, _CWD],
    examples=["ragit ingest --all", "ragit ingest --since HEAD~1", "ragit ingest --at v1.2.0",
              "ragit ingest --since main --at feature", "ragit ingest --input ingest.json --dry-run"],
    errors=["INPUT_INVALID", "SNAPSHOT_REF_INVALID", "SNAPSHOT_REF_AMBIGUOUS", "SNAPSHOT_NOT_INDEXED",
            "INGEST_BASE_NOT_ANCESTOR",
            "INGEST_BASE_NOT_INDEXED", "INGEST_CANDIDATES_DIRTY", "EMBEDDER_UNAVAILABLE", "STORE_WRITE_BUSY",
            "STORE_WRITE_FAILED", "STORE_UNAVAILABLE", "SNAPSHOT_MANIFEST_INVALID", "SNAPSHOT_SCHEMA_UNSUPPORTED", "GIT_REPOSITORY_REQUIRED", "CONFIG_INVALID"],
    formats=("json", "json"),
))
_add(_spec(
    "query", "Search the exact snapshot of a commit and return cited, scored hits.",
    related=["context pack", "memory recall"], mutating=False, raw_json=True,
    outputs=["query", "snapshotSha", "snapshot", "explain", "hits", "hits[].citation", "hits[].scoreBreakdown",
             "warnings", "redactionSummary"],
    arguments=[{"name": "question", "type": "string", "required": False, "description": "The question (or --input)."}],
    options=[_INPUT, {"name": "--top-k", "type": "number", "description": "Number of hits.", "defaultValue": 5},
             _SCOPE, _AT, _PATH_FILTER, _EXCLUDE_TESTS, _NO_WAIT, _VIEW,
             {"name": "--explain", "type": "boolean", "description": "Include the score breakdown (never changes ranking)."},
             dict(_FMT, defaultValue="both"), _CWD],
    examples=['ragit query "restore auth context" --format both',
              'ragit query "restore auth context" --explain --view minimal --format json',
              "ragit query \"where are redirects followed\" --path 'src/**' --exclude-tests",
              "ragit query --input query.json --view minimal --format json"],
    errors=[*_SNAPSHOT_ERRORS, "STORE_UNAVAILABLE"], formats=("both", "both"),
))
_add(_spec(
    "status", "Report HEAD's snapshot, the store and the configuration; always exits 0.",
    related=["doctor", "ingest"], mutating=False,
    outputs=["branch", "head", "snapshot", "backend", "store", "supported_types", "manifests", "embedding", "format"],
    options=[_FMT, _CWD], examples=["ragit status", "ragit status --format text"],
    errors=["CONFIG_INVALID"], formats=("json", "text"),
))
_add(_spec(
    "doctor", "Check repository, config, embedder, store and manifests, naming the repair for each failure.",
    related=["status", "migrate rebuild"], mutating=False, outputs=["checks", "hasFailure"],
    options=[_FMT, _CWD], examples=["ragit doctor", "ragit doctor --format json"],
    errors=[], formats=("text", "text"),
))
_add(_spec(
    "context pack", "Pack cited hits for a goal under a strict content-unit budget (citation-diverse-v2).",
    related=["query", "memory recall", "context packet"], mutating=False, raw_json=True,
    outputs=["goal", "snapshotSha", "snapshot", "budget", "usedTokens", "selectedHits", "selection", "hits",
             "warnings", "redactionSummary", "modelTokens", "budgetUnit"],
    arguments=[{"name": "goal", "type": "string", "required": False, "description": "The goal (or --input)."}],
    options=[_INPUT, {"name": "--budget", "type": "number", "description": "Content-unit budget.", "defaultValue": 1200},
             _SCOPE, _AT, _PATH_FILTER, _EXCLUDE_TESTS,
             {"name": "--budget-unit", "type": "enum",
              "description": "Unit of --budget: words, or tokens of the configured token counter (JSON budgetUnit).",
              "enum": ["words", "tokens"], "defaultValue": "words"},
             _NO_WAIT, _VIEW, dict(_FMT, defaultValue="both"), _CWD],
    examples=['ragit context pack "implementation plan for auth" --budget 1200',
              "ragit context pack --input context-pack.json --view minimal --format json",
              'ragit context pack "implementation plan for auth" --budget 8000 --budget-unit tokens'],
    errors=_SNAPSHOT_ERRORS, formats=("both", "both"),
))
for _kind, _source in (("json-store", ".ragit/store/index.json"),
                      ("sqlitevss", ".ragit/sqlite-vss/export.json or records.json")):
    _add(_spec(
        f"migrate from-{_kind}",
        f"Index HEAD for the documents named by a reference-CLI store ({_source}); prints raw JSON.",
        related=["migrate rebuild", "ingest", "doctor"], mutating=True, dry_run=True,
        outputs=["mode", "docs", "chunks", "snapshotSha", "missing"],
        options=[_DRY, _FMT, _CWD],
        examples=[f"ragit migrate from-{_kind} --dry-run", f"ragit migrate from-{_kind}"],
        errors=["INPUT_INVALID", "INGEST_CANDIDATES_DIRTY", "SNAPSHOT_NOT_INDEXED", "EMBEDDER_UNAVAILABLE",
                "STORE_WRITE_BUSY", "STORE_WRITE_FAILED", "GIT_REPOSITORY_REQUIRED"],
        formats=("json", "text"),
    ))
_add(_spec(
    "context packet", "Assemble an inspectable context packet (the book's rules) from candidates, retrieval and evidence files.",
    related=["context pack", "query"], mutating=False, raw_json=True,
    outputs=["state", "phase", "packet", "excluded", "unknowns", "refresh", "evidence", "snapshotSha", "snapshot",
             "warnings"],
    options=[dict(_INPUT, description="Packet request JSON (taskAnchor, budgetUnits, candidates, retrieve)."),
             {"name": "--evidence", "type": "path", "description": "PATH[:kind] given as direct evidence (repeatable)."},
             _FMT, _CWD],
    examples=["ragit context packet --input request.json",
              "ragit context packet --input request.json --evidence test-output.txt --evidence fix.diff:reference"],
    errors=_SNAPSHOT_ERRORS, formats=("json", "json"),
))
_add(_spec(
    "migrate rebuild", "Rebuild the derived store from git objects plus manifests.",
    related=["doctor", "ingest"], mutating=True, dry_run=True,
    outputs=["mode", "snapshots", "rebuilt", "failed"],
    options=[_AT, _DRY, _FMT, _CWD], examples=["ragit migrate rebuild", "ragit migrate rebuild --at 3f2a1b4c"],
    errors=["SNAPSHOT_REF_INVALID", "SNAPSHOT_STORE_UNAVAILABLE", "STORE_WRITE_BUSY", "STORE_WRITE_FAILED",
            "STORE_UNAVAILABLE", "GIT_REPOSITORY_REQUIRED"],
    formats=("json", "json"),
))
_add(_spec(
    "migrate", "Apply the store's versioned schema migrations (SQLite or PostgreSQL), each once.",
    related=["migrate rebuild", "doctor", "status"], mutating=True, dry_run=True,
    outputs=["backend", "current", "applied", "pending"],
    options=[_DRY, _FMT, _CWD], examples=["ragit migrate --dry-run", "ragit migrate"],
    errors=["STORE_UNAVAILABLE", "STORE_WRITE_BUSY", "STORE_WRITE_FAILED", "GIT_REPOSITORY_REQUIRED"],
    formats=("json", "json"),
))
_add(_spec(
    "config get", "Print one configuration value.",
    related=["config set"], mutating=False, outputs=["key", "value"],
    arguments=[{"name": "key", "type": "string", "required": True, "description": "section.key"}],
    options=[_FMT, _CWD], examples=["ragit config get retrieval.alpha"],
    errors=["INPUT_INVALID", "CONFIG_KEY_UNKNOWN", "CONFIG_INVALID"], formats=("text", "text"),
))

_HOOK_OUTPUTS = ["dryRun", "root", "hooks", "hooks[].name", "hooks[].target", "hooks[].action", "hooks[].state"]

_add(_spec(
    "hooks install", "Install the post-commit, post-merge and post-checkout hooks that index each new HEAD "
    "in the background; a foreign hook is chained, never overwritten.",
    related=["hooks status", "hooks uninstall", "ingest"], mutating=True, dry_run=True, outputs=_HOOK_OUTPUTS,
    options=[_DRY, _FMT, _CWD], examples=["ragit hooks install", "ragit hooks install --dry-run --format json"],
    errors=["INPUT_INVALID", "GIT_REPOSITORY_REQUIRED", "CONFIG_INVALID"], formats=("text", "text"),
))
_add(_spec(
    "hooks uninstall", "Remove ragit's hooks and move chained original hooks back, byte-identical.",
    related=["hooks status", "hooks install"], mutating=True, dry_run=True, outputs=_HOOK_OUTPUTS,
    options=[_DRY, _FMT, _CWD], examples=["ragit hooks uninstall", "ragit hooks uninstall --dry-run"],
    errors=["INPUT_INVALID", "GIT_REPOSITORY_REQUIRED"], formats=("text", "text"),
))
_add(_spec(
    "hooks status", "Report each hook as installed, chained, external or absent.",
    related=["hooks install", "hooks uninstall", "doctor"], mutating=False, outputs=_HOOK_OUTPUTS,
    options=[_FMT, _CWD], examples=["ragit hooks status", "ragit hooks status --format text"],
    errors=["INPUT_INVALID", "GIT_REPOSITORY_REQUIRED"], formats=("json", "text"),
))


# Registry order of cli-contract §7: the reference's leaf commands, then ours in §1 order.
ORDER = (
    "init", "describe", "config set", "hooks install", "hooks uninstall", "hooks status", "ingest", "query",
    "status", "doctor", "context pack", "memory wrap", "memory recall", "memory promote",
    "migrate from-json-store", "migrate from-sqlitevss", "context packet", "context assemble", "migrate rebuild",
    "config get", "verify", "eval mine", "eval run", "artifact capture", "artifact list", "artifact show",
    "artifact review", "artifact promote", "artifact supersede", "artifact retract", "artifact archive",
    "window check", "window compact", "window recall", "session mirror", "session search", "session dream", "mcp",
    "migrate", "snapshot export", "snapshot import", "serve", "setup", "why",
    "tune",
)


def available_commands() -> list[str]:
    rank = {p: i for i, p in enumerate(ORDER)}
    return sorted(REGISTRY, key=lambda p: (rank.get(p, len(rank)), p))


def register(spec: dict[str, Any]) -> None:
    """Add a command's contract (used by command modules of later planes)."""
    _add(spec)


def describe(words: tuple[str, ...] | list[str]) -> dict[str, Any]:
    path = " ".join(w.strip() for w in words if w.strip())
    if path not in REGISTRY:
        import difflib

        close = difflib.get_close_matches(path, available_commands(), n=2, cutoff=0.6)
        hint = "; did you mean " + " or ".join(f'"{c}"' for c in close) + "?" if close else ""
        raise RagitError("COMMAND_UNKNOWN", f"no leaf command {path!r}{hint}", {"command": path}, "ragit --help")
    return {"command": path, "availableCommands": available_commands(), "spec": REGISTRY[path]}


def describe_text(data: dict[str, Any]) -> str:
    spec = data["spec"]
    b = lambda x: "true" if x else "false"  # noqa: E731
    lines = [
        "# ragit describe",
        f"- command: {spec['path']}",
        f"- group: {spec['group']}",
        f"- docs: {spec['docSlug']}",
        f"- stability: {spec['stability']}",
        f"- mutating: {b(spec['mutating'])}",
        f"- raw_json_input: {b(spec['supportsRawJsonInput'])}",
        f"- dry_run: {b(spec['supportsDryRun'])}",
        "",
        "## Output",
    ]
    lines += [f"- {f}" for f in spec["outputSchemaSummary"]] or ["- none"]
    lines += ["", "## Arguments"]
    lines += [f"- {a['name']} ({a['type']}, required={b(a['required'])}): {a['description']}"
              for a in spec["arguments"]] or ["- none"]
    lines += ["", "## Options"]
    for o in spec["options"]:
        kind = o["type"] + (f" [{', '.join(o['enum'])}]" if o.get("enum") else "")
        default = f" default={o['defaultValue']}" if "defaultValue" in o else ""
        if isinstance(o.get("defaultValue"), bool):
            default = f" default={b(o['defaultValue'])}"
        lines.append(f"- {o['name']} ({kind}): {o['description']}{default}")
    if not spec["options"]:
        lines.append("- none")
    lines += ["", "## Related Commands"]
    lines += [f"- {r}" for r in spec["relatedCommands"]] or ["- none"]
    lines += ["", "## Examples"]
    lines += [f"- {e}" for e in spec["examples"]] or ["- none"]
    limits = spec["limits"]
    lines += ["", "## Limits", f"- question/goal bytes: {limits['textBytes']} ({', '.join(limits['textFields'])})",
              f"- payload bytes: {limits['payloadBytes']}", f"- file bytes: {limits['fileBytes']}",
              f"- nesting depth: {limits['depth']}"]
    return "\n".join(lines) + "\n"
