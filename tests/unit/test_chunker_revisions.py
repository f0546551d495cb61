"""Per-language chunker revisions (knowledge §8.6, §9): a language table that chunks some file
differently is a new chunker (``code:<language>/<revision>``), so its chunk ids are new; every
other language keeps the name, and so the ids, it always had."""

from __future__ import annotations

import pytest

from ragit.ingest.code import chunk_code
from ragit.ingest.ids import chunk_id, chunker_key, masking_of
from ragit.ingest.languages import LANGUAGES
from ragit.maintenance.status import language_of

#: each table's revision: 2 for those revised in session 13 (issue 12), one more for every table
#: whose containers are cut at their members (bare headers open the first member: session 23), and
#: one more for C and C++ (what error recovery swallowed into a record titled outside it: session 25),
#: one more for JavaScript and TypeScript (a top-level declaration spanning lines is its own unit,
#: a test runner's calls the file's own code: session 26), 2 for Go (a ``var``/``const`` spanning lines)
#: and one more for Java (a field whose value spans lines is a member of its own), Ruby (a constant)
#: and Lua (2: an assignment whose value spans lines); 5 for TypeScript (an overload signature
#: opens its implementation's unit: session 27), and 5 for JavaScript (a function assigned to a
#: path is a unit); 3 for Rust (an ``impl`` for ``&'a mut T`` is titled for ``T``: session 27), 4 for
#: C and C++ (a ``#define`` spanning lines is a unit); session 28: 4 for Swift, 3 for C# and 5 for C
#: and C++ (a parse with errors is tried again with its conditional-compilation lines blanked), and
#: a Swift property whose value spans lines is a member; 4 for Java (an enum constant with a body is a
#: member); session 32: 7 for JavaScript and TypeScript (a class assigned to a path is a class, an
#: object literal holding methods is cut at them)
REVISION = {"javascript": 8, "typescript": 9, "swift": 4, "ruby": 4, "haskell": 3, "java": 4, "rust": 4,
            "kotlin": 4, "scala": 3, "c": 6, "cpp": 6, "csharp": 4, "php": 4, "elixir": 4, "zig": 3,
            "go": 2, "lua": 3, "bash": 1}

SAMPLE = {  # one file of each table key (empty: the name only depends on the language)
    "javascript": "app.js", "typescript": "app.ts", "tsx": "App.tsx", "go": "main.go", "java": "App.java",
    "rust": "lib.rs", "kotlin": "App.kt", "scala": "App.scala", "swift": "App.swift", "c": "app.c",
    "cpp": "app.cpp", "csharp": "App.cs", "ruby": "app.rb", "php": "app.php", "elixir": "app.ex",
    "haskell": "App.hs", "lua": "app.lua", "zig": "app.zig", "bash": "app.sh",
}


def test_every_table_has_a_sample():
    assert set(SAMPLE) == set(LANGUAGES)


@pytest.mark.parametrize("key", sorted(LANGUAGES))
def test_revised_languages_have_a_new_chunker_name_the_others_their_old_one(key):
    spec = LANGUAGES[key]
    revision = REVISION[spec.name]
    expected = f"code:{spec.name}/{revision}" if revision > 1 else f"code:{spec.name}"
    assert spec.chunker == expected
    assert chunk_code(SAMPLE[key], "", "")[0] == expected


def test_python_is_at_its_revision_and_lines_unchanged():
    # (Python's ``ast`` chunker: revision 2 in session 29, an assignment whose value spans lines;
    # revision 3 in session 34, the definitions inside a top-level ``if``/``try``/``with``)
    assert chunk_code("app.py", "def f():\n    return 1\n", "def f():\n    return 1\n")[0] == "code:python/4"
    assert chunk_code("notes.txt", "hello\n", "hello\n")[0] == "lines"


def test_tables_sharing_a_name_share_a_revision():
    by_name: dict[str, set[int]] = {}
    for spec in LANGUAGES.values():
        by_name.setdefault(spec.name, set()).add(spec.revision)
    assert all(len(revisions) == 1 for revisions in by_name.values()), by_name


def test_a_revision_changes_the_chunk_ids_and_keeps_the_masking_readable():
    old, new = chunker_key("code:swift", "1", "1"), chunker_key("code:swift/2", "1", "1")
    assert new == "code:swift/2@1+mask-1" and masking_of(new) == masking_of(old) == "1"
    blob = "ab" * 20
    assert chunk_id(blob, old, 0) != chunk_id(blob, new, 0)


@pytest.mark.parametrize(("path", "chunker", "language"), [
    ("App.swift", "code:swift", "swift"), ("App.swift", "code:swift/2", "swift"),
    ("app.tsx", "code:typescript/2", "typescript"), ("lib.rs", "code:rust", "rust"),
    ("app.py", "code:python", "python"), ("app.py", "code:python/2", "python"),
    ("app.py", "code:python/4", "python"), ("App.swift", "lines", "swift"),
])
def test_status_counts_a_language_under_one_name_whatever_its_revision(path, chunker, language):
    assert language_of(path, chunker) == language


def test_superseded_names_are_every_earlier_revision_and_never_a_current_one():
    from ragit.ingest.languages import SUPERSEDED
    from ragit.ingest.pipeline import superseded

    earlier = {f"code:{name}" if r == 1 else f"code:{name}/{r}"
               for name, revision in {**REVISION, "python": 4}.items() for r in range(1, revision)}
    assert SUPERSEDED == earlier
    assert superseded("code:python") and superseded("code:python/2") and superseded("code:python/3") and not superseded("code:python/4")
    assert {"code:ruby", "code:ruby/2", "code:swift", "code:java"} <= SUPERSEDED
    current = {spec.chunker for spec in LANGUAGES.values()}
    assert not current & SUPERSEDED
    for chunker in current | {"code:python/4", "lines", "markdown", "none"}:
        assert not superseded(chunker)
    assert all(superseded(chunker) for chunker in SUPERSEDED)
