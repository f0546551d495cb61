"""``ragit artifact …``: capture, list, show and the lifecycle (memory §5) in real repositories."""

from __future__ import annotations

import hashlib
import json

import pytest

from conftest import tree_snapshot

NOW = "2026-03-08T10:00:00.000Z"
LATER = "2026-03-09T11:30:00.000Z"

ALLOWED = {
    "captured": {"reviewed", "retracted", "archived"},
    "reviewed": {"promoted", "superseded", "retracted", "archived"},
    "promoted": {"superseded", "archived"},
    "superseded": {"archived"},
    "retracted": {"archived"},
    "archived": set(),
}
COMMAND = {"reviewed": "review", "promoted": "promote", "superseded": "supersede", "retracted": "retract",
           "archived": "archive"}
# a path from captured to every status
PATHS = {
    "captured": [], "reviewed": ["reviewed"], "promoted": ["reviewed", "promoted"],
    "superseded": ["reviewed", "superseded"], "retracted": ["retracted"], "archived": ["archived"],
}


def sha256(text: str) -> str:
    return "sha256:" + hashlib.sha256(text.encode("utf-8")).hexdigest()


@pytest.fixture
def repo(git_repo, monkeypatch):
    monkeypatch.setenv("RAGIT_NOW", NOW)
    git_repo.commit("initial", {"src/auth/tokens.py": "".join(f"line {i}\n" for i in range(1, 61)),
                                "README.md": "# Demo\n"})
    return git_repo


def run(cli, repo, *args, stdin=None):
    return cli("artifact", *args, "--cwd", str(repo.root), "--format", "json", stdin=stdin)


def capture(cli, repo, payload, *extra):
    result = run(cli, repo, "capture", "--input", "-", *extra, stdin=json.dumps(payload))
    assert result.code == 0, result
    return result.json["data"]


def finding(title="Refresh tokens rotate on every use", **extra):
    payload = {"scope": "session", "kind": "finding", "title": title,
               "text": "TokenStore.rotate returns a fresh token for each call.", "confidence": 0.7,
               "sessionId": "20260308T100000Z-5c4669af"}
    payload.update(extra)
    return payload


def test_capture_writes_a_reviewable_record_with_spec_ids(cli, repo):
    payload = finding(evidence=[{"path": "src/auth/tokens.py", "startLine": 40, "endLine": 58,
                                 "excerpt": "line 40\nline 41"},
                                {"path": "logs/ci.log", "excerpt": "FAILED test_rotate"}])
    record = capture(cli, repo, payload)

    title, text = payload["title"], payload["text"]
    expected_id = "art-" + hashlib.sha256(
        "\x00".join(["session", "finding", title, text, NOW]).encode("utf-8")).hexdigest()[:24]
    assert record["artifactId"] == expected_id
    assert list(record) == ["artifactId", "scope", "kind", "title", "text", "status", "authority", "confidence",
                            "sessionId", "boundSha", "contentHash", "evidence", "supersededBy", "createdAt",
                            "updatedAt", "history"]
    assert record["status"] == "captured" and record["authority"] == "captured"
    assert record["boundSha"] == repo.head()
    assert record["contentHash"] == sha256(title + "\n" + text)
    assert record["createdAt"] == record["updatedAt"] == NOW
    assert record["history"] == [{"status": "captured", "at": NOW}]
    ev1, ev2 = record["evidence"]
    blob = repo.git("rev-parse", f"{repo.head()}:src/auth/tokens.py").strip()
    assert ev1 == {"evidenceId": "ev-1", "path": "src/auth/tokens.py", "startLine": 40, "endLine": 58,
                   "sourceSha": repo.head(), "blobId": blob, "excerpt": "line 40\nline 41",
                   "contentHash": sha256("line 40\nline 41")}
    assert list(ev1) == ["evidenceId", "path", "startLine", "endLine", "sourceSha", "blobId", "excerpt", "contentHash"]
    assert ev2["evidenceId"] == "ev-2" and ev2["sourceSha"] is None and ev2["startLine"] is None
    assert ev2["blobId"] is None  # a log excerpt is no repository evidence (memory §10)

    path = repo.root / ".ragit" / "artifacts" / "session" / f"{expected_id}.json"
    raw = path.read_text(encoding="utf-8")
    assert raw == json.dumps(record, ensure_ascii=False, indent=2) + "\n"


def test_list_and_show_are_read_only_and_sorted(cli, repo, monkeypatch):
    first = capture(cli, repo, finding("first"))
    monkeypatch.setenv("RAGIT_NOW", LATER)
    second = capture(cli, repo, finding("second", scope="harness"))
    before = tree_snapshot(repo.root)

    listed = run(cli, repo, "list")
    assert listed.code == 0, listed
    ids = [a["artifactId"] for a in listed.json["data"]["artifacts"]]
    assert ids == [second["artifactId"], first["artifactId"]]
    assert listed.json["data"]["warnings"] == [] == listed.json["warnings"]
    assert [a["artifactId"] for a in run(cli, repo, "list", "--scope", "harness").json["data"]["artifacts"]] == ids[:1]
    assert run(cli, repo, "list", "--status", "reviewed").json["data"]["artifacts"] == []

    shown = run(cli, repo, "show", first["artifactId"])
    assert shown.code == 0 and shown.json["data"] == first
    text = cli("artifact", "show", first["artifactId"], "--cwd", str(repo.root), "--format", "text")
    assert f"- artifact_id: {first['artifactId']}" in text.out
    assert tree_snapshot(repo.root) == before


def test_lifecycle_review_promote_supersede_archive(cli, repo, monkeypatch):
    old = capture(cli, repo, finding("old"))["artifactId"]
    new = capture(cli, repo, finding("new"))["artifactId"]
    monkeypatch.setenv("RAGIT_NOW", LATER)

    reviewed = run(cli, repo, "review", old).json["data"]
    assert reviewed["status"] == "reviewed" and reviewed["authority"] == "reviewed_session"
    assert reviewed["updatedAt"] == LATER and reviewed["createdAt"] == NOW
    promoted = run(cli, repo, "promote", old).json["data"]
    assert promoted["authority"] == "promoted_durable"
    superseded = run(cli, repo, "supersede", old, "--by", new).json["data"]
    assert superseded["status"] == "superseded" and superseded["supersededBy"] == new
    archived = run(cli, repo, "archive", old).json["data"]
    assert [h["status"] for h in archived["history"]] == ["captured", "reviewed", "promoted", "superseded",
                                                          "archived"]
    assert archived["history"][-1]["at"] == LATER
    on_disk = json.loads((repo.root / ".ragit/artifacts/session" / f"{old}.json").read_text())
    assert on_disk == archived

    retracted = run(cli, repo, "retract", new).json["data"]
    assert retracted["status"] == "retracted" and retracted["authority"] == "captured"
    assert run(cli, repo, "archive", new).json["data"]["status"] == "archived"


def test_harness_and_evidence_authority_labels(cli, repo):
    harness = capture(cli, repo, finding("h", scope="harness"))["artifactId"]
    evidence = capture(cli, repo, finding("e", scope="evidence", evidence=[{"path": "README.md", "excerpt": "Demo"}]))
    assert run(cli, repo, "review", harness).json["data"]["authority"] == "reviewed_harness"
    assert run(cli, repo, "review", evidence["artifactId"]).json["data"]["authority"] == "reviewed_evidence"


def test_every_forbidden_transition_is_rejected(cli, repo):
    from ragit.config import load_config
    from ragit.memory.artifacts import capture as lib_capture
    from ragit.memory.artifacts import transition

    config = load_config(repo.root)
    replacement = lib_capture(repo.root, config, finding("replacement"))["artifact"]["artifactId"]
    ids = {}
    for status, steps in PATHS.items():
        art_id = lib_capture(repo.root, config, finding(f"in {status}"))["artifact"]["artifactId"]
        for step in steps:
            transition(repo.root, config, art_id, step, by=replacement if step == "superseded" else None)
        ids[status] = art_id
    before = tree_snapshot(repo.root)
    checked = 0
    for status, art_id in ids.items():
        for target in set(COMMAND) - ALLOWED[status]:
            extra = ["--by", replacement] if target == "superseded" else []
            result = run(cli, repo, COMMAND[target], art_id, *extra)
            assert result.code == 2, (status, target, result)
            error = result.json["error"]
            assert error["code"] == "ARTIFACT_TRANSITION_INVALID"
            assert error["details"] == {"artifactId": art_id, "from": status, "to": target}
            assert error["recovery"] == {"command": "ragit artifact list"}
            checked += 1
    assert checked == 30 - sum(len(v) for v in ALLOWED.values())
    assert tree_snapshot(repo.root) == before


def test_unknown_ids_are_not_found(cli, repo):
    art_id = capture(cli, repo, finding())["artifactId"]
    run(cli, repo, "review", art_id)
    missing = "art-" + "0" * 24
    for args in (("show", missing), ("review", missing), ("show", "not-an-id"), ("supersede", art_id, "--by", missing)):
        result = run(cli, repo, *args)
        assert result.code == 2, result
        assert result.json["error"]["code"] == "ARTIFACT_NOT_FOUND"
        assert result.json["error"]["details"] == {"artifactId": args[-1]}


def test_supersede_needs_another_artifact(cli, repo):
    art_id = capture(cli, repo, finding())["artifactId"]
    run(cli, repo, "review", art_id)
    before = tree_snapshot(repo.root)
    for extra in ([], ["--by", art_id], ["--by", " "]):
        result = run(cli, repo, "supersede", art_id, *extra)
        assert result.code == 2, result
        error = result.json["error"]
        assert error["code"] == "INPUT_INVALID" and error["details"]["field"] == "--by"
    assert tree_snapshot(repo.root) == before


@pytest.mark.parametrize("payload, field, reason", [
    (finding(scope="evidence"), "input.evidence", "required"),
    (finding(scope="evidence", evidence=[]), "input.evidence", "required"),
    (finding(extra=1), "input.extra", "unknown_field"),
    ({"scope": "session", "kind": "finding", "text": "x"}, "input.title", "required"),
    (finding(scope="durable"), "input.scope", "not_one_of"),
    (finding(confidence=1.5), "input.confidence", "out_of_range"),
    (finding(confidence="high"), "input.confidence", "invalid_format"),
    (finding(title="  "), "input.title", "empty"),
    (finding(text="bell\u0007"), "input.text", "control_character"),
    (finding(evidence=[{"path": "../secret.txt", "excerpt": "x"}]), "input.evidence[0].path", "path_outside_repo"),
    (finding(evidence=[{"path": "a.py", "excerpt": "x", "sha": "y"}]), "input.evidence[0].sha", "unknown_field"),
    (finding(evidence=[{"path": "a.py", "excerpt": "x", "startLine": 3}]), "input.evidence[0].endLine", "required"),
    (finding(evidence=[{"path": "a.py", "excerpt": "x", "startLine": 3, "endLine": 2}]),
     "input.evidence[0].endLine", "out_of_range"),
    (finding(evidence=[{"path": "a.py"}]), "input.evidence[0].excerpt", "required"),
])
def test_invalid_capture_payloads_write_nothing(cli, repo, payload, field, reason):
    before = tree_snapshot(repo.root)
    result = run(cli, repo, "capture", "--input", "-", stdin=json.dumps(payload))
    assert result.code == 2, result
    assert result.json["error"]["code"] == "INPUT_INVALID"
    assert (result.json["error"]["details"]["field"], result.json["error"]["details"]["reason"]) == (field, reason)
    assert result.json["error"]["recovery"] == {"command": "ragit describe artifact capture"}
    assert tree_snapshot(repo.root) == before


def test_capture_requires_input(cli, repo):
    result = run(cli, repo, "capture")
    assert result.code == 2 and result.json["error"]["details"]["field"] == "--input"


def test_dry_run_changes_nothing(cli, repo):
    before = tree_snapshot(repo.root)
    dry = run(cli, repo, "capture", "--input", "-", "--dry-run", stdin=json.dumps(finding()))
    assert dry.code == 0, dry
    assert dry.json["data"]["status"] == "captured"
    assert "dry-run: nothing was written" in dry.json["warnings"]
    assert tree_snapshot(repo.root) == before

    art_id = capture(cli, repo, finding())["artifactId"]
    assert art_id == dry.json["data"]["artifactId"]
    before = tree_snapshot(repo.root)
    result = run(cli, repo, "review", art_id, "--dry-run")
    assert result.code == 0 and result.json["data"]["status"] == "reviewed"
    assert tree_snapshot(repo.root) == before
    assert run(cli, repo, "show", art_id).json["data"]["status"] == "captured"


def test_recapturing_the_same_instant_keeps_the_record(cli, repo):
    art_id = capture(cli, repo, finding())["artifactId"]
    run(cli, repo, "review", art_id)
    again = run(cli, repo, "capture", "--input", "-", stdin=json.dumps(finding()))
    assert again.json["data"]["status"] == "reviewed"
    assert any("already exists" in w for w in again.json["warnings"])


def test_secrets_are_masked_on_disk(cli, repo):
    token = "ghp_" + "a1B2c3D4e5" * 3
    aws = "AKIA" + "ABCDEFGHIJKLMNOP"
    payload = finding(text=f"the CI token {token} leaked",
                      evidence=[{"path": "logs/ci.log", "excerpt": f"export AWS={aws}"}])
    record = capture(cli, repo, payload)
    raw = (repo.root / ".ragit/artifacts/session" / f"{record['artifactId']}.json").read_text()
    assert token not in raw and aws not in raw
    assert "ghp_a1***" in raw and "AKIAAB***" in raw
    assert record["contentHash"] == sha256(record["title"] + "\n" + record["text"])
    assert record["evidence"][0]["contentHash"] == sha256(record["evidence"][0]["excerpt"])
    assert any("masked 2 secret" in w for w in run(cli, repo, "capture", "--input", "-", "--dry-run",
                                                    stdin=json.dumps(payload)).json["warnings"])


def test_evidence_source_sha_needs_a_clean_committed_file(cli, repo):
    repo.write("src/auth/tokens.py", "changed\n")
    record = capture(cli, repo, finding(evidence=[{"path": "src/auth/tokens.py", "excerpt": "changed"},
                                                  {"path": "README.md", "excerpt": "# Demo"}]))
    assert [e["sourceSha"] for e in record["evidence"]] == [None, repo.head()]


def test_corrupt_files_are_skipped_with_a_warning(cli, repo):
    good = capture(cli, repo, finding())["artifactId"]
    bad = "art-" + "f" * 24
    folder = repo.root / ".ragit/artifacts/session"
    (folder / f"{bad}.json").write_text("{not json", encoding="utf-8")
    (folder / "notes.json").write_text("{}", encoding="utf-8")
    listed = run(cli, repo, "list")
    assert listed.code == 0
    assert [a["artifactId"] for a in listed.json["data"]["artifacts"]] == [good]
    assert len(listed.json["warnings"]) == 2 and listed.json["warnings"] == listed.json["data"]["warnings"]
    shown = run(cli, repo, "show", bad)
    assert shown.code == 2 and shown.json["error"]["code"] == "ARTIFACT_NOT_FOUND"


def test_outside_git_bound_sha_is_null(cli, tmp_path, monkeypatch):
    monkeypatch.setenv("RAGIT_NOW", NOW)
    folder = tmp_path / "plain"
    folder.mkdir()
    result = cli("artifact", "capture", "--input", "-", "--cwd", str(folder), "--format", "json",
                 stdin=json.dumps(finding()))
    assert result.code == 0, result
    assert result.json["data"]["boundSha"] is None
    assert any("not a git repository" in w for w in result.json["warnings"])


def test_describe_lists_the_artifact_commands(cli):
    for command, mutating in (("capture", True), ("list", False), ("show", False), ("review", True),
                              ("promote", True), ("supersede", True), ("retract", True), ("archive", True)):
        result = cli("describe", "artifact", command, "--format", "json")
        assert result.code == 0, result
        spec = result.json["data"]["spec"]
        assert spec["group"] == "artifact" and spec["mutating"] is mutating
        assert spec["supportsDryRun"] is mutating
        assert spec["supportsRawJsonInput"] is (command == "capture")


def test_bad_filters_and_missing_directory(cli, repo, tmp_path):
    for option in ("--scope", "--status"):
        result = run(cli, repo, "list", option, "bogus")
        assert result.code == 2 and result.json["error"]["details"]["field"] == option
        assert result.json["error"]["details"]["reason"] == "not_one_of"
    missing = tmp_path / "missing"
    result = cli("artifact", "list", "--cwd", str(missing), "--format", "json")
    assert result.code == 2 and result.json["error"]["details"]["field"] == "--cwd"
    assert not missing.exists()
