"""`ragit session mirror | search | dream` through the CLI (memory §7–9; cli-contract §1.1, §2)."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

import pytest
from conftest import tree_snapshot

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "transcripts"
CLAUDE = FIXTURES / "claude_code_session.jsonl"
CODEX = FIXTURES / "codex_rollout.jsonl"
CLAUDE_SESSION = "7f3c2a9e-4b1d-4c8e-9f2a-1d6e5b8c0a47"
CODEX_SESSION = "0199102c-5d3e-7a21-b5f4-2c9e8a7d6f10"


def run(cli, repo, *args, **kw):
    return cli(*args, "--cwd", str(repo.root), **kw)


def mirror(cli, repo, *args, **kw):
    r = run(cli, repo, "session", "mirror", *args, **kw)
    assert r.code == 0, r
    return r.json["data"]


def messages(n: int) -> str:
    return json.dumps([{"role": "user" if i % 2 == 0 else "assistant", "content": f"note {i} about cursor paging"}
                       for i in range(n)])


def db_path(repo) -> Path:
    return repo.root / ".ragit" / "sessions" / "sessions.db"


# ------------------------------------------------------------------ mirror

def test_mirror_claude_code_transcript_from_outside_the_repo(git_repo, cli):
    data = mirror(cli, git_repo, "--input", str(CLAUDE))
    assert data == {"sessionId": CLAUDE_SESSION, "format": "claude-code", "messages": 8, "deleted": 0}
    assert db_path(git_repo).is_file()
    again = mirror(cli, git_repo, "--input", str(CLAUDE))
    assert again["deleted"] == 0 and again["messages"] == 8


def test_mirror_codex_from_stdin(git_repo, cli):
    data = mirror(cli, git_repo, "--input", "-", stdin=CODEX.read_text(encoding="utf-8"))
    assert data == {"sessionId": CODEX_SESSION, "format": "codex", "messages": 9, "deleted": 0}


def test_mirror_deletes_rows_no_longer_present(git_repo, cli):
    assert mirror(cli, git_repo, "--input", "-", "--session", "s1", stdin=messages(5))["deleted"] == 0
    data = mirror(cli, git_repo, "--input", "-", "--session", "s1", "--from", "messages", stdin=messages(3))
    assert data == {"sessionId": "s1", "format": "messages", "messages": 3, "deleted": 2}


@pytest.mark.parametrize(("args", "stdin", "field", "reason"), [
    ([], messages(2), "--session", "required"),
    (["--session", "s1"], "{\"role\": \"user\"}\n{oops\n", "--input", "invalid_json"),
    (["--session", "s1", "--from", "slack"], messages(2), "--from", "not_one_of"),
    (["--session", " "], messages(2), "--session", "empty"),
])
def test_mirror_bad_input_writes_nothing(git_repo, cli, args, stdin, field, reason):
    r = run(cli, git_repo, "session", "mirror", "--input", "-", *args, stdin=stdin)
    assert r.code == 2, r
    err = r.json["error"]
    assert (err["code"], err["details"]["field"], err["details"]["reason"]) == ("INPUT_INVALID", field, reason)
    assert err["recovery"]["command"] == "ragit describe session mirror"
    assert not (git_repo.root / ".ragit").exists()


# ------------------------------------------------------------------ search

def test_search_both_format_layout(git_repo, cli):
    mirror(cli, git_repo, "--input", str(CLAUDE))
    r = run(cli, git_repo, "session", "search", "revoke")
    assert r.code == 0, r
    text, envelope = r.out.split("\n\n{", 1)
    data = json.loads("{" + envelope)["data"]
    assert data["matched"] is True and data["count"] == len(data["hits"]) > 0
    assert text.splitlines()[:5] == [
        "# ragit session search", "- query: revoke", "- matched: true", f"- count: {data['count']}",
        "- artifact_count: 0",
    ]
    hit = data["hits"][0]
    assert list(hit) == ["session_id", "message_id", "seq", "role", "timestamp", "snippet", "score", "trust", "flags"]
    assert f"1. [{CLAUDE_SESSION} #{hit['seq']} {hit['role']}] " in text


def test_search_filters_and_limits(git_repo, cli):
    mirror(cli, git_repo, "--input", str(CLAUDE))
    mirror(cli, git_repo, "--input", str(CODEX))
    both = run(cli, git_repo, "session", "search", "src", "--format", "json").json["data"]
    assert {h["session_id"] for h in both["hits"]} == {CLAUDE_SESSION, CODEX_SESSION}
    one = run(cli, git_repo, "session", "search", "src", "--session", CODEX_SESSION, "--format", "json").json["data"]
    assert one["hits"] and {h["session_id"] for h in one["hits"]} == {CODEX_SESSION}
    limited = run(cli, git_repo, "session", "search", "src", "--limit", "1", "--format", "json").json["data"]
    assert limited["count"] == 1
    if sqlite3.sqlite_version_info >= (3, 34, 0):  # trigram tokenizer available
        substring = run(cli, git_repo, "session", "search", "aginat", "--trigram", "--format", "json").json["data"]
        assert substring["matched"] is True  # "pagination" found by a substring


def test_search_without_database_is_no_match_and_creates_nothing(git_repo, cli):
    before = tree_snapshot(git_repo.root)
    r = run(cli, git_repo, "session", "search", "anything", "--include-artifacts", "--format", "json")
    assert r.code == 0, r
    assert r.json["data"] == {"matched": False, "count": 0, "artifact_count": 0, "scope": "project", "hits": [],
                              "artifacts": []}
    assert tree_snapshot(git_repo.root) == before
    text = run(cli, git_repo, "session", "search", "anything", "--format", "text").out
    assert text.endswith("- artifact_count: 0\n\n- none\n")


@pytest.mark.parametrize(("args", "field", "reason"), [
    (["   "], "query", "empty"),
    ([], "query", "required"),
    (["x", "--limit", "0"], "--limit", "out_of_range"),
    (["x", "--limit", "ten"], "--limit", "not_integer"),
])
def test_search_bad_input(git_repo, cli, args, field, reason):
    r = run(cli, git_repo, "session", "search", *args)
    assert r.code == 2, r
    details = r.json["error"]["details"]  # failure default format is both: envelope on stdout ...
    assert (details["field"], details["reason"]) == (field, reason)
    assert "- code: INPUT_INVALID" in r.err  # ... and the text block on stderr


# ------------------------------------------------------------------ dream

def test_dream_is_a_result_whether_or_not_it_dreams(git_repo, cli):
    before = tree_snapshot(git_repo.root)
    r = run(cli, git_repo, "session", "dream", "nobody")
    assert r.code == 0, r
    assert r.json["data"] == {"did_dream": False, "artifact_id": None, "error": "no_messages", "content": None,
                              "llm_used": False}
    assert tree_snapshot(git_repo.root) == before  # no database was created

    mirror(cli, git_repo, "--input", str(CODEX))
    first = run(cli, git_repo, "session", "dream", CODEX_SESSION, "--no-llm").json["data"]
    assert first["did_dream"] is True and first["llm_used"] is False and first["artifact_id"]
    assert "## Durable Facts" in first["content"] and f"session={CODEX_SESSION}, seq=0-8" in first["content"]
    again = run(cli, git_repo, "session", "dream", CODEX_SESSION).json["data"]
    assert (again["did_dream"], again["error"], again["content"]) == (False, "up_to_date", first["content"])


def test_dream_limit_messages_and_text(git_repo, cli):
    mirror(cli, git_repo, "--input", "-", "--session", "s1", stdin=messages(6))
    r = run(cli, git_repo, "session", "dream", "s1", "--limit-messages", "2", "--format", "text")
    assert r.code == 0, r
    assert r.out.startswith("# ragit session dream\n- session_id: s1\n- did_dream: true\n")
    assert "- session=s1, seq=4-5" in r.out


@pytest.mark.parametrize(("args", "field", "reason"), [
    (["s1", "--limit-messages", "0"], "--limit-messages", "out_of_range"),
    ([], "session-id", "required"),
])
def test_dream_bad_input(git_repo, cli, args, field, reason):
    r = run(cli, git_repo, "session", "dream", *args)
    assert r.code == 2, r
    assert (r.json["error"]["details"]["field"], r.json["error"]["details"]["reason"]) == (field, reason)


# ------------------------------------------------------------------ end to end

def test_claude_code_session_end_to_end(git_repo, cli):
    """Mirror → search → compact --session → dream → both artifacts found by search; masked result recalled."""
    assert mirror(cli, git_repo, "--input", str(CLAUDE))["sessionId"] == CLAUDE_SESSION

    found = run(cli, git_repo, "session", "search", "rotation", "--format", "json").json["data"]
    assert found["matched"] is True and all(h["session_id"] == CLAUDE_SESSION for h in found["hits"])

    # keep 1: with the tier's 5 the head is too light for a summary to pay off (no_reduction)
    compacted = run(cli, git_repo, "window", "compact", "--input", str(CLAUDE), "--session", CLAUDE_SESSION,
                    "--window", "30000", "--keep-recent", "1")
    assert compacted.code == 0, compacted
    steps = compacted.json["data"]["report"]["steps"]
    compact = next(s for s in steps if s["step"] == "compact")
    assert compact["did_compact"] is True and compact["artifact_id"]
    masked = next(s for s in steps if s["step"] == "mask")["masked"]
    assert masked == 1

    dreamt = run(cli, git_repo, "session", "dream", CLAUDE_SESSION).json["data"]
    assert dreamt["did_dream"] is True

    both = run(cli, git_repo, "session", "search", "token", "--include-artifacts", "--format", "json").json["data"]
    kinds = {a["kind"]: a for a in both["artifacts"]}
    assert set(kinds) == {"compaction_summary", "dream"}
    assert kinds["compaction_summary"]["artifact_id"] == compact["artifact_id"]
    assert kinds["dream"]["artifact_id"] == dreamt["artifact_id"]
    assert kinds["dream"]["source_start_seq"] == 0 and kinds["dream"]["source_end_seq"] == 7
    dreams = run(cli, git_repo, "session", "search", "token", "--artifact-kind", "dream", "--format", "json")
    assert [a["kind"] for a in dreams.json["data"]["artifacts"]] == ["dream"]

    # the masked observation (summarised with the head at keep 1) is still recallable from the store;
    # placeholders themselves are checked on the long transcripts in test_window_cli_thinking.py
    recalled = run(cli, git_repo, "window", "recall", "toolu_01HkT5rWq8ZpB3nVx2Yc7LmA", "--session", CLAUDE_SESSION)
    assert recalled.code == 0 and "def rotate_refresh_token" in recalled.json["data"]


def test_describe_session_commands(cli):
    search = cli("describe", "session", "search").json["data"]["spec"]
    assert (search["defaultFormat"], search["failureFormat"], search["mutating"]) == ("both", "both", False)
    assert cli("describe", "session", "mirror").json["data"]["spec"]["mutating"] is True
    assert cli("describe", "session", "dream").json["data"]["spec"]["arguments"][0]["name"] == "session-id"
