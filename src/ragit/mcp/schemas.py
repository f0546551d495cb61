"""JSON schemas of the MCP tools, derived from the CLI's input allow-lists (cli-contract §11).

Every object schema is built by :func:`object_schema` from an allow-list constant of the input
model that validates it (``QUERY_KEYS``, ``WRAP_KEYS``, ``CANDIDATE_FIELDS``, ...) plus the
per-property types written next to it, so a key added to a model without a schema entry (or the
reverse) fails at import instead of advertising a contract the validator does not keep. The
schemas only describe; the models still validate every call, with the same typed errors as
the CLI. Nothing here imports the MCP SDK.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from ..context.bridge import RETRIEVE_KEYS, RETRIEVE_KINDS
from ..context.packet import (
    CANDIDATE_FIELDS,
    FRESHNESSES,
    RELEVANCES,
    REQUEST_FIELDS,
    TASK_ANCHOR_FIELDS,
    TRUSTS,
)
from ..context.packet import KINDS as PACKET_KINDS
from ..contract.inputs import MAX_SAFE_INTEGER
from ..contract.payloads import DEFAULT_BUDGET, PACK_KEYS, QUERY_KEYS, SCOPES
from ..contract.views import VIEWS
from ..memory.artifacts import CAPTURE_FIELDS, EVIDENCE_FIELDS
from ..memory.artifacts import SCOPES as ARTIFACT_SCOPES
from ..memory.promote import CANDIDATE_KEYS as PROMOTION_KEYS
from ..memory.promote import KINDS as PROMOTION_KINDS
from ..memory.working import DECISION_KEYS, LOOP_STATUSES, OPEN_LOOP_KEYS, WRAP_KEYS
from ..sessions.search import DEFAULT_LIMIT, MAX_LIMIT

# Arguments of the tools that map a command without an ``--input`` payload (cli-contract §11).
RECALL_ARGS = ("goal",)
TOOL_RESULT_RECALL_ARGS = ("refId", "sessionId")
SESSION_SEARCH_ARGS = ("query", "scope", "session_id", "project_id", "limit", "prefer_trigram",
                       "include_artifacts", "artifact_kinds")
VERIFY_ARGS = ("citation",)
# MCP-only arguments standing in for CLI options.
VIEW_ARG = ("view",)
EVIDENCE_ARG = ("evidence",)
DRY_RUN_ARG = ("dryRun",)


def object_schema(keys: Sequence[str], properties: Mapping[str, dict[str, Any]], *,
                  required: Sequence[str] = (), description: str | None = None) -> dict[str, Any]:
    """A closed object schema whose properties are exactly ``keys``, in allow-list order."""
    if set(keys) != set(properties):
        raise ValueError(f"schema properties {sorted(properties)} do not mirror the allow-list {sorted(keys)}")
    schema: dict[str, Any] = {"type": "object"}
    if description:
        schema["description"] = description
    schema["properties"] = {key: properties[key] for key in keys}
    if required:
        schema["required"] = list(required)
    schema["additionalProperties"] = False
    return schema


def _s(description: str, **extra: Any) -> dict[str, Any]:
    return {"type": "string", "description": description, **extra}


def _text(description: str) -> dict[str, Any]:
    return _s(description, minLength=1)


def _strings(description: str) -> dict[str, Any]:
    return {"type": "array", "items": {"type": "string"}, "description": description}


def _positive(description: str, **extra: Any) -> dict[str, Any]:
    return {"type": "integer", "minimum": 1, "maximum": MAX_SAFE_INTEGER, "description": description, **extra}


def _enum(values: Sequence[str], description: str, **extra: Any) -> dict[str, Any]:
    return {"type": "string", "enum": list(values), "description": description, **extra}


def _boolean(description: str, **extra: Any) -> dict[str, Any]:
    return {"type": "boolean", "description": description, **extra}


def _objects(item: dict[str, Any], description: str) -> dict[str, Any]:
    return {"type": "array", "items": item, "description": description}


_AT = _s("HEAD, a full commit SHA or a unique hex prefix (4-40); branch names are not accepted. Default HEAD.",
         pattern="^(HEAD|[0-9a-fA-F]{4,40})$")
_SCOPE = _enum(SCOPES, "Durable snapshot and/or the explicit artifact overlay.", default="durable")
_VIEW = {"view": _enum(VIEWS, "Hit projection: minimal (the default over MCP: path, lines, score, citation, "
                                "a short excerpt), default (longer excerpt, score parts) or full (whole text).",
                       default="minimal")}
_DRY_RUN = {"dryRun": _boolean("Analyse only; write nothing at all.", default=False)}

# ------------------------------------------------------------------ query / context pack

_FILTERS = {
    "paths": {"type": "array", "items": _s("A glob of repository paths (e.g. src/**/*.py).", minLength=1),
              "description": "Only files matching one of these globs are candidates; keyword statistics stay the snapshot's."},
    "excludeTests": _boolean("Leave test files out (every language's test conventions).", default=False),
}

QUERY = object_schema(QUERY_KEYS + VIEW_ARG, {
    "question": _text("The question."),
    "topK": _positive("Number of hits (default retrieval.top_k)."),
    "at": _AT,
    "scope": _SCOPE,
    "explain": _boolean("Include the score breakdown (never changes ranking).", default=False),
    **_FILTERS,
    **_VIEW,
}, required=["question"])

_PACK_FIELDS = {
    "goal": _text("The goal the packed context serves."),
    "budget": _positive("Content-unit budget.", default=DEFAULT_BUDGET),
    "at": _AT,
    "scope": _SCOPE,
    **_FILTERS,
}
_BUDGET_UNIT = {"budgetUnit": _enum(("words", "tokens"), "Unit of budget: words (content units) or tokens "
                                    "(the configured token counter over the complete hit text).", default="words")}
CONTEXT_PACK = object_schema(PACK_KEYS + VIEW_ARG, {**_PACK_FIELDS, **_BUDGET_UNIT, **_VIEW}, required=["goal"])

# ------------------------------------------------------------------ context packet

_TASK_ANCHOR = object_schema(TASK_ANCHOR_FIELDS, {
    "goal": _text("What the call is for."),
    "stopCondition": _text("When to stop."),
    "verificationTarget": _text("What proves the goal was met."),
}, required=TASK_ANCHOR_FIELDS)

_CANDIDATE = object_schema(CANDIDATE_FIELDS, {
    "id": _text("Candidate id."),
    "kind": _enum(PACKET_KINDS, "Evidence kind (also the selection priority order)."),
    "source": _s("Where it came from; missing or empty is a provenance gap that blocks the packet."),
    "capturedAt": _s("When it was captured; missing or empty is a provenance gap."),
    "relevance": _enum(RELEVANCES, "Validated, not used for selection."),
    "freshness": _enum(FRESHNESSES, "Expired candidates go to refresh."),
    "sizeUnits": {"type": "integer", "minimum": 1, "description": "Cost in budget units."},
    "content": _s("Full text."),
    "reference": _s("Resolvable handle used when the candidate becomes a pointer."),
    "loadWhen": _s("Load condition of a pointer."),
    "conflictsWith": {"type": "array", "items": {"type": "string", "minLength": 1},
                      "description": "Ids of candidates this one contradicts."},
    "trust": _enum(TRUSTS, "Trust label (default evidence)."),
    "flags": _strings("Injection flags; the computed ones are added."),
}, required=["id", "kind", "relevance", "freshness", "sizeUnits"])

_RETRIEVE = object_schema(RETRIEVE_KEYS, {
    **_PACK_FIELDS,
    "kind": _enum(RETRIEVE_KINDS, "Force one kind for every retrieved hit."),
}, required=["goal"], description="Run a context pack and add its selected hits as candidates.")

CONTEXT_PACKET = object_schema(REQUEST_FIELDS + ("retrieve",) + EVIDENCE_ARG, {
    "taskAnchor": _TASK_ANCHOR,
    "budgetUnits": _positive("Abstract capacity; selected sizeUnits never exceed it."),
    "candidates": _objects(_CANDIDATE, "Caller-listed candidates; may be omitted when retrieve or evidence is given."),
    "conflictsIncludePointers": _boolean("Check conflicts against pointers too.", default=False),
    "retrieve": _RETRIEVE,
    "evidence": _strings("Files given as direct evidence, PATH[:kind] (as --evidence); relative paths resolve "
                         "against the repository root."),
}, required=["taskAnchor", "budgetUnits"])

# ------------------------------------------------------------------ memory

MEMORY_RECALL = object_schema(RECALL_ARGS + VIEW_ARG, {
    "goal": _text("What the agent resumes."),
    **_VIEW,
}, required=["goal"])

# memory §10: what an item rests on; stored bound to blobs
_EVIDENCE_INPUT = {"type": "array", "description": "Evidence: path:Lx-Ly, path@sha:Lx-Ly or citation ids; or "
                   "{source: tool_output|web_page|transcript, ref} for untrusted sources.",
                   "items": {"anyOf": [{"type": "string"}, {"type": "object", "properties": {
                       "source": {"type": "string", "enum": ["tool_output", "web_page", "transcript"]},
                       "ref": {"type": "string"}}, "required": ["source", "ref"], "additionalProperties": False}]}}

_DECISION = object_schema(DECISION_KEYS, {
    "id": _s("Default: derived from title and summary."),
    "title": _text("Decision title."),
    "summary": _text("What was decided."),
    "rationale": _s("Why."),
    "alternatives": _strings("Options not taken."),
    "consequences": _strings("What follows from it."),
    "relatedFiles": _strings("Repository-relative paths."),
    "evidence": _EVIDENCE_INPUT,
}, required=["title", "summary"])

_OPEN_LOOP = object_schema(OPEN_LOOP_KEYS, {
    "id": _s("Default: derived from title and nextAction."),
    "title": _text("What is unfinished."),
    "status": _enum(LOOP_STATUSES, "Anything else counts as open.", default="open"),
    "nextAction": _text("The next step."),
    "blockingConditions": _strings("What blocks it."),
    "relatedFiles": _strings("Repository-relative paths."),
    "sourceSessionId": _s("Default: this session."),
    "evidence": _EVIDENCE_INPUT,
}, required=["title", "nextAction"])

_PROMOTION_CANDIDATE = object_schema(PROMOTION_KEYS, {
    "id": _s("Candidate id."),
    "kind": _enum(tuple(PROMOTION_KINDS), "Document kind."),
    "title": _text("Document title."),
    "summary": _text("One-paragraph summary."),
    "tags": _strings("Tags."),
    "context": _s("Decision context."),
    "decision": _s("The decision."),
    "consequences": _strings("Consequences."),
    "alternatives": _strings("Alternatives."),
    "term": _s("Glossary term."),
    "definition": _s("Glossary definition."),
    "aliases": _strings("Glossary aliases."),
    "milestones": _strings("Plan milestones."),
    "workBreakdown": _strings("Plan work items."),
    "evidence": _strings("Citation handles path@sha:Lx-Ly or citation ids."),
    "supersedes": _s("Repository path of the document this one replaces."),
}, required=["kind", "title", "summary"])

MEMORY_WRAP = object_schema(WRAP_KEYS + DRY_RUN_ARG, {
    "goal": _text("The session goal."),
    "summary": _text("What happened."),
    "constraints": _strings("Constraints to keep."),
    "decisions": _objects(_DECISION, "Decisions taken."),
    "openLoops": _objects(_OPEN_LOOP, "Unfinished work."),
    "nextActions": _strings("Next steps."),
    "promotionCandidates": _objects(_PROMOTION_CANDIDATE, "Stored for a later memory promote."),
    "sourceHeadSha": {"type": ["string", "null"], "description": "Default: the current HEAD."},
    "createdAt": _s("ISO-8601 timestamp; default now.", format="date-time"),
    **_DRY_RUN,
}, required=["goal", "summary"])

_EVIDENCE_REF = object_schema(EVIDENCE_FIELDS, {
    "path": _text("Repository-relative path."),
    "startLine": {"type": "integer", "minimum": 1, "description": "First line (with endLine)."},
    "endLine": {"type": "integer", "minimum": 1, "description": "Last line (with startLine)."},
    "excerpt": _text("The quoted text (default with handle: the cited lines)."),
    "handle": _s("Instead of path and lines: path:Lx-Ly, path@sha:Lx-Ly or a citation id (memory §10)."),
}, required=[])

ARTIFACT_CAPTURE = object_schema(CAPTURE_FIELDS + DRY_RUN_ARG, {
    "scope": _enum(ARTIFACT_SCOPES, "Artifact scope; evidence artifacts need at least one evidence ref."),
    "kind": _text("Free-form kind, e.g. finding."),
    "title": _text("Short title."),
    "text": _text("The finding."),
    "confidence": {"type": ["number", "null"], "minimum": 0, "maximum": 1, "description": "Confidence in [0, 1]."},
    "sessionId": _s("Session that produced it."),
    "evidence": _objects(_EVIDENCE_REF, "Evidence refs."),
    **_DRY_RUN,
}, required=["scope", "kind", "title", "text"])

# ------------------------------------------------------------------ window, sessions, verify

TOOL_RESULT_RECALL = object_schema(TOOL_RESULT_RECALL_ARGS, {
    "refId": _text("The offloaded tool result's ref id."),
    "sessionId": _text("The session id: letters, digits, _ . : - (at most 200, not starting with . : -)."),
}, required=list(TOOL_RESULT_RECALL_ARGS))

SESSION_SEARCH = object_schema(SESSION_SEARCH_ARGS, {
    "query": _text("Full-text query."),
    "scope": _enum(("project", "all"), "all needs a cross-repository index (not built yet).", default="project"),
    "session_id": _s("Only this session."),
    "project_id": _s("Project filter for scope all."),
    "limit": {"type": "integer", "minimum": 1, "default": DEFAULT_LIMIT,
              "description": f"Maximum hits; larger values are clamped to {MAX_LIMIT}."},
    "prefer_trigram": _boolean("Substring recall through the trigram index.", default=False),
    "include_artifacts": _boolean("Also search context artifacts (compaction summaries, dreams).", default=False),
    "artifact_kinds": _strings("Only artifacts of these kinds."),
}, required=["query"])

VERIFY_CITATION = object_schema(VERIFY_ARGS, {
    "citation": _text("A citation id cite-<24 hex> or a handle path@sha:L<start>-L<end>."),
}, required=list(VERIFY_ARGS))

# ------------------------------------------------------------------ output

# Structured outputs omit null-valued keys (cli-contract §11), so a nullable field of the block
# (``resolvedSha`` without a HEAD, ``branch`` on a detached HEAD) is optional, never null.
SNAPSHOT = {
    "type": "object",
    "description": "The snapshot metadata block (knowledge §5.6); null-valued keys are omitted.",
    "properties": {
        "requestedRef": {"type": "string"},
        "resolvedSha": {"type": "string", "description": "Absent when HEAD is unborn."},
        "selection": {"type": "string", "enum": ["head-exact", "explicit-exact"]},
        "status": {"type": "string", "enum": ["indexed", "missing", "invalid", "store-unavailable", "unavailable"]},
        "branch": {"type": "string", "description": "Absent on a detached HEAD."},
        "detached": {"type": "boolean"},
        "worktreeDirty": {"type": "boolean"},
    },
    "required": ["requestedRef", "selection", "status", "detached", "worktreeDirty"],
}

OUTPUT = {
    "type": "object",
    "description": "The command's data object (non-objects as {result}) without null-valued keys, always with "
                   "the snapshot block. Tool errors carry no structured content: their text is ragit's error object.",
    "properties": {"snapshot": SNAPSHOT},
    "required": ["snapshot"],
}
