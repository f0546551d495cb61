"""The piece tokeniser and the batch embedding path give the bits of in-order ``tokenizers`` ids."""

from __future__ import annotations

import random
import re
from array import array
from collections import Counter
from pathlib import Path

import numpy as np
import pytest
from tokenizers import Tokenizer

from ragit.embed import CODE_DIR, MINILM_DIR, pieces, static
from ragit.embed.codetext import code_words, code_words_pieces, split_identifiers
from ragit.embed.pieces import PieceTokenizer
from ragit.embed.static import StaticEmbedder
from ragit.embed.wordpiece import load_wordpiece
from tiny_bert import ALPHABET
from tiny_bert import tiny_tokenizer as _tokenizer
from tiny_bert import write_safetensors as _write_safetensors

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "ordinary_code"
# separators BERT does not treat as separators (controls are dropped, Unicode spaces split
# inside a piece), CJK, Unicode punctuation, accents
EXTRA = ["\x0b", "\x0c", "\x1c", "\x1f", "\x85", "\u00a0", "\u3000", "\u2028", "中", "—", "É", "e\u0301", "’", "…"]


def _real_code(limit: int = 400) -> list[str]:
    texts = []
    for path in sorted(FIXTURES.rglob("*")):
        if path.is_file() and path.suffix in (".py", ".go", ".ts", ".js", ".rs", ".java", ".md"):
            text = path.read_text(encoding="utf-8", errors="replace")
            texts += [text[i:i + 900] for i in range(0, min(len(text), 9000), 900)]
        if len(texts) >= limit:
            break
    return texts


def _unpacked(ids: bytes | None) -> list[int] | None:
    """The piece tokeniser's packed ids as a list."""
    return None if ids is None else array("i", ids).tolist()


def _random_texts(count: int, seed: int, alphabet) -> list[str]:
    rng = random.Random(seed)
    return ["".join(rng.choice(alphabet) for _ in range(rng.randint(0, 30))) for _ in range(count)]


def _pieces_for(tok_path: Path, tok: Tokenizer, fallback_calls: list[str] | None = None) -> PieceTokenizer:
    encoder = load_wordpiece(tok_path)
    assert encoder is not None

    def fallback(piece: str) -> list[int]:
        if fallback_calls is not None:
            fallback_calls.append(piece)
        return tok.encode(piece, add_special_tokens=False).ids

    return PieceTokenizer(encoder, fallback)


def test_piece_ids_are_the_multiset_of_tokenizers_ids(tmp_path):
    tok = _tokenizer()
    path = tmp_path / "tokenizer.json"
    tok.save(str(path))
    tokenizer = _pieces_for(path, tok)
    texts = _random_texts(3000, seed=11, alphabet=ALPHABET + EXTRA) + ["x" * 13, "a" * 12 + " " + "b", "AB.c(x)"]
    checked = 0
    for text, encoding in zip(texts, tok.encode_batch(texts, add_special_tokens=False)):
        got = _unpacked(tokenizer.ids(text))
        if "[UNK]" in text or "[PAD]" in text:
            assert got is None  # an added token: the caller encodes the text in order
            continue
        assert Counter(got) == Counter(encoding.ids), repr(text)
        checked += 1
    assert checked > 1000


def test_piece_ids_on_real_code_with_the_bundled_model():
    tok_path = CODE_DIR / "tokenizer.json"
    tok = Tokenizer.from_file(str(tok_path))
    calls: list[str] = []
    tokenizer = _pieces_for(tok_path, tok, calls)
    texts = [code_words(t) for t in _real_code()] + _random_texts(300, seed=5, alphabet=ALPHABET + EXTRA)
    got = tokenizer.ids_many(texts)
    for text, ids, encoding in zip(texts, got, tok.encode_batch(texts, add_special_tokens=False)):
        if ids is not None:
            assert Counter(_unpacked(ids)) == Counter(encoding.ids), repr(text[:80])
    assert calls and all(not piece.isascii() for piece in calls)  # ASCII pieces never reach tokenizers


def test_batches_fill_the_cache_as_single_texts_do():
    """``ids_many`` enters a batch's new pieces in one pass: the same ids as one text at a time,
    whatever the batch boundaries, for ASCII texts and the ASCII pieces of other texts."""
    tok_path = CODE_DIR / "tokenizer.json"
    tok = Tokenizer.from_file(str(tok_path))
    texts = [code_words(t) for t in _real_code(120)] + _random_texts(400, seed=21, alphabet=ALPHABET + EXTRA)
    one_by_one = _pieces_for(tok_path, tok)
    expected = [one_by_one.ids(text) for text in texts]
    for size in (1, 7, 64, len(texts)):
        batched = _pieces_for(tok_path, tok)
        got = [ids for start in range(0, len(texts), size) for ids in batched.ids_many(texts[start:start + size])]
        assert got == expected
        # the same ids for every piece both remember (a batch also remembers the pieces of a text
        # it then declines for holding an added token: valid ids, never used for that text)
        assert all(batched._pieces[p] == ids for p, ids in one_by_one._pieces.items())


def test_one_pass_over_new_pieces_gives_each_piece_its_ids(monkeypatch):
    """A batch's new pieces are split into words in one pass, a sentinel between pieces: each
    piece gets the ids it gets alone, also when a word's id is too large for the sentinel (the
    pass is then turned off and the pieces are split one by one), and with empty pieces (only
    control characters, dropped) anywhere in the batch."""
    tok_path = CODE_DIR / "tokenizer.json"
    tok = Tokenizer.from_file(str(tok_path))
    texts = [code_words(t) for t in _real_code(60)] + ["a \x01 b", "\x01\x02", "x.y \x03", "\x04 z"]
    alone = _pieces_for(tok_path, tok)
    expected = [alone.ids(text) for text in texts]
    batched = _pieces_for(tok_path, tok)
    assert batched.ids_many(texts) == expected and batched._flat
    monkeypatch.setattr(pieces, "_MAX_FLAT_ID", 2000)  # common words' ids are larger
    capped = _pieces_for(tok_path, tok)
    assert capped.ids_many(texts) == expected and not capped._flat
    for text, ids in zip(texts, expected):
        if ids is not None:
            assert Counter(_unpacked(ids)) == Counter(tok.encode(text, add_special_tokens=False).ids)


def _assert_embedded_without_tokenizers(texts: list[str]) -> None:
    """The code embedder embeds ``texts`` without loading ``tokenizers``, and its vectors equal
    the pooled ids that ``tokenizers`` gives, bit for bit."""
    embedder = StaticEmbedder("code:test", CODE_DIR / "tokenizer.json", CODE_DIR / "embeddings.safetensors",
                              preprocess="code")
    got = embedder.embed(texts)
    assert embedder._hf is None
    reference = StaticEmbedder("code:ref", CODE_DIR / "tokenizer.json", CODE_DIR / "embeddings.safetensors",
                               preprocess="code")
    prepared = reference._prepared(texts)
    ids = [e.ids for e in reference._hf_tokenizer().encode_batch(list(prepared), add_special_tokens=False)]
    assert np.array_equal(got.view(np.uint32),
                          reference._pool_batches([static._flat_ids(ids)], len(texts)).view(np.uint32))


def test_ascii_text_never_loads_tokenizers():
    """A static model embedding ASCII text tokenises every word in Python: ``tokenizers`` (~25 ms
    to load, plus its thread pool) is not loaded; the vectors equal its in-order ids pooled."""
    texts = [code_words(t) for t in _real_code(200) if t.isascii()]
    _assert_embedded_without_tokenizers(texts)


def test_piece_cache_is_bounded(tmp_path, monkeypatch):
    tok = _tokenizer()
    path = tmp_path / "tokenizer.json"
    tok.save(str(path))
    monkeypatch.setattr(pieces, "MAX_PIECES", 5)
    tokenizer = _pieces_for(path, tok)
    for text in _random_texts(200, seed=3, alphabet=["a", "b", "x", " ", "ab", "."]):
        tokenizer.ids(text)
        assert len(tokenizer._pieces) <= 5 + 30  # cleared once past the bound (plus one text's pieces)
    batched = _pieces_for(path, tok)
    texts = _random_texts(400, seed=4, alphabet=["a", "b", "x", " ", "ab", "."])
    for start in range(0, len(texts), 8):
        assert batched.ids_many(texts[start:start + 8]) == [tokenizer.ids(t) for t in texts[start:start + 8]]
        assert len(batched._pieces) <= 5 + 8 * 30  # past the bound, a batch adds no pieces; cleared then


def test_batch_embedding_is_bit_identical_to_in_order_ids(monkeypatch):
    """The bundled float16 model: pieces + any batch size give the bits of ``tokenizers`` ids pooled
    in order, long texts (re-encoded in order) and texts with an added token included."""
    texts = [t for t in _real_code()] + ["[UNK] sendFile", "é" * 40, ""]
    monkeypatch.setattr(static, "EXACT_F16_TOKENS", 200)  # some texts take the in-order path
    embedder = StaticEmbedder("code:test", CODE_DIR / "tokenizer.json", CODE_DIR / "embeddings.safetensors",
                              preprocess="code")
    got = embedder.embed(texts)
    prepared = embedder._prepared(texts)
    reference = StaticEmbedder("code:ref", CODE_DIR / "tokenizer.json", CODE_DIR / "embeddings.safetensors")
    in_order = reference._pool_batches([static._flat_ids(reference._encode(prepared, None))], len(texts))
    assert np.array_equal(got.view(np.uint32), in_order.view(np.uint32))
    monkeypatch.setattr(static, "ENCODE_BATCH", 7)
    again = StaticEmbedder("code:test", CODE_DIR / "tokenizer.json", CODE_DIR / "embeddings.safetensors",
                           preprocess="code").embed(texts)
    assert np.array_equal(got.view(np.uint32), again.view(np.uint32))


def test_pieces_pre_processed_alone_give_the_bits_of_whole_texts():
    """The code model pre-processes each new piece, not each text: over identifiers, case,
    controls that BERT drops (vertical tab, form feed: not separators), Unicode spaces and
    added tokens, the vectors are those of ``tokenizers`` ids of pre-processed whole texts."""
    alphabet = ALPHABET + EXTRA + ["getUser", "HTTPServer", "x_y", "Ab", "aB", "AB", "\x0b", "\x00", "\x7f",
                                   "\t", "\r", "\n", "[UNK]", "[", "ß", "naïveCase", "getÜser"]
    texts = _random_texts(3000, seed=17, alphabet=alphabet) + [t for t in _real_code(100)]
    embedder = StaticEmbedder("code:test", CODE_DIR / "tokenizer.json", CODE_DIR / "embeddings.safetensors",
                              preprocess="code")
    got = np.concatenate([embedder.embed(texts[start:start + 300]) for start in range(0, len(texts), 300)])
    reference = StaticEmbedder("code:ref", CODE_DIR / "tokenizer.json", CODE_DIR / "embeddings.safetensors")
    in_order = reference._pool_batches([static._flat_ids(reference._encode(embedder._prepared(texts), None))],
                                       len(texts))
    assert np.array_equal(got.view(np.uint32), in_order.view(np.uint32))


def test_added_tokens_with_whitespace_refuse_piece_pre_processing():
    encoder = load_wordpiece(CODE_DIR / "tokenizer.json")
    assert encoder is not None
    PieceTokenizer(encoder, list, split_identifiers)
    encoder.specials = (*encoder.specials, "[NEW LINE]")
    with pytest.raises(ValueError):
        PieceTokenizer(encoder, list, split_identifiers)


def test_float32_models_keep_the_in_order_path(tmp_path):
    tok = _tokenizer()
    tok_path = tmp_path / "tokenizer.json"
    tok.save(str(tok_path))
    matrix = np.random.default_rng(1).standard_normal((18, 8)).astype(np.float32)
    embedder = StaticEmbedder("t", tok_path, _write_safetensors(tmp_path / "m.safetensors", "w", matrix))
    embedder.embed(["a b c"] * 3)
    assert embedder._pieces is None  # float32 sums depend on order: never the piece path


# ---------------------------------------------------------------- code_words: same text, cheaper

_BOUNDARY = re.compile(r"([a-z0-9](?=[A-Z])|[A-Z](?=[A-Z][a-z]))")
_CAMEL_WORD = re.compile(r"\b(?=[A-Za-z0-9_]*?(?:[a-z0-9][A-Z]|[A-Z][A-Z][a-z]))[A-Za-z0-9_]+\b")


def _code_words_reference(text: str) -> str:
    compounds = _CAMEL_WORD.findall(text)
    split = _BOUNDARY.sub(r"\1 ", text).translate(str.maketrans("_", " "))
    return split + "\n" + " ".join(compounds) if compounds else split


def test_code_words_of_pieces_are_those_of_the_whole_text():
    """``code_words_pieces`` on a text's pieces (split at ASCII whitespace, one a line) gives
    each piece the pieces ``code_words`` gives the whole text, counted; so does
    ``split_identifiers``, which keeps each piece on its line."""
    alphabet = ["a", "b", "Z", "Q", "x1", "9", "_", " ", ".", "HTTP", "Server", "getUser", "é", "Ü", "\n", "ab",
                "\t", "\r", "\x0b", "\x0c", "\x1c", "\x85", "\u00a0", "\u3000", "ABc", "(", "ß", "_x"]
    texts = _random_texts(5000, seed=13, alphabet=alphabet) + _real_code() + ["", "  ", "parseXMLHttp"]
    space = re.compile(r"[ \t\n\r]+")
    for text in texts:
        raw = [p for p in space.split(text) if p]
        for whole, of_pieces in ((code_words, code_words_pieces), (split_identifiers, split_identifiers)):
            lines = of_pieces("\n".join(raw)).split("\n")
            assert len(lines) == max(len(raw), 1), repr(text)
            assert (Counter(p for line in lines for p in space.split(line) if p)
                    == Counter(p for p in space.split(whole(text)) if p)), repr(text)


def test_code_words_equals_the_reference_regexes():
    alphabet = ["a", "b", "Z", "Q", "x1", "9", "_", " ", ".", "HTTP", "Server", "getUser", "é", "Ü", "\n", "ab"]
    texts = _random_texts(5000, seed=9, alphabet=alphabet) + _real_code() + ["", "plain prose only", "parseXMLHttp"]
    for text in texts:
        assert code_words(text) == _code_words_reference(text), repr(text)
        assert split_identifiers(text) == _BOUNDARY.sub(r"\1 ", text).replace("_", " "), repr(text)


def test_plain_non_ascii_pieces_are_tokenised_in_python_as_tokenizers_does():
    """Non-ASCII letters, digits, punctuation, symbols and spaces that every Unicode version
    agrees on are normalised and split in Python (no ``tokenizers`` load for an accent or a
    dash): the ids equal ``tokenizers``' own, alone and among ASCII characters."""
    from ragit.embed.wordpiece import _plain_char

    tok_path = CODE_DIR / "tokenizer.json"
    tok = Tokenizer.from_file(str(tok_path))
    encoder = load_wordpiece(tok_path)
    plain = [chr(o) for o in range(0x80, 0x30000, 3) if not 0xD800 <= o < 0xE000 and _plain_char(chr(o)) is not None]
    assert len(plain) > 5000 and "é" in plain + [chr(0xE9)]
    rng = random.Random(3)
    pool = plain + list("abcXYZ09_.-(){}#$'\"\x01\x7f")
    pieces = [p for c in plain for p in (c, "a" + c + "b", c * 3, "Foo" + c + "Bar.")]
    pieces += ["".join(rng.choice(pool) for _ in range(rng.randint(1, 12))) for _ in range(5000)]
    pieces += ["é" * 101, "a" * 99 + "é", "naïve\u00a0café", "x—y", "Straße", "ÉCOLE"]
    pieces = [p for p in pieces if not p.isascii()]
    for piece, encoding in zip(pieces, tok.encode_batch(pieces, add_special_tokens=False)):
        assert encoder.plain_piece_ids(piece) == encoding.ids, repr(piece)
    # left to tokenizers: CJK, controls, marks, U+FFFD, capital sigma, characters younger than Unicode 3.2
    for piece in ("中", "a\x85b", "e\u0301", "\ufffd", "Σ", "\U0001F642", "§"):
        assert encoder.plain_piece_ids(piece) is None


def test_text_with_plain_non_ascii_characters_does_not_load_tokenizers():
    texts = ["def café(): return 'naïve — résumé'", "ÉCOLE → über\u00a0alles …"]
    _assert_embedded_without_tokenizers(texts)


def test_ascii_texts_are_read_as_words_and_punctuation():
    """An ASCII text without control characters is read as its words (runs of letters, digits
    and underscores) plus its punctuation characters: for both bundled models (with and without
    the code pre-processing) the ids are the multiset ``tokenizers`` gives the whole
    pre-processed text, however punctuation, identifiers and digits sit against each other; a
    text holding a control character BERT drops (which joins its neighbours) is read as pieces."""
    punctuation = list("!\"#$%&'()*+,-./:;<=>?@[\\]^_`{|}~")
    alphabet = punctuation + ["getUser", "HTTPServer", "x_y", "_", "__init__", "Ab", "aB", "AB", "a1B", "9", "12",
                              "base64Encode", "x" * 30, "y" * 110, " ", " ", "\n", "\t", "\r", "sendFile", "é"]
    texts = _random_texts(3000, seed=23, alphabet=alphabet) + _real_code(100) + ["a\x01b", "get\x0bUser", "x\x7fY"]
    for model, preprocess in ((CODE_DIR, "code"), (MINILM_DIR, None)):
        tok = Tokenizer.from_file(str(model / "tokenizer.json"))
        embedder = StaticEmbedder("t", model / "tokenizer.json", model / "embeddings.safetensors",
                                  **({"tensor_key": "embeddings"} if preprocess else {}), preprocess=preprocess)
        prepared = embedder._prepared(texts)
        tokenizer = PieceTokenizer(load_wordpiece(model / "tokenizer.json"),
                                   lambda piece, tok=tok: tok.encode(piece, add_special_tokens=False).ids,
                                   None if preprocess is None else code_words_pieces)
        got = [ids for start in range(0, len(texts), 97) for ids in tokenizer.ids_many(texts[start:start + 97])]
        for text, ids, encoding in zip(texts, got, tok.encode_batch(prepared, add_special_tokens=False)):
            assert ids is not None and Counter(_unpacked(ids)) == Counter(encoding.ids), repr(text)
    assert tokenizer._split(["a.b(c)", "a\x01b", "é x"])[1] == [b".()", None, None]
