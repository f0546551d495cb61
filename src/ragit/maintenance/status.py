"""``status``: what is indexed for HEAD and whether search is ready (knowledge §15).

Always succeeds, also outside git and with nothing indexed; reads only.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from ..errors import RagitError
from ..ingest.markup import DOC_CHUNKER_NAMES


def legacy_store_present(root: Path, config) -> bool:
    return (Path(root) / config["storage"]["store_dir"] / "index.json").is_file()


def snapshot_status(root: Path, config, git, context) -> tuple[dict[str, Any], bool]:
    """The §5.6 block for HEAD with status indexed|missing|invalid|store-unavailable."""
    from ..embed import embedder_id_for
    from ..ingest.manifest import load_manifest
    from ..retrieve.readiness import open_checked_store
    from ..retrieve.selection import snapshot_block

    block = snapshot_block("HEAD", context.head if context else None, "head-exact", "missing", context)
    legacy_manifest = False
    if context is None or context.head is None:
        return block, legacy_manifest
    try:
        loaded = load_manifest(root, config, context.head)
    except RagitError as exc:
        if exc.code in ("SNAPSHOT_MANIFEST_INVALID", "SNAPSHOT_SCHEMA_UNSUPPORTED"):
            block["status"] = "invalid"
            version = exc.details.get("indexVersion")
            legacy_manifest = isinstance(version, int) and version < 4
        return block, legacy_manifest
    try:
        store = open_checked_store(root, config, loaded, embedder_id_for(config))
        store.close()
        block["status"] = "indexed"
    except RagitError:
        block["status"] = "store-unavailable"
    return block, legacy_manifest


def status_data(cwd: Path) -> tuple[Path, dict[str, Any]]:
    """The root and ``data`` of ``ragit status`` for the directory ``cwd``."""
    from ..config import load_config
    from ..embed import embedder_id_for
    from ..gitsnap.context import read_context
    from ..gitsnap.git import Git, find_root
    from ..ingest.manifest import list_manifest_shas
    from ..store import backend_of, open_store_read, store_exists

    root = find_root(cwd) if cwd.is_dir() else None
    git = Git(root) if root else None
    base = root or cwd
    try:
        config = load_config(base)
    except RagitError:
        from ..config import defaults

        config = defaults()  # status always answers; `ragit doctor` names the config problem
    context = read_context(git) if git else None
    block, legacy_manifest = snapshot_status(base, config, git, context)

    store_block: dict[str, Any] = {
        "status": "missing", "schemaVersion": None, "searchReady": block["status"] == "indexed",
        "migrationRequired": legacy_store_present(base, config) or legacy_manifest, "stats": None,
    }
    if store_exists(base, config):
        try:
            store = open_store_read(base, config)
            try:
                stats = store.stats()
                store_block["schemaVersion"] = store.schema_version()
                store_block["status"] = "loaded"
                store_block["stats"] = {
                    "documents": stats.documents, "chunks": stats.chunks,
                    "vectors": stats.vectors, "snapshots": stats.snapshots,
                }
                repositories = getattr(store, "repositories", None)
                if repositories is not None:  # a shared database: its totals, and how many repositories
                    store_block["stats"]["repositories"] = repositories()
            finally:
                store.close()
        except Exception:
            store_block["status"] = "missing"
    emb = config["embedding"]
    languages = _languages(base, config, context.head) if block["status"] == "indexed" else []
    data = {
        "branch": context.branch if context and context.head and not context.detached else None,
        "head": context.head if context else None,
        "snapshot": block,
        "backend": backend_of(config),
        "store": store_block,
        "supported_types": list(config["ingest"]["supported_types"]),
        "manifests": len(list_manifest_shas(base, config)),
        "embedding": {
            "provider": emb["provider"], "model": emb["model"], "dimensions": emb["dimensions"],
            "embedderId": embedder_id_for(config),
        },
        "format": config["output"]["format"],
        "languages": languages,
    }
    return base, data


# Names of documents chunked as docs (Markdown, reStructuredText, AsciiDoc) or in plain line windows, by extension.
_DOC_LANGUAGES = {".md": "markdown", ".mdx": "markdown", ".rst": "restructuredtext", ".adoc": "asciidoc",
                  ".txt": "text"}
_LINE_LANGUAGES = {".json": "json", ".yaml": "yaml", ".yml": "yaml", ".toml": "toml", ".xml": "xml",
                   ".html": "html", ".htm": "html", ".css": "css", ".scss": "css", ".sql": "sql", ".cfg": "ini",
                   ".ini": "ini", ".proto": "protobuf", ".graphql": "graphql"}


def language_of(path: str, chunker: str) -> str:
    """The language a snapshot document is counted under: its grammar's for structured code
    (``code:swift`` and ``code:swift/2`` alike), else a name from its extension (``other``
    without one)."""
    if chunker.startswith("code:"):
        return chunker[5:].split("/", 1)[0]
    name = path.rsplit("/", 1)[-1]
    dot = name.rfind(".")
    ext = name[dot:].lower() if dot > 0 else ""
    if chunker in DOC_CHUNKER_NAMES:
        return _DOC_LANGUAGES.get(ext, "markdown")
    from ..ingest.code import language_for

    grammar = language_for(path)  # a file of a grammar's language that did not parse, or is empty
    if grammar is not None:
        return "c" if grammar == "h" else grammar
    return _LINE_LANGUAGES.get(ext, ext[1:] if ext else "other")


def _languages(root: Path, config, head: str) -> list[dict[str, Any]]:
    """Documents and chunks of HEAD's snapshot per language, most chunks first."""
    from ..ingest.manifest import load_manifest

    try:
        docs = load_manifest(root, config, head).manifest.docs
    except RagitError:
        return []
    counts: dict[str, list[int]] = {}
    for doc in docs:
        row = counts.setdefault(language_of(doc.path, doc.chunker), [0, 0])
        row[0] += 1
        row[1] += len(doc.chunks)
    ordered = sorted(counts.items(), key=lambda kv: (-kv[1][1], kv[0]))
    return [{"language": name, "documents": d, "chunks": c} for name, (d, c) in ordered]


def status_text(data: dict[str, Any]) -> str:
    """The text rendering of knowledge §15: snapshot, store counts, then one line per language."""
    from ..contract.render import value

    s = data["snapshot"]
    lines = [
        "# ragit status",
        f"- branch: {value(data['branch'])}",
        f"- head: {value(data['head'])}",
        f"- snapshot_requested_ref: {s['requestedRef']}",
        f"- snapshot_resolved_sha: {value(s['resolvedSha'])}",
        f"- snapshot_selection: {s['selection']}",
        f"- snapshot_status: {s['status']}",
        f"- snapshot_detached: {value(s['detached'])}",
        f"- snapshot_worktree_dirty: {value(s['worktreeDirty'])}",
        f"- backend: {data['backend']}",
        f"- manifests: {data['manifests']}",
        f"- store: {data['store']['status']}",
    ]
    # knowledge §15: the store's counts, `none` without a store, so a person sees what is indexed
    stats = data["store"]["stats"] or {}
    lines += [f"- {key}: {value(stats.get(key))}" for key in ("documents", "chunks", "vectors", "snapshots")]
    lines += [
        f"- search_ready: {value(data['store']['searchReady'])}",
        f"- migration_required: {value(data['store']['migrationRequired'])}",
        f"- format: {data['format']}",
    ]
    lines += [f"- language {row['language']}: {row['documents']} documents, {row['chunks']} chunks"
              for row in data["languages"]]
    return "\n".join(lines) + "\n"
