"""A tiny BERT-style static model for embedder tests: vocabulary, tokenizer and a safetensors writer."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
from tokenizers import Tokenizer, models, normalizers, pre_tokenizers

VOCAB = {"[PAD]": 0, "[UNK]": 1, "a": 2, "b": 3, "ab": 4, "##b": 5, "##c": 6, "abc": 7, "c": 8,
         "x": 9, ".": 10, "(": 11, ")": 12, "_": 13, "##x": 14, "send": 15, "##file": 16, "file": 17}
ALPHABET = ["a", "b", "c", "x", "A", "B", "ab", "abc", "sendfile", "file", ".", "(", ")", "_", "-", " ", "  ",
            "\t", "\n", "\r", "\x00", "\x07", "\x7f", "[UNK]", "[PAD]", "z", "1", "é", "😀", "ß"]


def tiny_tokenizer() -> Tokenizer:
    tok = Tokenizer(models.WordPiece(dict(VOCAB), unk_token="[UNK]", max_input_chars_per_word=12))
    tok.normalizer = normalizers.BertNormalizer(clean_text=True, handle_chinese_chars=True, lowercase=True)
    tok.pre_tokenizer = pre_tokenizers.BertPreTokenizer()
    tok.add_special_tokens(["[PAD]", "[UNK]"])
    return tok


def write_safetensors(path: Path, name: str, matrix: np.ndarray) -> Path:
    dtype = {np.dtype(np.float16): "F16", np.dtype(np.float32): "F32"}[matrix.dtype]
    data = np.ascontiguousarray(matrix).astype(matrix.dtype.newbyteorder("<")).tobytes()
    header = json.dumps({"__metadata__": {"format": "np"},
                         name: {"dtype": dtype, "shape": list(matrix.shape), "data_offsets": [0, len(data)]}})
    path.write_bytes(len(header).to_bytes(8, "little") + header.encode() + data)
    return path
