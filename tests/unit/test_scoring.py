"""Worked scoring examples of knowledge §12.4 and the breakdown of §12.6."""

from __future__ import annotations

import pytest

from ragit.contract.jsonout import round6
from ragit.retrieve.scoring import authority_score, breakdown, recency_score, sort_key
from ragit.clock import parse_iso


def test_hybrid_example():
    b = breakdown("hybrid", 0.8, 0.2, 0.7, 1.0, 1.0)
    assert round6(b["retrieval"]["score"]) == 0.62


def test_bm25_normalisation_example_orders_b_a_c():
    raw = {"A": 4.2, "B": 2.1}
    best = max(raw.values())
    keyword = {c: raw.get(c, 0.0) / best for c in "ABC"}
    assert keyword == {"A": 1.0, "B": 0.5, "C": 0.0}
    cos = {"A": 0.50, "B": 0.90, "C": 0.80}
    final = {c: breakdown("hybrid", cos[c], keyword[c], 0.7, 1.0, 1.0)["final"] for c in "ABC"}
    assert {c: round6(v) for c, v in final.items()} == {"A": 0.72, "B": 0.824, "C": 0.648}
    assert sorted(final, key=lambda c: -final[c]) == ["B", "A", "C"]


def test_breakdown_example_sums_exactly():
    b = breakdown("hybrid", 0.8, 0.2, 0.7, 0.9, 0.6)
    r = b["retrieval"]
    assert round6(r["inputs"]["vector"]["contribution"]) == 0.56
    assert round6(r["inputs"]["keyword"]["contribution"]) == 0.06
    assert round6(r["score"]) == 0.62
    assert round6(r["contribution"]) == 0.496
    assert round6(b["authority"]["contribution"]) == 0.135
    assert round6(b["recency"]["contribution"]) == 0.03
    assert round6(b["final"]) == 0.661
    assert b["final"] == r["contribution"] + b["authority"]["contribution"] + b["recency"]["contribution"]
    assert r["score"] == r["inputs"]["vector"]["contribution"] + r["inputs"]["keyword"]["contribution"]


def test_keyword_mode_example():
    b = breakdown("keyword", 0.9, 0.5, 0.7, 0.8, 1.0)
    v = b["retrieval"]["inputs"]["vector"]
    assert (v["score"], v["weight"], v["contribution"]) == (0.9, 0.0, 0.0)
    k = b["retrieval"]["inputs"]["keyword"]
    assert (k["score"], k["weight"], k["contribution"]) == (0.5, 1.0, 0.5)
    assert round6(b["final"]) == 0.57


def test_reviewed_harness_artifact_example():
    now = parse_iso("2026-03-08T10:00:00.000Z")
    recency = recency_score(parse_iso("2026-03-02T10:00:00.000Z"), now)
    assert round6(recency) == 0.8
    b = breakdown("hybrid", 0.5, 1.0, 0.7, authority_score("harness", "reviewed_harness"), recency)
    assert round6(b["final"]) == 0.695


@pytest.mark.parametrize("days,expected", [(0, 1.0), (12, 0.6), (24, 0.2), (100, 0.2)])
def test_recency_curve(days, expected):
    now = parse_iso("2026-03-30T00:00:00.000Z")
    from datetime import timedelta

    assert round6(recency_score(now - timedelta(days=days), now)) == expected
    assert recency_score(None, now) == 1.0


@pytest.mark.parametrize(
    "scope,label,status,expected",
    [
        ("durable", None, None, 1.0),
        ("session", "promoted_durable", None, 1.0),
        ("harness", None, None, 0.9),
        ("session", "reviewed_harness", None, 0.9),
        ("session", None, None, 0.8),
        ("evidence", None, None, 0.4),
        ("evidence", None, "promoted", 1.0),
        ("other", None, None, 0.6),
    ],
)
def test_authority(scope, label, status, expected):
    assert authority_score(scope, label, status) == expected


def test_tie_break_is_path_then_section():
    hits = [("b.md", "A"), ("a.md", "B"), ("a.md", "A")]
    ordered = sorted(hits, key=lambda h: sort_key(0.5, h[0], h[1], "cite-x", "c"))
    assert ordered == [("a.md", "A"), ("a.md", "B"), ("b.md", "A")]
