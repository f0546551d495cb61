"""Evaluation metrics, the paired bootstrap and the mining filters (knowledge §21)."""

from __future__ import annotations

import json

import pytest

from ragit.config import defaults
from ragit.errors import RagitError
from ragit.evaluation.metrics import (
    file_ranking,
    mean,
    pack_recall,
    paired_difference,
    rank_metrics,
    resample_indices,
)
from ragit.evaluation.mine import (
    clean_query,
    default_extensions,
    is_mechanical,
    is_release,
    is_test_path,
    mentions_gold_name,
    mine_tasks,
    render_tasks,
)
from ragit.evaluation.tasks import parse_task
from ragit.gitsnap.git import Git
from ragit.retrieve.hits import Hit


def hit(path: str, n: int = 0) -> Hit:
    return Hit(path, 1, 2, f"s{n}", "code", 0.5, 0.0, 0.0, {"id": f"c-{path}-{n}", "sourceType": "document"},
               "durable", "document", None, None, "promoted_durable", None, "repository", "x y", f"k{n}", {})


# ---------------------------------------------------------------- ranking metrics

def test_file_rank_is_the_rank_of_the_best_chunk():
    hits = [hit("a.py", 0), hit("a.py", 1), hit("b.py"), hit("a.py", 2), hit("c.py")]
    assert file_ranking(hits) == ["a.py", "b.py", "c.py"]


def test_recall_acc_and_mrr():
    files = ["x", "a", "y", "z", "w", "b", "v"]
    m = rank_metrics(files, ["a", "b"])
    assert m.recall == {1: 0.0, 5: 0.5, 10: 1.0}
    assert m.acc == {5: 0.0, 10: 1.0}
    assert m.mrr == 0.5
    first = rank_metrics(["a"], ["a"])
    assert first.recall[1] == 1.0 and first.acc[5] == 1.0 and first.mrr == 1.0
    none = rank_metrics(["x", "y"], ["a"])
    assert none.recall == {1: 0.0, 5: 0.0, 10: 0.0} and none.acc == {5: 0.0, 10: 0.0} and none.mrr == 0.0


def test_rank_beyond_ten_counts_for_mrr_only():
    files = [f"f{i}" for i in range(11)] + ["gold"]
    m = rank_metrics(files, ["gold"])
    assert m.recall[10] == 0.0 and m.mrr == pytest.approx(1 / 12)


def test_pack_recall_is_the_fraction_of_gold_files_with_a_selected_hit():
    assert pack_recall([hit("a"), hit("a", 1), hit("c")], ["a", "b"]) == 0.5
    assert pack_recall([], ["a"]) == 0.0


def test_mean_of_nothing_is_undefined():
    assert mean([]) is None
    assert mean([1.0, 0.0, 0.5]) == 0.5


# ---------------------------------------------------------------- bootstrap

def test_bootstrap_is_seeded_and_brackets_the_difference():
    a = [0.0, 1.0, 0.5, 0.0, 1.0, 0.0, 0.5, 1.0]
    b = [1.0, 1.0, 0.5, 0.5, 1.0, 0.0, 1.0, 1.0]
    idx = resample_indices(len(a), seed=0)
    assert idx.shape == (1000, len(a))
    diff, ci = paired_difference(a, b, idx)
    assert diff == pytest.approx(sum(y - x for x, y in zip(a, b)) / len(a))
    assert ci[0] <= diff <= ci[1]
    assert paired_difference(a, b, resample_indices(len(a), seed=0)) == (diff, ci)
    assert paired_difference(a, b, resample_indices(len(a), seed=1)) != (diff, ci)


def test_identical_modes_have_a_zero_interval():
    a = [0.2, 0.4, 1.0]
    assert paired_difference(a, a, resample_indices(3, seed=0)) == (0.0, [0.0, 0.0])


def test_no_tasks_means_no_difference():
    assert paired_difference([], [], None) is None


# ---------------------------------------------------------------- mining filters

@pytest.mark.parametrize("subject", [
    "Release 2.0.1", "release version 2.1.1", "Bump version to 1.1", "Bump werkzeug from 2.0 to 3.0",
    "Prepare for 1.1 release", "2.3.0", "v1.0", "Set version 3.0.0.dev", "Version bump",
])
def test_release_subjects(subject):
    assert is_release(subject)


@pytest.mark.parametrize("subject", [
    "Fix typo in docs", "typos", "Reformat with black", "apply isort", "fix flake8 findings",
    "[pre-commit.ci] pre-commit autoupdate", "remove whitespace at end of lines", "Fix lint errors", "Fix spelling",
    "fix flake8 bugbear findings", "Format code with ruff",
])
def test_typo_format_lint_whitespace_subjects(subject):
    assert is_mechanical(subject)


@pytest.mark.parametrize("subject", [
    "Add token refresh", "Use release date in changelog parser", "Support JSON format option",
    "pass sys.argv to flask cli", "Fix version comparison for prereleases", "Fix pylint crash on empty module",
    "Refactor linter initialization", "Format datetime values in logs",
])
def test_ordinary_subjects_pass(subject):
    assert not is_release(subject) and not is_mechanical(subject)


@pytest.mark.parametrize(("path", "expected"), [
    ("tests/test_app.py", True), ("src/testing/util.py", True), ("pkg/test/helpers.py", True),
    ("test_app.py", True), ("src/app_test.go", True), ("web/app.test.ts", True), ("web/app.spec.js", True),
    ("conftest.py", True), ("src/flask/testing.py", False), ("src/contest.py", False), ("docs/tests.md", False),
    ("src/latest/app.py", False),
    # every language ragit chunks structurally
    ("src/test/java/com/x/ParserTest.java", True), ("lib/ParserTests.kt", True), ("core/MapSuite.scala", True),
    ("Tests/VaporTests/RouteTests.swift", True), ("Src/Json.Tests/ReaderTests.cs", True),
    ("spec/models/user_spec.rb", True), ("lib/user_test.rb", True), ("tests/LoggerTest.php", True),
    ("test/phoenix/router_test.exs", True), ("test/Text/PandocSpec.hs", True), ("lua/tests/finder_spec.lua", True),
    ("src/uv_test.c", True), ("test/format-test.cc", True), ("src/analysis_test.zig", True),
    ("test/install.bats", True), ("src/__tests__/store.ts", True), ("pkg/testdata/in.go", True),
    ("src/Json/JsonReader.cs", False), ("lib/phoenix/router.ex", False), ("src/Monolog/Logger.php", False),
    ("include/fmt/format.h", False), ("Sources/Vapor/Testable.swift", False), ("lib/contest_spec_helper.rbx", False),
])
def test_test_paths(path, expected):
    assert is_test_path(path) is expected


def test_query_cleaning_strips_trailers_references_and_boilerplate():
    message = ("Fix session refresh (#123)\n\nRefreshing failed after GH-45 landed; see #7.\n"
               "Merge branch 'main' into fix\n\nCo-authored-by: A <a@example.com>\n"
               "Signed-off-by: B <b@example.com>\n")
    assert clean_query(message) == "Fix session refresh Refreshing failed after landed; see ."


def test_query_cleaning_keeps_a_conventional_subject_and_body_text():
    assert clean_query("fix: handle empty body") == "fix: handle empty body"
    assert clean_query("Add x\n\nNote that\nthis keeps   lines\n") == "Add x Note that this keeps lines"
    assert clean_query("(#12)\n\nSigned-off-by: B <b@example.com>") == ""


def test_mentions_gold_name_is_a_whole_word_match():
    assert mentions_gold_name("Pass sys.argv to flask CLI", ["src/flask/cli.py"])
    assert not mentions_gold_name("update jsonify docs", ["flask/json.py"])
    assert mentions_gold_name("fix __init__ exports", ["pkg/__init__.py"])


def test_default_extensions_are_source_code_only():
    exts = default_extensions(defaults())
    for ext in (".py", ".rs", ".go", ".ts", ".kt", ".scala", ".swift", ".cs", ".ex", ".hs", ".lua", ".zig", ".sh"):
        assert ext in exts
    for ext in (".md", ".mdx", ".rst", ".txt", ".json", ".yaml"):
        assert ext not in exts  # docs and data are never gold for a code task


def test_rendered_task_lines_keep_key_order_and_utf8():
    line = render_tasks([{"id": "r@1", "query": "café"}]).decode()
    assert line == '{"id": "r@1", "query": "café"}\n'


def test_mining_filters_on_a_real_history(git_repo):
    r = git_repo
    r.commit("Initial", {"src/a.py": "def a():\n    return 1\n", "src/b.py": "x = 1\n", "docs/d.md": "# D\n"})
    r.commit("Change a and its test", {"src/a.py": "def a():\n    return 2\n", "tests/test_a.py": "def test():\n    pass\n"})
    r.commit("Only tests change", {"tests/test_a.py": "def test():\n    assert 1\n"})
    r.commit("Touch many files", {f"src/m{i}.py": "y = 1\n" for i in range(9)})
    r.commit("Change every module", {**{f"src/m{i}.py": "y = 2\n" for i in range(4)}})
    r.commit("Move b\n\nFixes: #9", {"src/b.py": "x = 2\n", "vendor/lib.py": "z = 1\n"})
    r.git("checkout", "-q", "-b", "side")
    r.commit("Side change to docs", {"docs/d.md": "# D\n\nMore.\n"})
    r.git("checkout", "-q", "main")
    r.git("merge", "-q", "--no-ff", "-m", "Merge branch 'side'", "side")
    r.commit("Fix typo in a", {"src/a.py": "def a():\n    return 3\n"})
    r.commit("Bump version to 1.0", {"src/a.py": "def a():\n    return 4\n"})

    result = mine_tasks(r.root, Git(r.root), defaults(), seed=0)
    by_query = {t["query"]: t for t in result.tasks}
    assert sorted(by_query) == ["Change a and its test", "Move b"]  # a docs-only change has no gold
    assert by_query["Change a and its test"]["gold"] == ["src/a.py"]
    assert by_query["Move b"]["gold"] == ["src/b.py"]  # vendor/ is excluded from ingest
    assert result.skipped == {"merge": 1, "root_commit": 1, "release": 1, "typo_or_format": 1,
                              "too_many_files": 1, "no_gold": 2, "too_many_gold": 1, "empty_query": 0,
                              "not_sampled": 0}
    assert result.scanned == 10
    only_py = mine_tasks(r.root, Git(r.root), defaults(), extensions=[".py"], count=1, seed=3)
    assert len(only_py.tasks) == 1 and only_py.skipped["not_sampled"] == 1
    assert only_py.skipped["no_gold"] == 2
    with_docs = mine_tasks(r.root, Git(r.root), defaults(), extensions=[".py", ".md"], seed=0)
    assert "Side change to docs" in {t["query"] for t in with_docs.tasks}  # --ext can ask for docs


# ---------------------------------------------------------------- task lines

def test_task_lines_accept_extra_keys_and_report_the_line():
    task = parse_task(4, json.dumps({"id": "t", "repo": "o/n", "commit": "A" * 40, "query": "q", "gold": ["a", "a"],
                                     "fix_commit": "b" * 40, "mentions_gold_name": False, "whatever": [1]}))
    assert task.commit == "a" * 40 and task.gold == ("a",) and task.line == 4
    with pytest.raises(RagitError) as info:
        parse_task(7, json.dumps({"id": "t", "repo": "o/n", "commit": "a" * 40, "query": "q", "gold": ["../x"]}))
    assert info.value.details["field"] == "tasks[7].gold[0]"
    with pytest.raises(RagitError) as info:
        parse_task(1, json.dumps({"id": "t", "repo": 3, "commit": "a" * 40, "query": "q", "gold": ["x"]}))
    assert info.value.details["field"] == "tasks[1].repo"


def test_code_search_task_fields():
    from ragit.evaluation.tasks import GoldEntry

    task = parse_task(0, json.dumps({
        "id": "nvm#0", "repo": "nvm-sh/nvm", "commit": "d" * 40, "root": "src/", "language": "bash",
        "category": "symbol", "query": "nvm_ls", "secondary": ["b.sh"],
        "gold": ["nvm.sh", {"path": "lib/x.sh", "startLine": 3, "endLine": 9}, "nvm.sh"]}))
    assert task.root == "src" and task.language == "bash" and task.category == "symbol"
    assert task.gold == ("nvm.sh", "lib/x.sh")  # file metrics use a span's path
    assert task.targets == (GoldEntry("nvm.sh"), GoldEntry("lib/x.sh", 3, 9))
    assert task.secondary == (GoldEntry("b.sh"),)
    assert parse_task(0, json.dumps({"id": "t", "repo": "o/n", "commit": "a" * 40, "query": "q",
                                     "gold": ["a"]})).root == "."


@pytest.mark.parametrize(("gold", "field", "reason"), [
    ([{"path": "a.py", "startLine": 0, "endLine": 3}], "tasks[2].gold[0].startLine", "invalid_value"),
    ([{"path": "a.py", "startLine": 5, "endLine": 3}], "tasks[2].gold[0].endLine", "invalid_value"),
    ([{"startLine": 1, "endLine": 3}], "tasks[2].gold[0].path", "not_string"),
    ([{"path": "../a.py", "startLine": 1, "endLine": 3}], "tasks[2].gold[0].path", "path_outside_repo"),
    ([7], "tasks[2].gold[0]", "not_string"),
])
def test_bad_span_gold_is_input_invalid(gold, field, reason):
    with pytest.raises(RagitError) as info:
        parse_task(2, json.dumps({"id": "t", "repo": "o/n", "commit": "a" * 40, "query": "q", "gold": gold}))
    assert info.value.details["field"] == field and info.value.details["reason"] == reason
