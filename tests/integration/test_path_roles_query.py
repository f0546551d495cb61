"""The ``changelog`` re-rank factor and test-suite directories end to end: ``query --explain`` ranks
a changelog (``CHANGES``, which repeats the words of every change) below the code it describes and
an in-package ``testsuite/`` below the code it tests, and says why; a question that asks for the
changelog or for tests gets it unreduced."""

from __future__ import annotations

from conftest import explained_hits, rerank_factors, write_placeholder_config

CODE = ("def redirect(location, code=302):\n    \"\"\"Return a response that redirects the client to location.\"\"\"\n"
        "    return Response(status=code, headers={'Location': location})\n")
CHANGES = ("Version 2.2\n-----------\n\n- Add a redirect method to the app that redirects the client to a\n"
           "  location with a code. The redirect response keeps the location.\n")
TESTS = ("def test_redirect_location():\n    response = redirect('/target', code=302)\n"
         "    assert response.headers['Location'] == '/target'\n")


def test_changelog_and_test_suite_rank_below_the_code_and_explain_themselves(git_repo, cli):
    write_placeholder_config(git_repo.root)
    git_repo.commit("init", {"CHANGES": CHANGES, "myapp/__init__.py": "", "myapp/helpers.py": CODE,
                             "myapp/testsuite/__init__.py": "", "myapp/testsuite/helpers.py": TESTS})
    assert cli("ingest", "--all", "--cwd", str(git_repo.root), "--format", "json").code == 0

    hits = explained_hits(cli, git_repo.root, "redirect the client to a location")
    paths = [h["path"] for h in hits]
    assert paths[0] == "myapp/helpers.py"
    changes = rerank_factors(hits[paths.index("CHANGES")])
    assert changes["changelog"] == 0.5 and changes["role"] == 0.35  # a doc file, and a changelog
    assert rerank_factors(hits[paths.index("myapp/testsuite/helpers.py")])["role"] == 0.5
    assert "changelog" not in rerank_factors(hits[0]) and "role" not in rerank_factors(hits[0])

    asked = explained_hits(cli, git_repo.root, "changelog entry for redirecting the client to a location")
    entry = next(h for h in asked if h["path"] == "CHANGES")
    assert "changelog" not in rerank_factors(entry)

    tests = explained_hits(cli, git_repo.root, "tests for redirect location")
    suite = next(h for h in tests if h["path"] == "myapp/testsuite/helpers.py")
    assert "role" not in rerank_factors(suite)
