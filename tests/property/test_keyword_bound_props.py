"""The bounded keyword path gives the answer of full scoring, bit for bit (ragit.retrieve.keyword_bound).

Random postings, snapshots, questions, vectors and filters, with few distinct term counts, row
lengths and vector values so that scores tie often (ties are where a pool cut could differ):

* ``SnapshotKeyword.full`` equals a straightforward BM25 reference (the pre-bound code), and
  ``exact(rows)`` equals ``full()[rows]`` for any rows (lookup and accumulator modes);
* ``top(k)`` keeps its promise: every other row scores at most the bound, and k eligible rows
  score more than a positive bound; every term's share stays under its bound;
* ``pool_raw`` agrees with the full array on every pool row and on the best eligible score;
* ``rank_hits`` on the on-demand scorer returns the same hits (scores, breakdowns) as on the
  full array, with and without the re-rank, filters and overlay scores.
"""

from __future__ import annotations

from dataclasses import asdict

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from ragit.retrieve import keyword_bound
from ragit.retrieve.keyword_bound import pool_raw
from ragit.retrieve.rerank import pool_indices
from ragit.retrieve.search import RetrievalParams, RowFilter, SnapshotScores, rank_hits
from ragit.store.base import ChunkRow
from ragit.store.bm25 import B, K1, RowPositions, SnapshotKeyword, idf

@pytest.fixture(autouse=True, scope="module")
def bound_every_size():
    """The bound runs on snapshots of any size here (it starts at BOUNDED_MIN_ROWS in use)."""
    saved = keyword_bound.BOUNDED_MIN_ROWS
    keyword_bound.BOUNDED_MIN_ROWS = 0
    yield
    keyword_bound.BOUNDED_MIN_ROWS = saved


SETTINGS = settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
VOCAB = [f"w{i}" for i in range(8)]


def reference_scores(index, terms, rowids, lengths):
    """BM25 of every snapshot row as ragit computed it before the bound (binary-search restrict,
    snapshot-wide norm, scatter per term occurrence)."""
    n = len(rowids)
    score = np.zeros(n, dtype=np.float64)
    if not terms or not n:
        return score
    total = float(lengths.sum())
    avgdl = total / n if total > 0 else 1.0
    norm = K1 * (1.0 - B + B * lengths / avgdl)
    for term in terms:
        ids, tf = index.get(term, (np.zeros(0, dtype=np.int64), np.zeros(0)))
        pos = np.minimum(np.searchsorted(rowids, ids), n - 1)
        inside = rowids[pos] == ids
        pos, tf = pos[inside], tf[inside]
        weight = idf(n, len(pos)) if len(pos) else 0.0
        if weight and len(pos):
            score[pos] += weight * ((tf * (K1 + 1.0)) / (tf + norm[pos]))
    return score


@st.composite
def worlds(draw):
    """A store's postings, one snapshot's rows (contiguous or not), lengths and a question."""
    seed = draw(st.integers(0, 2**32 - 1))
    rng = np.random.default_rng(seed)
    n_store = draw(st.integers(1, 400))
    shape = draw(st.sampled_from(["contiguous", "gaps", "sparse"]))
    if shape == "contiguous":
        first = int(rng.integers(1, 50))
        rowids = np.arange(first, first + n_store, dtype=np.int64)
    else:
        high = n_store * (2 if shape == "gaps" else 40) + 2
        rowids = np.unique(rng.integers(1, high, size=n_store)).astype(np.int64)
    top_id = int(rowids[-1]) + 20
    index = {}
    for term in VOCAB:
        share = draw(st.sampled_from([0.0, 0.02, 0.1, 0.4, 0.9]))
        ids = np.flatnonzero(rng.random(top_id) < share).astype(np.int64)
        index[term] = (ids, rng.integers(1, 4, size=len(ids)).astype(np.float64))
    lengths = rng.choice(np.array([3, 5, 8, 13], dtype=np.int32), size=len(rowids))
    terms = draw(st.lists(st.sampled_from(VOCAB + ["absent"]), min_size=0, max_size=7))
    return index, rowids, lengths, terms, rng


def scorer_of(index, terms, rowids, lengths):
    empty = (np.zeros(0, dtype=np.int64), np.zeros(0))
    return SnapshotKeyword(lambda t: index.get(t, empty), terms, rowids, lengths)


@SETTINGS
@given(worlds(), st.integers(1, 30))
def test_a_warm_snapshots_lent_arrays_come_back_clean(world, k):
    """With the snapshot's RowPositions (a warm process) exact() and top() borrow one mark and
    accumulator question after question: the same floats every time, and both clean after."""
    index, rowids, lengths, terms, rng = world
    positions = RowPositions(rowids)
    for _ in range(3):
        scorer = SnapshotKeyword(lambda t: index.get(t, (np.zeros(0, dtype=np.int64), np.zeros(0))),
                                 list(rng.choice(terms, size=len(terms))) if terms else [], rowids, lengths,
                                 positions=positions)
        full = scorer.full()
        for size in (1, len(rowids)):
            rows = np.sort(rng.choice(len(rowids), size=min(size, len(rowids)), replace=False))
            assert scorer.exact(rows).tobytes() == full[rows].tobytes()
        rows, scores, _ = scorer.top(k)
        assert scores.tobytes() == full[rows].tobytes()
        for mark, acc in positions.__dict__.get("_scratch", []):
            assert not mark.any() and not acc.any()


@SETTINGS
@given(worlds(), st.integers(1, 30))
def test_full_exact_and_top_agree_with_the_reference(world, k):
    index, rowids, lengths, terms, rng = world
    scorer = scorer_of(index, terms, rowids, lengths)
    full = scorer.full()
    assert full.tobytes() == reference_scores(index, terms, rowids, lengths).tobytes()
    for size in (1, 3, len(rowids)):  # few rows: lookups; many: the accumulator
        rows = np.sort(rng.choice(len(rowids), size=min(size, len(rowids)), replace=False))
        assert scorer.exact(rows).tobytes() == full[rows].tobytes()
    eligible = rng.random(len(rowids)) < 0.7 if rng.random() < 0.5 else None
    rows, scores, bound = scorer.top(k, eligible)
    assert np.all(np.diff(rows) > 0)
    assert scores.tobytes() == full[rows].tobytes()
    outside = np.ones(len(rowids), dtype=bool)
    outside[rows] = False
    assert np.all(full[outside] <= bound)
    if bound > 0:
        live = scores if eligible is None else scores[eligible[rows]]
        assert int((live > bound).sum()) >= k
    else:
        assert np.all(full[outside] == 0)
    for term, limit in scorer.term_bounds().items():
        pos, tf, weight = scorer.terms[term]
        share = weight * ((tf * (K1 + 1.0)) / (tf + scorer._norm(pos)))
        assert np.all(share * scorer.sequence.count(term) <= limit)


@SETTINGS
@given(worlds(), st.integers(1, 30))
def test_best_is_the_top_k_of_full_scoring_and_held_reads_agree(world, k):
    """best(k): the k best matching rows of full() (ties at the cut: the lowest positions), as
    top(k) cut by best_matches gives them, whether its rows come from the reaching postings or
    from a scan of the held scores (bm25.SCAN_POSTINGS) and whether the accumulator adds a term's
    postings at once or in blocks (bm25.SHARE_BLOCK); while held, exact() reads give full()'s
    floats, and release() leaves the lent arrays clean."""
    from ragit.store import bm25
    from ragit.store.bm25 import best_matches

    index, rowids, lengths, terms, rng = world
    positions = RowPositions(rowids)
    empty = (np.zeros(0, dtype=np.int64), np.zeros(0))
    scorer = SnapshotKeyword(lambda t: index.get(t, empty), terms, rowids, lengths, positions=positions)
    full = scorer.full()
    matching = np.flatnonzero(full > 0)
    want = best_matches(matching, full[matching], k)
    top_rows, top_scores, _ = scorer.top(k)
    assert [a.tobytes() for a in best_matches(top_rows, top_scores, k)] == [a.tobytes() for a in want]
    saved = bm25.SCAN_POSTINGS, bm25.SHARE_BLOCK
    try:
        for scan, block in ((10**9, saved[1]), (0, 3)):  # always scan, whole terms; never scan, blocks of 3
            bm25.SCAN_POSTINGS, bm25.SHARE_BLOCK = scan, block
            for one in (scorer, scorer_of(index, terms, rowids, lengths)):  # kept shares (full() ran); none
                one.release()
                one.hold()
                rows, scores = one.best(k)
                assert rows.tobytes() == want[0].tobytes() and scores.tobytes() == want[1].tobytes()
    finally:
        bm25.SCAN_POSTINGS, bm25.SHARE_BLOCK = saved
    for size in (1, 3, len(rowids)):
        picked = np.sort(rng.choice(len(rowids), size=min(size, len(rowids)), replace=False))
        assert scorer.exact(picked).tobytes() == full[picked].tobytes()
    scorer.release()
    for mark, acc in positions.__dict__.get("_scratch", []):
        assert not mark.any() and not acc.any()


@SETTINGS
@given(worlds(), st.integers(1, 30))
def test_a_warm_snapshots_later_questions_score_the_same_bits(world, k):
    """From a snapshot's second question on, its positions keep every row's length normalisation
    (bm25._norms); full(), exact() and best() give the floats of a scorer without it."""
    index, rowids, lengths, terms, rng = world
    positions = RowPositions(rowids)
    empty = (np.zeros(0, dtype=np.int64), np.zeros(0))

    def ask(kept):
        return SnapshotKeyword(lambda t: index.get(t, empty), terms, rowids, lengths, positions=kept)

    cold = ask(None)
    ask(positions)
    warm = ask(positions)  # the second question with these positions: normalisations kept
    assert warm._norm_table is not None or not cold.sequence
    full = cold.full()
    assert warm.full().tobytes() == full.tobytes()
    picked = np.sort(rng.choice(len(rowids), size=min(3, len(rowids)), replace=False))
    assert warm.exact(picked).tobytes() == full[picked].tobytes()
    assert [a.tobytes() for a in warm.best(k)] == [a.tobytes() for a in cold.best(k)]


@SETTINGS
@given(worlds(), st.integers(1, 40), st.integers(1, 25), st.sampled_from([0.0, 0.3, 0.7, 1.0]), st.booleans())
def test_pool_raw_agrees_on_every_pool_row(world, pool, top_k, alpha, rerank):
    index, rowids, lengths, terms, rng = world
    n = len(rowids)
    scorer = scorer_of(index, terms, rowids, lengths)
    full = scorer.full()
    vector = rng.choice(np.array([-0.2, 0.1, 0.3, 0.5, 0.5000000001]), size=n)
    eligible = rng.random(n) < 0.8 if rng.random() < 0.4 else None
    overlay = [float(x) for x in rng.choice([0.0, 0.5, 3.0], size=int(rng.integers(0, 3)))]
    ours = pool_raw(scorer, vector, eligible, alpha, overlay, keyword_k=pool if rerank else 1,
                    fused_k=max(pool, 2 * top_k) if rerank else top_k, final_space=not rerank)

    def answer(raw):
        live = raw if eligible is None else raw[eligible]
        best = max([float(live.max()) if len(live) else 0.0] + overlay)
        keyword = np.where(raw > 0, raw / best, 0.0) if best > 0 else np.zeros(n)
        fused = alpha * vector + (1.0 - alpha) * keyword
        if eligible is not None:
            fused = np.where(eligible, fused, -np.inf)
        if rerank:
            chosen = pool_indices(fused, np.where(fused > -np.inf, keyword, -np.inf),
                                  np.where(fused > -np.inf, vector, -np.inf), pool, top_k,
                                  lambda p: p[np.argsort(-p)])  # any content order will do
        else:
            final = 0.8 * fused + 0.15 * 1.0 + 0.05 * 1.0
            kk = min(top_k, n)
            chosen = np.nonzero(final >= np.partition(final, n - kk)[n - kk])[0]
        if eligible is not None:
            chosen = chosen[eligible[chosen]]
        return best, chosen, keyword[chosen]

    best, chosen, keyword = answer(full)
    best2, chosen2, keyword2 = answer(ours)
    assert best == best2
    assert chosen.tolist() == chosen2.tolist()
    assert keyword.tobytes() == keyword2.tobytes()
    assert ours[chosen].tobytes() == full[chosen].tobytes()


class FakeStore:
    """The three reads rank_hits makes of a store, over made-up rows (few paths: file aggregation
    and diversity apply; equal titles and texts: ties reach the (path, chunk id) order)."""

    def __init__(self, rowids, rng):
        paths = [f"src/m{i % 7}.py" if i % 5 else f"tests/test_m{i % 3}.py" for i in range(len(rowids))]
        self.rows = {int(r): ChunkRow(path=paths[i], chunk_id=f"c{int(rng.integers(0, 10**6)):06d}{i}",
                                      blob_id="b", doc_type="code", title="function w1" if i % 9 == 0 else "t",
                                      start_line=1, end_line=2, text="def w1():\n  pass" if i % 11 == 0 else "x",
                                      citation_id=f"cite-{i:024x}", chunker_key="k+mask-1")
                     for i, r in enumerate(rowids)}

    def fetch_rows(self, sha, rowids, with_text=True):
        return {r: self.rows[r] for r in rowids if r in self.rows}

    def row_keys(self, rowids):
        return {r: (self.rows[r].path, self.rows[r].chunk_id) for r in rowids}

    def row_paths(self, rowids):
        return {r: self.rows[r].path for r in rowids}


@SETTINGS
@given(worlds(), st.integers(1, 12), st.sampled_from([0.3, 0.7, 1.0]), st.booleans(), st.booleans())
def test_rank_hits_gives_the_same_hits_as_full_scoring(world, top_k, alpha, rerank, filtered):
    index, rowids, lengths, terms, rng = world
    scorer = scorer_of(index, terms, rowids, lengths)
    store = FakeStore(rowids, rng)
    vector = rng.choice(np.array([0.05, 0.2, 0.4, 0.41]), size=len(rowids))
    params = RetrievalParams(alpha=alpha, rerank=rerank)
    params.rerank_weights = type(params.rerank_weights)(pool=int(rng.integers(1, 30)))
    row_filter = RowFilter(exclude_tests=True) if filtered else None
    question = "w1 " + " ".join(terms)
    full = rank_hits(store, "sha", SnapshotScores(rowids, vector, scorer.full()), (), params, top_k, question,
                     row_filter=row_filter)
    ours = rank_hits(store, "sha", SnapshotScores(rowids, vector, None, keyword=scorer), (), params, top_k,
                     question, row_filter=row_filter)
    assert [asdict(h) for h in ours] == [asdict(h) for h in full]


def test_row_positions_find_what_a_binary_search_finds():
    rng = np.random.default_rng(3)
    for rowids in (np.arange(10, 60, dtype=np.int64), np.unique(rng.integers(1, 200, size=80)),
                   np.unique(rng.integers(1, 10**7, size=50))):  # contiguous, table, binary search
        positions = RowPositions(rowids.astype(np.int64))
        ids = np.unique(rng.integers(0, int(rowids[-1]) + 30, size=300)).astype(np.int64)
        tf = rng.random(len(ids))
        pos, got_tf = positions.restrict(ids, tf)
        keep = np.isin(ids, rowids)
        assert pos.tolist() == np.searchsorted(rowids, ids[keep]).tolist()
        assert got_tf.tolist() == tf[keep].tolist()
    empty = RowPositions(np.zeros(0, dtype=np.int64))
    assert len(empty.restrict(np.array([1, 2], dtype=np.int64), np.ones(2))[0]) == 0
