"""Document lines of a trusted manifest: found by binary search on lazily decoded paths
(ragit.ingest.manifest.DocLines), equal to re-rendering every document."""

from __future__ import annotations

import hashlib

from hypothesis import given, settings
from hypothesis import strategies as st

from ragit.ingest.manifest import (
    DocLines,
    Manifest,
    ManifestDoc,
    ManifestParams,
    _parse_trusted_lines,
    doc_line,
    line_path,
    parse_manifest,
    render_manifest,
)

SHA = "a" * 40
# quotes, backslashes, control characters, non-ASCII and the markers the parser looks for
PATHS = st.lists(st.sampled_from(list('ab/._-"\\\x01\té😀') + [', "blobId": "', '    {"path": ']),
                 min_size=1, max_size=8).map("".join)


def _doc(path: str, n: int = 1) -> ManifestDoc:
    return ManifestDoc(path, hashlib.sha1(path.encode()).hexdigest(), "spec", "markdown", ((1, n),))


def _manifest(paths) -> Manifest:
    return Manifest(SHA, None, "2026-11-30T00:00:00.000Z", ManifestParams("1", None, "e:1", "h"), "full", None,
                    [_doc(p) for p in sorted(paths)])


@settings(max_examples=200, deadline=None)
@given(st.sets(PATHS, max_size=30), st.sets(PATHS, max_size=80), st.data())
def test_replace_equals_rerendering(base_paths, scope, data):
    raw = render_manifest(_manifest(base_paths))
    loaded = _parse_trusted_lines(raw, SHA, "m.json", hashlib.sha256(raw).hexdigest())
    assert loaded is not None and loaded.paths() == sorted(base_paths)
    assert loaded.manifest.docs == [] and parse_manifest(raw, SHA, "m.json").paths() == sorted(base_paths)
    lines = loaded.doc_lines()
    assert [line_path(line) for line in lines.lines] == sorted(base_paths)
    admitted_paths = data.draw(st.sets(st.sampled_from(sorted(scope)))) if scope else set()
    admitted = {p: doc_line(_doc(p, 2)) for p in admitted_paths}
    expected = {p: doc_line(_doc(p)) for p in base_paths if p not in scope} | admitted
    assert lines.replace(scope, admitted).lines == [expected[p] for p in sorted(expected)]
    for p in base_paths | scope:
        assert (p in lines) == (p in base_paths)
    assert lines.having(scope) == scope & base_paths
    DocLines.SEARCH_MAX, search_max = 0, DocLines.SEARCH_MAX  # the filtering branches
    try:
        assert lines.having(scope) == scope & base_paths
        assert lines.replace(scope, admitted).lines == [expected[p] for p in sorted(expected)]
    finally:
        DocLines.SEARCH_MAX = search_max


def test_a_file_not_in_rendered_form_is_not_trusted():
    raw = render_manifest(_manifest(["a.md", "b.md"]))
    broken = raw.replace(b'    {"path": "b.md"', b'   {"path": "b.md"')
    assert _parse_trusted_lines(broken, SHA, "m.json", "x") is None
    empty = render_manifest(_manifest([]))
    assert _parse_trusted_lines(empty, SHA, "m.json", "x").paths() == []
    assert DocLines([]).replace({"a"}, {}).lines == []
