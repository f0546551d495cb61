"""Properties of `tune`'s split and search ordering and of `eval run`'s baseline gate."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from ragit.evaluation.baseline import GATED, Baseline, regressions
from ragit.evaluation.tasks import Task
from ragit.evaluation.tune import _rank_key, split_tasks

IDS = st.lists(st.text(alphabet="abcdef0123456789@/-", min_size=1, max_size=16), unique=True, max_size=60)


def _task(i: int, ident: str) -> Task:
    return Task(line=i, id=ident, repo="r", commit="0" * 40, query="q", gold=("a.py",))


@given(IDS, st.randoms(use_true_random=False))
@settings(max_examples=60, deadline=None)
def test_split_is_a_partition_decided_by_each_id_alone(ids, rnd):
    tasks = [_task(i, x) for i, x in enumerate(ids)]
    train, held = split_tasks(tasks)
    assert sorted(t.id for t in train + held) == sorted(ids)
    assert not {t.id for t in train} & {t.id for t in held}
    shuffled = list(tasks)
    rnd.shuffle(shuffled)
    train2, held2 = split_tasks(shuffled[: len(shuffled) // 2])  # another order, a subset
    assert {t.id for t in held2} <= {t.id for t in held} and {t.id for t in train2} <= {t.id for t in train}


METRIC = st.floats(min_value=0, max_value=1, allow_nan=False)


@given(st.lists(st.tuples(METRIC, METRIC, METRIC, st.integers(0, 6)), min_size=1, max_size=12))
@settings(max_examples=60, deadline=None)
def test_search_prefers_r5_then_mrr_then_fewer_changes(rows):
    keys = [_rank_key({"recallAt5": a, "mrr": b, "recallAt10": c, "ndcgAt10": None}, n, i)
            for i, (a, b, c, n) in enumerate(rows)]
    best = max(range(len(rows)), key=keys.__getitem__)
    top_r5 = max(round(a, 9) for a, _, _, _ in rows)
    assert round(rows[best][0], 9) == top_r5
    rivals = [r for r in rows if round(r[0], 9) == top_r5]
    assert round(rows[best][1], 9) == max(round(r[1], 9) for r in rivals)


@given(st.lists(st.tuples(METRIC, METRIC), min_size=4, max_size=4), st.floats(min_value=0, max_value=1))
@settings(max_examples=100, deadline=None)
def test_gate_reports_exactly_the_drops_beyond_max_drop(pairs, max_drop):
    from ragit.contract.jsonout import round6

    before = {"mode": "hybrid", **{m: round6(b) for m, (b, _) in zip(GATED, pairs)}}
    now = {"mode": "hybrid", **{m: v for m, (_, v) in zip(GATED, pairs)}}
    found = regressions(Baseline("b.json", max_drop, {"hybrid": before}), [now])
    flagged = {r["metric"] for r in found}
    for m in GATED:
        drop = before[m] - round6(now[m])
        if drop > max_drop + 1e-6:
            assert m in flagged
        if drop <= max_drop:
            assert m not in flagged
    # an unchanged run never regresses, whatever the allowance
    assert regressions(Baseline("b.json", 0.0, {"hybrid": before}), [dict(before)]) == []
