"""Static token-embedding models: a tokenizer plus an embedding matrix, mean-pooled.

A text's vector is the mean of its tokens' rows (no special tokens, no truncation), L2-normalised
— WordLlama's inference with ``norm=True``, and equally model2vec-style distilled models, so any
such model loads from a ``tokenizer.json`` and a safetensors matrix given by path. A model may
name a text pre-processing (``preprocess``, e.g. the code model's identifier splitting,
:mod:`ragit.embed.codetext`); it is applied to every text first, whichever path embeds it (the
batch path applies it to each new piece of text instead, which gives the same tokens).

Start-up matters more than anything else here (a cold ``ragit query`` embeds one question, a
``git commit`` hook re-ingests one file): the matrix is memory-mapped, not read, and short ASCII
inputs to a BERT-style (WordPiece) model are tokenised by the pure-Python
:mod:`ragit.embed.wordpiece` encoder, so ``tokenizers`` is not imported for them. Batches go
through ``tokenizers`` (Rust, parallel), loaded on first need.

The pooling arithmetic is fixed so that numpy and plain Python compute the same bits
(:mod:`ragit.vectormath`): a float16 row's values are multiples of 2⁻²⁴, so their float64 sum is
exact in any order up to 8,192 tokens; the norm is a sequential float64 sum of squares. A small
write (:meth:`StaticEmbedder.embed_packed`) therefore skips importing numpy and stores exactly
the vectors a full ingest would.
"""

from __future__ import annotations

import json
import mmap
import os
import struct
import sys
from collections.abc import Iterable, Sequence
from itertools import accumulate, chain
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ragit.errors import RagitError

from .. import vectormath
from .base import embedder_unavailable
from .wordpiece import WordPieceEncoder, load_wordpiece

if TYPE_CHECKING:
    import numpy

    from .codetext import Preprocessor

# Up to this many characters in one call (when ``tokenizers`` is not loaded yet) the Python
# encoder is used; beyond it, importing ``tokenizers`` and building the tokenizer (~0.04 s, then
# fast and parallel) is the cheaper way. The Python encoder does ~4,000 characters per ms of
# code: an ``embed`` call (a question, or one of many ingest batches) switches early, while
# ``embed_packed`` (one small write, e.g. a changed file of up to ~130 KB) stays in Python.
PY_ENCODE_MAX_CHARS = 8192
PACKED_ENCODE_MAX_CHARS = 131072
# Texts encoded per ``tokenizers`` call: its Encoding objects hold strings and offsets per
# token, so encoding a whole ingest batch at once would cost ~100 bytes per token.
ENCODE_BATCH = 256
# Once an instance has pooled this many tokens (an ingest's first batch; not a question), the
# rows of a float16 matrix are gathered from float32 copies, which halves the cost of every later
# row lookup. Each row is copied when first gathered, next to the rows copied before: a
# repository's text uses a fraction of a 30k-row vocabulary, and converting the whole matrix
# (~32 MB, 15-35 ms of page faults and copying) was a large part of a small repository's first
# index (measured: flask's pooling 26 -> 21 ms, gson's 120 -> 114 ms).
WIDEN_AFTER_TOKENS = 4096
# ``embed_packed`` pools in plain Python up to this many tokens in all: ~15 µs a token in a fresh
# process against ~0.08 s for importing numpy and pooling there (measured: 3,300 tokens 62 vs 90 ms,
# 6,550 tokens 111 vs 81 ms).
PY_POOL_MAX_TOKENS = 4096
# Up to this many float16 tokens per text, their float64 sum is exact in any order (2¹³ · 65504 < 2²⁹).
EXACT_F16_TOKENS = 8192

# Up to this many tokens in a float16 batch (a question's passages), ``_pool`` adds each text's
# rows in turn from the mapped matrix: counting distinct rows or widening rows to float32 costs a
# dozen numpy calls, more than the rows they save.
SMALL_POOL_TOKENS = 256
# A text is pooled by distinct rows and their counts once it has this many tokens per distinct row
# (scaling a row costs about what adding it again does: below two, row by row is as cheap).
COUNTED_REPEATS = 2.0
_ITEMSIZE = {"F16": 2, "F32": 4, "F64": 8}
# A batch's token ids: all its texts' ids in one integer array, and where each text's ids end.
FlatIds = tuple["numpy.ndarray", list[int]]
_NUMPY_DTYPES = {"F16": "<f2", "F32": "<f4", "F64": "<f8"}


class StaticEmbedder:
    """Mean of token embeddings, L2-normalised; identical output for every batch composition."""

    def __init__(
        self,
        id: str,
        tokenizer_path: str | Path,
        matrix_path: str | Path,
        *,
        tensor_key: str | None = None,
        preprocess: str | None = None,
    ) -> None:
        """Map the matrix and prepare the tokenizer; bad files raise EMBEDDER_UNAVAILABLE.

        ``tensor_key`` names the matrix inside the safetensors file (default: its only tensor).
        ``preprocess`` names a text transformation of :data:`ragit.embed.codetext.PREPROCESSORS`
        applied to every text before tokenisation, in every path (default: none).
        """
        self.id = id
        self._preprocess: Preprocessor | None = None
        if preprocess is not None:
            from .codetext import PREPROCESSORS

            if preprocess not in PREPROCESSORS:
                raise embedder_unavailable(id, f"unknown text pre-processing {preprocess!r}")
            self._preprocess = PREPROCESSORS[preprocess]
        self._tokenizer_path = Path(tokenizer_path)
        self._mapped, self._dtype, self._shape, self._offset = self._map_matrix(Path(matrix_path), tensor_key)
        self.dimensions: int = self._shape[1]
        self._array: numpy.ndarray | None = None  # numpy view of the mapping, made on first need
        # float32 copies of a float16 matrix's rows, in the order first gathered (capacity: every
        # row; only the pages written are ever touched), their number, and each row's slot (-1: none)
        self._wide: numpy.ndarray | None = None
        self._wide_rows = 0
        self._slots: numpy.ndarray | None = None
        self._hf: Any = None
        self._py: WordPieceEncoder | None = None
        self._pieces: Any = None  # ragit.embed.pieces.PieceTokenizer, made on first batch
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
        return self._embed(texts, None)

    def embed_with_words(self, texts: Sequence[str]) -> tuple[numpy.ndarray, list[list[bytes] | None]]:
        """:meth:`embed` and each text's :func:`ragit.lexical.ascii_words` where the tokeniser
        split the text into those words anyway, else None (an ingest worker counts a chunk's
        keyword terms from them: :meth:`PieceTokenizer.ids_many`)."""
        words: list[list[bytes] | None] = []
        vectors = self._embed(texts, words)
        return vectors, words if len(words) == len(texts) else [None] * len(texts)

    def _embed(self, texts: Sequence[str], words: list | None) -> numpy.ndarray:
        """:meth:`embed`, extending ``words`` (when given) as :meth:`embed_with_words` describes
        (left empty when the texts are tokenised in order)."""
        if self._py is not None and self._dtype == "F16":  # order-free sums: each piece tokenised once
            return self._pool_batches((self._encode_pieces(texts[start:start + ENCODE_BATCH], words)
                                       for start in range(0, len(texts), ENCODE_BATCH)), len(texts))
        texts = self._prepared(texts)
        encoder = self._python_encoder(texts)
        return self._pool_batches((_flat_ids(self._encode(texts[start:start + ENCODE_BATCH], encoder))
                                   for start in range(0, len(texts), ENCODE_BATCH)), len(texts))

    def embed_packed(self, texts: Sequence[str]) -> bytes:
        """``embed(texts)`` as packed native float32 rows. While numpy is not loaded, a small
        input to a float16 model is pooled in plain Python: the same bits, no numpy import."""
        if "numpy" in sys.modules or self._dtype != "F16":
            return self.embed(texts).tobytes()
        texts = self._prepared(texts)
        ids = self._encode(texts, self._python_encoder(texts, PACKED_ENCODE_MAX_CHARS))
        if sum(map(len, ids)) <= PY_POOL_MAX_TOKENS and all(len(text_ids) <= EXACT_F16_TOKENS for text_ids in ids):
            return self._pool_python(ids)
        return self._pool_batches((_flat_ids(ids[start:start + ENCODE_BATCH])
                                   for start in range(0, len(ids), ENCODE_BATCH)), len(ids)).tobytes()

    # ------------------------------------------------------------ internals

    def _prepared(self, texts: Sequence[str]) -> Sequence[str]:
        """``texts`` after the pre-processing (the same for every path), or as given."""
        preprocess = self._preprocess
        return texts if preprocess is None else list(map(preprocess.text, texts))

    def _python_encoder(self, texts: Sequence[str], max_chars: int | None = None) -> WordPieceEncoder | None:
        """The Python encoder when it is the cheaper way to tokenise ``texts``, else None."""
        limit = PY_ENCODE_MAX_CHARS if max_chars is None else max_chars
        if (self._py is not None and self._hf is None and sum(map(len, texts)) <= limit
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

    def _encode_pieces(self, texts: Sequence[str], words: list | None = None) -> FlatIds:
        """The token ids of the pre-processed texts, each text's as a multiset
        (:mod:`ragit.embed.pieces`, which pre-processes pieces); a text the piece tokeniser
        declines, or longer than ``EXACT_F16_TOKENS`` (whose sum is only exact in order), is
        encoded in order by ``tokenizers``. ``words``: see :meth:`PieceTokenizer.ids_many`."""
        import numpy as np

        from .pieces import PieceTokenizer, packed

        if self._pieces is None:
            assert self._py is not None
            self._pieces = PieceTokenizer(
                self._py, lambda piece: self._hf_tokenizer().encode(piece, add_special_tokens=False).ids,
                None if self._preprocess is None else self._preprocess.pieces)
        out = self._pieces.ids_many(list(texts), words)
        itemsize = np.dtype(np.intc).itemsize
        redo = [i for i, ids in enumerate(out) if ids is None or len(ids) > EXACT_F16_TOKENS * itemsize]
        if redo:
            encodings = self._hf_tokenizer().encode_batch(self._prepared([texts[i] for i in redo]),
                                                          add_special_tokens=False)
            for i, encoding in zip(redo, encodings):
                out[i] = packed(encoding.ids)
        ends = [size // itemsize for size in accumulate(map(len, out))]  # type: ignore[arg-type]
        return np.frombuffer(b"".join(out), dtype=np.intc), ends  # type: ignore[arg-type]

    def _matrix(self) -> numpy.ndarray:
        """The matrix as a numpy array: a view of the mapping."""
        import numpy as np

        if self._array is None:
            dtype = np.dtype(_NUMPY_DTYPES[self._dtype])
            rows, dims = self._shape
            self._array = np.frombuffer(self._mapped, dtype=dtype, count=rows * dims,
                                        offset=self._offset).reshape(rows, dims)
        return self._array

    def _gather_from(self, ids: numpy.ndarray) -> tuple[numpy.ndarray, numpy.ndarray]:
        """(matrix, row numbers in it) to gather the rows of ``ids`` (valid row numbers) from: the
        mapping and ``ids``, or once busy, for a float16 matrix, the float32 copies (exact:
        float16 ⊂ float32) and their slots, copying the rows not copied before."""
        import numpy as np

        matrix = self._matrix()
        if matrix.dtype.itemsize >= 4 or self._tokens_seen <= WIDEN_AFTER_TOKENS:
            return matrix, ids
        if self._wide is None or self._slots is None:
            self._wide = np.empty(self._shape, dtype=np.float32)
            self._slots = np.full(self._shape[0], -1, dtype=np.intp)
        slots = self._slots[ids]
        if (slots < 0).any():
            marks = np.zeros(self._shape[0], dtype=bool)  # each new row once (np.unique sorts)
            marks[ids[slots < 0]] = True
            fresh = np.flatnonzero(marks)
            start, end = self._wide_rows, self._wide_rows + len(fresh)
            self._wide[start:end] = matrix[fresh]
            self._slots[fresh] = np.arange(start, end)
            self._wide_rows = end
            slots = self._slots[ids]
        return self._wide, slots

    def _pool_batches(self, batches: Iterable[FlatIds], count: int) -> numpy.ndarray:
        """The unit vectors of ``count`` texts given as batches of token ids."""
        import numpy as np

        out = np.zeros((count, self.dimensions), dtype=np.float32)
        start = 0
        for flat, ends in batches:
            self._pool(flat, ends, out[start:start + len(ends)])
            start += len(ends)
        return out

    def _pool(self, flat: numpy.ndarray, ends: list[int], out: numpy.ndarray) -> None:
        """Write each text's normalised mean of token rows into ``out`` (its ids end at ``ends``)."""
        import numpy as np

        total = ends[-1] if ends else 0
        self._tokens_seen += total
        sums = np.zeros((len(ends), self.dimensions), dtype=np.float64)
        # The batch's ids clipped once (like WordLlama: ids past the matrix use its last row);
        # then one text at a time: a text's vector does not depend on its batch, and memory stays
        # bounded by the longest text. ``add.reduce`` is what ``ndarray.sum`` calls; ``take``
        # gathers the same rows as indexing, with less overhead per call.
        ids = np.maximum(flat, 0, dtype=np.intp)
        np.minimum(ids, self._shape[0] - 1, out=ids)  # np.clip, without its wrapper
        small = self._dtype == "F16" and total <= SMALL_POOL_TOKENS
        # a small float16 batch (a question) is gathered from the mapping and added row by row:
        # its float64 sums are exact either way (module docstring), so the same bits as the
        # float32 copies or the counted sums, without their fixed cost of a dozen numpy calls
        matrix, ids = (self._matrix(), ids) if small else self._gather_from(ids)
        if self._dtype == "F16" and total and not small:
            self._pool_counted(matrix, ids, ends, sums)
        else:
            add, take, f64 = np.add.reduce, matrix.take, np.float64
            start = 0
            for row, end in enumerate(ends):
                if end > start:
                    add(take(ids[start:end], axis=0), axis=0, dtype=f64, out=sums[row])
                start = end
        if len(ends) == 1:  # one text (a question): the same bits in fewer numpy calls
            vectormath.unit_row_numpy(sums[0], out[0])
        else:
            out[:] = vectormath.unit_rows_numpy(sums)

    @staticmethod
    def _pool_counted(matrix: numpy.ndarray, ids: numpy.ndarray, ends: list[int], sums: numpy.ndarray) -> None:
        """``_pool``'s sums for float16 rows: each text's distinct rows gathered once and scaled by
        their counts (a text of code repeats its tokens ~4 times: sympy's 11.5M tokens are 2.6M
        distinct ones per text), the same bits as adding every row. A text with few repeats
        (prose: 1.09 tokens per distinct row on the 1,000-doc corpus) is added row by row: the
        scaling would cost more than the rows it saves; what that costs is a sort of the batch's
        ids (~0.1 ms for 256 texts of prose). A count is at most 8,192
        (``EXACT_F16_TOKENS``), so count × a float16 value is exact in float64 (11 + 13 bits) and
        the float64 sum of those products is exact in any order (module docstring); a longer text,
        whose in-order sum need not be exact, is added row by row as before."""
        import numpy as np

        n, width = len(ends), matrix.shape[0]
        lengths = np.diff(ends, prepend=0)
        # the (text, row) pairs of the batch sorted: each run is one row of one text, its length
        # the count; a text's pairs stay where its tokens were (the text is the major key)
        keys = np.repeat(np.arange(0, n * width, width, dtype=np.int32 if n * width < 2**31 else np.int64), lengths)
        keys += ids
        keys.sort()
        first = np.empty(len(keys), dtype=bool)
        first[0] = True
        np.not_equal(keys[1:], keys[:-1], out=first[1:])
        seen = np.concatenate(([0], np.cumsum(first)))  # distinct pairs before each token
        bounds = seen[np.concatenate(([0], ends))]  # each text's distinct pairs: bounds[t]:bounds[t + 1]
        counted = (lengths > COUNTED_REPEATS * np.diff(bounds)) & (lengths <= EXACT_F16_TOKENS)
        add, take, einsum, f64 = np.add.reduce, matrix.take, np.einsum, np.float64
        if counted.any():
            bounds = bounds.tolist()
            starts = np.flatnonzero(first)
            counts = np.diff(starts, append=len(keys)).astype(f64)
            rows = keys[starts] % width
        start = 0
        for text, (end, by_count) in enumerate(zip(ends, counted.tolist())):
            if by_count:
                low, high = bounds[text], bounds[text + 1]
                # one pass over the gathered rows, in float64 (no BLAS): scaling them in float32
                # first and summing after read them twice (sympy's pooling 0.83 -> 0.72 s)
                einsum("i,ij->j", counts[low:high], take(rows[low:high], axis=0), dtype=f64, out=sums[text],
                       casting="safe")
            elif end > start:
                add(take(ids[start:end], axis=0), axis=0, dtype=f64, out=sums[text])
            start = end

    def _pool_python(self, ids: list[list[int]]) -> bytes:
        """``_pool`` in plain Python for a float16 matrix: the same bits (exact sums, see the
        module docstring), packed as native float32 rows."""
        from array import array

        rows, dims = self._shape
        row_bytes = dims * 2
        unpack = struct.Struct(f"<{dims}e").unpack_from
        mapped, offset, last = self._mapped, self._offset, rows - 1
        out = array("f")
        for text_ids in ids:
            token_rows = [unpack(mapped, offset + min(i, last) * row_bytes) for i in text_ids]
            out.extend(vectormath.unit_python([sum(column) for column in zip(*token_rows)] if token_rows
                                              else [0.0] * dims))
        self._tokens_seen += sum(map(len, ids))
        return out.tobytes()

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

    def _map_matrix(self, path: Path, tensor_key: str | None) -> tuple[mmap.mmap, str, tuple[int, int], int]:
        """Memory-map a 2-D float tensor of a safetensors file: (mapping, dtype, shape, offset)."""
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
            dtype, shape = entry["dtype"], entry["shape"]
            begin, end = entry["data_offsets"]
            if dtype not in _ITEMSIZE or len(shape) != 2 or min(shape) <= 0:
                raise ValueError(f"unsupported tensor {dtype} {shape}")
            if end - begin != shape[0] * shape[1] * _ITEMSIZE[dtype] or 8 + header_len + end > size:
                raise ValueError("tensor data out of bounds")
        except (ValueError, KeyError, TypeError, AttributeError) as exc:
            raise self._unavailable(f"corrupt weights file {path}: {exc}") from exc
        return mapped, dtype, (int(shape[0]), int(shape[1])), 8 + header_len + begin

    def _unavailable(self, reason: str) -> RagitError:
        return embedder_unavailable(self.id, reason)


def _flat_ids(ids: list[list[int]]) -> FlatIds:
    """Per-text token id lists as :data:`FlatIds`."""
    import numpy as np

    ends = list(accumulate(map(len, ids)))
    return np.fromiter(chain.from_iterable(ids), dtype=np.intp, count=ends[-1] if ends else 0), ends
