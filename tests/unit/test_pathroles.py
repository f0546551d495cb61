"""What part a file plays, from its path (ragit.pathroles): the conventions the re-rank's ``role``
and ``changelog`` factors, ``--exclude-tests`` and ``eval mine`` read."""

from __future__ import annotations

import pytest

from ragit.pathroles import is_changelog, is_source_path, is_test_path, path_role


@pytest.mark.parametrize("path", [
    "flask/testsuite/helpers.py",  # the in-package suite of older Pallets projects
    "flask/testsuite/test_apps/blueprintapp/__init__.py",
    "test_suite/tests/test_de.rs",  # serde
    "src/testsuites/parser.c",
    "pkg/test_suites/smoke.py",
])
def test_test_suite_directories_hold_tests(path):
    assert is_test_path(path) and path_role(path) == "test" and not is_source_path(path)


@pytest.mark.parametrize("path", ["polls/tests.py", "scripts/testproj/test.py"])
def test_a_python_module_named_tests_is_a_test(path):
    # a Django app keeps its tests in tests.py (session 31); flask's old scripts/testproj/test.py
    assert is_test_path(path) and path_role(path) == "test"


@pytest.mark.parametrize("path", ["flask/testing.py", "pylint/testutils/functional/__init__.py",
                                  "src/suite/runner.py", "lua/telescope/testharness/runner.lua"])
def test_test_support_code_outside_a_test_directory_is_source(path):
    assert path_role(path) == "source" and is_source_path(path)


@pytest.mark.parametrize(("path", "role"), [
    ("CHANGES", "doc"), ("HISTORY", "doc"), ("NEWS", "doc"), ("AUTHORS", "doc"), ("README", "doc"),
    ("CHANGELOG", "doc"), ("LICENSE", "doc"), ("CHANGES.rst", "doc"), ("Makefile", "other"),
    ("NOTICE", "other"), ("CHANGES.old", "other"),
])
def test_prose_files_without_an_extension_are_docs(path, role):
    assert path_role(path) == role


@pytest.mark.parametrize(("path", "expected"), [
    ("CHANGES", True), ("CHANGES.rst", True), ("CHANGELOG.md", True), ("HISTORY.rst", True), ("NEWS", True),
    ("docs/changelog.rst", True), ("doc/en/changelog.rst", True), ("History.md", True), ("RELEASE-NOTES.md", True),
    ("lua/telescope/actions/history.lua", False),  # code named "history"
    ("src/history/changes.py", False), ("CHANGES.old", False),  # not a doc file
    ("docs/api.rst", False), ("README.md", False), ("tests/fixtures/CHANGELOG.md", False),
])
def test_changelogs_by_name(path, expected):
    assert is_changelog(path) is expected
