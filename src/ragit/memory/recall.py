"""``memory recall`` (memory §3): the resume packet, and the only bridge from working memory to
retrieval (``query`` and ``context pack`` never read working memory).

Recall is read-only and must work when the snapshot cannot be read: a missing, invalid or
unreachable snapshot (or embedder) degrades to working memory plus a keyword-only ranking of
reviewed knowledge artifacts, without touching the embedder or the snapshot store.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..contract.inputs import Validator
from ..contract.views import excerpt
from ..errors import RagitError
from .working import memory_relpath, read_json_object

if TYPE_CHECKING:  # pragma: no cover
    from ..config import Config
    from ..embed.base import Embedder
    from ..gitsnap.git import Git
    from ..retrieve.hits import Hit
    from ..retrieve.search import VectorCache

COMMAND = "memory recall"
DEGRADE_CODES = frozenset({
    "SNAPSHOT_NOT_INDEXED", "SNAPSHOT_MANIFEST_INVALID", "SNAPSHOT_SCHEMA_UNSUPPORTED", "SNAPSHOT_STORE_UNAVAILABLE",
    "REPOSITORY_STATE_CHANGED", "EMBEDDER_UNAVAILABLE", "SNAPSHOT_INGEST_IN_PROGRESS",
})
# Outside git there is no snapshot to select; recall degrades the same way under this code.
NO_REPOSITORY_CODE = "GIT_REPOSITORY_REQUIRED"
ARTIFACT_SCOPES = ("session", "harness")
DECISION_SUMMARY_CHARS = 200
SUMMARY_CHARS = {"minimal": 120, "default": 240}
TEXT_SUMMARY_CHARS = 240
_MINIMAL_DROP = ("rationale", "alternatives", "consequences")


def unavailable_warning(code: str) -> str:
    return f"snapshot unavailable ({code}); recalled from working memory and artifacts only"


def check_goal(goal: Any) -> str:
    """The trimmed goal; empty or non-string → INPUT_INVALID (``field: "goal"``)."""
    v = Validator(COMMAND)
    if goal is None:
        raise v.fail("goal", "required", "a goal is required")
    return v.text(goal, "goal")


# ---------------------------------------------------------------- working memory

@dataclass
class WorkingMemory:
    """``current.json`` and the latest session record (either may be absent)."""

    current: dict[str, Any] | None
    latest: dict[str, Any] | None
    warnings: list[str] = field(default_factory=list)


def read_working_memory(root: Path, config: Config) -> WorkingMemory:
    """Read the working state and the latest session record (file names sorted descending).

    An unreadable file is reported as a warning and treated as absent: recall never fails on it.
    """
    memory = WorkingMemory(None, None)

    def read(rel: str) -> dict[str, Any] | None:
        try:
            return read_json_object(Path(root) / rel)
        except ValueError as exc:
            memory.warnings.append(f"could not read {rel} ({exc}); ignored")
            return None

    memory.current = read(memory_relpath(config, "working_dir", "current.json"))
    session_dir = config["memory"]["session_dir"].strip("/")
    directory = Path(root) / session_dir
    names = sorted((p.name for p in directory.glob("*.json") if p.is_file()), reverse=True) if directory.is_dir() else []
    if names:
        memory.latest = read(f"{session_dir}/{names[0]}")
    return memory


def _strings(record: dict[str, Any] | None, key: str) -> list[str]:
    value = (record or {}).get(key)
    return [x for x in value if isinstance(x, str)] if isinstance(value, list) else []


def _objects(record: dict[str, Any] | None, key: str) -> list[dict[str, Any]]:
    value = (record or {}).get(key)
    return [x for x in value if isinstance(x, dict)] if isinstance(value, list) else []


def _text(record: dict[str, Any] | None, key: str) -> str | None:
    value = (record or {}).get(key)
    return value if isinstance(value, str) and value else None


def unique(items: list[str]) -> list[str]:
    return list(dict.fromkeys(items))


def unique_by_id(items: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """First occurrence of each id wins; items without an id are all kept."""
    seen: set[str] = set()
    out = []
    for item in items:
        ident = item.get("id")
        if isinstance(ident, str):
            if ident in seen:
                continue
            seen.add(ident)
        out.append(item)
    return out


def decision_title(path: str) -> str:
    """``docs/memory/decisions/restore-active_work.md`` → ``Restore Active Work``."""
    stem = path.rsplit("/", 1)[-1]
    stem = stem.rsplit(".", 1)[0] if "." in stem else stem
    return " ".join(w[:1].upper() + w[1:] for w in re.split(r"[-_]+", stem) if w)


def hit_decisions(hits: list[Hit], corpus_dir: str) -> list[dict[str, Any]]:
    """Decisions derived from hits on promoted decision documents (memory §3 step 4)."""
    prefix = f"{corpus_dir.strip('/')}/decisions/"
    return [{"id": h.chunk_id, "title": decision_title(h.path), "summary": excerpt(h.text, DECISION_SUMMARY_CHARS)}
            for h in hits if h.path.startswith(prefix)]


def previous_session(latest: dict[str, Any] | None) -> dict[str, str] | None:
    """``{sessionId, goal, summary}`` of the latest session record (memory §3 step 4), or None.

    The summary is the hand-off text one session leaves for the next, so recall carries it
    whole, in every view; a record without an id, goal or summary contributes what it has.
    """
    if latest is None:
        return None
    fields = {key: _text(latest, key) for key in ("sessionId", "goal", "summary")}
    if not any(fields.values()):
        return None
    return {key: value or "" for key, value in fields.items()}


# ---------------------------------------------------------------- degraded retrieval

def artifact_hits(root: Path, config: Config, masked_text: str, top_k: int,
                  warnings: list[str]) -> list[Hit]:
    """Keyword-mode hits from reviewed/promoted session and harness artifacts (no store, no embedder).

    Only lexical matches are returned: without vectors an artifact that shares no term with
    the goal carries no evidence of relevance.
    """
    from ..retrieve.overlay import score_overlay
    from ..retrieve.search import RetrievalParams, rank_hits
    from .artifact_overlay import overlay_candidates

    candidates = overlay_candidates(root, config, ARTIFACT_SCOPES, warnings=warnings)
    matched = [scored for scored in score_overlay(candidates, masked_text, None) if scored[2] > 0]
    return rank_hits(None, None, None, matched, RetrievalParams.from_config(config), top_k, "")


def unavailable_snapshot(git: Git | None) -> dict[str, Any]:
    """The snapshot block of degraded recall: HEAD and worktree facts, ``status: "unavailable"``."""
    from ..gitsnap.context import read_context

    from ..retrieve.selection import snapshot_block

    context = read_context(git) if git is not None else None
    return snapshot_block("HEAD", context.head if context else None, "head-exact", "unavailable", context)


# ---------------------------------------------------------------- the packet

@dataclass
class RecallPacket:
    """Unprojected recall result; :meth:`to_dict` projects and re-masks it for one view."""

    goal: str
    constraints: list[str]
    open_loops: list[dict[str, Any]]
    decisions: list[dict[str, Any]]
    hits: list[Hit]
    next_actions: list[str]
    latest_session_id: str | None
    previous_session: dict[str, str] | None
    source_head_sha: str | None
    snapshot_sha: str | None
    snapshot: dict[str, Any]
    created_at: str
    warnings: list[str]

    def to_dict(self, view: str = "default") -> dict[str, Any]:
        """The packet in memory §3 field order, every string re-masked (knowledge §10.2–10.3)."""
        from ..contract.views import project_hit
        from ..retrieve.remask import hits_redaction
        from ..security.masking import RedactionSummary, mask_text, mask_value

        summary = RedactionSummary()

        def masked(value: Any, path: str) -> Any:
            out, count, sources = mask_value(value, path=path)
            summary.add(count, sources)
            return out

        goal = mask_text(self.goal)
        summary.add(goal.count, ["goal"] if goal.count else [])
        constraints = masked(self.constraints, "constraints")
        open_loops = masked(self.open_loops, "openLoops")
        decisions = []
        for i, decision in enumerate(self.decisions):
            # mask before compacting (a cut must never expose part of a secret), but report only
            # the fields the view keeps: §10.3 paths point into the projected payload
            fields = {k: mask_value(v, path=f"relatedDecisions[{i}].{k}") for k, v in decision.items()}
            projected = project_decision({k: f[0] for k, f in fields.items()}, view)
            for key in projected:
                summary.add(fields[key][1], fields[key][2])
            decisions.append(projected)
        count, hit_sources = hits_redaction(self.hits, view, prefix="retrievedHits")
        summary.add(count, hit_sources)
        next_actions = masked(self.next_actions, "nextActions")
        previous = None if self.previous_session is None else masked(self.previous_session, "previousSession")
        return {
            "goal": goal.text,
            "constraints": constraints,
            "openLoops": open_loops,
            "relatedDecisions": decisions,
            "retrievedHits": [project_hit(h, view) for h in self.hits],
            "nextActions": next_actions,
            "latestSessionId": self.latest_session_id,
            "previousSession": previous,
            "sourceHeadSha": self.source_head_sha,
            "snapshotSha": self.snapshot_sha,
            "snapshot": dict(self.snapshot),
            "createdAt": self.created_at,
            "warnings": [mask_text(w).text for w in self.warnings],
            "redactionSummary": summary.to_dict(),
        }


def project_decision(decision: dict[str, Any], view: str) -> dict[str, Any]:
    """``full`` unchanged; ``default`` summary compacted to 240; ``minimal`` to 120 without
    rationale, alternatives and consequences."""
    if view == "full":
        return dict(decision)
    out = {k: v for k, v in decision.items() if view != "minimal" or k not in _MINIMAL_DROP}
    if isinstance(out.get("summary"), str):
        out["summary"] = excerpt(out["summary"], SUMMARY_CHARS[view])
    return out


def recall(root: Path, git: Git | None, config: Config, goal: str, *,
           embedder: Embedder | None = None, cache: VectorCache | None = None,
           ingest_wait: float | None = None) -> RecallPacket:
    """Build the resume packet for an already-validated ``goal`` (memory §3); never writes.

    ``ingest_wait`` bounds the wait for a HEAD snapshot a running ingest is publishing
    (knowledge §5.7; None = ``retrieval.ingest_wait_seconds``, 0 = ``--no-wait``)."""
    from ..clock import now_iso
    from ..retrieve.query import DIRTY_WARNING, retrieve
    from ..security.masking import mask_text

    memory = read_working_memory(root, config)
    current, latest = memory.current, memory.latest
    warnings = list(memory.warnings)

    working_goal = _text(current, "goal")
    search = goal if working_goal is None or working_goal == goal else f"{goal}\n{working_goal}"
    top_k = config["memory"]["recall_top_k"]
    code: str | None = NO_REPOSITORY_CODE if git is None else None
    snapshot_sha: str | None = None
    hits: list[Hit] = []
    if git is not None:
        try:
            retrieval = retrieve(root, git, config, search, top_k=top_k, scope="durable", cache=cache,
                                 embedder=embedder, ingest_wait=ingest_wait)
        except RagitError as exc:
            if exc.code not in DEGRADE_CODES:
                raise
            code = exc.code
        else:
            hits, snapshot_sha, snapshot = retrieval.hits, retrieval.snapshot_sha, retrieval.selection.block()
            warnings += retrieval.warnings
    if code is not None:
        from ..retrieve.remask import remask_hits
        from ..retrieve.search import label_hits

        snapshot = unavailable_snapshot(git)
        warnings.append(unavailable_warning(code))
        if snapshot["worktreeDirty"]:
            warnings.append(DIRTY_WARNING)
        hits = artifact_hits(root, config, mask_text(search).text, top_k, warnings)
        remask_hits(hits)
        label_hits(hits)

    loops = _objects(current, "openLoops") if current is not None else [
        loop for loop in _objects(latest, "openLoops") if loop.get("status") != "closed"]
    derived = hit_decisions(hits, config["memory"]["corpus_dir"])
    decisions = unique_by_id(_objects(current, "decisions") + _objects(latest, "decisions") + derived)
    working_ids = {d.get("id") for d in _objects(current, "decisions") + _objects(latest, "decisions")}
    from_snapshot = frozenset(d["id"] for d in derived if d.get("id") not in working_ids)
    # memory §10: compare each item's evidence with the snapshot read (HEAD when degraded)
    from .evidence import label_and_demote, open_check

    with_check = open_check(git, snapshot_sha or (snapshot.get("resolvedSha") if snapshot else None))
    try:
        loops = label_and_demote(loops, with_check)
        decisions = label_and_demote(decisions, with_check, from_snapshot)
    finally:
        if with_check is not None:
            with_check.__exit__(None, None, None)
    return RecallPacket(
        goal=goal,
        constraints=unique(_strings(current, "constraints") + _strings(latest, "constraints")),
        open_loops=loops,
        decisions=decisions,
        hits=hits,
        next_actions=unique(_strings(current, "nextActions") + _strings(latest, "nextActions")),
        latest_session_id=_text(current, "latestSessionId") or _text(latest, "sessionId"),
        previous_session=previous_session(latest),
        source_head_sha=_text(current, "sourceHeadSha") or _text(latest, "sourceHeadSha"),
        snapshot_sha=snapshot_sha,
        snapshot=snapshot,
        created_at=now_iso(),
        warnings=warnings,
    )


# ---------------------------------------------------------------- text

def _flat(text: Any) -> str:
    return " ".join(str(text).split())


def _stale_note(item: dict[str, Any]) -> str:
    """`` [stale: <handle> changed, …]`` for an item whose evidence moved (memory §10)."""
    if not item.get("stale"):
        return ""
    moved = [f"{e.get('handle')} {e.get('status')}" for e in item.get("staleEvidence") or [] if isinstance(e, dict)]
    return f" [stale: {'; '.join(moved)}]"


def recall_text(data: dict[str, Any], hits: list[Hit], view: str) -> str:
    """The text rendering of a projected packet (memory §3)."""
    from ..contract.render import hit_list, value

    snap = data["snapshot"]
    lines = [
        "# ragit memory recall",
        f"- goal: {data['goal']}",
        f"- latest_session: {value(data['latestSessionId'])}",
        f"- snapshot: {value(data['snapshotSha'])}",
        f"- snapshot_status: {snap['status']}",
        f"- snapshot_sha: {value(snap['resolvedSha'])}",
        f"- branch: {value(snap['branch'])}",
        f"- detached: {value(snap['detached'])}",
        f"- worktree_dirty: {value(snap['worktreeDirty'])}",
        f"- source_head: {value(data['sourceHeadSha'])}",
        f"- view: {view}",
        "",
        "## Previous Session",
    ]
    previous = data.get("previousSession")
    if previous:
        lines += [f"- goal: {_flat(previous['goal'])}", f"- summary: {_flat(previous['summary'])}"]
    else:
        lines.append("- none")
    lines += ["", "## Constraints"]
    lines += [f"- {_flat(c)}" for c in data["constraints"]] or ["- none"]
    lines += ["", "## Open Loops"]
    for loop in data["openLoops"]:
        lines.append(f"- [{_flat(loop.get('status', 'open'))}] {_flat(loop.get('title', ''))}{_stale_note(loop)}")
        lines.append(f"  next: {_flat(loop.get('nextAction', ''))}")
        blockers = [_flat(b) for b in loop.get("blockingConditions") or [] if isinstance(b, str)]
        if blockers:
            lines.append(f"  blockers: {'; '.join(blockers)}")
    if not data["openLoops"]:
        lines.append("- none")
    lines += ["", "## Related Decisions"]
    for d in data["relatedDecisions"]:
        lines += [f"- {_flat(d.get('title', ''))}{_stale_note(d)}",
                  f"  {excerpt(str(d.get('summary', '')), TEXT_SUMMARY_CHARS)}"]
    if not data["relatedDecisions"]:
        lines.append("- none")
    lines += ["", "## Retrieved Hits"] + hit_list(hits, view)
    lines += ["", "## Next Actions"] + ([f"- {_flat(a)}" for a in data["nextActions"]] or ["- none"])
    lines += ["", "## Warnings"] + ([f"- {w}" for w in data["warnings"]] or ["- none"])
    return "\n".join(lines) + "\n"
