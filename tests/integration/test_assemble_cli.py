"""`ragit context assemble` through the CLI (context §3.3, D.17, D.18; memory §6)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from conftest import check_golden, tree_snapshot

NOW = "2026-03-08T10:00:00.000Z"

PAYLOAD = {
    "static": {"base": "You are ragit's coding agent.", "style": "Answer briefly.",
               "heuristics": "Read before you edit.", "identity": "# Persona\nCareful.", "rules": "Cite every source."},
    "dynamic": {"modelCard": "model: example-1", "guidance": "Prefer small diffs.", "surface": "cli",
                "projectMemory": "Goal: ship the window CLI.", "userContext": "Reviewer: the lead.",
                "learnedPatterns": ["run the tests before committing"],
                "runtimeRules": {"insights": ["the suite takes 40 s"], "rules": ["never push to main"]}},
    "messages": [
        {"role": "user", "content": "Fix the pagination cursor.", "original_user_input": True},
        {"role": "assistant", "content": [{"type": "tool_use", "id": "c1", "name": "read", "input": {"path": "a.py"}}]},
        {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "c1", "content": "x = 1\n" * 40}]},
        {"role": "assistant", "content": "Done."},
    ],
    "toolsTokens": 1200,
}


def golden(name: str, text: str, root: Path) -> None:
    """The golden check with the temporary repository path replaced by ``<repo>``."""
    check_golden(name, text.replace(str(root), "<repo>"))


@pytest.fixture
def now(monkeypatch):
    monkeypatch.setenv("RAGIT_NOW", NOW)


def assemble(cli, repo, payload, *args):
    repo.write("prompt.json", json.dumps(payload))
    return cli("context", "assemble", "--input", "prompt.json", *args, "--cwd", str(repo.root))


def test_golden_and_byte_identical(git_repo, cli, now):
    first = assemble(cli, git_repo, PAYLOAD, "--window", "128000")
    assert first.code == 0, first
    golden("context_assemble.json", first.out, git_repo.root)
    assert assemble(cli, git_repo, PAYLOAD, "--window", "128000").out == first.out
    data = first.json["data"]
    assert list(data) == ["static", "dynamic", "boundary", "text", "promoteDynamicCache", "breakdown", "counter",
                          "warnings"]
    assert data["text"] == f"{data['static']}\n\n<dynamic_context>\n{data['dynamic']}\n</dynamic_context>"
    assert data["text"].count("<dynamic_context>") == 1
    assert "<current_date>2026-03-08</current_date>" in data["dynamic"]


def test_layers_in_d17_order(git_repo, cli, now):
    data = assemble(cli, git_repo, PAYLOAD).json["data"]
    static = data["static"]
    assert [static.index(s) for s in ("ragit's coding agent", "briefly", "Read before", "# Persona", "Cite every")] \
        == sorted(static.index(s) for s in ("ragit's coding agent", "briefly", "Read before", "# Persona", "Cite every"))
    tags = ["<model_card>", "<model_guidance>", "<surface>", "<current_date>", "<project_memory>",
            "<learned_patterns>", "<runtime_rules>", "<user_context>"]
    positions = [data["dynamic"].index(t) for t in tags]
    assert positions == sorted(positions)


def test_breakdown_sums_to_the_health_estimate(git_repo, cli, now):
    from ragit.window import check_context, resolve_budget

    data = assemble(cli, git_repo, PAYLOAD, "--window", "128000").json["data"]
    b = data["breakdown"]
    raw = check_context(PAYLOAD["messages"], resolve_budget(window=128000), data["text"], 1200).raw
    assert b["system_static"] + b["system_dynamic"] + b["tools"] + sum(b["messages"].values()) == raw
    assert b["tools"] == 1200 and b["messages"]["tool_results"] > 0 and b["pinned"] > 0


def test_static_bytes_stable_across_turns(git_repo, cli, monkeypatch):
    monkeypatch.setenv("RAGIT_NOW", NOW)
    one = assemble(cli, git_repo, PAYLOAD).json["data"]
    monkeypatch.setenv("RAGIT_NOW", "2026-03-09T10:00:00.000Z")
    later = dict(PAYLOAD, dynamic=dict(PAYLOAD["dynamic"], projectMemory="Goal: review."))
    two = assemble(cli, git_repo, later).json["data"]
    assert one["static"] == two["static"] and one["dynamic"] != two["dynamic"]


def test_date_audit_and_caps(git_repo, cli, now):
    no_date = assemble(cli, git_repo, dict(PAYLOAD, includeDate=False)).json["data"]
    assert "<current_date>" not in no_date["dynamic"]
    audit = assemble(cli, git_repo, dict(PAYLOAD, audit=True)).json["data"]
    assert audit["dynamic"] == "<model_card>\nmodel: example-1\n</model_card>\n\n<current_date>2026-03-08</current_date>"
    capped = {
        "static": {"identity": "\n".join(f"line {i}" for i in range(60))},
        "dynamic": {"learnedPatterns": [f"p{i} " + "x" * 200 for i in range(25)],
                    "runtimeRules": {"insights": [f"i{i}" for i in range(8)], "rules": [f"r{i}" for i in range(8)]},
                    "projectMemory": "\n".join(f"m{i}" for i in range(30))},
    }
    data = assemble(cli, git_repo, capped).json["data"]
    assert data["static"].count("line ") == 40
    patterns = data["dynamic"].split("<learned_patterns>\n")[1].split("\n</learned_patterns>")[0].splitlines()
    assert len(patterns) == 20 and all(len(p) <= 2 + 120 for p in patterns)
    assert data["dynamic"].count("- i") == 5 and data["dynamic"].count("- r") == 5
    assert "m19" in data["dynamic"] and "m20" not in data["dynamic"]
    assert data["breakdown"] is None


def test_empty_payload_promotes_dynamic_cache(git_repo, cli, now):
    data = assemble(cli, git_repo, {}).json["data"]
    assert data["static"] == "" and data["promoteDynamicCache"] is True


def test_memory_supplies_project_memory_read_only(git_repo, cli, now):
    from ragit.sessions.store import SessionStore

    git_repo.write("AGENTS.md", "# Agents\nKeep the CLI thin.\n")
    with SessionStore(git_repo.root / ".ragit" / "sessions" / "sessions.db") as store:
        store.upsert_context_artifact(session_id="s1", kind="dream", source_start_seq=0, source_end_seq=3,
                                      content="## Durable Facts\n- cursor uses > now", metadata={})
    before = tree_snapshot(git_repo.root)
    payload = {"memory": {"sessionId": "s1", "subjectId": "dev"}}
    data = assemble(cli, git_repo, payload).json["data"]
    memory = data["dynamic"].split("<project_memory>\n")[1].split("\n</project_memory>")[0]
    assert memory.startswith("Mission: Keep the CLI thin.") and "Long context: dream seq=0-3" in memory
    explicit = {"memory": {"sessionId": "s1"}, "dynamic": {"projectMemory": "given"}}
    assert "<project_memory>\ngiven\n</project_memory>" in assemble(cli, git_repo, explicit).json["data"]["dynamic"]
    (git_repo.root / "prompt.json").unlink()
    assert tree_snapshot(git_repo.root) == {k: v for k, v in before.items() if k != "prompt.json"}


def test_memory_without_sessions_db_creates_nothing(git_repo, cli, now):
    data = assemble(cli, git_repo, {"memory": {"sessionId": "s1"}}).json["data"]
    assert "<project_memory>" not in data["dynamic"]  # nothing to say: the layer is left out
    assert not (git_repo.root / ".ragit").exists()


@pytest.mark.parametrize(("payload", "field", "reason"), [
    ({"extra": 1}, "input.extra", "unknown_field"),
    ({"static": "base"}, "input.static", "invalid_format"),
    ({"static": {"base": 1}}, "input.static.base", "not_string"),
    ({"static": {"persona": True}}, "input.static.persona", "unknown_field"),
    ({"dynamic": {"learnedPatterns": "one"}}, "input.dynamic.learnedPatterns", "not_string"),
    ({"dynamic": {"learnedPatterns": ["ok", 2]}}, "input.dynamic.learnedPatterns[1]", "not_string"),
    ({"dynamic": {"runtimeRules": {"hints": []}}}, "input.dynamic.runtimeRules.hints", "unknown_field"),
    ({"audit": "yes"}, "input.audit", "not_boolean"),
    ({"includeDate": 1}, "input.includeDate", "not_boolean"),
    ({"toolsTokens": -1}, "input.toolsTokens", "out_of_range"),
    ({"toolsTokens": 1.5}, "input.toolsTokens", "not_integer"),
    ({"messages": {"role": "user"}}, "input.messages", "not_one_of"),
    ({"messages": ["hi"]}, "input.messages[0]", "not_one_of"),
    ({"memory": {"sessionId": ""}}, "input.memory.sessionId", "empty"),
    ({"dynamic": {"surface": "bell\u0007"}}, "input.dynamic.surface", "control_character"),
])
def test_bad_payload(git_repo, cli, payload, field, reason):
    r = assemble(cli, git_repo, payload)
    assert r.code == 2, r
    err = r.json["error"]
    assert (err["code"], err["details"]["field"], err["details"]["reason"]) == ("INPUT_INVALID", field, reason)
    assert err["recovery"]["command"] == "ragit describe context assemble"


def test_input_required_and_inside_repo(git_repo, cli, tmp_path):
    r = cli("context", "assemble", "--cwd", str(git_repo.root))
    assert r.code == 2 and r.json["error"]["details"] == {"field": "--input", "reason": "required"}
    outside = tmp_path / "outside.json"
    outside.write_text("{}", encoding="utf-8")
    r = cli("context", "assemble", "--input", str(outside), "--cwd", str(git_repo.root))
    assert r.code == 2 and r.json["error"]["details"]["reason"] == "path_outside_repo"
    r = cli("context", "assemble", "--input", "-", "--window", "-5", "--cwd", str(git_repo.root), stdin="{}")
    assert r.code == 2 and r.json["error"]["details"]["field"] == "--window"


def test_stdin_and_text_format(git_repo, cli, now):
    r = cli("context", "assemble", "--input", "-", "--format", "text", "--cwd", str(git_repo.root),
            stdin=json.dumps(PAYLOAD))
    assert r.code == 0, r
    assert r.out.startswith("# ragit context assemble\n- static_chars: ")
    assert "\n## Breakdown\n" in r.out and "\n## Prompt\nYou are ragit's coding agent." in r.out
