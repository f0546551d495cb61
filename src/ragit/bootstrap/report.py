"""Step 8 of init: next actions and the text rendering of the init result."""

from __future__ import annotations

from typing import Any

DRY_RUN_NEXT = ["rerun ragit init without --dry-run to apply changes"]
MIGRATION_NEXT = ["ragit migrate from-json-store", "ragit hooks install", "ragit ingest --all"]
DEFAULT_NEXT = [
    "commit the generated drafts",
    "ragit ingest --all",
    "ragit status",
    'ragit query "<question>"',
    "ragit hooks install",
]


def next_actions(dry_run: bool, migration_required: bool) -> list[str]:
    if dry_run:
        return list(DRY_RUN_NEXT)
    if migration_required:
        return list(MIGRATION_NEXT)
    return list(DEFAULT_NEXT)


def _git_line(git: dict[str, bool]) -> str:
    if git["wasRepository"]:
        return "existing repository"
    return "initialized" if git["initialized"] else "not a repository"


def render_init_text(data: dict[str, Any]) -> str:
    """The text layout of knowledge §13 (no trailing newline; the CLI adds one)."""
    scan = data["scan"]
    actions = data["actions"]
    bootstrap = data["bootstrap"]
    lines = [
        "# ragit init",
        f"- execution_mode: {data['executionMode']}",
        f"- repository_mode: {data['repositoryMode']}",
        f"- strategy: {data['strategy']}",
        f"- package_manager: {scan['packageManager'] or 'unknown'}",
        f"- monorepo: {'yes' if scan['monorepo'] else 'no'}",
        f"- code_docs: {scan['codeFileCount']}/{scan['docFileCount']}",
        "",
        "## Coverage",
    ]
    for name, signal in data["coverage"].items():
        sources = ", ".join(signal["sources"]) or "none"
        lines.append(f"- {name}: {signal['status']} ({sources})")
    lines += ["", "## Planned Actions"]
    lines += [f"= {path}" for path in actions["reused"]] or ["= none"]
    lines += [f"+ {path}" for path in actions["created"]] or ["+ none"]
    lines += [f"~ {path}" for path in actions["skipped"]]
    guide = bootstrap["guide"]
    storage = bootstrap["storage"]
    lines += [
        "",
        "## Bootstrap",
        f"- git: {_git_line(bootstrap['git'])}",
        f"- agents: {bootstrap['agents']['mode']} ({bootstrap['agents']['path']})",
        f"- guide_index: {guide['indexPath']}",
        f"- guide_templates: created={len(guide['createdFiles'])}, skipped={len(guide['skippedFiles'])}",
        f"- storage: {storage['backend']} {storage['status']}",
        f"- search_ready: {'true' if storage['searchReady'] else 'false'}",
        f"- migration_required: {'true' if storage['migrationRequired'] else 'false'}",
        "",
        "## Next Actions",
    ]
    lines += [f"- {action}" for action in data["nextActions"]]
    return "\n".join(lines)
