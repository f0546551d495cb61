"""Tree listing, changed paths and blob reading by id (knowledge §7.2, §8.1, §18)."""

from __future__ import annotations

import os
import subprocess

import pytest

from ragit.gitsnap.blobs import BlobReader, MissingObject, object_type
from ragit.gitsnap.git import Git
from ragit.gitsnap.tree import changed_paths, list_tree
from ragit.gitsnap.types import TreeEntry


def _blob(repo, rev_path: str) -> str:
    return repo.git("rev-parse", rev_path)


def test_list_tree_within_lists_those_parts_and_the_gitignores_above_them(git_repo):
    for path in (".gitignore", "src/.gitignore", "src/app/.gitignore", "src/app/a.py", "src/app/deep/b.py",
                 "src/app.py", "src/other/c.py", "docs/.gitignore", "docs/x.md", "a[1]/d.py", "a1/e.py", "README.md"):
        git_repo.write(path, "# " + path + "\n")
    git_repo.git("add", "-A")
    git_repo.git("commit", "-q", "-m", "one")
    git = Git(git_repo.root)
    sha = git_repo.head()
    everything = list_tree(git, sha)

    part = list_tree(git, sha, within=["src/app", "a[1]", "README.md"], also_named=".gitignore")
    assert [e.path for e in part] == [".gitignore", "README.md", "a[1]/d.py", "src/.gitignore", "src/app/.gitignore",
                                      "src/app/a.py", "src/app/deep/b.py"]
    assert all(e in everything for e in part)
    assert list_tree(git, sha, within=[]) == []


def test_list_tree_reports_modes_sizes_and_kinds(git_repo):
    git_repo.write("docs/a.md", "hello\n")
    git_repo.write("run.sh", "#!/bin/sh\n")
    os.chmod(git_repo.root / "run.sh", 0o755)
    os.symlink("docs/a.md", git_repo.root / "link.md")
    git_repo.write("z space/ü.md", "x" * 70_000)
    git_repo.git("add", "-A")
    sub_sha = "1234567890abcdef1234567890abcdef12345678"
    git_repo.git("update-index", "--add", "--cacheinfo", f"160000,{sub_sha},vendor/sub")
    git_repo.git("commit", "-q", "-m", "one")
    sha = git_repo.head()

    entries = list_tree(Git(git_repo.root), sha)
    by_path = {e.path: e for e in entries}
    assert [e.path for e in entries] == sorted(by_path)
    a_blob = _blob(git_repo, "HEAD:docs/a.md")
    assert by_path["docs/a.md"] == TreeEntry("100644", "blob", a_blob, 6, "docs/a.md")
    assert by_path["run.sh"].mode == "100755"
    assert by_path["link.md"].mode == "120000" and by_path["link.md"].size == len("docs/a.md")
    assert by_path["z space/ü.md"].size == 70_000
    assert by_path["vendor/sub"] == TreeEntry("160000", "commit", sub_sha, None, "vendor/sub")


def test_list_tree_of_an_older_commit_ignores_the_worktree(git_repo):
    first = git_repo.commit("one", {"a.md": "a\n"})
    git_repo.commit("two", {"b.md": "b\n"})
    git_repo.write("untracked.md", "x\n")
    assert [e.path for e in list_tree(Git(git_repo.root), first)] == ["a.md"]


def test_changed_paths_include_both_sides_of_a_rename(git_repo):
    base = git_repo.commit("one", {"keep.md": "k\n", "edit.md": "1\n", "old.md": "same\n" * 10,
                                   "drop.md": "d\n"})
    git_repo.write("edit.md", "2\n")
    (git_repo.root / "docs").mkdir()
    git_repo.git("mv", "old.md", "docs/new.md")
    git_repo.git("rm", "-q", "drop.md")
    git_repo.write("added.md", "a\n")
    head = git_repo.commit("two")
    git = Git(git_repo.root)
    assert changed_paths(git, base, head) == [
        "added.md", "docs/new.md", "drop.md", "edit.md", "old.md"
    ]
    assert changed_paths(git, head, head) == []


def test_blob_reader_reads_committed_content_not_the_worktree(git_repo):
    git_repo.commit("one", {"a.md": "committed\n", "b.md": "bee\n"})
    git_repo.write("a.md", "uncommitted edit\n")
    a, b = _blob(git_repo, "HEAD:a.md"), _blob(git_repo, "HEAD:b.md")
    with BlobReader(Git(git_repo.root)) as reader:
        assert reader.read(a) == b"committed\n"
        assert reader.read(b) == b"bee\n"
        assert list(reader.read_many([b, a, b])) == [
            (b, b"bee\n"), (a, b"committed\n"), (b, b"bee\n")
        ]
        assert list(reader.read_many([])) == []


def test_read_many_streams_large_batches_without_deadlock(git_repo):
    """Requests and responses both exceed the pipe buffers; order is preserved."""
    files = {f"f{i:03d}.md": f"file {i}\n" * (i + 1) for i in range(100)}
    files["big.bin"] = "\0x" * 100_000
    git_repo.commit("many", files)
    entries = list_tree(Git(git_repo.root), git_repo.head())
    oids = [e.oid for e in entries] * 30  # 3,030 requests (124 KB), about 7 MB of responses
    expected = {e.oid: (git_repo.root / e.path).read_bytes() for e in entries}
    with BlobReader(Git(git_repo.root)) as reader:
        count = 0
        for (oid, content), wanted in zip(reader.read_many(oids), oids):
            assert oid == wanted and content == expected[oid]
            count += 1
        assert count == len(oids)


def test_abandoned_stream_leaves_the_reader_usable(git_repo):
    git_repo.commit("one", {"a.md": "a\n" * 5000, "b.md": "b\n"})
    a, b = _blob(git_repo, "HEAD:a.md"), _blob(git_repo, "HEAD:b.md")
    with BlobReader(Git(git_repo.root)) as reader:
        stream = reader.read_many([a] * 2000)
        assert next(stream) == (a, b"a\n" * 5000)
        assert reader.read(b) == b"b\n"  # single reads are independent of a running stream
        stream.close()
        assert reader.read(b) == b"b\n"
        assert [oid for oid, _ in reader.read_many([b, a])] == [b, a]


def test_invalid_object_ids_are_rejected_before_git(git_repo):
    git_repo.commit("one", {"a.md": "a\n"})
    with BlobReader(Git(git_repo.root)) as reader:
        for bad in ("HEAD:a.md", "abcd", "A" * 40, "0" * 39 + "\n"):
            with pytest.raises(ValueError):
                reader.read(bad)


def test_shallow_clone_reports_missing_blobs(git_repo, tmp_path):
    git_repo.commit("one", {"a.md": "old text\n"})
    old_blob = _blob(git_repo, "HEAD:a.md")
    git_repo.commit("two", {"a.md": "new text\n"})
    new_blob = _blob(git_repo, "HEAD:a.md")
    shallow = tmp_path / "shallow"
    subprocess.run(
        ["git", "clone", "-q", "--depth", "1", f"file://{git_repo.root}", str(shallow)], check=True
    )
    git = Git(shallow)
    assert object_type(git, old_blob) is None
    with BlobReader(git) as reader:
        with pytest.raises(MissingObject) as info:
            reader.read(old_blob)
        assert info.value.oid == old_blob
        assert reader.read(new_blob) == b"new text\n"  # still in step after a miss
        stream = reader.read_many([new_blob, old_blob, new_blob])
        assert next(stream) == (new_blob, b"new text\n")
        with pytest.raises(MissingObject):
            next(stream)
        assert reader.read(new_blob) == b"new text\n"


def test_object_type(git_repo):
    sha = git_repo.commit("one", {"a.md": "a\n"})
    git = Git(git_repo.root)
    assert object_type(git, sha) == "commit"
    assert object_type(git, sha.upper()) == "commit"
    assert object_type(git, _blob(git_repo, "HEAD:a.md")) == "blob"
    assert object_type(git, _blob(git_repo, "HEAD^{tree}")) == "tree"
    assert object_type(git, "0" * 40) is None
    assert object_type(git, "--help") is None
