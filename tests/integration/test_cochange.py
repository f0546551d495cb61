"""Co-change mining (ragit.gitsnap.cochange) on real git repositories, and the co-change boost
stage (ragit.retrieve.cochange_boost) on hand-built re-rank results."""

from __future__ import annotations

import json

import pytest

from ragit.gitsnap import cochange
from ragit.gitsnap.cochange import Change, CoChange, cochange_at, count, load_changes
from ragit.gitsnap.git import Git
from ragit.retrieve.cochange_boost import CochangeWeights, apply_cochange
from ragit.retrieve.rerank import RerankResult


@pytest.fixture
def history(git_repo):
    """app.py and ctx.py change together twice; app.py and cli.py once; a wide reformat once."""
    shas = {}
    shas["init"] = git_repo.commit("init", {"app.py": "a0\n", "ctx.py": "c0\n", "cli.py": "l0\n", "README.md": "r\n"})
    shas["pair1"] = git_repo.commit("app+ctx", {"app.py": "a1\n", "ctx.py": "c1\n"})
    shas["pair2"] = git_repo.commit("app+ctx again", {"app.py": "a2\n", "ctx.py": "c2\n"})
    shas["cli"] = git_repo.commit("app+cli", {"app.py": "a3\n", "cli.py": "l1\n"})
    shas["alone"] = git_repo.commit("app alone", {"app.py": "a4\n"})
    return git_repo, shas


def test_counts_pairs_weighted_by_commit_size(history):
    repo, shas = history
    stats = count(load_changes(Git(repo.root), None, shas["alone"]))
    # init touched 4 files (each pair 1/3); pair1, pair2 (1 each); cli (1)
    assert stats.touched["app.py"] == 5
    assert stats.shared["app.py"]["ctx.py"] == pytest.approx(1 / 3 + 1 + 1)
    assert stats.shared["app.py"]["cli.py"] == pytest.approx(1 / 3 + 1)
    assert stats.partners("app.py")["ctx.py"] == pytest.approx((1 / 3 + 2) / (5 + cochange.PRIOR))
    assert stats.partners("ctx.py")["app.py"] == pytest.approx((1 / 3 + 2) / (3 + cochange.PRIOR))
    assert stats.partners("nowhere.py") == {}


def test_history_stops_at_the_snapshot_commit(history):
    """Counts at an older commit never see what came after it (no leakage from the future)."""
    repo, shas = history
    stats = count(load_changes(Git(repo.root), None, shas["pair2"]))
    assert stats.commits == 3
    assert stats.shared["app.py"]["cli.py"] == pytest.approx(1 / 3)  # only the initial commit
    assert stats.touched["app.py"] == 3


def test_large_commits_are_skipped(git_repo):
    files = {f"mod{i}.py": f"x{i}\n" for i in range(40)}
    git_repo.commit("vendor everything", files)
    head = git_repo.commit("two", {"mod1.py": "y\n", "mod2.py": "y\n"})
    stats = count(load_changes(Git(git_repo.root), None, head), max_files=30)
    assert stats.touched == {"mod1.py": 1, "mod2.py": 1}
    assert stats.shared["mod1.py"] == {"mod2.py": 1.0}


def test_renames_carry_history_to_the_new_path(git_repo):
    body = "".join(f"line {i} of a module that is long enough for rename detection\n" for i in range(30))
    git_repo.commit("init", {"flask/app.py": body, "flask/ctx.py": "c0\n"})
    git_repo.commit("together", {"flask/app.py": body + "x\n", "flask/ctx.py": "c1\n"})
    git_repo.git("mv", "flask", "src")
    git_repo.commit("move the package")
    head = git_repo.commit("edit", {"src/ctx.py": "c2\n"})
    changes = load_changes(Git(git_repo.root), None, head)
    assert ("flask/app.py", "src/app.py") in changes[1].renames
    stats = count(changes)
    assert "flask/app.py" not in stats.shared
    # init and together (under their old names) and the move itself
    assert stats.shared["src/app.py"]["src/ctx.py"] == pytest.approx(3.0)


def test_merge_commits_are_not_counted(git_repo):
    git_repo.commit("init", {"a.py": "0\n", "b.py": "0\n"})
    git_repo.git("checkout", "-q", "-b", "side")
    git_repo.commit("side", {"a.py": "1\n", "b.py": "1\n"})
    git_repo.git("checkout", "-q", "main")
    git_repo.commit("main", {"c.py": "1\n"})
    git_repo.git("merge", "-q", "--no-ff", "-m", "merge side", "side")
    changes = load_changes(Git(git_repo.root), None, git_repo.head())
    assert len(changes) == 3
    assert {c.paths for c in changes} == {("a.py", "b.py"), ("c.py",)} | {("a.py", "b.py")}


def test_limit_bounds_the_commits_read(history):
    repo, shas = history
    changes = load_changes(Git(repo.root), None, shas["alone"], limit=2)
    assert [c.sha for c in changes] == [shas["alone"], shas["cli"]]


def test_cache_is_reused_and_extended_incrementally(history, monkeypatch):
    repo, shas = history
    git = Git(repo.root)
    first = load_changes(git, repo.root, shas["pair2"])
    cache_file = repo.root / ".ragit" / "cache" / "cochange" / "changes.json"
    assert {c[0] for c in json.loads(cache_file.read_text())["changes"]} == {shas["init"], shas["pair1"], shas["pair2"]}

    mined: list[list[str]] = []
    real_run = Git.run

    def spy(self, *args, **kwargs):
        if args and args[0] == "diff-tree":
            mined.append(kwargs["input"].decode().split())
        return real_run(self, *args, **kwargs)

    monkeypatch.setattr(Git, "run", spy)
    later = load_changes(git, repo.root, shas["alone"])
    assert mined == [[shas["alone"], shas["cli"]]]  # only the commits the cache lacked
    assert later[2:] == first
    assert later == load_changes(git, None, shas["alone"])  # same answer as mining afresh
    mined.clear()
    load_changes(git, repo.root, shas["alone"])
    assert mined == []


def test_a_corrupt_cache_is_mined_again(history):
    repo, shas = history
    cache_file = repo.root / ".ragit" / "cache" / "cochange" / "changes.json"
    cache_file.parent.mkdir(parents=True)
    cache_file.write_text("{not json")
    changes = load_changes(Git(repo.root), repo.root, shas["alone"])
    assert changes == load_changes(Git(repo.root), None, shas["alone"])
    assert json.loads(cache_file.read_text())["version"] == cochange.CACHE_VERSION


def test_cochange_at_memoises_per_snapshot(history):
    repo, shas = history
    git = Git(repo.root)
    a = cochange_at(git, repo.root, shas["alone"])
    assert cochange_at(git, repo.root, shas["alone"]) is a
    assert cochange_at(git, repo.root, shas["pair2"]) is not a


def test_paths_with_spaces_and_unicode(git_repo):
    head = git_repo.commit("init", {"dir one/a b.py": "x\n", "é/ü.py": "y\n"})
    (change,) = load_changes(Git(git_repo.root), None, head)
    assert set(change.paths) == {"dir one/a b.py", "é/ü.py"}


# ---------------------------------------------------------------- the boost stage


def _stats(pairs: dict[tuple[str, str], float], touched: dict[str, int]) -> CoChange:
    shared: dict[str, dict[str, float]] = {}
    for (a, b), m in pairs.items():
        shared.setdefault(a, {})[b] = m
        shared.setdefault(b, {})[a] = m
    return CoChange(10, touched, shared)


def _result(scores: list[float], factors: dict[int, dict[str, float]] | None = None) -> RerankResult:
    order = sorted(range(len(scores)), key=lambda i: -scores[i])
    return RerankResult(order, dict(enumerate(scores)), factors or {})


def test_boost_raises_a_partner_of_a_top_hit_but_never_above_it():
    paths = ["app.py", "other.py", "third.py", "ctx.py"]
    result = _result([1.0, 0.7, 0.6, 0.55])
    # P(ctx | app) = 3 / (3 + 1) = 0.75: ctx would reach 0.55 × 1.75 = 0.96, below app (1.0)
    stats = _stats({("app.py", "ctx.py"): 3.0}, {"app.py": 3, "ctx.py": 3})
    out = apply_cochange(result, paths, stats, CochangeWeights(weight=1.0, hits=3))
    assert out.order == [0, 3, 1, 2]
    assert out.scores[3] == pytest.approx(0.55 * 1.75)
    assert out.factors[3]["cochange"] == pytest.approx(0.55 * 0.75)
    assert out.scores[0] == 1.0 and "cochange" not in out.factors.get(0, {})


def test_boost_is_capped_below_the_vouching_hit():
    paths = ["app.py", "ctx.py"]
    result = _result([1.0, 0.9])
    stats = _stats({("app.py", "ctx.py"): 9.0}, {"app.py": 9, "ctx.py": 9})
    out = apply_cochange(result, paths, stats, CochangeWeights(weight=1.0, hits=3))
    assert out.order == [0, 1]
    assert 0.9 < out.scores[1] < 1.0


def test_only_the_top_hits_vouch():
    paths = ["a.py", "b.py", "c.py", "d.py"]
    result = _result([1.0, 0.9, 0.8, 0.3])
    stats = _stats({("c.py", "d.py"): 5.0}, {"c.py": 5, "d.py": 5})  # d's partner c is 3rd
    assert apply_cochange(result, paths, stats, CochangeWeights(hits=2)) is result
    assert apply_cochange(result, paths, stats, CochangeWeights(hits=3)).factors[3]["cochange"] > 0


def test_a_file_is_raised_once_on_its_best_chunk():
    paths = ["app.py", "ctx.py", "ctx.py", "x.py"]
    result = _result([1.0, 0.5, 0.4, 0.45])
    stats = _stats({("app.py", "ctx.py"): 1.0}, {"app.py": 1, "ctx.py": 1})
    out = apply_cochange(result, paths, stats, CochangeWeights(weight=1.0, hits=3))
    assert set(i for i, f in out.factors.items() if "cochange" in f) == {1}
    assert out.scores[2] == 0.4


def test_no_history_leaves_the_result_untouched():
    result = _result([1.0, 0.5])
    assert apply_cochange(result, ["a.py", "b.py"], CoChange()) is result
    assert apply_cochange(result, ["a.py", "b.py"], _stats({("a.py", "b.py"): 1.0}, {"a.py": 1, "b.py": 1}),
                          CochangeWeights(weight=0.0)) is result


def test_boost_keeps_existing_factors_and_is_deterministic():
    paths = ["app.py", "t.py", "ctx.py"]
    result = _result([1.0, 0.8, 0.5], {2: {"role": 0.5}})
    stats = _stats({("app.py", "ctx.py"): 2.0}, {"app.py": 2, "ctx.py": 2})
    a = apply_cochange(result, paths, stats)
    b = apply_cochange(result, paths, stats)
    assert a.order == b.order and a.scores == b.scores
    assert a.factors[2]["role"] == 0.5 and a.factors[2]["cochange"] > 0


def test_change_records_round_trip_through_the_cache(tmp_path):
    path = tmp_path / "changes.json"
    changes = {"a" * 40: Change("a" * 40, ("x.py", "y.py"), (("old.py", "y.py"),))}
    cochange._write_cache(path, changes)
    assert cochange._read_cache(path) == changes


def test_cache_files_of_several_repositories_stay_parsed(tmp_path, monkeypatch):
    """``eval run`` interleaves repositories' tasks: each one's cache file is parsed once while it
    is unchanged, not again whenever another repository's was read in between."""
    monkeypatch.setattr(cochange, "_READ", {})
    parsed = []
    real = cochange._read_memoised

    def counting(path, memo, version, parse):
        return real(path, memo, version, lambda doc: parsed.append(path) or parse(doc))

    monkeypatch.setattr(cochange, "_read_memoised", counting)
    paths = [tmp_path / f"r{i}" / "changes.json" for i in range(3)]
    for i, path in enumerate(paths):
        path.parent.mkdir()
        cochange._write_cache(path, {c * 40: Change(c * 40, (f"{i}.py",), ()) for c in "ab"})
    for _ in range(4):
        for path in paths:
            assert set(cochange._read_cache(path)) == {"a" * 40, "b" * 40}
    assert parsed == paths
    cochange._write_cache(paths[1], {"c" * 40: Change("c" * 40, ("z.py",), ())})  # changed: read again
    assert set(cochange._read_cache(paths[1])) == {"c" * 40}
    assert parsed == paths + [paths[1]]
    for i in range(cochange._READ_KEEP + 1):  # bounded: the oldest file read goes first
        extra = tmp_path / f"x{i}" / "changes.json"
        extra.parent.mkdir()
        cochange._write_cache(extra, {})
        cochange._read_cache(extra)
    assert len(cochange._READ) == cochange._READ_KEEP
    assert str(paths[0]) not in cochange._READ


def test_only_the_head_of_the_ranking_is_raised():
    paths = ["app.py", "b.py", "c.py", "ctx.py"]
    result = _result([1.0, 0.9, 0.8, 0.5])
    stats = _stats({("app.py", "ctx.py"): 3.0}, {"app.py": 3, "ctx.py": 3})
    assert apply_cochange(result, paths, stats, CochangeWeights(files=3)) is result  # ctx.py is the 4th file
    assert "cochange" in apply_cochange(result, paths, stats, CochangeWeights(files=4)).factors[3]
