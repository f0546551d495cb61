"""The reference's 64-dimensional hash projection (knowledge §11.2), for deterministic tests.

It is semantically meaningless beyond shared tokens, but needs no model files and is exactly
reproducible, so tests of retrieval and ingest can pin scores.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from .tokenize import tokenize

if TYPE_CHECKING:
    import numpy

PLACEHOLDER_ID = "placeholder:sha1:64:v1"
PLACEHOLDER_DIMENSIONS = 64


class PlaceholderEmbedder:
    """Sum over tokens of ``digest[i mod 20] / 255 * 2 - 1`` per dimension, then L2-normalise."""

    id = PLACEHOLDER_ID
    dimensions = PLACEHOLDER_DIMENSIONS

    def embed(self, texts: Sequence[str]) -> numpy.ndarray:
        import hashlib

        import numpy as np

        columns = np.arange(PLACEHOLDER_DIMENSIONS) % 20
        out = np.zeros((len(texts), PLACEHOLDER_DIMENSIONS), dtype=np.float32)
        for row, text in enumerate(texts):
            tokens = tokenize(text)
            if not tokens:
                continue
            digests = b"".join(hashlib.sha1(token.encode("utf-8")).digest() for token in tokens)
            # Summing the integer bytes first is exact; one scaling step then gives the sum of
            # the per-token terms (d / 255 * 2 - 1) without accumulated rounding.
            byte_sums = np.frombuffer(digests, dtype=np.uint8).reshape(-1, 20).sum(axis=0, dtype=np.int64)
            vector = byte_sums[columns] * (2.0 / 255.0) - len(tokens)
            norm = float(np.sqrt(vector @ vector))
            if norm > 0.0:
                out[row] = vector / norm
        return out
