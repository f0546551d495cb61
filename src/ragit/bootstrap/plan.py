"""Step 6 of init: decide, per foundation document, whether to reuse, create or skip it.

Existing files are always reused, never rewritten (``init.merge_existing`` is always true);
a missing file is drafted only when the repository's coverage says it is wanted.
"""

from __future__ import annotations

import posixpath
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..config import CONFIG_RELPATH, Config
from ..errors import RagitError

# Draft kind -> the [docs] config key holding its path; order is the plan order.
DRAFT_KEYS = (
    ("entrypoint", "entrypoint"),
    ("workspace_map", "workspace_map"),
    ("ingestion_policy", "ingestion_policy"),
    ("known_gaps", "known_gaps"),
    ("adr_readme", "adr_dir"),
)
_FIRST_REUSED = ("README.md", "CONTRIBUTING.md")


@dataclass(frozen=True)
class Action:
    kind: str
    type: str  # create | reuse | skip
    path: str
    reason: str
    confidence: str  # high | medium | low
    source_paths: list[str]

    def to_data(self) -> dict[str, Any]:
        return {
            "type": self.type,
            "path": self.path,
            "reason": self.reason,
            "confidence": self.confidence,
            "sourcePaths": self.source_paths,
        }


@dataclass(frozen=True)
class Plan:
    actions: list[Action]
    reused: list[str]

    def paths(self, action_type: str) -> list[str]:
        return [a.path for a in self.actions if a.type == action_type]

    def to_data(self, dry_run: bool = False) -> dict[str, Any]:
        """The ``actions`` object of the init JSON; a dry run creates nothing, it only plans."""
        return {
            "mergeExisting": True,
            "planned": [a.to_data() for a in self.actions],
            "created": [] if dry_run else self.paths("create"),
            "reused": self.reused,
            "skipped": self.paths("skip"),
        }


def draft_paths(config: Config) -> dict[str, str]:
    """Draft kind -> repo-relative path from ``[docs]``; paths must stay inside the repository."""
    paths = {}
    for kind, key in DRAFT_KEYS:
        value = config["docs"][key]
        raw = f"{value}/README.md" if kind == "adr_readme" else value
        normalized = posixpath.normpath(raw.replace("\\", "/"))
        outside = normalized == ".." or normalized.startswith("../") or posixpath.isabs(normalized)
        if not raw.strip() or outside:
            raise RagitError(
                "CONFIG_INVALID", f"docs.{key} must be a path inside the repository, got {value!r}",
                {"path": CONFIG_RELPATH, "reason": f"docs.{key}: path outside repository"}, "ragit doctor",
            )
        paths[kind] = normalized
    return paths


def _wanted(kind: str, mode: str, strategy: str, coverage: dict[str, dict[str, Any]]) -> bool:
    status = {name: signal["status"] for name, signal in coverage.items()}
    if kind == "entrypoint":
        return True
    if kind == "workspace_map":
        return (strategy == "full" or mode in ("empty", "monorepo")
                or status["packageOwnershipMap"] != "sufficient")
    if kind == "ingestion_policy":
        return strategy == "minimal" or status["ingestionPolicy"] != "sufficient" or mode == "empty"
    if kind == "known_gaps":
        return strategy == "full" or any(value != "sufficient" for value in status.values())
    return strategy == "full" or mode == "empty" or status["decisionRecords"] != "sufficient"


def _details(
    kind: str, mode: str, coverage: dict[str, dict[str, Any]], slots: dict[str, list[str]],
) -> tuple[str, str, list[str]]:
    """Reason (for create/skip), confidence and source paths of one draft."""
    status = {name: signal["status"] for name, signal in coverage.items()}
    if kind == "entrypoint":
        sources = sorted({*slots["project"], *slots["product"]})
        return "agents and retrieval need one entry point to the repository's knowledge", "medium", sources
    if kind == "workspace_map":
        reason = ("the workspace layout is already documented" if status["packageOwnershipMap"] == "sufficient"
                  else "the directory and package layout needs an agent-readable map")
        return reason, "high" if mode == "monorepo" else "medium", slots["workspace"]
    if kind == "ingestion_policy":
        reason = ("an ingestion policy is already documented" if status["ingestionPolicy"] == "sufficient"
                  else "what gets indexed, and what not, should be written down")
        return reason, "medium", slots["ingestion-policy"]
    if kind == "known_gaps":
        gaps = any(value != "sufficient" for value in status.values())
        reason = ("the documentation gaps found by init should be recorded" if gaps
                  else "no documentation gaps were found")
        return reason, "high", []
    reason = ("decision records already exist" if status["decisionRecords"] == "sufficient"
              else "decision records need a home and a convention")
    return reason, "high" if status["decisionRecords"] == "missing" else "medium", slots["decisions"]


def plan_actions(
    root: Path, paths: dict[str, str], mode: str, strategy: str,
    coverage: dict[str, dict[str, Any]], kmap: list[dict[str, Any]],
) -> Plan:
    """The five draft actions (``paths`` from :func:`draft_paths`) plus every knowledge
    source that is reused as it is."""
    slots = {entry["slot"]: entry["sources"] for entry in kmap}
    actions = []
    for kind, path in paths.items():
        reason, confidence, sources = _details(kind, mode, coverage, slots)
        if (root / path).exists():
            action_type, reason = "reuse", "an existing document is reused, never overwritten"
        elif _wanted(kind, mode, strategy, coverage):
            action_type = "create"
        else:
            action_type = "skip"
        actions.append(Action(kind, action_type, path, reason, confidence, sources))
    action_paths = {a.path for a in actions}
    from_map = sorted(
        {source for entry in kmap for source in entry["sources"]} - action_paths,
        key=lambda path: (path not in _FIRST_REUSED, path),
    )
    reused = [a.path for a in actions if a.type == "reuse"] + from_map
    return Plan(actions, reused)
