"""JSON output rules (cli-contract §9): 6-decimal half-away-from-zero rounding, key order kept,
UTF-8 without escapes, 2-space indentation and one trailing newline."""

from __future__ import annotations

import json
import math
from decimal import ROUND_HALF_UP, Context, Decimal
from typing import Any

_QUANT = Decimal("0.000001")
# Digits enough for any float (up to ~1.8e308) plus six decimals: the default 28 would raise
# InvalidOperation on 1e22 and above (a transcript's number echoed by `window compact`).
_CONTEXT = Context(prec=330, rounding=ROUND_HALF_UP)


def round6(value: float) -> float | int:
    """Round the shortest decimal form of ``value`` to 6 places, half away from zero."""
    if not math.isfinite(value):
        raise ValueError("NaN and infinities are never emitted")
    rounded = Decimal(repr(float(value))).quantize(_QUANT, rounding=ROUND_HALF_UP, context=_CONTEXT)
    if rounded == rounded.to_integral_value():
        return int(rounded)
    return float(rounded)


def normalize_numbers(obj: Any) -> Any:
    """Return a copy of ``obj`` with every float rounded by :func:`round6`."""
    if isinstance(obj, bool) or obj is None or isinstance(obj, (str, int)):
        return obj
    if isinstance(obj, float):
        return round6(obj)
    if isinstance(obj, dict):
        return {k: normalize_numbers(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return [normalize_numbers(v) for v in obj]
    if hasattr(obj, "item"):  # numpy scalar
        return normalize_numbers(obj.item())
    raise TypeError(f"cannot serialise {type(obj).__name__}")


def dumps(obj: Any) -> str:
    """The canonical pretty JSON of an output object, with a trailing newline."""
    return json.dumps(normalize_numbers(obj), ensure_ascii=False, indent=2) + "\n"


def format_score(value: float) -> str:
    """Text rendering of a score: exactly 4 decimals, half away from zero."""
    return str(Decimal(repr(float(value))).quantize(Decimal("0.0001"), rounding=ROUND_HALF_UP))
