"""Embedders chosen by configuration (knowledge §11.2).

``embedder_id_for`` is cheap (no numpy, no tokenizer): status, manifests and store checks call it
to compare ids without loading a model. ``load_embedder`` loads once per id and process, so the
Python API and the MCP server pay for a model a single time.

Providers:

* ``code-static`` (default): a static model fine-tuned for code search (descriptions -> code)
  from ``minilm-l6-static-256`` and read with identifier splitting (``getUserName`` ->
  ``get User Name``, the camelCase word also kept; :func:`ragit.embed.codetext.code_words`)
  applied to chunks and questions alike; ships inside ragit (``models/code-static-256``;
  provenance, data, licence and reproduction in its MODEL.md, background in docs/embedder.md).
  ``ragit eval`` measured it better than ``minilm-static`` on the code-search benchmark
  (docs/evaluation.md).
* ``minilm-static``: the static model distilled from all-MiniLM-L6-v2 that ``code-static`` starts
  from, also shipped (``models/minilm-l6-static-256``); the default before ``code-static``.
* ``wordllama`` (optional extra ``ragit[wordllama]``): the 256-d model whose files ship inside the
  ``wordllama`` wheel, located with ``find_spec`` and never imported (its import configures
  logging and costs ~0.35 s), or, with ``embedding.model_path``, a directory in WordLlama's
  cache layout.
* ``placeholder``: the reference's 64-d hash projection, for tests only.

Nothing is ever downloaded.
"""

from __future__ import annotations

import os
import threading
from pathlib import Path
from typing import TYPE_CHECKING

from .base import Embedder, embedder_unavailable
from .placeholder import PLACEHOLDER_ID, PlaceholderEmbedder

if TYPE_CHECKING:
    from ragit.config import Config

__all__ = ["Embedder", "embedder_id_for", "load_embedder"]

# The bundled model; bump the id's last part whenever its files (a test pins their hashes) or the
# pooling arithmetic change. 2: float64 pooling that plain Python reproduces (ragit.vectormath).
MINILM_DIR = Path(__file__).parent / "models" / "minilm-l6-static-256"
MINILM_ID = "minilm-static:all-MiniLM-L6-v2:256:2"
# The code model; bump the last part whenever its files or its pre-processing change.
CODE_DIR = Path(__file__).parent / "models" / "code-static-256"
CODE_ID = "code-static:code-static-256:256:1"

_LOADED: dict[str, Embedder] = {}
_LOCK = threading.Lock()
_PACKAGE: tuple[Path, str] | None = None  # wordllama's directory and version, once found


def embedder_id_for(config: Config) -> str:
    """The id of the embedder ``config`` names, e.g. ``wordllama:l2_supercat:256:0.4.0.post1``.

    Raises EMBEDDER_UNAVAILABLE when the provider is unknown or the wordllama package is missing.
    """
    provider = config.get("embedding.provider")
    if provider == "placeholder":
        return PLACEHOLDER_ID
    if provider == "minilm-static":
        return MINILM_ID
    if provider == "code-static":
        return CODE_ID
    if provider == "wordllama":
        model, dims = config.get("embedding.model"), config.get("embedding.dimensions")
        _, version = _wordllama_package(f"wordllama:{model}:{dims}")
        return f"wordllama:{model}:{dims}:{version}"
    model = config.get("embedding.model")
    raise embedder_unavailable(f"{provider}:{model}", f"unknown embedding provider {provider!r}")


def load_embedder(config: Config) -> Embedder:
    """The configured embedder, loaded once per id; failures raise EMBEDDER_UNAVAILABLE."""
    embedder_id = embedder_id_for(config)
    dims = config.get("embedding.dimensions")
    with _LOCK:
        embedder = _LOADED.get(embedder_id)
        if embedder is None:
            embedder = _load(config, embedder_id)
            _LOADED[embedder_id] = embedder
    if embedder.dimensions != dims:
        raise embedder_unavailable(
            embedder_id,
            f"embedding.dimensions is {dims} but the model has {embedder.dimensions} dimensions",
        )
    return embedder


def _load(config: Config, embedder_id: str) -> Embedder:
    if config.get("embedding.provider") == "placeholder":
        return PlaceholderEmbedder()
    if config.get("embedding.provider") == "minilm-static":
        from .static import StaticEmbedder

        return StaticEmbedder(embedder_id, MINILM_DIR / "tokenizer.json", MINILM_DIR / "embeddings.safetensors",
                              tensor_key="embeddings")
    if config.get("embedding.provider") == "code-static":
        from .static import StaticEmbedder

        return StaticEmbedder(embedder_id, CODE_DIR / "tokenizer.json", CODE_DIR / "embeddings.safetensors",
                              tensor_key="embeddings", preprocess="code")
    from .static import StaticEmbedder

    model, dims = config.get("embedding.model"), config.get("embedding.dimensions")
    root = _wordllama_root(config, embedder_id)
    return StaticEmbedder(
        embedder_id,
        root / "tokenizers" / f"{model}_tokenizer_config.json",
        root / "weights" / f"{model}_{dims}.safetensors",
        tensor_key="embedding.weight",
    )


def _wordllama_root(config: Config, embedder_id: str) -> Path:
    """The directory holding ``weights/`` and ``tokenizers/``: model_path or the package."""
    model_path = config.get("embedding.model_path")
    if not model_path:
        return _wordllama_package(embedder_id)[0]
    path = Path(os.path.expanduser(model_path))
    if not path.is_absolute() and config.path is not None:
        path = config.path.parent.parent / path  # relative to the repository root
    if not path.is_dir():
        raise embedder_unavailable(embedder_id, f"embedding.model_path is not a directory: {path}")
    return path


def _wordllama_package(embedder_id: str) -> tuple[Path, str]:
    """(package directory, distribution version) of wordllama, without importing it."""
    global _PACKAGE
    if _PACKAGE is None:
        from importlib.util import find_spec

        spec = find_spec("wordllama")
        if spec is None or spec.origin is None:
            raise embedder_unavailable(embedder_id, "the wordllama package is not installed")
        package = Path(spec.origin).parent
        version = _distribution_version(package)
        if version is None:
            raise embedder_unavailable(embedder_id, f"cannot read the wordllama version next to {package}")
        _PACKAGE = (package, version)
    return _PACKAGE


def _distribution_version(package: Path) -> str | None:
    """``Version:`` of the ``wordllama-*.dist-info/METADATA`` installed beside ``package``."""
    try:
        names = sorted(
            n for n in os.listdir(package.parent) if n.startswith("wordllama-") and n.endswith(".dist-info")
        )
        if not names:
            return None
        with open(package.parent / names[-1] / "METADATA", encoding="utf-8") as fh:
            for line in fh:
                if line.startswith("Version:"):
                    return line.split(":", 1)[1].strip()
                if not line.strip():
                    return None  # end of the header block
    except OSError:
        return None
    return None
