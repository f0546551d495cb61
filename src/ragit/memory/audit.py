"""``ragit memory verify`` (memory §10): which memory items rest on code that has since changed.

Read-only. Every decision and open loop of the working state (and the latest session record)
and every knowledge artifact is checked against one commit (HEAD or ``--at``) with ``verify``'s
comparison; an item is ``stale`` when any of its repository evidence is no longer found
unchanged, ``no_evidence`` when it has no repository evidence at all.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from .evidence import Assessment, EvidenceCheck, assess, evidence_list, parse_stored

if TYPE_CHECKING:  # pragma: no cover
    from ..config import Config
    from ..gitsnap.git import Git

COMMAND = "memory verify"


def _artifact_evidence(record: dict[str, Any]) -> list[dict[str, Any]]:
    """Artifact evidence refs in the stored-handle form: blob-bound refs are repository evidence,
    the rest (a log excerpt, a file that was not committed) count as tool output."""
    out = []
    for ev in record.get("evidence") or []:
        blob, start, end, path = ev.get("blobId"), ev.get("startLine"), ev.get("endLine"), ev.get("path")
        if isinstance(blob, str) and isinstance(start, int) and isinstance(end, int):
            out.append({"handle": f"{path}@{blob}:L{start}-L{end}", "commitSha": ev.get("sourceSha"),
                        "source": "repository"})
        else:
            out.append({"source": "tool_output", "ref": f"{path}#{ev.get('evidenceId')}"})
    return out


def memory_items(root: Path, config: Config, warnings: list[str]) -> list[tuple[str, dict[str, Any]]]:
    """``(kind, item)`` for every decision, open loop and artifact, in a stable order; artifact
    items carry their evidence in the stored-handle form."""
    from .artifacts import load_artifacts
    from .recall import read_working_memory, unique_by_id

    memory = read_working_memory(root, config)
    warnings.extend(memory.warnings)

    def objects(record: dict[str, Any] | None, key: str) -> list[dict[str, Any]]:
        value = (record or {}).get(key)
        return [x for x in value if isinstance(x, dict)] if isinstance(value, list) else []

    items: list[tuple[str, dict[str, Any]]] = []
    for d in unique_by_id(objects(memory.current, "decisions") + objects(memory.latest, "decisions")):
        items.append(("decision", d))
    loops = objects(memory.current, "openLoops") if memory.current is not None else [
        loop for loop in objects(memory.latest, "openLoops") if loop.get("status") != "closed"]
    for loop in unique_by_id(loops):
        items.append(("open_loop", loop))
    artifacts, skipped = load_artifacts(root, config)
    warnings.extend(skipped)
    for artifact in sorted(artifacts, key=lambda a: a.artifact_id):
        record = artifact.to_dict()
        items.append(("artifact", {"id": artifact.artifact_id, "title": artifact.title,
                                   "evidence": _artifact_evidence(record)}))
    return items


@dataclass
class MemoryVerify:
    commit: str
    items: list[dict[str, Any]]
    warnings: list[str]

    @property
    def stale(self) -> int:
        return sum(1 for item in self.items if item["status"] == "stale")

    def to_dict(self) -> dict[str, Any]:
        return {"commit": self.commit, "items": self.items, "stale": self.stale, "warnings": list(self.warnings)}

    def text(self) -> str:
        from ..contract.render import header

        lines = header(COMMAND, [("commit", self.commit), ("items", len(self.items)), ("stale", self.stale)],
                       self.warnings)
        for item in self.items:
            if item["status"] == "current":
                continue
            lines.append(f"- [{item['status']}] {item['kind']} {item['id'][:12]} {item['title']}")
            for ev in item["evidence"]:
                if ev["status"] not in ("ok", "shifted"):
                    lines.append(f"  {ev['status']}: {ev['handle']}")
                    lines += [f"    {line}" for line in (ev.get("diff") or "").splitlines()]
        if self.stale:
            lines.append("refresh: re-cite the current lines (ragit query / context pack), then ragit memory wrap")
        return "\n".join(lines) + "\n"


def _status(a: Assessment) -> str:
    if a.provenance != "repository":
        return "no_evidence"
    return "stale" if a.stale else "current"


def verify_memory(root: Path, git: Git, config: Config, at: str | None = None) -> MemoryVerify:
    """Check every memory item's evidence against HEAD (or ``at``); never writes."""
    from ..gitsnap.context import read_context
    from ..gitsnap.refs import resolve_at
    from ..retrieve.query import DIRTY_WARNING

    commit = resolve_at(git, at or "HEAD")
    warnings: list[str] = []
    if at is None and read_context(git).dirty:
        warnings.append(DIRTY_WARNING)
    out: list[dict[str, Any]] = []
    with EvidenceCheck(git, commit) as check:
        for kind, item in memory_items(root, config, warnings):
            a = assess(evidence_list(item), check)
            out.append({"kind": kind, "id": str(item.get("id", "")), "title": str(item.get("title", "")),
                        "status": _status(a), "provenance": a.provenance, "evidence": [dict(e) for e in a.evidence]})
    return MemoryVerify(commit, out, warnings)


@dataclass
class MemoryCitationIndex:
    """The memory plane's answer to ``why``'s question (ragit.retrieve.why.MemoryCitations): which
    decisions, open loops and artifacts cite some lines, and whether their evidence still holds
    at the commit ``why`` reads. Read-only; items are read once per index."""

    root: Path
    git: Git
    config: Config
    _items: list[tuple[str, dict[str, Any]]] | None = None

    def items_citing(self, path: str, start: int | None, end: int | None, sha: str) -> list[dict[str, Any]]:
        """Items with a repository handle on ``path`` whose lines overlap ``start..end`` at ``sha``
        (anywhere in the file when None), in memory order, each with its ``stale`` state at ``sha``.
        A handle whose text is still there is placed where it is now (``verify``'s current
        location); a stale one at the lines it was bound to."""
        if self._items is None:
            self._items = memory_items(self.root, self.config, [])
        out: list[dict[str, Any]] = []
        with EvidenceCheck(self.git, sha) as check:
            for kind, item in self._items:
                evidence = evidence_list(item)
                on_path = [r for r in (parse_stored(e) for e in evidence) if r is not None and r.path == path]
                if not on_path:
                    continue
                citing = []
                for r in on_path:
                    _, current, _ = check.status(r)
                    lo, hi = (current["startLine"], current["endLine"]) if current else (r.start, r.end)
                    if start is None or end is None or (lo <= end and start <= hi):
                        citing.append(r.handle)
                if not citing:
                    continue
                a = assess(evidence, check)
                out.append({"kind": kind, "id": str(item.get("id", "")), "title": str(item.get("title", "")),
                            "stale": a.stale, "provenance": a.provenance, "evidence": citing,
                            "staleEvidence": [dict(s) for s in a.stale_evidence]})
        return out
