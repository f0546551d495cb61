"""The context packet's reference tests (context.md §2.3): T1–T5, the demo and D.1 checks."""

from __future__ import annotations

import copy
import json

import pytest

from conftest import PACKET_CURRENT_FAILURE as CF, PACKET_PREVIOUS_SUMMARY as PS, PACKET_TASK as A
from ragit.context.packet import (
    REQUEST_FIELDS,
    PacketInputError,
    PacketRequest,
    PacketResult,
    build_packet,
)

E = [
    "candidate provenance and kind order are explicit",
    "budget decisions are recorded as selected, pointers and exclusions",
]
RESULT_KEYS = ["state", "phase", "packet", "excluded", "unknowns", "refresh", "evidence"]


def run(candidates: list[dict], budget: int = 8, **extra) -> dict:
    return build_packet({"taskAnchor": A, "budgetUnits": budget, "candidates": candidates, **extra}).to_dict()


def ready(selected: list, pointers: list, used: int, budget: int, excluded: list | None = None) -> dict:
    return {
        "state": "ready", "phase": "assembled",
        "packet": {"taskAnchor": A, "selected": selected, "pointers": pointers,
                   "usedBudgetUnits": used, "budgetUnits": budget},
        "excluded": excluded or [], "unknowns": [], "refresh": [], "evidence": E,
    }


def test_t1_direct_evidence_first():
    assert run([PS, CF], budget=4) == {
        "state": "ready", "phase": "assembled",
        "packet": {"taskAnchor": A, "selected": [CF], "pointers": [], "usedBudgetUnits": 3, "budgetUnits": 4},
        "excluded": [{"id": "previous-summary", "reason": "over_budget_without_reference"}],
        "unknowns": [], "refresh": [], "evidence": E,
    }


def test_t1_seed_variant_constraint_first():
    style = {
        "id": "style-rule", "kind": "constraint", "source": "injected:style", "capturedAt": "2026-07-15",
        "relevance": "current", "freshness": "fresh", "sizeUnits": 1, "content": "keep the public API",
    }
    assert run([style, PS, CF], budget=4) == ready(
        [style, CF], [], 4, 4, [{"id": "previous-summary", "reason": "over_budget_without_reference"}],
    )


def test_t2_expired_evidence():
    expired = {**CF, "id": "expired-failure", "freshness": "expired"}
    assert run([expired], budget=8) == {
        "state": "refresh_required", "phase": "refresh_context",
        "packet": {"taskAnchor": A, "selected": [], "pointers": [], "usedBudgetUnits": 0, "budgetUnits": 8},
        "excluded": [{"id": "expired-failure", "reason": "expired"}], "unknowns": [],
        "refresh": [{"id": "expired-failure", "reason": "direct_evidence_expired", "source": "injected:test-output"}],
        "evidence": E,
    }


def test_t3_over_budget_pointer():
    log = {**CF, "id": "large-ci-log", "sizeUnits": 9, "reference": "injected:ci-log#auth-test",
           "loadWhen": "assertion points to the auth module"}
    assert run([log], budget=8) == {
        "state": "ready", "phase": "assembled",
        "packet": {"taskAnchor": A, "selected": [],
                   "pointers": [{"id": "large-ci-log", "reference": "injected:ci-log#auth-test",
                                 "loadWhen": "assertion points to the auth module"}],
                   "usedBudgetUnits": 0, "budgetUnits": 8},
        "excluded": [], "unknowns": [], "refresh": [], "evidence": E,
    }


def test_t4_missing_provenance():
    assert run([{**CF, "id": "unknown-source", "source": ""}]) == {
        "state": "blocked", "phase": "missing_provenance", "packet": None, "excluded": [],
        "unknowns": [{"id": "unknown-source", "missing": ["source"]}], "refresh": [],
        "evidence": ["candidate provenance is incomplete"],
    }


def test_t4_both_missing_and_one_bad_candidate_blocks_all():
    gap = {k: v for k, v in CF.items() if k != "capturedAt"} | {"id": "unknown-source", "source": ""}
    assert run([PS, gap]) == {
        "state": "blocked", "phase": "missing_provenance", "packet": None, "excluded": [],
        "unknowns": [{"id": "unknown-source", "missing": ["source", "capturedAt"]}], "refresh": [],
        "evidence": ["candidate provenance is incomplete"],
    }


def test_t5_conflicting_summary():
    stale = {**PS, "sizeUnits": 1, "conflictsWith": ["current-failure"]}
    assert run([CF, stale], budget=8) == {
        "state": "refresh_required", "phase": "refresh_context",
        "packet": {"taskAnchor": A, "selected": [CF], "pointers": [], "usedBudgetUnits": 3, "budgetUnits": 8},
        "excluded": [{"id": "previous-summary", "reason": "conflicting_history_summary"}], "unknowns": [],
        "refresh": [{"id": "previous-summary", "reason": "conflicts_with_current_direct_evidence",
                     "conflictsWith": ["current-failure"]}],
        "evidence": E,
    }


def test_conflict_with_pointer_needs_the_opt_in_flag():
    big = {**CF, "sizeUnits": 9, "reference": "injected:ci-log"}
    stale = {**PS, "sizeUnits": 1, "conflictsWith": ["current-failure"]}
    pointer = {"id": "current-failure", "reference": "injected:ci-log", "loadWhen": "when the packet needs full content"}
    assert run([big, stale]) == ready([{**PS, "sizeUnits": 1}], [pointer], 1, 8)
    flagged = run([big, stale], conflictsIncludePointers=True)
    assert flagged["state"] == "refresh_required"
    assert flagged["packet"]["pointers"] == [pointer]
    assert flagged["refresh"] == [{"id": "previous-summary", "reason": "conflicts_with_current_direct_evidence",
                                   "conflictsWith": ["current-failure"]}]


def test_demo_three_of_eight():
    failure = {
        "id": "failure-output", "kind": "direct-evidence", "source": "injected:test-output",
        "capturedAt": "2026-07-15", "relevance": "current", "freshness": "fresh", "sizeUnits": 3,
        "content": "assertion failure summary",
    }
    log = {
        "id": "large-ci-log", "kind": "reference", "source": "injected:ci", "capturedAt": "2026-07-15",
        "relevance": "background", "freshness": "fresh", "sizeUnits": 9,
        "reference": "injected:ci-log#auth-test", "loadWhen": "assertion points to the auth module",
    }
    assert run([failure, log], budget=8) == ready(
        [failure],
        [{"id": "large-ci-log", "reference": "injected:ci-log#auth-test",
          "loadWhen": "assertion points to the auth module"}],
        3, 8,
    )


def _error(payload: dict) -> PacketInputError:
    with pytest.raises(PacketInputError) as info:
        build_packet(payload)
    return info.value


def _payload(**override) -> dict:
    return {"taskAnchor": A, "budgetUnits": 8, "candidates": [CF], **override}


@pytest.mark.parametrize(
    ("payload", "field", "reason"),
    [
        (_payload(taskAnchor={k: v for k, v in A.items() if k != "stopCondition"}),
         "input.taskAnchor.stopCondition", "required"),
        (_payload(taskAnchor={**A, "goal": ""}), "input.taskAnchor.goal", "empty"),
        (_payload(taskAnchor={**A, "extra": "x"}), "input.taskAnchor.extra", "unknown_field"),
        (_payload(budgetUnits=0), "input.budgetUnits", "out_of_range"),
        (_payload(budgetUnits=2.5), "input.budgetUnits", "not_integer"),
        (_payload(budgetUnits=True), "input.budgetUnits", "not_integer"),
        (_payload(budgetUnits="8"), "input.budgetUnits", "not_integer"),
        (_payload(candidates=[CF, {**CF, "kind": "doc"}]), "input.candidates[1].kind", "not_one_of"),
        (_payload(candidates=[{**CF, "sizeUnits": 0}]), "input.candidates[0].sizeUnits", "out_of_range"),
        (_payload(candidates=[{**CF, "sizeUnits": True}]), "input.candidates[0].sizeUnits", "not_integer"),
        (_payload(candidates=[{**CF, "conflictsWith": [""]}]), "input.candidates[0].conflictsWith[0]", "empty"),
        (_payload(candidates=[{**CF, "conflictsWith": "x"}]), "input.candidates[0].conflictsWith", "invalid_format"),
        (_payload(candidates=[{**CF, "relevance": "now"}]), "input.candidates[0].relevance", "not_one_of"),
        (_payload(candidates=[{**CF, "source": 3}]), "input.candidates[0].source", "not_string"),
        (_payload(candidates=[{**CF, "trust": "model"}]), "input.candidates[0].trust", "not_one_of"),
        (_payload(candidates=[{**CF, "flags": [1]}]), "input.candidates[0].flags[0]", "not_string"),
        (_payload(candidates=[{**CF, "extra": 1}]), "input.candidates[0].extra", "unknown_field"),
        (_payload(candidates=[{k: v for k, v in CF.items() if k != "id"}]), "input.candidates[0].id", "required"),
        (_payload(candidates={"id": "x"}), "input.candidates", "invalid_format"),
        (_payload(conflictsIncludePointers="yes"), "input.conflictsIncludePointers", "not_boolean"),
        (_payload(retrieve={"goal": "x"}), "input.retrieve", "unknown_field"),
        ({"budgetUnits": 8, "candidates": []}, "input.taskAnchor", "required"),
    ],
)
def test_d1a_invalid_input_raises(payload, field, reason):
    err = _error(payload)
    assert (err.field, err.reason) == (field, reason)
    assert isinstance(err, ValueError)


def test_d1a_error_details_for_the_cli():
    assert _error(_payload(candidates=[{**CF, "kind": "doc"}])).details == {
        "field": "input.candidates[0].kind", "reason": "not_one_of", "value": "doc",
        "allowed": ["constraint", "direct-evidence", "history-summary", "reference"],
    }
    assert _error(_payload(budgetUnits=0)).details == {
        "field": "input.budgetUnits", "reason": "out_of_range", "value": 0,
    }
    assert "retrieve" not in REQUEST_FIELDS


def test_integral_floats_are_integers():
    out = run([{**CF, "sizeUnits": 3.0}], budget=4.0)
    assert out == ready([CF], [], 3, 4)
    assert json.dumps(out) == json.dumps(ready([CF], [], 3, 4))


def test_null_optional_fields_count_as_absent():
    out = run([{**CF, "source": None}])
    assert out["unknowns"] == [{"id": "current-failure", "missing": ["source"]}]
    assert run([{**CF, "reference": None, "trust": None, "flags": None}]) == ready([CF], [], 3, 8)


def test_d1e_stable_order_within_a_kind():
    b = {**CF, "id": "B", "sizeUnits": 5, "reference": "ref:B"}
    a = {**CF, "id": "A", "sizeUnits": 5, "reference": "ref:A"}
    a_plain = {k: v for k, v in a.items() if k != "reference"}
    b_out = {k: v for k, v in b.items() if k != "reference"}
    assert run([b, a], budget=5) == ready(
        [b_out], [{"id": "A", "reference": "ref:A", "loadWhen": "when the packet needs full content"}], 5, 5,
    )
    assert run([b, a_plain], budget=5) == ready(
        [b_out], [], 5, 5, [{"id": "A", "reason": "over_budget_without_reference"}],
    )


def test_d1f_reference_kind_is_never_selected_in_full():
    doc = {**CF, "id": "doc", "kind": "reference", "sizeUnits": 1, "reference": "docs/auth.md"}
    assert run([doc], budget=8) == ready(
        [], [{"id": "doc", "reference": "docs/auth.md", "loadWhen": "when the packet needs full content"}], 0, 8,
    )


def test_d1g_expired_constraint_needs_no_refresh():
    rule = {**CF, "id": "old-rule", "kind": "constraint", "freshness": "expired"}
    assert run([rule]) == ready([], [], 0, 8, [{"id": "old-rule", "reason": "expired"}])


def test_missing_content_and_reference_is_excluded():
    bare = {k: v for k, v in CF.items() if k != "content"} | {"content": "", "reference": ""}
    assert run([bare])["excluded"] == [{"id": "current-failure", "reason": "missing_content_and_reference"}]


def test_labels_follow_the_candidate_and_only_when_carried():
    labelled = {**CF, "trust": "evidence", "flags": ["instruction_override"]}
    doc = {**PS, "id": "doc", "kind": "reference", "reference": "docs/a.md", "loadWhen": "",
           "trust": "repository", "flags": []}
    out = run([doc, labelled])
    assert out["packet"]["selected"] == [labelled]
    assert list(out["packet"]["selected"][0]) == [
        "id", "kind", "source", "capturedAt", "relevance", "freshness", "sizeUnits", "content", "trust", "flags",
    ]
    assert out["packet"]["pointers"] == [{"id": "doc", "reference": "docs/a.md",
                                          "loadWhen": "when the packet needs full content",
                                          "trust": "repository", "flags": []}]


@pytest.mark.parametrize(
    "candidates",
    [[CF], [{**CF, "source": ""}], [{**CF, "freshness": "expired"}], []],
)
def test_d1i_always_seven_keys_never_a_string(candidates):
    result = build_packet(_payload(candidates=candidates))
    assert isinstance(result, PacketResult)
    out = result.to_dict()
    assert isinstance(out, dict)
    assert list(out) == RESULT_KEYS
    if out["packet"] is not None:
        assert list(out["packet"]) == ["taskAnchor", "selected", "pointers", "usedBudgetUnits", "budgetUnits"]


def test_typed_request_and_input_untouched():
    payload = _payload(candidates=[PS, {**CF, "conflictsWith": ["x"]}])
    before = copy.deepcopy(payload)
    request = PacketRequest.from_dict(payload)
    assert build_packet(request) == build_packet(payload)
    assert payload == before
    assert request.candidates[1].conflicts_with == ("x",)
