"""Secret masking: one ordered rule table (knowledge §10.1), idempotent and line-preserving.

Masking runs over every ingested blob and again on every output string, so each row only
runs its regex where a cheap literal scan says a match can be (see ``MaskRule.scope``), and a
match whose secret is already masked is neither rewritten nor counted, which makes
``mask(mask(x)) == mask(x)``. Changing anything in ``RULES`` changes what the store holds:
bump ``MASKING_VERSION``.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Literal

if TYPE_CHECKING:  # pragma: no cover
    from ..errors import RagitError

MASKING_VERSION: str = "1"

MARKER = "***"

# Every character str.splitlines() treats as a line boundary; masking never adds or drops one.
_LINE_BREAKS = frozenset("\n\r\x0b\x0c\x1c\x1d\x1e\x85\u2028\u2029")
_LINE_SPLIT = re.compile("(\r\n|[\n\r\x0b\x0c\x1c\x1d\x1e\x85\u2028\u2029])")

Replace = Callable[["re.Match[str]"], "str | None"]  # None: the secret is already masked


@dataclass(frozen=True)
class MaskRule:
    """One row of the §10.1 table; ``code_*`` is the row's code-mode variant (rows 12, 13).

    ``scope`` says where the pattern needs to run, so a large text costs a literal scan:
    ``"text"``: everywhere, skipped unless one of ``needles`` occurs (no needles: always run);
    ``"lines"``: only on the newline-separated lines holding a needle (no match spans a line);
    ``"starts"``: only at the positions of a needle in the lower-cased text (every match
    starts with one, case-insensitively).
    """

    number: int
    label: str
    pattern: re.Pattern[str]
    replace: Replace
    needles: tuple[str, ...] = ()
    scope: Literal["text", "lines", "starts"] = "text"
    code_pattern: re.Pattern[str] | None = None
    code_replace: Replace | None = None


@dataclass(frozen=True)
class MaskResult:
    """Masked text and how many secrets this call newly hid."""

    text: str
    count: int


def _keep_prefix(n: int) -> Replace:
    """Rows 2-10: the first ``n`` characters of the token stay visible."""

    def replace(m: re.Match[str]) -> str:
        return m.group(0)[:n] + MARKER

    return replace


def _private_key_block(m: re.Match[str]) -> str | None:
    """Row 1: BEGIN/END lines kept, every body line becomes ``***`` (line breaks kept)."""
    parts = _LINE_SPLIT.split(m.group(2))
    lines, breaks = parts[0::2], parts[1::2]
    if all(line == MARKER for line in lines):
        return None
    body = "".join(MARKER + brk for brk in breaks) + MARKER
    return f"{m.group(1)}\n{body}\n{m.group(3)}"


def _url_password(m: re.Match[str]) -> str | None:
    """Row 11: ``scheme://user:***@``."""
    if m.group(2).endswith(MARKER):
        return None
    return m.group(1) + MARKER + m.group(3)


def _env_secret(m: re.Match[str]) -> str | None:
    """Row 12: the assignment and any opening quote stay, the value becomes ``***``."""
    if m.group(3).endswith(MARKER):
        return None
    return m.group(1) + m.group(2) + MARKER


def _split_kv(m: re.Match[str]) -> tuple[str, str, str]:
    """Row 13 match -> (key as written, separator as written, value part)."""
    key = m.group(1)
    rest = m.group(0)[len(key):]
    cut = min(i for i in (rest.find(":"), rest.find("=")) if i >= 0) + 1
    value = rest[cut:].lstrip()
    return key, rest[: len(rest) - len(value)], value


def _kv_secret(m: re.Match[str]) -> str | None:
    """Row 13: ``<key>: <first k chars of the value part>***``, k = min(4, max(0, len - 4)).

    The separator is normalised to ``": "`` unless it spans a line break; then it is kept as
    written so that line ranges stay valid.
    """
    key, sep, value = _split_kv(m)
    if value.endswith(MARKER):
        return None
    if not any(ch in _LINE_BREAKS for ch in sep):
        sep = ": "
    k = min(4, max(0, len(value) - 4))
    return key + sep + value[:k] + MARKER


def _kv_secret_code(m: re.Match[str]) -> str | None:
    """Row 13, code mode: ``<key><separator as written><quote>***``."""
    key, sep, value = _split_kv(m)
    if value.endswith(MARKER):
        return None
    return key + sep + value[0] + MARKER


# Rows 12 and 13 differ between modes only in the opening quote: optional, or (code) required.
_ENV_SECRET = (
    r"(?m)^([ \t]*(?:export[ \t]+)?(?=[A-Z_])[A-Z0-9_]*(?:SECRET|TOKEN|PASSWORD|KEY)[A-Z0-9_]*"
    r"[ \t]*=[ \t]*)(QUOTE)([^\s\"'#]+)"
)
_KV_SECRET = r"(?i)(api_key|api-key|apikey|token|secret)\s*[:=]\s*QUOTE[^\s\"']+"
_OPTIONAL_QUOTE, _REQUIRED_QUOTE = "[\"']?", "[\"']"

# The §10.1 table, in order: number, label, pattern, replacement, then where to look.
# Rows whose pattern starts with a literal need no needles: re already scans for it.
RULES: tuple[MaskRule, ...] = (
    MaskRule(
        1, "private_key_block",
        re.compile(
            r"(?m)^(-----BEGIN (?:[A-Z0-9]+ )*PRIVATE KEY-----)\n([\s\S]*?)\n"
            r"(-----END (?:[A-Z0-9]+ )*PRIVATE KEY-----)"
        ),
        _private_key_block, needles=("PRIVATE KEY-----",),
    ),
    MaskRule(2, "openai_key", re.compile(r"sk-[A-Za-z0-9]{20,}"), _keep_prefix(6)),
    MaskRule(
        3, "openai_scoped_key", re.compile(r"sk-(?:proj|svcacct|admin)-[A-Za-z0-9_-]{20,}"),
        _keep_prefix(8),
    ),
    MaskRule(4, "github_pat", re.compile(r"ghp_[A-Za-z0-9]{20,}"), _keep_prefix(6)),
    MaskRule(
        5, "github_token", re.compile(r"(?:gh[ousr]_|github_pat_)[A-Za-z0-9_]{20,}"),
        _keep_prefix(6),
    ),
    MaskRule(6, "aws_access_key", re.compile(r"AKIA[A-Z0-9]{16}"), _keep_prefix(6)),
    MaskRule(7, "slack_token", re.compile(r"xox[abposr]-[A-Za-z0-9-]{10,}"), _keep_prefix(5)),
    MaskRule(
        8, "stripe_key", re.compile(r"(?:sk|rk)_(?:live|test)_[A-Za-z0-9]{16,}"),
        _keep_prefix(8), needles=("k_live_", "k_test_"),
    ),
    MaskRule(9, "google_api_key", re.compile(r"AIza[0-9A-Za-z_-]{35}"), _keep_prefix(4)),
    MaskRule(
        10, "jwt",
        re.compile(r"eyJ[A-Za-z0-9_-]{5,}\.eyJ[A-Za-z0-9_-]{5,}\.[A-Za-z0-9_-]{10,}"),
        _keep_prefix(3),
    ),
    MaskRule(
        11, "url_password", re.compile(r"([A-Za-z][A-Za-z0-9+.-]*://[^\s/:@]+:)([^\s/@]+)(@)"),
        _url_password, needles=("://",), scope="lines",
    ),
    MaskRule(
        12, "env_secret", re.compile(_ENV_SECRET.replace("QUOTE", _OPTIONAL_QUOTE)),
        _env_secret, needles=("SECRET", "TOKEN", "PASSWORD", "KEY"), scope="lines",
        code_pattern=re.compile(_ENV_SECRET.replace("QUOTE", _REQUIRED_QUOTE)),
        code_replace=_env_secret,
    ),
    MaskRule(
        13, "kv_secret", re.compile(_KV_SECRET.replace("QUOTE", _OPTIONAL_QUOTE)),
        _kv_secret, needles=("api_key", "api-key", "apikey", "token", "secret"), scope="starts",
        code_pattern=re.compile(_KV_SECRET.replace("QUOTE", _REQUIRED_QUOTE)),
        code_replace=_kv_secret_code,
    ),
)

# Where re's IGNORECASE and str.lower() disagree on the row-13 keys: re folds these to i, i, s
# (and U+0130 lowers to two characters). Texts holding one are scanned in full instead.
_FOLD_MISMATCH = ("\u0130", "\u0131", "\u017f")


def mask_text(text: str, *, code: bool = False) -> MaskResult:
    """Apply every rule in order, each to the previous rule's output.

    ``code=True`` is §10.1's code mode: rows 12 and 13 only mask quoted literals, so ordinary
    code such as ``token = request.headers["Authorization"]`` stays readable.
    """
    count = 0
    for rule in RULES:
        pattern, replace = rule.pattern, rule.replace
        if code and rule.code_pattern is not None and rule.code_replace is not None:
            pattern, replace = rule.code_pattern, rule.code_replace
        text, hits = _apply(text, _matches(rule, pattern, text), replace)
        count += hits
    return MaskResult(text, count)


def _matches(rule: MaskRule, pattern: re.Pattern[str], text: str) -> Iterable[re.Match[str]]:
    """Every match ``pattern.finditer(text)`` would give, looking only where ``rule.scope`` says."""
    if rule.scope == "lines":
        return (m for start, end in _needle_lines(text, rule.needles)
                for m in pattern.finditer(text, start, end))
    if rule.scope == "starts":
        if any(ch in text for ch in _FOLD_MISMATCH):
            return pattern.finditer(text)
        return _matches_at(pattern, text, _occurrences(text.lower(), rule.needles))
    if rule.needles and not any(needle in text for needle in rule.needles):
        return ()
    return pattern.finditer(text)


def _occurrences(haystack: str, needles: tuple[str, ...]) -> list[int]:
    """Sorted start positions of every (possibly overlapping) needle occurrence."""
    found = set()
    for needle in needles:
        i = haystack.find(needle)
        while i >= 0:
            found.add(i)
            i = haystack.find(needle, i + 1)
    return sorted(found)


def _needle_lines(text: str, needles: tuple[str, ...]) -> list[tuple[int, int]]:
    """Sorted (start, end) spans of the newline-separated lines that hold a needle."""
    spans = set()
    for needle in needles:
        i = text.find(needle)
        while i >= 0:
            end = text.find("\n", i)
            end = len(text) if end < 0 else end
            spans.add((text.rfind("\n", 0, i) + 1, end))
            i = text.find(needle, end)
    return sorted(spans)


def _matches_at(pattern: re.Pattern[str], text: str, starts: list[int]) -> Iterator[re.Match[str]]:
    """finditer restricted to known candidate starts: leftmost, non-overlapping."""
    end = 0
    for start in starts:
        if start >= end and (m := pattern.match(text, start)) is not None:
            yield m
            end = m.end()


def _apply(text: str, matches: Iterable[re.Match[str]], replace: Replace) -> tuple[str, int]:
    """Rewrite the matches that are not already masked; return (text, how many were)."""
    parts: list[str] = []
    last = hits = 0
    for m in matches:
        new = replace(m)
        if new is None or new == m.group(0):
            continue
        parts += (text[last:m.start()], new)
        last = m.end()
        hits += 1
    if not hits:
        return text, 0
    parts.append(text[last:])
    return "".join(parts), hits


def mask_value(value: Any, *, path: str = "", code: bool = False) -> tuple[Any, int, list[str]]:
    """Mask every string inside a JSON-like value without mutating it.

    Returns (masked copy, total count, paths of the strings that had secrets), paths in
    first-seen order as §10.3 wants them: ``p.key`` for dict entries, ``p[i]`` for items.
    Dict keys are never masked; scalars other than strings pass through untouched.
    """
    sources: dict[str, None] = {}
    masked, count = _mask_walk(value, path, code, sources)
    return masked, count, list(sources)


def _mask_walk(value: Any, path: str, code: bool, sources: dict[str, None]) -> tuple[Any, int]:
    if isinstance(value, str):
        result = mask_text(value, code=code)
        if result.count:
            sources.setdefault(path)
        return result.text, result.count
    if isinstance(value, dict):
        out: dict[Any, Any] = {}
        total = 0
        for key, item in value.items():
            out[key], n = _mask_walk(item, f"{path}.{key}" if path else str(key), code, sources)
            total += n
        return out, total
    if isinstance(value, (list, tuple)):
        items = []
        total = 0
        for i, item in enumerate(value):
            masked, n = _mask_walk(item, f"{path}[{i}]", code, sources)
            items.append(masked)
            total += n
        return (tuple(items) if isinstance(value, tuple) else items), total
    return value, 0


@dataclass
class RedactionSummary:
    """The ``redactionSummary`` block of query / context pack / memory recall (§10.3)."""

    masked_count: int = 0
    sources: list[str] = field(default_factory=list)

    def add(self, count: int, sources: Iterable[str]) -> None:
        """Merge one masking result: counts add up, sources union in first-seen order."""
        self.masked_count += count
        for source in sources:
            if source not in self.sources:
                self.sources.append(source)

    def to_dict(self) -> dict[str, Any]:
        return {
            "applied": self.masked_count > 0,
            "maskedCount": self.masked_count,
            "sources": list(self.sources),
        }


def masked_error(error: "RagitError") -> "RagitError":
    """A copy of ``error`` with message, details and recovery masked: a secret typed into an
    argument must not come back in the failure (knowledge §10.2); CLI and MCP both report it."""
    from ..errors import RagitError

    recovery = mask_text(error.recovery).text if error.recovery else error.recovery
    return RagitError(error.code, mask_text(error.message).text, mask_value(error.details)[0], recovery)
