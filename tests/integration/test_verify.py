"""`ragit verify` on real repositories (knowledge §20, §9; cli-contract §1.1, §4)."""

from __future__ import annotations

import hashlib
import json
import shutil

import pytest
from conftest import SAMPLE_FILES, tree_snapshot, write_placeholder_config

from ragit.config import load_config
from ragit.ingest.ids import citation_id
from ragit.ingest.manifest import load_manifest

ADR = "docs/adr/001-auth.md"
ROADMAP = "docs/plan/roadmap.md"
DATA_KEYS = ["citation", "cited", "head", "status", "current", "diff", "warnings"]
DIRTY = "working tree has uncommitted changes; results exclude them"


@pytest.fixture
def repo(git_repo, cli):
    """The sample repository indexed at HEAD; store and cache ignored, so later commits stay clean."""
    write_placeholder_config(git_repo.root)
    git_repo.write(".gitignore", ".ragit/store/\n.ragit/cache/\n")
    git_repo.commit("initial", SAMPLE_FILES)
    assert ingest(cli, git_repo).code == 0
    return git_repo


def ingest(cli, repo):
    return cli("ingest", "--all", "--cwd", str(repo.root), "--format", "json")


def verify(cli, repo, citation, *args):
    return cli("verify", citation, "--cwd", str(repo.root), *args)


def chunks(repo, path, sha=None):
    """``(citation id, start, end)`` of every chunk of ``path`` in the manifest of ``sha`` (HEAD)."""
    manifest = load_manifest(repo.root, load_config(repo.root), sha or repo.head()).manifest
    doc = next(d for d in manifest.docs if d.path == path)
    return [(citation_id("document", cid, doc.blob_id), start, end)
            for cid, (start, end) in zip(manifest.chunk_ids(doc), doc.chunks)]


def chunk_covering(repo, path, line):
    return next(c for c in chunks(repo, path) if c[1] <= line <= c[2])


# ---------------------------------------------------------------- ok at HEAD


def test_head_hit_is_ok_by_id_and_by_handle(repo, cli):
    head = repo.head()
    cid, start, end = chunk_covering(repo, ADR, 6)
    r = verify(cli, repo, cid)
    assert r.code == 0, r
    env = r.json
    assert env["command"] == "verify" and env["ok"] is True and env["cwd"] == str(repo.root)
    data = env["data"]
    assert list(data) == DATA_KEYS
    blob = repo.git("rev-parse", f"HEAD:{ADR}")
    assert data["cited"] == {"path": ADR, "sha": head, "startLine": start, "endLine": end, "blobId": blob,
                             "citationId": cid}
    assert data["head"] == head and data["status"] == "ok" and data["diff"] is None
    assert data["current"] == {"path": ADR, "startLine": start, "endLine": end, "blobId": blob}
    assert data["warnings"] == env["warnings"] == []

    handle = f"{ADR}@{head[:12]}:L{start}-L{end}"
    by_handle = verify(cli, repo, handle).json["data"]
    assert by_handle["citation"] == handle and by_handle["status"] == "ok"
    assert by_handle["cited"] == data["cited"]


def test_handle_without_matching_chunk_has_null_citation_id(repo, cli):
    data = verify(cli, repo, f"{ADR}@{repo.head()}:L4-L6").json["data"]
    assert data["status"] == "ok" and data["cited"]["citationId"] is None


def test_every_query_and_pack_hit_verifies_ok(repo, cli):
    root = str(repo.root)
    query = cli("query", "refresh token rotation roadmap", "--top-k", "20", "--cwd", root, "--format", "json")
    pack = cli("context", "pack", "restore auth context", "--cwd", root, "--format", "json")
    hits = query.json["data"]["hits"] + pack.json["data"]["hits"]
    assert len(query.json["data"]["hits"]) > 4 and pack.json["data"]["hits"]
    for hit in hits:
        c = hit["citation"]
        by_id = verify(cli, repo, c["id"])
        assert by_id.code == 0 and by_id.json["data"]["status"] == "ok", (hit, by_id)
        cited = by_id.json["data"]["cited"]
        assert (cited["path"], cited["sha"], cited["startLine"], cited["endLine"], cited["blobId"]) == (
            hit["path"], c["sourceSha"], hit["startLine"], hit["endLine"], c["sourceVersion"])
        handle = f"{hit['path']}@{c['sourceSha'][:12]}:L{hit['startLine']}-L{hit['endLine']}"
        by_handle = verify(cli, repo, handle).json["data"]
        assert by_handle["status"] == "ok" and by_handle["cited"]["citationId"] == c["id"]


def test_verify_writes_nothing(repo, cli):
    cid = chunks(repo, ROADMAP)[0][0]
    before = tree_snapshot(repo.root)
    assert verify(cli, repo, cid).code == 0
    assert verify(cli, repo, f"{ROADMAP}@{repo.head()[:8]}:L1-L2").code == 0
    assert tree_snapshot(repo.root) == before


def test_without_a_store_ids_are_found_through_the_manifests(repo, cli):
    cid = chunks(repo, ROADMAP)[-1][0]
    shutil.rmtree(repo.root / ".ragit" / "store")
    r = verify(cli, repo, cid)
    assert r.code == 0 and r.json["data"]["cited"]["path"] == ROADMAP


# ---------------------------------------------------------------- drift


def test_three_lines_inserted_above_is_shifted(repo, cli):
    first = repo.head()
    cid, start, end = chunk_covering(repo, ADR, 10)
    text = SAMPLE_FILES[ADR].replace("## Consequences\n", "one\ntwo\nthree\n## Consequences\n")
    head = repo.commit("insert", {ADR: text})
    assert ingest(cli, repo).code == 0  # HEAD no longer lists the old chunk: found in the ancestor
    r = verify(cli, repo, cid)
    assert r.code == 3, r
    env = r.json
    assert env["ok"] is False and env["data"]["status"] == "shifted"
    data = env["data"]
    assert data["cited"]["sha"] == first and data["head"] == head
    assert data["current"] == {"path": ADR, "startLine": start + 3, "endLine": end + 3,
                               "blobId": repo.git("rev-parse", f"HEAD:{ADR}")}
    assert data["diff"] is None


def test_edited_cited_line_is_changed_with_a_masked_diff(repo, cli):
    cid, start, end = chunk_covering(repo, ADR, 6)
    old = "We rotate refresh tokens on every use so a stolen token is useless."
    new = "We rotate refresh tokens daily; api_key=abcdef123456 is the fallback."
    repo.commit("edit", {ADR: SAMPLE_FILES[ADR].replace(old, new)})
    r = verify(cli, repo, cid)
    assert r.code == 3
    data = r.json["data"]
    assert data["status"] == "changed"
    assert data["current"]["path"] == ADR and data["current"]["startLine"] == start
    diff = data["diff"]
    head12 = repo.head()[:12]
    assert diff.startswith(f"--- {ADR}@")
    assert f"+++ {ADR}@{head12}:L{start}-L{end}\n" in diff
    assert f"-{old}\n" in diff and "+We rotate refresh tokens daily; api_key: abcd***" in diff
    assert "abcdef123456" not in r.out
    assert "\n@@ -" in diff and f" +{start}" in diff.split("@@")[1]


def test_git_mv_is_moved(repo, cli):
    cid, start, end = chunks(repo, ROADMAP)[-1]
    repo.git("mv", ROADMAP, "docs/roadmap.md")
    repo.commit("move")
    data = verify(cli, repo, cid).json["data"]
    assert data["status"] == "moved"
    assert data["current"] == {"path": "docs/roadmap.md", "startLine": start, "endLine": end,
                               "blobId": repo.git("rev-parse", "HEAD:docs/roadmap.md")}


def test_rename_with_edit_locates_the_text_at_the_new_path(repo, cli):
    cid, start, end = chunks(repo, ROADMAP)[-1]
    repo.git("rm", "-q", ROADMAP)
    repo.commit("move and edit", {"docs/roadmap.md": "Intro line.\n" + SAMPLE_FILES[ROADMAP]})
    data = verify(cli, repo, cid).json["data"]
    assert data["status"] == "moved"
    assert (data["current"]["path"], data["current"]["startLine"], data["current"]["endLine"]) == (
        "docs/roadmap.md", start + 1, end + 1)


def test_git_rm_is_deleted(repo, cli):
    cid = chunks(repo, ROADMAP)[0][0]
    repo.git("rm", "-q", ROADMAP)
    repo.commit("remove")
    r = verify(cli, repo, cid)
    assert r.code == 3 and r.json["ok"] is False
    data = r.json["data"]
    assert data["status"] == "deleted" and data["current"] is None and data["diff"] is None


def test_dirty_worktree_warns_and_compares_with_the_commit(repo, cli):
    cid = chunk_covering(repo, ADR, 6)[0]
    repo.write(ADR, "# rewritten in the worktree only\n")
    r = verify(cli, repo, cid)
    assert r.code == 0 and r.json["data"]["status"] == "ok"
    assert r.json["data"]["warnings"] == r.json["warnings"] == [DIRTY]


def test_text_layout(repo, cli):
    cid, start, end = chunk_covering(repo, ADR, 10)
    cited_sha = repo.head()
    repo.commit("edit", {ADR: SAMPLE_FILES[ADR].replace("newest refresh token", "latest token")})
    repo.write("notes.txt", "untracked\n")
    r = verify(cli, repo, cid, "--format", "text")
    assert r.code == 3 and r.err == ""
    head = repo.head()
    assert r.out.startswith(
        f"# ragit verify\n- citation: {cid}\n- status: changed\n"
        f"- cited: {ADR}@{cited_sha[:12]}:L{start}-L{end}\n"
        f"- current: {ADR}@{head[:12]}:L{start}-L{end}\n- head: {head}\n- warning: {DIRTY}\n\n--- ")
    assert r.out.endswith("+Clients must store the latest token after each call.\n")


def test_text_shows_none_for_deleted(repo, cli):
    cid = chunks(repo, ROADMAP)[0][0]
    repo.git("rm", "-q", ROADMAP)
    repo.commit("remove")
    out = verify(cli, repo, cid, "--format", "text").out
    assert "- status: deleted\n" in out and "- current: none\n" in out


# ---------------------------------------------------------------- failures


def error(result, code, exit_code):
    assert result.code == exit_code, result
    err = result.json["error"]
    assert err["code"] == code
    return err


def test_unknown_id_is_citation_not_found(repo, cli):
    err = error(verify(cli, repo, "cite-000000000000000000000000"), "CITATION_NOT_FOUND", 2)
    assert err["details"] == {"citation": "cite-000000000000000000000000", "reason": "unknown_id"}


@pytest.mark.parametrize("citation", ["docs/a.md:L1", "cite-123", "docs/a.md@abcd:L2-L1", "docs/a.md@abcd:L0-L1",
                                      "docs/a.md@abcd:1-2", ""])
def test_malformed_citation_is_input_invalid(repo, cli, citation):
    err = error(verify(cli, repo, citation), "INPUT_INVALID", 2)
    assert err["details"]["field"] == "citation" and err["details"]["reason"] == "invalid_format"


@pytest.mark.parametrize("ref", ["zzzz", "main", "abc"])
def test_bad_handle_sha_is_snapshot_ref_invalid(repo, cli, ref):
    err = error(verify(cli, repo, f"docs/a.md@{ref}:L1-L2"), "SNAPSHOT_REF_INVALID", 2)
    assert err["details"] == {"ref": ref}


def test_handle_path_or_lines_not_in_commit(repo, cli):
    head = repo.head()
    err = error(verify(cli, repo, f"docs/a.md@{head}:L1-L2"), "CITATION_NOT_FOUND", 2)
    assert err["details"]["reason"] == "path_not_in_commit"
    err = error(verify(cli, repo, f"docs/adr@{head}:L1-L2"), "CITATION_NOT_FOUND", 2)
    assert err["details"]["reason"] == "path_not_in_commit"
    err = error(verify(cli, repo, f"{ADR}@{head}:L10-L12"), "CITATION_NOT_FOUND", 2)
    assert err["details"]["reason"] == "lines_out_of_range"


def test_unborn_head_is_snapshot_ref_invalid(git_repo, cli):
    err = error(verify(cli, git_repo, "cite-000000000000000000000000"), "SNAPSHOT_REF_INVALID", 2)
    assert err["details"] == {"ref": "HEAD"}


def test_outside_git_is_repository_required(tmp_path, cli):
    error(cli("verify", "cite-000000000000000000000000", "--cwd", str(tmp_path)), "GIT_REPOSITORY_REQUIRED", 3)


def test_describe_verify(cli):
    spec = cli("describe", "verify").json["data"]["spec"]
    assert spec["stability"] == "read-only" and spec["defaultFormat"] == "json"
    assert spec["outputSchemaSummary"] == DATA_KEYS


# ---------------------------------------------------------------- knowledge artifacts


def sha256(text: str) -> str:
    return "sha256:" + hashlib.sha256(text.encode("utf-8")).hexdigest()


def write_artifact(repo, *, scope="session", status="reviewed", title="Tokens rotate", text="Refresh tokens rotate.",
                   artifact_id="art-0123456789abcdef01234567"):
    excerpt = "def rotate(self, token):"
    record = {
        "artifactId": artifact_id, "scope": scope, "kind": "finding", "title": title, "text": text,
        "status": status, "authority": "captured", "confidence": 0.7, "sessionId": None,
        "boundSha": repo.head(), "contentHash": sha256(f"{title}\n{text}"),
        "evidence": [{"evidenceId": "ev-1", "path": "src/auth.py", "startLine": 10, "endLine": 10,
                      "sourceSha": None, "excerpt": excerpt, "contentHash": sha256(excerpt)}],
        "supersededBy": None, "createdAt": "2026-03-08T10:00:00.000Z", "updatedAt": "2026-03-08T10:00:00.000Z",
        "history": [{"status": status, "at": "2026-03-08T10:00:00.000Z"}],
    }
    relpath = f".ragit/artifacts/{scope}/{artifact_id}.json"
    repo.write(relpath, json.dumps(record, indent=2) + "\n")
    body = citation_id("artifact", artifact_id, record["contentHash"])
    evidence = citation_id("evidence", f"{artifact_id}:ev-1", sha256(excerpt))
    return relpath, record, body, evidence


def test_artifact_body_and_evidence_are_ok(repo, cli):
    relpath, _, body, evidence = write_artifact(repo)
    r = verify(cli, repo, body)
    assert r.code == 0, r
    data = r.json["data"]
    assert data["status"] == "ok"
    assert data["cited"] == {"path": relpath, "sha": repo.head(), "startLine": None, "endLine": None,
                             "blobId": None, "citationId": body}
    assert data["current"] == {"path": relpath, "startLine": None, "endLine": None, "blobId": None}
    ev = verify(cli, repo, evidence).json["data"]
    assert ev["status"] == "ok"
    assert (ev["cited"]["path"], ev["cited"]["startLine"], ev["cited"]["sha"]) == ("src/auth.py", 10, repo.head())
    assert verify(cli, repo, body, "--format", "text").out.splitlines()[4] == f"- current: {relpath}"


@pytest.mark.parametrize("status", ["superseded", "retracted", "archived"])
def test_withdrawn_artifact(repo, cli, status):
    _, _, body, evidence = write_artifact(repo, status=status)
    for cid in (body, evidence):
        r = verify(cli, repo, cid)
        assert r.code == 3 and r.json["ok"] is False
        assert r.json["data"]["status"] == "withdrawn" and r.json["data"]["current"] is None


def test_committed_artifact_edited_or_removed(repo, cli):
    relpath, record, body, evidence = write_artifact(repo, scope="harness")
    repo.git("add", "-f", relpath)  # .ragit/ may be excluded by the git template
    repo.commit("share the artifact")
    record.update(text="Refresh tokens rotate hourly.", contentHash=sha256("Tokens rotate\nRefresh tokens rotate hourly."))
    repo.write(relpath, json.dumps(record, indent=2) + "\n")
    data = verify(cli, repo, body).json["data"]
    assert data["status"] == "changed" and data["current"]["path"] == relpath
    assert "-Refresh tokens rotate.\n+Refresh tokens rotate hourly.\n" in data["diff"]
    assert verify(cli, repo, evidence).json["data"]["status"] == "ok"

    (repo.root / relpath).unlink()
    for cid in (body, evidence):
        data = verify(cli, repo, cid).json["data"]
        assert data["status"] == "deleted" and data["current"] is None
