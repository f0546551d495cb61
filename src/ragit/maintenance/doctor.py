"""``doctor``: ordered health checks, each naming its repair (knowledge §16). Read-only."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from ..errors import RagitError
from .status import legacy_store_present


def _check(name: str, ok: bool, detail: str) -> dict[str, Any]:
    return {"name": name, "ok": ok, "detail": detail}


def run_doctor(cwd: Path) -> tuple[Path, dict[str, Any]]:
    from ..config import load_config
    from ..embed import embedder_id_for, load_embedder
    from ..gitsnap.git import Git, find_root, is_sha256_repo
    from ..gitsnap.refs import head_sha
    from ..ingest.manifest import list_manifest_shas, load_manifest, manifest_relpath
    from ..store import SCHEMA_VERSION, backend_of, open_store_read, store_exists

    checks: list[dict[str, Any]] = []
    root = find_root(cwd) if cwd.is_dir() else None
    git = Git(root) if root else None
    base = root or cwd
    if git is None:
        checks.append(_check("git.repository", False, f"{cwd} is not a git repository; run git init"))
    elif is_sha256_repo(git):
        checks.append(_check("git.repository", False, "SHA-256 object format is not supported in this release"))
    else:
        checks.append(_check("git.repository", True, str(root)))

    ragit_dir = Path(base) / ".ragit"
    try:
        config = load_config(base)
    except RagitError as exc:
        checks.append(_check("ragit.structure", ragit_dir.is_dir(), "manifest=0"))
        checks.append(_check("ragit.config", False, f"{exc.message}; fix .ragit/config.toml or run ragit doctor"))
        return base, {"checks": checks, "hasFailure": True}
    shas = list_manifest_shas(base, config)
    checks.append(_check("ragit.structure", True, f"manifest={len(shas)}"))
    embedder_id = embedder_id_for(config)
    checks.append(_check("ragit.config", True, f"backend={backend_of(config)}, embedding={embedder_id}"))

    try:
        embedder = load_embedder(config)
        checks.append(_check("embedder.runtime", True, f"{embedder.id} ({embedder.dimensions} dims)"))
    except RagitError as exc:
        checks.append(_check("embedder.runtime", False, f"{exc.message} ({exc.details.get('reason')})"))

    store = None
    if not store_exists(base, config):
        checks.append(_check("store.runtime", False, "store missing; run ragit ingest --all (or ragit migrate rebuild)"))
    else:
        try:
            store = open_store_read(base, config)
            checks.append(_check("store.runtime", True, backend_of(config)))
        except RagitError as exc:  # STORE_UNAVAILABLE: the database cannot be reached or needs migrations
            checks.append(_check("store.runtime", False, f"{exc.message} ({exc.details.get('reason')}, "
                                 f"dsn={exc.details.get('dsn')})"))
        except Exception as exc:  # noqa: BLE001
            checks.append(_check("store.runtime", False, f"store unreadable ({exc}); delete .ragit/store and run ragit migrate rebuild"))
    try:
        if store is not None:
            version = store.schema_version()
            checks.append(_check("store.schema", version == SCHEMA_VERSION,
                                 f"schema={version}" + ("" if version == SCHEMA_VERSION else
                                                        f"; expected {SCHEMA_VERSION}: delete .ragit/store and run ragit migrate rebuild")))
        else:
            checks.append(_check("store.schema", False, "schema=none"))

        loaded = {}
        invalid_lines = []
        for sha in shas:
            try:
                loaded[sha] = load_manifest(base, config, sha)
            except RagitError as exc:
                rel = manifest_relpath(config, sha)
                tracked = git is not None and git.call("ls-files", "--error-unmatch", rel).returncode == 0
                repair = f"git checkout -- {rel}" if tracked else f"rm {rel} && ragit ingest --all"
                invalid_lines.append(f"{rel}: {exc.code} ({exc.details.get('reason', exc.details.get('indexVersion'))}); repair: {repair}")

        if store is None:
            checks.append(_check("store.embedding", False, f"store=none, configured={embedder_id}"))
        else:
            embedder_ids = sorted({m.manifest.params.embedder_id for m in loaded.values()})
            stored_ok = not embedder_ids or embedder_id in embedder_ids
            checks.append(_check("store.embedding", stored_ok,
                                 f"store={','.join(embedder_ids) or 'none'}, configured={embedder_id}"
                                 + ("" if stored_ok else "; run ragit ingest --all to embed with the configured model")))

        detail = f"manifests={len(shas)}, invalid={len(invalid_lines)}"
        if invalid_lines:
            detail += "; " + "; ".join(invalid_lines)
        head = head_sha(git) if git is not None else None
        if head is not None and head not in shas:
            detail += "; head=missing (ragit ingest --all)"
        checks.append(_check("ragit.manifests", not invalid_lines, detail))

        missing = 0
        if store is not None:
            for lm in loaded.values():
                ids = [cid for d in lm.manifest.docs for cid in lm.manifest.chunk_ids(d)]
                used = lm.manifest.params.embedder_id
                # ids without a vector, and ids whose vector the snapshot's rows point past the heap for
                lost = (set(ids) - store.chunks_present(ids, used)) | store.unservable_chunks(
                    lm.manifest.commit_sha, used)
                missing += len(lost)
        else:
            missing = sum(len(d.chunks) for lm in loaded.values() for d in lm.manifest.docs)
        ok = missing == 0
        checks.append(_check("ragit.manifest-consistency", ok,
                             f"manifests={len(loaded)}, missingChunkIds={missing}" + ("" if ok else "; run ragit migrate rebuild")))
        checks.append(_hygiene_check(base, config, store))
    finally:
        if store is not None:
            store.close()

    legacy = legacy_store_present(base, config)
    checks.append(_check("ragit.legacy-json-store", True, "migration required" if legacy else "none"))
    if git is not None:
        from ..hooks import hook_states

        states = hook_states(git)
        checks.append(_check("git.hooks", True, ", ".join(f"{k}={v}" for k, v in states.items())))
    else:
        checks.append(_check("git.hooks", True, "no repository"))
    has_failure = any(not c["ok"] for c in checks)
    return base, {"checks": checks, "hasFailure": has_failure}


def _hygiene_check(base: Path, config, store) -> dict[str, Any]:
    """``store.hygiene``: what interrupted writes left behind (knowledge §4.3, §16): temp files
    of atomic writes whose writer is gone, and vector heap files no store row names. Only
    reported here (doctor is read-only); the next write removes both."""
    from ..fsutil import stale_temps
    from ..ingest.manifest import manifest_dir
    from ..store import store_dir, store_exists

    temps: set[Path] = set()
    for top in (Path(base) / ".ragit", manifest_dir(base, config), store_dir(base, config)):
        if top.is_dir():
            temps.update(stale_temps(top))
            for directory in (d for d in top.rglob("*") if d.is_dir() and not d.is_symlink()):
                temps.update(stale_temps(directory))
    orphans: list[Path] = []
    if store is not None:
        try:
            orphans = store.orphan_heaps()
        except Exception:  # noqa: BLE001 - an unreadable store is reported by store.runtime
            orphans = []
    elif not store_exists(base, config):  # no store at all: every heap file is an orphan
        from ..store.sqlite import orphan_heap_files

        orphans = orphan_heap_files(store_dir(base, config), set())
    ok = not temps and not orphans
    detail = f"tempFiles={len(temps)}, orphanVectors={len(orphans)}"
    if not ok:
        names = sorted(p.relative_to(base).as_posix() if p.is_relative_to(base) else str(p)
                       for p in [*temps, *orphans])
        detail += ("; " + ", ".join(names)
                   + "; the next write into their directory (ragit ingest for manifests and vectors) removes them")
    return _check("store.hygiene", ok, detail)


def doctor_text(data: dict[str, Any]) -> str:
    lines = ["# ragit doctor", f"- has_failure: {'true' if data['hasFailure'] else 'false'}", ""]
    lines += [f"{'OK' if c['ok'] else 'FAIL'} {c['name']}: {c['detail']}" for c in data["checks"]]
    return "\n".join(lines) + "\n"
