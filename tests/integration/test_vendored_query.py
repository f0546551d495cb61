"""The ``vendored`` re-rank factor end to end: ``query --explain`` ranks a bundled copy of another
project (``mylib/packages/urllib3/``) below the project's own code and says why; a question that
names the bundled project gets it first, unreduced."""

from __future__ import annotations

from conftest import explained_hits, rerank_factors, write_placeholder_config

VENDORED = ("class HTTPResponse:\n    \"\"\"Decode the response body of a pooled connection.\"\"\"\n"
            "    def read(self, decode_content=True):\n        return self._decoder.decompress(self._body)\n")
OWN = ("class Response:\n    \"\"\"The response object of a request.\"\"\"\n"
       "    def body(self):\n        return self.raw.read()\n")


def test_bundled_code_ranks_below_own_code_and_explains_itself(git_repo, cli):
    write_placeholder_config(git_repo.root)
    git_repo.commit("init", {"mylib/__init__.py": "", "mylib/models.py": OWN,
                             "mylib/packages/__init__.py": "", "mylib/packages/urllib3/response.py": VENDORED})
    assert cli("ingest", "--all", "--cwd", str(git_repo.root), "--format", "json").code == 0

    hits = explained_hits(cli, git_repo.root, "decode the response body")
    paths = [h["path"] for h in hits]
    assert paths.index("mylib/models.py") < paths.index("mylib/packages/urllib3/response.py")
    vendored = hits[paths.index("mylib/packages/urllib3/response.py")]
    assert rerank_factors(vendored)["vendored"] == 0.5
    assert "vendored" not in rerank_factors(hits[paths.index("mylib/models.py")])

    named = explained_hits(cli, git_repo.root, "urllib3 decode the response body")
    assert named[0]["path"] == "mylib/packages/urllib3/response.py"
    assert "vendored" not in rerank_factors(named[0])
