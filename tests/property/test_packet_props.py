"""Properties of the context packet (context.md §2.3 D.1.h, D.1.j) and its determinism."""

from __future__ import annotations

import copy
import json
import random
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from ragit.context.packet import KINDS, build_packet

ANCHOR = {"goal": "g", "stopCondition": "s", "verificationTarget": "v"}
ABSENT = object()


def _maybe(values: st.SearchStrategy[Any]) -> st.SearchStrategy[Any]:
    return st.one_of(st.just(ABSENT), st.none(), values)


@st.composite
def candidate_lists(draw: st.DrawFn) -> list[dict[str, Any]]:
    """Unique ids ``c0..cN``; gaps are rare enough that most lists reach selection."""
    count = draw(st.integers(0, 8))
    allow_gaps = draw(st.booleans())
    provenance = st.sampled_from(["", "src"]) if allow_gaps else st.just("src")
    ids = [f"c{i}" for i in range(count)]
    out = []
    for cid in ids:
        fields: dict[str, Any] = {
            "id": cid,
            "kind": draw(st.sampled_from(KINDS)),
            "relevance": draw(st.sampled_from(["current", "background"])),
            "freshness": draw(st.sampled_from(["fresh", "fresh", "expired"])),
            "sizeUnits": draw(st.integers(1, 12)),
            "source": draw(_maybe(provenance) if allow_gaps else provenance),
            "capturedAt": draw(_maybe(provenance) if allow_gaps else provenance),
            "content": draw(_maybe(st.sampled_from(["", "text", "more text"]))),
            "reference": draw(_maybe(st.sampled_from(["", "ref:x"]))),
            "loadWhen": draw(_maybe(st.sampled_from(["", "when needed"]))),
            "conflictsWith": draw(_maybe(st.lists(st.sampled_from(ids + ["other"]), max_size=3))),
            "trust": draw(_maybe(st.sampled_from(["repository", "artifact", "evidence"]))),
            "flags": draw(_maybe(st.lists(st.sampled_from(["role_markup", "tool_call_markup"]), max_size=2))),
        }
        out.append({k: v for k, v in fields.items() if v is not ABSENT})
    return out


requests = st.builds(
    lambda cands, budget, include: {
        "taskAnchor": dict(ANCHOR), "budgetUnits": budget, "candidates": cands,
        **({} if include is ABSENT else {"conflictsIncludePointers": include}),
    },
    candidate_lists(),
    st.integers(1, 20),
    _maybe(st.booleans()),
)


def _shuffled(value: Any, rng: random.Random) -> Any:
    """The same JSON value with every object's keys in a random order."""
    if isinstance(value, dict):
        keys = list(value)
        rng.shuffle(keys)
        return {k: _shuffled(value[k], rng) for k in keys}
    if isinstance(value, list):
        return [_shuffled(v, rng) for v in value]
    return value


def _gap(candidate: dict[str, Any]) -> list[str]:
    return [k for k in ("source", "capturedAt") if not candidate.get(k)]


@settings(max_examples=300)
@given(requests)
def test_d1h_used_never_exceeds_budget(request):
    packet = build_packet(request).to_dict()["packet"]
    if packet is not None:
        assert packet["usedBudgetUnits"] <= packet["budgetUnits"] == request["budgetUnits"]


@settings(max_examples=300)
@given(requests, st.randoms(use_true_random=False))
def test_d1j_every_candidate_has_exactly_one_outcome(request, rng):
    before = copy.deepcopy(request)
    out = build_packet(request).to_dict()
    assert request == before
    assert json.dumps(build_packet(_shuffled(request, rng)).to_dict()) == json.dumps(out)

    cands = request["candidates"]
    gaps = [{"id": c["id"], "missing": _gap(c)} for c in cands if _gap(c)]
    if out["state"] == "blocked":
        assert gaps and out["unknowns"] == gaps
        assert out["phase"] == "missing_provenance" and out["packet"] is None
        assert out["excluded"] == [] and out["refresh"] == []
        return

    assert not gaps and out["unknowns"] == []
    packet = out["packet"]
    selected = [s["id"] for s in packet["selected"]]
    pointers = [p["id"] for p in packet["pointers"]]
    excluded = {e["id"]: e["reason"] for e in out["excluded"]}
    refresh = {r["id"]: r["reason"] for r in out["refresh"]}
    assert len(excluded) == len(out["excluded"]) and len(refresh) == len(out["refresh"])
    assert sorted(selected + pointers + list(excluded)) == sorted(c["id"] for c in cands)
    assert set(refresh) <= set(excluded)
    for cid, reason in refresh.items():
        assert (excluded[cid], reason) in {
            ("expired", "direct_evidence_expired"),
            ("conflicting_history_summary", "conflicts_with_current_direct_evidence"),
        }

    by_id = {c["id"]: c for c in cands}
    assert packet["usedBudgetUnits"] == sum(by_id[i]["sizeUnits"] for i in selected)
    assert packet["usedBudgetUnits"] <= packet["budgetUnits"] == request["budgetUnits"]
    assert all(by_id[i]["kind"] != "reference" and by_id[i]["freshness"] == "fresh" for i in selected)
    order = [KINDS.index(by_id[i]["kind"]) for i in selected]
    assert order == sorted(order)
    expected = ("refresh_required", "refresh_context") if refresh else ("ready", "assembled")
    assert (out["state"], out["phase"]) == expected


@settings(max_examples=200)
@given(requests)
def test_same_input_gives_identical_json(request):
    first = json.dumps(build_packet(request).to_dict(), ensure_ascii=False)
    assert json.dumps(build_packet(copy.deepcopy(request)).to_dict(), ensure_ascii=False) == first
    assert json.dumps(build_packet(request).to_dict(), ensure_ascii=False) == first
