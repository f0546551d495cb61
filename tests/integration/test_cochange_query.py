"""The co-change stage wired into ``query``: ingest keeps the snapshot's counts, a query reads them
(or mines in memory) and writes nothing, ``retrieval.cochange = false`` turns it off, and a clone
without the history still answers."""

from __future__ import annotations

import shutil
import subprocess

from conftest import rerank_factors, tree_snapshot, write_placeholder_config

from ragit.gitsnap import cochange
from ragit.gitsnap.git import Git

FILES = {
    "src/app.py": "def create_app(config):\n    \"\"\"Build the application object.\"\"\"\n    return App(config)\n",
    "src/ctx.py": "class RequestContext:\n    \"\"\"Per-request state pushed around a handler.\"\"\"\n    stack = []\n",
    "src/cli.py": "def main(argv):\n    \"\"\"Command-line entry point.\"\"\"\n    return run(argv)\n",
    "src/util.py": "def slugify(text):\n    return text.lower().replace(' ', '-')\n",
}


def _history(repo) -> str:
    write_placeholder_config(repo.root)
    repo.commit("init", FILES)
    for i in range(3):  # app.py and ctx.py change together
        repo.commit(f"app+ctx {i}", {"src/app.py": FILES["src/app.py"] + f"# {i}\n",
                                      "src/ctx.py": FILES["src/ctx.py"] + f"# {i}\n"})
    return repo.commit("util alone", {"src/util.py": FILES["src/util.py"] + "# u\n"})


def _query(cli, root, *extra):
    result = cli("query", "create the application object and its request state", "--top-k", "4", "--explain", "--format", "json",
                 "--cwd", str(root), *extra)
    assert result.code == 0, result
    return result.json["data"]["hits"]


def test_ingest_keeps_counts_and_the_query_raises_the_partner(git_repo, cli):
    head = _history(git_repo)
    assert cli("ingest", "--all", "--cwd", str(git_repo.root), "--format", "json").code == 0
    counts = git_repo.root / ".ragit" / "cache" / "cochange" / f"counts-{head}.json"
    assert counts.is_file()
    cochange._MEMO.clear()
    hits = _query(cli, git_repo.root)
    by_path = {h["path"]: h for h in hits}
    assert hits[0]["path"] == "src/app.py"
    assert "cochange" in rerank_factors(by_path["src/ctx.py"])  # ctx.py changed with app.py three times
    assert rerank_factors(by_path["src/cli.py"]).get("cochange", 0) < rerank_factors(by_path["src/ctx.py"])["cochange"]
    assert by_path["src/ctx.py"]["scoreFinal"] < hits[0]["scoreFinal"]  # never above the vouching hit


def test_a_query_reads_stored_counts_without_git_and_writes_nothing(git_repo, cli, monkeypatch):
    _history(git_repo)
    assert cli("ingest", "--all", "--cwd", str(git_repo.root), "--format", "json").code == 0
    cochange._MEMO.clear()
    expected = _query(cli, git_repo.root)

    def no_mining(*args, **kwargs):
        raise AssertionError("the stored counts should have been read")

    cochange._MEMO.clear()
    monkeypatch.setattr(cochange, "_gather", no_mining)
    before = tree_snapshot(git_repo.root)
    assert _query(cli, git_repo.root) == expected
    assert tree_snapshot(git_repo.root) == before


def test_without_stored_counts_the_query_mines_in_memory_and_writes_nothing(git_repo, cli):
    _history(git_repo)
    assert cli("ingest", "--all", "--cwd", str(git_repo.root), "--format", "json").code == 0
    cochange._MEMO.clear()
    expected = _query(cli, git_repo.root)
    shutil.rmtree(git_repo.root / ".ragit" / "cache" / "cochange")
    cochange._MEMO.clear()
    before = tree_snapshot(git_repo.root)
    assert _query(cli, git_repo.root) == expected
    assert tree_snapshot(git_repo.root) == before


def test_config_switch_turns_the_stage_off(git_repo, cli):
    _history(git_repo)
    assert cli("ingest", "--all", "--cwd", str(git_repo.root), "--format", "json").code == 0
    assert cli("config", "set", "retrieval.cochange", "false", "--cwd", str(git_repo.root)).code == 0
    cochange._MEMO.clear()
    assert not any("cochange" in rerank_factors(h) for h in _query(cli, git_repo.root))


def test_a_shallow_clone_answers_without_the_stage(git_repo, cli, tmp_path):
    _history(git_repo)
    clone = tmp_path / "shallow"
    subprocess.run(["git", "clone", "-q", "--depth", "1", f"file://{git_repo.root}", str(clone)], check=True)
    write_placeholder_config(clone)
    assert cli("ingest", "--all", "--cwd", str(clone), "--format", "json").code == 0
    cochange._MEMO.clear()
    hits = _query(cli, clone)
    assert hits and not any("cochange" in rerank_factors(h) for h in hits)  # the boundary commit is no co-change


def test_missing_history_objects_give_no_stage_instead_of_an_error(git_repo, cli, monkeypatch):
    _history(git_repo)
    assert cli("ingest", "--all", "--cwd", str(git_repo.root), "--format", "json").code == 0
    shutil.rmtree(git_repo.root / ".ragit" / "cache" / "cochange")
    cochange._MEMO.clear()
    real = Git.run

    def broken(self, *args, **kwargs):
        if args and args[0] == "rev-list":
            from ragit.gitsnap.git import GitError

            raise GitError(list(args), 128, b"fatal: missing object")
        return real(self, *args, **kwargs)

    monkeypatch.setattr(Git, "run", broken)
    hits = _query(cli, git_repo.root)
    assert hits and not any("cochange" in rerank_factors(h) for h in hits)
