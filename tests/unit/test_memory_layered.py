"""Layered memory assembly and long-context injection (memory §6, §6.1)."""

from __future__ import annotations

import json
import time

import pytest

from ragit.memory.layered import ContextAssembler, assemble, llm_summary
from ragit.sessions.store import SessionStore


def _tiers(**overrides):
    tiers = {
        "organization": lambda: {"a": 1, "b": 2},
        "project": lambda: {"b": "", "c": 3},
        "session": lambda: {"a": 9},
    }
    tiers.update(overrides)
    return tiers


def _boom():
    raise RuntimeError("loader exploded")


def test_D_16_a_merge_order_and_flags():
    context = assemble("s1", "u1", tiers=_tiers())
    assert (context["a"], context["b"], context["c"]) == (9, 2, 3)
    flags = {k: v for k, v in context.items() if k.endswith("_loaded")}
    assert flags == {"_org_loaded": True, "_project_loaded": True, "_session_loaded": True}
    assert (context["_session_id"], context["_subject_id"]) == ("s1", "u1")
    assert "_assembled_at" in context and "_llm_summary" in context


def test_D_16_a_identity_and_profile_tiers():
    context = assemble("s1", "u1", tiers=_tiers(
        identity=lambda: "# Soul\nBe useful.",
        user_profile=lambda: {"summary": "Backend engineer", "career_summary": "10y", "preferences": {"tone": "terse"}},
    ))
    assert context["_soul"] == "# Soul\nBe useful." and context["_soul_loaded"] is True
    assert context["_user_profile_summary"] == "Backend engineer" and context["_career_summary"] == "10y"
    assert context["_user_preferences"] == {"tone": "terse"} and context["_user_profile_loaded"] is True
    assert all(v is True for k, v in context.items() if k.endswith("_loaded"))


def test_profile_tier_absent_when_no_profile_exists():
    context = assemble("s1", "u1", tiers={"user_profile": lambda: None})
    assert not any(k.startswith(("_user_profile", "_user_preferences")) for k in context)


@pytest.mark.parametrize("tier, flag", [("identity", "_soul_loaded"), ("user_profile", "_user_profile_loaded"),
                                        ("organization", "_org_loaded"), ("project", "_project_loaded"),
                                        ("session", "_session_loaded")])
def test_D_16_b_failing_tier_is_isolated(tier, flag, caplog):
    tiers = _tiers(identity=lambda: "Be useful.")
    tiers[tier] = _boom
    context = assemble("s1", "u1", tiers=tiers)
    assert context[flag] is False
    assert sum(1 for k, v in context.items() if k.endswith("_loaded") and v is False) == 1
    assert "loader exploded" in caplog.text
    if tier != "session":
        assert context["a"] == 9


def test_D_16_b_failing_enrichments_and_store_never_raise():
    class BrokenStore:
        def list_context_artifacts(self, *args, **kwargs):
            raise OSError("db gone")

    context = assemble("s1", "u1", tiers=_tiers(), artifacts=BrokenStore(),
                       enrichments={"environment": _boom, "run_history": lambda: 42, "journal": _boom})
    assert context["a"] == 9 and "_long_context_summary" not in context and "_run_history" not in context


def _store_with_artifacts(tmp_path, monkeypatch):
    store = SessionStore(tmp_path / "sessions.db")
    rows = [
        ("dream", 0, 4, "first dream"),
        ("compaction_summary", 0, 9, "compacted\nhistory " + "x" * 800),
        ("dream", None, None, "undated dream"),
        ("dream", 5, 12, "newest dream\nwith lines"),
    ]
    for hour, (kind, start, end, content) in enumerate(rows):
        monkeypatch.setenv("RAGIT_NOW", f"2026-03-08T1{hour}:00:00.000Z")
        store.upsert_context_artifact(session_id="s1", kind=kind, source_start_seq=start, source_end_seq=end,
                                      content=content, metadata={})
    store.upsert_context_artifact(session_id="other", kind="dream", source_start_seq=0, source_end_seq=1,
                                  content="another session", metadata={})
    monkeypatch.delenv("RAGIT_NOW")
    return store


def test_D_16_c_long_context_injection(tmp_path, monkeypatch):
    with _store_with_artifacts(tmp_path, monkeypatch) as store:
        context = assemble("s1", "u1", artifacts=store)
    entries = context["_long_context_summary"].split(" | ")
    assert len(entries) == 3
    assert entries[0] == "dream seq=5-12: newest dream with lines"
    assert entries[1] == "dream: undated dream"
    assert entries[2].startswith("compaction_summary seq=0-9: compacted history x")
    for entry in entries:
        content = entry.split(": ", 1)[1]
        assert len(content) <= 500 and "\n" not in content
    assert len(entries[2].split(": ", 1)[1]) == 500
    assert "another session" not in context["_long_context_summary"]


def test_one_dream_artifact_reaches_the_llm_summary(tmp_path):
    with SessionStore(tmp_path / "sessions.db") as store:
        store.upsert_context_artifact(session_id="s1", kind="dream", source_start_seq=0, source_end_seq=1,
                                      content="Durable: tokens rotate", metadata={})
        context = assemble("s1", "u1", artifacts=store)
    assert "Durable: tokens rotate" in context["_long_context_summary"]
    assert "Long context: dream seq=0-1: Durable: tokens rotate" in context["_llm_summary"]


def test_D_16_d_llm_summary_parts(tmp_path):
    with SessionStore(tmp_path / "sessions.db") as store:
        store.upsert_context_artifact(session_id="s1", kind="dream", source_start_seq=0, source_end_seq=1,
                                      content="y" * 300, metadata={})
        context = assemble("s1", "u1", artifacts=store, tiers={
            "identity": lambda: "# Title\n> quote\nBe useful.",
            "organization": lambda: {"organization_strategy": "o" * 100},
            "project": lambda: {"project_goal": "p" * 100},
            "session": lambda: {"previous_results": ["did one", "did two"]},
        })
    summary = context["_llm_summary"]
    assert summary.startswith("Mission: Be useful.")
    parts = summary.split(" | ")
    assert parts[1] == "Org: " + "o" * 70 and parts[2] == "Project: " + "p" * 70
    assert parts[3] == "Prev: did one; did two"
    assert parts[4].startswith("Long context: ") and len(parts[4]) == len("Long context: ") + 112


def test_llm_summary_prev_budget_and_cut():
    fits = "a" * 50  # costs 58 of 112
    cut = "b" * 100  # 54 left: cut to 45 characters + …
    assert llm_summary({"previous_results": [fits, cut, "never reached"]}) == f"Prev: {fits}; {'b' * 45}…"
    tight = "c" * 90  # costs 98: 14 left, not more than 20 → stop without a cut entry
    assert llm_summary({"previous_results": [tight, "d" * 50]}) == f"Prev: {tight}"
    assert llm_summary({"previous_results": ["1", "2", "3", "4"]}) == "Prev: 1; 2; 3"
    assert llm_summary({"_user_profile_summary": "z" * 40}) == "Profile: " + "z" * 28
    assert llm_summary({}) == ""


def test_D_16_e_freshness():
    assembler = ContextAssembler()
    assert assembler.is_fresh() is False
    assembler.assemble("s1", "u1")
    assert assembler.is_fresh() is False  # building does not mark
    assembler.mark_assembled()
    assert assembler.is_fresh() is True
    assembler.mark_assembled(time.time() - 10)
    assert assembler.is_fresh(max_age_s=5) is False
    assert assembler.is_fresh(max_age_s=3600) is True


def test_enrichments_render_history_journal_and_vault(monkeypatch):
    monkeypatch.setenv("RAGIT_NOW", "2026-03-08T12:00:00.000Z")
    context = assemble("s1", "u1", enrichments={
        "environment": lambda: {"project_type": "existing", "pkg_mgr": "uv", "harnesses": ["pytest"], "harness_summary": "pytest -q"},
        "run_history": lambda: [
            {"name": "oldest", "success": True, "at": "2026-03-01T12:00:00Z"},
            {"name": "ingest", "success": False, "ended_at": "2026-03-08T09:00:00Z"},
            {"name": "wrap", "status": "completed", "at": "2026-03-08T11:59:30Z"},
            {"name": "eval", "success": True, "timestamp": "2026-03-08T11:15:00Z"},
        ],
        "journal": lambda: {"runs": ["r1", {"summary": "r2"}, "r3", "r4"], "learned": list("abcdefg")},
        "vault": lambda: {"summary": "3 notes"},
    })
    assert (context["_project_type"], context["_project_pkg_mgr"], context["_harnesses"]) == ("existing", "uv", ["pytest"])
    assert context["_harness_summary"] == "pytest -q"
    assert context["_run_history"] == "eval completed (45m ago) | wrap completed (30s ago) | ingest failed (3h ago)"
    assert context["_journal_summary"] == "r2 | r3 | r4" and context["_journal_learned"] == list("cdefg")
    assert context["_vault_summary"] == "3 notes"


def _write_repo(root):
    (root / "AGENTS.md").write_text("# Agents\n> read me\nShip small, cited changes.\n", encoding="utf-8")
    (root / "uv.lock").write_text("", encoding="utf-8")
    working = root / ".ragit" / "memory" / "working"
    sessions = root / ".ragit" / "memory" / "sessions"
    working.mkdir(parents=True)
    sessions.mkdir(parents=True)
    (working / "current.json").write_text(json.dumps({
        "goal": "finish auth migration", "summary": "s", "constraints": ["no downtime"], "decisions": [],
        "openLoops": [{"title": "Finalize refresh-token boundary", "status": "open"}], "nextActions": ["write tests"],
        "latestSessionId": "20260308T100000Z-5c4669af", "sourceHeadSha": None, "updatedAt": "2026-03-08T10:00:00.000Z",
    }), encoding="utf-8")
    records = [
        ("20260306T100000Z-aaaaaaaa", "audit logging", "added audit log", [], "2026-03-06T10:00:00.000Z"),
        ("20260307T100000Z-bbbbbbbb", "token cleanup", "removed stale tokens", [{"title": "x", "status": "closed"}],
         "2026-03-07T10:00:00.000Z"),
        ("20260308T100000Z-5c4669af", "finish auth migration", "moved login to the new service",
         [{"title": "Finalize refresh-token boundary", "status": "blocked"}], "2026-03-08T10:00:00.000Z"),
        ("20260301T100000Z-cccccccc", "old work", "ancient", [], "2026-03-01T10:00:00.000Z"),
    ]
    for session_id, goal, summary, loops, created in records:
        (sessions / f"{session_id}.json").write_text(json.dumps({
            "sessionId": session_id, "goal": goal, "summary": summary, "openLoops": loops, "createdAt": created,
        }), encoding="utf-8")
    (sessions / "20260309T000000Z-broken00.json").write_text("{not json", encoding="utf-8")


def test_default_repository_loaders(tmp_path, monkeypatch):
    _write_repo(tmp_path)
    monkeypatch.setenv("RAGIT_NOW", "2026-03-08T12:00:00.000Z")
    with SessionStore(tmp_path / ".ragit" / "sessions" / "sessions.db") as store:
        store.upsert_context_artifact(session_id="s1", kind="compaction_summary", source_start_seq=0,
                                      source_end_seq=3, content="compacted the login work", metadata={})
    context = assemble("s1", "u1", root=tmp_path)
    assert context["_soul_loaded"] is True and context["_llm_summary"].startswith("Mission: Ship small, cited changes.")
    assert context["project_goal"] == "finish auth migration" and context["constraints"] == ["no downtime"]
    assert context["open_loops"][0]["title"] == "Finalize refresh-token boundary"
    assert context["next_actions"] == ["write tests"]
    assert context["previous_results"] == ["moved login to the new service", "removed stale tokens", "added audit log"]
    assert context["session_goal"] == "finish auth migration"
    assert context["_run_history"] == (
        "finish auth migration open (2h ago) | token cleanup completed (1d ago) | audit logging completed (2d ago)"
    )
    assert (context["_project_type"], context["_project_pkg_mgr"]) == ("auto", "uv")
    assert context["_long_context_summary"] == "compaction_summary seq=0-3: compacted the login work"
    assert "Prev: moved login to the new service" in context["_llm_summary"]


def test_default_loaders_in_an_empty_directory(tmp_path):
    context = assemble("s1", "u1", root=tmp_path)
    assert context["_soul_loaded"] is False and context["_project_loaded"] is False
    assert context["_session_loaded"] is False and "_run_history" not in context
    assert not (tmp_path / ".ragit").exists()  # reading never creates the session store


def test_explicit_loaders_override_defaults(tmp_path):
    _write_repo(tmp_path)
    context = assemble("s1", "u1", root=tmp_path, tiers={"project": lambda: {"project_goal": "override"}})
    assert context["project_goal"] == "override"
