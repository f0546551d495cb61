"""A pure-Python encoder for byte-fallback BPE tokenizers without a pre-tokenizer (Llama family).

Why it exists: building WordLlama's 32k-vocabulary tokenizer with ``tokenizers`` costs ~0.09 s
(plus ~0.02 s to import the library) in every fresh process, while a query needs a few dozen
tokens. This encoder follows the ``tokenizers`` BPE algorithm step by step (added-token split,
normaliser, per-character vocabulary lookup with byte fallback, lowest-rank-then-leftmost merge
queue), so it yields the same ids; its tables are built once from the tokenizer JSON and cached
on disk, where they load in about a millisecond. Large batches still go through ``tokenizers``
(Rust, parallel); tests check that both give identical ids.

Tokenizers using anything else (pre-tokenizers, regex or Unicode normalisers, dropout, subword
prefixes, partial byte fallback) are reported as unsupported, and callers use ``tokenizers``.
"""

from __future__ import annotations

import marshal
import os
from array import array
from bisect import bisect_left
from heapq import heapify, heappop, heappush
from pathlib import Path
from typing import Any

FORMAT = "ragit-bpe-1"
_LOW = 0xFFFFFFFF


class UnsupportedTokenizer(Exception):
    """The tokenizer uses a feature this encoder does not reproduce; use ``tokenizers``."""


class BpeEncoder:
    """Token ids for one text, identical to ``Tokenizer.encode(text, add_special_tokens=False)``."""

    def __init__(
        self,
        chars: dict[str, int],
        byte_ids: list[int] | None,
        unk_id: int | None,
        fuse_unk: bool,
        normalizer: list[tuple[str, ...]],
        added: dict[str, int],
        merge_keys: array,
        merge_values: array,
    ) -> None:
        self.chars = chars
        self.byte_ids = byte_ids
        self.unk_id = unk_id
        self.fuse_unk = fuse_unk
        self.normalizer = normalizer
        self.added = added
        # Merge table as two parallel arrays sorted by key: key = left << 32 | right,
        # value = rank << 32 | merged id. Binary search keeps the load free of dict building.
        self.merge_keys = merge_keys
        self.merge_values = merge_values
        self._split = None
        if added:
            import re

            # Longest first: at one position the regex takes the first alternative that
            # matches, which makes the scan leftmost-longest like the Rust added vocabulary.
            pattern = "|".join(re.escape(token) for token in sorted(added, key=len, reverse=True))
            self._split = re.compile(pattern)

    # ------------------------------------------------------------ building and caching

    @classmethod
    def from_tokenizer_json(cls, data: dict[str, Any]) -> BpeEncoder:
        """Build the tables from a parsed ``tokenizer.json``; raise UnsupportedTokenizer if needed."""
        model = data.get("model") or {}
        if model.get("type") != "BPE":
            raise UnsupportedTokenizer("model is not BPE")
        if data.get("pre_tokenizer") is not None:
            raise UnsupportedTokenizer("pre-tokenizer")
        for option in ("dropout", "continuing_subword_prefix", "end_of_word_suffix", "ignore_merges"):
            if model.get(option):
                raise UnsupportedTokenizer(option)
        normalizer = _normalizer_ops(data.get("normalizer"))
        added: dict[str, int] = {}
        for token in data.get("added_tokens") or []:
            if any(token.get(flag) for flag in ("normalized", "lstrip", "rstrip", "single_word")):
                raise UnsupportedTokenizer("added token with normalisation or stripping")
            added[token["content"]] = token["id"]
        vocab: dict[str, int] = model["vocab"]
        byte_ids = None
        if model.get("byte_fallback"):
            found = [vocab.get(f"<0x{b:02X}>") for b in range(256)]
            if None in found:
                raise UnsupportedTokenizer("partial byte fallback")
            byte_ids = [int(i) for i in found if i is not None]
        unk_id = None
        if model.get("unk_token") is not None:
            unk_id = vocab.get(model["unk_token"])
            if unk_id is None:
                raise UnsupportedTokenizer("unknown token outside the vocabulary")
        keys, values = _merge_table(vocab, model.get("merges") or [])
        return cls(
            chars={token: i for token, i in vocab.items() if len(token) == 1},
            byte_ids=byte_ids,
            unk_id=unk_id,
            fuse_unk=bool(model.get("fuse_unk")),
            normalizer=normalizer,
            added=added,
            merge_keys=keys,
            merge_values=values,
        )

    def _state(self) -> tuple[Any, ...]:
        return (
            self.chars, self.byte_ids, self.unk_id, self.fuse_unk, self.normalizer, self.added,
            self.merge_keys.tobytes(), self.merge_values.tobytes(),
        )

    @classmethod
    def _from_state(cls, state: tuple[Any, ...]) -> BpeEncoder:
        chars, byte_ids, unk_id, fuse_unk, normalizer, added, keys, values = state
        merge_keys, merge_values = array("q"), array("q")
        merge_keys.frombytes(keys)
        merge_values.frombytes(values)
        return cls(chars, byte_ids, unk_id, fuse_unk, [tuple(op) for op in normalizer], added,
                   merge_keys, merge_values)

    # ------------------------------------------------------------ encoding

    def encode(self, text: str) -> list[int]:
        """Token ids of ``text``; special tokens written in the text map to their ids."""
        ids: list[int] = []
        if self._split is None:
            self._encode_segment(text, ids)
            return ids
        start = 0
        for match in self._split.finditer(text):
            if match.start() > start:
                self._encode_segment(text[start:match.start()], ids)
            ids.append(self.added[match.group()])
            start = match.end()
        if start < len(text):
            self._encode_segment(text[start:], ids)
        return ids

    def _encode_segment(self, text: str, out: list[int]) -> None:
        for op in self.normalizer:
            if op[0] == "prepend":
                if text:
                    text = op[1] + text
            else:
                text = text.replace(op[1], op[2])
        symbols = self._symbols(text)
        if len(symbols) > 1:
            symbols = self._merge(symbols)
        out.extend(symbols)

    def _symbols(self, text: str) -> list[int]:
        """Initial symbols: one per character, UTF-8 byte tokens or the unknown token otherwise."""
        chars, byte_ids, unk_id = self.chars, self.byte_ids, self.unk_id
        symbols: list[int] = []
        unk_pending = False
        for ch in text:
            token = chars.get(ch)
            if token is not None:
                if unk_pending:
                    symbols.append(unk_id)  # type: ignore[arg-type]
                    unk_pending = False
                symbols.append(token)
            elif byte_ids is not None:
                symbols.extend(byte_ids[b] for b in ch.encode("utf-8"))
            elif unk_id is not None:
                if unk_pending and not self.fuse_unk:
                    symbols.append(unk_id)
                unk_pending = True
        if unk_pending:
            symbols.append(unk_id)  # type: ignore[arg-type]
        return symbols

    def _merge(self, symbols: list[int]) -> list[int]:
        """Apply merges lowest rank first, leftmost on ties, as ``tokenizers`` does."""
        keys, values = self.merge_keys, self.merge_values
        size = len(keys)

        def lookup(left: int, right: int) -> int:
            key = left << 32 | right
            i = bisect_left(keys, key)
            return values[i] if i < size and keys[i] == key else -1

        n = len(symbols)
        queue = []
        for pos in range(n - 1):
            found = lookup(symbols[pos], symbols[pos + 1])
            if found >= 0:
                queue.append((found >> 32, pos, found & _LOW))
        if not queue:
            return symbols
        heapify(queue)
        prev = list(range(-1, n - 1))
        nxt = list(range(1, n + 1))
        nxt[-1] = -1
        alive = [True] * n
        while queue:
            _, pos, merged = heappop(queue)
            right = nxt[pos]
            if not alive[pos] or right < 0:
                continue
            # A stale entry is skipped unless the pair now there merges to the same token
            # (the Rust code compares only the merged id).
            found = lookup(symbols[pos], symbols[right])
            if found < 0 or found & _LOW != merged:
                continue
            symbols[pos] = merged
            alive[right] = False
            after = nxt[right]
            nxt[pos] = after
            if after >= 0:
                prev[after] = pos
            before = prev[pos]
            if before >= 0:
                found = lookup(symbols[before], merged)
                if found >= 0:
                    heappush(queue, (found >> 32, before, found & _LOW))
            if after >= 0:
                found = lookup(merged, symbols[after])
                if found >= 0:
                    heappush(queue, (found >> 32, pos, found & _LOW))
        return [s for s, keep in zip(symbols, alive) if keep]


def _merge_table(vocab: dict[str, int], merges: list[Any]) -> tuple[array, array]:
    """Sorted ``left << 32 | right`` keys and ``rank << 32 | merged`` values; a repeated pair
    keeps its last rank, as in the Rust merge map."""
    import numpy as np

    pairs = [merge.split(" ", 1) if isinstance(merge, str) else merge for merge in merges]
    get = vocab.get
    left = [get(a) for a, _ in pairs]
    right = [get(b) for _, b in pairs]
    merged = [get(a + b) for a, b in pairs]
    for ids in (left, right, merged):
        if None in ids:
            a, b = pairs[ids.index(None)]
            raise ValueError(f"merge {a!r} + {b!r} refers to tokens outside the vocabulary")
    keys = np.array(left, dtype=np.int64) << 32 | np.array(right, dtype=np.int64)
    values = np.arange(len(pairs), dtype=np.int64) << 32 | np.array(merged, dtype=np.int64)
    # np.unique keeps the first occurrence of each key: search the reversed table for the last.
    unique_keys, first = np.unique(keys[::-1], return_index=True)
    return array("q", unique_keys.tobytes()), array("q", values[::-1][first].tobytes())


def _normalizer_ops(spec: dict[str, Any] | None) -> list[tuple[str, ...]]:
    """Flatten the supported normalisers (Prepend, literal Replace, Sequence) into ops."""
    if spec is None:
        return []
    kind = spec.get("type")
    if kind == "Sequence":
        return [op for child in spec.get("normalizers") or [] for op in _normalizer_ops(child)]
    if kind == "Prepend":
        return [("prepend", spec["prepend"])]
    if kind == "Replace" and "String" in (spec.get("pattern") or {}):
        return [("replace", spec["pattern"]["String"], spec["content"])]
    raise UnsupportedTokenizer(f"normaliser {kind}")


def load_bpe(tokenizer_path: Path, cache_dir: Path | None) -> BpeEncoder | None:
    """The encoder for ``tokenizer_path`` (None when unsupported), via the on-disk cache.

    The cache entry is named after the file's size and mtime and records its real path, so an
    edited or reinstalled tokenizer is rebuilt. Cache failures only cost speed.
    Raises OSError or ValueError when the tokenizer file is missing or not valid JSON.
    """
    stat = os.stat(tokenizer_path)
    source = f"{os.path.realpath(tokenizer_path)}\0{stat.st_size}\0{stat.st_mtime_ns}"
    entry = None
    if cache_dir is not None:
        entry = cache_dir / f"{Path(tokenizer_path).stem}-{stat.st_size}-{stat.st_mtime_ns}.{FORMAT}"
        try:
            cached = marshal.loads(entry.read_bytes())
            if cached[0] == FORMAT and cached[1] == source:
                return None if cached[2] is None else BpeEncoder._from_state(cached[2])
        except (OSError, EOFError, ValueError, TypeError, IndexError):
            pass
    import json

    data = json.loads(Path(tokenizer_path).read_bytes())
    try:
        encoder: BpeEncoder | None = BpeEncoder.from_tokenizer_json(data)
    except UnsupportedTokenizer:
        encoder = None
    if entry is not None:
        _write_atomic(entry, marshal.dumps((FORMAT, source, encoder and encoder._state())))
    return encoder


def _write_atomic(path: Path, blob: bytes) -> None:
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp.write_bytes(blob)
        os.replace(tmp, path)
    except OSError:
        try:
            tmp.unlink(missing_ok=True)
        except OSError:
            pass
