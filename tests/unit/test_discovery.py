"""Candidate selection (knowledge §8.1)."""

from __future__ import annotations

import hashlib
import subprocess

import pytest

from ragit.config import defaults
from ragit.gitsnap.types import TreeEntry
from ragit.ingest.discovery import (Candidate, gitignore_changed, listing_scope, matches_filter,
                                    select_candidates)


def oid(text: str) -> str:
    return hashlib.sha1(text.encode()).hexdigest()


class Tree:
    """Tree entries plus the blob contents of its .gitignore files."""

    def __init__(self) -> None:
        self.entries: list[TreeEntry] = []
        self.blobs: dict[str, bytes] = {}
        self.reads: list[str] = []

    def add(self, path: str, mode: str = "100644", content: str = "", kind: str = "blob") -> Tree:
        object_id = oid(path + "\0" + content)
        self.blobs[object_id] = content.encode()
        self.entries.append(TreeEntry(mode, kind, object_id, len(content) if kind == "blob" else None, path))
        return self

    def read(self, object_id: str) -> bytes:
        self.reads.append(object_id)
        return self.blobs[object_id]

    def select(self, config=None) -> list[str]:
        return [c.path for c in select_candidates(self.entries, config or respecting(), self.read)]


def respecting():
    """The defaults with ``ingest.respect_gitignore`` on: the rules below judge that opt-in."""
    config = defaults()
    config["ingest"]["respect_gitignore"] = True
    return config


def test_tracked_files_matched_by_gitignore_are_candidates_by_default():
    """As in git, a pattern never hides a tracked file (the default since issue 12)."""
    tree = Tree().add(".gitignore", content="types\n").add("src/types/store.ts").add("a.md")
    assert [c.path for c in select_candidates(tree.entries, defaults(), tree.read)] == ["a.md", "src/types/store.ts"]
    assert tree.reads == []


def test_kinds_blob_ids_sizes_and_order():
    tree = Tree().add("src/b.py", content="x = 1\n").add("README.md", content="# r\n").add("notes.txt")
    candidates = select_candidates(tree.entries, defaults(), tree.read)
    assert candidates == [
        Candidate("README.md", oid("README.md\0# r\n"), 4, "markdown"),
        Candidate("notes.txt", oid("notes.txt\0"), 0, "markdown"),  # .txt is a doc (knowledge §8.1)
        Candidate("src/b.py", oid("src/b.py\0x = 1\n"), 6, "code"),
    ]


def test_only_regular_files():
    tree = (
        Tree().add("a.md").add("run.py", mode="100755").add("link.md", mode="120000")
        .add("sub.md", mode="160000", kind="commit")
    )
    assert tree.select() == ["a.md", "run.py"]


def test_doc_globs_win_over_code_globs():
    config = defaults()
    config["ingest"]["code_globs"] = ["**/*.md", "**/*.py"]
    assert matches_filter("docs/a.md", config) == "markdown"
    assert matches_filter("a.py", config) == "code"
    assert matches_filter("a.toml", config) is None
    assert matches_filter("docs/page.mdx", defaults()) == "markdown"
    for doc in ("docs/guide.rst", "docs/manual.adoc", "notes.txt"):
        assert matches_filter(doc, defaults()) == "markdown"
    for code in ("Src/Json/JsonReader.cs", "lib/phoenix/router.ex", "src/main.zig", "Makefile", "config.toml"):
        assert matches_filter(code, defaults()) == "code"  # every other text file is code


def test_include_and_exclude():
    config = defaults()
    config["ingest"]["include"] = ["docs/**", "src/**"]
    tree = Tree().add("docs/a.md").add("src/x.py").add("other/b.md").add("src/vendor/v.py").add("docs/build/out.md")
    assert tree.select(config) == ["docs/a.md", "src/x.py"]


def test_listing_scope_is_the_include_patterns_plain_prefixes():
    config = defaults()
    assert listing_scope(config) is None  # "**": the whole tree
    config["ingest"]["include"] = ["src/flask/**", "docs/**", "src/flask/*.py"]
    assert listing_scope(config) == ["docs", "src/flask"]
    config["ingest"]["include"] = ["src/**", "**/*.md"]
    assert listing_scope(config) is None


@pytest.mark.parametrize(
    "path",
    ["node_modules/x/a.js", "web/node_modules/a.js", "dist/a.js", "a/coverage/x.py", "build/a.py",
     "vendor/a.go", "static/app.min.js"],
)
def test_default_excludes(path):
    assert matches_filter(path, defaults()) is None


def test_dot_segments_are_never_candidates():
    tree = Tree().add(".github/README.md").add("docs/.hidden/a.md").add(".env.py").add("docs/.a.md").add("docs/a.b.md")
    assert tree.select() == ["docs/a.b.md"]


def test_code_point_order():
    tree = Tree().add("b.md").add("a/b.md").add("a-b.md").add("B.md").add("é.md")
    assert tree.select() == ["B.md", "a-b.md", "a/b.md", "b.md", "é.md"]


def test_root_gitignore():
    tree = Tree().add(".gitignore", content="generated/\n*.gen.py\n# comment\n!keep.gen.py\n")
    tree.add("generated/a.md").add("src/x.gen.py").add("src/keep.gen.py").add("src/y.py")
    assert tree.select() == ["src/keep.gen.py", "src/y.py"]


def test_nested_gitignore_applies_relative_to_its_directory():
    tree = Tree().add("pkg/.gitignore", content="/local.md\nout/\n")
    tree.add("pkg/local.md").add("pkg/sub/local.md").add("local.md").add("pkg/out/a.md").add("out/a.md")
    assert tree.select() == ["local.md", "out/a.md", "pkg/sub/local.md"]


def test_deeper_gitignore_overrides_shallower():
    tree = Tree().add(".gitignore", content="*.md\n").add("docs/.gitignore", content="!*.md\n")
    tree.add("a.md").add("docs/b.md").add("docs/deep/c.md")
    assert tree.select() == ["docs/b.md", "docs/deep/c.md"]


def test_file_in_ignored_directory_cannot_be_reincluded():
    tree = Tree().add(".gitignore", content="tmp/\n!tmp/keep.md\n").add("tmp/.gitignore", content="!keep.md\n")
    tree.add("tmp/keep.md").add("x.md")
    assert tree.select() == ["x.md"]


def test_directory_contents_pattern_allows_reinclusion():
    tree = Tree().add(".gitignore", content="docs/*\n!docs/keep/\n")
    tree.add("docs/a.md").add("docs/keep/b.md")
    assert tree.select() == ["docs/keep/b.md"]


def test_gitignore_with_bom_and_crlf():
    tree = Tree().add(".gitignore", content="\ufeffsecret.md\r\nother.md\r\n").add("secret.md").add("other.md").add("ok.md")
    assert tree.select() == ["ok.md"]


def test_respect_gitignore_false_reads_nothing():
    config = defaults()
    config["ingest"]["respect_gitignore"] = False
    tree = Tree().add(".gitignore", content="*.md\n").add("a.md")
    assert tree.select(config) == ["a.md"]
    assert tree.reads == []


def test_gitignore_in_dot_directory_is_not_read():
    tree = Tree().add(".github/.gitignore", content="*\n").add("a.md")
    assert tree.select() == ["a.md"]
    assert tree.reads == []


def test_symlinked_gitignore_is_not_used():
    tree = Tree().add(".gitignore", mode="120000", content="*.md").add("a.md")
    assert tree.select() == ["a.md"]


def test_gitignore_changed():
    assert gitignore_changed(["src/a.py", "docs/.gitignore"])
    assert gitignore_changed([".gitignore"])
    assert not gitignore_changed(["src/a.py", "x.gitignore", ".gitignore/x"])
    assert not gitignore_changed([])


def test_agrees_with_git_check_ignore(git_repo):
    rules = {
        ".gitignore": "*.log.md\nbuild-out/\n/root-only.md\n**/tmp/**\n!important.log.md\ndocs/**/draft-*.md\n",
        "docs/.gitignore": "private/\n!private/ok.md\n*.secret.md\n",
        "docs/api/.gitignore": "!x.secret.md\n/local.md\n",
    }
    paths = [
        "a.log.md", "important.log.md", "build-out/a.md", "src/build-out/b.md", "root-only.md",
        "docs/root-only.md", "x/tmp/a.md", "tmp/b.md", "docs/a/draft-1.md", "docs/draft-2.md",
        "docs/private/ok.md", "docs/private/no.md", "docs/a.secret.md", "docs/api/x.secret.md",
        "docs/api/y.secret.md", "docs/api/local.md", "docs/local.md", "docs/api/sub/local.md", "fine.md",
    ]
    tree = Tree()
    for name, content in rules.items():
        tree.add(name, content=content)
        git_repo.write(name, content)
    for path in paths:
        tree.add(path)
    proc = subprocess.run(
        ["git", "check-ignore", "--no-index", "--stdin"], cwd=git_repo.root, input="\n".join(paths) + "\n",
        capture_output=True, text=True, check=False,
    )
    ignored = set(proc.stdout.split())
    assert tree.select() == sorted(p for p in paths if p not in ignored)


def test_selects_from_10000_entries():
    tree = Tree().add(".gitignore", content="*.tmp.md\nbuild-out/\n!keep.tmp.md\n").add("pkg3/.gitignore", content="gen/\n")
    for i in range(10_000):
        ext = ("md", "py", "ts", "txt", "png")[i % 5]
        tree.add(f"pkg{i % 7}/mod{i % 31}/sub{i % 13}/file{i}.{ext}")
    selected = tree.select()
    assert len(selected) == 10000  # every text file is a candidate; binaries are skipped when read
