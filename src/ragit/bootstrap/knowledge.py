"""Step 5 of init: the knowledge map (which files fill which slot) and the maturity scores."""

from __future__ import annotations

from typing import Any

from .census import CONFIG_SOURCE, Census
from .scan import Scan

SLOTS = (
    "project", "product", "architecture", "workspace", "rules",
    "decisions", "operations", "glossary", "ingestion-policy",
)
_STATUS_POINTS = {"sufficient": 3, "partial": 1, "missing": 0}


def knowledge_map(scan: Scan, census: Census) -> list[dict[str, Any]]:
    """The 9 slots in fixed order, each with its sorted, unique sources."""
    slots: dict[str, set[str]] = {slot: set() for slot in SLOTS}
    for doc in census.documents:
        for role in doc.roles:
            slots[role].add(doc.path)
    slots["workspace"].update(scan.workspace_files)
    slots["operations"].update(scan.ci_files)
    slots["operations"].update(scan.infra_files)
    slots["ingestion-policy"].add(CONFIG_SOURCE)
    return [{"slot": slot, "sources": sorted(slots[slot])} for slot in SLOTS]


def maturity(scan: Scan, coverage: dict[str, dict[str, Any]]) -> dict[str, int]:
    """Four 0–10 scores; a signal counts 3 when sufficient, 1 when partial (knowledge §13)."""
    points = {name: _STATUS_POINTS[signal["status"]] for name, signal in coverage.items()}
    docs = scan.doc_count
    scores = {
        "discoverability": 2 * points["projectOverview"] + points["localDevelopmentGuide"]
        + points["packageOwnershipMap"] + (1 if docs > 0 else 0),
        "architectureClarity": 2 * points["architectureRationale"] + points["decisionRecords"]
        + (1 if scan.code_count > 0 else 0),
        "operationalReadiness": points["localDevelopmentGuide"] + 2 * points["ingestionPolicy"]
        + (2 if scan.ci_files else 0) + (1 if scan.package_manager else 0),
        "agentReadability": points["projectOverview"] + points["architectureRationale"]
        + 2 * points["ingestionPolicy"] + (2 if docs >= 3 else 1 if docs > 0 else 0),
    }
    return {name: max(0, min(10, value)) for name, value in scores.items()}
