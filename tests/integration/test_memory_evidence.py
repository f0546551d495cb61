"""Memory bound to code (memory §10, issue 17 item 1): evidence handles, stale marking and
demotion, ``memory verify``, and poisoning attempts.

Real repositories; the fixture history has 40 decisions, each resting on one function: a later
commit rewrites 20 of those functions and only shifts the other 20 (three lines inserted above
them, the cited text unchanged), so exactly the 20 rewritten ones must come back stale.
"""

from __future__ import annotations

import json

import pytest
from conftest import check_golden, tree_snapshot, write_placeholder_config

FILES = 20
NOW = "2026-03-08T12:00:00.000Z"


def module(i: int, *, changed: bool = False) -> str:
    """Two functions: ``keep_i`` (lines 1-2, or 4-5 after the change) and ``rule_i`` (lines 5-6)."""
    head = "# moved down by three lines\n#\n#\n" if changed else ""
    rule = f"    return {i} * 3  # rewritten\n" if changed else f"    return {i} * 2\n"
    return f"{head}def keep_{i}():\n    return {i}\n\n\ndef rule_{i}():\n{rule}"


def decisions() -> list[dict]:
    out = []
    for i in range(FILES):
        out.append({"id": f"keep-{i}", "title": f"keep {i} returns its number", "summary": "untouched",
                    "evidence": [f"pkg/m{i}.py:L1-L2"]})
        out.append({"id": f"rule-{i}", "title": f"rule {i} doubles", "summary": "rests on code that changes",
                    "evidence": [f"pkg/m{i}.py:L5-L6"]})
    return out


def wrap(cli, root, payload: dict) -> None:
    path = root / ".ragit" / "wrap.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(payload), encoding="utf-8")
    r = cli("memory", "wrap", "--input", str(path), "--format", "json", "--cwd", str(root))
    assert r.code == 0, r
    path.unlink()


@pytest.fixture
def history(git_repo, cli):
    git_repo.commit("modules", {f"pkg/m{i}.py": module(i) for i in range(FILES)})
    wrap(cli, git_repo.root, {"goal": "keep the rules", "summary": "s", "decisions": decisions(),
                              "createdAt": NOW})
    git_repo.commit("rewrite the rules", {f"pkg/m{i}.py": module(i, changed=True) for i in range(FILES)})
    return git_repo


def test_stored_evidence_is_blob_bound(history):
    current = json.loads((history.root / ".ragit/memory/working/current.json").read_text())
    first = current["decisions"][0]["evidence"]
    blob = history.git("rev-parse", "HEAD~1:pkg/m0.py")
    import hashlib

    def digest(text: str) -> str:
        return hashlib.sha1(text.encode()).hexdigest()

    assert first == [{"handle": f"pkg/m0.py@{blob}:L1-L2", "commitSha": history.git("rev-parse", "HEAD~1"),
                      "source": "repository", "textDigest": digest("def keep_0():\n    return 0"),
                      "firstLineDigest": digest("def keep_0():")}]


def test_recall_flags_exactly_the_20_decisions_whose_code_changed(history, cli):
    r = cli("memory", "recall", "keep the rules", "--view", "full", "--format", "json", "--cwd", str(history.root))
    assert r.code == 0, r
    got = r.json["data"]["relatedDecisions"]
    stale = {d["id"] for d in got if d["stale"]}
    assert stale == {f"rule-{i}" for i in range(FILES)}
    assert {d["id"] for d in got if not d["stale"]} == {f"keep-{i}" for i in range(FILES)}
    # demoted: every stale item sorts after every current one; the flags name the evidence that moved
    flags = [d["stale"] for d in got]
    assert flags == sorted(flags)
    rule0 = next(d for d in got if d["id"] == "rule-0")
    blob = history.git("rev-parse", "HEAD~1:pkg/m0.py")
    assert rule0["staleEvidence"] == [{"handle": f"pkg/m0.py@{blob}:L5-L6", "status": "changed"}]
    assert all(d["provenance"] == "repository" for d in got)
    text = cli("memory", "recall", "keep the rules", "--format", "text", "--cwd", str(history.root)).out
    assert f"rule 0 doubles [stale: pkg/m0.py@{blob}:L5-L6 changed]" in text


def test_recall_reads_the_indexed_snapshot(history, cli):
    write_placeholder_config(history.root)
    assert cli("ingest", "--all", "--cwd", str(history.root), "--format", "json").code == 0
    r = cli("memory", "recall", "keep the rules", "--format", "json", "--cwd", str(history.root))
    assert r.json["data"]["snapshot"]["status"] == "indexed"
    assert sum(d["stale"] for d in r.json["data"]["relatedDecisions"]) == FILES


def test_memory_verify_lists_the_stale_items_and_exits_3(history, cli):
    before = tree_snapshot(history.root)
    r = cli("memory", "verify", "--format", "json", "--cwd", str(history.root))
    assert r.code == 3, r
    data = r.json["data"]
    assert r.json["ok"] is False and data["stale"] == FILES
    assert {i["id"] for i in data["items"] if i["status"] == "stale"} == {f"rule-{i}" for i in range(FILES)}
    keep = next(i for i in data["items"] if i["id"] == "keep-3")
    assert keep["status"] == "current" and keep["evidence"][0]["status"] == "shifted"
    assert keep["evidence"][0]["current"]["startLine"] == 4
    assert tree_snapshot(history.root) == before  # read-only
    # against the commit the evidence was bound at, nothing is stale
    ok = cli("memory", "verify", "--at", history.git("rev-parse", "HEAD~1"), "--format", "json", "--cwd", str(history.root))
    assert ok.code == 0 and ok.json["data"]["stale"] == 0


def test_memory_verify_golden(git_repo, cli):
    git_repo.commit("one", {"src/a.py": "def a():\n    return 1\n\n\ndef b():\n    return 2\n"})
    wrap(cli, git_repo.root, {
        "goal": "g", "summary": "s", "createdAt": NOW,
        "decisions": [{"id": "a-one", "title": "a returns one", "summary": "s", "evidence": ["src/a.py:L1-L2"]},
                      {"id": "b-two", "title": "b returns two", "summary": "s", "evidence": ["src/a.py:L5-L6"]},
                      {"id": "web", "title": "blog says b returns three", "summary": "s",
                       "evidence": [{"source": "web_page", "ref": "https://example.com/post"}]},
                      {"id": "bare", "title": "no evidence", "summary": "s"}],
        "openLoops": [{"id": "loop", "title": "check a", "nextAction": "read a", "evidence": ["src/a.py:L1-L1"]}],
    })
    git_repo.commit("two", {"src/a.py": "def a():\n    return 10\n\n\ndef b():\n    return 2\n"})
    r = cli("memory", "verify", "--format", "json", "--cwd", str(git_repo.root))
    assert r.code == 3
    check_golden("memory_verify.json", r.out.replace(str(git_repo.root), "<ROOT>"))
    text = cli("memory", "verify", "--format", "text", "--cwd", str(git_repo.root))
    check_golden("memory_verify.txt", text.out.replace(str(git_repo.root), "<ROOT>"))


@pytest.mark.parametrize("evidence,code,reason", [
    ("src/a.py", "INPUT_INVALID", "invalid_format"),
    ("src/a.py@HEAD:L1", "INPUT_INVALID", "invalid_format"),
    ("src/missing.py:L1-L2", "CITATION_NOT_FOUND", "path_not_in_commit"),
    ("src/a.py:L1-L99", "CITATION_NOT_FOUND", "lines_out_of_range"),
    ("../outside.py:L1-L2", "CITATION_NOT_FOUND", "path_outside_repo"),
    ("cite-000000000000000000000000", "CITATION_NOT_FOUND", "unknown_id"),
    ({"source": "rumour", "ref": "x"}, "INPUT_INVALID", "not_one_of"),
])
def test_bad_evidence_is_a_typed_error_and_writes_nothing(git_repo, cli, evidence, code, reason):
    git_repo.commit("one", {"src/a.py": "def a():\n    return 1\n"})
    payload = git_repo.root / ".ragit" / "wrap.json"
    payload.parent.mkdir(parents=True, exist_ok=True)
    payload.write_text(json.dumps({"goal": "g", "summary": "s",
                                   "decisions": [{"title": "t", "summary": "s", "evidence": [evidence]}]}))
    before = tree_snapshot(git_repo.root)
    r = cli("memory", "wrap", "--input", str(payload), "--format", "json", "--cwd", str(git_repo.root))
    assert r.code == 2, r
    error = r.json["error"]
    assert error["code"] == code and error["details"]["reason"] == reason
    assert error["details"]["field"].startswith("input.decisions[0].evidence[0]")
    assert tree_snapshot(git_repo.root) == before


def test_artifact_capture_binds_a_handle(git_repo, cli):
    git_repo.commit("one", {"src/a.py": "def a():\n    return 1\n"})
    payload = git_repo.root / ".ragit" / "cap.json"
    payload.parent.mkdir(parents=True, exist_ok=True)
    payload.write_text(json.dumps({"scope": "session", "kind": "finding", "title": "a is one", "text": "t",
                                   "evidence": [{"handle": "src/a.py:L1-L2"}]}))
    r = cli("artifact", "capture", "--input", str(payload), "--format", "json", "--cwd", str(git_repo.root))
    assert r.code == 0, r
    (ev,) = r.json["data"]["evidence"]
    assert ev["blobId"] == git_repo.git("rev-parse", "HEAD:src/a.py") and ev["sourceSha"] == git_repo.head()
    assert (ev["path"], ev["startLine"], ev["endLine"]) == ("src/a.py", 1, 2)
    assert ev["excerpt"] == "def a():\n    return 1"
    payload.write_text(json.dumps({"scope": "session", "kind": "finding", "title": "x", "text": "t",
                                   "evidence": [{"handle": "src/nope.py:L1-L2"}]}))
    before = tree_snapshot(git_repo.root)
    bad = cli("artifact", "capture", "--input", str(payload), "--format", "json", "--cwd", str(git_repo.root))
    assert bad.code == 2 and bad.json["error"]["code"] == "CITATION_NOT_FOUND"
    assert tree_snapshot(git_repo.root) == before


# ------------------------------------------------------------------ poisoning

POISON = "TokenStore rotate keeps the same token forever and never rotates refresh tokens"


def capture_reviewed(cli, root, title: str, text: str, evidence: list) -> str:
    payload = root / ".ragit" / "cap.json"
    payload.write_text(json.dumps({"scope": "session", "kind": "finding", "title": title, "text": text,
                                   "evidence": evidence}))
    r = cli("artifact", "capture", "--input", str(payload), "--format", "json", "--cwd", str(root))
    assert r.code == 0, r
    art = r.json["data"]["artifactId"]
    assert cli("artifact", "review", art, "--format", "json", "--cwd", str(root)).code == 0
    return art


@pytest.mark.parametrize("evidence", [
    [],  # no evidence at all
    [{"path": "logs/tool-output.txt", "excerpt": "rotate: token unchanged"}],  # tool output only
])
def test_injected_artifact_never_outranks_repository_evidence(indexed_repo, cli, evidence):
    root = indexed_repo.root
    art = capture_reviewed(cli, root, "TokenStore rotate refresh token", POISON, evidence)
    r = cli("query", "TokenStore rotate refresh tokens token", "--scope", "all", "--top-k", "20", "--format", "json",
            "--cwd", str(root))
    assert r.code == 0, r
    hits = r.json["data"]["hits"]
    injected = [i for i, h in enumerate(hits) if h["artifactId"] == art]
    repository = [i for i, h in enumerate(hits) if h["originType"] == "document"]
    assert injected and repository
    assert min(injected) > max(repository)
    assert hits[injected[0]]["provenance"] in ("none", "untrusted")
    # by score alone the poison would have outranked repository hits: the demotion group moved it
    poison_score = hits[injected[0]]["scoreFinal"]
    assert any(h["scoreFinal"] < poison_score for h in hits if h["originType"] == "document")


def test_stale_artifact_ranks_last_and_current_one_competes(indexed_repo, cli):
    root = indexed_repo.root
    good = capture_reviewed(cli, root, "TokenStore rotate refresh token reversed", "rotate reverses the token",
                            [{"handle": "src/auth.py:L9-L11"}])
    r = cli("query", "TokenStore rotate refresh token reversed", "--scope", "all", "--top-k", "20", "--format",
            "json", "--cwd", str(root))
    hits = r.json["data"]["hits"]
    mine = next(h for h in hits if h["artifactId"] == good)
    assert mine["provenance"] == "repository" and mine["stale"] is False
    # current repository evidence competes on score alone: no demotion group
    scores = [h["scoreFinal"] for h in hits]
    assert scores == sorted(scores, reverse=True) and hits[-1]["artifactId"] != good
    from conftest import SAMPLE_FILES

    indexed_repo.commit("rotate differently", {
        "src/auth.py": SAMPLE_FILES["src/auth.py"].replace("return token[::-1]", "return token + '1'")})
    assert cli("ingest", "--cwd", str(root), "--format", "json").code == 0
    r = cli("query", "TokenStore rotate refresh token reversed", "--scope", "all", "--top-k", "20", "--format",
            "json", "--cwd", str(root))
    hits = r.json["data"]["hits"]
    assert hits[-1]["artifactId"] == good and hits[-1]["stale"] is True
    assert hits[-1]["staleEvidence"][0].endswith(":L9-L11 changed")


def test_untrusted_decision_sorts_after_repository_one_in_recall(git_repo, cli):
    git_repo.commit("one", {"src/a.py": "def a():\n    return 1\n"})
    wrap(cli, git_repo.root, {"goal": "g", "summary": "s", "decisions": [
        {"id": "poison", "title": "a returns 2", "summary": "from a web page",
         "evidence": [{"source": "web_page", "ref": "https://example.com"}]},
        {"id": "truth", "title": "a returns 1", "summary": "from the code", "evidence": ["src/a.py:L1-L2"]},
    ]})
    r = cli("memory", "recall", "what does a return", "--format", "json", "--cwd", str(git_repo.root))
    got = r.json["data"]["relatedDecisions"]
    assert [d["id"] for d in got] == ["truth", "poison"]
    assert [d["provenance"] for d in got] == ["repository", "untrusted"]


def test_why_lists_the_memory_items_citing_the_lines_with_their_stale_state(history, cli):
    def why(target):
        r = cli("why", target, "--format", "json", "--cwd", str(history.root))
        assert r.code == 0, r
        return {item["id"]: item for item in r.json["data"]["memoryItems"]}

    rules = why("pkg/m3.py:L6-L7")  # rewritten: the stale decision stays at the lines it was bound to
    assert set(rules) == {"rule-3"} and rules["rule-3"]["stale"] is True
    assert rules["rule-3"]["kind"] == "decision"
    keep = why("pkg/m3.py:L4-L4")  # keep_3 moved down three lines: found where its text is now
    assert set(keep) == {"keep-3"} and keep["keep-3"]["stale"] is False
    assert why("pkg/m3.py:L1-L2") == {}  # the inserted comment lines: nothing cites them
    whole = why("pkg/m3.py")
    assert set(whole) == {"keep-3", "rule-3"}
