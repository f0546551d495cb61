"""Identities and citations (knowledge §9), including the worked example."""

from __future__ import annotations

import re

from ragit.ingest.ids import chunk_id, chunker_key, citation_id, document_id, git_blob_id

BLOB = "ce013625030ba8dba906f756967f9e9ca394464a"


def test_worked_example_blob_id():
    assert git_blob_id(b"hello\n") == BLOB


def test_worked_example_chunker_key():
    assert chunker_key("markdown", "1", "1") == "markdown@1+mask-1"
    assert chunker_key("code:python", "1", None) == "code:python@1+nomask"


def test_worked_example_chunk_and_citation_ids():
    key = "markdown@1+mask-1"
    first = chunk_id(BLOB, key, 0)
    second = chunk_id(BLOB, key, 1)
    assert first == "2e5709565eb5f65ceb9b51c5a00792119440d3a5"
    assert second == "bf6cfdcf7e0315e0babacfe23794f8c0d93d7625"
    assert citation_id("document", first, BLOB) == "cite-891adb60f18f7563478d6062"
    assert citation_id("document", second, BLOB) == "cite-fa500041f3a1818addf439c2"


def test_worked_example_document_id():
    assert document_id("docs/a.md") == "f00cbb922d5ef4beaf79b78e766bd9a8a6a6dd44"


def test_empty_blob_id_matches_git():
    assert git_blob_id(b"") == "e69de29bb2d1d6434b8b29ae775ad8c2e48c5391"


def test_chunk_id_depends_on_every_part():
    base = chunk_id(BLOB, "markdown@1+mask-1", 0)
    assert chunk_id(BLOB, "markdown@1+nomask", 0) != base
    assert chunk_id("0" * 40, "markdown@1+mask-1", 0) != base
    assert chunk_id(BLOB, "markdown@1+mask-1", 1) != base


def test_citation_id_is_stable_and_shaped():
    cid = citation_id("document", "abc", "v1")
    assert cid == citation_id("document", "abc", "v1")
    assert re.fullmatch(r"cite-[a-f0-9]{24}", cid)


def test_citation_id_changes_with_type_id_or_version():
    cid = citation_id("document", "abc", "v1")
    assert citation_id("document", "abc", "v2") != cid
    assert citation_id("document", "abd", "v1") != cid
    assert citation_id("artifact", "abc", "v1") != cid


def test_citation_parts_are_separated():
    assert citation_id("ab", "c", "d") != citation_id("a", "bc", "d")
