"""The Embedder protocol every vector producer satisfies (knowledge §11.2).

Vectors are cached by (chunk id, embedder id), so an id must pin everything that changes the
output: two embedders with the same id return identical vectors for identical input.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Protocol, runtime_checkable

from ragit.errors import RagitError

if TYPE_CHECKING:
    import numpy


@runtime_checkable
class Embedder(Protocol):
    """Maps texts to L2-normalised float32 rows; an input without tokens maps to a zero row."""

    id: str
    dimensions: int

    def embed(self, texts: Sequence[str]) -> numpy.ndarray:
        """Return a C-contiguous ``float32`` array of shape ``(len(texts), dimensions)``."""
        ...


def embedder_unavailable(embedder_id: str, reason: str) -> RagitError:
    """The EMBEDDER_UNAVAILABLE failure (cli-contract §6): details ``{embedderId, reason}``."""
    return RagitError(
        "EMBEDDER_UNAVAILABLE",
        f"embedder {embedder_id} is unavailable: {reason}",
        {"embedderId": embedder_id, "reason": reason},
        "ragit doctor",
    )
