"""Properties of secret masking (knowledge §10.1): idempotence, line preservation, and that
the pre-scans used for speed (needles, runs, the keyed gate) find exactly what a full scan
finds."""

from __future__ import annotations

import copy
import json
from pathlib import Path

from hypothesis import example, given, settings
from hypothesis import strategies as st

from ragit.security.masking import RULES, _Gate, _rule_matches, mask_text, mask_value

CORPUS = Path(__file__).resolve().parents[1] / "fixtures" / "secrets" / "corpus.jsonl"
# Every value and framing of the leak corpus, cut into pieces hypothesis can recombine.
_CORPUS_TEXTS = [json.loads(line)["text"] for line in CORPUS.read_text(encoding="utf-8").splitlines()]

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
    # newer rows: providers, keyed names, assignments, escapes, headers, structures
    "glpat-", "npm_", "hf_", "sk-ant-api03-", "dckr_pat_", "hvs.", "SG.", "pypi-AgE", "xoxe-1-",
    "AccountKey=", "sig=", "dapi", "shpat_", "dop_v1_", "key-", "ghr_", "s.", "pat", "SK", "4b1d",
    "adafruit_key", "TWITTER_", "datadog", "= ", ": ", " := ", " => ", ", ", "\\n", "\\", "`", "(", ")",
    "[", "]", "{", "}", "${{ secrets.X }}", "$VAR", "password", "PASSWORD", "passwd", "DB_PASS", "pwd",
    "client_secret", "api_token", "Authorization: Bearer ", "Bearer ", "curl -u ", "machine h login u password ",
    "kind: Secret\ndata:\n  k: ", "<password>", "</password>", "redis://:", "@host", "Password=", ";",
    "-----BEGIN PGP PRIVATE KEY BLOCK-----", "-----END PGP PRIVATE KEY BLOCK-----", "Private-Lines: 2\n",
    "aB3dE6gH9jK2mN5pQ8sTuV1wX4yZ7bC0eF3hI6kL9n", "0123456789abcdef0123456789abcdef", "Tr0ub4dor-3x",
]
FRAGMENTS += [piece for text in _CORPUS_TEXTS[::7] for piece in (text[: len(text) // 2], text[len(text) // 2:])]

texts = st.one_of(
    st.text(),
    st.lists(st.one_of(st.sampled_from(FRAGMENTS), st.text(max_size=3)), max_size=30).map("".join),
)


def _line_shape(text: str) -> tuple[int, int, int]:
    return len(text.splitlines()), text.count("\n"), text.count("\r")


@settings(max_examples=300, deadline=None)
@given(texts, st.booleans())
@example("Token=A00=\\", False)  # the first pass leaves "Token=***\\"; row 13 once masked that again
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


def _effective(replace, matches) -> list[tuple[tuple[int, int], str]]:
    """The matches a rule really rewrites (its replace accepts them), leftmost first."""
    out, last = [], 0
    for m in matches:
        if m.start() < last:
            continue
        new = replace(m)
        if new is not None and new != m.group(0):
            out.append((m.span(), new))
            last = m.end()
    return out


@settings(max_examples=200, deadline=None)
@given(texts, st.booleans())
def test_scoped_scanning_equals_a_full_scan(text: str, code: bool) -> None:
    gate = _Gate(text)
    for i, rule in enumerate(RULES):
        pattern, replace = rule.pattern, rule.replace
        if code and rule.code_pattern is not None:
            pattern, replace = rule.code_pattern, rule.code_replace
        scoped = _rule_matches(i, rule, pattern is rule.code_pattern, gate)
        full = _effective(replace, pattern.finditer(text))
        assert _effective(replace, scoped or ()) == full, rule.label


@settings(max_examples=60, deadline=None)
@given(st.sampled_from(_CORPUS_TEXTS), st.booleans())
def test_corpus_texts_are_idempotent_in_both_modes(text: str, code: bool) -> None:
    once = mask_text(text, code=code)
    assert mask_text(once.text, code=code) == type(once)(once.text, 0)
    assert len(once.text.splitlines()) == len(text.splitlines())


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
