"""Ancestry, commit times and renames (knowledge §5.4, §7.2, §20)."""

from __future__ import annotations

import subprocess

import pytest

from ragit.gitsnap.git import Git, GitError
from ragit.gitsnap.history import commit_time, find_rename, first_parent, is_ancestor, rev_list


def _commit_at(repo, monkeypatch, seconds: int, message: str, files: dict[str, str]) -> str:
    monkeypatch.setenv("GIT_AUTHOR_DATE", f"{seconds} +0000")
    monkeypatch.setenv("GIT_COMMITTER_DATE", f"{seconds} +0200")
    return repo.commit(message, files)


def test_rev_list_is_newest_first_and_follows_merges(git_repo, monkeypatch):
    base = _commit_at(git_repo, monkeypatch, 1_700_000_000, "base", {"a.md": "a\n"})
    git_repo.git("checkout", "-q", "-b", "side")
    side = _commit_at(git_repo, monkeypatch, 1_700_000_100, "side", {"s.md": "s\n"})
    git_repo.git("checkout", "-q", "main")
    main = _commit_at(git_repo, monkeypatch, 1_700_000_200, "main", {"m.md": "m\n"})
    git_repo.git("merge", "-q", "--no-ff", "-m", "merge", "side")
    merge = git_repo.head()

    git = Git(git_repo.root)
    assert rev_list(git, merge)[0] == merge
    assert set(rev_list(git, merge)) == {merge, main, side, base}
    assert rev_list(git, merge)[-1] == base
    assert rev_list(git, side) == [side, base]
    assert first_parent(git, merge) == main
    assert first_parent(git, side) == base
    assert first_parent(git, base) is None


def test_is_ancestor(git_repo):
    first = git_repo.commit("one", {"a.md": "a\n"})
    second = git_repo.commit("two", {"a.md": "b\n"})
    git_repo.git("checkout", "-q", "-b", "other", first)
    other = git_repo.commit("three", {"c.md": "c\n"})
    git = Git(git_repo.root)
    assert is_ancestor(git, first, second)
    assert is_ancestor(git, second, second)
    assert not is_ancestor(git, second, first)
    assert not is_ancestor(git, other, second)
    with pytest.raises(GitError):
        is_ancestor(git, "0" * 40, second)


def test_commit_time_is_committer_time_in_utc_with_milliseconds(git_repo, monkeypatch):
    sha = _commit_at(git_repo, monkeypatch, 1_772_964_000, "one", {"a.md": "a\n"})
    assert commit_time(Git(git_repo.root), sha) == "2026-03-08T10:00:00.000Z"


def test_find_rename_uses_git_rename_detection(git_repo):
    text = "".join(f"line {i}\n" for i in range(40))
    old = git_repo.commit("one", {"docs/guide.md": text, "keep.md": "k\n", "gone.md": "bye\n"})
    (git_repo.root / "manual").mkdir()
    git_repo.git("mv", "docs/guide.md", "manual/guide.md")
    git_repo.write("manual/guide.md", text + "one more line\n")  # similar, not identical
    git_repo.git("rm", "-q", "gone.md")
    new = git_repo.commit("two")
    git = Git(git_repo.root)
    assert find_rename(git, old, new, "docs/guide.md") == "manual/guide.md"
    assert find_rename(git, old, new, "gone.md") is None
    assert find_rename(git, old, new, "keep.md") is None


def test_shallow_clone_history_stops_at_the_boundary(git_repo, tmp_path):
    git_repo.commit("one", {"a.md": "1\n"})
    git_repo.commit("two", {"a.md": "2\n"})
    tip = git_repo.commit("three", {"a.md": "3\n"})
    shallow = tmp_path / "shallow"
    subprocess.run(
        ["git", "clone", "-q", "--depth", "2", f"file://{git_repo.root}", str(shallow)], check=True
    )
    git = Git(shallow)
    history = rev_list(git, tip)
    assert len(history) == 2 and history[0] == tip
    assert first_parent(git, history[1]) is None
