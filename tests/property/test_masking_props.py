"""Properties of secret masking (knowledge §10.1): idempotence, line preservation, and that
the scoped scanning used for speed finds exactly what a full scan finds."""

from __future__ import annotations

import copy

from hypothesis import given, settings
from hypothesis import strategies as st

from ragit.security.masking import RULES, _matches, mask_text, mask_value

# Pieces that make rules fire, half-fire and interact: every §10.1 example input and output,
# key prefixes, separators, quotes, markers, and every kind of line break.
FRAGMENTS = [
    "OPENAI=sk-abcdefghijklmnopqrstuvwxyz123456 github=ghp_ABCDEFGHIJKLMNOPQRSTUVWXYZ12",
    "OPENAI=sk-abc*** github=ghp_AB***",
    'api_key: "super-secret-value"', 'api_key: "sup***"',
    "token=abcdef123456", "token: abcd***", "token = 5", "token: ***",
    "AKIAABCDEFGHIJKLMNOP", "AKIAAB***",
    "-----BEGIN RSA PRIVATE KEY-----\nMIIEowIBAAKCAQEA\nq83hf8Hf\n-----END RSA PRIVATE KEY-----",
    "-----BEGIN RSA PRIVATE KEY-----\n***\n***\n-----END RSA PRIVATE KEY-----",
    "sk-proj-abcdefghijklmnopqrstuvwxyz0123", "sk-proj-***",
    "gho_ABCDEFGHIJKLMNOPQRSTUVWXYZ12", "gho_AB***",
    "SLACK=xoxb-123456789012-abcdefABCDEF", "SLACK=xoxb-***",
    "stripe sk_live_4eC39HqLyjWDarjtT1zdp7dc", "stripe sk_live_***",
    "key AIzaSyA1234567890abcdefghijklmnopqrstuv", "key AIza***",
    "Bearer eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0."
    "dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U",
    "Bearer eyJ***",
    "postgres://app:hunter2@db.internal:5432/app", "postgres://app:***@db.internal:5432/app",
    'export DB_PASSWORD="hunter2"', 'export DB_PASSWORD="***"',
    "API_KEY=abcdef123", "API_KEY=***", "TOKEN=abc", "TOKEN=***",
    "GITHUB_TOKEN=ghp_ABCDEFGHIJKLMNOPQRSTUVWXYZ12", "GITHUB_TOKEN=ghp_AB***",
    "task-management-system-overview-document",
    'token = request.headers["Authorization"]', 'API_KEY = "abcdef123456"', 'API_KEY = "***"',
    'secret = "hunter2hunter2"', 'secret = "***"',
    "sk-", "sk-proj-", "ghp_", "gho_", "github_pat_", "AKIA", "xoxb-", "sk_live_", "rk_test_",
    "AIza", "eyJ", ".", "token", "Token", "secret", "SECRET", "PASSWORD", "KEY", "api-key",
    "apikey", "export ", "=", ":", " ", "\t", "\n", "\r", "\r\n", "\x0b", "\x85", "\u2028",
    '"', "'", "#", "***", "*", "://", "@", "/", "-----BEGIN PRIVATE KEY-----",
    "-----END PRIVATE KEY-----", "abcdefghij", "ABCDEFGHIJKLMNOP", "0123456789", "_", "-",
    "\u0130", "\u0131", "\u017f", "\u212a",
]

texts = st.one_of(
    st.text(),
    st.lists(st.one_of(st.sampled_from(FRAGMENTS), st.text(max_size=3)), max_size=30).map("".join),
)


def _line_shape(text: str) -> tuple[int, int, int]:
    return len(text.splitlines()), text.count("\n"), text.count("\r")


@settings(max_examples=300, deadline=None)
@given(texts, st.booleans())
def test_masking_is_idempotent(text: str, code: bool) -> None:
    once = mask_text(text, code=code)
    twice = mask_text(once.text, code=code)
    assert twice.text == once.text
    assert twice.count == 0


@settings(max_examples=250, deadline=None)
@given(texts, st.booleans())
def test_masking_preserves_lines(text: str, code: bool) -> None:
    assert _line_shape(mask_text(text, code=code).text) == _line_shape(text)


@settings(max_examples=150, deadline=None)
@given(texts, st.booleans())
def test_count_is_zero_exactly_when_text_is_unchanged(text: str, code: bool) -> None:
    result = mask_text(text, code=code)
    assert (result.count == 0) == (result.text == text)


@settings(max_examples=200, deadline=None)
@given(texts)
def test_scoped_scanning_equals_a_full_scan(text: str) -> None:
    for rule in RULES:
        for pattern in (rule.pattern, rule.code_pattern):
            if pattern is None:
                continue
            scoped = [(m.span(), m.groups()) for m in _matches(rule, pattern, text)]
            full = [(m.span(), m.groups()) for m in pattern.finditer(text)]
            assert scoped == full, rule.label


json_values = st.recursive(
    st.one_of(st.none(), st.booleans(), st.integers(), texts),
    lambda children: st.one_of(
        st.lists(children, max_size=4),
        st.dictionaries(st.sampled_from(["a", "b", "text", "token"]), children, max_size=4),
    ),
    max_leaves=12,
)


def _strings(value: object) -> list[str]:
    if isinstance(value, str):
        return [value]
    if isinstance(value, dict):
        return [s for item in value.values() for s in _strings(item)]
    if isinstance(value, list):
        return [s for item in value for s in _strings(item)]
    return []


@settings(max_examples=100, deadline=None)
@given(json_values)
def test_mask_value_counts_every_string_and_leaves_input_alone(value: object) -> None:
    original = copy.deepcopy(value)
    masked, count, sources = mask_value(value)
    assert value == original
    assert count == sum(mask_text(s).count for s in _strings(value))
    assert _strings(masked) == [mask_text(s).text for s in _strings(value)]
    assert len(sources) == len(set(sources))
    assert (count > 0) == bool(sources)
    assert mask_value(masked)[1:] == (0, [])
