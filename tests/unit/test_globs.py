"""Glob semantics of knowledge §8.1."""

from __future__ import annotations

import pytest

from ragit.config import DEFAULTS
from ragit.ingest.globs import GlobSet, compile_glob, literal_prefix


def matches(pattern: str, path: str) -> bool:
    return compile_glob(pattern).fullmatch(path) is not None


@pytest.mark.parametrize("path", ["README.md", "docs/a/b.md", "a.md"])
def test_double_star_prefix_matches_zero_or_more_segments(path):
    assert matches("**/*.md", path)


@pytest.mark.parametrize("path", ["README.mdx", "docs/a.md/x", "docs/a.MD", "x.md.bak"])
def test_whole_path_and_case_sensitive(path):
    assert not matches("**/*.md", path)


def test_star_does_not_cross_slash():
    assert matches("docs/*.md", "docs/a.md")
    assert not matches("docs/*.md", "docs/sub/a.md")
    assert matches("*", "file")
    assert not matches("*", "dir/file")


def test_question_mark_is_one_non_slash_character():
    assert matches("a?c", "abc")
    assert not matches("a?c", "ac")
    assert not matches("a?c", "a/c")


def test_double_star_in_the_middle_and_at_the_end():
    assert matches("docs/**/x.md", "docs/x.md")
    assert matches("docs/**/x.md", "docs/a/b/x.md")
    assert not matches("docs/**/x.md", "docsx.md")
    assert matches("**/node_modules/**", "node_modules/a/b.js")
    assert matches("**/node_modules/**", "web/node_modules/a.js")
    assert not matches("**/node_modules/**", "web/node_modules_x/a.js")
    assert matches("docs/**", "docs/a/b")
    assert matches("docs/**", "docs")  # zero segments
    assert not matches("docs/**", "docsy/a")
    assert matches("**", "any/path/at/all")
    assert matches("**/**", "a")


def test_double_star_inside_a_segment_is_a_single_star():
    assert matches("a**b", "axxb")
    assert not matches("a**b", "a/b")


def test_character_classes():
    assert matches("[abc].md", "b.md")
    assert not matches("[abc].md", "d.md")
    assert matches("v[0-9].txt", "v7.txt")
    assert matches("[!a].md", "b.md")
    assert not matches("[!a].md", "a.md")
    assert matches("[^a].md", "b.md")
    assert matches("[]].md", "].md")
    assert matches("[-a].md", "-.md")
    assert matches("[!-a].md", "b.md") and not matches("[!-a].md", "-.md")


def test_class_never_matches_slash():
    assert not matches("a[!x]b", "a/b")
    assert not matches("a[/]b", "a/b")


def test_unclosed_bracket_and_regex_metacharacters_are_literal():
    assert matches("a[b", "a[b")
    assert matches("a+(b).md", "a+(b).md")
    assert not matches("a.md", "aXmd")
    assert matches("a\\*b", "a*b") and not matches("a\\*b", "axb")


def test_min_js_exclude():
    assert matches("**/*.min.js", "static/app.min.js")
    assert not matches("**/*.min.js", "static/app.js")


def test_globset_any_of():
    globs = GlobSet(["**/*.py", "**/*.tsx"])
    assert globs.matches("src/ragit/cli.py")
    assert globs.matches("web/App.tsx")
    assert not globs.matches("docs/README.md")
    assert GlobSet(DEFAULTS["ingest"]["code_globs"]).matches("Src/Json/JsonReader.cs")  # every language
    assert not GlobSet([]).matches("anything")
    assert GlobSet(["**"]).matches("a/b")


def test_globset_matches_whole_path_for_each_alternative():
    globs = GlobSet(["a", "b/*"])
    assert globs.matches("a") and globs.matches("b/c")
    assert not globs.matches("ab") and not globs.matches("b/c/d")


def test_invalid_range_is_literal_not_an_error():
    assert matches("[z-a].md", "[z-a].md")
    assert not matches("[z-a].md", "b.md")


@pytest.mark.parametrize(
    ("pattern", "prefix"),
    [("**", None), ("**/x.py", None), ("*.md", None), ("[ab]/x", None), ("\\*/x", None), ("/src/**", None),
     ("./src/**", None), ("src/**", "src"), ("src/flask/**", "src/flask"), ("a/b*/c", "a"), ("a/**/b", "a"),
     ("a/b/c.py", "a/b/c.py"), ("src//x", "src"), ("a/../b", "a")],
)
def test_literal_prefix(pattern, prefix):
    assert literal_prefix(pattern) == prefix


@pytest.mark.parametrize("pattern", ["src/**", "src/flask/**", "a/b*/c", "a/**/b", "a/b/c.py", "src/*.py", "a/b/**/*.md"])
@pytest.mark.parametrize("path", ["src", "src/a.py", "src/flask/x.py", "srcx/a.py", "a/b/c.py", "a/bx/c", "a/b/c/d/b",
                                  "a/b/c.py/x", "ab/c.py", "a/b/x/y.md", "x/src/a.py"])
def test_every_match_lies_at_or_below_the_literal_prefix(pattern, path):
    prefix = literal_prefix(pattern)
    if compile_glob(pattern).fullmatch(path):
        assert path == prefix or path.startswith(prefix + "/")
