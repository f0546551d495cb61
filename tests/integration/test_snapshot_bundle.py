"""`ragit snapshot export | import` (knowledge §22.1, issue 16 item 3) on real git repositories.

The target: a bundle exported at one commit and imported into a fresh clone answers `query`
byte-identically to a local ingest in another fresh clone. Every refused bundle leaves the
clone's files (store and manifests included) byte-identical.
"""

from __future__ import annotations

import hashlib
import json
import re
import subprocess
from pathlib import Path

import pytest
from conftest import SAMPLE_FILES, tree_snapshot, write_placeholder_config

NOW = "2026-03-08T10:00:00.000Z"
QUESTIONS = ["restore auth context", "token rotation roadmap", "TokenStore rotate"]


@pytest.fixture
def origin(git_repo, cli, monkeypatch):
    """The sample repository, indexed at HEAD (fixed clock: manifests are reproducible)."""
    monkeypatch.setenv("RAGIT_NOW", NOW)
    write_placeholder_config(git_repo.root)
    git_repo.commit("initial", SAMPLE_FILES)
    assert cli("ingest", "--all", "--cwd", str(git_repo.root), "--format", "json").code == 0
    return git_repo


def clone(source: Path, target: Path, config: str | None = None) -> Path:
    subprocess.run(["git", "clone", "-q", str(source), str(target)], check=True)
    write_placeholder_config(target)
    if config is not None:
        (target / ".ragit" / "config.toml").write_text(config, encoding="utf-8")
    return target


def export(cli, repo_root: Path, out: Path, rev: str = "HEAD"):
    return cli("snapshot", "export", rev, "-o", str(out), "--cwd", str(repo_root), "--format", "json")


def do_import(cli, root: Path, bundle: Path):
    return cli("snapshot", "import", str(bundle), "--cwd", str(root), "--format", "json")


def query(cli, root: Path, question: str, *extra: str) -> str:
    r = cli("query", question, "--cwd", str(root), "--format", "json", *extra)
    assert r.code == 0, r
    return r.out.replace(str(root), "<ROOT>")


@pytest.fixture
def bundle(origin, cli, tmp_path) -> Path:
    out = tmp_path / "snap.ragit"
    r = export(cli, origin.root, out)
    assert r.code == 0, r
    return out


# ------------------------------------------------------------------ the target

def test_imported_clone_answers_like_a_local_ingest(origin, bundle, cli, tmp_path, monkeypatch):
    imported = clone(origin.root, tmp_path / "imported")
    local = clone(origin.root, tmp_path / "local")
    import ragit.embed as embed

    def no_embedder(*a, **k):
        raise AssertionError("import must not embed: the vectors come from the bundle")

    monkeypatch.setattr(embed, "load_embedder", no_embedder)
    r = do_import(cli, imported, bundle)
    assert r.code == 0, r
    assert r.json["data"]["imported"] is True
    monkeypatch.undo()
    monkeypatch.setenv("RAGIT_NOW", NOW)
    assert cli("ingest", "--all", "--cwd", str(local), "--format", "json").code == 0
    head = origin.head()
    manifest = f".ragit/manifest/{head}.json"
    assert (imported / manifest).read_bytes() == (local / manifest).read_bytes() == (origin.root / manifest).read_bytes()
    for question in QUESTIONS:
        for extra in ((), ("--explain", "--view", "full", "--top-k", "10"), ("--view", "minimal")):
            answer = query(cli, imported, question, *extra)
            assert json.loads(answer)["data"]["hits"], question
            assert answer == query(cli, local, question, *extra)
    pack = ["context", "pack", "auth token plan", "--budget", "60", "--format", "json"]
    assert (cli(*pack, "--cwd", str(imported)).out.replace(str(imported), "R")
            == cli(*pack, "--cwd", str(local)).out.replace(str(local), "R"))


def _vectors_by_chunk(root: Path, sha: str) -> dict[str, bytes]:
    from ragit.config import load_config
    from ragit.store import open_store_read

    store = open_store_read(root, load_config(root))
    try:
        rowids, matrix, *_ = store.load_vectors(sha, "placeholder:sha1:64:v1")
        rows = store.fetch_rows(sha, [int(r) for r in rowids], with_text=False)
        return {rows[int(r)].chunk_id: matrix[i].tobytes() for i, r in enumerate(rowids)}
    finally:
        store.close()


def test_vectors_round_trip_bit_exactly(origin, bundle, cli, tmp_path):
    target = clone(origin.root, tmp_path / "c")
    assert do_import(cli, target, bundle).code == 0
    mine = _vectors_by_chunk(origin.root, origin.head())
    theirs = _vectors_by_chunk(target, origin.head())
    assert mine and mine == theirs


def test_export_writes_only_its_file(origin, cli, tmp_path):
    before = tree_snapshot(origin.root)
    out_dir = tmp_path / "out"
    out_dir.mkdir()
    r = export(cli, origin.root, out_dir / "b.ragit")
    assert r.code == 0, r
    assert tree_snapshot(origin.root) == before
    assert sorted(p.name for p in out_dir.iterdir()) == ["b.ragit"]
    data = r.json["data"]
    raw = (out_dir / "b.ragit").read_bytes()
    assert data["bytes"] == len(raw) and data["sha256"] == hashlib.sha256(raw).hexdigest()
    assert data["commitSha"] == origin.head() and data["documents"] == 4 and data["dims"] == 64
    # a second export of the same snapshot is byte-identical (and replaces the file atomically)
    assert export(cli, origin.root, out_dir / "b.ragit").code == 0
    assert (out_dir / "b.ragit").read_bytes() == raw
    assert sorted(p.name for p in out_dir.iterdir()) == ["b.ragit"]


def test_export_accepts_any_revision(origin, cli, tmp_path):
    origin.git("tag", "v1")
    a, b = tmp_path / "a.ragit", tmp_path / "b.ragit"
    assert export(cli, origin.root, a, "v1").code == 0
    assert export(cli, origin.root, b, origin.head()[:8]).code == 0
    assert a.read_bytes() == b.read_bytes()


def test_export_of_an_unindexed_revision_fails(origin, cli, tmp_path):
    indexed = origin.head()
    origin.commit("more", {"docs/more.md": "# More\n\nnew text\n"})
    before = tree_snapshot(origin.root)
    out = tmp_path / "x.ragit"
    r = export(cli, origin.root, out)
    assert r.code == 3, r
    err = r.json["error"]
    assert err["code"] == "SNAPSHOT_NOT_INDEXED"
    assert err["details"] == {"resolvedSha": origin.head(), "nearestIndexedAncestor": indexed}
    assert err["recovery"]["command"] == f"ragit ingest --since {indexed} --at {origin.head()}"
    assert not out.exists() and list(tmp_path.glob("*.tmp")) == [] and tree_snapshot(origin.root) == before


def test_export_input_errors(origin, cli, tmp_path):
    r = cli("snapshot", "export", "HEAD", "--cwd", str(origin.root), "--format", "json")
    assert r.code == 2 and r.json["error"]["details"]["field"] == "--out"
    r = export(cli, origin.root, tmp_path / "missing-dir" / "b.ragit")
    assert r.code == 2 and r.json["error"]["details"]["reason"] == "file_not_found"
    r = export(cli, origin.root, tmp_path)
    assert r.code == 2 and r.json["error"]["details"]["reason"] == "invalid_format"
    r = export(cli, origin.root, tmp_path / "b.ragit", "no-such-branch")
    assert r.code == 2 and r.json["error"]["code"] == "SNAPSHOT_REF_INVALID"
    r = cli("snapshot", "import", str(tmp_path / "nothing.ragit"), "--cwd", str(origin.root), "--format", "json")
    assert r.code == 2 and r.json["error"]["details"]["field"] == "file"


# ------------------------------------------------------------------ re-import, incremental after import

def test_reimport_is_a_no_op(origin, bundle, cli, tmp_path):
    target = clone(origin.root, tmp_path / "c")
    assert do_import(cli, target, bundle).json["data"]["imported"] is True
    before = tree_snapshot(target)
    r = do_import(cli, target, bundle)
    assert r.code == 0, r
    assert r.json["data"]["imported"] is False and r.json["data"]["newChunks"] == 0
    assert tree_snapshot(target) == before


def test_import_over_a_local_ingest_of_the_same_commit_is_a_no_op(origin, bundle, cli, tmp_path, monkeypatch):
    target = clone(origin.root, tmp_path / "c")
    monkeypatch.setenv("RAGIT_NOW", "2026-04-01T00:00:00.000Z")  # differs from the bundle's createdAt only
    assert cli("ingest", "--all", "--cwd", str(target), "--format", "json").code == 0
    before = tree_snapshot(target)
    r = do_import(cli, target, bundle)
    assert r.code == 0 and r.json["data"]["imported"] is False, r
    assert tree_snapshot(target) == before


def test_ingest_after_import_is_incremental_and_reuses_the_imported_blobs(origin, bundle, cli, tmp_path):
    target = clone(origin.root, tmp_path / "c")
    assert do_import(cli, target, bundle).code == 0
    base = origin.head()
    origin.commit("edit", {"docs/plan/roadmap.md": SAMPLE_FILES["docs/plan/roadmap.md"] + "\n## Milestone 3\n\nShip bundles.\n"})
    subprocess.run(["git", "-C", str(target), "pull", "-q", "--ff-only"], check=True)
    r = cli("ingest", "--since", base, "--cwd", str(target), "--format", "json")
    assert r.code == 0, r
    d = r.json["data"]
    assert d["baseSha"] == base and d["fullSnapshot"] is False
    assert d["plannedFiles"] == ["docs/plan/roadmap.md"]
    new = json.loads((target / d["manifestPath"]).read_text(encoding="utf-8"))
    roadmap = [doc for doc in new["docs"] if doc["path"] == "docs/plan/roadmap.md"][0]
    assert d["embeddedChunks"] == len(roadmap["chunks"]) > 0, d  # only the edited file's chunks
    # a full ingest of the new HEAD reads and embeds nothing: every other blob came with the bundle
    r = cli("ingest", "--all", "--cwd", str(target), "--format", "json")
    assert r.code == 0 and r.json["data"]["embeddedChunks"] == 0 and r.json["data"]["chunked"] == 0, r
    assert "Ship bundles" in query(cli, target, "ship bundles milestone")


def test_python_api_in_step_with_the_cli(origin, tmp_path):
    from ragit.api import Repo

    source = Repo.open(origin.root)
    out = tmp_path / "api.ragit"
    data = source.snapshot_export("HEAD", out)
    assert data["commitSha"] == origin.head() and out.is_file()
    target = clone(origin.root, tmp_path / "c")
    repo = Repo.open(target)
    assert repo.snapshot_import(out)["imported"] is True
    assert repo.query("restore auth context").hits
    assert repo.snapshot_import(out)["imported"] is False


# ------------------------------------------------------------------ refused bundles change nothing

def _refused(cli, root: Path, bundle: Path, reason: str) -> dict:
    before = tree_snapshot(root)
    r = do_import(cli, root, bundle)
    assert r.code == 4, r
    err = r.json["error"]
    assert err["code"] == "SNAPSHOT_BUNDLE_INVALID" and err["category"] == "corrupt_or_incompatible"
    assert err["details"]["reason"] == reason and err["details"]["path"] == str(bundle)
    assert tree_snapshot(root) == before
    return err


@pytest.fixture(params=["fresh", "indexed"])
def target(request, origin, cli, tmp_path) -> Path:
    """A fresh clone, or one whose store already holds another snapshot (it must stay as it was)."""
    root = clone(origin.root, tmp_path / f"clone-{request.param}")
    if request.param == "indexed":
        subprocess.run(["git", "-C", str(root), "checkout", "-q", "-b", "side"], check=True)
        (root / "docs" / "side.md").write_text("# Side\n\nother text\n", encoding="utf-8")
        subprocess.run(["git", "-C", str(root), "add", "-A"], check=True)
        subprocess.run(["git", "-C", str(root), "commit", "-q", "-m", "side"], check=True)
        assert cli("ingest", "--all", "--cwd", str(root), "--format", "json").code == 0
    return root


def _sections(raw: bytes) -> tuple[dict, bytes, bytes, bytes]:
    lines = raw.split(b"\n", 4)
    header = json.loads(lines[3])
    body = lines[4]
    s = header["sections"]
    return header, body[:s["manifest"]], body[s["manifest"]:s["manifest"] + s["records"]], body[s["manifest"] + s["records"]:]


def _assemble(header: dict, manifest: bytes, records: bytes, vectors: bytes, version: int = 1) -> bytes:
    header = dict(header, sections={"manifest": len(manifest), "records": len(records), "vectors": len(vectors)})
    body = json.dumps(header, sort_keys=True, separators=(",", ":")).encode() + b"\n" + manifest + records + vectors
    return (b"ragit-snapshot-bundle\n" + f"version {version}\n".encode()
            + f"sha256 {hashlib.sha256(body).hexdigest()}\n".encode() + body)


def test_tampered_bundle_fails_its_checksum(target, bundle, cli, tmp_path):
    raw = bytearray(bundle.read_bytes())
    raw[-5] ^= 0x01  # one bit of one vector
    bad = tmp_path / "tampered.ragit"
    bad.write_bytes(bytes(raw))
    _refused(cli, target, bad, "checksum_mismatch")
    truncated = tmp_path / "truncated.ragit"
    truncated.write_bytes(bundle.read_bytes()[:-100])
    _refused(cli, target, truncated, "checksum_mismatch")


def test_not_a_bundle_and_unknown_versions(target, bundle, cli, tmp_path):
    junk = tmp_path / "junk.ragit"
    junk.write_text("{}\n", encoding="utf-8")
    _refused(cli, target, junk, "malformed")
    future = tmp_path / "future.ragit"
    future.write_bytes(bundle.read_bytes().replace(b"version 1\n", b"version 2\n", 1))
    err = _refused(cli, target, future, "unsupported_version")
    assert err["details"]["version"] == 2 and err["details"]["supported"] == [1]


def test_blob_ids_must_match_local_git(target, origin, bundle, cli, tmp_path):
    header, manifest, records, vectors = _sections(bundle.read_bytes())
    real = origin.git("rev-parse", "HEAD:src/auth.py")
    forged = "0" * 40
    altered = tmp_path / "altered.ragit"
    altered.write_bytes(_assemble(header, manifest.replace(real.encode(), forged.encode()),
                                  records.replace(real.encode(), forged.encode()), vectors))
    err = _refused(cli, target, altered, "blob_mismatch")
    assert err["details"]["blobPath"] == "src/auth.py"
    assert (err["details"]["bundleBlobId"], err["details"]["localBlobId"]) == (forged, real)


def test_bundle_of_a_rewritten_file_is_refused(origin, cli, tmp_path):
    """History rewritten after the clone: the bundle's commit (and its blob) is not in the clone."""
    target = clone(origin.root, tmp_path / "c")
    origin.write("src/auth.py", SAMPLE_FILES["src/auth.py"] + "\n# rewritten\n")
    origin.git("add", "-A")
    origin.git("commit", "-q", "--amend", "-m", "rewritten")
    assert cli("ingest", "--all", "--cwd", str(origin.root), "--format", "json").code == 0
    out = tmp_path / "rewritten.ragit"
    assert export(cli, origin.root, out).code == 0
    err = _refused(cli, target, out, "commit_not_found")
    assert err["details"]["commitSha"] == origin.head()


def test_bundle_from_another_repository_is_refused(bundle, cli, tmp_path):
    other = tmp_path / "other"
    subprocess.run(["git", "init", "-q", "-b", "main", str(other)], check=True)
    (other / "README.md").write_text("# Other\n", encoding="utf-8")
    subprocess.run(["git", "-C", str(other), "add", "-A"], check=True)
    subprocess.run(["git", "-C", str(other), "commit", "-q", "-m", "other"], check=True)
    write_placeholder_config(other)
    _refused(cli, other, bundle, "commit_not_found")


def test_missing_commit_is_refused(target, origin, cli, tmp_path):
    origin.commit("later", {"docs/later.md": "# Later\n\nnot in the clone\n"})
    assert cli("ingest", "--all", "--cwd", str(origin.root), "--format", "json").code == 0
    out = tmp_path / "later.ragit"
    assert export(cli, origin.root, out).code == 0
    err = _refused(cli, target, out, "commit_not_found")
    assert err["recovery"]["command"] == f"git fetch origin {origin.head()}"


@pytest.mark.parametrize("config,param", [
    ('[embedding]\nprovider = "minilm-static"\n', "embedderId"),
    ('[embedding]\nprovider = "placeholder"\nmodel = "sha1"\ndimensions = 64\n[security]\nsecret_masking = false\n',
     "maskingVersion"),
    ('[embedding]\nprovider = "placeholder"\nmodel = "sha1"\ndimensions = 64\n[ingest]\nchunker_version = "2"\n',
     "chunkerVersion"),
    ('[embedding]\nprovider = "placeholder"\nmodel = "sha1"\ndimensions = 64\n[ingest]\nmax_file_bytes = 1234\n',
     "configHash"),
])
def test_incompatible_installation_is_refused(origin, bundle, cli, tmp_path, config, param):
    target = clone(origin.root, tmp_path / "c", config)
    err = _refused(cli, target, bundle, "params_incompatible")
    assert err["details"]["param"] == param
    assert err["recovery"]["command"] == f"ragit ingest --all --at {origin.head()}"


def test_records_must_reproduce_the_manifest(target, bundle, cli, tmp_path):
    header, manifest, records, vectors = _sections(bundle.read_bytes())
    # shift one chunk's line range: the checksum is right, the content disagrees with the manifest
    shifted = re.sub(rb'"endLine":(\d+)', lambda m: b'"endLine":' + str(int(m.group(1)) + 1).encode(), records, count=1)
    assert shifted != records
    bad = tmp_path / "inconsistent.ragit"
    bad.write_bytes(_assemble(header, manifest, shifted, vectors))
    _refused(cli, target, bad, "malformed")
    short = tmp_path / "short-vectors.ragit"
    short.write_bytes(_assemble(header, manifest, records, vectors[:-4]))
    _refused(cli, target, short, "malformed")


def test_shared_and_empty_blobs_round_trip(git_repo, cli, tmp_path, monkeypatch):
    """One blob at several paths (and under two chunkers), and documents without chunks."""
    monkeypatch.setenv("RAGIT_NOW", NOW)
    write_placeholder_config(git_repo.root)
    same = "# Shared\n\nshared rotation text\n"
    git_repo.commit("edge", {"docs/a.md": same, "docs/b.md": same, "notes/c.md": same, "src/same.py": same,
                             "docs/empty.md": "", "src/empty.py": "", **SAMPLE_FILES})
    assert cli("ingest", "--all", "--cwd", str(git_repo.root), "--format", "json").code == 0
    out = tmp_path / "edge.ragit"
    assert export(cli, git_repo.root, out).code == 0
    imported, local = clone(git_repo.root, tmp_path / "i"), clone(git_repo.root, tmp_path / "l")
    r = do_import(cli, imported, out)
    assert r.code == 0, r
    assert cli("ingest", "--all", "--cwd", str(local), "--format", "json").code == 0
    manifest = f".ragit/manifest/{git_repo.head()}.json"
    assert (imported / manifest).read_bytes() == (local / manifest).read_bytes()
    for question in ("shared rotation", "restore auth context"):
        assert query(cli, imported, question, "--top-k", "10") == query(cli, local, question, "--top-k", "10")
