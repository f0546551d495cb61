"""The docs-site stage (ragit.retrieve.docsite): which files configure a docs site, which questions
are docs work, and where the configuration is raised to."""

from __future__ import annotations

import numpy as np
import pytest

from ragit.retrieve.docsite import (
    CAP_GAP,
    DocsiteWeights,
    asks_for_site,
    is_site_config,
    pool_site_raises,
    site_raises,
)


@pytest.mark.parametrize("path", [
    "website/sidebars.js", "website/sidebars.json", "website/docusaurus.config.js", "website/siteConfig.js",
    "mkdocs.yml", "docs/mkdocs.yaml", "docs/conf.py", "doc/conf.py", "docs/source/conf.py", "Documentation/conf.py",
    "book/book.toml", "docs/_toc.yml", "docs/antora.yml",
])
def test_site_configuration_files(path):
    assert is_site_config(path)


@pytest.mark.parametrize("path", [
    "conf.py", "src/conf.py", "pkg/config/conf.py",  # Sphinx's name counts in a docs directory only
    "tests/roots/test-setup/doc/conf.py", "examples/site/mkdocs.yml", "fixtures/website/sidebars.js",
    "website/sidebar.js", "docs/index.md", "src/sidebars.jsx",
])
def test_other_files(path):
    assert not is_site_config(path)


@pytest.mark.parametrize("question,first", [
    ('Add "History of Redux" page', ["src/index.ts", "docs/introduction/History.md"]),  # pages, and a page ranks
    ("Update: Remove ImmutableJS from sidebar.", ["src/index.ts", "src/store.ts", "docs/faq.md"]),
    ("Add an edit button on the docs pages.", ["src/index.ts"]),  # asks for docs
    ("add Jamund Ferguson's Egghead courses", ["docs/introduction/LearningResources.md"]),  # the best hit is a page
])
def test_docs_work(question, first):
    assert asks_for_site(question, first)


@pytest.mark.parametrize("question,first", [
    ("Fix the login redirect", ["src/auth.ts", "docs/auth.md"]),
    ("Fix the login redirect\n\nThe docs page says otherwise", ["src/auth.ts"]),  # the first line decides
    ("Add a pagination helper", ["src/paginate.ts"]),
    # "page" with no docs page among the first files: pagination, not a site's page (a code-only index)
    ("how are pages of results paginated", ["src/pager.py", "src/query.py", "tests/test_pager.py"]),
    ('Add "History of Redux" page', ["src/index.ts"] * 1 + [f"src/m{i}.ts" for i in range(9)] + ["docs/h.md"]),
])
def test_not_docs_work(question, first):
    assert not asks_for_site(question, first)


def test_a_word_naming_a_source_directory_of_the_candidates_is_no_docs_work():
    first = ["app/pages/index.js", "docs/routing.md"]
    assert asks_for_site("how pages are rendered", first)
    assert not asks_for_site("how pages are rendered", first, ["app/pages/index.js", "docs/routing.md"])


PATHS = ["docs/a.md", "docs/a.md", "docs/b.md", "src/c.js", "website/sidebars.js", "docs/d.md"]
SCORES = [0.9, 0.5, 0.8, 0.7, 0.2, 0.6]
ORDER = [0, 2, 3, 5, 1, 4]


def test_raised_just_below_the_third_file():
    raised = site_raises("Add a page", ORDER, SCORES, PATHS, {"website/sidebars.js": 4})
    assert raised == {4: 0.7 - CAP_GAP * 0.7}  # below src/c.js (third file), above docs/d.md
    assert raised[4] < 0.7


def test_a_raise_only():
    # already among the first three files: unchanged
    order = [0, 4, 2, 3]
    assert site_raises("Add a page", order, [0.9, 0.5, 0.8, 0.7, 0.85, 0.6], PATHS, {"website/sidebars.js": 4}) == {}
    # not docs work: unchanged
    assert site_raises("Fix the parser", [3, 0, 2, 4], SCORES, PATHS, {"website/sidebars.js": 4}) == {}
    # switched off
    assert site_raises("Add a page", ORDER, SCORES, PATHS, {"website/sidebars.js": 4}, DocsiteWeights(after=0)) == {}


def test_a_file_outside_the_ranking_is_raised():
    paths = PATHS + ["website/docusaurus.config.js"]
    site = {"website/sidebars.js": 4, "website/docusaurus.config.js": 6}
    raised = site_raises("Add a page", ORDER, SCORES, paths, site)
    assert set(raised) == {4, 6} and raised[4] == raised[6]  # ties: the engine sorts them by path


def test_fewer_files_than_after():
    raised = site_raises("Add a page", [0, 1], [0.9, 0.4, 0.1], ["docs/a.md", "src/x.js", "mkdocs.yml"],
                         {"mkdocs.yml": 2})
    assert raised == {2: 0.4 - CAP_GAP * 0.4}


class FakeStore:
    def __init__(self, rows):
        self.rows, self.reads = rows, 0

    def rows_named(self, sha, names):
        self.reads += 1
        return {r: p for r, p in self.rows.items() if p.rpartition("/")[2] in names}


def test_pool_stage_brings_the_configuration_in():
    store = FakeStore({10: "docs/a.md", 11: "src/c.js", 12: "website/sidebars.js", 13: "website/sidebars.js",
                       14: "tests/roots/doc/conf.py", 15: "docs/conf.py"})
    rowids = np.array([10, 11, 12, 13, 14, 15], dtype=np.int64)
    retrieval = np.array([0.9, 0.7, 0.1, 0.2, 0.3, -np.inf])  # docs/conf.py: rejected by a filter
    paths = ["docs/a.md", "src/c.js"]
    added, added_paths, raised = pool_site_raises("Add a page", paths, [0.9, 0.7], store, "sha", rowids, retrieval)
    assert added == [3] and added_paths == ["website/sidebars.js"]  # its best-scored row
    assert raised == {2: 0.7 - CAP_GAP * 0.7}
    assert store.reads == 1


def test_pool_stage_reads_nothing_for_other_questions():
    store = FakeStore({12: "website/sidebars.js"})
    got = pool_site_raises("Fix the parser", ["src/c.js"], [0.7], store, "sha", np.array([12]), np.array([0.1]))
    assert got == ([], [], {}) and store.reads == 0


def test_rows_outside_the_scores_are_left_out():
    store = FakeStore({99: "website/sidebars.js"})  # not among the scored rows (the approximate path)
    got = pool_site_raises("Add a page", ["docs/a.md"], [0.7], store, "sha", np.array([10, 11]), np.array([0.7, 0.1]))
    assert got == ([], [], {})


def test_a_warm_snapshot_reads_the_configuration_rows_once():
    from ragit.retrieve.search import SnapshotMatrix

    rows = {10: "docs/a.md", 12: "website/sidebars.js", 13: "website/sidebars.js"}
    rowids = np.array([10, 12, 13], dtype=np.int64)
    snap = SnapshotMatrix(rowids, None, np.zeros(3, dtype=np.int32), np.ones(1), np.ones(3, dtype=np.int32))
    retrieval = np.array([0.9, 0.1, 0.2])
    one_shot = pool_site_raises("Add a page", ["docs/a.md"], [0.9], FakeStore(rows), "sha", rowids, retrieval)
    store = FakeStore(rows)
    assert list(snap.site_positions(store, "sha")) == [1, 2]
    for _ in range(2):
        got = pool_site_raises("Add a page", ["docs/a.md"], [0.9], store, "sha", rowids, retrieval,
                               kept=lambda: snap.site_paths(store, "sha"))
        assert got == one_shot
    assert store.reads == 1


def test_the_quick_screen_never_drops_docs_work():
    """``_may_ask`` (the pool's best candidate alone, for a question that asks neither for docs
    nor for pages) says no only where the ranked test says no, ties and all."""
    import random

    from ragit.retrieve.docsite import PAGES_WITHIN, _first_files, _may_ask

    rng = random.Random(12)
    files = ["docs/a.md", "docs/b.md", "src/c.js", "src/d.py", "lib/e.go", "website/sidebars.js", "README.md",
             "app/pages/f.js"]
    questions = ["Fix the parser", "Add a page", "Update the docs", "Tweak the sidebar", "rename a variable",
                 "render pages"]
    for _ in range(3000):
        n = rng.randint(1, 30)
        paths = [rng.choice(files) for _ in range(n)]
        scores = [rng.choice([0.1, 0.2, 0.5, 0.5, 0.9, -0.3, rng.random()]) for _ in range(n)]
        question = rng.choice(questions)
        order = sorted(range(n), key=scores.__getitem__, reverse=True)
        ranked = asks_for_site(question, _first_files(order, paths, PAGES_WITHIN), paths)
        assert _may_ask(question, paths, scores) or not ranked
        if "doc" not in question and "page" not in question and "sidebar" not in question:
            assert _may_ask(question, paths, scores) == ranked
