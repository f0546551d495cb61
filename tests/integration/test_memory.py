"""``ragit memory wrap | recall | promote`` on real directories and repositories (memory §1–4)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from conftest import tree_snapshot, write_placeholder_config

NOW = "2026-03-08T10:00:00.000Z"
SESSION = {
    "goal": "finish auth migration",
    "summary": "moved token rotation into the store",
    "constraints": ["keep the public API stable", 7, "  "],
    "decisions": [{"title": "Rotate refresh tokens", "summary": "rotate on every use",
                   "rationale": "a stolen token becomes useless", "alternatives": ["sliding expiry"]}],
    "openLoops": [
        {"title": "Finalize refresh-token boundary", "status": "blocked", "nextAction": "write the ADR",
         "blockingConditions": ["security review"]},
        {"title": "Old cleanup", "status": "closed", "nextAction": "nothing"},
    ],
    "nextActions": ["ship the migration"],
    "createdAt": NOW,
}
SESSION_ID = "20260308T100000Z-5c4669af"
CANDIDATES = [
    {"kind": "decision", "title": "Restore active work instead of replaying raw logs",
     "summary": "Recall restores the working state and open loops instead of replaying raw session logs.",
     "alternatives": ["replay raw logs"]},
    {"kind": "glossary", "title": "Open loop", "summary": "An unfinished work item carried across sessions.",
     "aliases": ["loop"]},
    {"kind": "plan", "title": "Memory plane", "summary": "Ship wrap, recall and promote.",
     "milestones": ["wrap", "recall", "promote"]},
]


def run(cli, root: Path, *args: str, payload=None):
    stdin = None if payload is None else json.dumps(payload)
    extra = ("--input", "-") if payload is not None else ()
    return cli("memory", *args, *extra, "--cwd", str(root), stdin=stdin)


def wrap(cli, root: Path, payload=SESSION, *args: str):
    return run(cli, root, "wrap", *args, "--format", "json", payload=payload)


def read(root: Path, rel: str):
    return json.loads((root / rel).read_text(encoding="utf-8"))


def committed_paths(repo, sha: str) -> list[str]:
    return repo.git("show", "--name-only", "--format=", sha).split()


# ---------------------------------------------------------------- wrap

def test_wrap_outside_git_writes_record_state_and_registry(cli, tmp_path):
    plain = tmp_path / "plain"
    plain.mkdir()
    r = wrap(cli, plain)
    assert r.code == 0, r
    env = r.json
    data = env["data"]
    assert list(data) == ["sessionId", "sessionPath", "currentPath", "openLoopsPath", "sourceHeadSha", "dryRun",
                          "warnings"]
    assert data["sessionId"] == SESSION_ID
    assert data["sessionPath"] == f".ragit/memory/sessions/{SESSION_ID}.json"
    assert data["sourceHeadSha"] is None and data["dryRun"] is False
    assert any("HEAD commit" in w for w in data["warnings"]) and env["warnings"] == data["warnings"]
    assert env["cwd"] == str(plain)

    record = read(plain, data["sessionPath"])
    assert list(record) == ["sessionId", "goal", "summary", "constraints", "decisions", "openLoops", "nextActions",
                            "promotionCandidates", "sourceHeadSha", "createdAt"]
    assert record["goal"] == "finish auth migration" and record["createdAt"] == NOW
    assert record["constraints"] == ["keep the public API stable"]
    assert [loop["status"] for loop in record["openLoops"]] == ["blocked", "closed"]
    assert "sourceSessionId" not in record["openLoops"][0]
    decision = record["decisions"][0]
    assert list(decision) == ["id", "title", "summary", "rationale", "alternatives", "consequences", "relatedFiles"]

    current = read(plain, data["currentPath"])
    assert list(current) == ["goal", "summary", "constraints", "decisions", "openLoops", "nextActions",
                             "latestSessionId", "sourceHeadSha", "updatedAt"]
    assert current["latestSessionId"] == SESSION_ID and current["updatedAt"] == NOW
    assert [loop["title"] for loop in current["openLoops"]] == ["Finalize refresh-token boundary"]
    assert current["openLoops"][0]["sourceSessionId"] == SESSION_ID
    registry = read(plain, data["openLoopsPath"])
    assert registry == {"latestSessionId": SESSION_ID, "updatedAt": NOW, "items": current["openLoops"]}
    raw = (plain / data["currentPath"]).read_text(encoding="utf-8")
    assert raw.endswith("}\n") and raw.startswith('{\n  "goal"')


def test_wrap_text_rendering(cli, tmp_path):
    r = run(cli, tmp_path, "wrap", "--format", "text", payload=SESSION)
    assert r.code == 0, r
    assert r.out.splitlines()[:7] == [
        "# ragit memory wrap", f"- session_id: {SESSION_ID}",
        f"- session_path: .ragit/memory/sessions/{SESSION_ID}.json",
        "- current_path: .ragit/memory/working/current.json",
        "- open_loops_path: .ragit/memory/working/open-loops.json", "- source_head: none", "- dry_run: false",
    ]


def test_wrap_records_head_and_replaces_the_registry(git_repo, cli, monkeypatch):
    head = git_repo.commit("initial", {"README.md": "# Demo\n"})
    assert wrap(cli, git_repo.root).json["data"]["sourceHeadSha"] == head
    monkeypatch.setenv("RAGIT_NOW", "2026-03-09T08:30:00.000Z")
    second = dict(SESSION, goal="second goal", openLoops=[{"title": "New", "nextAction": "go", "status": "weird"}],
                  sourceHeadSha=None)
    del second["createdAt"]
    data = wrap(cli, git_repo.root, second).json["data"]
    assert data["sessionId"].startswith("20260309T083000Z-") and data["sourceHeadSha"] is None
    assert data["warnings"] == []
    registry = read(git_repo.root, data["openLoopsPath"])
    assert [i["title"] for i in registry["items"]] == ["New"] and registry["items"][0]["status"] == "open"
    assert len(list((git_repo.root / ".ragit/memory/sessions").glob("*.json"))) == 2


def test_wrap_unborn_repository_ignores_a_supplied_sha(git_repo, cli):
    data = wrap(cli, git_repo.root, dict(SESSION, sourceHeadSha="a" * 40)).json["data"]
    assert data["sourceHeadSha"] is None and any("HEAD commit" in w for w in data["warnings"])
    assert read(git_repo.root, data["sessionPath"])["sourceHeadSha"] is None


def test_wrap_dry_run_writes_nothing(git_repo, cli):
    before = tree_snapshot(git_repo.root)
    r = wrap(cli, git_repo.root, SESSION, "--dry-run")
    assert r.code == 0 and r.json["data"]["dryRun"] is True
    assert tree_snapshot(git_repo.root) == before


def test_wrap_masks_secrets_on_write(cli, tmp_path):
    secret = "sk-abcdefghijklmnopqrstuvwxyz123456"
    data = wrap(cli, tmp_path, dict(SESSION, summary=f"used {secret} for the test")).json["data"]
    for rel in (data["sessionPath"], data["currentPath"]):
        text = (tmp_path / rel).read_text(encoding="utf-8")
        assert secret not in text and "sk-abc***" in text


@pytest.mark.parametrize("payload, field, reason", [
    (dict(SESSION, decisions=["use WAL mode"]), "input.decisions[0]", None),
    (dict(SESSION, extra=1), "input.extra", "unknown_field"),
    (dict(SESSION, decisions=[{"title": "t", "summary": "s", "status": "x"}]), "input.decisions[0].status",
     "unknown_field"),
    (dict(SESSION, goal="   "), "input.goal", "empty"),
    (dict(SESSION, summary=5), "input.summary", "not_string"),
    ({"summary": "s"}, "input.goal", "required"),
    (dict(SESSION, openLoops=[{"title": "t"}]), "input.openLoops[0].nextAction", "required"),
    (dict(SESSION, decisions=[{"title": "t", "summary": "s", "relatedFiles": ["../etc/passwd"]}]),
     "input.decisions[0].relatedFiles[0]", "path_outside_repo"),
    (dict(SESSION, goal="bell \u0007"), "input.goal", "control_character"),
    (dict(SESSION, createdAt="yesterday"), "input.createdAt", "invalid_format"),
    (dict(SESSION, promotionCandidates=[{"kind": "decision", "title": "t", "summary": "s", "type": "adr"}]),
     "input.promotionCandidates[0].type", "unknown_field"),
])
def test_wrap_rejects_invalid_payloads_and_writes_nothing(git_repo, cli, payload, field, reason):
    before = tree_snapshot(git_repo.root)
    r = wrap(cli, git_repo.root, payload)
    assert r.code == 2, r
    error = r.json["error"]
    assert error["code"] == "INPUT_INVALID" and error["details"]["field"] == field
    if reason:
        assert error["details"]["reason"] == reason
    assert error["recovery"]["command"] == "ragit describe memory wrap"
    assert tree_snapshot(git_repo.root) == before


def test_wrap_requires_input_and_fails_in_text_by_default(git_repo, cli):
    r = cli("memory", "wrap", "--cwd", str(git_repo.root))
    assert r.code == 2 and r.out == ""
    assert "- code: INPUT_INVALID" in r.err and '"field":"--input"' in r.err


# ---------------------------------------------------------------- recall

def count_embeddings(monkeypatch) -> list[int]:
    from ragit.embed.placeholder import PlaceholderEmbedder

    calls: list[int] = []
    original = PlaceholderEmbedder.embed

    def embed(self, texts):
        calls.append(len(texts))
        return original(self, texts)

    monkeypatch.setattr(PlaceholderEmbedder, "embed", embed)
    return calls


def test_recall_in_unborn_repository_degrades_without_embedding(git_repo, cli, monkeypatch):
    write_placeholder_config(git_repo.root)
    assert wrap(cli, git_repo.root).code == 0
    calls = count_embeddings(monkeypatch)
    before = tree_snapshot(git_repo.root)
    r = run(cli, git_repo.root, "recall", "finish auth migration", "--format", "json")
    assert r.code == 0, r
    data = r.json["data"]
    assert list(data) == ["goal", "constraints", "openLoops", "relatedDecisions", "retrievedHits", "nextActions",
                          "latestSessionId", "previousSession", "sourceHeadSha", "snapshotSha", "snapshot",
                          "createdAt", "warnings", "redactionSummary"]
    assert data["goal"] == "finish auth migration"
    assert data["openLoops"][0]["status"] == "blocked"
    assert data["relatedDecisions"][0]["title"] == "Rotate refresh tokens"
    assert data["retrievedHits"] == [] and data["snapshotSha"] is None
    assert data["snapshot"] == {"requestedRef": "HEAD", "resolvedSha": None, "selection": "head-exact",
                                "status": "unavailable", "branch": "main", "detached": False, "worktreeDirty": False}
    assert any("SNAPSHOT_NOT_INDEXED" in w for w in data["warnings"])
    assert r.json["warnings"] == data["warnings"]
    assert data["latestSessionId"] == SESSION_ID
    assert calls == []
    assert tree_snapshot(git_repo.root) == before
    text = run(cli, git_repo.root, "recall", "finish auth migration", "--format", "text").out
    assert "ragit memory recall" in text and "- snapshot_status: unavailable" in text
    assert "- [blocked] Finalize refresh-token boundary\n  next: write the ADR\n  blockers: security review" in text
    # issue 13: the hand-off text of the last session reaches the next one
    assert data["previousSession"] == {"sessionId": SESSION_ID, "goal": "finish auth migration",
                                       "summary": "moved token rotation into the store"}
    assert ("## Previous Session\n- goal: finish auth migration\n- summary: moved token rotation into the store\n\n"
            "## Constraints\n") in text


def test_recall_indexed_repository(indexed_repo, cli, monkeypatch):
    head = indexed_repo.head()
    payload = dict(SESSION, openLoops=[{"title": "Finalize refresh-token boundary", "status": "in_progress",
                                         "nextAction": "rotate refresh tokens on every call"}])
    assert wrap(cli, indexed_repo.root, payload).code == 0
    before = tree_snapshot(indexed_repo.root)
    r = run(cli, indexed_repo.root, "recall", "rotate refresh tokens", "--view", "minimal")
    assert r.code == 0, r
    envelope = r.out.partition("\n\n{")[2]
    data = json.loads("{" + envelope)["data"]
    assert data["snapshotSha"] == head and data["snapshot"]["status"] == "indexed"
    assert "refresh-token" in data["openLoops"][0]["title"]
    hits = data["retrievedHits"]
    assert hits and len(hits) <= 8
    assert all("excerpt" in h and "text" not in h and "scoreBreakdown" not in h for h in hits)
    assert data["sourceHeadSha"] == head and data["warnings"] == []
    for line in ("- snapshot_status: indexed", f"- snapshot_sha: {head}", "- branch: main", "- detached: false",
                 "## Retrieved Hits\n1. [cite-"):
        assert line in r.out
    assert tree_snapshot(indexed_repo.root) == before


def test_recall_empty_goal_is_invalid(git_repo, cli):
    r = run(cli, git_repo.root, "recall", "  ", "--format", "json")
    assert r.code == 2 and r.json["error"]["details"] == {"field": "goal", "reason": "empty"}
    assert run(cli, git_repo.root, "recall", "x", "--view", "wide", "--format", "json").code == 2


def test_recall_without_working_memory_uses_nothing(indexed_repo, cli):
    data = run(cli, indexed_repo.root, "recall", "roadmap milestone", "--format", "json").json["data"]
    assert data["constraints"] == [] and data["openLoops"] == [] and data["nextActions"] == []
    assert data["latestSessionId"] is None and data["sourceHeadSha"] is None
    assert data["previousSession"] is None
    assert data["retrievedHits"]
    text = run(cli, indexed_repo.root, "recall", "roadmap milestone", "--format", "text").out
    assert "## Previous Session\n- none\n" in text


def test_recall_falls_back_to_the_latest_session_loops(cli, tmp_path):
    assert wrap(cli, tmp_path).code == 0
    (tmp_path / ".ragit/memory/working/current.json").unlink()
    data = run(cli, tmp_path, "recall", "auth", "--format", "json").json["data"]
    assert [loop["title"] for loop in data["openLoops"]] == ["Finalize refresh-token boundary"]
    assert data["latestSessionId"] == SESSION_ID
    assert data["previousSession"]["summary"] == "moved token rotation into the store"
    assert any("GIT_REPOSITORY_REQUIRED" in w for w in data["warnings"])
    assert data["snapshot"]["resolvedSha"] is None and data["snapshot"]["status"] == "unavailable"


def test_recall_masks_the_goal_and_reports_it(git_repo, cli):
    r = run(cli, git_repo.root, "recall", "why does token=abcdef123456 fail", "--format", "json")
    data = r.json["data"]
    assert data["goal"] == "why does token: abcd*** fail"
    assert data["redactionSummary"] == {"applied": True, "maskedCount": 1, "sources": ["goal"]}


def test_recall_masks_hand_edited_working_memory(cli, tmp_path):
    assert wrap(cli, tmp_path).code == 0
    current = tmp_path / ".ragit/memory/working/current.json"
    state = json.loads(current.read_text())
    state["decisions"][0]["rationale"] = "key AKIAABCDEFGHIJKLMNOP leaked"
    state["constraints"] = ["use ghp_ABCDEFGHIJKLMNOPQRSTUVWXYZ12"]
    current.write_text(json.dumps(state))
    full = run(cli, tmp_path, "recall", "auth", "--view", "full", "--format", "json").json["data"]
    assert full["relatedDecisions"][0]["rationale"] == "key AKIAAB*** leaked"
    assert full["redactionSummary"]["sources"] == ["constraints[0]", "relatedDecisions[0].rationale"]
    minimal = run(cli, tmp_path, "recall", "auth", "--view", "minimal", "--format", "json").json["data"]
    assert minimal["redactionSummary"] == {"applied": True, "maskedCount": 1, "sources": ["constraints[0]"]}


def test_recall_degraded_ranks_reviewed_artifacts_by_keyword(git_repo, cli, monkeypatch):
    from ragit.config import load_config
    from ragit.memory.artifacts import capture, transition

    write_placeholder_config(git_repo.root)
    git_repo.commit("initial", {"README.md": "# Demo\n"})  # committed but never indexed
    config = load_config(git_repo.root)
    reviewed = capture(git_repo.root, config, {"scope": "session", "kind": "finding", "title": "Token rotation",
                                               "text": "Refresh tokens rotate on every use."})["artifact"]
    transition(git_repo.root, config, reviewed["artifactId"], "reviewed")
    capture(git_repo.root, config, {"scope": "harness", "kind": "finding", "title": "Captured only",
                                    "text": "Refresh tokens are not reviewed yet."})
    unrelated = capture(git_repo.root, config, {"scope": "harness", "kind": "note", "title": "Build",
                                                "text": "The build uses make."})["artifact"]
    transition(git_repo.root, config, unrelated["artifactId"], "reviewed")
    calls = count_embeddings(monkeypatch)
    data = run(cli, git_repo.root, "recall", "refresh tokens", "--format", "json").json["data"]
    assert [h["artifactId"] for h in data["retrievedHits"]] == [reviewed["artifactId"]]
    hit = data["retrievedHits"][0]
    assert hit["scope"] == "session" and hit["originType"] == "artifact" and hit["trust"] == "artifact"
    assert hit["scoreVector"] == 0 and hit["scoreKeyword"] == 1
    assert data["snapshot"]["resolvedSha"] == git_repo.head() and data["snapshot"]["status"] == "unavailable"
    assert any("SNAPSHOT_NOT_INDEXED" in w for w in data["warnings"])
    assert calls == []
    # an unreadable record is reported once, though two scopes are searched
    broken = git_repo.root / config["memory"]["artifacts_dir"] / "session" / "not-an-id.json"
    broken.write_text("{}", encoding="utf-8")
    data = run(cli, git_repo.root, "recall", "refresh tokens", "--format", "json").json["data"]
    assert sum("not-an-id.json" in w for w in data["warnings"]) == 1


def test_recall_degrades_when_the_embedder_is_unavailable(indexed_repo, cli, monkeypatch):
    from ragit import embed
    from ragit.embed.base import embedder_unavailable

    def broken(config):
        raise embedder_unavailable("placeholder:sha1:64:v1", "simulated")

    monkeypatch.setattr(embed, "load_embedder", broken)
    data = run(cli, indexed_repo.root, "recall", "refresh tokens", "--format", "json").json["data"]
    assert data["snapshot"]["status"] == "unavailable" and data["snapshot"]["resolvedSha"] == indexed_repo.head()
    assert data["warnings"] == [
        "snapshot unavailable (EMBEDDER_UNAVAILABLE); recalled from working memory and artifacts only"]


def test_recall_derives_decisions_from_promoted_documents(indexed_repo, cli):
    r = run(cli, indexed_repo.root, "promote", "--commit", "--format", "json", payload=CANDIDATES[:1])
    assert r.code == 0 and r.json["data"]["ingested"] is True, r
    data = run(cli, indexed_repo.root, "recall", "restore active work instead of replaying raw logs",
               "--format", "json").json["data"]
    derived = [d for d in data["relatedDecisions"]
               if d["title"] == "Restore Active Work Instead Of Replaying Raw Logs"]
    # memory §10: read from the snapshot, so repository provenance and never stale
    assert derived and all(set(d) == {"id", "title", "summary", "provenance", "stale", "staleEvidence"}
                           and d["provenance"] == "repository" and d["stale"] is False for d in derived)
    hit_ids = {h["citation"]["sourceId"] for h in data["retrievedHits"]}
    assert {d["id"] for d in derived} <= hit_ids


# ---------------------------------------------------------------- promote

def test_promote_writes_three_documents_that_index_after_commit(indexed_repo, cli):
    root = indexed_repo.root
    r = run(cli, root, "promote", "--format", "json", payload={"sessionId": SESSION_ID,
                                                               "promotionCandidates": CANDIDATES})
    assert r.code == 0, r
    data = r.json["data"]
    assert list(data) == ["createdFiles", "plannedFiles", "sourceHeadSha", "committed", "commitSha", "ingested",
                          "snapshotSha", "dryRun", "diff", "warnings"]
    assert data["createdFiles"] == data["plannedFiles"] == [
        "docs/memory/decisions/restore-active-work-instead-of-replaying-raw-logs.md",
        "docs/memory/glossary/open-loop.md", "docs/memory/plans/memory-plane.md"]
    assert data["committed"] is False and data["ingested"] is False and data["commitSha"] is None
    assert data["sourceHeadSha"] == indexed_repo.head() and data["diff"] is None
    assert any("commit" in w for w in data["warnings"]) and r.json["warnings"] == data["warnings"]
    text = (root / data["createdFiles"][0]).read_text(encoding="utf-8")
    assert text.startswith(f'---\ntype: adr\nsource_session: "{SESSION_ID}"\npromoted_at: "')
    assert f'source_head: "{indexed_repo.head()}"' in text

    indexed_repo.git("add", "-A")
    indexed_repo.git("commit", "-q", "-m", "promote")
    assert cli("ingest", "--all", "--cwd", str(root), "--format", "json").code == 0
    hits = cli("query", "restore active work instead of replaying raw logs", "--cwd", str(root),
               "--format", "json").json["data"]["hits"]
    assert hits[0]["path"].startswith("docs/memory/decisions/")


def test_promote_dry_run_plans_and_diffs_without_writing(indexed_repo, cli, monkeypatch):
    monkeypatch.setenv("RAGIT_NOW", NOW)
    before = tree_snapshot(indexed_repo.root)
    r = run(cli, indexed_repo.root, "promote", "--dry-run", "--format", "json", payload=CANDIDATES)
    data = r.json["data"]
    assert data["createdFiles"] == [] and data["dryRun"] is True
    assert data["plannedFiles"][0].startswith("docs/memory/decisions/")
    assert not (indexed_repo.root / "docs/memory").exists()
    assert tree_snapshot(indexed_repo.root) == before
    diff = data["diff"]
    assert diff.startswith("--- /dev/null\n+++ b/docs/memory/decisions/")
    assert [line[6:] for line in diff.splitlines() if line.startswith("+++ ")] == data["plannedFiles"]
    text = run(cli, indexed_repo.root, "promote", "--dry-run", "--format", "text", payload=CANDIDATES).out
    head, _, body = text.partition("\n\n")
    assert head.splitlines()[:7] == ["# ragit memory promote", "- dry_run: true", "- planned_files: 3",
                                     "- created_files: 0", "- committed: false", "- ingested: false",
                                     f"- source_head: {indexed_repo.head()}"]
    assert body == diff


def test_promote_in_unborn_repository_writes_but_does_not_index(git_repo, cli):
    r = run(cli, git_repo.root, "promote", "--format", "json", payload=CANDIDATES[:1])
    data = r.json["data"]
    assert r.code == 0 and len(data["createdFiles"]) == 1 and (git_repo.root / data["createdFiles"][0]).is_file()
    assert data["ingested"] is False and data["sourceHeadSha"] is None
    assert any("commit" in w for w in data["warnings"])


def test_wrap_recall_promote_commit_query_end_to_end(indexed_repo, cli, monkeypatch):
    root = indexed_repo.root
    monkeypatch.setenv("RAGIT_NOW", NOW)
    before_head = indexed_repo.head()
    session = dict(SESSION, promotionCandidates=CANDIDATES[:1])
    assert wrap(cli, root, session).json["data"]["sessionId"] == SESSION_ID
    recalled = run(cli, root, "recall", "finish auth migration", "--format", "json").json["data"]
    assert recalled["latestSessionId"] == SESSION_ID and recalled["snapshotSha"] == before_head

    # an unrelated staged change must stay staged and out of the promote commit
    indexed_repo.write("notes.txt", "staged but not promoted\n")
    indexed_repo.git("add", "notes.txt")
    record = read(root, f".ragit/memory/sessions/{SESSION_ID}.json")
    payload = {"sourceSessionId": record["sessionId"], "promotionCandidates": record["promotionCandidates"]}
    r = run(cli, root, "promote", "--commit", "--format", "json", payload=payload)
    assert r.code == 0, r
    data = r.json["data"]
    new_head = indexed_repo.head()
    assert data["committed"] is True and data["commitSha"] == new_head != before_head
    assert data["ingested"] is True and data["snapshotSha"] == new_head and data["warnings"] == []
    assert indexed_repo.git("rev-parse", "HEAD~1") == before_head
    assert committed_paths(indexed_repo, new_head) == data["createdFiles"]
    assert indexed_repo.git("log", "-1", "--format=%s") == "ragit: promote 1 memory document(s)"
    assert "A  notes.txt" in indexed_repo.git("status", "--short")
    assert (root / f".ragit/manifest/{new_head}.json").is_file()

    query = cli("query", "restore active work instead of replaying raw logs", "--cwd", str(root),
                "--format", "json").json["data"]
    assert query["snapshotSha"] == new_head
    assert query["hits"][0]["path"] == data["createdFiles"][0]


def test_promote_commit_in_unborn_repository_makes_a_root_commit(git_repo, cli):
    write_placeholder_config(git_repo.root)
    r = run(cli, git_repo.root, "promote", "--commit", "--format", "json", payload=CANDIDATES[1:2])
    data = r.json["data"]
    assert r.code == 0 and data["committed"] is True and data["ingested"] is True, r
    assert git_repo.git("rev-list", "--count", "HEAD") == "1"
    assert committed_paths(git_repo, data["commitSha"]) == ["docs/memory/glossary/open-loop.md"]


def test_promote_commit_with_failed_ingest_still_succeeds(git_repo, cli):
    write_placeholder_config(git_repo.root)
    git_repo.commit("initial", {"docs/guide.md": "# Guide\n\nHello.\n"})  # never indexed: full ingest follows
    git_repo.write("docs/guide.md", "# Guide\n\nEdited but not committed.\n")
    r = run(cli, git_repo.root, "promote", "--commit", "--format", "json", payload=CANDIDATES[:1])
    assert r.code == 0, r
    data = r.json["data"]
    assert data["committed"] is True and data["ingested"] is False and data["snapshotSha"] is None
    assert any("INGEST_CANDIDATES_DIRTY" in w and "git status --short" in w for w in data["warnings"])


def test_promote_commit_failure_keeps_the_written_files(git_repo, cli):
    git_repo.commit("ignore memory docs", {".gitignore": "docs/memory/\n"})
    r = run(cli, git_repo.root, "promote", "--commit", "--format", "json", payload=CANDIDATES[:1])
    assert r.code == 3, r
    error = r.json["error"]
    assert error["code"] == "GIT_COMMIT_FAILED" and error["recovery"]["command"] == "git status --short"
    assert error["details"]["paths"] == ["docs/memory/decisions/restore-active-work-instead-of-replaying-raw-logs.md"]
    assert (git_repo.root / error["details"]["paths"][0]).is_file()


def test_promote_commit_outside_git_is_refused(cli, tmp_path):
    r = run(cli, tmp_path, "promote", "--commit", "--format", "json", payload=CANDIDATES)
    assert r.code == 3 and r.json["error"]["code"] == "GIT_REPOSITORY_REQUIRED"
    assert not (tmp_path / "docs").exists()


def test_promote_evidence_and_supersedes(indexed_repo, cli, monkeypatch):
    monkeypatch.setenv("RAGIT_NOW", NOW)
    head = indexed_repo.head()
    old = "docs/adr/001-auth.md"
    handle = f"docs/adr/001-auth.md@{head[:12]}:L5-L5"
    hit = cli("query", "rotate refresh tokens", "--cwd", str(indexed_repo.root), "--format", "json").json
    cite = hit["data"]["hits"][0]["citation"]["id"]
    candidate = dict(CANDIDATES[0], id="Keep recall resumable", evidence=[handle, cite], supersedes=old)
    r = run(cli, indexed_repo.root, "promote", "--dry-run", "--format", "json", payload=[candidate])
    data = r.json["data"]
    assert data["plannedFiles"] == ["docs/memory/decisions/keep-recall-resumable.md"]
    added = [line[1:] for line in data["diff"].splitlines() if line.startswith("+") and not line.startswith("+++")]
    assert f'source_head: "{head}"' in added and f'supersedes: "{old}"' in added
    # memory §10: stored bound to the blob, whatever form was given
    blob = indexed_repo.git("rev-parse", f"{head}:{old}")
    cited = cli("verify", cite, "--cwd", str(indexed_repo.root), "--format", "json").json["data"]["cited"]
    bound = f"{cited['path']}@{cited['blobId']}:L{cited['startLine']}-L{cited['endLine']}"
    assert added[-4:] == ["## Evidence", "", f"- docs/adr/001-auth.md@{blob}:L5-L5", f"- {bound}"]
    written = run(cli, indexed_repo.root, "promote", "--format", "json", payload=[candidate]).json["data"]
    text = (indexed_repo.root / written["createdFiles"][0]).read_text(encoding="utf-8")
    assert text.splitlines() == added


@pytest.mark.parametrize("candidate, field, reason", [
    ({"kind": "decision", "title": "t", "summary": "s", "evidence": ["docs/a.md:L1"]},
     "input[0].evidence[0]", "invalid_format"),
    ({"kind": "decision", "title": "t", "summary": "s", "evidence": "cite-891adb60f18f7563478d6062"},
     "input[0].evidence", "invalid_format"),
    ({"kind": "decision", "title": "t", "summary": "s", "evidence": ["docs/missing.md:L1-L2"]},
     "input[0].evidence[0]", "no_commit"),  # unborn HEAD: nothing to bind to
    ({"kind": "decision", "title": "t", "summary": "s", "supersedes": "docs/memory/decisions/missing.md"},
     "input[0].supersedes", "file_not_found"),
    ({"kind": "decision", "title": "t", "summary": "s", "supersedes": "../outside.md"},
     "input[0].supersedes", "path_outside_repo"),
    ({"kind": "note", "title": "t", "summary": "s"}, "input[0].kind", "not_one_of"),
    ({"title": "t", "summary": "s"}, "input[0].kind", "required"),
    ({"kind": "plan", "title": "t"}, "input[0].summary", "required"),
    ({"type": "adr", "kind": "decision", "title": "t", "summary": "s", "rationale": "r",
      "nextReviewAt": "2026-04-01"}, "input[0].type", "unknown_field"),
])
def test_promote_rejects_invalid_candidates(git_repo, cli, candidate, field, reason):
    before = tree_snapshot(git_repo.root)
    r = run(cli, git_repo.root, "promote", "--format", "json", payload=[candidate])
    assert r.code == 2, r
    assert r.json["error"]["details"]["field"] == field and r.json["error"]["details"]["reason"] == reason
    assert tree_snapshot(git_repo.root) == before


def test_promote_reference_docs_example_is_rejected(git_repo, cli):
    payload = {"promotionCandidates": [{"type": "adr", "title": "t", "summary": "s", "rationale": "r",
                                        "nextReviewAt": "2026-04-01"}]}
    r = run(cli, git_repo.root, "promote", "--format", "json", payload=payload)
    assert r.code == 2 and r.json["error"]["details"]["reason"] == "unknown_field"
    bad_key = run(cli, git_repo.root, "promote", "--format", "json", payload={"candidates": []})
    assert bad_key.json["error"]["details"] == {"field": "input.candidates", "reason": "unknown_field",
                                                "allowed": ["promotionCandidates", "sourceSessionId",
                                                            "sourceHeadSha", "sessionId"]}


def test_promote_slug_collisions_and_empty_payload(git_repo, cli):
    twice = [dict(CANDIDATES[1]), dict(CANDIDATES[1], summary="another definition")]
    data = run(cli, git_repo.root, "promote", "--format", "json", payload=twice).json["data"]
    assert data["createdFiles"] == ["docs/memory/glossary/open-loop.md", "docs/memory/glossary/open-loop-2.md"]
    again = run(cli, git_repo.root, "promote", "--format", "json", payload=twice[:1]).json["data"]
    assert again["createdFiles"] == ["docs/memory/glossary/open-loop-3.md"]
    empty = run(cli, git_repo.root, "promote", "--format", "json", payload={"promotionCandidates": []}).json["data"]
    assert empty["createdFiles"] == [] and empty["warnings"] == [
        "promotionCandidates is empty; no documents were created"]


def test_promote_masks_secrets_in_documents(git_repo, cli):
    candidate = dict(CANDIDATES[0], context="the old key AKIAABCDEFGHIJKLMNOP was rotated")
    data = run(cli, git_repo.root, "promote", "--format", "json", payload=[candidate]).json["data"]
    text = (git_repo.root / data["createdFiles"][0]).read_text(encoding="utf-8")
    assert "AKIAABCDEFGHIJKLMNOP" not in text and "AKIAAB***" in text


def test_promote_requires_input(git_repo, cli):
    r = cli("memory", "promote", "--cwd", str(git_repo.root), "--format", "json")
    assert r.code == 2 and r.json["error"]["details"]["field"] == "--input"


def test_describe_memory_commands(cli, tmp_path):
    for path in ("memory wrap", "memory recall", "memory promote"):
        r = cli("describe", *path.split(), "--format", "json")
        assert r.code == 0, r
        spec = r.json["data"]["spec"]
        assert spec["path"] == path and spec["group"] == "memory"
    recall = cli("describe", "memory", "recall", "--format", "json").json["data"]["spec"]
    assert "snapshot" in recall["outputSchemaSummary"] and recall["mutating"] is False
    promote = cli("describe", "memory", "promote", "--format", "json").json["data"]["spec"]
    assert promote["supportsDryRun"] and promote["supportsRawJsonInput"] and promote["defaultFormat"] == "json"


def test_hooks_are_muted_for_the_promote_commit(indexed_repo, cli):
    hook = indexed_repo.root / ".git" / "hooks" / "post-commit"
    hook.write_text('#!/bin/sh\necho "skip=$RAGIT_SKIP_HOOKS" > "$(git rev-parse --show-toplevel)/hook.out"\n')
    hook.chmod(0o755)
    r = run(cli, indexed_repo.root, "promote", "--commit", "--format", "json", payload=CANDIDATES[2:])
    assert r.code == 0, r
    assert (indexed_repo.root / "hook.out").read_text().strip() == "skip=1"


def test_recall_previous_session_is_the_latest_record_and_masked(cli, tmp_path):
    """The hand-off text comes from the newest session record (file names sorted descending), masked."""
    assert wrap(cli, tmp_path).code == 0
    later = dict(SESSION, goal="ship the migration", summary="migrated; token=abcdef123456 still in a fixture",
                 createdAt="2026-03-09T10:00:00.000Z")
    assert wrap(cli, tmp_path, later).code == 0
    r = run(cli, tmp_path, "recall", "auth", "--view", "minimal", "--format", "json")
    data = r.json["data"]
    assert data["previousSession"]["goal"] == "ship the migration"
    assert data["previousSession"]["summary"] == "migrated; token: abcd*** still in a fixture"
    assert data["previousSession"]["sessionId"] == data["latestSessionId"] != SESSION_ID
    # a hand-edited record is masked on the way out too, and the redaction is reported
    record = tmp_path / ".ragit/memory/sessions" / f"{data['latestSessionId']}.json"
    edited = json.loads(record.read_text())
    edited["summary"] = "key AKIAABCDEFGHIJKLMNOP leaked"
    record.write_text(json.dumps(edited))
    data = run(cli, tmp_path, "recall", "auth", "--format", "json").json["data"]
    assert data["previousSession"]["summary"] == "key AKIAAB*** leaked"
    assert data["redactionSummary"]["sources"] == ["previousSession.summary"]
