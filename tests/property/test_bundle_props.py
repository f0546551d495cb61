"""Properties of the snapshot bundle format (ragit.ingest.bundle, knowledge §22.1): vectors
round-trip bit for bit, and no single changed byte is ever accepted."""

from __future__ import annotations

import struct
import tempfile
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ragit.errors import RagitError
from ragit.ingest.bundle import BundleChunk, BundleRecord, bundle_parts, read_bundle, write_bundle
from ragit.ingest.ids import chunk_id, chunker_key
from ragit.ingest.manifest import Manifest, ManifestDoc, ManifestParams, render_manifest

SHA = "a" * 40
PARAMS = ManifestParams("1", "1", "placeholder:sha1:64:v1", "sha256:" + "0" * 64)
TEXT = st.text(alphabet=st.characters(blacklist_categories=("Cs",)), max_size=40)


@st.composite
def snapshots(draw):
    """A consistent manifest, its records, and arbitrary float32 bit patterns (NaNs included)."""
    dims = draw(st.integers(min_value=1, max_value=8))
    docs, records = [], []
    for i in range(draw(st.integers(min_value=0, max_value=4))):
        blob = f"{i + 1:040x}"
        n = draw(st.integers(min_value=0, max_value=3))
        ranges = tuple((2 * k + 1, 2 * k + 2) for k in range(n))
        docs.append(ManifestDoc(f"docs/{i}.md", blob, "doc", "markdown", ranges))
        records.append(BundleRecord(blob, "markdown", chunker_key("markdown", "1", "1"), None, None, 0,
                                    tuple(BundleChunk(k, draw(TEXT), a, b, 3, draw(TEXT))
                                          for k, (a, b) in enumerate(ranges))))
    chunks = sum(len(r.chunks) for r in records)
    words = draw(st.lists(st.integers(min_value=0, max_value=2**32 - 1), min_size=chunks * dims,
                          max_size=chunks * dims))
    vectors = struct.pack(f"<{len(words)}I", *words)
    manifest = Manifest(SHA, None, "2026-03-08T10:00:00.000Z", PARAMS, "full", None, docs)
    return manifest, records, vectors, dims if chunks else 0


def _write(snapshot, directory: Path) -> Path:
    manifest, records, vectors, dims = snapshot
    target = directory / "b.ragit"
    write_bundle(target, bundle_parts(manifest, render_manifest(manifest), records, vectors, dims))
    return target


@settings(max_examples=60, deadline=None)
@given(snapshots())
def test_round_trip_is_exact(snapshot):
    manifest, records, vectors, dims = snapshot
    with tempfile.TemporaryDirectory() as tmp:
        bundle = read_bundle(_write(snapshot, Path(tmp)))
    assert bundle.manifest_bytes == render_manifest(manifest)
    assert bundle.records == records and bundle.vectors == vectors and bundle.dims == dims
    for doc, record in zip(manifest.docs, bundle.records):
        assert [chunk_id(record.blob_id, record.chunker_key, c.ordinal) for c in record.chunks] == manifest.chunk_ids(doc)


@settings(max_examples=150, deadline=None)
@given(snapshots(), st.integers(min_value=0), st.integers(min_value=1, max_value=255))
def test_any_changed_byte_is_refused(snapshot, where, flip):
    with tempfile.TemporaryDirectory() as tmp:
        path = _write(snapshot, Path(tmp))
        raw = bytearray(path.read_bytes())
        raw[where % len(raw)] ^= flip
        path.write_bytes(bytes(raw))
        with pytest.raises(RagitError) as caught:
            read_bundle(path)
    assert caught.value.code == "SNAPSHOT_BUNDLE_INVALID"
    assert caught.value.details["reason"] in ("malformed", "unsupported_version", "checksum_mismatch")
