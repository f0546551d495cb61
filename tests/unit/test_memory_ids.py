"""Memory identities, slugs and document rendering (memory §1, §3, §4)."""

from __future__ import annotations

import hashlib

import pytest

from ragit.memory.promote import is_evidence_ref, render_document, slugify
from ragit.memory.recall import decision_title, project_decision, unique_by_id
from ragit.memory.working import decision_id, loop_status, open_loop_id, session_id


def test_session_id_worked_example():
    assert session_id("2026-03-08T10:00:00.000Z", "finish auth migration") == "20260308T100000Z-5c4669af"


def test_session_id_is_stable_and_goal_bound():
    a = session_id("2026-03-08T10:00:00.000Z", "goal one")
    assert a == session_id("2026-03-08T10:00:00.000Z", "goal one")
    assert a != session_id("2026-03-08T10:00:00.000Z", "goal two")
    assert a != session_id("2026-03-08T10:00:01.000Z", "goal one")


def test_session_id_without_milliseconds():
    assert session_id("2026-03-08T10:00:00Z", "finish auth migration") == "20260308T100000Z-5c4669af"


def test_default_decision_and_open_loop_ids():
    assert decision_id("Rotate tokens", "every use") == hashlib.sha1(b"Rotate tokens:every use").hexdigest()
    assert open_loop_id("Boundary", "write ADR") == hashlib.sha1(b"Boundary:write ADR").hexdigest()


@pytest.mark.parametrize("raw, status", [
    ("open", "open"), ("blocked", "blocked"), ("in_progress", "in_progress"), ("closed", "closed"),
    (" Blocked ", "blocked"), ("done", "open"), (None, "open"), (3, "open"), ("", "open"),
])
def test_open_loop_status_normalisation(raw, status):
    assert loop_status(raw) == status


@pytest.mark.parametrize("text, slug", [
    ("Restore active work instead of replaying raw logs", "restore-active-work-instead-of-replaying-raw-logs"),
    ("ADR: Token Rotation!", "adr-token-rotation"),
    ("Café naïve", "cafe-naive"),
    ("a -- b", "a-b"),
    ("--trim me--", "trim-me"),
    ("snake_case stays", "snake_case-stays"),
    ("!!!", "memory-artifact"),
    ("", "memory-artifact"),
])
def test_slugify(text, slug):
    assert slugify(text) == slug


@pytest.mark.parametrize("ref, ok", [
    ("docs/auth.md@3f2a1b4c5d6e:L10-L24", True),
    ("docs/auth.md@3F2A:L1-L1", True),
    ("node_modules/@scope/x.md@abcd1234:L2-L3", True),
    ("cite-891adb60f18f7563478d6062", True),
    ("docs/auth.md@3f2a:L5-L4", False),
    ("docs/auth.md@3f2a:L0-L4", False),
    ("docs/auth.md:L1-L2", True),  # memory §10: bound at the source head by promote
    ("docs/auth.md:L1", False),
    ("/etc/passwd:L1-L2", False),
    ("../x.md:L2-L1", False),
    ("/etc/passwd@3f2a:L1-L2", False),
    ("../x.md@3f2a:L1-L2", False),
    ("docs/auth.md@xyz1:L1-L2", False),
    ("cite-891ADB60F18F7563478D6062", False),
    ("cite-891adb", False),
])
def test_evidence_refs(ref, ok):
    assert is_evidence_ref(ref) is ok


def test_decision_title_from_path():
    assert decision_title("docs/memory/decisions/restore-active_work.md") == "Restore Active Work"
    assert decision_title("docs/memory/decisions/v2.adr.md") == "V2.adr"


def test_decision_projection_by_view():
    d = {"id": "x", "title": "T", "summary": "word " * 100, "rationale": "r", "alternatives": ["a"],
         "consequences": ["c"], "relatedFiles": []}
    assert project_decision(d, "full") == d
    default = project_decision(d, "default")
    assert len(default["summary"]) == 243 and default["summary"].endswith("...")
    assert "  " not in default["summary"] and default["rationale"] == "r"
    minimal = project_decision(d, "minimal")
    assert list(minimal) == ["id", "title", "summary", "relatedFiles"]
    assert len(minimal["summary"]) == 123


def test_unique_by_id_keeps_first_and_idless_items():
    items = [{"id": "a", "n": 1}, {"id": "a", "n": 2}, {"n": 3}, {"n": 4}]
    assert unique_by_id(items) == [{"id": "a", "n": 1}, {"n": 3}, {"n": 4}]


def test_decision_document_layout():
    text = render_document(
        {"kind": "decision", "title": "Use WAL", "summary": "s", "consequences": ["c1", "c1"],
         "alternatives": ["rollback journal"], "evidence": ["cite-891adb60f18f7563478d6062"],
         "supersedes": "docs/memory/decisions/old.md"},
        source_session='say "hi"', source_head="abc", promoted_at="2026-03-08T10:00:00.000Z",
    )
    assert text == (
        '---\ntype: adr\nsource_session: "say \\"hi\\""\npromoted_at: "2026-03-08T10:00:00.000Z"\n'
        'source_head: "abc"\nsupersedes: "docs/memory/decisions/old.md"\n---\n\n'
        "# ADR: Use WAL\n\n## Context\n\ns\n\n## Decision\n\ns\n\n## Consequences\n\n"
        "- c1\n- Alternative considered: rollback journal\n\n## Evidence\n\n- cite-891adb60f18f7563478d6062\n"
    )


def test_glossary_and_plan_documents():
    glossary = render_document({"kind": "glossary", "title": "Open loop", "summary": "unfinished", "aliases": ["a", "b"]},
                               source_session=None, source_head=None, promoted_at="t")
    assert 'source_session: ""' in glossary and 'source_head: ""' in glossary
    assert glossary.endswith("# Glossary: Open loop\n\n## Terms\n\n- **Open loop**: unfinished\n- **Aliases**: a, b\n")
    plan = render_document({"kind": "plan", "title": "P", "summary": "do it", "milestones": ["m1"]},
                           source_session="s", source_head="h", promoted_at="t")
    assert plan.endswith("# Plan: P\n\n## Milestones\n\n- m1\n\n## Work Breakdown\n\n- do it\n")
    empty = render_document({"kind": "decision", "title": "D", "summary": "s"}, source_session=None,
                            source_head=None, promoted_at="t")
    assert "## Consequences\n\n- No recorded consequences yet.\n" in empty and "## Evidence" not in empty
