"""``history.diff_tree_stdin`` (issue 15, co-change mining wall): the commits shared out among
several ``git diff-tree --stdin`` processes give the output of one process byte for byte, so the
co-change cache and counts files are the same; a git that fails still raises."""

from __future__ import annotations

import pytest

from ragit.gitsnap import cochange, history
from ragit.gitsnap.cochange import DIFF_FLAGS, load_changes
from ragit.gitsnap.git import Git, GitError


@pytest.fixture
def busy_history(git_repo):
    """Commits of every kind: adds, edits, deletes, renames (exact and edited), an empty commit,
    paths with spaces, non-ASCII and a newline, and a large rename that is slow to detect."""
    body = "".join(f"line {i} of a module long enough for rename detection\n" for i in range(40))
    git_repo.commit("init", {"pkg/app.py": body, "pkg/ctx.py": "c0\n", "a b.md": "# x\n", "ünï.txt": "u\n"})
    for i in range(14):
        git_repo.commit(f"edit {i}", {"pkg/app.py": body + f"edit {i}\n", f"notes/n{i}.md": f"# {i}\n"})
        if i % 4 == 1:
            git_repo.git("mv", f"notes/n{i}.md", f"notes/moved {i}.md")
            git_repo.commit(f"move {i}")
        if i % 5 == 2:
            git_repo.git("rm", "-q", f"notes/n{i}.md")
            git_repo.commit(f"drop {i}")
    git_repo.git("commit", "-q", "--allow-empty", "-m", "empty")
    git_repo.git("mv", "pkg", "src")
    git_repo.commit("move the package", {"src/app.py": body + "moved\n", "line\nbreak.txt": "n\n"})
    big = "".join(f"row {i} " * 20 + "\n" for i in range(3000))
    git_repo.commit("big", {"data/big.txt": big})
    git_repo.git("mv", "data/big.txt", "data/bigger.txt")
    return git_repo, git_repo.commit("big moved", {"data/bigger.txt": big + "tail\n"})


def _shas(git: Git, head: str) -> list[str]:
    return git.run("rev-list", "--no-merges", head, "--").decode().split()


@pytest.mark.parametrize("processes", [2, 3])
@pytest.mark.parametrize("block", [1, 2, 5])
def test_shared_out_output_is_one_process_output(busy_history, monkeypatch, processes, block):
    repo, head = busy_history
    git = Git(repo.root)
    shas = _shas(git, head)
    expected = git.run("diff-tree", "--stdin", *DIFF_FLAGS, input="".join(f"{s}\n" for s in shas).encode())
    assert b"\0R" in expected and b"line\nbreak.txt" in expected  # renames and a newline in a path
    monkeypatch.setattr(history, "BLOCK", block)
    started = _count_processes(monkeypatch)
    assert history.diff_tree_stdin(git, shas, DIFF_FLAGS, processes) == expected
    assert len(started) == processes
    assert history.diff_tree_stdin(git, shas, DIFF_FLAGS, 1) == expected


def test_more_input_than_a_pipe_holds(busy_history):
    """Each process's commits (here ~100 kB of ids) are written as git reads them."""
    repo, head = busy_history
    git = Git(repo.root)
    shas = _shas(git, head) * 100  # a commit asked again is diffed again
    expected = git.run("diff-tree", "--stdin", *DIFF_FLAGS, input="".join(f"{s}\n" for s in shas).encode())
    assert history.diff_tree_stdin(git, shas, DIFF_FLAGS, 2) == expected


def _count_processes(monkeypatch) -> list:
    """The ``diff-tree --stdin`` processes diff_tree_stdin starts from here on."""
    import subprocess

    started = []
    popen = subprocess.Popen

    def counted(args, *rest, **named):
        started.append(args)
        return popen(args, *rest, **named)

    monkeypatch.setattr(subprocess, "Popen", counted)
    return started


def test_co_change_files_do_not_depend_on_the_miners(busy_history, monkeypatch, tmp_path):
    repo, head = busy_history
    git = Git(repo.root)
    monkeypatch.setattr(history, "BLOCK", 2)
    files = {}
    for miners in (1, 2):
        monkeypatch.setattr(cochange, "MINERS", miners)
        monkeypatch.setattr(cochange, "_MEMO", {})
        monkeypatch.setattr(cochange, "_READ", {})
        root = tmp_path / f"cache{miners}"
        stats = cochange.cochange_at(git, root, head, keep_changes=True, keep_counts=True)
        assert stats.commits == len(_shas(git, head))
        files[miners] = {p.name: p.read_bytes() for p in (root / cochange.CACHE_DIR).iterdir()}
        assert load_changes(git, root, head, write=False)  # the cache it wrote reads back
    assert files[1] == files[2] and len(files[1]) == 3  # changes, said (messages) and counts


def test_a_failing_diff_tree_raises(busy_history, monkeypatch):
    repo, head = busy_history
    git = Git(repo.root)
    monkeypatch.setattr(history, "BLOCK", 2)
    with pytest.raises(GitError):
        history.diff_tree_stdin(git, _shas(git, head), ("--no-such-option",), 2)
