"""Dirty paths and the repository context of a read (knowledge §5.2 step 1, §6)."""

from __future__ import annotations

import subprocess

from ragit.gitsnap.context import RepoContext, read_context
from ragit.gitsnap.dirty import dirty_paths, parse_status
from ragit.gitsnap.git import Git


def _dirty(repo) -> list[str]:
    git = Git(repo.root)
    return dirty_paths(git)


def test_clean_tree_has_no_dirty_paths(git_repo):
    git_repo.commit("one", {"a.md": "a\n", "docs/b.md": "b\n"})
    assert _dirty(git_repo) == []


def test_staged_unstaged_untracked_and_deleted(git_repo):
    git_repo.commit("one", {"staged.md": "1\n", "unstaged.md": "1\n", "gone.md": "1\n",
                            "reverted.md": "1\n"})
    git_repo.write("staged.md", "2\n")
    git_repo.git("add", "staged.md")
    git_repo.write("unstaged.md", "2\n")
    (git_repo.root / "gone.md").unlink()
    git_repo.write("new/untracked.md", "x\n")
    git_repo.write("reverted.md", "2\n")
    git_repo.git("add", "reverted.md")
    git_repo.write("reverted.md", "1\n")  # staged change undone in the worktree: equal to HEAD
    # ...but its staged change is still uncommitted, so it counts (docs/architecture.md: one
    # `git status` instead of the reference's diff + ls-files pair)
    assert _dirty(git_repo) == ["gone.md", "new/untracked.md", "reverted.md", "staged.md", "unstaged.md"]


def test_ignored_files_never_count(git_repo):
    git_repo.commit("one", {".gitignore": "*.log\nbuild/\n", "a.md": "a\n"})
    git_repo.write("debug.log", "x\n")
    git_repo.write("build/out.md", "x\n")
    (git_repo.root / ".git" / "info" / "exclude").write_text("local.md\n")
    git_repo.write("local.md", "x\n")
    assert _dirty(git_repo) == []


def test_rename_contributes_old_and_new_path(git_repo):
    git_repo.commit("one", {"docs/old.md": "line\n" * 20})
    git_repo.git("mv", "docs/old.md", "docs/new.md")
    assert _dirty(git_repo) == ["docs/new.md", "docs/old.md"]
    # An unstaged rename (delete + untracked add) gives the same set.
    git_repo.git("reset", "-q")
    assert _dirty(git_repo) == ["docs/new.md", "docs/old.md"]


def test_ragit_directory_is_never_dirty(git_repo):
    git_repo.commit("one", {".ragit/config.toml": "a = 1\n", "a.md": "a\n"})
    git_repo.write(".ragit/config.toml", "a = 2\n")
    git_repo.write(".ragit/memory/working/current.json", "{}\n")
    git_repo.write(".ragitx/keep.md", "x\n")
    git_repo.write("sub/.ragit/x.md", "x\n")
    assert _dirty(git_repo) == [".ragitx/keep.md", "sub/.ragit/x.md"]


def test_odd_paths_survive_nul_parsing(git_repo):
    names = [" lead.md", "trail .md", "new\nline.md", "tab\there.md", "ünï.md", 'q"uote.md']
    git_repo.commit("one", {name: "1\n" for name in names})
    for name in names:
        git_repo.write(name, "2\n")
    git_repo.write("un tracked\n.md", "x\n")
    assert _dirty(git_repo) == sorted(names + ["un tracked\n.md"])


def test_unborn_head_every_tracked_and_untracked_path_is_dirty(git_repo):
    git_repo.write(".gitignore", "*.log\n")
    git_repo.write("staged.md", "x\n")
    git_repo.git("add", "staged.md", ".gitignore")
    git_repo.write("untracked.md", "x\n")
    git_repo.write("ignored.log", "x\n")
    git_repo.write(".ragit/config.toml", "x\n")
    assert dirty_paths(Git(git_repo.root)) == [".gitignore", "staged.md", "untracked.md"]


def test_status_parsing_of_renames_and_copies():
    out = (b" M a b.md\0R  new.md\0old.md\0C  copy.md\0src.md\0 D x\ny.md\0A  .ragit/z\0"
           b"?? untracked.md\0RM moved.md\0orig.md\0")
    assert parse_status(out) == {
        "a b.md", "old.md", "new.md", "copy.md", "x\ny.md", ".ragit/z", "untracked.md", "moved.md", "orig.md"
    }
    assert parse_status(b"") == set()


def test_read_context_on_a_branch(git_repo):
    sha = git_repo.commit("one", {"a.md": "a\n"})
    git_repo.write("a.md", "changed\n")
    git_repo.write(".ragit/cache/x", "x\n")
    git = Git(git_repo.root)
    assert read_context(git) == RepoContext(git_repo.root, sha, "main", False, ["a.md"])
    assert read_context(git, with_dirty=False) == RepoContext(git_repo.root, sha, "main", False, [])


def test_read_context_detached(git_repo):
    first = git_repo.commit("one", {"a.md": "a\n"})
    git_repo.commit("two", {"a.md": "b\n"})
    git_repo.git("checkout", "-q", first)
    ctx = read_context(Git(git_repo.root))
    assert (ctx.head, ctx.branch, ctx.detached, ctx.dirty) == (first, None, True, [])


def test_read_context_unborn(git_repo):
    git_repo.write("a.md", "a\n")
    ctx = read_context(Git(git_repo.root))
    assert (ctx.head, ctx.branch, ctx.detached, ctx.dirty) == (None, "main", False, ["a.md"])
    ctx = read_context(Git(git_repo.root), with_dirty=False)
    assert (ctx.head, ctx.branch, ctx.detached, ctx.dirty) == (None, "main", False, [])


def test_read_context_with_a_file_named_head(git_repo):
    sha = git_repo.commit("one", {"HEAD": "not a ref\n"})
    git_repo.write("HEAD", "edited\n")
    ctx = read_context(Git(git_repo.root))
    assert (ctx.head, ctx.branch, ctx.dirty) == (sha, "main", ["HEAD"])


def test_linked_worktree_has_its_own_dirty_set(git_repo, tmp_path):
    git_repo.commit("one", {"a.md": "a\n"})
    wt = tmp_path / "wt"
    git_repo.git("worktree", "add", "-q", "--detach", str(wt))
    (wt / "a.md").write_text("edited in the worktree\n")
    (wt / "wt-only.md").write_text("x\n")
    git_repo.write("main-only.md", "x\n")

    wt_ctx = read_context(Git(wt))
    assert wt_ctx.detached and wt_ctx.branch is None
    assert wt_ctx.dirty == ["a.md", "wt-only.md"]
    assert read_context(Git(git_repo.root)).dirty == ["main-only.md"]


def test_touched_but_unchanged_files_are_clean(git_repo):
    """Stale stat data alone is not a change: git compares content, as ``git diff`` does."""
    git_repo.commit("one", {"a.md": "a\n"})
    subprocess.run(["touch", "-d", "2001-01-01", str(git_repo.root / "a.md")], check=True)
    assert read_context(Git(git_repo.root)).dirty == []
