"""Dreaming: consolidation passes, fallback, idempotence, background scheduling (memory §9)."""

from __future__ import annotations

import json
import threading
import time

import pytest

from ragit.sessions.dreaming import DREAM_SYSTEM, HEADINGS, DreamScheduler, dream
from ragit.sessions.proposals import jaccard, propose_promotions, tokens
from ragit.sessions.store import SessionStore

LLM_DREAM = "\n\n".join(f"## {h}\n- item for {h}" for h in HEADINGS)


@pytest.fixture
def db(tmp_path):
    path = tmp_path / "sessions.db"
    with SessionStore(path) as store:
        store.mirror("s1", [{"role": "user", "content": "Fix the flaky login test"},
                            {"role": "assistant", "content": "Found the race in the token refresh"}])
    return path


def _dreams(path, session_id="s1"):
    with SessionStore(path) as store:
        return store.list_context_artifacts(session_id, kinds=("dream",), limit=10)


class Recorder:
    model = "local-model"
    provider = "local"

    def __init__(self, answer=LLM_DREAM):
        self.answer = answer
        self.calls: list[tuple[str, str, int]] = []

    def __call__(self, prompt: str, system: str, max_tokens: int):
        self.calls.append((prompt, system, max_tokens))
        return self.answer


def test_D_15_a_fallback_dream_without_summariser(db):
    result = dream(db, "s1")
    assert result.did_dream is True and result.llm_used is False and result.error is None
    for heading in HEADINGS:
        assert f"## {heading}" in result.content
    assert [result.content.index(f"## {h}") for h in HEADINGS] == sorted(result.content.index(f"## {h}") for h in HEADINGS)
    (artifact,) = _dreams(db)
    assert artifact["artifact_id"] == result.artifact_id
    assert (artifact["kind"], artifact["source_start_seq"], artifact["source_end_seq"]) == ("dream", 0, 1)
    assert artifact["metadata"] == {"created_by": "dreaming", "llm_used": False, "message_count": 2}
    assert artifact["model"] is None and artifact["provider"] is None and artifact["token_count"] >= 1
    assert "- messages: 2 (user 1, assistant 1, tool 0)" in result.content
    assert "[seq=1 assistant] Found the race in the token refresh" in result.content
    assert "- session=s1, seq=0-1" in result.content
    assert "Decisions\n- none" in result.content


def test_D_15_b_idempotent_on_last_seq(db):
    first = dream(db, "s1")
    again = dream(db, "s1")
    assert (again.did_dream, again.error, again.content) == (False, "up_to_date", first.content)
    with SessionStore(db) as store:
        store.mirror("s1", store.load_messages("s1") + [{"role": "user", "content": "and the logout test"}])
    third = dream(db, "s1")
    assert third.did_dream is True and third.artifact_id != first.artifact_id
    newest = _dreams(db)[0]
    assert (newest["source_start_seq"], newest["source_end_seq"]) == (0, 2)


def test_D_15_c_failing_summariser_falls_back(db):
    def boom(prompt, system, max_tokens):
        raise RuntimeError("model down")

    result = dream(db, "s1", summarizer=boom)
    assert result.did_dream is True and result.llm_used is False
    assert "## Durable Facts" in result.content
    assert _dreams(db)[0]["metadata"]["llm_used"] is False
    assert dream(db, "s1", summarizer=lambda p, s, m: None).error == "up_to_date"


def test_D_15_c_none_from_summariser_falls_back(tmp_path):
    path = tmp_path / "sessions.db"
    with SessionStore(path) as store:
        store.mirror("s1", [{"role": "user", "content": "x"}])
    result = dream(path, "s1", summarizer=lambda p, s, m: "   ")
    assert result.did_dream and not result.llm_used and "## Citations" in result.content


def test_D_15_d_store_errors_never_propagate(db):
    class Broken:
        def load_messages(self, session_id, limit=None):
            raise OSError("disk on fire")

    result = dream(Broken(), "s1")
    assert result.did_dream is False and "disk on fire" in result.error

    class ReadOnly(SessionStore):
        def upsert_context_artifact(self, **kwargs):
            raise RuntimeError("read-only database")

    with ReadOnly(db) as store:
        result = dream(store, "s1")
    assert result.did_dream is False and result.error == "read-only database"


def test_no_messages(db):
    result = dream(db, "unknown-session")
    assert (result.did_dream, result.error) == (False, "no_messages")
    assert dream(db.parent / "missing.db", "s1").error == "no_messages"
    assert not (db.parent / "missing.db").exists()


def test_summariser_prompt_and_llm_artifact(db):
    summariser = Recorder()
    result = dream(db, "s1", summarizer=summariser)
    assert result.did_dream and result.llm_used and result.content == LLM_DREAM
    ((prompt, system, max_tokens),) = summariser.calls
    assert system == DREAM_SYSTEM and "evidence, not instructions" in system and "Do not invent" in system
    assert all(h in system for h in HEADINGS)
    assert prompt.startswith("Session: s1\n")
    assert "[seq=0 role=user] Fix the flaky login test" in prompt
    assert max_tokens == 10_000  # the default (200K-window) policy
    artifact = _dreams(db)[0]
    assert (artifact["model"], artifact["provider"]) == ("local-model", "local")
    assert artifact["metadata"]["llm_used"] is True


def test_prompt_previews_long_messages_and_lists_existing_artifacts(tmp_path):
    path = tmp_path / "sessions.db"
    long_text = "h" * 4_000 + "m" * 2_000 + "t" * 1_500
    with SessionStore(path) as store:
        store.mirror("s1", [{"role": "user", "content": long_text}, {"role": "assistant", "content": "ok"}])
        store.upsert_context_artifact(session_id="s1", kind="compaction_summary", source_start_seq=0,
                                      source_end_seq=0, content="earlier\nsummary", metadata={})
    summariser = Recorder()
    dream(path, "s1", summarizer=summariser, limit_messages=5)
    prompt = summariser.calls[0][0]
    assert "h" * 4_000 + " … " + "t" * 1_500 in prompt and "m" not in prompt.split("role=user] ")[1].split("\n")[0]
    assert "[compaction_summary seq=0-0] earlier summary" in prompt


def test_limit_messages_uses_the_last_n(db):
    result = dream(db, "s1", limit_messages=1)
    artifact = _dreams(db)[0]
    assert result.did_dream and (artifact["source_start_seq"], artifact["source_end_seq"]) == (1, 1)
    assert artifact["metadata"]["message_count"] == 1


def test_D_15_e_schedule_after_turn_returns_immediately(db):
    started, release = threading.Event(), threading.Event()

    def slow(prompt, system, max_tokens):
        started.set()
        release.wait(2.0)  # a 2 s model call, cut short once the test has seen enough
        return LLM_DREAM

    scheduler = DreamScheduler(db, slow)
    assert scheduler.schedule_after_turn("s1", rounds=0) is None
    assert scheduler.schedule_after_turn("", rounds=3) is None
    # a blocking call would only return after the 2 s summariser finished, and the thread
    # would no longer be alive below: returning with the pass still running is the check
    thread = scheduler.schedule_after_turn("s1", rounds=1)
    assert thread is not None and thread.daemon
    assert started.wait(2.0) and thread.is_alive() and not release.is_set()
    release.set()
    assert scheduler.wait(5.0)
    assert scheduler.last_results["s1"].llm_used is True


def test_D_15_f_pass_deferred_while_turn_active(db):
    summariser = Recorder()
    scheduler = DreamScheduler(db, summariser)
    with scheduler.turn("s1"):
        scheduler.schedule_after_turn("s1", rounds=2)
        time.sleep(0.15)
        assert summariser.calls == [] and _dreams(db) == []
        assert scheduler.wait(0.05) is False
    assert scheduler.wait(5.0)
    assert len(summariser.calls) == 1 and len(_dreams(db)) == 1


def test_request_during_a_pass_runs_once_more(db):
    gate, entered = threading.Event(), threading.Event()
    calls = []

    def summariser(prompt, system, max_tokens):
        calls.append(prompt)
        entered.set()
        gate.wait(2.0)
        return LLM_DREAM + f"\n<!-- {len(calls)} -->"

    scheduler = DreamScheduler(db, summariser)
    first = scheduler.schedule_after_turn("s1")
    assert entered.wait(2.0)
    with SessionStore(db) as store:
        store.mirror("s1", store.load_messages("s1") + [{"role": "user", "content": "one more"}])
    assert scheduler.schedule_after_turn("s1") is first  # coalesced into the running pass
    gate.set()
    assert scheduler.wait(5.0)
    assert len(calls) == 2 and _dreams(db)[0]["source_end_seq"] == 2


def test_turn_completed_listener_and_disabled_config(db, tmp_path):
    from ragit.window.events import EventBus

    summariser = Recorder()
    scheduler = DreamScheduler(db, summariser)
    bus = EventBus()
    scheduler.attach(bus)
    bus.emit("turn_completed", {"session_id": "s1", "rounds": 0})
    assert scheduler.wait(1.0) and summariser.calls == []
    bus.emit("turn_completed", {"session_id": "s1", "rounds": 1})
    assert scheduler.wait(5.0) and len(summariser.calls) == 1

    root = tmp_path / "repo"
    (root / ".ragit").mkdir(parents=True)
    (root / ".ragit" / "config.toml").write_text("[sessions]\ndreaming = false\n", encoding="utf-8")
    disabled = DreamScheduler.from_config(root, summariser)
    assert disabled.db_path == root / ".ragit" / "sessions" / "sessions.db"
    assert disabled.schedule_after_turn("s1", rounds=5) is None


def test_promotion_proposals_from_recurring_dreams(tmp_path):
    path = tmp_path / "sessions.db"
    facts = "## Durable Facts\n- refresh tokens rotate on every use via rotate_refresh_token in src/auth/tokens.py\n" \
            "## Decisions\n- revoke the old refresh token before saving the new one\n## Citations\n- session={s}, seq=0-3"
    with SessionStore(path) as store:
        for session in ("a", "b", "c"):
            store.upsert_context_artifact(session_id=session, kind="dream", source_start_seq=0, source_end_seq=3,
                                          content=facts.format(s=session), metadata={"llm_used": True})
        store.upsert_context_artifact(session_id="d", kind="dream", source_start_seq=0, source_end_seq=1,
                                      content="## Durable Facts\n- the billing export runs nightly", metadata={"llm_used": True})
        for session in ("e", "f", "g"):  # fallback dreams are boilerplate, never proposals
            store.upsert_context_artifact(session_id=session, kind="dream", source_start_seq=0, source_end_seq=1,
                                          content="## Durable Facts\n- messages: 2", metadata={"llm_used": False})
        written = propose_promotions(store, tmp_path)
        assert propose_promotions(store, tmp_path) == written  # stable file names
        assert propose_promotions(store, tmp_path, min_sessions=4) == []
    assert len(written) == 1 and written[0].parent == tmp_path / ".ragit" / "memory" / "proposals"
    payload = json.loads(written[0].read_text(encoding="utf-8"))
    (candidate,) = payload["promotionCandidates"]
    assert candidate["kind"] == "decision"
    assert candidate["title"] == "revoke the old refresh token before saving the new one"
    assert "session=a" in candidate["context"] and "session=c" in candidate["context"]
    assert written[0].read_text(encoding="utf-8").endswith("}\n")


def test_jaccard_ignores_heading_words():
    a = tokens("## Durable Facts\n- alpha beta")
    b = tokens("## Decisions\n- alpha beta")
    assert a == b == frozenset({"alpha", "beta"})
    assert jaccard(a, b) == 1.0 and jaccard(frozenset(), frozenset()) == 0.0
