"""Remembered manifest digests (ragit.ingest.manifestdigest): a read takes the digest publishing
recorded for the very same file instead of hashing it, and hashes any other file as before."""

from __future__ import annotations

import hashlib
import os
import time

import pytest

from ragit.ingest import manifestdigest
from ragit.ingest.manifest import Manifest, ManifestParams, load_manifest, render_manifest

SHA = "b" * 40
CONFIG = {"storage": {"manifest_dir": ".ragit/manifest"}}


def _write(root, created: str = "2026-12-02T00:00:00.000Z") -> tuple[os.PathLike, str]:
    data = render_manifest(Manifest(SHA, None, created, ManifestParams("1", None, "e:1", "h"), "full", None, []))
    path = root / ".ragit" / "manifest" / f"{SHA}.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name("new.tmp")
    tmp.write_bytes(data)
    os.replace(tmp, path)  # as ragit publishes: a rename, so a rewrite is a new inode
    return path, hashlib.sha256(data).hexdigest()


def _clock_past(root, path) -> None:
    """Wait until the file system's clock has moved past the file's ctime (a tick or two)."""
    ctime = os.stat(path).st_ctime_ns
    for _ in range(200):
        if manifestdigest._fs_clock(root / ".ragit") > ctime:
            return
        time.sleep(0.005)
    pytest.skip("the file system clock did not move")


def _no_hashing(monkeypatch):
    def refuse(fh):
        raise AssertionError("the manifest was hashed")

    monkeypatch.setattr(manifestdigest, "stream_digest", refuse)


def test_a_recorded_file_is_read_without_hashing(tmp_path, monkeypatch):
    path, digest = _write(tmp_path)
    _clock_past(tmp_path, path)
    assert manifestdigest.remember(tmp_path, SHA, path, digest)
    assert manifestdigest.remembered(tmp_path, SHA, os.stat(path)) == digest
    asked = []
    _no_hashing(monkeypatch)
    loaded = load_manifest(tmp_path, CONFIG, SHA, trusted=lambda sha, d: asked.append(d) or d == digest)
    assert loaded.sha256 == digest and loaded.manifest.commit_sha == SHA and asked == [digest]


def test_another_file_is_hashed(tmp_path):
    path, digest = _write(tmp_path)
    _clock_past(tmp_path, path)
    assert manifestdigest.remember(tmp_path, SHA, path, digest)
    path, digest2 = _write(tmp_path, created="2026-12-02T00:00:01.000Z")  # same size, another inode
    assert digest2 != digest
    assert manifestdigest.remembered(tmp_path, SHA, os.stat(path)) is None
    loaded = load_manifest(tmp_path, CONFIG, SHA, trusted=lambda sha, d: d == digest2)
    assert loaded.sha256 == digest2


def test_a_wrong_record_is_not_trusted_and_the_file_is_hashed(tmp_path):
    path, digest = _write(tmp_path)
    record = manifestdigest.record_path(tmp_path, SHA)
    record.parent.mkdir(parents=True)
    record.write_text('{"format": 1, "identity": %s, "sha256": "%s"}'
                      % (manifestdigest.identity(os.stat(path)), "0" * 64))
    loaded = load_manifest(tmp_path, CONFIG, SHA, trusted=lambda sha, d: d == digest)
    assert loaded.sha256 == digest


def test_no_record_for_another_digest_or_a_ctime_not_yet_past(tmp_path, monkeypatch):
    path, digest = _write(tmp_path)
    _clock_past(tmp_path, path)
    assert not manifestdigest.remember(tmp_path, SHA, path, "0" * 64)
    assert not manifestdigest.record_path(tmp_path, SHA).exists()
    monkeypatch.setattr(manifestdigest, "_fs_clock", lambda directory: os.stat(path).st_ctime_ns)
    assert not manifestdigest.remember(tmp_path, SHA, path, digest)
    assert not manifestdigest.record_path(tmp_path, SHA).exists()
    assert [p.name for p in manifestdigest.record_path(tmp_path, SHA).parent.iterdir()] == []  # no probe left


def test_records_of_unpublished_manifests_are_removed(tmp_path):
    path, digest = _write(tmp_path)
    _clock_past(tmp_path, path)
    assert manifestdigest.remember(tmp_path, SHA, path, digest)
    manifestdigest.forget_others(tmp_path, {SHA})
    assert manifestdigest.record_path(tmp_path, SHA).exists()
    manifestdigest.forget_others(tmp_path, {"c" * 40})
    assert not manifestdigest.record_path(tmp_path, SHA).exists()
