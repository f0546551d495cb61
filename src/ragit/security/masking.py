"""Secret masking: one ordered rule table (knowledge §10.1), idempotent and line-preserving.

Masking runs over every ingested blob and again on every output string, so it has to be cheap
on text without secrets. Every rule lists lower-case ``needles``, literals each of its matches
contains; one scan of the lower-cased text (``_gate``) finds which needles occur, and a rule
runs only where one of its needles is (see ``MaskRule.scope``). A match whose secret is already
masked is neither rewritten nor counted, which makes ``mask(mask(x)) == mask(x)``.

The table: row 1 (PEM / PGP private key blocks in any framing), rows 2-10 (the first provider
tokens), the provider token rows generated from ``rules.TOKEN_FORMATS``, header / CLI / file
format rows, rows 11-13 (URL passwords, env assignments, key/value pairs), the provider
key/value row generated from ``rules.KEYED_FORMATS``, and last the generic secret assignment
row with its entropy check. Changing anything in the table changes what the store holds: bump
``MASKING_VERSION``.

Import is cheap (issue 15): a row holds its regex source and compiles it on first use, so a
text without secrets compiles almost nothing; the run-gate analysis parses each source once
(``_run_width``) and reads the flags, inline ``(?i)`` included, from that parse, and its answer
is stored in ``gatetable.py`` so that a process whose rows match the stored fingerprint skips it.
"""

from __future__ import annotations

import re
import sys
from bisect import bisect_right
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from functools import cached_property, lru_cache
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from ..lazyre import LazyPattern
from . import rules as _rules
from .values import (
    MARKER,
    code_literal_secret,
    data_literal_secret,
    is_placeholder,
    is_reference,
    is_template,
    masked_already,
    names_itself,
    not_a_literal,
    random_enough,
    secret_name,
)

if TYPE_CHECKING:  # pragma: no cover
    from ..errors import RagitError

MASKING_VERSION: str = "3"  # 3: masking runs to a fixed point (session 9)

__all__ = [
    "MARKER", "MASKING_VERSION", "RULES", "MaskResult", "MaskRule", "RedactionSummary",
    "code_mode", "mask_text", "mask_value", "masked_error", "trace_masks",
]

# Every character str.splitlines() treats as a line boundary; masking never adds or drops one.
_LINE_BREAKS = frozenset("\n\r\x0b\x0c\x1c\x1d\x1e\x85\u2028\u2029")
_LINE_SPLIT = LazyPattern("(\r\n|[\n\r\x0b\x0c\x1c\x1d\x1e\x85\u2028\u2029])")
_NO_BREAK = "\n\r\x0b\x0c\x1c\x1d\x1e\x85\u2028\u2029"

Replace = Callable[["re.Match[str]"], "str | None"]  # None: nothing (more) to hide


@dataclass(frozen=True)
class MaskRule:
    """One row of the table; ``code_*`` is the row's code-mode variant.

    ``needles`` are lower-case literals; every match contains one, compared case-insensitively
    (``exact_case``: as written; no needles: the row always runs). ``scope`` says where the pattern needs to run:
    ``"text"``: the whole text, when a needle occurs;
    ``"lines"``: only the newline-separated lines holding a needle (no match spans a line);
    ``"line_starts"``: only at the start of the lines holding a needle (every match starts a
    line: a YAML block);
    ``"starts"``: only at the positions of a needle (every match starts with one);
    ``"assign"``: only on lines where a needle is followed by the rest of a name and an
    assignment operator (the generic row: the needle is part of the assigned name).
    """

    number: int
    label: str
    regex: str
    replace: Replace
    needles: tuple[str, ...] = ()
    scope: Literal["text", "lines", "line_starts", "starts", "assign"] = "text"
    code_regex: str | None = None
    code_replace: Replace | None = None
    family: str = ""
    formats: tuple[str, ...] = ()
    source: str = _rules.RAGIT
    exact_case: bool = False  # needles are compared case-sensitively (the pattern is too)
    line_also: str = ""  # a literal every match's line also holds ("@" in a URL with a password)
    requires: str = ""  # a lower-case word the text must hold for the row to run at all
    flags: int = 0  # re flags of ``regex`` and ``code_regex`` (inline flags stay in the source)

    # Compiled on first use and kept: most rows never run on a given text (their needles are
    # absent), so compiling the whole table at import would cost every process ~50 ms.
    @cached_property
    def pattern(self) -> re.Pattern[str]:
        """``regex`` compiled (once, on first use)."""
        return re.compile(self.regex, self.flags)

    @cached_property
    def code_pattern(self) -> re.Pattern[str] | None:
        """``code_regex`` compiled (once, on first use); None when the row has no code variant."""
        return None if self.code_regex is None else re.compile(self.code_regex, self.flags)


@dataclass(frozen=True)
class MaskResult:
    """Masked text and how many secrets this call newly hid."""

    text: str
    count: int


# ----------------------------------------------------------------------------- replacements


def _keep_prefix(n: int) -> Replace:
    """Rows 2-10: the first ``n`` characters of the token stay visible."""

    def replace(m: re.Match[str]) -> str:
        return m.group(0)[:n] + MARKER

    return replace


def _keep_group(check: Callable[[str], bool] | None = None) -> Replace:
    """Token rows: the ``keep`` group stays visible, the rest becomes ``***``; ``check`` may
    veto a match whose secret part does not look like one."""

    def replace(m: re.Match[str]) -> str | None:
        keep = m.group("keep") or ""
        secret = m.group(0)[len(keep):]
        if check is not None and not check(secret):
            return None
        return keep + MARKER

    return replace


def _keep_until_value(check: Callable[[str], bool] | None = None) -> Replace:
    """Everything before the ``value`` group stays; the value becomes ``***``."""

    def replace(m: re.Match[str]) -> str | None:
        value = m.group("value")
        if masked_already(value) or (check is not None and not check(value)):
            return None
        return m.group(0)[: m.start("value") - m.start()] + MARKER

    return replace


# Characters around a PEM body line that are framing, not key material: indentation, quotes,
# string concatenation and escaped line breaks (JSON's "\n").
_PEM_LEAD = LazyPattern(r"(?:\\[nrt]|[\s\"'`+,(\[])*")
_PEM_TRAIL = LazyPattern(r"(?:\\[nrt]|[\s\"'`+,)\];])*$")


def _pem_segment(segment: str, edge: bool) -> str:
    """One physical line of a key body -> its framing around ``***``.

    ``edge``: the part of the header's or footer's own line; left alone when it is only
    framing (a key written on its own lines)."""
    lead = _PEM_LEAD.match(segment).group(0)  # type: ignore[union-attr]
    rest = segment[len(lead):]
    trail = _PEM_TRAIL.search(rest).group(0)  # type: ignore[union-attr]
    core = rest[: len(rest) - len(trail)]
    if not core:
        return segment if edge else lead + MARKER + trail
    return lead + MARKER + trail


def _private_key_block(m: re.Match[str]) -> str | None:
    """Row 1: header and footer kept, every body line becomes ``***`` with its framing kept
    (indentation, quotes, escaped ``\\n``), line breaks kept; already masked -> None."""
    body = m.group("body")
    closed = body is not None
    if not closed:
        body = m.group("open")
    parts = _LINE_SPLIT.split(body)
    lines, breaks = parts[0::2], parts[1::2]
    last = len(lines) - 1
    new_lines = [_pem_segment(line, edge=(i == 0 or (closed and i == last)))
                 for i, line in enumerate(lines)]
    if new_lines == lines:
        return None
    out = [new_lines[0]]
    for brk, line in zip(breaks, new_lines[1:]):
        out += (brk, line)
    return m.group("header") + "".join(out) + (m.group("footer") or "")


def _putty_key(m: re.Match[str]) -> str | None:
    """PuTTY key files: the base64 lines after ``Private-Lines: N`` become ``***``."""
    parts = _LINE_SPLIT.split(m.group("lines"))
    new = [part if i % 2 or not part or part == MARKER else MARKER for i, part in enumerate(parts)]
    return None if new == parts else m.group("keep") + "".join(new)


def _url_password(m: re.Match[str]) -> str | None:
    """Row 11: ``scheme://user:***@``; a template (``{password}``, ``$TOKEN``) is not a secret."""
    password = m.group(2)
    if masked_already(password) or is_template(password) or is_placeholder(password):
        return None
    return m.group(1) + MARKER + m.group(3)


def _env_secret(m: re.Match[str]) -> str | None:
    """Row 12: the assignment and any opening quote stay, the value becomes ``***``; a value
    that is not a literal (``$(gh auth token)``, ``(``, ``true``) is left alone."""
    value = m.group(3)
    if masked_already(value) or _kv_value_exempt(value):
        return None
    return m.group(1) + m.group(2) + MARKER


def _env_secret_code(m: re.Match[str]) -> str | None:
    """Row 12, code mode: only a literal that looks like a credential."""
    if not code_literal_secret(m.group(3)):
        return None
    return _env_secret(m)


def _split_kv(m: re.Match[str]) -> tuple[str, str, str]:
    """Row 13 match -> (key as written, separator as written, value part)."""
    key = m.group(1)
    rest = m.group(0)[len(key):]
    cut = min(i for i in (rest.find(":"), rest.find("=")) if i >= 0) + 1
    value = rest[cut:].lstrip()
    return key, rest[: len(rest) - len(value)], value


def _kv_value_exempt(value: str) -> bool:
    """Row 13 (prose): a value part that is not a literal (``${{ secrets.X }}``, ``write``,
    ``description:``, ``self.get_token()``, a TypeScript ``string;``) is left alone."""
    bare = value.lstrip("\"'`").rstrip(";,)")
    return not bare or not_a_literal(bare) or bare[0] in "([{"


def _kv_secret(m: re.Match[str]) -> str | None:
    """Row 13: ``<key>: <first k chars of the value part>***``, k = min(4, max(0, len - 4)).

    The separator is normalised to ``": "`` unless it spans a line break; then it is kept as
    written so that line ranges stay valid.
    """
    key, sep, value = _split_kv(m)
    if masked_already(value) or _kv_value_exempt(value):
        return None
    if not any(ch in _LINE_BREAKS for ch in sep):
        sep = ": "
    k = min(4, max(0, len(value) - 4))
    return key + sep + value[:k] + MARKER


def _kv_secret_code(m: re.Match[str]) -> str | None:
    """Row 13, code mode: ``<key><separator as written><quote>***``."""
    key, sep, value = _split_kv(m)
    if masked_already(value) or not code_literal_secret(value[1:]):
        return None
    return key + sep + value[0] + MARKER


# --------------------------------------------------------------------------- structural rows

# Row 1: a PEM or PGP private key anywhere (line start or inline, any indentation, LF or CRLF,
# JSON-escaped "\n", quoted, concatenated), with or without its footer.
_PEM_HEADER = r"-----BEGIN[ A-Z0-9_-]{0,40}PRIVATE KEY(?: BLOCK)?-----"
_PEM_FOOTER = r"-----END[ A-Z0-9_-]{0,40}PRIVATE KEY(?: BLOCK)?-----"
_PEM = (
    rf"(?P<header>{_PEM_HEADER})"
    rf"(?:(?P<body>(?:(?!-----BEGIN )[\s\S]){{1,20000}}?)(?P<footer>{_PEM_FOOTER})"
    r"|(?P<open>(?:(?:\r\n|[\n\r\x0b\x0c\x1c-\x1e\x85\u2028\u2029]|\\r\\n|\\n)"
    r"[ \t\"'+,]*[A-Za-z0-9+/=]{16,}[ \t\"',+;]*)+))"
)
_PUTTY = (
    r"(?P<keep>Private-Lines: *\d+)(?P<lines>(?:(?:\r\n|[\n\r])(?:[A-Za-z0-9+/=]{4,}|\*\*\*))+)"
)

# Row 11 and its empty-user twin (redis://:password@host).
_URL_PASSWORD = r"([A-Za-z][A-Za-z0-9+.-]*://[^\s/:@]+:)([^\s/@]+)(@)"
_URL_EMPTY_USER = r"([A-Za-z][A-Za-z0-9+.-]*://:)([^\s/@]+)(@)"

# Rows 12 and 13 differ between modes only in the opening quote: optional, or (code) required.
_ENV_SECRET = (
    r"(?m)^([ \t]*(?:export[ \t]+)?(?=[A-Z_])[A-Z0-9_]*(?:SECRET|TOKEN|PASSWORD|KEY)[A-Z0-9_]*"
    r"[ \t]*=[ \t]*)(QUOTE)([^\s\"'#]+)"
)
_KV_SECRET = r"(?i)(api_key|api-key|apikey|token|secret)\s*[:=]\s*QUOTE[^\s\"']+"
_OPTIONAL_QUOTE, _REQUIRED_QUOTE = "[\"']?", "[\"']"

_TOKENISH = r"[A-Za-z0-9._~+/=:-]"
_AUTH_HEADER = (
    r"(?i)(?P<keep>(?:(?<=\\[nrt])|(?<![\w\\-]))(?:proxy-)?authorization[\"'`]?[ \t]*[:=][ \t]*[\"'`]?[ \t]*"
    r"(?:(?:bearer|basic|token|bot|digest|apikey|api-key|sso-key|negotiate|ntlm|hmac)[ \t]+)?)"
    rf"(?P<value>{_TOKENISH}{{8,}})(?![(\[{{*]|{_TOKENISH})"
)
_BEARER = (
    r"(?i)(?P<keep>(?:(?<=\\[nrt])|(?<![\w\\-]))bearer[ \t]+)(?P<value>[A-Za-z0-9._~+/-]{20,}=*)(?![A-Za-z0-9._~+/=*-])"
)
_CURL_USER = (
    r"(?P<keep>(?<!\S)(?:-u|--user)(?:[ \t]+|=)[\"']?[^\s:\"'$]+:)(?P<value>[^\s\"']{3,})"
)
_NETRC = (
    r"(?P<keep>(?:(?<=\\[nrt])|(?<![\w\\-]))machine\s+\S+\s+login\s+\S+\s+password[ \t]+)"
    r"(?P<value>[^\s\\]+)"
)
_XML_SECRET = (
    r"(?i)(?P<keep><(?P<tag>[\w:.-]*(?:password|passwd|secret|token|apikey|api_key|accesskey|"
    r"credential)[\w:.-]*)(?:[ \t][^<>\n]*)?>)(?P<value>[^<>\s][^<>\n]{0,400}?)(?=</(?P=tag)>)"
)
_XML_ADD_KEY = (
    r"(?i)(?P<keep><add[ \t]+key[ \t]*=[ \t]*\"[^\"\n]*(?:password|secret|token|apikey|api_key|"
    r"connectionstring)[^\"\n]*\"[ \t]+value[ \t]*=[ \t]*\")(?P<value>[^\"\n]+)(?=\")"
)
_DSN_PASSWORD = (
    r"(?i)(?P<keep>(?:(?<=[;\"'?&])|(?<=[;\"'?&] ))(?:password|pwd|passwd)[ \t]*=[ \t]*)"
    r"(?P<value>[^;\"'&\s\\]{2,})"
)
_K8S_DATA = (
    r"(?m)^(?P<indent>[ \t]*)(?P<head>(?:data|stringData):[ \t]*(?:\r\n|\n))"
    r"(?P<block>(?:(?P=indent)[ \t]+[^\n]*(?:\r\n|\n|$))+)"
)
_K8S_KIND = LazyPattern(r"(?im)^[ \t]*kind:[ \t]*[\"']?secret[\"']?[ \t\r]*$")
_K8S_LINE = LazyPattern(r"^(?P<keep>[ \t]*[^\s:#][^:]*:[ \t]*)(?P<value>.*?)(?P<end>\s*)$")


def _kubernetes_secret(m: re.Match[str]) -> str | None:
    """Values under ``data:`` / ``stringData:`` of a YAML document of ``kind: Secret``."""
    text = m.string
    start = text.rfind("\n---", 0, m.start()) + 1
    end = text.find("\n---", m.end())
    if not _K8S_KIND.search(text, start, len(text) if end < 0 else end):
        return None
    parts = _LINE_SPLIT.split(m.group("block"))
    changed = False
    for i in range(0, len(parts), 2):
        line = parts[i]
        if not line.strip():
            continue
        kv = _K8S_LINE.match(line)
        if kv is None:  # continuation of a block scalar
            indent = line[: len(line) - len(line.lstrip())]
            new = line if line.strip() == MARKER else indent + MARKER
        else:
            value = kv.group("value")
            if not value or value in ("|", ">", "|-", ">-") or masked_already(value) or is_template(value):
                continue
            quote = value[0] if value[0] in "\"'" else ""
            new = kv.group("keep") + quote + MARKER + quote + kv.group("end")
        changed = changed or new != line
        parts[i] = new
    return m.group("indent") + m.group("head") + "".join(parts) if changed else None


# ------------------------------------------------------------------------------ keyed rows

_OPERATOR = r"(?::{1,3}=|=>|\?=|\|\||=|:|,|>)"
_KEY_START = r"(?:(?<=\\[nrt])|(?<![\w.$\\-]))"


def _keyed_rule(number: int) -> MaskRule:
    """One row for every ``KeyedFormat``: ``<key with a provider's name> <op> <value>``."""
    keywords = sorted({kw for fmt in _rules.KEYED_FORMATS for kw in fmt.keywords}, key=len, reverse=True)
    alt = "|".join(re.escape(kw) for kw in keywords)
    body = (
        rf"(?P<key>{_KEY_START}(?P<kq>\\?[\"'`])?[\w.-]{{0,50}}?(?:{alt})[\w.-]{{0,30}})"
        rf"(?P<sep>\\?[\"'`]?[ \t]*{_OPERATOR}[ \t]*)"
        r"(?P<q>QUOTE)(?P<value>[\w=+/.:%|~-]{8,400})(?=\\?[\"'`\s;,)\]}]|\\[nrt]|$)"
    )
    shapes: list[tuple[_rules.KeyedFormat, re.Pattern[str]]] = []

    def check(m: re.Match[str]) -> str | None:
        if not shapes:  # compiled on the first candidate, not at import
            shapes.extend((fmt, re.compile(fmt.value)) for fmt in _rules.KEYED_FORMATS)
        key, value = m.group("key").lower(), m.group("value")
        for fmt, shape in shapes:
            if any(kw in key for kw in fmt.keywords) and shape.fullmatch(value):
                if value.isdigit() or random_enough(value):
                    return m.group(0)[: m.start("value") - m.start()] + MARKER
        return None

    return MaskRule(
        number, "provider_keyed",
        body.replace("QUOTE", r"\\?[\"'`]?"), check,
        needles=tuple(keywords), scope="lines",
        code_regex=body.replace("QUOTE", r"\\?[\"'`]"), code_replace=check, flags=re.IGNORECASE,
        family="keyed", formats=tuple(fmt.label.replace("_", "-") for fmt in _rules.KEYED_FORMATS), source=_rules.GITLEAKS,
    )


# The generic row: a name that holds a secret, an assignment operator, a literal value.
_SECRET_WORDS = ("pass", "pwd", "pw", "secret", "token", "key", "auth", "cred", "dsn")
_ASSIGNMENT = (
    rf"(?P<key>{_KEY_START}(?P<kq>\\?[\"'`])?(?P<name>[A-Za-z_$@][\w.-]{{0,80}}+)"
    r"(?:\\?[\"'`])?(?:[ \t]*\])?)"
    rf"(?P<sep>[ \t]*{_OPERATOR}[ \t]*)"
    r"(?:(?P<q>\\?(?P<qc>[\"'`]))(?P<qv>[^\"'`\\" + _NO_BREAK + r"]*)(?=\\?(?P=qc))"
    r"BARE)"
)
_BARE_VALUE = r"|(?P<bv>[^\s\"'`\\,;()\[\]{}]++)(?![(\[{])"


def _assignment_replace(code: bool) -> Replace:
    def replace(m: re.Match[str]) -> str | None:
        name = m.group("name").lstrip("$@")
        if m.group("sep").strip() in (",", ">") and not m.group("kq"):
            return None  # "a, b" and "a > b" are not assignments unless the key is quoted
        quoted = m.group("q") is not None
        value = m.group("qv") if quoted else m.group("bv")
        if value is None or masked_already(value) or not secret_name(name) or names_itself(name, value):
            return None
        if code:
            ok = quoted and code_literal_secret(value)
        else:
            ok = data_literal_secret(value.strip()) if quoted else data_literal_secret(value)
        if not ok:
            return None
        start = m.start("qv") if quoted else m.start("bv")
        return m.group(0)[: start - m.start()] + MARKER

    return replace


# ------------------------------------------------------------------------------- the table


def _token_rule(number: int, fmt: _rules.TokenFormat) -> MaskRule:
    check = random_enough if fmt.check == "random" else None
    scope: Literal["text", "lines", "starts"] = "starts" if fmt.anchored else "lines"
    if not fmt.needles:
        scope = "text"
    return MaskRule(
        number, fmt.label, fmt.regex, _keep_group(check), needles=fmt.needles,
        scope=scope, flags=re.ASCII,
        family=fmt.family, formats=fmt.format_ids(), source=fmt.source,
    )


def _build_rules() -> tuple[MaskRule, ...]:
    """The table in order; rows 1-13 keep the numbers of knowledge §10.1."""
    spec = _rules.STRUCTURAL_FORMATS
    head = [
        MaskRule(1, "private_key_block", _PEM, _private_key_block, needles=("-----begin",),
                 scope="starts", family="private_key", formats=spec["private_key_block"]),
        MaskRule(2, "openai_key", r"sk-[A-Za-z0-9]{20,}", _keep_prefix(6),
                 needles=("sk-",), scope="starts", family="openai", formats=spec["openai_key"]),
        MaskRule(3, "openai_scoped_key", r"sk-(?:proj|svcacct|admin)-[A-Za-z0-9_-]{20,}",
                 _keep_prefix(8), needles=("sk-",), scope="starts", family="openai",
                 formats=spec["openai_scoped_key"]),
        MaskRule(4, "github_pat", r"ghp_[A-Za-z0-9]{20,}", _keep_prefix(6),
                 needles=("ghp_",), scope="starts", family="github", formats=spec["github_pat"]),
        MaskRule(5, "github_token", r"(?:gh[ousr]_|github_pat_)[A-Za-z0-9_]{20,}",
                 _keep_prefix(6), needles=("gho_", "ghu_", "ghs_", "ghr_", "github_pat_"),
                 scope="starts", family="github", formats=spec["github_token"]),
        MaskRule(6, "aws_access_key", r"AKIA[A-Z0-9]{16}", _keep_prefix(6),
                 needles=("akia",), scope="starts", family="aws", formats=spec["aws_access_key"]),
        MaskRule(7, "slack_token", r"xox[abposr]-[A-Za-z0-9-]{10,}", _keep_prefix(5),
                 needles=("xox",), scope="starts", family="slack", formats=spec["slack_token"]),
        MaskRule(8, "stripe_key", r"(?:sk|rk)_(?:live|test)_[A-Za-z0-9]{16,}",
                 _keep_prefix(8), needles=("sk_live_", "sk_test_", "rk_live_", "rk_test_"),
                 scope="starts", family="stripe", formats=spec["stripe_key"]),
        MaskRule(9, "google_api_key", r"AIza[0-9A-Za-z_-]{35}", _keep_prefix(4),
                 needles=("aiza",), scope="starts", family="google", formats=spec["google_api_key"]),
        MaskRule(10, "jwt",
                 r"eyJ[A-Za-z0-9_-]{5,}\.eyJ[A-Za-z0-9_-]{5,}\.[A-Za-z0-9_-]{10,}",
                 _keep_prefix(3), needles=("eyj",), scope="starts", family="jwt", formats=spec["jwt"]),
    ]
    number = 13
    tokens = []
    for fmt in _rules.TOKEN_FORMATS:
        number += 1
        tokens.append(_token_rule(number, fmt))

    def row(label: str, regex: str, replace: Replace, needles: tuple[str, ...],
            scope: Literal["text", "lines", "starts"], family: str, **kw: Any) -> MaskRule:
        nonlocal number
        number += 1
        return MaskRule(number, label, regex, replace, needles=needles, scope=scope,
                        family=family, formats=spec.get(label, ()), **kw)

    structural = [
        row("putty_private_key", _PUTTY, _putty_key, ("private-lines:",), "starts", "private_key"),
        row("authorization_header", _AUTH_HEADER, _keep_until_value(_header_value), ("authorization",),
            "lines", "http_auth"),
        row("bearer_token", _BEARER, _keep_until_value(random_enough), ("bearer",), "starts", "http_auth"),
        row("curl_user", _CURL_USER, _keep_until_value(_curl_password), ("-u ", "-u\t", "-u=", "--user"),
            "lines", "http_auth", requires="curl"),
        row("netrc_password", _NETRC, _keep_until_value(_plain_value), ("machine",), "starts", "netrc"),
        row("kubernetes_secret", _K8S_DATA, _kubernetes_secret, ("data:",), "line_starts",
            "kubernetes"),
        row("xml_secret", _XML_SECRET, _keep_until_value(_plain_value), ("</",), "lines", "xml"),
        row("xml_add_key", _XML_ADD_KEY, _keep_until_value(_plain_value), ("<add",), "lines", "xml",
            source=_rules.GITLEAKS),
    ]
    urls = [
        MaskRule(11, "url_password", _URL_PASSWORD, _url_password, needles=("://",), scope="lines",
                 family="url", formats=spec["url_password"], line_also="@"),
        row("url_empty_user_password", _URL_EMPTY_USER, _url_password, ("://:",), "lines", "url",
            line_also="@"),
        row("dsn_password", _DSN_PASSWORD, _keep_until_value(_plain_value), ("password", "pwd", "passwd"),
            "starts", "connection_string"),
    ]
    number += 1
    keyed = _keyed_rule(number)
    kv = [
        MaskRule(
            12, "env_secret", _ENV_SECRET.replace("QUOTE", _OPTIONAL_QUOTE), _env_secret,
            needles=("SECRET", "TOKEN", "PASSWORD", "KEY"), scope="lines",
            code_regex=_ENV_SECRET.replace("QUOTE", _REQUIRED_QUOTE),
            code_replace=_env_secret_code, family="assignment", exact_case=True,
        ),
        MaskRule(
            13, "kv_secret", _KV_SECRET.replace("QUOTE", _OPTIONAL_QUOTE), _kv_secret,
            needles=("api_key", "api-key", "apikey", "token", "secret"), scope="starts",
            code_regex=_KV_SECRET.replace("QUOTE", _REQUIRED_QUOTE),
            code_replace=_kv_secret_code, family="assignment",
        ),
    ]
    number += 1
    generic = MaskRule(
        number, "secret_assignment",
        _ASSIGNMENT.replace("BARE", _BARE_VALUE), _assignment_replace(code=False),
        needles=_SECRET_WORDS, scope="assign",
        code_regex=_ASSIGNMENT.replace("BARE", ""), code_replace=_assignment_replace(code=True),
        family="assignment", formats=spec["secret_assignment"],
    )
    return (*head, *tokens, *structural, *urls, keyed, *kv, generic)


def _header_value(value: str) -> bool:
    """An Authorization header value, not code that reads one (``request.headers.get``)."""
    return not not_a_literal(value) and random_enough(value)


def _curl_password(value: str) -> bool:
    """``-u user:password``, not ``-u 1000:1000`` (a uid:gid pair)."""
    return _plain_value(value) and not value.isdigit()


def _plain_value(value: str) -> bool:
    return not (masked_already(value) or is_template(value) or is_placeholder(value)
                or is_reference(value))


RULES: tuple[MaskRule, ...] = _build_rules()


# ------------------------------------------------------------------------------- the gate
#
# Three cheap pre-scans decide which rows run, so that text without secrets costs a handful of
# C-speed passes instead of one regex pass per row:
#
# * runs: a provider token is a long run of token characters. The text is mapped to bytes of
#   "a" (token character) or " " (any other), runs of at least _RUN_MIN are found with one
#   literal search, and one trie regex over those runs alone (a tenth of ordinary code) tells
#   which token needles occur. A row is gated this way only when ``_run_width`` proves that
#   every match is a run of at least _RUN_MIN characters.
# * gate words: every other needle is reduced to the shortest gate word it contains ("pass"
#   for "password"); each gate word is tested once with ``in``.
# * keyed: ``provider_keyed`` runs only on lines holding an assignment operator followed by a
#   value of _KEYED_MIN or more value characters and one of its provider keywords.

_RUN_CHARS = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_.+/=~:%$@|?&-")
_RUN_MIN = 20
_RUN_TABLE = bytes(0x61 if chr(i) in _RUN_CHARS else 0x20 for i in range(256))
# The shortest run: a ``find`` for it skips ahead ~_RUN_MIN bytes a step where a regex reads
# every byte, so a text without a run costs a fraction of the scan, and one with runs is
# scanned from the first (no match starts before it).
_RUN_SHORTEST = b"a" * _RUN_MIN
_GATE_WORDS = ("pass", "pw", "secret", "token", "key", "auth", "cred", "dsn", "://", "bearer",
               "-----begin", "private-lines:", "machine", "data:", "curl")
# Characters re's IGNORECASE folds onto ASCII letters that str.lower() leaves alone (or, for
# U+0130, lowers to two characters): mapped first, so needles are found where re matches.
_FOLD = str.maketrans({"\u0130": "i", "\u0131": "i", "\u017f": "s", "\u212a": "k"})
_FOLD_CHARS = ("\u0130", "\u0131", "\u017f")


# Code points a run-gated pattern may consume: run characters whose other case is one too
# (or that have none), so that IGNORECASE cannot widen them.
_RUN_SAFE = frozenset(ord(ch) for ch in _RUN_CHARS if ch.swapcase() in _RUN_CHARS or not ch.isalpha())


@lru_cache(maxsize=None)
def _range_ok(low: int, high: int) -> bool:
    """Is every code point of ``[low-high]`` in ``_RUN_SAFE``? (A-Z, a-f, 0-9 recur.)"""
    return high - low < len(_RUN_SAFE) and all(c in _RUN_SAFE for c in range(low, high + 1))


def _run_width(regex: str, flags: int) -> tuple[int | None, int]:
    """(minimum match length of ``regex`` when every character a match consumes is in
    ``_RUN_CHARS`` (lookarounds consume none), else None; the flags the compiled pattern
    would carry, inline ``(?i)`` included). Parses the source without compiling it."""
    try:
        from re import _parser as sre_parse  # type: ignore[attr-defined]

        tree = sre_parse.parse(regex, flags)
    except Exception:  # pragma: no cover - another Python's private parser
        return None, re.compile(regex, flags).flags
    flags |= tree.state.flags  # what re.compile stores as ``pattern.flags``
    ascii_only = bool(flags & re.ASCII)

    char_ok = _RUN_SAFE.__contains__

    def set_ok(items: list) -> bool:
        for op, av in items:
            name = str(op)
            if name == "LITERAL" and char_ok(av):
                continue
            if name == "RANGE" and _range_ok(av[0], av[1]):
                continue
            if name == "CATEGORY" and (str(av) == "CATEGORY_DIGIT" or (ascii_only and str(av) == "CATEGORY_WORD")):
                continue
            return False
        return True

    def seq_ok(items: Iterable[tuple[Any, Any]]) -> bool:
        for op, av in items:
            name = str(op)
            if name in ("ASSERT", "ASSERT_NOT", "AT"):
                continue
            if name == "LITERAL":
                ok = char_ok(av)
            elif name == "IN":
                ok = set_ok(av)
            elif name in ("MAX_REPEAT", "MIN_REPEAT", "POSSESSIVE_REPEAT"):
                ok = seq_ok(av[2])
            elif name == "SUBPATTERN":
                ok = seq_ok(av[3])
            elif name == "BRANCH":
                ok = all(seq_ok(branch) for branch in av[1])
            else:
                ok = False
            if not ok:
                return False
        return True

    return (tree.getwidth()[0] if seq_ok(tree) else None), flags


def _trie_pattern(words: Iterable[str]) -> str:
    """A regex alternation of ``words`` as a trie: each position costs one branch per letter."""
    trie: dict[str, Any] = {}
    for word in words:
        node = trie
        for ch in word:
            node = node.setdefault(ch, {})
        node[""] = {}

    def build(node: dict[str, Any]) -> str:
        alts = [re.escape(ch) + build(sub) for ch, sub in sorted(node.items()) if ch]
        if not alts:
            return ""
        body = alts[0] if len(alts) == 1 else "(?:" + "|".join(alts) + ")"
        return f"(?:{body})?" if "" in node else body

    return build(trie)


def _gate_word(needle: str) -> str:
    covering = [word for word in _GATE_WORDS if word in needle]
    return min(covering, key=len) if covering else needle


def _run_gated() -> dict[int, int]:
    """The rows ``_run_width`` proves run-gated, each with its compiled flags (one parse per
    row, no compile)."""
    gated = {}
    for i, rule in enumerate(RULES):
        if rule.family == "keyed" or rule.code_regex is not None:
            continue
        width, flags = _run_width(rule.regex, rule.flags)
        if width is not None and width >= _RUN_MIN:
            gated[i] = flags
    return gated




def _starts_a_token(regex: str, flags: int) -> bool:
    """Does every match start after a character that is not a letter or digit (the
    lookarounds before the ``keep`` group rule them out)? Then its needle only needs looking
    for at token starts. ``flags``: the pattern's, inline ones included."""
    head, sep, _ = regex.partition("(?P<keep>")
    if not sep or not head.startswith("(?"):
        return False
    return _head_starts_a_token(head, flags)


@lru_cache(maxsize=None)
def _head_starts_a_token(head: str, flags: int) -> bool:
    """``_starts_a_token`` for one distinct head (most token rows share the same one)."""
    try:
        probe = re.compile(head, flags)
    except re.error:  # pragma: no cover
        return False
    # the head must fail right after each letter or digit (``ch`` before the position probed; the
    # probe once put them after it and so tested "x" alone, which let ``(?<![A-Za-z])`` — true
    # after a digit — pass, and "0ACCOUNTKEY=…" went unmasked by the gated scan)
    return all(probe.match(ch + "x", 1) is None for ch in "azAZ09n")


def _token_start_needles(gated: dict[int, int]) -> frozenset[str]:
    """Needles of rows whose matches start a token, and start with a letter or digit: looked for
    only after a non-alphanumeric character (4x cheaper); every other needle anywhere in a run."""
    return frozenset(
        n for n in {n for i in gated for n in RULES[i].needles} if n[0].isalnum()
        and all(_starts_a_token(RULES[i].regex, gated[i]) and RULES[i].scope == "starts"
                for i in gated if n in RULES[i].needles)
    )


# ------------------------------------------------------------------ the stored gate analysis
#
# The analysis above parses every row's source (~10 ms, every process that masks anything). Its
# answer depends only on the rows and on the Python that parses them, so it is kept in
# ``gatetable.py``, with a fingerprint of exactly those inputs; a process whose rows or Python
# differ from the fingerprint's computes it again (same answer, slower). Regenerate the file
# after changing a row: ``python -c "from ragit.security.masking import write_gate_table as w; w()"``
# (tests/unit/test_masking_lazy.py fails until it matches).

_GATE_TABLE = Path(__file__).with_name("gatetable.py")
_GATE_TABLE_FORMAT = 2  # bump with the names gatetable.py holds: an older file then no longer fits


def gate_fingerprint() -> str:
    """sha256 of everything the gate analysis reads: each row's source, flags, needles and scope,
    whether it has a code variant, the run characters and the Python version. The keyed row is
    never gated, so only its place counts (its alternation's order follows set iteration)."""
    import hashlib

    rows = tuple(("keyed",) if r.family == "keyed"
                 else (r.regex, r.flags, r.code_regex is not None, r.needles, r.scope) for r in RULES)
    data = repr((_GATE_TABLE_FORMAT, sys.version_info[:2], "".join(sorted(_RUN_CHARS)), _RUN_MIN, rows))
    return hashlib.sha256(data.encode("utf-8")).hexdigest()


def _run_tries(gated: dict[int, int], token_start: frozenset[str]) -> tuple[str, str]:
    """Sources of the two trie patterns over the run needles (see ``_Runs``): the token-start
    needles after a non-alphanumeric character, and the others anywhere ("" when none)."""
    anywhere = {n for i in gated for n in RULES[i].needles} - token_start
    return ("[^a-z0-9](" + _trie_pattern(token_start) + ")" if token_start else "",
            _trie_pattern(anywhere) if anywhere else "")


def _gate_analysis() -> tuple[dict[int, int], frozenset[str], tuple[str, str]]:
    """(run-gated rows with their flags, token-start needles, the run tries' sources): stored
    when it fits, else computed."""
    try:
        from . import gatetable
    except Exception:  # noqa: BLE001 - a missing or broken generated file: compute instead
        gatetable = None
    if gatetable is not None and gatetable.FINGERPRINT == gate_fingerprint():
        return (dict(gatetable.RUN_GATED_FLAGS), frozenset(gatetable.TOKEN_START_NEEDLES),
                (gatetable.RUN_TRIE, gatetable.RUN_TRIE_ANYWHERE))
    gated = _run_gated()
    token_start = _token_start_needles(gated)
    return gated, token_start, _run_tries(gated, token_start)


def render_gate_table() -> str:
    """The source of ``gatetable.py`` for this table and this Python (computed, never read)."""
    gated = _run_gated()
    token_start = _token_start_needles(gated)
    trie, trie_anywhere = _run_tries(gated, token_start)
    lines = [
        '"""The masking table\'s run-gate analysis, generated by ``masking.write_gate_table``: do not edit.',
        "",
        "Used only while FINGERPRINT equals ``masking.gate_fingerprint()``; see masking.py.",
        '"""',
        "",
        f'FINGERPRINT = "{gate_fingerprint()}"',
        "",
        "# row index -> the compiled pattern's flags",
        "RUN_GATED_FLAGS = {",
        *(f"    {i}: {int(flags)}," for i, flags in sorted(gated.items())),
        "}",
        "",
        "TOKEN_START_NEEDLES = (",
        *(f"    {n!r}," for n in sorted(token_start)),
        ")",
        "",
        f"RUN_TRIE = {trie!r}",
        "",
        f"RUN_TRIE_ANYWHERE = {trie_anywhere!r}",
        "",
    ]
    return "\n".join(lines)


def write_gate_table() -> Path:
    """Regenerate ``gatetable.py`` after a change to the rows (or for another Python version)."""
    _GATE_TABLE.write_text(render_gate_table(), encoding="utf-8")
    return _GATE_TABLE


_RUN_GATED_FLAGS, _TOKEN_START_NEEDLES, _RUN_TRIE_SOURCES = _gate_analysis()
_RUN_GATED = frozenset(_RUN_GATED_FLAGS)
_RUN_NEEDLES = frozenset(n for i in _RUN_GATED for n in RULES[i].needles)
_ANYWHERE_NEEDLES = _RUN_NEEDLES - _TOKEN_START_NEEDLES
_RUN_TRIE = re.compile(_RUN_TRIE_SOURCES[0]) if _RUN_TRIE_SOURCES[0] else None
_RUN_TRIE_ANYWHERE = re.compile(_RUN_TRIE_SOURCES[1]) if _RUN_TRIE_SOURCES[1] else None
_UNGATED = tuple(i for i in range(len(RULES)) if i not in _RUN_GATED)
_RUN_NEEDLELESS = frozenset(i for i in _RUN_GATED if not RULES[i].needles)


def _rules_by_needle() -> dict[str, tuple[int, ...]]:
    """Each run needle's run-gated rows, in table order."""
    by_needle: dict[str, list[int]] = {}
    for i in sorted(_RUN_GATED):
        for n in dict.fromkeys(RULES[i].needles):
            by_needle.setdefault(n, []).append(i)
    return {n: tuple(rows) for n, rows in by_needle.items()}


_RUN_RULES_BY_NEEDLE: dict[str, tuple[int, ...]] = _rules_by_needle()
_NEEDLE_GATE = {n: _gate_word(n) for i, rule in enumerate(RULES)
                if i not in _RUN_GATED and rule.family != "keyed" and not rule.exact_case
                for n in rule.needles}


def _screens() -> tuple[tuple[int, str, "frozenset[str] | None"], ...]:
    """(row, ``requires``, gate words or None) of each row outside the run gate, in table order:
    a row whose ``requires`` the lowered text lacks, or that holds none of its needles' gate words
    (what :meth:`_Gate.has` looks for), has no match (:func:`_rule_matches` returns None). Keyed
    rows and rows without needles have no word screen."""
    out = []
    for i in _UNGATED:
        rule = RULES[i]
        words = None
        if rule.family != "keyed" and rule.needles:
            lowered = [n.lower() if rule.exact_case else n for n in rule.needles]
            words = frozenset(_NEEDLE_GATE.get(n, n) for n in lowered)
        out.append((i, rule.requires, words))
    return tuple(out)


_SCREENS = _screens()
_UNSCREENED = tuple((i, requires) for i, requires, words in _SCREENS if words is None)
_SCREEN_WORDS = tuple(sorted({w for _, _, words in _SCREENS if words for w in words}))

# Characters that many texts lack, rarest first (in prose and code): a gate word holding one is
# absent from a text that lacks it, which a one-character search (memchr) tells for a fraction
# of a word search's cost. First the one longer key: "-u" is in the four option words
# ("--user", "-u ", "-u\t", "-u=") and in few texts (77 of sympy's 1,603 .py files, where "-"
# is in 1,279 and "=" in 1,498), so one search for it replaces three word searches in most code
# (issue 15: the gate-word scan was 0.32 s of masking sympy).
_SCREEN_KEYS = ("-u", "\t", "<", "=", "-", ":", "/", " ")


def _screen_groups() -> tuple[tuple[str, tuple[str, ...]], ...]:
    """:data:`_SCREEN_WORDS` grouped by the first of :data:`_SCREEN_KEYS` each holds (key ""
    for the words with none): :func:`_active` searches a group's words only where its key is."""
    groups: dict[str, list[str]] = {}
    for word in _SCREEN_WORDS:
        key = next((k for k in _SCREEN_KEYS if k in word), "")
        groups.setdefault(key, []).append(word)
    return tuple((key, tuple(words)) for key, words in groups.items())


_SCREEN_GROUPS = _screen_groups()

_KEYED_MIN = 14  # the shortest provider value shape (tests/unit/test_masking.py checks it)
# The keyed pre-scan works on a byte map of the text: "v" value characters, "o" characters
# that are operators or value characters (= : |), "c" comma, "g" greater-than, "s" blanks and
# backslash, "q" quotes, "b" an opening bracket, newline kept, "x" anything else. A keyed value
# is at least _KEYED_MIN value characters after an operator (in code mode: after a quote), not
# followed by an opening bracket (that would be a call or a subscript).
_KEYED_TABLE = bytes(
    ord("v") if chr(i).isascii() and (chr(i).isalnum() or chr(i) in "_+/.%~-")
    else ord("o") if chr(i) in "=:|" else ord("c") if chr(i) == "," else ord("g") if chr(i) == ">"
    else ord("s") if chr(i) in " \t\\" else ord("q") if chr(i) in "\"'`" else ord("b") if chr(i) in "([{"
    else ord("\n") if i == 10 else ord("x")
    for i in range(256)
)
_KEYED_GATE = re.compile(rb"[ocg][sq]*[vo]{" + str(_KEYED_MIN).encode() + rb",}+(?!b)[^\n]*")
# In code mode a keyed value starts at a quote (``[ocg]s*q[vo]{14,}+(?!b)``): this finds the
# quoted values and :func:`_code_keyed_lines` keeps those after blanks and an operator. A pattern
# that starts with a literal is searched for that byte, where one that starts with a class
# ([ocg]: "=", ":", ",", ">", common in code) tries every byte: the code-mode keyed pre-scan of
# sympy's .py files 0.125 -> 0.048 s (issue 15).
_KEYED_QUOTED = re.compile(rb"q[vo]{" + str(_KEYED_MIN).encode() + rb",}+(?!b)")


@lru_cache(maxsize=1)
def _keywords() -> re.Pattern[str]:
    """The provider keywords as one trie pattern, compiled on the first keyed candidate line."""
    return re.compile(_trie_pattern({kw for fmt in _rules.KEYED_FORMATS for kw in fmt.keywords}))


@lru_cache(maxsize=4096)
def _implied(found: str) -> frozenset[str]:
    """Run needles a trie match stands for: those inside it, and those that start inside it
    and run past its end (the scan resumes after a match, so those were not reported)."""
    return frozenset(
        n for n in _ANYWHERE_NEEDLES
        if n in found or any(n.startswith(found[i:]) for i in range(1, len(found)))
    )


@lru_cache(maxsize=4096)
def _implied_at_start(found: str) -> frozenset[str]:
    """Token-start needles a match of ``_RUN_TRIE`` stands for: its prefixes, and needles that
    start after a non-alphanumeric character inside it (hidden by the non-overlapping scan)."""
    out = {n for n in _TOKEN_START_NEEDLES if found.startswith(n)}
    for j in range(1, len(found)):
        if not found[j - 1].isalnum():
            tail = found[j:]
            out.update(n for n in _TOKEN_START_NEEDLES if n.startswith(tail) or tail.startswith(n))
    return frozenset(out)


def _run_spans(mapped: bytes, at: int) -> list[tuple[int, int]]:
    """(start, end) of each run of at least ``_RUN_MIN`` "a" bytes of ``mapped`` (a text through
    ``_RUN_TABLE``) from ``at``, the start of a run or of the text: two C-level ``find`` calls
    a run, a third less than a regex's ``finditer`` (issue 15). The first occurrence of
    ``_RUN_SHORTEST`` after a run's end (a blank) is the next run's start, since one starting
    later in the same run would also fit a byte earlier."""
    spans = []
    find = mapped.find
    while (start := find(_RUN_SHORTEST, at)) >= 0:
        at = find(b" ", start + _RUN_MIN)
        if at < 0:
            at = len(mapped)
        spans.append((start, at))
    return spans


class _Runs:
    """The runs of at least ``_RUN_MIN`` token characters of a text, joined by NULs (lower-
    cased, as needles are), and which run needles they hold."""

    __slots__ = ("text", "spans", "offsets", "joined", "present")

    def __init__(self, text: str, lowered: str) -> None:
        self.text = text
        mapped = text.encode("ascii", "replace").translate(_RUN_TABLE)  # one byte per character
        first = mapped.find(_RUN_SHORTEST)
        if first < 0:  # no run (most prose, titles and questions)
            self.spans, self.offsets, self.joined, self.present = [], [], "", set()
            return
        spans = _run_spans(mapped, first)
        if "\\" in text:  # a run right after an escape ("\nghp_...") also starts one later
            spans = [v for s, e in spans for v in (
                ((s, e), (s + 1, e)) if s and text[s - 1] == "\\" and lowered[s] in "nrt" and e - s > _RUN_MIN
                else ((s, e),))]
        self.spans = spans
        self.offsets: list[int] = []
        at = 0
        for s, e in self.spans:
            self.offsets.append(at)
            at += e - s + 1
        self.joined = "\x00".join(lowered[s:e] for s, e in self.spans)
        self.present: set[str] = set()
        if self.spans:
            if _RUN_TRIE is not None:
                for found in set(_RUN_TRIE.findall("\x00" + self.joined)):
                    self.present |= _implied_at_start(found)
            if _RUN_TRIE_ANYWHERE is not None:
                for found in set(_RUN_TRIE_ANYWHERE.findall(self.joined)):
                    self.present |= _implied(found)

    def _to_text(self, at: int) -> int:
        k = bisect_right(self.offsets, at) - 1
        return self.spans[k][0] + at - self.offsets[k]

    def starts(self, needles: tuple[str, ...]) -> list[int]:
        """Sorted text positions of every needle occurrence inside a run."""
        return sorted({self._to_text(at) for at in _occurrences(self.joined, needles)})

    def spans_with(self, needles: tuple[str, ...]) -> list[tuple[int, int]]:
        """The runs holding a needle, each with the character after it (for lookaheads)."""
        hit = sorted({bisect_right(self.offsets, at) - 1 for at in _occurrences(self.joined, needles)})
        return [(self.spans[k][0], min(len(self.text), self.spans[k][1] + 1)) for k in hit]

    def scan(self, pattern: re.Pattern[str]) -> Iterator[re.Match[str]]:
        """``pattern`` over the runs only, re-matched in the text. Exact for a pattern whose
        matches are runs and whose lookarounds test token characters only (NUL and any
        character outside a run answer alike)."""
        original = "\x00".join(self.text[s:e] for s, e in self.spans)
        end = 0
        for m in pattern.finditer(original):
            at = self._to_text(m.start())
            if at >= end and (real := pattern.match(self.text, at)) is not None:
                yield real
                end = real.end()


# A long text that a row rewrites keeps its gate by block of whole lines (:class:`_BlockGate`):
# after each rewrite only the blocks it touched are read again. A file of test secrets (one of
# each provider's tokens, 825 KB) was read whole after each of its 142 rewriting rows: 3.9 s.
_BLOCKED_MIN = 1 << 16  # characters: a shorter text is read again whole, as before
_BLOCK = 1 << 14  # characters a block holds at least (it ends at the next newline or the text's end)


class _Block:
    """What the gate keeps of one block of lines: the screen words it holds and its runs. No
    gate word, needle or run holds a newline, so a text's facts are the union of its blocks'."""

    __slots__ = ("words", "runs")

    def __init__(self, text: str, lowered: str) -> None:
        self.words = {w for key, group in _SCREEN_GROUPS if not key or key in lowered for w in group if w in lowered}
        self.runs = _Runs(text, lowered)


class _BlockRuns:
    """:class:`_Runs` of a whole text answered from its blocks' (positions made the text's)."""

    __slots__ = ("gate", "spans", "present")

    def __init__(self, gate: "_BlockGate") -> None:
        self.gate = gate
        self.spans = [b.runs.spans for b in gate.blocks if b.runs.spans]  # (truthy when any block has runs)
        self.present: set[str] = set().union(*(b.runs.present for b in gate.blocks))

    def starts(self, needles: tuple[str, ...]) -> list[int]:
        return [at + p for at, b in zip(self.gate.starts, self.gate.blocks) if b.runs.spans
                for p in b.runs.starts(needles)]

    def spans_with(self, needles: tuple[str, ...]) -> list[tuple[int, int]]:
        return [(at + s, at + e) for at, b in zip(self.gate.starts, self.gate.blocks) if b.runs.spans
                for s, e in b.runs.spans_with(needles)]

    def scan(self, pattern: re.Pattern[str]) -> Iterator[re.Match[str]]:
        text, end = self.gate.text, 0
        for at, b in zip(self.gate.starts, self.gate.blocks):
            runs = b.runs
            if not runs.spans:
                continue
            original = "\x00".join(runs.text[s:e] for s, e in runs.spans)
            for m in pattern.finditer(original):
                start = at + runs._to_text(m.start())
                if start >= end and (real := pattern.match(text, start)) is not None:
                    yield real
                    end = real.end()


def _blocks_of(text: str, lowered: str, start: int, end: int) -> tuple[list[int], list[_Block]]:
    """The blocks of ``text[start:end]`` (which ends at a newline or at the text's end), read:
    their starts and facts, each at least :data:`_BLOCK` characters, ending after a newline."""
    starts: list[int] = []
    blocks: list[_Block] = []
    at = start
    while at < end:
        cut = text.find("\n", at + _BLOCK - 1, end)
        stop = end if cut < 0 else cut + 1
        starts.append(at)
        blocks.append(_Block(text[at:stop], lowered[at:stop]))
        at = stop
    return starts, blocks


def _keyed_lines(text: str, lowered: str, code: bool) -> list[tuple[int, int]]:
    """Lines that hold an operator followed by a long value, and a provider keyword."""
    mapped = text.encode("ascii", "replace").translate(_KEYED_TABLE)
    if code:
        lines = _code_keyed_lines(mapped)
    else:
        lines = []
        for m in _KEYED_GATE.finditer(mapped):  # a match runs to the end of its line
            lines.append((mapped.rfind(b"\n", 0, m.start()) + 1, m.end()))
    if not lines:
        return []
    offsets = []
    at = 0
    for s, e in lines:
        offsets.append(at)
        at += e - s + 1
    joined = "\x00".join(lowered[s:e] for s, e in lines)
    hit = sorted({bisect_right(offsets, m.start()) - 1 for m in _keywords().finditer(joined)})
    return [lines[k] for k in hit]


def _code_keyed_lines(mapped: bytes) -> list[tuple[int, int]]:
    """The (start, end) of each line of ``mapped`` (a text through :data:`_KEYED_TABLE`) where
    ``[ocg]s*q[vo]{14,}+(?!b)[^\\n]*`` matches, in order, as its ``finditer`` gives them (a
    match runs from its operator to the end of its line, so each such line once): every quote
    that starts a value (:data:`_KEYED_QUOTED`; no quote is inside another's value, so none is
    passed over), kept when blanks and an operator come before it. Blanks and operators are
    never newlines, so the operator is on the quote's line."""
    lines = []
    end = -1  # the end of the last line kept
    for m in _KEYED_QUOTED.finditer(mapped):
        at = m.start() - 1
        while at >= 0 and mapped[at] == 0x73:  # "s": blanks
            at -= 1
        if at <= end or mapped[at] not in b"ocg":  # (before the quote: on a line already kept)
            continue
        end = mapped.find(b"\n", m.end())
        if end < 0:
            end = len(mapped)
        lines.append((mapped.rfind(b"\n", 0, at) + 1, end))
    return lines


class _Gate:
    """What the pre-scans found in the current text; rebuilt after the text changes."""

    __slots__ = ("text", "lowered", "_runs", "_words")

    def __init__(self, text: str) -> None:
        self.text = text
        folded = text.translate(_FOLD) if any(ch in text for ch in _FOLD_CHARS) else text
        self.lowered = folded.lower()
        self._runs: _Runs | None = None
        self._words: dict[str, bool] = {}

    def runs(self) -> _Runs:
        if self._runs is None:
            self._runs = _Runs(self.text, self.lowered)
        return self._runs

    def has(self, needle: str, exact_case: bool = False) -> bool:
        """Does the text hold ``needle`` (its gate word, case-insensitively; or, for an
        ``exact_case`` needle, the needle as written, looked for only when its lower-case form
        is there)?"""
        if exact_case:
            if not self.has(needle.lower()):
                return False
            key = needle + "\x00"
            found = self._words.get(key)
            if found is None:
                found = self._words[key] = needle in self.text
            return found
        word = _NEEDLE_GATE.get(needle, needle)
        found = self._words.get(word)
        if found is None:
            found = self._words[word] = word in self.lowered
        return found

    def present(self, groups: "tuple[tuple[str, tuple[str, ...]], ...]") -> set[str]:
        """The gate words of ``groups`` the text holds (:data:`_SCREEN_GROUPS`: a group's words
        are searched only where its key character is), each answer searched kept for :meth:`has`."""
        lowered, words = self.lowered, self._words
        out = set()
        for key, group in groups:
            if key and key not in lowered:
                continue  # (none of the group's words is there: has() finds that out if asked)
            for word in group:
                if words.setdefault(word, word in lowered):
                    out.add(word)
        return out


# ---------------------------------------------------------------------------- the engine


def code_mode(path: str, kind: str) -> bool:
    """Knowledge §10.1 code mode for a document: ``code`` kind, except data and config files
    (JSON, YAML, TOML, INI, ``.env``, XML, shell assignments), whose unquoted values are
    literals and are masked."""
    if kind != "code":
        return False
    name = path.rsplit("/", 1)[-1].lower()
    if name.startswith(".env") or name.endswith(".env") or name in _DATA_NAMES:
        return False
    return name.rpartition(".")[2] not in _DATA_SUFFIXES if "." in name else True


_DATA_SUFFIXES = frozenset({
    "json", "jsonl", "ndjson", "json5", "yaml", "yml", "toml", "ini", "cfg", "conf", "config",
    "properties", "env", "xml", "plist", "tfvars", "hcl", "npmrc", "pypirc", "netrc", "pgpass",
    "sh", "bash", "zsh", "ksh", "fish", "ps1", "bat", "cmd", "envrc", "secret", "secrets",
    "pem", "key", "crt", "asc", "ppk", "csv", "tsv", "log", "sql",
})
_DATA_NAMES = frozenset({"dockerfile", "makefile", "procfile", "containerfile", "credentials",
                         "config", "netrc", "_netrc", "pgpass", "htpasswd"})


def mask_text(text: str, *, code: bool = False) -> MaskResult:
    """Apply every rule in order, each to the previous rule's output, until a pass changes nothing.

    ``code=True`` is §10.1's code mode (see ``code_mode``): assignment rows only mask quoted
    literals that look like credentials, so ordinary code such as
    ``token = request.headers["Authorization"]`` stays readable.
    """
    return _mask(text, code, None)


def trace_masks(text: str, *, code: bool = False) -> list[tuple[str, int, str]]:
    """Which rule masked what: (rule label, 1-based line, matched text) per masked match.
    For the benchmark and for debugging a false mask; ``mask_text`` is the same pass."""
    trace: list[tuple[str, int, str]] = []
    _mask(text, code, trace)
    return trace


# Passes over a text that its previous pass changed. One pass applies each row to the previous
# row's output, so a match that a later row's replacement uncovers ("Auth:TOKEN=\"TOKEN=0": row
# 13's value ends where the auth row's masked part began) is only seen by a second pass; masking
# runs to a fixed point, which makes it idempotent (masking already masked text changes nothing).
MAX_PASSES = 4


def _mask(text: str, code: bool, trace: list[tuple[str, int, str]] | None) -> MaskResult:
    result = _mask_pass(text, code, trace)
    count, passes = result.count, 1
    while result.count and passes < MAX_PASSES:
        result = _mask_pass(result.text, code, trace)
        count += result.count
        passes += 1
    return MaskResult(result.text, count)


def _mask_pass(text: str, code: bool, trace: list[tuple[str, int, str]] | None) -> MaskResult:
    """Every row once, in table order, each on the previous row's output."""
    if not text:
        return MaskResult(text, 0)
    gate = _Gate(text)
    count = 0
    todo = _active(gate)
    while todo:
        i = todo.pop(0)
        rule = RULES[i]
        variant = code and rule.code_regex is not None and rule.code_replace is not None
        replace = rule.code_replace if variant and rule.code_replace is not None else rule.replace
        matches = _rule_matches(i, rule, variant, gate)
        if matches is None:
            continue
        edits: list[tuple[int, int, int]] = []
        text, hits = _apply(text, matches, replace, rule.label, trace, edits)
        if hits:
            count += hits
            gate = _gate_after(gate, text, edits)
            todo = [j for j in _active(gate) if j > i]
    return MaskResult(text, count)


class _BlockGate(_Gate):
    """A long text's gate kept by block of lines (:class:`_Block`): the same answers as
    :class:`_Gate`'s, and after a rewrite (:meth:`edited`) only the blocks it touched are read."""

    __slots__ = ("starts", "blocks")

    def __init__(self, text: str) -> None:
        super().__init__(text)
        self.starts: list[int] = []  # each block's first character in the text
        self.blocks: list[_Block] = []

    @classmethod
    def of(cls, text: str) -> "_BlockGate":
        gate = cls(text)
        gate._keep(*_blocks_of(text, gate.lowered, 0, len(text)))
        return gate

    def _keep(self, starts: list[int], blocks: list[_Block]) -> None:
        self.starts, self.blocks = starts, blocks
        words = set().union(*(b.words for b in blocks))
        self._words = {w: w in words for w in _SCREEN_WORDS}  # what has() and present() read

    def edited(self, text: str, edits: list[tuple[int, int, int]]) -> "_BlockGate":
        """The gate of ``text``: this gate's text with ``edits`` ((start, end, length of the new
        text) each, in order, not overlapping) made. Blocks no edit touches are kept (moved);
        each run of touched blocks is split again, taking in the blocks after it until it ends
        at a newline, so every block still starts a line."""
        old_starts, old_blocks = self.starts, self.blocks
        count = len(old_starts)
        touched = [False] * count
        for s, e, _ in edits:
            for k in range(bisect_right(old_starts, s) - 1, bisect_right(old_starts, max(e, s + 1) - 1)):
                touched[k] = True
        gate = _BlockGate(text)
        lowered = gate.lowered
        starts: list[int] = []
        blocks: list[_Block] = []
        shift, e_at, k = 0, 0, 0  # shift: the length change of the edits before a position

        def shifted(pos: int) -> int:
            """Where old position ``pos`` (never inside an edit) is in ``text``: after the edits
            that end before it (an empty one at ``pos`` belongs to the block that starts there)."""
            nonlocal shift, e_at
            while e_at < len(edits) and (edits[e_at][1] < pos or edits[e_at][0] < edits[e_at][1] == pos):
                s, e, n = edits[e_at]
                shift += n - (e - s)
                e_at += 1
            return pos + shift

        while k < count:
            old_start = old_starts[k]
            if not touched[k]:
                starts.append(shifted(old_start))
                blocks.append(old_blocks[k])
                k += 1
                continue
            begin = shifted(old_start)
            m = k
            while m + 1 < count and touched[m + 1]:
                m += 1
            end = shifted(old_starts[m + 1]) if m + 1 < count else len(text)  # (the last: all that follows)
            while end < len(text) and text[end - 1] != "\n" and m + 1 < count:
                m += 1  # an edit took the newline: the next block joins
                end = shifted(old_starts[m + 1]) if m + 1 < count else len(text)
            read_starts, read_blocks = _blocks_of(text, lowered, begin, end)
            starts += read_starts
            blocks += read_blocks
            k = m + 1
        gate._keep(starts, blocks)
        return gate

    def runs(self) -> "_Runs":
        if self._runs is None:
            self._runs = _BlockRuns(self)  # type: ignore[assignment]
        return self._runs

    def present(self, groups: "tuple[tuple[str, tuple[str, ...]], ...]") -> set[str]:
        words = self._words
        return {w for _, group in groups for w in group if words.get(w)}


def _gate_after(gate: _Gate, text: str, edits: list[tuple[int, int, int]]) -> _Gate:
    """The gate of ``text``, which is ``gate.text`` after ``edits`` (:func:`_apply`): a long text's
    by block, reading again only the blocks the edits touched."""
    if len(text) < _BLOCKED_MIN:
        return _Gate(text)
    if isinstance(gate, _BlockGate):
        return gate.edited(text, edits)
    return _BlockGate.of(text)


def _active(gate: _Gate) -> list[int]:
    """Indices of the rows that may match, in table order: the rows outside the run gate that
    pass their word screen (:data:`_SCREENS`), and the run-gated rows whose needles the runs
    hold. Screening the gate words in one pass here costs a fraction of asking every row."""
    lowered = gate.lowered
    present = gate.present(_SCREEN_GROUPS)
    if present:
        ungated = [i for i, requires, need in _SCREENS
                   if (not requires or requires in lowered) and (need is None or not present.isdisjoint(need))]
    else:  # no gate word: only the rows without a word screen can match
        ungated = [i for i, requires in _UNSCREENED if not requires or requires in lowered]
    runs = gate.runs()
    if not runs.spans:
        return ungated
    hit = {i for n in runs.present for i in _RUN_RULES_BY_NEEDLE[n]}
    return sorted(hit.union(ungated, _RUN_NEEDLELESS))


def _rule_matches(i: int, rule: MaskRule, variant: bool, gate: _Gate) -> Iterable[re.Match[str]] | None:
    """The matches in ``gate.text`` of the rule's pattern (``variant``: of its code-mode
    pattern), as a full ``finditer`` would give them, or None when the pre-scans show it has
    none. The pattern is fetched (compiled, the first time) only past the pre-scans."""
    text, lowered = gate.text, gate.lowered
    if rule.family == "keyed":
        lines = _keyed_lines(text, lowered, variant)
        if not lines:
            return None
        pattern = _pattern(rule, variant)
        return (m for start, end in lines for m in pattern.finditer(text, start, end))
    if rule.requires and rule.requires not in lowered:
        return None
    if i in _RUN_GATED:
        runs = gate.runs()
        if not runs.spans:
            return None
        if not rule.needles:
            return runs.scan(_pattern(rule, variant))
        needles = tuple(n for n in rule.needles if n in runs.present)
        if not needles:
            return None
        pattern = _pattern(rule, variant)
        if rule.scope == "starts":
            return _matches_at(pattern, text, runs.starts(needles))
        return (m for start, end in runs.spans_with(needles) for m in pattern.finditer(text, start, end))
    if not rule.needles:
        return _pattern(rule, variant).finditer(text)
    needles = tuple(n for n in rule.needles if gate.has(n, rule.exact_case))
    if not needles:
        return None
    return _matches(rule, needles, _pattern(rule, variant), text, text if rule.exact_case else lowered)


def _pattern(rule: MaskRule, variant: bool) -> re.Pattern[str]:
    """The rule's compiled pattern, or its code-mode one (``variant``)."""
    return rule.code_pattern if variant and rule.code_pattern is not None else rule.pattern


def _matches(rule: MaskRule, needles: tuple[str, ...], pattern: re.Pattern[str], text: str,
             lowered: str) -> Iterable[re.Match[str]]:
    """Every match ``pattern.finditer(text)`` would give, looking only where ``rule.scope`` says."""
    scope = rule.scope
    if scope == "text":
        return pattern.finditer(text)
    if scope == "starts":
        return _matches_at(pattern, text, _occurrences(lowered, needles))
    if scope == "assign":
        lines = _assign_lines(lowered, needles)
    else:
        lines = _needle_lines(lowered, needles)
    if rule.line_also:
        lines = [(s, e) for s, e in lines if lowered.find(rule.line_also, s, e) >= 0]
    if scope == "line_starts":
        return _matches_at(pattern, text, [s for s, _ in lines])
    return (m for start, end in lines for m in pattern.finditer(text, start, end))


# From a secret word inside a name: the rest of the name, a closing quote or bracket, an operator.
_NAME_TAIL = LazyPattern(r"[\w.-]*+(?:\\?[\"'`])?(?:[ \t]*\])?[ \t]*(?::=|=>|\?=|\|\|=|=|:|,|>)")


def _assign_lines(lowered: str, needles: tuple[str, ...]) -> list[tuple[int, int]]:
    """Sorted spans of the lines where a needle is followed by the rest of a name and an
    assignment operator."""
    spans = set()
    for at in _occurrences(lowered, needles):
        if _NAME_TAIL.match(lowered, at):
            end = lowered.find("\n", at)
            spans.add((lowered.rfind("\n", 0, at) + 1, len(lowered) if end < 0 else end))
    return sorted(spans)


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
            end = m.end() if m.end() > start else start + 1


def _apply(text: str, matches: Iterable[re.Match[str]], replace: Replace, label: str,
           trace: list[tuple[str, int, str]] | None,
           edits: list[tuple[int, int, int]] | None = None) -> tuple[str, int]:
    """Rewrite the matches that are not already masked; return (text, how many were). ``edits``
    receives (start, end, length of the new text) of each rewrite, in order."""
    parts: list[str] = []
    last = hits = 0
    for m in matches:
        if m.start() < last:
            continue  # overlaps a match rewritten just before (line-scoped rows)
        new = replace(m)
        if new is None or new == m.group(0):
            continue
        parts += (text[last:m.start()], new)
        last = m.end()
        hits += 1
        if edits is not None:
            edits.append((m.start(), last, len(new)))
        if trace is not None:
            trace.append((label, text.count("\n", 0, m.start()) + 1, m.group(0)))
    if not hits:
        return text, 0
    parts.append(text[last:])
    return "".join(parts), hits


# ------------------------------------------------------------------------- JSON-like values


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

    recovery = mask_value(error.recovery)[0] if error.recovery else error.recovery
    return RagitError(error.code, mask_text(error.message).text, mask_value(error.details)[0], recovery)
