"""Read-time re-masking of hits (knowledge §10.2): every field is masked on output, except hit text
that ingest already masked with the current rule set (masking is idempotent, so the output is the
same; issue 15 asks not to pay for it twice)."""

from __future__ import annotations

import pytest

from ragit.ingest.ids import chunker_key, masking_of
from ragit.retrieve.hits import Hit
from ragit.retrieve.remask import hits_redaction, remask_hits
from ragit.security.masking import MASKING_VERSION, mask_text

SECRET = "AKIAABCDEFGHIJKLMNOP"


def hit(text: str, *, masked_with: str | None, path: str = "docs/keys.md", title: str = "Keys") -> Hit:
    return Hit(path=path, start_line=1, end_line=3, section_title=title, doc_type="doc", score_final=0.5,
               score_vector=0.5, score_keyword=0.5, citation={"id": "cite-" + "0" * 24}, scope="durable",
               origin_type="document", artifact_id=None, artifact_kind=None, authority="promoted_durable",
               confidence=None, trust="repository", text=text, chunk_id="c" * 40, breakdown={},
               masked_with=masked_with)


@pytest.mark.parametrize(("key", "version"), [
    (chunker_key("code", "3", "1"), "1"),
    (chunker_key("markdown", "2", "12"), "12"),
    (chunker_key("code", "3", None), None),
    ("", None),
])
def test_masking_of_reads_the_version_a_chunker_key_records(key, version):
    assert masking_of(key) == version


def test_text_masked_at_ingest_with_these_rules_is_not_masked_again():
    stored = mask_text(f"alpha key {SECRET} here").text
    h = hit(stored, masked_with=MASKING_VERSION)
    remask_hits([h])
    assert h.text == stored and h.masked_fields == {}


@pytest.mark.parametrize("masked_with", [None, "0", MASKING_VERSION + "-older"])
def test_text_not_masked_with_the_current_rules_is_masked_and_counted(masked_with):
    h = hit(f"alpha key {SECRET} here", masked_with=masked_with)
    remask_hits([h])
    assert SECRET not in h.text and h.masked_fields == {"text": 1}
    assert hits_redaction([h], "default") == (1, ["hits[0].excerpt"])
    assert hits_redaction([h], "full", prefix="retrievedHits") == (1, ["retrievedHits[0].text"])
    again = hit(f"alpha key {SECRET} here", masked_with=masked_with)
    remask_hits([again])  # the text's kept masking counts the same on every call
    assert again.text == h.text and again.masked_fields == {"text": 1}


def test_paths_and_titles_are_always_masked_even_for_stored_text():
    # code titles come from the raw structure and paths are never masked at ingest
    h = hit("plain", masked_with=MASKING_VERSION, path=f"keys/{SECRET}.md", title=f"key {SECRET}")
    remask_hits([h])
    assert SECRET not in h.path and SECRET not in h.section_title
    assert h.masked_fields == {"path": 1, "sectionTitle": 1}
    again = hit("plain", masked_with=MASKING_VERSION, path=f"keys/{SECRET}.md", title=f"key {SECRET}")
    remask_hits([again])  # the cached masking of names counts the same on every call
    assert again.masked_fields == {"path": 1, "sectionTitle": 1}


def test_paths_remembered_ahead_are_the_masks_a_hit_gets():
    from ragit.retrieve import remask

    path = f"config/{SECRET}/settings.py"
    remask._mask_name.cache_clear()
    remask.remember_paths([path, "src/app.py"])
    kept = remask._mask_name.cache_info().currsize
    assert kept == 4  # plain and code mode each (.py is code)
    h = hit("text", masked_with=MASKING_VERSION, path=path)
    remask_hits([h])
    assert h.path == mask_text(path).text and SECRET not in h.path and h.masked_fields["path"] == 1
    assert remask._mask_name.cache_info().currsize == kept + 1  # the title only
