"""Step 7 of init: write the plan and the control plane — or, in dry-run, only describe it.

Every write here creates something missing; nothing that exists is overwritten except the
derived guide index. ``inspect_bootstrap`` answers the same questions without touching the
disk, so ``--dry-run`` reports exactly what a real run would do.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable
from pathlib import Path
from typing import Any

from ..clock import now_iso
from ..config import CONFIG_RELPATH, Config, store_backend
from ..fsutil import atomic_write_bytes, atomic_write_text, updated_ragit_gitignore
from ..memory.artifacts import SCOPES as ARTIFACT_SCOPES
from ..memory.working import dump_json
from ..store.sqlite import DB_NAME
from . import templates
from .configmerge import merged_config, render_new, wanted_config
from .drafts import DraftContext, render_draft
from .gitignore import updated_gitignore
from .guide_index import AGENTS_PATH, INDEX_PATH, TEMPLATES_DIR, build_index, template_paths
from .plan import Plan

LEGACY_STORE_FILE = "index.json"  # the reference's JSON store, migrated by `ragit migrate from-json-store`


def _store_dir(root: Path, config: Config) -> Path:
    return root / config["storage"]["store_dir"]


def _control_dirs(root: Path, config: Config) -> list[Path]:
    """The `.ragit/` directories of knowledge §2, at their configured locations."""
    artifacts = root / config["memory"]["artifacts_dir"]
    return [
        root / TEMPLATES_DIR,
        root / config["storage"]["manifest_dir"],
        root / config["memory"]["session_dir"],
        root / config["memory"]["working_dir"],
        *(artifacts / scope for scope in ARTIFACT_SCOPES),
        _store_dir(root, config),
        root / ".ragit" / "cache",
        (root / config["sessions"]["db_path"]).parent,
    ]


def _storage(root: Path, config: Config, status_if_missing: str) -> tuple[dict[str, Any], bool]:
    """The ``storage`` summary and whether a store still has to be created (never for a shared
    database: ``ragit migrate`` or the first ingest prepares it, so init needs no connection)."""
    backend = store_backend(config)
    if backend != "sqlite":
        return {"backend": backend, "status": "planned", "searchReady": False, "migrationRequired": False}, False
    store_dir = _store_dir(root, config)
    missing = not (store_dir / DB_NAME).exists()
    return {
        "backend": backend,
        "status": status_if_missing if missing else "loaded",
        "searchReady": False,
        "migrationRequired": (store_dir / LEGACY_STORE_FILE).is_file(),
    }, missing


def _guide(created: list[str], skipped: list[str]) -> dict[str, Any]:
    return {
        "indexPath": INDEX_PATH, "createdFiles": created, "skippedFiles": skipped, "templates": template_paths(),
    }


def _sha256(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def inspect_bootstrap(root: Path, config: Config, git: dict[str, bool]) -> dict[str, Any]:
    """What apply would report, computed read-only (dry-run)."""
    agents_file = root / AGENTS_PATH
    if agents_file.is_file():
        agents = {"path": AGENTS_PATH, "mode": "loaded", "sha256": _sha256(agents_file.read_bytes())}
    else:
        agents = {"path": AGENTS_PATH, "mode": "planned", "sha256": None}
    paths = template_paths()
    existing = [p for p in paths if (root / p).exists()]
    storage, _ = _storage(root, config, "planned")
    return {
        "git": git,
        "agents": agents,
        "guide": _guide([], existing),  # nothing is created in a dry run
        "storage": storage,
    }


def _write_drafts(root: Path, plan: Plan, ctx: DraftContext) -> None:
    for action in plan.actions:
        target = root / action.path
        if action.type == "create" and not target.exists():
            atomic_write_text(target, render_draft(action.kind, action.confidence, ctx))


def _write_gitignore(root: Path) -> None:
    path = root / ".gitignore"
    # surrogateescape: odd bytes in the user's file survive the round trip untouched
    current = path.read_bytes().decode("utf-8", "surrogateescape") if path.is_file() else None
    updated = updated_gitignore(current)
    if updated is not None:
        atomic_write_bytes(path, updated.encode("utf-8", "surrogateescape"))


def _write_ragit_gitignore(root: Path) -> None:
    """``.ragit/.gitignore`` (knowledge §2.1): created, or completed with missing entries; the
    user's own lines are kept and nothing is listed twice."""
    path = root / ".ragit" / ".gitignore"
    current = path.read_bytes().decode("utf-8", "surrogateescape") if path.is_file() else None
    updated = updated_ragit_gitignore(current)
    if updated is not None:
        atomic_write_bytes(path, updated.encode("utf-8", "surrogateescape"))


def _write_config(root: Path, ctx: DraftContext) -> None:
    path = root / CONFIG_RELPATH
    wanted = wanted_config(root.name, ctx.mode, ctx.strategy)
    if not path.is_file():
        atomic_write_text(path, render_new(wanted))
        return
    merged = merged_config(path.read_text(encoding="utf-8"), wanted)
    if merged is not None:
        atomic_write_text(path, merged)


def _ensure_agents(root: Path) -> tuple[str, str, str]:
    """(mode, sha256, text) of AGENTS.md, creating it from the template when missing."""
    path = root / AGENTS_PATH
    if path.is_file():
        data = path.read_bytes()
        return "loaded", _sha256(data), data.decode("utf-8", errors="replace")
    atomic_write_text(path, templates.AGENTS_TEMPLATE)
    return "created", _sha256(templates.AGENTS_TEMPLATE.encode("utf-8")), templates.AGENTS_TEMPLATE


def _ensure_templates(root: Path) -> tuple[list[str], list[str]]:
    created, skipped = [], []
    for rel, content in zip(template_paths(), templates.GUIDE_TEMPLATES.values()):
        target = root / rel
        if target.exists():
            skipped.append(rel)
        else:
            atomic_write_text(target, content)
            created.append(rel)
    return created, skipped


def apply_bootstrap(
    root: Path, config: Config, plan: Plan, ctx: DraftContext, git: dict[str, bool],
    create_store: Callable[[Path], None] | None,
) -> dict[str, Any]:
    """Write drafts, .ragit/.gitignore, directories, .gitignore, config, AGENTS.md, templates, index
    and store."""
    _write_drafts(root, plan, ctx)
    _write_ragit_gitignore(root)
    for directory in _control_dirs(root, config):
        directory.mkdir(parents=True, exist_ok=True)
    _write_gitignore(root)
    _write_config(root, ctx)
    agents_mode, agents_sha, agents_text = _ensure_agents(root)
    created, skipped = _ensure_templates(root)
    index = build_index(agents_text, agents_mode, agents_sha, now_iso())
    atomic_write_text(root / INDEX_PATH, dump_json(index))
    storage, store_missing = _storage(root, config, "created")
    if store_missing and create_store is not None:
        create_store(_store_dir(root, config))
    return {
        "git": git,
        "agents": {"path": AGENTS_PATH, "mode": agents_mode, "sha256": agents_sha},
        "guide": _guide(created, skipped),
        "storage": storage,
    }
