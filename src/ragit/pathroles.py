"""What part a file plays in a repository, from its path alone: source, test, example, fixture,
benchmark, doc or other (configuration and data).

One rule table serves three readers: the code re-rank (tests, examples, fixtures and docs rank
below implementation unless the question asks for them), ``--exclude-tests``, and ``eval mine``
(tests and docs are never gold for a code task). The conventions are those of the languages
ragit chunks structurally (knowledge §8.6), plus the common test-runner layouts.
"""

from __future__ import annotations

import re
from functools import lru_cache

# Extensions of source code (languages with a grammar, and other common programming languages).
SOURCE_EXTENSIONS = frozenset({
    ".py", ".pyi", ".pyx", ".js", ".jsx", ".mjs", ".cjs", ".ts", ".tsx", ".mts", ".cts", ".go", ".rs",
    ".java", ".kt", ".kts", ".scala", ".sc", ".swift", ".c", ".h", ".cc", ".cpp", ".cxx", ".c++", ".hpp",
    ".hh", ".hxx", ".h++", ".ipp", ".tpp", ".cs", ".rb", ".rake", ".php", ".ex", ".exs", ".erl", ".hrl",
    ".hs", ".lhs", ".lua", ".zig", ".sh", ".bash", ".zsh", ".fish", ".m", ".mm", ".dart", ".vue",
    ".svelte", ".clj", ".cljs", ".groovy", ".gradle", ".pl", ".pm", ".r", ".jl", ".ml", ".mli", ".fs",
    ".fsx", ".nim", ".v", ".sql", ".ps1", ".vim", ".el", ".elm", ".cr", ".d", ".f90", ".proto", ".graphql",
})

DOC_EXTENSIONS = frozenset({".md", ".mdx", ".markdown", ".rst", ".adoc", ".asciidoc", ".txt", ".rdoc", ".org"})

# Directory segments (lower-cased) that hold tests, examples, fixtures or benchmarks.
_TEST_DIRS = frozenset({"test", "tests", "testing", "__tests__", "__test__", "spec", "specs", "__mocks__",
                        "testdata", "test_data", "tests_data", "unittests", "unit_tests", "integration_tests",
                        "testsuite", "testsuites", "test_suite", "test_suites"})
_EXAMPLE_DIRS = frozenset({"example", "examples", "sample", "samples", "demo", "demos", "docs_src",
                           "tutorial", "tutorials", "playground", "sandbox"})
_FIXTURE_DIRS = frozenset({"fixture", "fixtures", "__fixtures__", "__snapshots__", "snapshots", "mocks",
                           "stubs", "golden", "goldens"})
_BENCH_DIRS = frozenset({"bench", "benches", "benchmark", "benchmarks"})
_DOC_DIRS = frozenset({"doc", "docs", "documentation", "man"})
# Translation catalogues and other localisation data: text every UI string is in, never code.
_LOCALE_DIRS = frozenset({"locale", "locales", "i18n", "l10n", "translations", "lc_messages"})
_DATA_EXTENSIONS = frozenset({".po", ".pot", ".mo", ".json", ".yaml", ".yml", ".toml", ".xml", ".csv", ".tsv",
                              ".ini", ".cfg", ".lock", ".svg", ".html", ".css", ".scss"})

# Every extension above: what makes a dotted word a file name (``conftest.py``) rather than a name
# in code (``vi.mock``).
KNOWN_EXTENSIONS = SOURCE_EXTENSIONS | DOC_EXTENSIONS | _DATA_EXTENSIONS

# Prose files a project names without an extension (``README``, ``CHANGES``, ``NEWS``).
_DOC_NAMES = ("README", "CHANGELOG", "CHANGES", "HISTORY", "NEWS", "LICENSE", "CONTRIBUTING", "AUTHORS")

# Test file names, per language (matched against the file name).
_TEST_FILE = re.compile(
    r"^(?:"
    r"test_.+\.py|.+_test\.py|tests?\.py|conftest\.py"  # Python (Django apps keep theirs in ``tests.py``)
    r"|.+_test\.go"  # Go
    r"|.+[._-](?:test|spec)\.(?:[cm]?[jt]sx?)"  # JavaScript / TypeScript
    r"|.+(?:Test|Tests|TestCase|IT|Spec)\.(?:java|kt|kts|scala|groovy)"  # JVM
    r"|.+(?:Suite)\.scala"  # Scala (MUnit, ScalaTest suites)
    r"|.+(?:Test|Tests|Spec)\.swift"  # Swift (XCTest, Quick)
    r"|.+(?:Test|Tests)\.cs"  # C#
    r"|.+_(?:spec|test)\.rb|test_.+\.rb"  # Ruby
    r"|.+Test\.php"  # PHP
    r"|.+_test\.exs?"  # Elixir
    r"|.+(?:Spec|Test|Tests)\.hs"  # Haskell
    r"|.+_(?:spec|test)\.lua|test_.+\.lua"  # Lua
    r"|test_.+\.(?:c|cc|cpp|cxx)|.+_(?:test|unittest)\.(?:c|cc|cpp|cxx)"  # C / C++
    r"|.+_test\.zig"  # Zig
    r"|.+\.bats|.+_test\.(?:sh|bash)|test_.+\.(?:sh|bash)"  # shell
    r"|.+_test\.dart"  # Dart
    r")$"
)


def _split(path: str) -> tuple[list[str], str, str]:
    parts = path.split("/")
    name = parts[-1]
    dot = name.rfind(".")
    ext = name[dot:].lower() if dot > 0 else ""
    return [p.lower() for p in parts[:-1]], name, ext


def is_test_path(path: str) -> bool:
    """A test file: a test directory segment (``tests/``, ``__tests__/``, ``spec/``, ``testdata/``,
    ``testsuite/`` …) or a test file name of one of the languages above (``test_x.py``, ``x_test.go``,
    ``x.spec.ts``, ``XTest.java``, ``x_spec.rb``, …)."""
    directory, _, name = path.rpartition("/")
    return "test" in _dir_kinds(directory) or _TEST_FILE.match(name) is not None


_DIR_KINDS = (("fixture", _FIXTURE_DIRS), ("test", _TEST_DIRS), ("example", _EXAMPLE_DIRS), ("benchmark", _BENCH_DIRS),
              ("locale", _LOCALE_DIRS), ("doc", _DOC_DIRS))


@lru_cache(maxsize=16384)
def _dir_kinds(directory: str) -> frozenset[str]:
    """Which of the directory-segment sets above (and the bundling ones below: ``bundle``) a
    segment of ``directory`` (lower-cased) belongs to; once per directory, which a repository's
    files share."""
    segments = {d.lower() for d in directory.split("/")}
    kinds = {kind for kind, names in _DIR_KINDS if not segments.isdisjoint(names)}
    if not segments.isdisjoint(_BUNDLE_DIRS) or not segments.isdisjoint(_PY_BUNDLE_DIRS):
        kinds.add("bundle")
    return frozenset(kinds)


@lru_cache(maxsize=65536)
def path_role(path: str) -> str:
    """``test``, ``example``, ``fixture``, ``benchmark``, ``doc``, ``source`` or ``other``."""
    directory, _, name = path.rpartition("/")
    kinds = _dir_kinds(directory)
    dot = name.rfind(".")
    ext = name[dot:].lower() if dot > 0 else ""
    if "fixture" in kinds:
        return "fixture"
    if "test" in kinds or _TEST_FILE.match(name) is not None:
        return "test"
    if "example" in kinds:
        return "example"
    if "benchmark" in kinds:
        return "benchmark"
    if "locale" in kinds:
        return "other"
    if ext in DOC_EXTENSIONS or (not ext and name.upper().startswith(_DOC_NAMES)):
        return "doc"
    if ext in SOURCE_EXTENSIONS:
        return "doc" if "doc" in kinds else "source"
    return "other"


# Directory segments under which a project bundles a copy of another project's code: Python's
# vendoring conventions (``pip/_vendor/``, ``botocore/vendored/``, ``setuptools/extern/``,
# ``seaborn/external/``, ``requests/packages/urllib3/``). ``packages`` and the ``extern`` family
# count only below the top level and in Python files: a top-level ``packages/`` is a JavaScript
# monorepo's own code. (``vendor/``, ``third_party/`` and ``node_modules/`` are not indexed at all.)
_BUNDLE_DIRS = frozenset({"_vendor", "vendored", "_vendored"})
_PY_BUNDLE_DIRS = frozenset({"packages", "extern", "external", "externals"})


@lru_cache(maxsize=65536)
def bundled_project(path: str) -> str | None:
    """The name of the third-party project a bundled file belongs to (``urllib3`` for
    ``requests/packages/urllib3/util/retry.py``, ``six`` for ``urllib3/packages/six.py``), or None
    when the path is not under a vendoring directory."""
    if "bundle" not in _dir_kinds(path.rpartition("/")[0]):
        return None
    dirs, name, ext = _split(path)
    for i, d in enumerate(dirs):
        if d in _BUNDLE_DIRS or (i > 0 and ext == ".py" and d in _PY_BUNDLE_DIRS):
            if i + 1 < len(dirs):
                return path.split("/")[i + 1]
            stem = name[: name.rfind(".")] if "." in name else name
            return None if stem == "__init__" else stem
    return None


# A project's record of its changes, by file name (the stem before the first dot, lower-cased):
# ``CHANGES``, ``CHANGELOG.md``, ``HISTORY.rst``, ``NEWS``, ``docs/changelog.rst``.
_CHANGELOG_STEMS = frozenset({"changes", "changelog", "history", "news", "releases", "release-notes",
                              "release_notes", "releasenotes", "whatsnew"})


@lru_cache(maxsize=65536)
def is_changelog(path: str) -> bool:
    """A changelog: a doc file named as one (``CHANGES``, ``CHANGELOG.md``, ``HISTORY.rst``,
    ``docs/changelog.rst``). Code named ``history.lua`` is not one."""
    name = path.rpartition("/")[2]
    dot = name.find(".")
    stem = (name[:dot] if dot > 0 else name).lower()
    return stem in _CHANGELOG_STEMS and path_role(path) == "doc"


def is_source_path(path: str) -> bool:
    """Source code that is not a test: what a code task's gold may be."""
    _, _, ext = _split(path)
    return ext in SOURCE_EXTENSIONS and not is_test_path(path)


# Code for Windows alone, by a directory (libuv's ``src/win/``, Rust's ``sys/windows/``) or a
# file-name suffix (Go's ``file_windows.go``, ``poll-win32.c``); the platform suffixes a file's
# twins for other systems carry (``file_unix.go``, ``poll-linux.c``).
_WINDOWS_DIRS = frozenset({"win", "win32", "win64", "windows"})
_WINDOWS_SUFFIXES = frozenset({"windows", "win32", "win64", "win"})
_PLATFORM_SUFFIXES = _WINDOWS_SUFFIXES | frozenset({
    "unix", "posix", "linux", "darwin", "macos", "osx", "bsd", "freebsd", "netbsd", "openbsd", "dragonfly", "solaris",
    "illumos", "aix", "android", "ios"})


def platform_twin(path: str) -> tuple[bool, str]:
    """(whether ``path`` is code for Windows alone, the file name it shares with its twins for
    other systems: its own name less a platform suffix after ``_`` or ``-``). ``src/win/tcp.c`` →
    (True, ``tcp.c``), ``src/unix/tcp.c`` → (False, ``tcp.c``), ``os/file_windows.go`` → (True,
    ``file.go``). (Once per path of a query's pool: string methods, no pattern.)"""
    directory, _, name = path.rpartition("/")
    dot = name.rfind(".")
    stem, ext = (name[:dot], name[dot:]) if dot > 0 else (name, "")
    cut = max(stem.rfind("_"), stem.rfind("-"))
    suffix = stem[cut + 1:].lower() if cut > 0 else ""
    if suffix in _PLATFORM_SUFFIXES:
        stem = stem[:cut]
    lowered = directory.lower()
    windows = suffix in _WINDOWS_SUFFIXES or ("win" in lowered and not _WINDOWS_DIRS.isdisjoint(lowered.split("/")))
    return windows, stem + ext
