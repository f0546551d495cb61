"""`ragit window check | compact | recall` through the CLI (context §3.3, D.5; cli-contract §2, §6)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from conftest import check_golden, tree_snapshot

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "transcripts"
CLAUDE = FIXTURES / "claude_code_session.jsonl"
CODEX = FIXTURES / "codex_rollout.jsonl"
CODEX_LONG = FIXTURES / "codex_reasoning_rollout.jsonl"
CLAUDE_SESSION = "7f3c2a9e-4b1d-4c8e-9f2a-1d6e5b8c0a47"


def golden(name: str, text: str, root: Path) -> None:
    """The golden check with the temporary repository path replaced by ``<repo>``."""
    check_golden(name, text.replace(str(root), "<repo>"))


def window(cli, repo, *args, **kw):
    return cli("window", *args, "--cwd", str(repo.root), **kw)


def big_rounds(n: int, chars: int = 4000) -> list[dict]:
    """A plain (no tools, no opaque blocks) conversation of ``n`` large rounds."""
    messages = [{"role": "user", "content": "Refactor the pagination module. " + "u" * chars}]
    for i in range(n):
        messages.append({"role": "assistant", "content": f"step {i} " + "a" * chars})
        messages.append({"role": "user", "content": f"continue {i} " + "c" * chars})
    return messages


def write_json(repo, name: str, value) -> Path:
    return repo.write(name, json.dumps(value))


# ------------------------------------------------------------------ check

def test_check_golden_and_byte_identical(git_repo, cli):
    first = window(cli, git_repo, "check", "--input", str(CLAUDE), "--window", "30000")
    assert first.code == 0, first
    golden("window_check.json", first.out, git_repo.root)
    again = window(cli, git_repo, "check", "--input", str(CLAUDE), "--window", "30000")
    assert again.out == first.out
    data = first.json["data"]
    assert list(data) == ["metrics", "breakdown", "counter", "warnings"]
    m = data["metrics"]
    assert m["is_warning"] and m["is_critical"] and m["policy"]["window"] == 30000
    b = data["breakdown"]
    parts = b["system_static"] + b["system_dynamic"] + b["tools"] + sum(b["messages"].values())
    assert parts == m["raw"]  # D.18.a
    assert b["tools"] == 10_000  # no tool schemas in a transcript: the D.4 default overhead


def test_check_reads_codex_from_stdin_and_any_format(git_repo, cli):
    text = CODEX.read_text(encoding="utf-8")
    piped = window(cli, git_repo, "check", "--input", "-", "--from", "codex", stdin=text)
    from_file = window(cli, git_repo, "check", "--input", str(CODEX))
    assert piped.code == 0 and from_file.code == 0, (piped, from_file)
    assert piped.json["data"] == from_file.json["data"]
    assert piped.json["data"]["metrics"]["policy"]["window"] == 200_000
    assert piped.json["data"]["metrics"]["policy"]["estimated"] is True  # unknown model, no window


def test_check_text_format(git_repo, cli):
    r = window(cli, git_repo, "check", "--input", str(CLAUDE), "--format", "text")
    assert r.code == 0 and r.err == ""
    lines = r.out.splitlines()
    assert lines[:3] == ["# ragit window check", "- estimate: 12562", "- raw: 10468"]
    assert "## Breakdown" in lines and "- tools: 10000 (5.56%)" in lines


def test_check_is_read_only(git_repo, cli):
    before = tree_snapshot(git_repo.root)
    assert window(cli, git_repo, "check", "--input", str(CLAUDE)).code == 0
    assert tree_snapshot(git_repo.root) == before
    assert not (git_repo.root / ".ragit").exists()


@pytest.mark.parametrize(("args", "stdin", "field", "reason"), [
    (["--window", "0"], None, "--window", "out_of_range"),
    (["--window", "big"], None, "--window", "not_integer"),
    (["--from", "yaml"], None, "--from", "not_one_of"),
    (["--model", "  "], None, "--model", "empty"),
    ([], "{\"role\": \"user\"\nnot json\n", "--input", "invalid_json"),
    ([], "[\"just a string\"]", "--input", "invalid_format"),
    ([], "", "--input", "invalid_json"),
])
def test_check_bad_input(git_repo, cli, args, stdin, field, reason):
    source = ["--input", "-"] if stdin is not None else ["--input", str(CLAUDE)]
    r = window(cli, git_repo, "check", *source, *args, "--format", "json", stdin=stdin)
    assert r.code == 2, r
    err = r.json["error"]
    assert err["code"] == "INPUT_INVALID"
    assert (err["details"]["field"], err["details"]["reason"]) == (field, reason)
    assert err["recovery"]["command"] == "ragit describe window check"


def test_check_requires_input_and_reports_missing_file(git_repo, cli):
    r = window(cli, git_repo, "check")
    assert r.code == 2 and r.json["error"]["details"] == {"field": "--input", "reason": "required"}
    r = window(cli, git_repo, "check", "--input", str(git_repo.root / "nope.jsonl"))
    assert r.code == 2 and r.json["error"]["details"]["reason"] == "file_not_found"


# ------------------------------------------------------------------ compact

def test_compact_below_warning_changes_nothing(git_repo, cli):
    r = window(cli, git_repo, "compact", "--input", str(CODEX))
    assert r.code == 0, r
    data = r.json["data"]
    assert data["report"]["action"] == "none" and data["report"]["status"] == "ok"
    assert len(data["messages"]) == 9
    assert [m["seq"] for m in data["messages"]] == list(range(9))
    assert not (git_repo.root / ".ragit").exists()


def test_compact_soft_at_warning_with_default_summary(git_repo, cli):
    r = window(cli, git_repo, "compact", "--input", str(CODEX_LONG), "--window", "50000")
    assert r.code == 0, r
    report = r.json["data"]["report"]
    assert (report["trigger"], report["hard"], report["action"]) == ("warning", False, "compact")
    compact = next(s for s in report["steps"] if s["step"] == "compact")
    assert compact["did_compact"] and compact["artifact_id"] is None and compact["keep_recent"] == 5
    messages = r.json["data"]["messages"]
    assert messages[0]["content"].startswith("[Conversation Summary]\n## Active Task")
    assert "[Compaction marker]" in messages[2]["content"]
    # no --session: nothing is written
    assert not (git_repo.root / ".ragit").exists()
    assert window(cli, git_repo, "compact", "--input", str(CODEX_LONG), "--window", "50000").out == r.out


def test_compact_refuses_a_summary_heavier_than_the_head(git_repo, cli):
    """The short Codex rollout's head weighs less than the summary preamble: no_reduction, explained."""
    r = window(cli, git_repo, "compact", "--input", str(CODEX), "--window", "40000")
    report = r.json["data"]["report"]
    compact = next(s for s in report["steps"] if s["step"] == "compact")
    assert (compact["did_compact"], compact["reason"]) == (False, "no_reduction")
    assert f"not fewer than {compact['before_tokens']}" in compact["detail"]
    assert report["after_tokens"] <= report["before_tokens"] and len(r.json["data"]["messages"]) == 9


def test_compact_signed_thinking_is_not_opaque_history(git_repo, cli):
    """Issue 13: signed thinking blocks no longer block compaction; what does block it is explained,
    and --prune never makes the history heavier (it went 12,533 → 12,720 before)."""
    kept = window(cli, git_repo, "compact", "--input", str(CLAUDE), "--window", "30000", "--keep-recent", "1")
    report = kept.json["data"]["report"]
    compact = next(s for s in report["steps"] if s["step"] == "compact")
    assert compact["did_compact"] is True and compact["thinking_kept"] == 1
    assert report["status"] == "context_exhausted" and report["notice"]  # 10,000 tokens of tool overhead alone
    for args in ((), ("--prune",)):
        r = window(cli, git_repo, "compact", "--input", str(CLAUDE), "--window", "30000", *args)
        report = r.json["data"]["report"]
        compact = next(s for s in report["steps"] if s["step"] == "compact")
        assert compact["reason"] == "no_reduction" and compact["detail"]
        assert report["after_tokens"] <= report["before_tokens"]


def test_compact_never_prunes_without_the_flag(git_repo, cli):
    transcript = write_json(git_repo, "long.json", big_rounds(8))
    plain = window(cli, git_repo, "compact", "--input", str(transcript), "--window", "30000")
    assert plain.code == 0, plain
    report = plain.json["data"]["report"]
    assert report["status"] == "context_exhausted" and report["action"] == "compact"
    prune = next(s for s in report["steps"] if s["step"] == "prune")
    assert prune == {"step": "prune", "kind": "adaptive", "removed": 0, "blocked": "not_requested",
                     "detail": "lossy pruning runs only when explicitly requested (window compact --prune)"}
    # the history is the compacted one: 4 preamble messages + the tier-capped tail of 5
    assert len(plain.json["data"]["messages"]) == 9
    assert report["after_tokens"] == report["steps"][-2]["after_tokens"]

    pruned = window(cli, git_repo, "compact", "--input", str(transcript), "--window", "30000", "--prune")
    report = pruned.json["data"]["report"]
    assert report["action"] == "prune"
    assert next(s for s in report["steps"] if s["step"] == "prune")["removed"] > 0
    assert len(pruned.json["data"]["messages"]) < 9


def test_compact_masks_secrets_in_output(git_repo, cli):
    secret = "AKIA" + "ABCDEFGHIJKLMNOP"
    transcript = write_json(git_repo, "t.json", [{"role": "user", "content": f"aws key {secret}"}])
    r = window(cli, git_repo, "compact", "--input", str(transcript))
    assert r.code == 0 and secret not in r.out


def test_compact_rejects_unsafe_session_and_bad_keep(git_repo, cli):
    r = window(cli, git_repo, "compact", "--input", str(CODEX), "--session", "../escape")
    assert r.code == 2 and r.json["error"]["details"]["reason"] == "invalid_format"
    r = window(cli, git_repo, "compact", "--input", str(CODEX), "--keep-recent", "0")
    assert r.code == 2 and r.json["error"]["details"]["field"] == "--keep-recent"
    assert not (git_repo.root / ".ragit").exists()


# ------------------------------------------------------------------ recall

def offload(repo, session: str, ref: str, result) -> Path:
    from ragit.window.offload import OffloadStore

    store = OffloadStore(repo.root / ".ragit" / "cache" / "tool-offload", session)
    store.write(ref, result)
    return store.path_for(ref)


def test_recall_returns_the_stored_result(git_repo, cli):
    offload(git_repo, "s1", "call_1", {"rows": [1, 2, 3], "text": "page 1"})
    r = window(cli, git_repo, "recall", "call_1", "--session", "s1")
    assert r.code == 0, r
    assert r.json["data"] == {"rows": [1, 2, 3], "text": "page 1"}
    text = window(cli, git_repo, "recall", "call_1", "--session", "s1", "--format", "text").out
    assert text.startswith("# ragit window recall\n- ref_id: call_1\n- session: s1\n\n{")


def unavailable(r, reason: str) -> None:
    assert r.code == 3, r
    err = r.json["error"]
    assert (err["code"], err["category"], err["retryable"]) == ("TOOL_RESULT_UNAVAILABLE", "not_ready", False)
    assert err["details"]["reason"] == reason
    assert err["recovery"]["command"] == "ragit window recall --help"


def test_recall_not_found_creates_nothing(git_repo, cli):
    before = tree_snapshot(git_repo.root)
    r = window(cli, git_repo, "recall", "call_9", "--session", "s1")
    unavailable(r, "not_found")
    assert r.json["error"]["details"]["refId"] == "call_9"
    assert tree_snapshot(git_repo.root) == before
    offload(git_repo, "s1", "call_1", {"a": 1})
    unavailable(window(cli, git_repo, "recall", "call_9", "--session", "s1"), "not_found")


def test_recall_expired_and_unreadable(git_repo, cli, monkeypatch):
    monkeypatch.setenv("RAGIT_NOW", "2026-03-08T10:00:00.000Z")
    path = offload(git_repo, "s1", "old", {"a": 1})
    monkeypatch.setenv("RAGIT_NOW", "2026-03-08T15:00:00.000Z")  # 5 h later, TTL 4 h
    unavailable(window(cli, git_repo, "recall", "old", "--session", "s1"), "expired")
    assert not path.exists()
    broken = offload(git_repo, "s1", "broken", {"a": 1})
    broken.write_text("{not json", encoding="utf-8")
    unavailable(window(cli, git_repo, "recall", "broken", "--session", "s1"), "unreadable")


def test_recall_disabled_by_config(git_repo, cli):
    git_repo.write(".ragit/config.toml", "[window]\ntool_offload_threshold = 0\n")
    unavailable(window(cli, git_repo, "recall", "call_1", "--session", "s1"), "disabled")


@pytest.mark.parametrize(("args", "field", "reason"), [
    (["call_1"], "--session", "required"),
    (["--session", "s1"], "ref_id", "required"),
    (["  ", "--session", "s1"], "ref_id", "empty"),
    (["call_1", "--session", "../s1"], "--session", "invalid_format"),
])
def test_recall_bad_input(git_repo, cli, args, field, reason):
    r = window(cli, git_repo, "recall", *args)
    assert r.code == 2, r
    assert (r.json["error"]["details"]["field"], r.json["error"]["details"]["reason"]) == (field, reason)


def test_describe_window_commands(cli):
    spec = cli("describe", "window", "compact").json["data"]["spec"]
    assert (spec["group"], spec["mutating"], spec["defaultFormat"]) == ("window", True, "json")
    assert {o["name"] for o in spec["options"]} >= {"--input", "--keep-recent", "--session", "--prune", "--window"}
    check = cli("describe", "window", "check").json["data"]["spec"]
    assert check["mutating"] is False and check["supportsRawJsonInput"] is True
    recall = cli("describe", "window", "recall").json["data"]["spec"]
    assert "TOOL_RESULT_UNAVAILABLE" in recall["errorCodes"]
