"""Static token-embedding models: a tiny synthetic model, the bundled MiniLM model, WordLlama."""

from __future__ import annotations

import hashlib
import json
import os
import random
import re
import string
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from tokenizers import Tokenizer, models, pre_tokenizers

import ragit.embed as embed_pkg
from ragit.config import defaults
from ragit.embed import CODE_ID, MINILM_DIR, embedder_id_for, load_embedder
from ragit.embed import static
from ragit.embed.base import Embedder
from ragit.embed.static import StaticEmbedder
from ragit.embed.wordpiece import WordPieceEncoder, load_wordpiece
from ragit.errors import RagitError

from tiny_bert import ALPHABET, VOCAB  # a tiny BERT-style model, shared with test_embed_pieces
from tiny_bert import tiny_tokenizer as _tokenizer
from tiny_bert import write_safetensors as _write_safetensors


def _random_texts(count: int, seed: int, alphabet=ALPHABET) -> list[str]:
    rng = random.Random(seed)
    return ["".join(rng.choice(alphabet) for _ in range(rng.randint(0, 24))) for _ in range(count)]


@pytest.fixture
def tiny(tmp_path):
    """(tokenizer path, float32 matrix, matrix path) of an 8-dimensional model."""
    tok_path = tmp_path / "tokenizer.json"
    _tokenizer().save(str(tok_path))
    matrix = np.random.default_rng(7).standard_normal((len(VOCAB), 8)).astype(np.float32)
    return tok_path, matrix, _write_safetensors(tmp_path / "model.safetensors", "embeddings", matrix)


def _tiny_embedder(tiny, **kwargs) -> StaticEmbedder:
    tok_path, _, matrix_path = tiny
    return StaticEmbedder("tiny:test:8:1", tok_path, matrix_path, **kwargs)


def _expected(tok: Tokenizer, matrix: np.ndarray, texts: list[str]) -> np.ndarray:
    out = np.zeros((len(texts), matrix.shape[1]), dtype=np.float64)
    for row, encoding in enumerate(tok.encode_batch(texts, add_special_tokens=False)):
        ids = np.clip(encoding.ids, 0, matrix.shape[0] - 1)
        if len(ids):
            total = matrix[ids].astype(np.float64).sum(axis=0)
            norm = np.linalg.norm(total)
            out[row] = total / norm if norm else total
    return out


# ---------------------------------------------------------------- the Python WordPiece encoder

def test_python_encoder_matches_tokenizers_on_ascii(tmp_path):
    tok = _tokenizer()
    path = tmp_path / "tokenizer.json"
    tok.save(str(path))
    encoder = load_wordpiece(path)
    assert isinstance(encoder, WordPieceEncoder)
    ascii_alphabet = [a for a in ALPHABET if a.isascii()]
    texts = _random_texts(2000, seed=1, alphabet=ascii_alphabet) + [
        "", " ", "x" * 13, "x" * 12, "send_file(sendFile)", "AB.C", "a\x00b", "zzz abc", "ab##c"]
    expected = [e.ids for e in tok.encode_batch(texts, add_special_tokens=False)]
    got = [encoder.encode(t) for t in texts]
    assert [g for g, t in zip(got, texts) if "[UNK]" not in t and "[PAD]" not in t] == \
           [e for e, t in zip(expected, texts) if "[UNK]" not in t and "[PAD]" not in t]
    assert encoder.encode("a [UNK] b") is None  # added tokens: deferred to `tokenizers`
    assert encoder.encode("café") is None  # non-ASCII: deferred to `tokenizers`


def test_other_tokenizer_shapes_have_no_python_encoder(tmp_path):
    tok = _tokenizer()
    tok.pre_tokenizer = pre_tokenizers.Whitespace()
    path = tmp_path / "tokenizer.json"
    tok.save(str(path))
    assert load_wordpiece(path) is None
    bpe = Tokenizer(models.BPE({"a": 0, "b": 1, "ab": 2}, [("a", "b")]))
    bpe.save(str(path))
    assert load_wordpiece(path) is None


# ---------------------------------------------------------------- StaticEmbedder on the tiny model

def test_mean_pooling_and_normalisation(tiny):
    tok_path, matrix, _ = tiny
    embedder = _tiny_embedder(tiny)
    assert isinstance(embedder, Embedder)
    assert (embedder.id, embedder.dimensions) == ("tiny:test:8:1", 8)
    texts = ["abc abc", "a.b", "x😀é", "", "send file"]
    vectors = embedder.embed(texts)
    assert vectors.dtype == np.float32 and vectors.shape == (5, 8) and vectors.flags["C_CONTIGUOUS"]
    np.testing.assert_allclose(vectors, _expected(Tokenizer.from_file(str(tok_path)), matrix, texts), atol=1e-6)
    assert not vectors[3].any()
    assert embedder.embed([]).shape == (0, 8)


def test_both_tokenizer_paths_give_identical_vectors(tiny, monkeypatch):
    texts = _random_texts(300, seed=2, alphabet=[a for a in ALPHABET if a.isascii() and a not in ("[UNK]", "[PAD]")])
    python_path = _tiny_embedder(tiny)
    assert sum(map(len, texts)) <= static.PY_ENCODE_MAX_CHARS
    one_by_one = np.vstack([python_path.embed([t]) for t in texts])
    assert python_path._hf is None  # short ASCII input never loads `tokenizers`
    monkeypatch.setattr(static, "PY_ENCODE_MAX_CHARS", 0)
    monkeypatch.setattr(static, "WIDEN_AFTER_TOKENS", 0)
    monkeypatch.setattr(static, "ENCODE_BATCH", 7)
    rust_path = _tiny_embedder(tiny)
    batched = rust_path.embed(texts)
    assert rust_path._hf is not None
    assert np.array_equal(one_by_one, batched)  # bit-identical, whatever the batch


def test_non_ascii_input_goes_through_tokenizers(tiny):
    tok_path, matrix, _ = tiny
    embedder = _tiny_embedder(tiny)
    vector = embedder.embed(["abc é"])
    assert embedder._hf is not None
    np.testing.assert_allclose(vector, _expected(Tokenizer.from_file(str(tok_path)), matrix, ["abc é"]), atol=1e-6)


def test_float16_matrix_widened_or_not_gives_identical_vectors(tiny, tmp_path, monkeypatch):
    tok_path, matrix, _ = tiny
    half = _write_safetensors(tmp_path / "half.safetensors", "w", matrix.astype(np.float16))
    texts = _random_texts(50, seed=3, alphabet=["a", "b", "abc", " ", "x", "."])
    mapped = StaticEmbedder("t", tok_path, half).embed(texts)
    monkeypatch.setattr(static, "WIDEN_AFTER_TOKENS", 0)
    widened_embedder = StaticEmbedder("t", tok_path, half)
    widened = widened_embedder.embed(texts)
    assert widened_embedder._wide is not None and widened_embedder._wide.dtype == np.float32
    assert 0 < widened_embedder._wide_rows == int((widened_embedder._slots >= 0).sum())
    assert np.array_equal(mapped, widened)
    expected = _expected(Tokenizer.from_file(str(tok_path)), matrix.astype(np.float16).astype(np.float32), texts)
    np.testing.assert_allclose(mapped, expected, atol=1e-6)


def test_python_pooling_of_a_float16_matrix_is_numpy_bit_for_bit(tiny, tmp_path):
    """embed_packed's numpy-free path (ragit.vectormath): exact float16 sums, the same bits."""
    tok_path, matrix, _ = tiny
    scaled = matrix.astype(np.float16)
    scaled[0, :4] = [-0.0, 6.0e-8, -6.0e-8, 65504.0]  # negative zero, subnormals, the largest value
    half = _write_safetensors(tmp_path / "half.safetensors", "w", scaled)
    embedder = StaticEmbedder("t", tok_path, half)
    texts = _random_texts(300, seed=4, alphabet=["a", "b", "abc", " ", "x", ".", "(", "[PAD]", "é"]) + ["", "[PAD]"]
    ids = embedder._encode(texts, None)
    assert embedder._pool_python(ids) == embedder.embed(texts).tobytes()
    assert embedder.embed_packed(texts) == embedder.embed(texts).tobytes()  # numpy loaded: the numpy path


def test_embed_packed_skips_numpy_in_a_fresh_process(fresh_models):
    """A small write in a process without numpy pools in Python and stores the same bytes; past
    the token limit it loads numpy, with the same result."""
    texts = SAMPLES + ["def rotate_token(session):\n    return session.renew()\n" * 20, ""]
    code = (
        "import json, sys\n"
        "from ragit.config import defaults\n"
        "from ragit.embed import load_embedder, static\n"
        "static.PY_POOL_MAX_TOKENS = int(sys.argv[1])\n"
        "packed = load_embedder(defaults()).embed_packed(json.loads(sys.stdin.read()))\n"
        "print('numpy' in sys.modules, packed.hex())\n"
    )
    expected = load_embedder(defaults()).embed(texts).tobytes()
    for limit, numpy_loaded in ((static.PY_POOL_MAX_TOKENS, "False"), (10, "True")):
        out = subprocess.run([sys.executable, "-c", code, str(limit)], input=json.dumps(texts), capture_output=True,
                             text=True, check=True, env=os.environ.copy()).stdout.split()
        assert out[0] == numpy_loaded
        assert bytes.fromhex(out[1]) == expected


def test_ids_past_the_matrix_use_its_last_row(tiny, tmp_path):
    tok_path, matrix, _ = tiny
    short = _write_safetensors(tmp_path / "short.safetensors", "w", matrix[:8])
    vector = StaticEmbedder("t", tok_path, short).embed(["x"])[0]  # "x" is id 9, the matrix stops at 7
    np.testing.assert_allclose(vector, matrix[7] / np.linalg.norm(matrix[7]), atol=1e-6)


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
        return lambda: StaticEmbedder("x:y:8:1", tokenizer, weights, **kw)

    assert "weights file not found" in _unavailable(make(weights=tmp_path / "nope.safetensors")).details["reason"]
    assert "tokenizer file not found" in _unavailable(make(tokenizer=tmp_path / "nope.json")).details["reason"]
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


# ---------------------------------------------------------------- the bundled MiniLM model

SAMPLES = [
    "How does ingest reuse unchanged blobs?",
    "restore auth context",
    "def embed(self, texts: Sequence[str]) -> numpy.ndarray:\n    return self._pool(ids)\n",
    "Ünïcode 한국어 검색 — émoji 😀 and tabs\tand\r\nCRLF",
    "x",
    "   leading and trailing spaces   ",
]


@pytest.fixture
def fresh_models(monkeypatch):
    monkeypatch.setattr(embed_pkg, "_LOADED", {})


def test_bundled_model_files_match_their_recorded_hashes():
    """The id's version must be bumped with the files: MODEL.md pins them."""
    model_md = (MINILM_DIR / "MODEL.md").read_text(encoding="utf-8")
    for name in ("tokenizer.json", "embeddings.safetensors", "LICENSE"):
        recorded = re.search(rf"`{re.escape(name)}` \| [\d,]+ \| `([0-9a-f]{{64}})`", model_md).group(1)
        assert hashlib.sha256((MINILM_DIR / name).read_bytes()).hexdigest() == recorded, name


def test_default_config_loads_the_bundled_model(fresh_models):
    config = defaults()
    embedder = load_embedder(config)
    assert embedder.id == embedder_id_for(config) == CODE_ID
    assert embedder.dimensions == 256
    assert load_embedder(config) is embedder  # loaded once per id and process
    vectors = embedder.embed(SAMPLES + ["", "😀 😀"])
    assert vectors.shape == (len(SAMPLES) + 2, 256) and vectors.dtype == np.float32
    np.testing.assert_allclose(np.linalg.norm(vectors[:-2], axis=1), 1.0, atol=1e-5)
    assert not vectors[-2].any() and not vectors[-1].any()  # no tokens (or only [UNK]) → zeros
    paraphrase = embedder.embed(["restoring the authentication context"])[0]
    assert vectors[1] @ paraphrase > vectors[1] @ vectors[4]


def test_python_encoder_matches_tokenizers_on_the_bundled_tokenizer(fresh_models):
    embedder = load_embedder(defaults())
    rng = random.Random(5)
    source = "".join(p.read_text(encoding="utf-8") for p in sorted(Path(static.__file__).parent.glob("*.py")))
    source = "".join(c for c in source if c.isascii())
    texts = [source[i:i + rng.randint(1, 400)] for i in range(0, len(source) - 400, 61)]
    texts += ["".join(rng.choice(string.printable) for _ in range(rng.randint(0, 60))) for _ in range(500)]
    texts += ["x" * 101, "x" * 100, "camelCaseIdentifier snake_case_name HTTPServer2"]
    python_ids = [embedder._py.encode(t) for t in texts]
    encodings = embedder._hf_tokenizer().encode_batch(texts, add_special_tokens=False)
    deferred = [t for t, ids in zip(texts, python_ids) if ids is None]
    assert all("[UNK]" in t or "[PAD]" in t or "[CLS]" in t or "[SEP]" in t or "[MASK]" in t for t in deferred)
    assert len(deferred) < len(texts) // 10
    assert [ids for ids in python_ids if ids is not None] == \
           [e.ids for e, ids in zip(encodings, python_ids) if ids is not None]


def test_id_and_query_path_stay_cheap():
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


# ---------------------------------------------------------------- WordLlama (optional extra)

def _wordllama_config():
    config = defaults()
    config["embedding"].update(provider="wordllama", model="l2_supercat", dimensions=256)
    return config


@pytest.mark.slow
def test_vectors_equal_wordllama_inference(fresh_models, tmp_path):
    wordllama = pytest.importorskip("wordllama")
    package = Path(embed_pkg._wordllama_package("t")[0])
    # wordllama 0.4.0.post1 looks for its bundled tokenizer under "tokenizer/" (the wheel ships
    # "tokenizers/"), so point its cache directory at the bundled file and forbid downloads.
    (tmp_path / "tokenizers").mkdir()
    (tmp_path / "tokenizers" / "l2_supercat_tokenizer_config.json").symlink_to(
        package / "tokenizers" / "l2_supercat_tokenizer_config.json")
    reference = wordllama.WordLlama.load("l2_supercat", cache_dir=tmp_path, disable_download=True)
    embedder = load_embedder(_wordllama_config())
    assert embedder.id == f"wordllama:l2_supercat:256:{embed_pkg._wordllama_package('t')[1]}"
    texts = SAMPLES + [(SAMPLES[2] * 40)[:2400]]
    np.testing.assert_allclose(embedder.embed(texts), reference.embed(texts, norm=True), atol=1e-5, rtol=0)


def test_missing_wordllama_package_is_reported(monkeypatch):
    import importlib.util

    monkeypatch.setattr(embed_pkg, "_PACKAGE", None)
    monkeypatch.setattr(importlib.util, "find_spec", lambda name: None)
    err = pytest.raises(RagitError, embedder_id_for, _wordllama_config()).value
    assert err.code == "EMBEDDER_UNAVAILABLE"
    assert err.details == {
        "embedderId": "wordllama:l2_supercat:256",
        "reason": "the wordllama package is not installed",
    }
    assert load_embedder(defaults()).id == CODE_ID  # the default never needs it


@pytest.mark.parametrize("repeats", [1.0, static.COUNTED_REPEATS])  # texts counted with any repeat, or by default
@pytest.mark.parametrize("widen_after", [0, 10**9])  # rows from float32 copies, or the float16 mapping
def test_counted_pooling_is_the_row_by_row_sum_bit_for_bit(tiny, tmp_path, monkeypatch, widen_after, repeats):
    """A float16 model's batch pooling gathers each text's distinct rows once, scaled by their
    counts: the same bits as adding every token's row; a text past EXACT_F16_TOKENS is still
    added row by row."""
    tok_path, matrix, _ = tiny
    scaled = (matrix * 3000).astype(np.float16)
    scaled[0, :4] = [-0.0, 6.0e-8, -6.0e-8, 65504.0]
    half = _write_safetensors(tmp_path / "half.safetensors", "w", scaled)
    monkeypatch.setattr(static, "WIDEN_AFTER_TOKENS", widen_after)
    monkeypatch.setattr(static, "EXACT_F16_TOKENS", 40)
    monkeypatch.setattr(static, "COUNTED_REPEATS", repeats)
    embedder = StaticEmbedder("t", tok_path, half)
    embedder._tokens_seen = 1  # past 0: the widened path when WIDEN_AFTER_TOKENS is 0
    rng = np.random.default_rng(5)
    rows = scaled.shape[0]
    lengths = [0, 1, 3, 39, 40, 41, 90, 0, 7, 200] + list(rng.integers(0, 60, 40))
    flat = np.concatenate([rng.integers(-2, rows + 2, n) % (rows + 3) - 1 for n in lengths]).astype(np.intc)
    ends = list(np.cumsum(lengths).tolist())
    got = np.zeros((len(ends), scaled.shape[1]), dtype=np.float32)
    embedder._pool(flat, ends, got)
    ids = np.clip(flat, 0, rows - 1)
    sums = np.zeros((len(ends), scaled.shape[1]), dtype=np.float64)
    start = 0
    for row, end in enumerate(ends):
        if end > start:
            np.add.reduce(scaled[ids[start:end]], axis=0, dtype=np.float64, out=sums[row])
        start = end
    from ragit import vectormath

    assert got.tobytes() == vectormath.unit_rows_numpy(sums).astype(np.float32).tobytes()
    assert (embedder._wide is not None) == (widen_after == 0)
