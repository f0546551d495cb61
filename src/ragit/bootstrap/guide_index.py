"""The AGENTS.md boundary index: `[B1]`-style and Ground/Rule/Failure Trajectory/Flow headings.

Agents address parts of their instructions by identifier (`[B2.a]`, `Rule 1`); the index
records where each identifier's block starts and ends and how blocks nest, so a tool can
cite or load one block without re-parsing the file.
"""

from __future__ import annotations

import re
from typing import Any

from ..ingest.text import normalize_newlines, split_lines
from .templates import GUIDE_TEMPLATES, TEMPLATE_DOC_TYPES

INDEX_VERSION = "0.1.0"
INDEX_PATH = ".ragit/guide/guide-index.json"
TEMPLATES_DIR = ".ragit/guide/templates"
AGENTS_PATH = "AGENTS.md"

# The reference patterns, with the title made optional [ours] so a bare `## [B1]` counts.
BOUNDARY_PATTERN = r"^#{2,6}\s*(\[[A-Z][0-9]+(?:\.[a-z0-9]+)*\])(?:\s+(.*))?$"
GRF_PATTERN = r"^#{2,6}\s*\[?(Ground|Rule|Failure Trajectory|Flow)\s+([0-9]+)([A-Za-z]+)?\]?(?:\s+(.*))?$"
_BOUNDARY = re.compile(BOUNDARY_PATTERN)
_GRF = re.compile(GRF_PATTERN)
_BRACKET_ID = re.compile(r"^\[[A-Z][0-9]+(?:\.[a-z0-9]+)*\]$")
_GRF_SUB_ID = re.compile(r"^(Ground|Rule|Failure Trajectory|Flow) ([0-9]+)[A-Za-z]+$")
_FENCE = re.compile(r"^ {0,3}(`{3,}|~{3,})")


def template_paths() -> list[str]:
    """Repo-relative paths of the 9 guide templates, in creation order."""
    return [f"{TEMPLATES_DIR}/{name}" for name in GUIDE_TEMPLATES]


def template_map() -> dict[str, str]:
    return {doc_type: f"{TEMPLATES_DIR}/{doc_type}.template.md" for doc_type in TEMPLATE_DOC_TYPES}


def _heading(line: str) -> tuple[str, str] | None:
    """(id, title) when ``line`` is a boundary heading."""
    match = _BOUNDARY.match(line)
    if match:
        return match.group(1), (match.group(2) or "").strip()
    match = _GRF.match(line)
    if match:
        kind, number, suffix, title = match.groups()
        return f"{kind} {number}{suffix or ''}", (title or "").strip()
    return None


def _parent_id(boundary_id: str, known: set[str]) -> str | None:
    """`[B1.a]` belongs to `[B1]`, `Rule 1a` to `Rule 1` — when that parent exists."""
    parent = None
    if _BRACKET_ID.match(boundary_id):
        segments = boundary_id[1:-1].split(".")
        if len(segments) > 1:
            parent = "[" + ".".join(segments[:-1]) + "]"
    else:
        match = _GRF_SUB_ID.match(boundary_id)
        if match:
            parent = f"{match.group(1)} {match.group(2)}"
    return parent if parent in known else None


def parse_guide(text: str) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """Boundaries (one per identifier heading) and sections (one per root boundary).

    A boundary runs to the line before the next boundary; a section runs from its root to the
    line before the next root and lists every descendant. Headings inside fenced code blocks
    are not boundaries [ours]. Line numbers are 1-based.
    """
    lines = split_lines(normalize_newlines(text))
    found: list[tuple[str, str, int, int]] = []  # id, title, level, start line
    fence: str | None = None
    for number, line in enumerate(lines, start=1):
        marker = _FENCE.match(line)
        if marker:
            if fence is None:
                fence = marker.group(1)
            elif marker.group(1)[0] == fence[0] and len(marker.group(1)) >= len(fence):
                fence = None
            continue
        if fence is not None:
            continue
        heading = _heading(line)
        if heading:
            level = len(line) - len(line.lstrip("#"))
            found.append((heading[0], heading[1], level, number))

    known = {entry[0] for entry in found}
    boundaries = []
    for index, (boundary_id, title, level, start) in enumerate(found):
        end = found[index + 1][3] - 1 if index + 1 < len(found) else len(lines)
        boundaries.append({
            "id": boundary_id,
            "title": title,
            "level": level,
            "startLine": start,
            "endLine": end,
            "parentId": _parent_id(boundary_id, known),
        })

    parents = {b["id"]: b["parentId"] for b in boundaries}

    def root_of(boundary_id: str) -> str:
        seen = {boundary_id}
        while parents.get(boundary_id) and parents[boundary_id] not in seen:
            boundary_id = parents[boundary_id]
            seen.add(boundary_id)
        return boundary_id

    roots = [b for b in boundaries if b["parentId"] is None]
    sections = []
    for index, root in enumerate(roots):
        end = roots[index + 1]["startLine"] - 1 if index + 1 < len(roots) else len(lines)
        children = [b["id"] for b in boundaries if b["id"] != root["id"] and root_of(b["id"]) == root["id"]]
        sections.append({
            "rootId": root["id"],
            "blockStartLine": root["startLine"],
            "blockEndLine": end,
            "childIds": children,
        })
    return boundaries, sections


def build_index(agents_text: str, agents_mode: str, agents_sha256: str, generated_at: str) -> dict[str, Any]:
    """The guide-index.json object, in emission order."""
    boundaries, sections = parse_guide(agents_text)
    return {
        "version": INDEX_VERSION,
        "generatedAt": generated_at,
        "source": {"path": AGENTS_PATH, "mode": agents_mode, "sha256": agents_sha256},
        "parser": {"boundaryRegex": BOUNDARY_PATTERN, "grfRegex": GRF_PATTERN},
        "boundaries": boundaries,
        "sections": sections,
        "templateMap": template_map(),
        "defaults": {"language": "en", "profile": "topological", "docTypes": list(TEMPLATE_DOC_TYPES)},
    }
