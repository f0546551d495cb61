"""Size, depth and hostile-value limits of MCP tool arguments (cli-contract §3.3, §11).

The definition is the contract layer's (:mod:`ragit.contract.limits`), shared with the CLI and
the Python API, so a tool call and the same ``--input`` payload fail alike: a 10 MB question
fails in microseconds with ``INPUT_INVALID`` (``too_large``), before the masking,
control-character, tokenizer and embedding passes would each have walked it.
"""

from __future__ import annotations

from ..contract.limits import (
    DEPTH_LIMIT,
    LIMITS,
    PAYLOAD_LIMIT_BYTES,
    TEXT_KEYS,
    TEXT_LIMIT_BYTES,
    check_arguments,
)

__all__ = ["DEPTH_LIMIT", "LIMITS", "PAYLOAD_LIMIT_BYTES", "TEXT_KEYS", "TEXT_LIMIT_BYTES", "check_arguments"]
