"""Bodies of the foundation drafts init writes, filled from what the scan and census found."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from ..config import Config
from . import templates
from .census import Census
from .scan import Scan

_SIGNAL_LABELS = {
    "projectOverview": "Project overview",
    "localDevelopmentGuide": "Local development guide",
    "architectureRationale": "Architecture rationale",
    "decisionRecords": "Decision records",
    "packageOwnershipMap": "Package ownership map",
    "ingestionPolicy": "Ingestion policy",
}
_GAP_ADVICE = {
    "projectOverview": "add a root `README.md` that says what the project is and who it serves",
    "localDevelopmentGuide": "add `CONTRIBUTING.md` or a setup guide with the commands to build and test",
    "architectureRationale": "describe the architecture (for example `docs/architecture.md`)",
    "decisionRecords": "record decisions as ADRs under the ADR directory",
    "packageOwnershipMap": "map directories and packages to their responsibilities",
    "ingestionPolicy": "document what ragit should index and what it should skip",
}


@dataclass(frozen=True)
class DraftContext:
    """Everything a draft may mention; built once per init run."""

    mode: str
    strategy: str
    scan: Scan
    census: Census
    kmap: list[dict[str, Any]]
    config: Config


def _code(values: list[str], empty: str = "none") -> str:
    return ", ".join(f"`{v}`" for v in values) if values else empty


def _bullets(values: list[str], empty: str) -> str:
    return "\n".join(f"- `{v}`" for v in values) if values else f"- {empty}"


def _joined(values: list[str]) -> str:
    return ", ".join(values) if values else "none detected"


def _knowledge_sources(ctx: DraftContext) -> str:
    titles = ctx.census.titles()
    lines = []
    for entry in ctx.kmap:
        if not entry["sources"]:
            continue
        items = [f"`{s}` ({titles[s]})" if s in titles else f"`{s}`" for s in entry["sources"]]
        lines.append(f"- {entry['slot']}: {', '.join(items)}")
    return "\n".join(lines) if lines else "- No knowledge sources detected yet."


def _coverage_lines(ctx: DraftContext, only_gaps: bool) -> list[str]:
    lines = []
    for name, signal in ctx.census.coverage.items():
        if only_gaps and signal["status"] == "sufficient":
            continue
        line = f"- {_SIGNAL_LABELS[name]}: {signal['status']}"
        lines.append(f"{line} — {_GAP_ADVICE[name]}" if only_gaps else line)
    return lines


def _entrypoint(ctx: DraftContext) -> str:
    scan = ctx.scan
    return templates.ENTRYPOINT_DRAFT.format(
        repository_mode=ctx.mode,
        strategy=ctx.strategy,
        package_manager=scan.package_manager or "unknown",
        languages=_joined(scan.languages),
        frameworks=_joined(scan.frameworks),
        monorepo="yes" if scan.monorepo else "no",
        code_count=scan.code_count,
        doc_count=scan.doc_count,
        knowledge_sources=_knowledge_sources(ctx),
        coverage="\n".join(_coverage_lines(ctx, only_gaps=False)),
    )


def _workspace_map(ctx: DraftContext) -> str:
    scan = ctx.scan
    operations = next(e["sources"] for e in ctx.kmap if e["slot"] == "operations")
    return templates.WORKSPACE_MAP_DRAFT.format(
        repository_mode=ctx.mode,
        package_manager=scan.package_manager or "unknown",
        languages=_joined(scan.languages),
        workspace_files=_code(scan.workspace_files),
        build_files=_code(scan.build_files),
        apps=_bullets(scan.apps, "No app directories detected."),
        packages=_bullets(scan.packages, "No package directories detected."),
        operations=_bullets(operations, "No CI or infrastructure files detected."),
    )


def _ingestion_policy(ctx: DraftContext) -> str:
    ingest = ctx.config["ingest"]
    return templates.INGESTION_POLICY_DRAFT.format(
        doc_globs=_bullets(ingest["doc_globs"], "none"),
        code_globs=_bullets(ingest["code_globs"], "none"),
        include=_bullets(ingest["include"], "none"),
        exclude=_bullets(ingest["exclude"], "none"),
        respect_gitignore="yes" if ingest["respect_gitignore"] else "no",
        max_file_bytes=ingest["max_file_bytes"],
    )


def _known_gaps(ctx: DraftContext) -> str:
    gaps = _coverage_lines(ctx, only_gaps=True)
    return templates.KNOWN_GAPS_DRAFT.format(
        gaps="\n".join(gaps) if gaps else "- No coverage gaps were detected during init.",
    )


def _adr_readme(ctx: DraftContext) -> str:
    decisions = next(e["sources"] for e in ctx.kmap if e["slot"] == "decisions")
    return templates.ADR_README_DRAFT.format(
        adr_dir=ctx.config["docs"]["adr_dir"].rstrip("/"),
        existing=_bullets(decisions, "None yet."),
    )


_RENDERERS = {
    "entrypoint": _entrypoint,
    "workspace_map": _workspace_map,
    "ingestion_policy": _ingestion_policy,
    "known_gaps": _known_gaps,
    "adr_readme": _adr_readme,
}


def render_draft(kind: str, confidence: str, ctx: DraftContext) -> str:
    """Front matter marking the file as an inferred draft, then the generated body."""
    front = templates.DRAFT_FRONT_MATTER.format(confidence=confidence)
    return front + "\n" + _RENDERERS[kind](ctx)
