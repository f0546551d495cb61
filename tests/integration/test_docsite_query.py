"""The docs-site stage wired into ``query``: a question about a docs page brings the site's
navigation (read from the store by file name) next to the pages, shown as the factor ``docsite``;
a question about code leaves the ranking alone."""

from __future__ import annotations

import pytest
from conftest import rerank_factors, write_pg_config, write_placeholder_config

PAGE = "# {title}\n\nHow the {word} works, step by step, with examples of the {word}.\n"
FILES = {
    "docs/store.md": PAGE.format(title="Store", word="store"),
    "docs/reducers.md": PAGE.format(title="Reducers", word="reducer"),
    "docs/actions.md": PAGE.format(title="Actions", word="action"),
    "docs/middleware.md": PAGE.format(title="Middleware", word="middleware"),
    "src/store.js": "export function createStore(reducer) {\n  let state\n  return { getState: () => state }\n}\n",
    "src/compose.js": "export function compose(...funcs) {\n"
                      "  return funcs.reduce((a, b) => (...args) => a(b(...args)))\n}\n",
    "website/sidebars.js": "module.exports = {\n  nav: ['intro', 'faq'],\n}\n",
    **{f"src/page{i}.js": f"// the store page {i}: add reducers to the store\nexport const page{i} = {{ store: {i} }}\n"
       for i in range(6)},
    "tests/roots/doc/conf.py": "project = 'fixture'\n",
}


def _query(cli, root, question, *extra):
    result = cli("query", question, "--top-k", "8", "--explain", "--format", "json", "--cwd", str(root), *extra)
    assert result.code == 0, result
    return result.json["data"]["hits"]


@pytest.mark.parametrize("backend", ["sqlite", "postgres"])
def test_a_docs_page_question_brings_the_sidebar(git_repo, cli, backend, request):
    if backend == "postgres":  # the store lists the configuration's rows by file name: both backends
        write_pg_config(git_repo.root, request.getfixturevalue("pg_dsn"))
    else:
        write_placeholder_config(git_repo.root)
    git_repo.commit("init", FILES)
    assert cli("ingest", "--all", "--cwd", str(git_repo.root), "--format", "json").code == 0
    hits = _query(cli, git_repo.root, "Add a page about the store and its reducers")
    files = list(dict.fromkeys(h["path"] for h in hits))
    assert files.index("website/sidebars.js") == 3, files  # right below the three best files
    sidebar = next(h for h in hits if h["path"] == "website/sidebars.js")
    assert rerank_factors(sidebar)["docsite"] > 0
    third = next(h for h in hits if h["path"] == files[files.index("website/sidebars.js") - 1])
    assert sidebar["scoreFinal"] < third["scoreFinal"]  # below the file it ranks after
    assert all(not h["path"].startswith("tests/") or "docsite" not in rerank_factors(h) for h in hits)


def test_a_code_question_leaves_the_ranking_alone(git_repo, cli):
    write_placeholder_config(git_repo.root)
    git_repo.commit("init", FILES)
    assert cli("ingest", "--all", "--cwd", str(git_repo.root), "--format", "json").code == 0
    hits = _query(cli, git_repo.root, "compose functions right to left")
    assert all("docsite" not in rerank_factors(h) for h in hits)


def test_without_the_stage_the_sidebar_ranks_far_down(git_repo, cli, monkeypatch):
    from ragit.retrieve import docsite

    write_placeholder_config(git_repo.root)
    git_repo.commit("init", FILES)
    assert cli("ingest", "--all", "--cwd", str(git_repo.root), "--format", "json").code == 0
    monkeypatch.setattr(docsite, "asks_for_site", lambda question, first_paths, candidates=(): False)
    hits = _query(cli, git_repo.root, "Add a page about the store and its reducers")
    files = list(dict.fromkeys(h["path"] for h in hits))
    assert "website/sidebars.js" not in files[:4]  # what the first test's raise changed
