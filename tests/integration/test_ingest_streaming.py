"""Streamed ingest: blobs read as git streams them, keyword rows written in batches, vectors
embedded into one matrix; the store is the same whatever the batch sizes."""

from __future__ import annotations

import shutil

import pytest

from ragit.api import Repo
from ragit.gitsnap.blobs import MissingObject
from ragit.ingest import blobwork, pipeline
from ragit.store import sqlite as sqlite_store

from conftest import write_placeholder_config
from store_digest import store_digest as _store_digest


@pytest.fixture
def repo_files(git_repo):
    write_placeholder_config(git_repo.root)
    same = "# Shared\n\nThe same bytes under two paths and two kinds.\n"
    files = {f"docs/guide-{i}.md": f"# Guide {i}\n\n" + "\n\n".join(
        f"## Part {j}\n\nsection {j} of guide {i} explains token rotation" for j in range(4)) for i in range(6)}
    files.update({f"src/mod_{i}.py": f"def handler_{i}(value):\n    return value * {i}\n\n\nclass Store{i}:\n"
                  f"    def rotate(self, token):\n        return token[::-1]\n" for i in range(6)})
    files.update({"docs/same.md": same, "docs/copy.md": same, "src/same.txt.py": same})
    git_repo.commit("files", files)
    return git_repo


def test_batch_sizes_do_not_change_the_store(repo_files, monkeypatch):
    root = repo_files.root
    Repo.open(root).ingest(all=True)
    expected = _store_digest(root)
    shutil.rmtree(root / ".ragit" / "store")
    shutil.rmtree(root / ".ragit" / "manifest")
    monkeypatch.setattr(sqlite_store, "INDEX_BATCH", 2)
    monkeypatch.setattr(pipeline, "EMBED_BATCH", 3)
    Repo.open(root).ingest(all=True)
    assert _store_digest(root) == expected


class _Reader:
    """A blob reader whose repository lacks some objects (a partial clone)."""

    def __init__(self, blobs: dict[str, bytes]):
        self.blobs = blobs
        self.calls = 0

    def read_many(self, oids):
        self.calls += 1
        for oid in oids:
            if oid not in self.blobs:
                raise MissingObject(oid)
            yield oid, self.blobs[oid]


def test_stream_reports_missing_objects_in_order_and_goes_on():
    ids = [f"{i:040x}" for i in range(6)]
    reader = _Reader({oid: oid.encode() for oid in ids if oid not in (ids[1], ids[4])})
    seen = []
    got = list(blobwork.stream_present(reader, ids, lambda stage, done, total: seen.append((done, total))))
    assert [oid for oid, _ in got] == ids
    assert [data is None for _, data in got] == [False, True, False, False, True, False]
    assert reader.calls == 3  # resumed after each missing object
    assert seen[-1][1] == 6
