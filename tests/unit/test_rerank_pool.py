"""The re-rank's fast path against the re-rank as first written (the oracle below, kept verbatim
but for names): every order, score and factor must come out the same, bit for bit, on random
pools (negative, zero and tied scores, C headers, bundled copies, tests, docs, names asked for).
``rank_hits`` builds its hits from ``rerank_pool`` and ``cochange_raises``, so they are what
keeps query results identical: they must equal the oracle followed by ``apply_cochange`` (whose
behaviour tests/integration/test_cochange.py pins)."""

from __future__ import annotations

import random
import re
from typing import Sequence

import pytest

from ragit.lexical import terms as lexical_terms
from ragit.pathroles import bundled_project, is_changelog, path_role, platform_twin
from ragit.retrieve.cochange_boost import apply_cochange, cochange_raises
from ragit.retrieve.rerank import (
    _ASKS,
    RerankInput,
    RerankResult,
    RerankWeights,
    _HEADERS,
    _SOURCES,
    _declares,
    _norm,
    _normalised,
    _path_parts,
    _role_factor,
    _split_ext,
    _title_names,
    read_question,
    rerank,
    rerank_pool,
)

PATHS = ["src/app.c", "src/app.h", "include/util.h", "src/util.c", "lib/json_reader.py", "lib/JsonReader.java",
         "tests/test_app.py", "docs/guide.md", "README.md", "examples/demo.py", "pkg/_vendor/urllib3/retry.py",
         "pkg/_vendor/six.py", "bench/bench_app.py", "config/settings.yaml", "lib/readers.py", "src/router.go",
         "src/router_test.go", "fixtures/data.json", "lib/reader.py", "src/tree.go", "CHANGES", "HISTORY.rst",
         "pkg/testsuite/helpers.py", "src/_pytest/rewrite.py", "testing/test_rewrite.py", "lib/history/log.py",
         "src/win/tcp.c", "src/unix/tcp.c", "src/win/core.c", "os/file_windows.go", "os/file_unix.go",
         "lib/testclient.py", "lib/reader.pyi", "types/index.d.ts", "types/index.js", "types/util.d.mts"]
TITLES = ["class JsonReader", "function field_validator", "def readers", "module", "func (r *Router) Handle",
          "method Client.send", "struct Tree", "", "class JsonReader", "namespace Tree"]
TEXTS = ["", "pub struct Engine {\n}\n", "def field_validator(x):\n    return x\n", "JsonReader reads json",
         "class JsonReader:\n    pass\n", "func addRoute() {}\n", "// class Engine is an example\nuse Engine;\n"]
QUESTIONS = ["JsonReader", "how are routes matched", "field_validator in readers", "retry urllib3", "app header",
             "add tests for the router", "docs for the reader", "Rails::Engine", "vendored six", "Tree insert",
             "fieldValidator util", "benchmark app", "reader changelog", "docs of the reader history",
             "where does pytest rewrite asserts", "pytest tests of rewrite", "history of the log",
             "tcp connect on windows", "how are files opened", "win32 core loop",
             "how does the test client send a request"]


# the helpers the re-rank as first written used

def defines(title: str, text: str, names) -> float:
    if not names:
        return 0.0
    defined, _ = _title_names(title)
    if defined:
        if defined in names:
            return 1.0
        if _norm(defined) in _normalised(tuple(names)):
            return 0.5
    return 1.0 if _declares(text, names) else 0.0


def _name_matches_stem(file_stem: str, names: Sequence[str]) -> bool:
    for k in _normalised(tuple(names)):
        if k and (k == file_stem or k + "s" == file_stem or k == file_stem + "s"):
            return True
    return False


_STUB = re.compile(r"\.pyi$|\.d\.[mc]?ts$")


def _header_stem(path: str) -> str | None:
    """The name a C/C++ header shares with its implementation file (``src/idna.h`` → ``idna``), or
    a Python stub or TypeScript declaration file with the implementation beside it (the path)."""
    name, ext = _split_ext(path)
    if ext in _HEADERS:
        return name
    stub = _STUB.search(path)
    return "\0" + path[:stub.start()] if stub else None


def _source_stems(paths: Sequence[str]) -> frozenset[str]:
    """Names of the C/C++/Objective-C source files among the candidates, and the paths (without
    the extension) of their Python, TypeScript and JavaScript files."""
    found = set()
    for p in set(paths):
        name, ext = _split_ext(p)
        if ext in _SOURCES:
            found.add(name)
        elif ext in (".py", ".ts", ".mts", ".cts", ".js", ".mjs", ".cjs") and not _STUB.search(p):
            found.add("\0" + p[:-len(ext)])
    return frozenset(found)


def _note(factors: list, i: int, name: str, value: float) -> None:
    if factors[i] is None:
        factors[i] = {}
    factors[i][name] = value


def reference_rerank(question: str, inp: RerankInput, weights: RerankWeights, top: int) -> RerankResult:
    """The re-rank as first written: one rule over every candidate at a time."""
    q = read_question(question)
    n = len(inp.paths)
    if not n:
        return RerankResult([], {})
    hybrid = inp.hybrid.tolist() if hasattr(inp.hybrid, "tolist") else [float(h) for h in inp.hybrid]
    best = max(hybrid)
    unit = best if best > 0 else 1.0
    paths = inp.paths
    factors: list[dict[str, float] | None] = [None] * n
    adjusted = list(hybrid)
    names = q.names if weights.definition or weights.path_name else ()
    path_words = weights.path_words and q.words and not q.symbol

    # definitions and path matches (facts about a path are computed once per file)
    path_boost: dict[str, float] = {}
    if weights.definition and names:
        titles, texts = inp.titles, inp.texts
        sureness = [defines(titles[i], texts[i], names) for i in range(n)]
        # (session 35) in a sentence, a name that definers in five or more files define tells none apart
        title_name = [_norm(_title_names(t)[0]) for t in titles]
        common = set()
        if not q.symbol:
            for name in {title_name[i] for i in range(n) if sureness[i] and title_name[i]}:
                if len({paths[i] for i in range(n) if sureness[i] and title_name[i] == name}) >= 5:
                    common.add(name)
        for i in range(n):
            sure = sureness[i] if title_name[i] not in common else 0.0
            if sure:
                boost = weights.definition * sure * unit
                adjusted[i] += boost
                factors[i] = {"definition": boost}
    for i, p in enumerate(paths):
        boost = path_boost.get(p)
        if boost is None:
            boost = 0.0
            file_stem, words = _path_parts(p)
            if weights.path_name and names and _name_matches_stem(file_stem, names):
                boost = weights.path_name * unit
            elif path_words:
                shared = len(q.words & words)
                if shared:
                    boost = weights.path_words * unit * shared / len(q.words)
            path_boost[p] = boost
        if boost:
            adjusted[i] += boost
            _note(factors, i, "path", boost)

    # file aggregation: the best chunk of each file gains with the file's summed evidence
    if weights.file:
        file_sum: dict[str, float] = {}
        file_best: dict[str, int] = {}
        for i in range(n):
            p = paths[i]
            h = hybrid[i]
            file_sum[p] = file_sum.get(p, 0.0) + (h if h > 0.0 else 0.0)
            j = file_best.get(p)
            if j is None or h > hybrid[j]:
                file_best[p] = i
        top_sum = max(file_sum.values())
        if top_sum > 0:
            for p, i in file_best.items():
                boost = weights.file * unit * file_sum[p] / top_sum
                if boost:
                    adjusted[i] += boost
                    _note(factors, i, "file", boost)

    # a word that names a source directory of the candidates (pytest's ``src/_pytest/``) asks for no role
    named = {d.strip("_").lower() for p in paths if path_role(p) == "source" for d in p.split("/")[:-1]}
    # ... nor does one that names a source module together with the word beside it ("test client")
    joined = {n.replace("_", "").replace("-", "").lower() for p in paths if path_role(p) == "source"
              for n in p.split("/")[:-1] + [p.rsplit("/", 1)[-1].split(".")[0]]}
    named |= {w for w, c in q.ask_compounds if c in joined or c in {j[:-1] for j in joined if j.endswith("s")}}
    asks = frozenset(role for role, words in _ASKS.items() if (q.ask_words - named) & set(words))

    # roles
    role_factor: dict[str, float] = {}
    for i, p in enumerate(paths):
        factor = role_factor.get(p)
        if factor is None:
            factor = role_factor[p] = _role_factor(path_role(p), asks, weights)
        if factor != 1.0:
            adjusted[i] *= factor
            _note(factors, i, "role", factor)

    # changelogs: below other docs, unless the question asks for one
    if weights.changelog != 1.0 and "changelog" not in asks:
        for i, p in enumerate(paths):
            if is_changelog(p):
                adjusted[i] *= weights.changelog
                _note(factors, i, "changelog", weights.changelog)

    # bundled third-party code: a copy of another project ranks below the project's own code,
    # unless the question names that project ("urllib3 retries") or asks for vendored code
    if weights.vendored != 1.0 and "vendored" not in asks:
        bundled: dict[str, bool] = {}
        for i, p in enumerate(paths):
            demote = bundled.get(p)
            if demote is None:
                project = bundled_project(p)
                demote = bundled[p] = project is not None and not (q.words & set(lexical_terms(project)))
            if demote:
                adjusted[i] *= weights.vendored
                _note(factors, i, "vendored", weights.vendored)

    # headers: a declaration file ranks below the implementation file of the same name
    if weights.header != 1.0:
        sources = _source_stems(paths)
        if sources:
            for i, p in enumerate(paths):
                header = _header_stem(p)
                if header is not None and header in sources:
                    adjusted[i] *= weights.header
                    _note(factors, i, "header", weights.header)

    # platform: code for Windows alone ranks below its twin for other systems, unless asked for
    if weights.platform != 1.0 and "windows" not in q.asks:
        portable = {platform_twin(p)[1] for p in paths if not platform_twin(p)[0]}
        for i, p in enumerate(paths):
            windows, twin = platform_twin(p)
            if windows and twin in portable:
                adjusted[i] *= weights.platform
                _note(factors, i, "platform", weights.platform)

    # import blocks: a file's import block, when it is the file's best candidate, trades scores
    # with the file's best other candidate
    for p in dict.fromkeys(paths):
        rows = [i for i in range(n) if paths[i] == p]
        if len(rows) < 2:
            continue
        first = max(rows, key=lambda i: adjusted[i])
        others = [i for i in rows if i not in inp.stand_ins]
        if first in inp.stand_ins and others:
            other = max(others, key=lambda i: adjusted[i])
            if adjusted[other] < adjusted[first]:
                high, low = adjusted[first], adjusted[other]
                adjusted[first], adjusted[other] = low, high
                _note(factors, first, "stand-in", low - high)
                _note(factors, other, "stand-in", high - low)

    # diversity: in order of the adjusted score, a file's k-th chunk is multiplied by diversity^k
    seen: dict[str, int] = {}
    final = adjusted
    if weights.diversity != 1.0:
        final = list(adjusted)
        for i in sorted(range(n), key=adjusted.__getitem__, reverse=True):
            p = paths[i]
            k = seen.get(p, 0)
            seen[p] = k + 1
            if k:
                factor = weights.diversity ** k
                final[i] = adjusted[i] * factor
                _note(factors, i, "diversity", factor)
    ranked = sorted(range(n), key=final.__getitem__, reverse=True)[:top]
    return RerankResult(ranked, {i: final[i] for i in ranked}, {i: factors[i] for i in ranked if factors[i]})


def _pools(seed: int, count: int):
    rnd = random.Random(seed)
    for _ in range(count):
        n = rnd.randint(1, 60)
        values = [round(rnd.uniform(-0.3, 1.0), rnd.choice([1, 2, 6, 17])) for _ in range(n)]
        if rnd.random() < 0.3:
            values = [rnd.choice([0.0, -0.0, 0.5, 0.25]) for _ in range(n)]
        titles = [rnd.choice(TITLES) for _ in range(n)]
        yield rnd.choice(QUESTIONS), RerankInput(
            hybrid=values, paths=[rnd.choice(PATHS) for _ in range(n)], titles=titles,
            texts=[rnd.choice(TEXTS) for _ in range(n)],
            stand_ins=frozenset(i for i in range(n) if titles[i] == "module" and rnd.random() < 0.7))


WEIGHTS = [RerankWeights(), RerankWeights(file=0.0, diversity=1.0), RerankWeights(definition=0.0, path_name=0.0),
           RerankWeights(header=1.0, vendored=1.0, role=1.0), RerankWeights(path_words=0.0, diversity=0.8),
           RerankWeights(changelog=1.0, doc=1.0), RerankWeights(platform=1.0, header=0.5)]


def _same(a: RerankResult, b: RerankResult) -> None:
    assert a.order == b.order
    assert [(i, repr(s)) for i, s in a.scores.items()] == [(i, repr(s)) for i, s in b.scores.items()]
    assert [(i, list(f.items())) for i, f in a.factors.items()] == [(i, list(f.items())) for i, f in b.factors.items()]


@pytest.mark.parametrize("seed", range(6))
def test_rerank_matches_the_rule_by_rule_re_rank(seed):
    for question, inp in _pools(seed, 60):
        for weights in WEIGHTS:
            for top in (1, 5, len(inp.paths)):
                _same(rerank(question, inp, weights, top), reference_rerank(question, inp, weights, top))


class _Stats:
    """Co-change statistics of a few path pairs."""

    shared = True

    def __init__(self, seed: int):
        rnd = random.Random(seed)
        self._p = {p: {q: rnd.choice([0.1, 0.5, 1.0]) for q in rnd.sample(PATHS, 5)} for p in PATHS}

    def partners(self, path: str) -> dict[str, float]:
        return self._p[path]


@pytest.mark.parametrize("seed", range(4))
def test_pool_scores_and_raises_match_the_full_re_rank_and_boost(seed):
    stats = _Stats(seed)
    for question, inp in _pools(100 + seed, 60):
        weights = RerankWeights()
        full = apply_cochange(reference_rerank(question, inp, weights, len(inp.paths)), inp.paths, stats)
        _same(apply_cochange(rerank(question, inp, weights, len(inp.paths)), inp.paths, stats), full)
        ranking = rerank_pool(question, inp, weights)
        raised, _ = cochange_raises(ranking.order, ranking.scores, inp.paths, stats)
        for i in range(len(inp.paths)):
            factors = ranking.factors(i)
            if i in raised:
                factors = {**factors, "cochange": raised[i] - ranking.scores[i]}
            assert repr(raised.get(i, ranking.scores[i])) == repr(full.scores[i])
            assert list(factors.items()) == list(full.factors.get(i, {}).items())


def test_non_finite_scores_rank_as_first_written():
    """A NaN score (a damaged vector) leaves the diversity order to the whole ranking, as first written."""
    nan = float("nan")
    inp = RerankInput(hybrid=[0.5, nan, 0.25, 0.5], paths=["a.py", "a.py", "b.py", "a.py"], titles=[""] * 4,
                      texts=[""] * 4)
    got = rerank("a", inp, RerankWeights(), 4)
    want = reference_rerank("a", inp, RerankWeights(), 4)
    assert got.order == want.order
    assert [repr(s) for s in got.scores.values()] == [repr(s) for s in want.scores.values()]


@pytest.mark.parametrize("cache", [3, 7, 65536])
def test_path_word_index_restarts_and_large_words_match_the_rule_by_rule_re_rank(monkeypatch, cache):
    """The pool's files sharing a word with the question come from the kept paths' word index
    (``_PathFacts.sharing``): right when the kept facts start afresh in the middle of a pool
    (a small ``PATH_CACHE``) and when a word names more paths than the pool has files."""
    from ragit.retrieve import rerank as rerank_module

    monkeypatch.setattr(rerank_module, "PATH_CACHE", cache)
    rerank_module.remember_paths(f"lib/app/mod{i}.py" for i in range(200))  # "app": ~200 paths, when kept
    for question, inp in _pools(300 + cache, 60):
        for weights in WEIGHTS:
            _same(rerank(question, inp, weights, len(inp.paths)), reference_rerank(question, inp, weights, len(inp.paths)))
