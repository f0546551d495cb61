"""The WordPiece vocabulary file (ragit.embed.vocabfile) is the tokenizer JSON's encoder, exactly."""

from __future__ import annotations

import json
import random

import pytest

from ragit.embed import CODE_DIR, MINILM_DIR, vocabfile
from ragit.embed.wordpiece import WordPieceEncoder, load_wordpiece, vocab_file_settings, write_vocab_file


def _from_json(path) -> WordPieceEncoder:
    encoder = WordPieceEncoder.from_tokenizer_json(json.loads(path.read_text(encoding="utf-8")))
    assert encoder is not None
    return encoder


@pytest.mark.parametrize("model_dir", [CODE_DIR, MINILM_DIR])
def test_bundled_tokenizers_have_their_vocabulary_file(model_dir) -> None:
    """The shipped file is what ``write_vocab_file`` makes of the shipped JSON, and reads back as it."""
    path = model_dir / "tokenizer.json"
    stored = vocabfile.path_for(path.read_bytes())
    reference = _from_json(path)
    assert stored.read_bytes() == vocabfile.render(reference.vocab, vocab_file_settings(reference)), \
        "regenerate with ragit.embed.wordpiece.write_vocab_file"
    header, vocab = vocabfile.read(stored)
    assert vocab.as_dict() == reference.vocab
    encoder = load_wordpiece(path)
    assert isinstance(encoder.vocab, vocabfile.SortedVocab)
    assert (encoder.unk_id, encoder.prefix, encoder.max_chars, encoder.specials) == \
           (reference.unk_id, reference.prefix, reference.max_chars, reference.specials)
    assert header["longest"] == max(map(len, reference.vocab))


def test_binary_search_and_dict_answer_alike(monkeypatch: pytest.MonkeyPatch) -> None:
    path = CODE_DIR / "tokenizer.json"
    reference = _from_json(path).vocab
    probes = list(reference) + ["", "zzzz-not-a-token", "##", "\udc80", "ünï", "[unk]"]
    random.Random(3).shuffle(probes)
    monkeypatch.setattr(vocabfile, "DICT_AFTER", len(probes) // 2)  # half by search, half by dict
    _, vocab = vocabfile.read(vocabfile.path_for(path.read_bytes()))
    assert [vocab.get(p) for p in probes] == [reference.get(p) for p in probes]
    assert vocab.get("zzzz-not-a-token", -1) == -1


def test_the_file_encodes_as_the_json(tmp_path) -> None:
    """Same ids from the file and from the JSON (a changed JSON has no file: it is read itself)."""
    path = CODE_DIR / "tokenizer.json"
    changed = tmp_path / "tokenizer.json"
    changed.write_bytes(path.read_bytes() + b"\n")
    from_json = load_wordpiece(changed)
    from_file = load_wordpiece(path)
    assert isinstance(from_json.vocab, dict) and isinstance(from_file.vocab, vocabfile.SortedVocab)
    words = list(from_json.vocab)[:4000] + ["getUserName", "x" * 60, "a,b.c!", "unbelievablyjunkword"]
    text = " ".join(random.Random(5).sample(words, len(words)))
    assert from_file.encode(text) == from_json.encode(text)
    assert from_file.encode("how are routes matched?") == from_json.encode("how are routes matched?")


def test_write_vocab_file(tmp_path) -> None:
    written = write_vocab_file(CODE_DIR / "tokenizer.json", tmp_path)
    assert written is not None and written.read_bytes() == vocabfile.path_for(
        (CODE_DIR / "tokenizer.json").read_bytes()).read_bytes()
    assert vocabfile.render({"a\nb": 0, "c": 1}, {}) is None  # a token with a newline: no file


def test_punctuation_is_string_punctuation() -> None:
    import string

    from ragit.embed.wordpiece import _PUNCTUATION

    assert _PUNCTUATION == frozenset(string.punctuation)


@pytest.mark.parametrize("built", [False, True])
def test_wordpiece_of_hard_words_is_tokenizers(built: bool) -> None:
    """Greedy longest-match on the words that cost most (long lower-cased compounds, hex and
    base64-like runs, words no entry starts, words of up to ``max_chars`` and one past it) gives
    ``tokenizers``' ids, searching the binary file or its dict (bounded by the longest
    continuation entry)."""
    from tokenizers import Tokenizer

    path = CODE_DIR / "tokenizer.json"
    tokenizer = Tokenizer.from_file(str(path))
    encoder = load_wordpiece(path)
    assert isinstance(encoder.vocab, vocabfile.SortedVocab)
    if built:
        encoder.vocab.as_dict()
    rng = random.Random(11)
    entries = [t for t in _from_json(path).vocab if t.isascii() and t.isalnum()]
    pieces = entries + [t[2:] for t in _from_json(path).vocab if t.startswith("##") and t[2:].isalnum()]
    words = ["".join(rng.choice(pieces) for _ in range(rng.randint(1, 8))).lower() for _ in range(1500)]
    words += ["".join(rng.choice("0123456789abcdef") for _ in range(rng.randint(1, 64))) for _ in range(300)]
    words += ["".join(rng.choice("abcdefghijklmnopqrstuvwxyz0123456789") for _ in range(rng.randint(1, 40)))
              for _ in range(300)]
    words += ["a", "x" * 100, "x" * 101, "q" * 30, "zzzzzzzzzz", "1", "unbelievablyjunkword"]
    words = [w for w in words if w.isalnum() and w.isascii() and w]
    expected = [e.ids for e in tokenizer.encode_batch(words, add_special_tokens=False)]
    assert [encoder.word_ids(w) for w in words] == expected
    assert encoder.vocab.built() is True  # thousands of lookups: the dict was built on the way
    assert encoder._get is not None
    assert encoder._longest_next == max(len(t) - 2 for t in _from_json(path).vocab if t.startswith("##"))
