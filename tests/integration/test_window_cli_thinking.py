"""Issue 13: `ragit window compact` on long Claude Code and Codex transcripts with thinking.

The fixtures (tests/fixtures/transcripts/build_long_transcripts.py) are in the clients' real
file formats: signed ``thinking`` blocks streamed as their own JSONL entries, Codex
``reasoning`` items with ``encrypted_content``, tool call/result pairs, meta and event lines.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "transcripts"
CLAUDE = FIXTURES / "claude_code_thinking_session.jsonl"
CODEX = FIXTURES / "codex_reasoning_rollout.jsonl"
CLAUDE_SESSION = "5b8e2f4a-1c7d-4e93-a0b6-8d2c4f9e1a37"
# D.3 small tier with the 10,000-token tool overhead: at 60,000 / 50,000 these transcripts sit
# between warning and critical; at 40,000 they are critical.
WARNING_WINDOW = {CLAUDE: "60000", CODEX: "50000"}
THINKING_TYPES = ("thinking", "redacted_thinking", "reasoning")


def lines(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]


def raw_thinking(path: Path) -> list[dict]:
    """The thinking blocks exactly as the client wrote them, in file order."""
    if path == CODEX:
        return [e["payload"] for e in lines(path)
                if e.get("type") == "response_item" and e["payload"].get("type") == "reasoning"]
    return [b for e in lines(path) if e.get("type") == "assistant" and not e.get("isSidechain")
            for b in e["message"]["content"] if b.get("type") in THINKING_TYPES]


def out_thinking(messages: list[dict]) -> list[dict]:
    return [b for m in messages if isinstance(m.get("content"), list) for b in m["content"]
            if isinstance(b, dict) and b.get("type") in THINKING_TYPES]


def canon(block: dict) -> str:
    """Byte form of a block without the importer's ``opaque`` marker."""
    return json.dumps({k: v for k, v in block.items() if k != "opaque"}, ensure_ascii=False)


def compact(cli, repo, path: Path, *args: str):
    r = cli("window", "compact", "--input", str(path), *args, "--format", "json", "--cwd", str(repo.root))
    assert r.code == 0, r
    return r.json["data"]


def step(report: dict, name: str) -> dict:
    return next(s for s in report["steps"] if s["step"] == name)


@pytest.mark.parametrize("path", [CLAUDE, CODEX], ids=["claude-code", "codex"])
def test_thinking_is_kept_verbatim_and_the_rest_is_compacted(git_repo, cli, path):
    raw = raw_thinking(path)
    assert len(raw) >= 12 and all(b.get("signature") or b.get("encrypted_content") for b in raw)
    data = compact(cli, git_repo, path, "--window", WARNING_WINDOW[path])
    report, messages = data["report"], data["messages"]
    step_ = step(report, "compact")
    # before the fix: did_compact=false, reason=opaque_history, no explanation
    assert step_["did_compact"] is True and step_["reason"] == "compacted", step_
    assert report["action"] == "compact" and report["status"] == "ok"
    assert report["after_tokens"] < report["before_tokens"]
    assert step_["after_tokens"] < step_["before_tokens"]
    # every thinking block survives byte for byte, in the client's order
    kept = out_thinking(messages)
    assert [canon(b) for b in kept] == [json.dumps(b, ensure_ascii=False) for b in raw]
    assert step_["thinking_kept"] == len(raw) - len(out_thinking(messages[4:])) > 0
    # the rest is compacted: a summary, the marker, then the verbatim tail
    assert messages[0]["content"].startswith("[Conversation Summary]\n## Active Task")
    assert messages[2]["content"].startswith("[Compaction marker]")
    assert len(messages) == 4 + step_["kept_count"] < step_["summarized_count"]
    summary = messages[0]["content"]
    assert not any(b.get("thinking", "\0") in summary for b in raw)
    assert not any(b.get("signature", "\0") in summary or b.get("encrypted_content", "\0") in summary for b in raw)


@pytest.mark.parametrize("path", [CLAUDE, CODEX], ids=["claude-code", "codex"])
def test_prune_never_raises_the_token_count(git_repo, cli, path):
    """Before the fix, --prune on a thinking transcript went up (12,533 → 12,720)."""
    plain = compact(cli, git_repo, path, "--window", "40000")["report"]
    pruned = compact(cli, git_repo, path, "--window", "40000", "--prune")["report"]
    for report in (plain, pruned):
        assert report["trigger"] == "critical" and report["hard"] is True
        assert report["after_tokens"] < report["before_tokens"]
        assert step(report, "compact")["did_compact"] is True
        for s in report["steps"]:
            if "after_tokens" in s:
                assert s["after_tokens"] <= s["before_tokens"], s
    assert pruned["after_tokens"] <= plain["after_tokens"]
    assert "after_tokens" in step(pruned, "prune")
    assert step(plain, "prune")["blocked"] == "not_requested" and "--prune" in step(plain, "prune")["detail"]


def test_placeholders_name_the_real_tool_and_ref_id_and_recall_works(git_repo, cli):
    raw_results = {b["tool_use_id"]: b["content"] for e in lines(CLAUDE) if e.get("type") == "user"
                   for b in (e["message"]["content"] if isinstance(e["message"]["content"], list) else [])
                   if b.get("type") == "tool_result"}
    data = compact(cli, git_repo, CLAUDE, "--window", WARNING_WINDOW[CLAUDE], "--session", CLAUDE_SESSION)
    assert step(data["report"], "mask")["masked"] >= 5
    text = json.dumps(data["messages"])
    assert "recall_tool_result" not in text  # the tool that does not exist
    summary = data["messages"][0]["content"]
    masked_refs = [ref for ref in raw_results
                   if f"use tool_result_recall with ref_id {ref} (session {CLAUDE_SESSION}) if needed]" in summary]
    assert len(masked_refs) == step(data["report"], "mask")["masked"]
    for ref in masked_refs[:3]:
        recalled = cli("window", "recall", ref, "--session", CLAUDE_SESSION, "--format", "json",
                       "--cwd", str(git_repo.root))
        assert recalled.code == 0, recalled
        assert recalled.json["data"] == raw_results[ref]


def test_a_refusal_explains_itself(git_repo, cli):
    native = [{"role": "user", "content": "task " + "t" * 4000}]
    for i in range(8):
        native += [{"role": "assistant", "content": [{"type": "compaction", "opaque": True, "content": "enc"},
                                                     {"type": "text", "text": f"step {i} " + "a" * 4000}]},
                   {"role": "user", "content": f"go on {i} " + "u" * 4000}]
    path = git_repo.write("native.json", json.dumps(native))
    data = compact(cli, git_repo, Path(path), "--window", "60000")
    refused = step(data["report"], "compact")
    assert refused["did_compact"] is False and refused["reason"] == "opaque_history"
    assert "compaction" in refused["detail"] and "--prune" in refused["detail"]
    text = cli("window", "compact", "--input", str(path), "--window", "60000", "--format", "text",
               "--cwd", str(git_repo.root)).out
    assert "reason=opaque_history" in text and "detail=the history holds opaque blocks" in text
