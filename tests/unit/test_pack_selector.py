"""The citation-diverse-v2 selector: worked examples of context §1.5 and its invariants."""

from __future__ import annotations

import pytest
from hypothesis import given, settings, strategies as st

from ragit.context.pack import NO_HIT_WARNING, family, select_hits
from ragit.retrieve.hits import Hit


def hit(name: str, text: str, path: str, *, cite: str | None = None, source_type: str = "document",
        artifact_id: str | None = None, source_id: str | None = None) -> Hit:
    return Hit(
        path=path, start_line=1, end_line=1, section_title=name, doc_type="doc", score_final=0.5,
        score_vector=0.0, score_keyword=0.0,
        citation={"id": cite or f"cite-{name}", "sourceType": source_type, "sourceId": source_id or name,
                  "sourceVersion": "v", "sourceSha": "s"},
        scope="durable", origin_type="document", artifact_id=artifact_id, artifact_kind=None,
        authority="promoted_durable", confidence=None, trust="repository", text=text, chunk_id=name, breakdown={},
    )


def names(sel):
    return [h.section_title for h in sel.hits]


def test_diversity_then_fill():
    hits = [hit("a1", "one two", "docs/a.md"), hit("a2", "one", "docs/a.md"),
            hit("b1", "one two", "docs/b.md"), hit("c1", "one two", "docs/c.md")]
    sel = select_hits(hits, 7)
    assert names(sel) == ["a1", "b1", "c1", "a2"]
    assert sel.used_tokens == 7
    assert sel.summary() == {"strategy": "citation-diverse-v2", "candidateHits": 4, "uniqueCitations": 4,
                             "selectedSources": 3, "duplicateCitationsSkipped": 0, "budgetRejectedHits": 0}


def test_oversized_first_hit_is_skipped():
    sel = select_hits([hit("big", "one two three four", "docs/a.md"), hit("small", "one two", "docs/b.md")], 2)
    assert names(sel) == ["small"]
    assert sel.used_tokens == 2
    assert sel.budget_rejected_hits == 1


def test_duplicate_citation_keeps_first():
    sel = select_hits([hit("x", "one", "docs/a.md", cite="cite-same"), hit("y", "two", "docs/b.md", cite="cite-same")], 10)
    assert names(sel) == ["x"]
    s = sel.summary()
    assert (s["candidateHits"], s["uniqueCitations"], s["duplicateCitationsSkipped"], s["budgetRejectedHits"],
            s["selectedSources"]) == (2, 1, 1, 0, 1)


def test_nothing_fits_warns():
    sel = select_hits([hit("x", "one two", "docs/a.md")], 1)
    assert sel.hits == () and sel.used_tokens == 0
    assert sel.warnings == (NO_HIT_WARNING,)
    assert NO_HIT_WARNING == "context pack budget admitted no complete hit"


def test_too_large_first_hit_does_not_block_its_family():
    sel = select_hits([hit("a1", "one two three", "docs/a.md"), hit("a2", "one", "docs/a.md"),
                       hit("b1", "one", "docs/b.md")], 2)
    assert names(sel) == ["a2", "b1"]


def test_family_strings():
    assert family(hit("d", "x", "docs/a.md")) == "document:docs/a.md"
    assert family(hit("a", "x", "p", source_type="artifact", artifact_id="artifact-record")) == "artifact:artifact-record"
    assert family(hit("a", "x", "p", source_type="artifact", source_id="citation-artifact")) == "artifact:citation-artifact"
    assert family(hit("e", "x", "p", source_type="evidence", artifact_id="artifact-record")) == "evidence:artifact-record"
    assert family(hit("e", "x", "p", source_type="evidence", source_id="artifact-record:evidence-1")) == \
        "evidence:artifact-record:evidence-1"


@pytest.mark.parametrize("budget", [0, -1, 1.5, 2**53, float("inf"), float("nan"), True, "5"])
def test_invalid_budgets_rejected(budget):
    with pytest.raises(ValueError, match="context budget must be a positive safe integer"):
        select_hits([], budget)


def test_max_safe_budget_accepted():
    assert select_hits([hit("x", "one", "a.md")], 2**53 - 1).used_tokens == 1


word = st.sampled_from(["alpha", "beta", "gamma", "delta"])
hit_spec = st.tuples(st.lists(word, min_size=0, max_size=8), st.integers(0, 4), st.integers(0, 6))


@given(st.lists(hit_spec, max_size=30), st.integers(1, 40))
def test_invariants(specs, budget):
    hits = [hit(f"h{i}", " ".join(words), f"docs/{p}.md", cite=f"cite-{c}") for i, (words, p, c) in enumerate(specs)]
    before = [(h.citation_id, h.text) for h in hits]
    sel = select_hits(hits, budget)
    s = sel.summary()
    assert sel.used_tokens <= budget
    assert sel.used_tokens == sum(len(h.text.split()) for h in sel.hits)
    assert s["uniqueCitations"] == len(sel.hits) + s["budgetRejectedHits"]
    assert s["candidateHits"] == s["uniqueCitations"] + s["duplicateCitationsSkipped"]
    assert len({h.citation_id for h in sel.hits}) == len(sel.hits)
    assert [(h.citation_id, h.text) for h in hits] == before
    assert select_hits(hits, budget) == sel


# ---------------------------------------------------------------- budget in tokens (context §1.1, §1.3)

def test_token_cost_uses_the_counter_over_the_complete_text():
    from ragit.context.pack import token_cost
    from ragit.window.tokens import get_counter

    counter, _ = get_counter("heuristic")
    hits = [hit("a", "x" * 40, "docs/a.md"), hit("b", "y" * 12, "docs/b.md"), hit("c", "z" * 8, "docs/c.md")]
    sel = select_hits(hits, 13, token_cost(counter))  # costs 10, 3, 2
    assert names(sel) == ["a", "b"] and sel.used_tokens == 13
    assert select_hits(hits, 13).used_tokens == 3  # words: one each


text_piece = st.text(alphabet=st.sampled_from("ab cdé\n世界"), max_size=60)


@pytest.mark.parametrize("counter_name", ["heuristic", "o200k_base"])
@settings(deadline=None)  # the first o200k_base example loads and verifies the rank file
@given(st.lists(st.tuples(text_piece, st.integers(0, 4), st.integers(0, 6)), max_size=30), st.integers(1, 60))
def test_token_budget_is_never_exceeded(counter_name, specs, budget):
    from ragit.context.pack import token_cost
    from ragit.window.tokens import get_counter

    counter, _ = get_counter(counter_name)  # the heuristic when the rank file is unavailable
    hits = [hit(f"h{i}", text, f"docs/{p}.md", cite=f"cite-{c}") for i, (text, p, c) in enumerate(specs)]
    sel = select_hits(hits, budget, token_cost(counter))
    s = sel.summary()
    assert sel.used_tokens == sum(counter.count_text(h.text) for h in sel.hits) <= budget
    assert s["uniqueCitations"] == len(sel.hits) + s["budgetRejectedHits"]
    assert s["candidateHits"] == s["uniqueCitations"] + s["duplicateCitationsSkipped"]
    assert select_hits(hits, budget, token_cost(counter)) == sel
