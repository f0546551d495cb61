"""An ingest worker counts a chunk's keyword terms from the words the embedder split its input
text into (issue 15): the same words, hence the same fields, as :func:`ragit.lexical.term_counts`
reading the text again."""

from __future__ import annotations

from pathlib import Path

from hypothesis import given, settings
from hypothesis import strategies as st

from ragit import lexical
from ragit.embed import CODE_DIR, MINILM_DIR, pieces
from ragit.embed.static import StaticEmbedder
from ragit.ingest.chunks import input_text, text_words
from ragit.ingest.code import chunk_code
from ragit.ingest.markdown import chunk_markdown
from ragit.store.bm25 import index_fields

ROOT = Path(__file__).resolve().parents[2]
FIXTURES = ROOT / "tests" / "fixtures"


def _real_chunks(limit: int = 3000) -> list[tuple[str, str, str]]:
    """(text, title, path) of the chunks of this repository's own sources and the test fixtures,
    as the chunkers cut them: code, prose, Markdown, non-ASCII and control characters included."""
    out: list[tuple[str, str, str]] = []
    paths = sorted((ROOT / "src" / "ragit").rglob("*.py")) + sorted(p for p in FIXTURES.rglob("*") if p.is_file())
    paths += sorted((ROOT / "docs").rglob("*.md"))
    for path in paths:
        try:
            text = path.read_text(encoding="utf-8").replace("\r\n", "\n")
        except (UnicodeDecodeError, OSError):
            continue
        rel = path.relative_to(ROOT).as_posix()
        if path.suffix == ".md":
            chunks = chunk_markdown(text)
        else:
            chunks = chunk_code(rel, text, text)[1]
        out += [(c.text, c.title, rel) for c in chunks]
        if len(out) >= limit:
            break
    return out


def _embedder(preprocess: str | None = "code") -> StaticEmbedder:
    folder = CODE_DIR if preprocess else MINILM_DIR
    return StaticEmbedder("words:test", folder / "tokenizer.json", folder / "embeddings.safetensors",
                          tensor_key="embeddings", preprocess=preprocess)


def test_the_tokeniser_splits_words_with_the_keyword_table():
    assert pieces._WORDS_RAW == lexical.ASCII_WORD_TABLE


def test_fields_from_the_embedders_words_are_the_fields_of_the_text():
    rows = _real_chunks()
    extra = [("x = 1\x0b\x0cy = 2", "function f", "a.py"), ("naïve café", "Intro", "b.md"), ("", "module", "c.py"),
             ("[UNK] sendFile", "lines 1-2", "d.txt"), ("getHTTPResponse(a_b)", "class\nA", "e.py"),
             ("trailing\x7f delete", "", "f.py")]
    rows += extra
    embedder = _embedder()
    texts = [input_text(title, text) for text, title, _ in rows]
    vectors, words = embedder.embed_with_words(texts)
    assert vectors.tobytes() == embedder.embed(texts).tobytes()
    assert len(words) == len(texts)
    used = 0
    for (text, title, path), found in zip(rows, words):
        if found is None:
            # only a text not read as words: not ASCII, or holding a control character
            assert not input_text(title, text).isascii() or any(
                c < 32 and c not in (9, 10, 13) or c == 127 for c in input_text(title, text).encode("ascii"))
            continue
        used += 1
        mine = text_words(title, found)
        assert mine == lexical.ascii_words(text)
        assert index_fields(text, title, path, mine) == index_fields(text, title, path)
    assert used > len(rows) // 2


def test_a_model_without_the_keyword_split_gives_no_words():
    """``minilm`` reads lower-cased words: not the keyword index's, so none are handed on."""
    texts = ["def sendFile(path):\n    return path", "plain prose"]
    vectors, words = _embedder(None).embed_with_words(texts)
    assert words == [None, None]
    assert vectors.tobytes() == _embedder(None).embed(texts).tobytes()


@settings(max_examples=200, deadline=None)
@given(st.text(alphabet=st.sampled_from(list("aZ_9 .\n\t(")), max_size=30),
       st.text(alphabet=st.sampled_from(list("aBc_1 \n\t:;{}\x0b")), max_size=80))
def test_text_words_drop_exactly_the_titles_words(title, text):
    assert text_words(title, lexical.ascii_words(input_text(title, text))) == lexical.ascii_words(text)


def test_ascii_term_counts_is_term_counts():
    for text, _, _ in _real_chunks(800):
        if text.isascii():
            counts = lexical.ascii_term_counts(lexical.ascii_words(text))
            assert counts == lexical.term_counts(text)
            assert list(counts) == list(lexical.term_counts(text))  # first-seen order too
