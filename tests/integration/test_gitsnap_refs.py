"""HEAD, branch and ``--at`` resolution against real repositories (knowledge §5.1, §5.2)."""

from __future__ import annotations

import hashlib
import itertools
import subprocess

import pytest

from ragit.errors import RagitError
from ragit.gitsnap.git import Git, GitError, find_root, git_env, is_sha256_repo
from ragit.gitsnap.refs import (
    commits_with_prefix,
    current_branch,
    head_sha,
    is_commit_form,
    resolve_at,
)

DATE = "1700000000 +0000"


def _git_hash(kind: str, body: bytes) -> str:
    return hashlib.sha1(f"{kind} {len(body)}\0".encode() + body).hexdigest()


def _commit_body(tree: str, message: str) -> bytes:
    ident = f"Test <test@example.com> {DATE}"
    return f"tree {tree}\nauthor {ident}\ncommitter {ident}\n\n{message}\n".encode()


@pytest.fixture
def fixed_dates(monkeypatch):
    monkeypatch.setenv("GIT_AUTHOR_DATE", DATE)
    monkeypatch.setenv("GIT_COMMITTER_DATE", DATE)


def test_commit_form_is_a_pure_syntax_check():
    for ok in ("HEAD", "abcd", "ABCD", "0123456789" * 4, "DeadBeef"):
        assert is_commit_form(ok)
    for bad in ("head", "main", "v1.0", "HEAD~1", "abc", "0" * 41, "abcd\n", "g123", "", " abcd"):
        assert not is_commit_form(bad)


def test_head_and_full_and_prefix_forms_resolve_to_lower_case_sha(git_repo):
    git_repo.commit("one", {"a.md": "a\n"})
    sha = git_repo.commit("two", {"a.md": "b\n"})
    git = Git(git_repo.root)
    assert resolve_at(git, "HEAD") == sha
    assert resolve_at(git, sha.upper()) == sha
    assert resolve_at(git, sha[:8].upper()) == sha
    assert resolve_at(git, sha[:12]) == sha


@pytest.mark.parametrize("ref", ["not-a-sha", "main", "HEAD~1", "v1.0", "head"])
def test_non_commit_forms_are_invalid(git_repo, ref):
    git_repo.commit("one", {"a.md": "a\n"})
    git_repo.git("tag", "v1.0")
    with pytest.raises(RagitError) as info:
        resolve_at(Git(git_repo.root), ref)
    err = info.value
    assert err.code == "SNAPSHOT_REF_INVALID"
    assert err.exit_code == 2
    assert err.details == {"ref": ref}
    assert err.recovery == "git rev-parse --verify HEAD"


def test_short_missing_blob_and_tree_prefixes_are_invalid(git_repo):
    sha = git_repo.commit("one", {"a.md": "some text\n"})
    git = Git(git_repo.root)
    blob = git_repo.git("rev-parse", "HEAD:a.md")
    tree = git_repo.git("rev-parse", "HEAD^{tree}")
    missing = next(p for p in (f"{i:04x}" for i in range(65536)) if not sha.startswith(p)
                   and not blob.startswith(p) and not tree.startswith(p))
    git_repo.git("branch", missing)  # a branch named like a prefix is still not a commit id
    for ref in (sha[:3], missing, missing * 10, blob[:8], blob.upper(), tree[:8]):
        with pytest.raises(RagitError) as info:
            resolve_at(git, ref)
        assert info.value.code == "SNAPSHOT_REF_INVALID", ref
        assert info.value.details == {"ref": ref}


def test_unborn_head_is_invalid(git_repo):
    with pytest.raises(RagitError) as info:
        resolve_at(Git(git_repo.root), "HEAD")
    assert info.value.code == "SNAPSHOT_REF_INVALID"
    assert info.value.details == {"ref": "HEAD"}


def test_two_commits_sharing_a_four_char_prefix_are_ambiguous(git_repo, fixed_dates):
    """Predict commit ids in Python, then create the colliding pair with ``git commit-tree``."""
    tree = git_repo.git("mktree", input="")
    seen: dict[str, str] = {}
    for i in itertools.count():
        message = f"collide {i}"
        prefix = _git_hash("commit", _commit_body(tree, message))[:4]
        if prefix in seen:
            pair = [seen[prefix], message]
            break
        seen[prefix] = message
    shas = [git_repo.git("commit-tree", tree, "-m", m) for m in pair]
    assert shas[0][:4] == shas[1][:4] == prefix

    git = Git(git_repo.root)
    with pytest.raises(RagitError) as info:
        resolve_at(git, prefix.upper())
    err = info.value
    assert err.code == "SNAPSHOT_REF_AMBIGUOUS"
    assert err.exit_code == 2
    assert err.details == {"ref": prefix.upper(), "matches": sorted(shas)}
    assert err.recovery == f"git rev-parse --disambiguate={prefix}"
    # A longer prefix of either commit is unique again.
    assert resolve_at(git, shas[0][:12]) == shas[0]


def test_blob_sharing_a_commit_prefix_is_ignored(git_repo, fixed_dates):
    """Birthday search between commit and blob candidates, hashed in Python, then written."""
    tree = git_repo.git("mktree", input="")
    commits: dict[str, str] = {}
    blobs: dict[str, str] = {}
    for i in itertools.count():
        commits.setdefault(_git_hash("commit", _commit_body(tree, f"c{i}"))[:4], f"c{i}")
        blobs.setdefault(_git_hash("blob", f"b{i}\n".encode())[:4], f"b{i}\n")
        shared = commits.keys() & blobs.keys()
        if shared:
            prefix = shared.pop()
            break
    sha = git_repo.git("commit-tree", tree, "-m", commits[prefix])
    blob = git_repo.git("hash-object", "-w", "--stdin", input=blobs[prefix])
    assert sha[:4] == blob[:4] == prefix
    git = Git(git_repo.root)
    assert resolve_at(git, prefix) == sha
    assert commits_with_prefix(git, prefix) == [sha]


def test_branch_detached_and_unborn_heads(git_repo):
    git = Git(git_repo.root)
    assert head_sha(git) is None
    assert current_branch(git) == "main"  # unborn keeps the branch name

    first = git_repo.commit("one", {"a.md": "a\n"})
    git_repo.git("checkout", "-q", "-b", "feature/x")
    assert current_branch(git) == "feature/x"
    assert head_sha(git) == first

    git_repo.git("checkout", "-q", "--detach")
    assert current_branch(git) is None
    assert head_sha(git) == first


def test_linked_worktree_has_its_own_root_and_head(git_repo, tmp_path):
    main_sha = git_repo.commit("one", {"a.md": "a\n"})
    wt = tmp_path / "wt"
    git_repo.git("worktree", "add", "-q", "-b", "side", str(wt))
    (wt / "b.md").write_text("b\n")
    subprocess.run(["git", "add", "b.md"], cwd=wt, check=True)
    subprocess.run(["git", "commit", "-q", "-m", "side"], cwd=wt, check=True)

    nested = wt / "deep" / "er"
    nested.mkdir(parents=True)
    root = find_root(nested)
    assert root == wt.resolve()
    git = Git(root)
    side_sha = head_sha(git)
    assert side_sha != main_sha
    assert current_branch(git) == "side"
    assert resolve_at(git, "HEAD") == side_sha
    assert head_sha(Git(git_repo.root)) == main_sha
    # Per-worktree git dir: HEAD lives under .git/worktrees/wt, hooks are shared.
    assert git.git_path("HEAD").parent.parent.name == "worktrees"
    assert git.git_path("hooks") == (git_repo.root / ".git" / "hooks").resolve()


def test_hooks_path_honours_core_hooks_path(git_repo):
    git_repo.git("config", "core.hooksPath", ".githooks")
    assert Git(git_repo.root).git_path("hooks") == git_repo.root / ".githooks"


def test_find_root_outside_git_and_inside_git_dir(git_repo, tmp_path):
    outside = tmp_path / "plain"
    outside.mkdir()
    assert find_root(outside) is None
    assert find_root(tmp_path / "does-not-exist") is None
    assert find_root(git_repo.root / ".git") is None
    assert find_root(git_repo.root) == git_repo.root.resolve()


def test_hook_environment_does_not_redirect_git(git_repo, tmp_path, monkeypatch):
    """A hook exports GIT_DIR/GIT_INDEX_FILE; ragit must still address the worktree it was given."""
    sha = git_repo.commit("one", {"a.md": "a\n"})
    other = tmp_path / "other"
    subprocess.run(["git", "init", "-q", str(other)], check=True)
    monkeypatch.setenv("GIT_DIR", str(other / ".git"))
    monkeypatch.setenv("GIT_INDEX_FILE", str(other / ".git" / "index"))
    assert find_root(git_repo.root) == git_repo.root.resolve()
    assert head_sha(Git(git_repo.root)) == sha


def test_sha256_repositories_are_detected(git_repo, tmp_path):
    assert not is_sha256_repo(Git(git_repo.root))
    sha256 = tmp_path / "s256"
    subprocess.run(["git", "init", "-q", "--object-format=sha256", str(sha256)], check=True)
    assert is_sha256_repo(Git(sha256))


def test_git_failures_carry_stderr(git_repo):
    with pytest.raises(GitError) as info:
        Git(git_repo.root).run("cat-file", "-p", "0" * 40)
    assert info.value.returncode != 0
    assert info.value.stderr  # git's own explanation travels with the exception
    assert "cat-file" in str(info.value)


def _git_toplevel(path) -> str | None:
    proc = subprocess.run(["git", "rev-parse", "--show-toplevel"], cwd=path, capture_output=True, text=True,
                          env=git_env())
    return proc.stdout.rstrip("\n") if proc.returncode == 0 and proc.stdout.strip() else None


def test_the_file_only_root_is_gits_answer_or_none(git_repo, tmp_path):
    """``find_root`` answers a plain root without git; whatever it answers is git's answer, and
    every unusual layout goes to git (worktree, bare, includes, extensions, nested, linked)."""
    from ragit.gitsnap.git import _plain_worktree_root

    root = git_repo.root
    link = tmp_path / "link"
    link.symlink_to(root)
    nested = root / "a" / "b"
    nested.mkdir(parents=True)
    for path in (root, link):
        assert _plain_worktree_root(path) is not None
        assert str(_plain_worktree_root(path)) == _git_toplevel(path) == str(find_root(path))
    assert _plain_worktree_root(nested) is None and str(find_root(nested)) == _git_toplevel(nested)
    assert _plain_worktree_root(root / ".git") is None and find_root(root / ".git") is None
    config = (root / ".git" / "config").read_text()
    other = tmp_path / "elsewhere"
    other.mkdir()
    for extra in (f"[core]\n\tworktree = {other}\n", "[core]\n\tbare = true\n", "[core]\n\tbare\n",
                  "[include]\n\tpath = x\n", "[extensions]\n\tworktreeConfig = true\n"):
        (root / ".git" / "config").write_text(config + extra)
        assert _plain_worktree_root(root) is None, extra
    (root / ".git" / "config").write_text(config)
    (root / ".git" / "HEAD").write_text("garbage\n")
    assert _plain_worktree_root(root) is None
