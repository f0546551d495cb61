"""A revised language table on real repositories (knowledge §8.6, §9): a store whose records say
``code:swift`` keeps them for unchanged blobs an incremental ingest does not evaluate (internally
consistent), while a new or changed blob, an ``ingest --all`` (which evaluates every blob, so an
upgraded ragit re-cuts what its tables now cut differently) and a fresh store get the current
revision (``code:swift/3``) and new chunk ids; every other language keeps its ids, status counts
one ``swift``, the snapshot made before the re-cut still answers and exports, and a snapshot bundle
carries either chunker across."""

from __future__ import annotations

import dataclasses
import subprocess
from pathlib import Path

import pytest
from conftest import ingest_data, manifest_docs, older_store, write_pg_config, write_placeholder_config

from ragit import Repo
from ragit.ingest.languages import LANGUAGES

#: the current Swift chunker (revision 3 since session 23; the revision-1 store is simulated below)
REVISED = LANGUAGES["swift"].chunker
FIELDS = "".join(f"    let field{i}: Int = {i}\n" for i in range(75))
SWIFT = f"""import Foundation

public final class Request {{
{FIELDS}
    /// The HTTP method.
    public var method: HTTPMethod {{
        get {{ box.withLockedValue {{ $0.method }} }}
        set {{ box.withLockedValue {{ $0.method = newValue }} }}
    }}

    public var isSecure: Bool {{ url.scheme == "https" }}

    init(method: HTTPMethod) {{
        self.id = UUID().uuidString
    }}
}}
"""
FILES = {
    "Sources/Request.swift": SWIFT,
    "Sources/Response.swift": SWIFT.replace("Request", "Response"),
    "cmd/main.go": "package main\n\nfunc main() {\n\tprintln(\"serve requests\")\n}\n",
    "src/app.py": "def handle(request):\n    return request.method\n",
}


def _languages(cli, root: Path) -> dict[str, tuple[int, int]]:
    rows = cli("status", "--cwd", str(root)).json["data"]["languages"]
    return {row["language"]: (row["documents"], row["chunks"]) for row in rows}


def _swift_at_revision_one(m: pytest.MonkeyPatch) -> None:
    """The Swift table as revision 1 had it (it did not know computed properties)."""
    spec = LANGUAGES["swift"]
    handlers = {k: v for k, v in spec.handlers.items() if k != "property_declaration"}
    m.setitem(LANGUAGES, "swift", dataclasses.replace(spec, revision=1, handlers=handlers))


@pytest.fixture
def old_store(git_repo, cli, monkeypatch):
    """The repository indexed by a ragit whose Swift table was revision 1 (its records say ``code:swift``)."""
    return older_store(git_repo, cli, monkeypatch, FILES, _swift_at_revision_one)


def test_an_old_store_reuses_its_chunks_and_new_blobs_get_the_revised_chunker(old_store, cli, tmp_path):
    root, base = old_store.root, old_store.head()
    old = manifest_docs(root, base)
    assert old["Sources/Request.swift"]["chunker"] == "code:swift" and old["cmd/main.go"]["chunker"] == LANGUAGES["go"].chunker
    before = _languages(cli, root)

    changed = SWIFT.replace("Request", "Response").replace("init(method", "init(verb")
    old_store.commit("edit", {"Sources/Response.swift": changed})
    data = ingest_data(cli, root, "--since", base)
    assert data["plannedFiles"] == ["Sources/Response.swift"]
    new = manifest_docs(root, old_store.head())
    kept, edited = new["Sources/Request.swift"], new["Sources/Response.swift"]
    assert kept == old["Sources/Request.swift"]  # the unchanged blob: its record, its ids
    assert edited["chunker"] == REVISED
    assert [r[0] for r in edited["chunks"]] != [r[0] for r in old["Sources/Response.swift"]["chunks"]]
    after = _languages(cli, root)  # code:swift and revised documents are counted as one swift
    assert before["swift"] == (2, 2 * len(kept["chunks"]))
    assert after == dict(before, swift=(2, len(kept["chunks"]) + len(edited["chunks"])))
    assert set(after) == {"swift", "go", "python"}
    # both chunkers answer from one snapshot
    hits = {h.chunk_id for h in Repo.open(root).query("HTTP method withLockedValue", top_k=20).hits}
    assert hits & set(kept["ids"]) and hits & set(edited["ids"])
    # a fresh store cuts every Swift file with the revised table; other languages keep their ids
    fresh = tmp_path / "fresh"
    subprocess.run(["git", "clone", "-q", str(root), str(fresh)], check=True)
    write_placeholder_config(fresh)
    ingest_data(cli, fresh, "--all")
    mine = manifest_docs(fresh, old_store.head())
    assert mine["Sources/Request.swift"]["chunker"] == REVISED
    assert not set(mine["Sources/Request.swift"]["ids"]) & set(kept["ids"])
    assert mine["Sources/Response.swift"] == edited
    for path in ("cmd/main.go", "src/app.py"):
        assert mine[path] == new[path] and mine[path]["ids"] == old[path]["ids"]
    assert _languages(cli, fresh) == dict(after, swift=(2, 2 * len(edited["chunks"])))

    # ``ingest --all`` evaluates every blob: the superseded record is cut again, exactly as the
    # fresh store cut it, and nothing else is; a second one reuses everything
    data = ingest_data(cli, root, "--all")
    assert data["chunked"] == 1 and data["reused"] == len(new) - 1
    assert manifest_docs(root, old_store.head()) == mine
    assert _languages(cli, root) == _languages(cli, fresh)
    assert ingest_data(cli, root, "--all")["chunked"] == 0
    # the snapshot made before still answers from its own chunks
    old_hits = {h.chunk_id for h in Repo.open(root).query("HTTP method withLockedValue", at=base, top_k=20).hits}
    assert old_hits & set(old["Sources/Request.swift"]["ids"])


@pytest.mark.parametrize("source", ["mixed", "fresh"])
def test_a_bundle_carries_revised_chunkers_across(old_store, cli, tmp_path, source):
    root = old_store.root
    if source == "mixed":  # one snapshot holding code:swift and the revised chunker
        base = old_store.head()
        old_store.commit("edit", {"Sources/Response.swift": SWIFT.replace("Request", "Reply")})
        ingest_data(cli, root, "--since", base)
    else:
        root = tmp_path / "origin"
        subprocess.run(["git", "clone", "-q", str(old_store.root), str(root)], check=True)
        write_placeholder_config(root)
        ingest_data(cli, root, "--all")
    head = old_store.head()
    chunkers = {d["chunker"] for d in manifest_docs(root, head).values()}
    assert REVISED in chunkers and ("code:swift" in chunkers) == (source == "mixed")

    bundle = tmp_path / "snap.ragit"
    r = cli("snapshot", "export", "HEAD", "-o", str(bundle), "--cwd", str(root), "--format", "json")
    assert r.code == 0, r
    target = tmp_path / "target"
    subprocess.run(["git", "clone", "-q", str(root), str(target)], check=True)
    write_placeholder_config(target)
    r = cli("snapshot", "import", str(bundle), "--cwd", str(target), "--format", "json")
    assert r.code == 0 and r.json["data"]["imported"] is True, r
    manifest = f".ragit/manifest/{head}.json"
    assert (target / manifest).read_bytes() == (root / manifest).read_bytes()
    question = ["query", "Request HTTP method isSecure", "--format", "json", "--top-k", "10"]
    assert (cli(*question, "--cwd", str(target)).out.replace(str(target), "R")
            == cli(*question, "--cwd", str(root)).out.replace(str(root), "R"))
    # an ingest after the import reuses the imported records, cutting again only a superseded one
    assert ingest_data(cli, target, "--all")["chunked"] == (1 if source == "mixed" else 0)


def test_a_snapshot_made_before_a_re_cut_still_exports_and_imports(old_store, cli, tmp_path):
    """``ingest --all`` replaced the blob's record with the revised cut; the older snapshot's
    chunks are still in the store, and its bundle is rebuilt from them. Imported into a store whose
    record is the revised one, that record stays and the older chunks are added beside it."""
    root, base = old_store.root, old_store.head()
    old_store.commit("edit", {"src/app.py": "def handle(request):\n    return request.url\n"})
    ingest_data(cli, root, "--all")
    head = old_store.head()
    assert manifest_docs(root, base)["Sources/Request.swift"]["chunker"] == "code:swift"
    assert manifest_docs(root, head)["Sources/Request.swift"]["chunker"] == REVISED

    bundle = tmp_path / "old.ragit"
    r = cli("snapshot", "export", base, "-o", str(bundle), "--cwd", str(root), "--format", "json")
    assert r.code == 0, r
    target = tmp_path / "target"
    subprocess.run(["git", "clone", "-q", str(root), str(target)], check=True)
    write_placeholder_config(target)
    ingest_data(cli, target, "--all")  # the target's own records: the revised cut
    r = cli("snapshot", "import", str(bundle), "--cwd", str(target), "--format", "json")
    assert r.code == 0 and r.json["data"]["imported"] is True, r
    manifest = f".ragit/manifest/{base}.json"
    assert (target / manifest).read_bytes() == (root / manifest).read_bytes()
    question = ["query", "Request HTTP method isSecure", "--at", base, "--format", "json", "--top-k", "10"]
    assert (cli(*question, "--cwd", str(target)).out.replace(str(target), "R")
            == cli(*question, "--cwd", str(root)).out.replace(str(root), "R"))
    assert ingest_data(cli, target, "--all")["chunked"] == 0  # the target's record was kept


def test_a_postgres_store_re_cuts_superseded_records_and_keeps_the_older_snapshot(git_repo, cli, tmp_path, pg_dsn,
                                                                                   monkeypatch):
    """The same on the PostgreSQL store: its blob upsert replaces the superseded record, the older
    snapshot keeps its chunks, answers and exports."""
    monkeypatch.setenv("RAGIT_DATABASE_URL", pg_dsn)
    root = older_store(git_repo, cli, monkeypatch, FILES, _swift_at_revision_one, config=write_pg_config).root
    base = git_repo.head()
    old = manifest_docs(root, base)
    git_repo.commit("edit", {"src/app.py": "def handle(request):\n    return request.url\n"})
    data = ingest_data(cli, root, "--all")
    assert data["chunked"] == 3 and data["reused"] == 1  # both Swift files and the edited one
    new = manifest_docs(root, git_repo.head())
    assert {d["chunker"] for p, d in new.items() if p.endswith(".swift")} == {REVISED}
    assert ingest_data(cli, root, "--all")["chunked"] == 0
    hits = {h.chunk_id for h in Repo.open(root).query("HTTP method withLockedValue", at=base, top_k=20).hits}
    assert hits & set(old["Sources/Request.swift"]["ids"]) and not hits & set(new["Sources/Request.swift"]["ids"])
    bundle = tmp_path / "old.ragit"
    r = cli("snapshot", "export", base, "-o", str(bundle), "--cwd", str(root), "--format", "json")
    assert r.code == 0, r
    assert not (root / ".ragit" / "store" / "ragit.db").exists()  # everything went to PostgreSQL
