"""``migrate rebuild``: restore the derived store from manifests plus git objects (knowledge §18).

A manifest is rebuilt only when its parameters match the running chunker, masking and
embedder; its chunks are re-derived from the blobs it names and must reproduce the manifest
exactly, so a rebuilt store answers the same as the one it replaces.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from ..errors import RagitError
from ..ingest.markup import DOC_CHUNKER_NAMES


def rebuild(root: Path, git, config, *, at: str | None = None, dry_run: bool = False) -> dict[str, Any]:
    from ..embed import embedder_id_for
    from ..gitsnap.blobs import BlobReader, MissingObject
    from ..gitsnap.refs import resolve_at
    from ..ingest.discovery import Candidate
    from ..ingest.manifest import list_manifest_shas, load_manifest
    from ..ingest.pipeline import _evaluate, current_params
    from ..retrieve.readiness import store_unavailable
    from ..store import holds_manifest, open_store_write, store_dir, try_open_store
    from ..store.base import SnapshotDoc, SnapshotWrite
    from ..store.lock import write_lock

    params = current_params(config, embedder_id_for(config))
    shas = [resolve_at(git, at)] if at is not None else list_manifest_shas(root, config)
    if at is not None:
        load_manifest(root, config, shas[0])  # unindexed or invalid: its own typed error
    results: list[dict[str, Any]] = []

    def run(store, writable: bool) -> None:
        with BlobReader(git) as reader:
            for sha in shas:
                try:
                    lm = load_manifest(root, config, sha)
                except RagitError as exc:
                    results.append({"sha": sha, "status": "missing" if exc.code == "SNAPSHOT_NOT_INDEXED" else "incompatible", "chunks": 0})
                    continue
                m = lm.manifest
                chunks = sum(len(d.chunks) for d in m.docs)
                mp = m.params
                if (mp.chunker_version, mp.masking_version, mp.embedder_id) != (
                        params.chunker_version, params.masking_version, params.embedder_id):
                    results.append({"sha": sha, "status": "incompatible", "chunks": chunks})
                    continue
                # a published snapshot is kept unless it lost vectors (e.g. a truncated heap):
                # those are re-embedded and its rows packed again
                if (store is not None and holds_manifest(store, sha, lm.sha256)
                        and not store.unservable_chunks(sha, mp.embedder_id)
                        and not store.missing_vectors([c for d in m.docs for c in m.chunk_ids(d)], mp.embedder_id)):
                    results.append({"sha": sha, "status": "skipped", "chunks": chunks})
                    continue
                candidates = [Candidate(d.path, d.blob_id, None, "markdown" if d.chunker in DOC_CHUNKER_NAMES else "code")
                              for d in m.docs]
                try:
                    outcome = _evaluate(candidates, config, m.params, store, reader, None, None, dry_run=not writable)
                except MissingObject:
                    results.append({"sha": sha, "status": "missing_objects", "chunks": chunks})
                    continue
                expected = {d.path: d for d in m.docs}
                if outcome.docs != expected:
                    results.append({"sha": sha, "status": "mismatch", "chunks": chunks})
                    continue
                if writable:
                    store.write_snapshot(SnapshotWrite(
                        commit_sha=sha,
                        manifest_sha256=lm.sha256,
                        params=m.params.to_dict(),
                        created_at=m.created_at,
                        docs=[SnapshotDoc(d.path, d.doc_type, d.blob_id, m.chunker_key(d)) for d in m.docs],
                        new_blobs=outcome.new_blobs,
                        new_chunks=outcome.new_chunks,
                        embedder_id=mp.embedder_id,
                        vector_ids=outcome.vector_ids,
                        vectors=outcome.vectors,
                        dims=outcome.dims,
                    ))
                results.append({"sha": sha, "status": "rebuilt", "chunks": chunks})

    if dry_run:
        store = try_open_store(root, config)  # a store of another schema holds nothing to keep
        try:
            run(store, False)
        finally:
            if store is not None:
                store.close()
    else:
        with write_lock(store_dir(root, config)):
            store = open_store_write(root, config)
            try:
                run(store, True)
            finally:
                store.close()

    failed = sum(1 for r in results if r["status"] not in ("rebuilt", "skipped"))
    if at is not None and failed:
        raise store_unavailable(shas[0], results[0]["status"], f"snapshot {shas[0]} could not be rebuilt: {results[0]['status']}")
    return {
        "mode": "dry-run" if dry_run else "apply",
        "snapshots": results,
        "rebuilt": sum(1 for r in results if r["status"] == "rebuilt"),
        "failed": failed,
    }


def rebuild_text(data: dict[str, Any]) -> str:
    lines = ["# ragit migrate rebuild", f"- mode: {data['mode']}", f"- rebuilt: {data['rebuilt']}",
             f"- failed: {data['failed']}", ""]
    lines += [f"- {s['sha']}: {s['status']} ({s['chunks']} chunks)" for s in data["snapshots"]] or ["- none"]
    return "\n".join(lines) + "\n"
