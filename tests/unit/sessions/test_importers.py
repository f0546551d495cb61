"""Transcript importers: messages, Claude Code and Codex files → neutral messages (memory §7)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from ragit.errors import RagitError
from ragit.sessions.importers import detect_format, import_transcript
from ragit.sessions.store import SessionStore

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures" / "transcripts"
CLAUDE = (FIXTURES / "claude_code_session.jsonl").read_text(encoding="utf-8")
CODEX = (FIXTURES / "codex_rollout.jsonl").read_text(encoding="utf-8")


def test_claude_code_session_file():
    transcript = import_transcript(CLAUDE)
    assert transcript.format == "claude-code"
    assert transcript.session_id == "7f3c2a9e-4b1d-4c8e-9f2a-1d6e5b8c0a47"
    roles = [m["role"] for m in transcript.messages]
    assert roles == ["user", "assistant", "user", "assistant", "user", "assistant", "user", "assistant"]
    first = transcript.messages[0]
    assert first["content"].startswith("The refresh token test") and first["timestamp"] == "2025-08-14T09:12:03.511Z"
    # the three streamed pieces of one response form one assistant message (one round)
    merged = transcript.messages[1]["content"]
    assert [b["type"] for b in merged] == ["thinking", "text", "tool_use"]
    assert merged[0]["opaque"] is True
    assert transcript.messages[1]["finish_reason"] == "tool_use"
    assert transcript.messages[2]["content"][0]["type"] == "tool_result"
    assert transcript.messages[4]["content"][0]["is_error"] is True
    assert transcript.messages[-1]["finish_reason"] == "end_turn"
    text = json.dumps(transcript.messages)
    assert "/clear" not in text  # meta entry skipped
    assert "Running PostToolUse hooks" not in text  # system entry skipped
    assert "trackedFileBackups" not in text  # file-history-snapshot skipped
    assert sum("Find every caller" in json.dumps(m) for m in transcript.messages) == 1  # side chain skipped


def test_codex_rollout_file():
    transcript = import_transcript(CODEX)
    assert transcript.format == "codex"
    assert transcript.session_id == "0199102c-5d3e-7a21-b5f4-2c9e8a7d6f10"
    messages = transcript.messages
    assert [m["role"] for m in messages] == ["user", "user", "assistant", "tool", "assistant", "tool", "assistant", "tool", "assistant"]
    assert messages[1]["content"].startswith("Pagination returns a duplicate row")
    call = messages[2]["tool_calls"][0]
    reasoning, answer = messages[2]["content"]
    assert answer == {"type": "text", "text": "Let me find the cursor implementation."}
    raw = next(json.loads(line)["payload"] for line in CODEX.splitlines() if '"type":"reasoning"' in line)
    assert reasoning == {**raw, "opaque": True}  # the encrypted reasoning item, verbatim, in its round
    assert call["id"] == "call_Qx1Lm8Tz3Vb6Nr2Kp9Wd4Hs" and call["function"]["name"] == "shell"
    assert json.loads(call["function"]["arguments"])["command"][0] == "bash"
    assert messages[3] == {"role": "tool", "tool_call_id": call["id"], "name": "shell",
                           "content": "src/api/pagination.py:12:class PaginationCursor:\n",
                           "timestamp": "2025-09-03T14:02:24.391Z"}
    patch = messages[6]["tool_calls"][0]
    assert patch["function"]["name"] == "apply_patch" and "*** Begin Patch" in patch["function"]["arguments"]
    assert messages[7]["name"] == "apply_patch"
    assert json.dumps(messages).count("encrypted_content") == 1
    assert messages[-1]["content"].startswith("Fixed: the cursor")


def test_codex_legacy_format():
    lines = [
        {"id": "legacy-session", "timestamp": "2025-05-01T10:00:00Z", "instructions": None},
        {"type": "message", "role": "user", "content": [{"type": "input_text", "text": "list files"}]},
        {"record_type": "state"},
        {"type": "function_call", "name": "shell", "arguments": "{\"command\": [\"ls\"]}", "call_id": "c1"},
        {"type": "function_call_output", "call_id": "c1", "output": "{\"output\": \"a.py\\n\", \"metadata\": {\"exit_code\": 0}}"},
    ]
    transcript = import_transcript("\n".join(json.dumps(line) for line in lines))
    assert transcript.format == "codex" and transcript.session_id == "legacy-session"
    assert [m["role"] for m in transcript.messages] == ["user", "assistant", "tool"]
    assert transcript.messages[2]["content"] == "a.py\n"


def test_messages_json_array_openai_and_anthropic_styles():
    messages = [
        {"role": "developer", "content": "be brief"},
        {"role": "user", "content": [{"type": "text", "text": "hi"}, {"type": "image_url", "image_url": {"url": "https://x/y.png"}}]},
        {"role": "assistant", "content": None,
         "tool_calls": [{"id": "c1", "type": "function", "function": {"name": "f", "arguments": "{}"}}]},
        {"role": "tool", "tool_call_id": "c1", "name": "f", "content": "ok"},
        {"id": "msg_1", "type": "message", "role": "assistant", "stop_reason": "end_turn",
         "content": [{"type": "thinking", "thinking": "hm", "signature": "sig"}, {"type": "text", "text": "done"}]},
        "not a message",
    ]
    transcript = import_transcript(json.dumps(messages), session_id="s-1")
    assert transcript.format == "messages" and transcript.session_id == "s-1"
    out = transcript.messages
    assert out[0]["role"] == "system"
    assert out[1]["content"][1] == {"type": "image", "source": {"type": "url", "url": "https://x/y.png"}}
    assert out[2]["tool_calls"] == messages[2]["tool_calls"] and out[3] == messages[3]
    assert out[4]["finish_reason"] == "end_turn" and "type" not in out[4]
    assert out[4]["content"][0]["opaque"] is True
    assert out[5] == "not a message"  # kept in place: mirror skips it and its seq


def test_messages_jsonl_and_wrapper_object():
    jsonl = "\n".join(json.dumps({"role": r, "content": c}) for r, c in (("user", "a"), ("assistant", "b"))) + "\n\n"
    assert [m["content"] for m in import_transcript(jsonl, "messages", session_id="x").messages] == ["a", "b"]
    wrapped = json.dumps({"session_id": "from-file", "messages": [{"role": "user", "content": "a"}]})
    transcript = import_transcript(wrapped)
    assert transcript.session_id == "from-file" and transcript.format == "messages"
    assert import_transcript(wrapped, session_id="override").session_id == "override"


def test_auto_detection():
    assert import_transcript(CLAUDE, "auto").format == "claude-code"
    assert import_transcript(CODEX, "auto").format == "codex"
    assert detect_format([{"role": "user", "content": "x"}]) == "messages"
    assert detect_format([{"type": "message", "role": "assistant", "content": [{"type": "text", "text": "x"}]}]) == "messages"


def test_session_override_and_required():
    assert import_transcript(CODEX, session_id="mine").session_id == "mine"
    with pytest.raises(RagitError) as err:
        import_transcript(json.dumps([{"role": "user", "content": "x"}]))
    assert err.value.code == "INPUT_INVALID" and err.value.details["reason"] == "required"


@pytest.mark.parametrize("text", ["", "   ", "{not json", "[1, 2", '{"role": "user"}\nnot json'])
def test_unparseable_input_is_invalid_json(text):
    with pytest.raises(RagitError) as err:
        import_transcript(text, session_id="s")
    assert err.value.code == "INPUT_INVALID" and err.value.details["reason"] == "invalid_json"


def test_unknown_format_rejected():
    with pytest.raises(RagitError) as err:
        import_transcript("[]", "cursor", session_id="s")
    assert err.value.details["reason"] == "not_one_of"


def test_imported_transcripts_mirror_and_search(tmp_path):
    with SessionStore(tmp_path / "sessions.db") as store:
        for text in (CLAUDE, CODEX):
            transcript = import_transcript(text)
            store.mirror(transcript.session_id, transcript.messages)
        hits = store.search_messages("PaginationCursor")
        assert {h["session_id"] for h in hits} == {"0199102c-5d3e-7a21-b5f4-2c9e8a7d6f10"}
        hits = store.search_messages("rotate_refresh_token")
        assert hits and hits[0]["session_id"] == "7f3c2a9e-4b1d-4c8e-9f2a-1d6e5b8c0a47"
        # signatures of opaque thinking blocks are not searchable noise
        assert store.search_messages("EqQBCkYIBxgCKkAr7Hq0VnT2cP1xW9mZ3bK8sL5dF6gJ4hN0oQ7uY2eR1tA") == []


def test_codex_reasoning_items_are_kept_verbatim_in_their_round():
    """Issue 13: encrypted reasoning is Codex's signed thinking; window compaction must be able to keep it."""
    def reasoning(n):
        return {"type": "reasoning", "summary": [{"type": "summary_text", "text": f"**Step {n}**"}],
                "content": None, "encrypted_content": f"gAAAAAB{n}xyz"}

    lines = [
        {"type": "session_meta", "payload": {"id": "r-1"}},
        {"type": "response_item", "payload": {"type": "message", "role": "user",
                                              "content": [{"type": "input_text", "text": "fix it"}]}},
        {"type": "response_item", "payload": reasoning(1)},
        {"type": "response_item", "payload": {"type": "message", "role": "assistant",
                                              "content": [{"type": "output_text", "text": "Looking."}]}},
        {"type": "response_item", "payload": {"type": "function_call", "name": "shell", "arguments": "{}",
                                              "call_id": "c1"}},
        {"type": "response_item", "payload": {"type": "function_call_output", "call_id": "c1", "output": "ok"}},
        {"type": "response_item", "payload": reasoning(2)},
        {"type": "response_item", "payload": {"type": "function_call", "name": "shell", "arguments": "{}",
                                              "call_id": "c2"}},
        {"type": "response_item", "payload": {"type": "function_call_output", "call_id": "c2", "output": "ok"}},
        {"type": "response_item", "payload": reasoning(3)},
        {"type": "event_msg", "payload": {"type": "agent_reasoning", "text": "**Step 3**"}},
        {"type": "response_item", "payload": reasoning(4)},
        {"type": "response_item", "payload": {"type": "message", "role": "assistant",
                                              "content": [{"type": "output_text", "text": "Done."}]}},
    ]
    messages = import_transcript("\n".join(json.dumps(line) for line in lines)).messages
    assert [m["role"] for m in messages] == ["user", "assistant", "tool", "assistant", "tool", "assistant"]
    assert messages[1]["content"] == [{**reasoning(1), "opaque": True}, {"type": "text", "text": "Looking."}]
    assert [c["id"] for c in messages[1]["tool_calls"]] == ["c1"]
    assert messages[3]["content"] == [{**reasoning(2), "opaque": True}]
    assert [c["id"] for c in messages[3]["tool_calls"]] == ["c2"]
    assert messages[5]["content"] == [{**reasoning(3), "opaque": True}, {**reasoning(4), "opaque": True},
                                      {"type": "text", "text": "Done."}]
