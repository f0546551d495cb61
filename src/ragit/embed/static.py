"""Static token-embedding models: a tokenizer plus an embedding matrix, mean-pooled.

A text's vector is the mean of its tokens' rows (no special tokens, no truncation), L2-normalised
— WordLlama's inference with ``norm=True``, and equally model2vec-style distilled models, so any
such model loads from a ``tokenizer.json`` and a safetensors matrix given by path.

Start-up matters more than anything else here (a cold ``ragit query`` embeds one question): the
matrix is memory-mapped, not read, and short ASCII inputs to a BERT-style (WordPiece) model are
tokenised by the pure-Python :mod:`ragit.embed.wordpiece` encoder, so ``tokenizers`` is not
imported for a query. Batches go through ``tokenizers`` (Rust, parallel), loaded on first need.
"""

from __future__ import annotations

import json
import mmap
import os
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ragit.errors import RagitError

from .base import embedder_unavailable
from .wordpiece import WordPieceEncoder, load_wordpiece

if TYPE_CHECKING:
    import numpy

# Up to this many characters in one call (when ``tokenizers`` is not loaded yet) the Python
# encoder is used; beyond it, importing ``tokenizers`` and building the tokenizer (~0.05 s)
# is the cheaper way.
PY_ENCODE_MAX_CHARS = 8192
# Texts encoded per ``tokenizers`` call: its Encoding objects hold strings and offsets per
# token, so encoding a whole ingest batch at once would cost ~100 bytes per token.
ENCODE_BATCH = 256
# Once an instance has pooled this many tokens, a float16 matrix is converted to float32 in
# memory (~32 MB for WordLlama, ~20 ms), which halves the cost of every later row lookup.
WIDEN_AFTER_TOKENS = 65536

_DTYPES = {"F16": "<f2", "F32": "<f4", "F64": "<f8"}


class StaticEmbedder:
    """Mean of token embeddings, L2-normalised; identical output for every batch composition."""

    def __init__(
        self,
        id: str,
        tokenizer_path: str | Path,
        matrix_path: str | Path,
        *,
        tensor_key: str | None = None,
    ) -> None:
        """Map the matrix and prepare the tokenizer; bad files raise EMBEDDER_UNAVAILABLE.

        ``tensor_key`` names the matrix inside the safetensors file (default: its only tensor).
        """
        self.id = id
        self._tokenizer_path = Path(tokenizer_path)
        self._matrix = self._map_matrix(Path(matrix_path), tensor_key)
        self.dimensions: int = int(self._matrix.shape[1])
        self._hf: Any = None
        self._py: WordPieceEncoder | None = None
        self._tokens_seen = 0
        try:
            self._py = load_wordpiece(self._tokenizer_path)
        except FileNotFoundError:
            raise self._unavailable(f"tokenizer file not found: {self._tokenizer_path}") from None
        except (OSError, ValueError, KeyError, TypeError, AttributeError) as exc:
            raise self._unavailable(f"corrupt tokenizer file {self._tokenizer_path}: {exc}") from exc
        if self._py is None:
            self._hf_tokenizer()

    def embed(self, texts: Sequence[str]) -> numpy.ndarray:
        """Embed ``texts``: one L2-normalised float32 row each, zeros for token-less input."""
        import numpy as np

        out = np.zeros((len(texts), self.dimensions), dtype=np.float32)
        encoder = self._python_encoder(texts)
        for start in range(0, len(texts), ENCODE_BATCH):
            ids = self._encode(texts[start:start + ENCODE_BATCH], encoder)
            self._pool(ids, out[start:start + len(ids)])
        norms = np.sqrt(np.einsum("ij,ij->i", out, out))
        nonzero = norms > 0
        out[nonzero] /= norms[nonzero, None]
        return out

    # ------------------------------------------------------------ internals

    def _python_encoder(self, texts: Sequence[str]) -> WordPieceEncoder | None:
        """The Python encoder when it is the cheaper way to tokenise ``texts``, else None."""
        if (self._py is not None and self._hf is None and sum(map(len, texts)) <= PY_ENCODE_MAX_CHARS
                and all(t.isascii() for t in texts)):
            return self._py
        return None

    def _encode(self, texts: Sequence[str], encoder: WordPieceEncoder | None) -> list[list[int]]:
        if encoder is not None:
            ids = [encoder.encode(text) for text in texts]
            if all(i is not None for i in ids):
                return ids  # type: ignore[return-value]
        encodings = self._hf_tokenizer().encode_batch(list(texts), add_special_tokens=False)
        return [encoding.ids for encoding in encodings]

    def _pool(self, ids: list[list[int]], out: numpy.ndarray) -> None:
        """Write each text's sum of token rows into ``out`` (normalised later)."""
        import numpy as np

        self._tokens_seen += sum(map(len, ids))
        if self._matrix.dtype != np.float32 and self._tokens_seen > WIDEN_AFTER_TOKENS:
            self._matrix = np.ascontiguousarray(self._matrix, dtype=np.float32)
        last = self._matrix.shape[0] - 1
        for row, text_ids in enumerate(ids):
            if text_ids:
                rows = np.asarray(text_ids, dtype=np.intp)
                np.clip(rows, 0, last, out=rows)  # like WordLlama: ids past the matrix use its last row
                # One text at a time, rows added in order in float32: a text's vector does not
                # depend on its batch, and memory stays bounded by the longest text.
                out[row] = self._matrix[rows].astype(np.float32, copy=False).sum(axis=0)

    def _hf_tokenizer(self) -> Any:
        if self._hf is None:
            from tokenizers import Tokenizer

            try:
                tokenizer = Tokenizer.from_file(str(self._tokenizer_path))
            except Exception as exc:  # the Rust side raises a bare Exception for bad files
                raise self._unavailable(f"cannot load tokenizer {self._tokenizer_path}: {exc}") from exc
            tokenizer.no_padding()  # pooling is per text: padding would only cost memory
            tokenizer.no_truncation()
            self._hf = tokenizer
        return self._hf

    def _map_matrix(self, path: Path, tensor_key: str | None) -> numpy.ndarray:
        """Memory-map a 2-D float tensor of a safetensors file (header parsed here, no import)."""
        import numpy as np

        try:
            with open(path, "rb") as fh:
                size = os.fstat(fh.fileno()).st_size
                header_len = int.from_bytes(fh.read(8), "little")
                if size < 8 or header_len > size - 8:
                    raise ValueError("truncated header")
                header = json.loads(fh.read(header_len))
                mapped = mmap.mmap(fh.fileno(), 0, access=mmap.ACCESS_READ)
        except FileNotFoundError:
            raise self._unavailable(f"weights file not found: {path}") from None
        except (OSError, ValueError) as exc:
            raise self._unavailable(f"corrupt weights file {path}: {exc}") from exc
        try:
            keys = [k for k in header if k != "__metadata__"]
            key = tensor_key if tensor_key is not None else (keys[0] if len(keys) == 1 else None)
            if key not in keys:
                raise ValueError(f"tensor {tensor_key!r} not found (tensors: {', '.join(keys)})")
            entry = header[key]
            dtype = np.dtype(_DTYPES[entry["dtype"]]) if entry["dtype"] in _DTYPES else None
            shape = entry["shape"]
            begin, end = entry["data_offsets"]
            if dtype is None or len(shape) != 2 or min(shape) <= 0:
                raise ValueError(f"unsupported tensor {entry['dtype']} {shape}")
            if end - begin != shape[0] * shape[1] * dtype.itemsize or 8 + header_len + end > size:
                raise ValueError("tensor data out of bounds")
        except (ValueError, KeyError, TypeError, AttributeError) as exc:
            raise self._unavailable(f"corrupt weights file {path}: {exc}") from exc
        matrix = np.frombuffer(mapped, dtype=dtype, count=shape[0] * shape[1], offset=8 + header_len + begin)
        return matrix.reshape(shape[0], shape[1])

    def _unavailable(self, reason: str) -> RagitError:
        return embedder_unavailable(self.id, reason)
