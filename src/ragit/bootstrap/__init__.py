"""`ragit init`: the discover-first bootstrap (knowledge §13) as a library.

The CLI wires options to :func:`run_init` and prints :func:`render_init_text` or the JSON
envelope around ``InitResult.data``.
"""

from __future__ import annotations

from .report import render_init_text
from .run import InitResult, run_init

__all__ = ["InitResult", "render_init_text", "run_init"]
