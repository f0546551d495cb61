"""The bundled code model (provider ``code-static``) and its pre-processing (identifier splitting)."""

from __future__ import annotations

import hashlib
import json
import os
import random
import re
import string
import subprocess
import sys

import numpy as np
import pytest

import ragit.embed as embed_pkg
from ragit.config import defaults
from ragit.embed import CODE_DIR, CODE_ID, MINILM_DIR, embedder_id_for, load_embedder
from ragit.embed import static
from ragit.embed.codetext import PREPROCESSORS, code_words, split_identifiers
from ragit.embed.static import StaticEmbedder
from ragit.errors import RagitError

SAMPLES = [
    "how does the session middleware restore the authentication context?",
    "def getUserName(self):\n    return self._user_name\n",
    "class HTTPServerConfig { parseXMLHttpRequest(req) { return req.body; } }",
    "fn read_to_end(&mut self, buf: &mut Vec<u8>) -> io::Result<usize>",
    "nvm_find_project_dir",
    "JsonReader",
    "SESSION_COOKIE_SECURE __init__ base64Encode utf8Decode IOError",
    "Ünïcode 한국어 검색 — émoji 😀 and getUserNäme\tand\r\nCRLF",
    "",
    "   ",
]


def _config():
    config = defaults()
    config["embedding"]["provider"] = "code-static"  # not yet a value of config's enum
    return config


@pytest.fixture
def fresh_models(monkeypatch):
    monkeypatch.setattr(embed_pkg, "_LOADED", {})


# ---------------------------------------------------------------- pre-processing

@pytest.mark.parametrize("text, expected", [
    ("getUserName", "get User Name"),
    ("HTTPServer", "HTTP Server"),
    ("parseXMLHttpRequest", "parse XML Http Request"),
    ("snake_case_name", "snake case name"),
    ("__init__", "  init  "),
    ("base64Encode", "base64 Encode"),
    ("IOError", "IO Error"),
    ("SESSION_COOKIE_SECURE", "SESSION COOKIE SECURE"),
    ("already plain words.", "already plain words."),
    ("x", "x"),
    ("", ""),
])
def test_split_identifiers(text, expected):
    assert split_identifiers(text) == expected


@pytest.mark.parametrize("text, expected", [
    ("def getUserName(self):", "def get User Name(self):\ngetUserName"),
    ("HTTPServer and XMLHttpRequest", "HTTP Server and XML Http Request\nHTTPServer XMLHttpRequest"),
    ("nvm_find_project_dir", "nvm find project dir"),  # snake_case: WordPiece splits it anyway
    ("get_userName", "get user Name\nget_userName"),
    ("plain text, no identifiers", "plain text, no identifiers"),
    ("caféName naïveCase", "caféName naïve Case"),  # only ASCII letters are looked at
    ("", ""),
])
def test_code_words(text, expected):
    assert code_words(text) == expected
    assert PREPROCESSORS["code"].text is code_words


def test_pre_processing_keeps_ascii_ascii():
    rng = random.Random(3)
    for _ in range(3000):
        text = "".join(rng.choice(string.printable + "éÉßΣ😀") for _ in range(rng.randint(0, 80)))
        for function in (split_identifiers, code_words):
            out = function(text)
            assert out.isascii() == text.isascii()
        assert split_identifiers(text).count("\n") == text.count("\n")
        assert split_identifiers(split_identifiers(text)) == split_identifiers(text)  # idempotent


# ---------------------------------------------------------------- the bundled model

def test_code_model_files_match_their_recorded_hashes():
    """The id's version must be bumped with the files: MODEL.md pins them."""
    model_md = (CODE_DIR / "MODEL.md").read_text(encoding="utf-8")
    for name in ("tokenizer.json", "embeddings.safetensors", "LICENSE"):
        recorded = re.search(rf"`{re.escape(name)}` \| [\d,]+ \| `([0-9a-f]{{64}})`", model_md).group(1)
        assert hashlib.sha256((CODE_DIR / name).read_bytes()).hexdigest() == recorded, name
    # the tokenizer and licence are the MiniLM model's, byte for byte
    for name in ("tokenizer.json", "LICENSE"):
        assert (CODE_DIR / name).read_bytes() == (MINILM_DIR / name).read_bytes()
    assert (CODE_DIR / "embeddings.safetensors").stat().st_size < 30_000_000


def test_code_provider_loads_the_bundled_model(fresh_models):
    config = _config()
    embedder = load_embedder(config)
    assert embedder.id == embedder_id_for(config) == CODE_ID
    assert embedder.dimensions == 256
    assert load_embedder(config) is embedder
    vectors = embedder.embed(SAMPLES)
    assert vectors.shape == (len(SAMPLES), 256) and vectors.dtype == np.float32
    np.testing.assert_allclose(np.linalg.norm(vectors[:-2], axis=1), 1.0, atol=1e-5)
    assert not vectors[-2].any() and not vectors[-1].any()


def test_pre_processing_is_applied_to_every_text(fresh_models):
    embedder = load_embedder(_config())
    a, b = embedder.embed(["get_user_name", "get user name"])
    assert np.array_equal(a, b)
    plain = StaticEmbedder("plain", CODE_DIR / "tokenizer.json", CODE_DIR / "embeddings.safetensors")
    assert np.array_equal(plain.embed(["get user name"])[0], a)
    # a camelCase word: its split words plus the word as written (order is irrelevant to a sum)
    camel = embedder.embed(["getUserName"])[0]
    assert np.array_equal(plain.embed(["getUserName get user name"])[0], camel)
    assert not np.array_equal(plain.embed(["getUserName"])[0], camel)


def test_vectors_are_deterministic_and_independent_of_the_batch(fresh_models):
    embedder = load_embedder(_config())
    together = embedder.embed(SAMPLES)
    alone = np.stack([embedder.embed([text])[0] for text in SAMPLES])
    reversed_ = embedder.embed(SAMPLES[::-1])[::-1]
    assert np.array_equal(together, alone) and np.array_equal(together, reversed_)
    fresh = StaticEmbedder(CODE_ID, CODE_DIR / "tokenizer.json", CODE_DIR / "embeddings.safetensors",
                           tensor_key="embeddings", preprocess="code")
    fresh._hf_tokenizer()  # the other tokeniser path (``tokenizers`` for everything)
    assert np.array_equal(fresh.embed(SAMPLES), together)


def test_python_pooling_is_numpy_bit_for_bit(fresh_models):
    embedder = load_embedder(_config())
    rng = random.Random(7)
    source = "".join(p.read_text(encoding="utf-8") for p in sorted(CODE_DIR.parent.parent.glob("*.py")))
    texts = [source[i:i + rng.randint(1, 600)] for i in range(0, len(source) - 600, 997)] + SAMPLES
    ids = embedder._encode(embedder._prepared(texts), None)
    assert embedder._pool_python(ids) == embedder.embed(texts).tobytes()


def test_embed_packed_skips_numpy_in_a_fresh_process_with_the_same_bits(fresh_models):
    texts = SAMPLES + ["def rotateToken(session):\n    return session.renew_token()\n" * 20]
    code = (
        "import json, sys\n"
        "from ragit.config import defaults\n"
        "from ragit.embed import load_embedder, static\n"
        "static.PY_POOL_MAX_TOKENS = int(sys.argv[1])\n"
        "config = defaults()\n"
        "config['embedding']['provider'] = 'code-static'\n"
        "packed = load_embedder(config).embed_packed(json.loads(sys.stdin.read()))\n"
        "print('numpy' in sys.modules, packed.hex())\n"
    )
    expected = load_embedder(_config()).embed(texts).tobytes()
    for limit, numpy_loaded in ((static.PY_POOL_MAX_TOKENS, "False"), (10, "True")):
        out = subprocess.run([sys.executable, "-c", code, str(limit)], input=json.dumps(texts), capture_output=True,
                             text=True, check=True, env=os.environ.copy()).stdout.split()
        assert out[0] == numpy_loaded
        assert bytes.fromhex(out[1]) == expected


def test_code_model_ranks_code_by_its_description(fresh_models):
    embedder = load_embedder(_config())
    code = [
        "function readConfigFile\ndef readConfigFile(path):\n    with open(path) as fh:\n        return toml.load(fh)",
        "function sendHttpRequest\nfunc sendHttpRequest(client *http.Client, url string) (*http.Response, error) {\n"
        "    return client.Get(url)\n}",
        "function compressBuffer\nfn compress_buffer(input: &[u8]) -> Vec<u8> { zstd::encode_all(input, 3).unwrap() }",
    ]
    questions = ["load the configuration from a file", "perform an HTTP GET request", "compress bytes with zstd"]
    scores = embedder.embed(questions) @ embedder.embed(code).T
    assert list(scores.argmax(axis=1)) == [0, 1, 2]


def test_unknown_pre_processing_is_reported():
    err = pytest.raises(RagitError, StaticEmbedder, "t", CODE_DIR / "tokenizer.json",
                        CODE_DIR / "embeddings.safetensors", preprocess="nope").value
    assert err.code == "EMBEDDER_UNAVAILABLE"
