"""What part a file plays, from its path (ragit.pathroles): the conventions the re-rank's ``role``
factor, ``--exclude-tests`` and ``eval mine`` read."""

from __future__ import annotations

import pytest

from ragit.pathroles import path_role


@pytest.mark.parametrize(("path", "role"), [
    ("CHANGES", "doc"), ("HISTORY", "doc"), ("NEWS", "doc"), ("AUTHORS", "doc"), ("README", "doc"),
    ("CHANGELOG", "doc"), ("LICENSE", "doc"), ("CHANGES.rst", "doc"), ("Makefile", "other"),
    ("NOTICE", "other"), ("CHANGES.old", "other"),
])
def test_prose_files_without_an_extension_are_docs(path, role):
    assert path_role(path) == role
