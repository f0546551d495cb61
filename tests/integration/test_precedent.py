"""The precedent stage (ragit.retrieve.precedent): past commits whose messages resemble the
question raise the files they changed. Message terms mined from real git repositories
(ragit.gitsnap.cochange), the stage's arithmetic on hand-built statistics, and a query end to end."""

from __future__ import annotations

import json
import math

import pytest

from ragit.gitsnap import cochange
from ragit.gitsnap.cochange import cochange_at, tally
from ragit.gitsnap.git import Git
from ragit.lexical import terms
from ragit.retrieve.precedent import PrecedentWeights, file_evidence, precedent_raises


@pytest.fixture(autouse=True)
def _fresh_memo():
    cochange._MEMO.clear()
    yield
    cochange._MEMO.clear()


def _stats(commits: list[tuple[str, list[str]]]):
    """Statistics of counted commits given newest first as (message, files)."""
    return tally(len(commits), [files for _, files in commits], [" ".join(terms(m)) for m, _ in commits])


def test_mining_keeps_each_counted_commits_message_terms(git_repo):
    git_repo.commit("init", {"setup.py": "s0\n", "app.py": "a0\n"})
    git_repo.commit("Depend on itsdangerous now", {"setup.py": "s1\n"})
    wide = {f"m{i}.py": f"{i}\n" for i in range(40)}
    git_repo.commit("vendor everything", wide)  # more than MAX_FILES paths: not counted
    head = git_repo.commit("Fix the request context", {"app.py": "a1\n"})
    stats = cochange_at(Git(git_repo.root), None, head)
    assert stats.counted == [["app.py"], ["setup.py"], ["app.py", "setup.py"]]
    assert stats.said == ["fix request context", "depend itsdanger", "init"]


def test_counts_file_keeps_the_messages_and_an_old_file_is_mined_again(git_repo):
    git_repo.commit("init", {"setup.py": "s0\n"})
    head = git_repo.commit("Depend on click now", {"setup.py": "s1\n"})
    git = Git(git_repo.root)
    mined = cochange_at(git, git_repo.root, head, keep_counts=True)
    stored = cochange._counts_file(git_repo.root, head)
    doc = json.loads(stored.read_text())
    assert doc["version"] == cochange.COUNTS_VERSION and doc["said"] == ["depend click", "init"]
    cochange._MEMO.clear()
    assert cochange_at(git, git_repo.root, head).said == mined.said  # read back, no git
    doc["version"] = 2  # a counts file of an older ragit, without messages
    del doc["said"]
    stored.write_text(json.dumps(doc))
    cochange._MEMO.clear()
    assert cochange._read_counts(stored, cochange.DEFAULT_LIMIT, cochange.MAX_FILES) is None
    assert cochange_at(git, git_repo.root, head).said == mined.said


def test_the_file_a_matching_message_changed_gets_the_evidence():
    stats = _stats([("Fix the request context teardown", ["ctx.py"]),
                    ("Depend on itsdangerous now", ["setup.py", "tox.ini"]),
                    ("Add a command line interface", ["cli.py"])])
    evidence = file_evidence(terms("Depend on click now"), stats)
    assert set(evidence) == {"setup.py", "tox.ini"}
    assert evidence["setup.py"] == evidence["tox.ini"]  # one commit's share, split over its two files
    assert 0 < evidence["setup.py"] < 0.5


def test_evidence_is_the_bm25_score_over_the_questions_idf_sum_shared_by_the_files():
    stats = _stats([("alpha beta", ["a.py"]), ("gamma", ["b.py"]), ("delta", ["c.py"])])
    n, df = 3, 1
    idf = math.log(1 + (n - df + 0.5) / (df + 0.5))
    k1, b, average = 1.2, 0.75, 4 / 3
    score = idf * 1 * (k1 + 1) / (1 + k1 * (1 - b + b * 2 / average))
    evidence = file_evidence(["alpha"], stats)
    assert evidence == {"a.py": pytest.approx(score / idf)}


def test_only_the_best_matching_commits_vouch():
    commits = [(f"cache entry {i}", [f"f{i}.py"]) for i in range(5)]
    commits.append(("cache entry cache entry", ["best.py"]))
    stats = _stats(commits)
    assert set(file_evidence(["cach", "entri"], stats, PrecedentWeights(commits=1))) == {"best.py"}
    assert len(file_evidence(["cach", "entri"], stats, PrecedentWeights(commits=3))) == 3


def test_an_answer_asked_again_is_remembered_and_never_shared(monkeypatch):
    from ragit.retrieve import precedent

    stats = _stats([("Fix the request context teardown", ["ctx.py"]),
                    ("Depend on itsdangerous now", ["setup.py", "tox.ini"])])
    first = file_evidence(["depend", "now", "depend"], stats)
    first["ctx.py"] = 9.0  # a caller's own dict: the remembered answer does not change
    asked = []
    monkeypatch.setattr(precedent, "_evidence", lambda *a: asked.append(a) or {})
    again = file_evidence(["now", "depend"], stats)  # the same terms as a set: not computed again
    assert asked == [] and set(again) == {"setup.py", "tox.ini"}
    assert file_evidence(["depend"], stats, PrecedentWeights(commits=1)) == {} and len(asked) == 1


def test_no_messages_or_no_match_gives_no_evidence():
    assert file_evidence(["click"], tally(1, [["a.py"]])) == {}  # statistics without messages
    assert file_evidence(["click"], _stats([("unrelated words", ["a.py"])])) == {}
    assert file_evidence([], _stats([("click", ["a.py"])])) == {}


def test_raises_the_best_chunk_of_each_file_by_weight_times_capped_evidence():
    paths = ["b.py", "a.py", "a.py", "c.py", "c.py"]
    scores = [0.8, 0.6, 1.0, 0.5, 0.5]  # a.py's best chunk is its second; c.py's two tie: the first
    raised = precedent_raises(scores, paths, {"a.py": 0.5, "c.py": 3.0}, unit=2.0, weights=PrecedentWeights(weight=0.2))
    assert raised == {2: pytest.approx(1.0 + 0.2 * 2.0 * 0.5), 3: pytest.approx(0.5 + 0.2 * 2.0 * 1.0)}
    assert precedent_raises(scores, paths, {}, unit=2.0) == {}
    assert precedent_raises(scores, paths, {"a.py": 1.0}, unit=2.0, weights=PrecedentWeights(weight=0)) == {}


def test_a_query_raises_the_file_a_similar_past_commit_changed(indexed_repo, cli):
    """End to end: the commit that added a dependency vouches for setup.py (whose text shares no
    word with the question) when a question asks for such a change again; --explain shows the
    additive factor, which the file's final score carries."""
    repo = indexed_repo
    repo.commit("Depend on itsdangerous for signed cookies", {"setup.py": "install_requires = ['itsdangerous']\n"})
    assert cli("ingest", "--cwd", str(repo.root)).code == 0

    def ranked() -> list[dict]:
        out = cli("query", "add a dependency for signed cookies", "--explain", "--top-k", "10", "--format", "json",
                  "--cwd", str(repo.root))
        assert out.code == 0, out
        return out.json["data"]["hits"]

    hits = ranked()
    factors = {h["path"]: (h["scoreBreakdown"]["retrieval"].get("rerank") or {}).get("factors", {}) for h in hits}
    assert factors["setup.py"]["precedent"] > 0
    assert all("precedent" not in f for p, f in factors.items() if p != "setup.py")
    with_stage = next(h["scoreFinal"] for h in hits if h["path"] == "setup.py")
    cochange._MEMO.clear()
    assert cli("config", "set", "retrieval.cochange", "false", "--cwd", str(repo.root)).code == 0
    without = next(h["scoreFinal"] for h in ranked() if h["path"] == "setup.py")
    # the factor adds to the re-ranked retrieval score, which the final score weighs by 0.8
    assert with_stage == pytest.approx(without + 0.8 * factors["setup.py"]["precedent"], abs=2e-6)


def test_each_commits_message_is_read_once_and_kept(git_repo, monkeypatch):
    """A later snapshot reads only the new commits' messages: the others come from said.json."""
    git_repo.commit("init", {"setup.py": "s0\n"})
    first = git_repo.commit("Depend on click now", {"setup.py": "s1\n"})
    git = Git(git_repo.root)
    cochange_at(git, git_repo.root, first, keep_changes=True)
    assert json.loads(cochange._said_file(git_repo.root).read_text())["version"] == cochange.SAID_VERSION
    asked: list[list[str]] = []
    real = cochange.message_terms

    def counting(git, wanted):
        asked.append(list(wanted))
        return real(git, wanted)

    monkeypatch.setattr(cochange, "message_terms", counting)
    second = git_repo.commit("Depend on itsdangerous too", {"setup.py": "s2\n"})
    stats = cochange_at(git, git_repo.root, second, keep_changes=True)
    assert asked == [[second]]
    assert stats.said == ["depend itsdanger", "depend click", "init"]


def test_a_damaged_said_cache_is_read_again_from_git(git_repo):
    git_repo.commit("init", {"setup.py": "s0\n"})
    head = git_repo.commit("Depend on click now", {"setup.py": "s1\n"})
    git = Git(git_repo.root)
    first = cochange_at(git, git_repo.root, head, keep_changes=True).said
    for damaged in ("{not json", json.dumps({"version": 0, "said": {}}), json.dumps({"version": 1, "said": []})):
        cochange._said_file(git_repo.root).write_text(damaged)
        cochange._MEMO.clear()
        assert cochange_at(git, git_repo.root, head, keep_changes=True).said == first
