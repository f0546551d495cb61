"""Step 4 of init: type, title and knowledge roles of every doc, and six coverage signals.

Roles are inferred from paths and doc types only (knowledge §13); they say which knowledge
slot a document can fill, so init reuses it instead of drafting a replacement.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..ingest.doctypes import resolve_doc_type, type_hints
from ..ingest.frontmatter import parse_front_matter
from ..ingest.text import normalize_newlines
from .scan import Scan

_BOM = "\ufeff"
_RULES = re.compile(r"setup|onboarding|getting-started|development")
_ARCHITECTURE = re.compile(r"architecture|system-design|technical-overview|infra")
_WORKSPACE = re.compile(r"(^|/)workspace-map\.md$|(apps|packages)/[^/]+/readme\.md$")
_INGESTION = re.compile(r"ingestion-policy")
_OPERATIONS = re.compile(r"runbook|operations|operational|deploy|deployment|playbook")
_TYPE_ROLES: dict[str, tuple[str, ...]] = {
    "prd": ("product",),
    "adr": ("decisions",),
    "ddd": ("architecture", "glossary"),
    "glossary": ("glossary",),
    "spec": ("architecture",),
    "srs": ("architecture",),
}
CONFIG_SOURCE = ".ragit/config.toml"


@dataclass(frozen=True)
class Document:
    path: str
    doc_type: str
    title: str | None
    roles: frozenset[str]


@dataclass(frozen=True)
class Census:
    documents: list[Document]
    coverage: dict[str, dict[str, Any]]

    def titles(self) -> dict[str, str]:
        return {doc.path: doc.title for doc in self.documents if doc.title}


def _sources(documents: list[Document], role: str) -> list[str]:
    """Sorted paths of the documents that fill ``role``."""
    return sorted(doc.path for doc in documents if role in doc.roles)


def roles_for(path: str, doc_type: str) -> frozenset[str]:
    """Knowledge roles a document fills, from its lower-cased path and its type."""
    lowered = path.lower()
    roles: set[str] = set()
    if lowered == "readme.md":
        roles.update(("project", "product"))
    if lowered == "contributing.md" or lowered.endswith("/contributing.md") or _RULES.search(lowered):
        roles.add("rules")
    if _ARCHITECTURE.search(lowered):
        roles.add("architecture")
    if _WORKSPACE.search(lowered):
        roles.add("workspace")
    if _INGESTION.search(lowered):
        roles.add("ingestion-policy")
    if _OPERATIONS.search(lowered):
        roles.add("operations")
    roles.update(_TYPE_ROLES.get(doc_type, ()))
    return frozenset(roles)


def _read_text(path: Path, limit: int) -> str:
    """The doc's text for type detection; unreadable or odd bytes never fail the census."""
    try:
        with path.open("rb") as handle:
            data = handle.read(limit)
    except OSError:
        return ""
    return normalize_newlines(data.decode("utf-8", errors="replace")).removeprefix(_BOM)


def _title(text: str) -> str | None:
    for line in parse_front_matter(text).body.split("\n"):
        stripped = line.strip()
        if stripped.startswith("#"):
            return stripped.lstrip("#").strip() or None
    return None


def _signal(status: str, sources: list[str]) -> dict[str, Any]:
    return {"status": status, "sources": sorted(set(sources))}


def _first_of(primary: list[str], fallback: list[str], *, partial: bool | None = None) -> dict[str, Any]:
    """Sufficient with ``primary`` sources, else partial with ``fallback``, else missing."""
    if primary:
        return _signal("sufficient", primary)
    is_partial = bool(fallback) if partial is None else partial
    return _signal("partial" if is_partial else "missing", fallback)


def take_census(root: Path, scan: Scan, max_file_bytes: int) -> Census:
    """Read every scanned doc once and derive the coverage signals of knowledge §13 step 4."""
    documents = []
    for path in scan.doc_paths:
        text = _read_text(root / path, max_file_bytes)
        doc_type = resolve_doc_type(path, type_hints(text))
        documents.append(Document(path, doc_type, _title(text), roles_for(path, doc_type)))
    project = _sources(documents, "project")
    rules = _sources(documents, "rules")
    architecture = _sources(documents, "architecture")
    decisions = _sources(documents, "decisions")
    workspace = _sources(documents, "workspace")
    ingestion = _sources(documents, "ingestion-policy")
    coverage = {
        "projectOverview": _first_of(project, [], partial=scan.doc_count > 0),
        "localDevelopmentGuide": _first_of(rules, project),
        "architectureRationale": _first_of(architecture, decisions),
        "decisionRecords": _first_of(decisions, architecture),
        "packageOwnershipMap": _first_of(
            workspace, [*scan.workspace_files, *scan.apps, *scan.packages],
            partial=scan.monorepo or bool(scan.workspace_files),
        ),
        "ingestionPolicy": _first_of(
            ingestion, [CONFIG_SOURCE], partial="package.json" in scan.build_files,
        ),
    }
    return Census(documents, coverage)
