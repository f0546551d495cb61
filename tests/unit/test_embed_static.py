"""Static token-embedding models: a tiny synthetic model, then WordLlama's bundled one."""

from __future__ import annotations

import json
import os
import random
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from tokenizers import Tokenizer, models, normalizers, pre_tokenizers

import ragit.embed as embed_pkg
from ragit.config import defaults
from ragit.embed import embedder_id_for, load_embedder
from ragit.embed import static
from ragit.embed.base import Embedder
from ragit.embed.bpe import load_bpe
from ragit.embed.static import StaticEmbedder
from ragit.errors import RagitError

# ---------------------------------------------------------------- a tiny Llama-style model

BYTES = {f"<0x{b:02X}>": 3 + b for b in range(256)}
PIECES = ["▁", "a", "b", "c", "d", "é", "▁a", "ab", "▁ab", "bc", "▁b", "abc", "▁abc", "cd", "▁▁",
          "dd"]
VOCAB = {"<unk>": 0, "<s>": 1, "</s>": 2, **BYTES, **{p: 259 + i for i, p in enumerate(PIECES)}}
# "▁ab" is reachable by two merges of different rank: exercises the stale-entry rule.
MERGES = [("a", "b"), ("▁", "a"), ("▁a", "b"), ("▁", "ab"), ("b", "c"), ("▁", "b"), ("ab", "c"),
          ("▁ab", "c"), ("c", "d"), ("▁", "▁"), ("d", "d")]
ALPHABET = ["a", "b", "c", "d", "é", "x", "😀", " ", "  ", "\n", "<s>", "</s>", "<unk>", "▁"]


def _tokenizer(byte_fallback: bool = True, fuse_unk: bool = True) -> Tokenizer:
    tok = Tokenizer(models.BPE(dict(VOCAB), list(MERGES), unk_token="<unk>", fuse_unk=fuse_unk,
                               byte_fallback=byte_fallback))
    tok.normalizer = normalizers.Sequence([normalizers.Prepend("▁"), normalizers.Replace(" ", "▁")])
    tok.add_special_tokens(["<unk>", "<s>", "</s>"])
    return tok


def _write_safetensors(path: Path, name: str, matrix: np.ndarray) -> Path:
    dtype = {np.dtype(np.float16): "F16", np.dtype(np.float32): "F32"}[matrix.dtype]
    data = np.ascontiguousarray(matrix).astype(matrix.dtype.newbyteorder("<")).tobytes()
    header = json.dumps({"__metadata__": {"format": "np"},
                         name: {"dtype": dtype, "shape": list(matrix.shape), "data_offsets": [0, len(data)]}})
    path.write_bytes(len(header).to_bytes(8, "little") + header.encode() + data)
    return path


def _random_texts(count: int, seed: int) -> list[str]:
    rng = random.Random(seed)
    return ["".join(rng.choice(ALPHABET) for _ in range(rng.randint(0, 24))) for _ in range(count)]


@pytest.fixture
def tiny(tmp_path):
    """(tokenizer path, float32 matrix, matrix path) of an 8-dimensional model."""
    tok_path = tmp_path / "tokenizer.json"
    _tokenizer().save(str(tok_path))
    matrix = np.random.default_rng(7).standard_normal((len(VOCAB), 8)).astype(np.float32)
    return tok_path, matrix, _write_safetensors(tmp_path / "model.safetensors", "embeddings", matrix)


def _tiny_embedder(tiny, tmp_path, **kwargs) -> StaticEmbedder:
    tok_path, _, matrix_path = tiny
    return StaticEmbedder("tiny:test:8:1", tok_path, matrix_path, cache_dir=tmp_path / "cache", **kwargs)


def _expected(tok: Tokenizer, matrix: np.ndarray, texts: list[str]) -> np.ndarray:
    out = np.zeros((len(texts), matrix.shape[1]), dtype=np.float64)
    for row, encoding in enumerate(tok.encode_batch(texts, add_special_tokens=False)):
        ids = np.clip(encoding.ids, 0, matrix.shape[0] - 1)
        if len(ids):
            mean = matrix[ids].astype(np.float64).mean(axis=0)
            out[row] = mean / np.linalg.norm(mean)
    return out


# ---------------------------------------------------------------- the Python BPE encoder

@pytest.mark.parametrize(("byte_fallback", "fuse_unk"), [(True, True), (False, True), (False, False)])
def test_python_encoder_matches_tokenizers(tmp_path, byte_fallback, fuse_unk):
    tok = _tokenizer(byte_fallback, fuse_unk)
    path = tmp_path / "tokenizer.json"
    tok.save(str(path))
    encoder = load_bpe(path, tmp_path / "cache")
    assert encoder is not None
    texts = _random_texts(1500, seed=1) + ["", " ", "<s>", "a<s>b", "a <s> b", "abcabc abc", "xx😀x"]
    expected = [e.ids for e in tok.encode_batch(texts, add_special_tokens=False)]
    assert [encoder.encode(t) for t in texts] == expected


def test_encoder_tables_are_cached_and_rebuilt_when_stale(tmp_path):
    path = tmp_path / "tokenizer.json"
    _tokenizer().save(str(path))
    cache = tmp_path / "cache"
    first = load_bpe(path, cache)
    (entry,) = cache.iterdir()
    entry.write_bytes(b"garbage")  # a broken cache entry costs a rebuild, nothing else
    second = load_bpe(path, cache)
    assert second is not None and first is not None
    assert second.encode("abc d") == first.encode("abc d")
    assert load_bpe(path, None) is not None  # works without a cache directory too


def test_unsupported_tokenizer_is_reported(tmp_path):
    tok = _tokenizer()
    tok.pre_tokenizer = pre_tokenizers.Whitespace()
    path = tmp_path / "tokenizer.json"
    tok.save(str(path))
    assert load_bpe(path, tmp_path / "cache") is None
    assert load_bpe(path, tmp_path / "cache") is None  # the verdict is cached too


# ---------------------------------------------------------------- StaticEmbedder on the tiny model

def test_mean_pooling_and_normalisation(tiny, tmp_path):
    tok_path, matrix, _ = tiny
    embedder = _tiny_embedder(tiny, tmp_path)
    assert isinstance(embedder, Embedder)
    assert (embedder.id, embedder.dimensions) == ("tiny:test:8:1", 8)
    texts = ["abc abc", "a<s>b", "xé😀", "", "dd cd"]
    vectors = embedder.embed(texts)
    assert vectors.dtype == np.float32 and vectors.shape == (5, 8) and vectors.flags["C_CONTIGUOUS"]
    expected = _expected(Tokenizer.from_file(str(tok_path)), matrix, texts)
    np.testing.assert_allclose(vectors, expected, atol=1e-6)
    assert not vectors[3].any()
    assert embedder.embed([]).shape == (0, 8)


def test_both_tokenizer_paths_give_identical_vectors(tiny, tmp_path, monkeypatch):
    texts = _random_texts(300, seed=2)
    python_path = _tiny_embedder(tiny, tmp_path)
    assert sum(map(len, texts)) <= static.PY_ENCODE_MAX_CHARS
    one_by_one = np.vstack([python_path.embed([t]) for t in texts])
    assert python_path._hf is None  # short input never loads `tokenizers`
    monkeypatch.setattr(static, "PY_ENCODE_MAX_CHARS", 0)
    monkeypatch.setattr(static, "WIDEN_AFTER_TOKENS", 0)
    monkeypatch.setattr(static, "ENCODE_BATCH", 7)
    rust_path = _tiny_embedder(tiny, tmp_path)
    batched = rust_path.embed(texts)
    assert rust_path._hf is not None
    assert np.array_equal(one_by_one, batched)  # bit-identical, whatever the batch


def test_float16_matrix_widened_or_not_gives_identical_vectors(tiny, tmp_path, monkeypatch):
    tok_path, matrix, _ = tiny
    half = _write_safetensors(tmp_path / "half.safetensors", "w", matrix.astype(np.float16))
    texts = _random_texts(50, seed=3)
    mapped = StaticEmbedder("t", tok_path, half, cache_dir=tmp_path).embed(texts)
    monkeypatch.setattr(static, "WIDEN_AFTER_TOKENS", 0)
    widened_embedder = StaticEmbedder("t", tok_path, half, cache_dir=tmp_path)
    widened = widened_embedder.embed(texts)
    assert widened_embedder._matrix.dtype == np.float32
    assert np.array_equal(mapped, widened)
    widened_matrix = matrix.astype(np.float16).astype(np.float32)
    expected = _expected(Tokenizer.from_file(str(tok_path)), widened_matrix, texts)
    np.testing.assert_allclose(mapped, expected, atol=1e-6)


def test_ids_past_the_matrix_use_its_last_row(tiny, tmp_path):
    tok_path, matrix, _ = tiny
    short = _write_safetensors(tmp_path / "short.safetensors", "w", matrix[:260])
    # "c" encodes as "▁" (259) and "c" (262); the matrix stops at row 259
    vector = StaticEmbedder("t", tok_path, short, cache_dir=tmp_path).embed(["c"])[0]
    expected = matrix[259] + matrix[259]
    np.testing.assert_allclose(vector, expected / np.linalg.norm(expected), atol=1e-6)


def test_tokenizer_without_python_encoder_uses_tokenizers(tmp_path):
    """A WordPiece model (model2vec style) loads with the same class, through ``tokenizers``."""
    vocab = {"[UNK]": 0, "hello": 1, "world": 2, "##s": 3, "wor": 4, "##ld": 5}
    tok = Tokenizer(models.WordPiece(vocab, unk_token="[UNK]"))
    tok.normalizer = normalizers.Lowercase()
    tok.pre_tokenizer = pre_tokenizers.Whitespace()
    tok_path = tmp_path / "wp.json"
    tok.save(str(tok_path))
    matrix = np.random.default_rng(1).standard_normal((6, 4)).astype(np.float32)
    matrix_path = _write_safetensors(tmp_path / "m.safetensors", "embeddings", matrix)
    embedder = StaticEmbedder("m2v:test:4:1", tok_path, matrix_path, tensor_key="embeddings",
                              cache_dir=tmp_path)
    assert embedder._hf is not None
    texts = ["Hello worlds", "WORLD hello ?", ""]
    np.testing.assert_allclose(embedder.embed(texts), _expected(tok, matrix, texts), atol=1e-6)


def _unavailable(make) -> RagitError:
    with pytest.raises(RagitError) as info:
        make()
    err = info.value
    assert err.code == "EMBEDDER_UNAVAILABLE" and err.recovery == "ragit doctor"
    assert err.details["embedderId"] == "x:y:8:1"
    return err


def test_missing_and_corrupt_files(tiny, tmp_path):
    tok_path, matrix, matrix_path = tiny

    def make(tokenizer=tok_path, weights=matrix_path, **kw):
        return lambda: StaticEmbedder("x:y:8:1", tokenizer, weights, cache_dir=tmp_path / "c", **kw)

    reason = _unavailable(make(weights=tmp_path / "nope.safetensors")).details["reason"]
    assert "weights file not found" in reason
    reason = _unavailable(make(tokenizer=tmp_path / "nope.json")).details["reason"]
    assert "tokenizer file not found" in reason
    garbage = tmp_path / "garbage.bin"
    garbage.write_bytes(b"\xff" * 64)
    assert "corrupt weights" in _unavailable(make(weights=garbage)).details["reason"]
    truncated = tmp_path / "truncated.safetensors"
    truncated.write_bytes(matrix_path.read_bytes()[:-16])
    assert "out of bounds" in _unavailable(make(weights=truncated)).details["reason"]
    assert "not found" in _unavailable(make(tensor_key="embedding.weight")).details["reason"]
    bad_json = tmp_path / "bad.json"
    bad_json.write_text("{not json", encoding="utf-8")
    assert "corrupt tokenizer" in _unavailable(make(tokenizer=bad_json)).details["reason"]


# ---------------------------------------------------------------- WordLlama's bundled model

SAMPLES = [
    "How does ingest reuse unchanged blobs?",
    "restore auth context",
    "def embed(self, texts: Sequence[str]) -> numpy.ndarray:\n    return self._pool(ids)\n",
    "Ünïcode 한국어 검색 — émoji 😀 and tabs\tand\r\nCRLF",
    "literal special tokens <s> </s> <unk> inside text",
    "x",
    "   leading and trailing spaces   ",
]


@pytest.fixture(scope="module")
def shared_cache(tmp_path_factory):
    return tmp_path_factory.mktemp("xdg-cache")


@pytest.fixture
def wordllama_env(monkeypatch, shared_cache):
    """One encoder-table cache for the module, and a fresh per-id model cache per test."""
    monkeypatch.setenv("XDG_CACHE_HOME", str(shared_cache))
    monkeypatch.setattr(embed_pkg, "_LOADED", {})


def _wordllama_version() -> str:
    from importlib.metadata import version

    return version("wordllama")


@pytest.mark.slow
def test_default_config_loads_bundled_wordllama(wordllama_env):
    config = defaults()
    embedder = load_embedder(config)
    assert embedder.id == embedder_id_for(config) == f"wordllama:l2_supercat:256:{_wordllama_version()}"
    assert embedder.dimensions == 256
    assert load_embedder(config) is embedder  # loaded once per id and process
    vectors = embedder.embed(SAMPLES + [""])
    assert vectors.shape == (len(SAMPLES) + 1, 256) and vectors.dtype == np.float32
    np.testing.assert_allclose(np.linalg.norm(vectors[:-1], axis=1), 1.0, atol=1e-5)
    assert not vectors[-1].any()
    paraphrase = embedder.embed(["restoring the authentication context"])[0]
    assert vectors[1] @ paraphrase > vectors[1] @ vectors[5]


@pytest.mark.slow
def test_vectors_equal_wordllama_inference(wordllama_env, tmp_path):
    from wordllama import WordLlama

    package = Path(embed_pkg._wordllama_package("t")[0])
    # wordllama 0.4.0.post1 looks for its bundled tokenizer under "tokenizer/" (the wheel ships
    # "tokenizers/"), so point its cache directory at the bundled file and forbid downloads.
    (tmp_path / "tokenizers").mkdir()
    (tmp_path / "tokenizers" / "l2_supercat_tokenizer_config.json").symlink_to(
        package / "tokenizers" / "l2_supercat_tokenizer_config.json")
    reference = WordLlama.load("l2_supercat", cache_dir=tmp_path, disable_download=True)
    embedder = load_embedder(defaults())
    long_text = (SAMPLES[2] * 40)[:2400]
    texts = SAMPLES + [long_text]
    np.testing.assert_allclose(embedder.embed(texts), reference.embed(texts, norm=True), atol=1e-5, rtol=0)
    assert embedder._hf is None  # that was the pure-Python tokenizer path
    batch = [f"{SAMPLES[i % len(SAMPLES)]} #{i}" for i in range(400)] + [long_text] * 4
    np.testing.assert_allclose(embedder.embed(batch), reference.embed(batch, norm=True), atol=1e-5, rtol=0)
    assert embedder._hf is not None  # and the `tokenizers` batch path


@pytest.mark.slow
def test_python_encoder_matches_tokenizers_on_the_bundled_tokenizer(wordllama_env):
    embedder = load_embedder(defaults())
    rng = random.Random(5)
    source = Path(static.__file__).read_text(encoding="utf-8") + "".join(SAMPLES)
    texts = [source[i:i + rng.randint(1, 400)] for i in range(0, len(source) - 400, 97)]
    code_points = (*range(0x20, 0x250), *range(0x370, 0x3FF), *range(0xAC00, 0xAC40), 0x1F600, 0x2581)
    pool = [chr(c) for c in code_points] + ["<s>", "\n", "  "]
    texts += ["".join(rng.choice(pool) for _ in range(rng.randint(0, 40))) for _ in range(300)]
    assert embedder._bpe is not None
    python_ids = [embedder._bpe.encode(t) for t in texts]
    encodings = embedder._hf_tokenizer().encode_batch(texts, add_special_tokens=False)
    assert python_ids == [e.ids for e in encodings]


@pytest.mark.slow
def test_model_path_and_dimension_checks(wordllama_env, tmp_path):
    package = Path(embed_pkg._wordllama_package("t")[0])
    files = (("weights", "l2_supercat_256.safetensors"), ("tokenizers", "l2_supercat_tokenizer_config.json"))
    for sub, name in files:
        (tmp_path / "models" / sub).mkdir(parents=True, exist_ok=True)
        (tmp_path / "models" / sub / name).symlink_to(package / sub / name)
    config = defaults()
    config["embedding"]["model_path"] = str(tmp_path / "models")
    vector = load_embedder(config).embed(["restore auth context"])
    embed_pkg._LOADED.clear()
    assert np.array_equal(vector, load_embedder(defaults()).embed(["restore auth context"]))

    embed_pkg._LOADED.clear()
    config["embedding"]["dimensions"] = 128
    err = pytest.raises(RagitError, load_embedder, config).value
    assert err.code == "EMBEDDER_UNAVAILABLE" and "l2_supercat_128.safetensors" in err.details["reason"]
    config["embedding"]["model_path"] = str(tmp_path / "absent")
    err = pytest.raises(RagitError, load_embedder, config).value
    assert "not a directory" in err.details["reason"]


@pytest.mark.slow
def test_id_and_query_path_stay_cheap(wordllama_env):
    """The id needs no numpy; one query loads neither `tokenizers` nor `wordllama`."""
    code = (
        "import sys\n"
        "from ragit.config import defaults\n"
        "from ragit.embed import embedder_id_for, load_embedder\n"
        "embedder_id_for(defaults())\n"
        "heavy = ('numpy', 'tokenizers', 'wordllama')\n"
        "print(sorted(m for m in heavy if m in sys.modules))\n"
        "load_embedder(defaults()).embed(['how does ingest reuse unchanged blobs?'])\n"
        "print(sorted(m for m in heavy if m in sys.modules))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True,
                         env=os.environ.copy()).stdout.split("\n")
    assert out[:2] == ["[]", "['numpy']"]


def test_missing_wordllama_package_is_reported(monkeypatch):
    import importlib.util

    monkeypatch.setattr(embed_pkg, "_PACKAGE", None)
    monkeypatch.setattr(importlib.util, "find_spec", lambda name: None)
    err = pytest.raises(RagitError, embedder_id_for, defaults()).value
    assert err.code == "EMBEDDER_UNAVAILABLE"
    assert err.details == {
        "embedderId": "wordllama:l2_supercat:256",
        "reason": "the wordllama package is not installed",
    }
    config = defaults()
    config["embedding"]["provider"] = "placeholder"
    config["embedding"]["dimensions"] = 64
    assert load_embedder(config).id == "placeholder:sha1:64:v1"  # the placeholder never needs it
