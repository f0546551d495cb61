"""Secret masking: the knowledge §10.1 table, its examples, the measured corpora, and the
§10.3 summary."""

from __future__ import annotations

import copy
import json
import re
import sys
from pathlib import Path

import pytest

from ragit.security import rules as rule_table
from ragit.security.masking import (
    MASKING_VERSION,
    RULES,
    MaskResult,
    RedactionSummary,
    code_mode,
    mask_text,
    mask_value,
    masked_error,
    trace_masks,
)

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures"
sys.path.insert(0, str(FIXTURES / "secrets"))

import evaluate  # noqa: E402

KEY_BLOCK = (
    "-----BEGIN RSA PRIVATE KEY-----\nMIIEowIBAAKCAQEA\nq83hf8Hf\n-----END RSA PRIVATE KEY-----"
)
MASKED_KEY_BLOCK = "-----BEGIN RSA PRIVATE KEY-----\n***\n***\n-----END RSA PRIVATE KEY-----"
JWT = (
    "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0."
    "dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U"
)

# (input, output, n, code mode) — the §10.1 examples table, row by row.
EXAMPLES = [
    pytest.param(
        "OPENAI=sk-abcdefghijklmnopqrstuvwxyz123456 github=ghp_ABCDEFGHIJKLMNOPQRSTUVWXYZ12",
        "OPENAI=sk-abc*** github=ghp_AB***", 2, False, id="openai-and-github",
    ),
    pytest.param('api_key: "super-secret-value"', 'api_key: "sup***"', 1, False, id="kv-quoted"),
    pytest.param("token=abcdef123456", "token: abcd***", 1, False, id="kv-bare"),
    pytest.param("AKIAABCDEFGHIJKLMNOP", "AKIAAB***", 1, False, id="aws"),
    pytest.param("token = 5", "token: ***", 1, False, id="kv-short-value"),
    pytest.param(KEY_BLOCK, MASKED_KEY_BLOCK, 1, False, id="private-key-block"),
    pytest.param(
        "sk-proj-abcdefghijklmnopqrstuvwxyz0123", "sk-proj-***", 1, False, id="openai-scoped",
    ),
    pytest.param("gho_ABCDEFGHIJKLMNOPQRSTUVWXYZ12", "gho_AB***", 1, False, id="github-oauth"),
    pytest.param("SLACK=xoxb-123456789012-abcdefABCDEF", "SLACK=xoxb-***", 1, False, id="slack"),
    pytest.param(
        "stripe sk_live_4eC39HqLyjWDarjtT1zdp7dc", "stripe sk_live_***", 1, False, id="stripe",
    ),
    pytest.param(
        "key AIzaSyA1234567890abcdefghijklmnopqrstuv", "key AIza***", 1, False, id="google",
    ),
    pytest.param(f"Bearer {JWT}", "Bearer eyJ***", 1, False, id="jwt"),
    pytest.param(
        "postgres://app:hunter2@db.internal:5432/app",
        "postgres://app:***@db.internal:5432/app", 1, False, id="url-password",
    ),
    pytest.param(
        'export DB_PASSWORD="hunter2"', 'export DB_PASSWORD="***"', 1, False, id="env-export",
    ),
    pytest.param("API_KEY=abcdef123", "API_KEY=***", 1, False, id="env-api-key"),
    pytest.param("TOKEN=abc", "TOKEN=***", 1, False, id="env-token"),
    pytest.param(
        "GITHUB_TOKEN=ghp_ABCDEFGHIJKLMNOPQRSTUVWXYZ12", "GITHUB_TOKEN=ghp_AB***", 1, False,
        id="env-holding-github-pat",
    ),
    pytest.param(
        "task-management-system-overview-document",
        "task-management-system-overview-document", 0, False, id="no-secret",
    ),
    pytest.param(
        'token = request.headers["Authorization"]', 'token = request.headers["Authorization"]',
        0, True, id="code-mode-expression",
    ),
    pytest.param('API_KEY = "abcdef123456"', 'API_KEY = "***"', 1, True, id="code-mode-env"),
    pytest.param('secret = "hunter2hunter2"', 'secret = "***"', 1, True, id="code-mode-kv"),
]


@pytest.mark.parametrize(("text", "expected", "n", "code"), EXAMPLES)
def test_spec_example(text: str, expected: str, n: int, code: bool) -> None:
    assert mask_text(text, code=code) == MaskResult(expected, n)


@pytest.mark.parametrize(("text", "expected", "n", "code"), EXAMPLES)
def test_spec_example_masked_again_is_unchanged_and_uncounted(
    text: str, expected: str, n: int, code: bool
) -> None:
    assert mask_text(expected, code=code) == MaskResult(expected, 0)


def test_masking_version_is_3() -> None:
    # 1: the 13-row table; 2: the measured rule set (issue 14); 3: masking to a fixed point.
    assert MASKING_VERSION == "3"


def test_masking_runs_to_a_fixed_point() -> None:
    """A match that a later row's replacement uncovers is masked by the next pass, so masking
    masked text changes nothing (found by tests/property/test_masking_props.py)."""
    once = mask_text('Auth:TOKEN="TOKEN=0')
    assert once.text == 'Auth:***"TOKEN: ***' and once.count == 2
    assert mask_text(once.text).count == 0
    assert mask_text("Token=A00=\\").text == "Token=***\\"


SPEC_ROWS = [
    (1, "private_key_block"), (2, "openai_key"), (3, "openai_scoped_key"), (4, "github_pat"),
    (5, "github_token"), (6, "aws_access_key"), (7, "slack_token"), (8, "stripe_key"),
    (9, "google_api_key"), (10, "jwt"), (11, "url_password"), (12, "env_secret"), (13, "kv_secret"),
]


def test_rule_table_keeps_the_spec_rows_in_order() -> None:
    rows = [(rule.number, rule.label) for rule in RULES]
    positions = [rows.index(row) for row in SPEC_ROWS]
    assert positions == sorted(positions)
    assert rows[:10] == SPEC_ROWS[:10]
    # provider tokens before URLs and assignments, the generic row last
    first_token = rows.index((14, rule_table.TOKEN_FORMATS[0].label))
    assert positions[9] < first_token < positions[10]
    assert rows[-1][1] == "secret_assignment"


def test_rule_numbers_are_unique_and_labels_too() -> None:
    assert len({rule.number for rule in RULES}) == len(RULES)
    assert len({rule.label for rule in RULES}) == len(RULES)


def test_code_mode_variants() -> None:
    assert [rule.label for rule in RULES if rule.code_pattern is not None] == [
        "provider_keyed", "env_secret", "kv_secret", "secret_assignment"]


def test_the_table_has_at_least_150_formats_each_citing_a_source() -> None:
    ids = rule_table.all_format_ids()
    assert len(ids) >= 150 and len(set(ids)) == len(ids)
    sources = {rule_table.GITLEAKS, rule_table.VENDOR, rule_table.DETECT_SECRETS, rule_table.RAGIT}
    assert all(fmt.source in sources for fmt in rule_table.TOKEN_FORMATS)
    assert all(fmt.source in sources for fmt in rule_table.KEYED_FORMATS)
    assert all(rule.source in sources for rule in RULES)


def test_every_needle_is_lower_case_unless_marked() -> None:
    for rule in RULES:
        if not rule.exact_case:
            assert all(n == n.lower() for n in rule.needles), rule.label


def test_keyed_value_shapes_are_at_least_the_gate_minimum() -> None:
    from re import _parser  # type: ignore[attr-defined]

    from ragit.security.masking import _KEYED_MIN

    for fmt in rule_table.KEYED_FORMATS:
        assert _parser.parse(fmt.value).getwidth()[0] >= _KEYED_MIN, fmt.label


def test_most_token_rows_are_run_gated() -> None:
    from ragit.security.masking import _RUN_GATED

    tokens = {fmt.label for fmt in rule_table.TOKEN_FORMATS}
    gated = {RULES[i].label for i in _RUN_GATED}
    assert len(tokens & gated) >= len(tokens) - 3


# --- row by row -------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("sk-svcacct-ABCDEFGHIJKLMNOPQRSTUVWX", "sk-svcac***"),
        ("sk-admin-ABCDEFGHIJKLMNOPQRSTUVWX", "sk-admin***"),
        ("github_pat_11ABCDEFG0123456789_abcdefghij", "github***"),
        ("ghs_ABCDEFGHIJKLMNOPQRSTUVWXYZ12", "ghs_AB***"),
        ("xoxp-1234567890-abc", "xoxp-***"),
        ("rk_test_ABCDEFGHIJKLMNOP", "rk_test_***"),
        ("mysql://root:p%40ss:word@localhost/db", "mysql://root:***@localhost/db"),
    ],
)
def test_provider_tokens_keep_their_prefix(text: str, expected: str) -> None:
    assert mask_text(text) == MaskResult(expected, 1)


@pytest.mark.parametrize(
    "text",
    [
        "sk-short",  # fewer than 20 characters after the prefix
        "AKIAabcdefghijklmnop",  # lower case is not an AWS key id
        "https://example.com/path@v2",  # no user:password part
        "https://user@example.com",
        "xoxb-short",
        "eyJhbGciOiJIUzI1NiJ9",  # a lone JWT header
        "see the token budget below",
        "KEYBOARD LAYOUT",
    ],
)
def test_lookalikes_are_left_alone(text: str) -> None:
    assert mask_text(text) == MaskResult(text, 0)


def test_scoped_openai_key_is_row_3_not_row_2() -> None:
    # "proj" is too short for row 2, so row 3 keeps its longer prefix.
    assert mask_text("sk-proj-ABCDEFGHIJKLMNOPQRSTUVWXYZ").text == "sk-proj-***"


@pytest.mark.parametrize(
    ("header", "footer"),
    [
        ("-----BEGIN PRIVATE KEY-----", "-----END PRIVATE KEY-----"),
        ("-----BEGIN OPENSSH PRIVATE KEY-----", "-----END OPENSSH PRIVATE KEY-----"),
        ("-----BEGIN ENCRYPTED PRIVATE KEY-----", "-----END ENCRYPTED PRIVATE KEY-----"),
    ],
)
def test_private_key_block_variants(header: str, footer: str) -> None:
    text = f"key:\n{header}\nAAAA\nBBBB\nCCCC\n{footer}\nafter"
    assert mask_text(text) == MaskResult(f"key:\n{header}\n***\n***\n***\n{footer}\nafter", 1)


def test_private_key_body_keeps_every_line_break() -> None:
    text = "-----BEGIN PRIVATE KEY-----\nAAAA\r\n\nBBBB\n-----END PRIVATE KEY-----"
    masked = mask_text(text).text
    assert masked == "-----BEGIN PRIVATE KEY-----\n***\r\n***\n***\n-----END PRIVATE KEY-----"
    assert len(masked.splitlines()) == len(text.splitlines())


BODY = ["MIIEvQIBADANBgkqhkiG9w0BAQEFAASCBKcwggSjAgEAAoIBAQC7", "q83hf8HfAbCdEfGh0123456789abcdefghij"]


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        pytest.param(
            "x -----BEGIN PRIVATE KEY-----\n" + "\n".join(BODY) + "\n-----END PRIVATE KEY-----",
            "x -----BEGIN PRIVATE KEY-----\n***\n***\n-----END PRIVATE KEY-----", id="inline-after-text"),
        pytest.param(
            "-----BEGIN RSA PRIVATE KEY-----\r\n" + "\r\n".join(BODY) + "\r\n-----END RSA PRIVATE KEY-----\r\n",
            "-----BEGIN RSA PRIVATE KEY-----\r\n***\r\n***\r\n-----END RSA PRIVATE KEY-----\r\n", id="crlf"),
        pytest.param(
            "tls:\n  key: |\n    -----BEGIN EC PRIVATE KEY-----\n" + "".join(f"    {b}\n" for b in BODY)
            + "    -----END EC PRIVATE KEY-----\n",
            "tls:\n  key: |\n    -----BEGIN EC PRIVATE KEY-----\n    ***\n    ***\n    -----END EC PRIVATE KEY-----\n",
            id="yaml-block-scalar"),
        pytest.param(
            '{"private_key": "-----BEGIN PRIVATE KEY-----\\n' + "\\n".join(BODY) + '\\n-----END PRIVATE KEY-----\\n"}',
            '{"private_key": "-----BEGIN PRIVATE KEY-----\\n***\\n-----END PRIVATE KEY-----\\n"}',
            id="json-escaped-service-account"),
        pytest.param(
            'KEY = ("-----BEGIN OPENSSH PRIVATE KEY-----\\n"\n' + "".join(f'       "{b}\\n"\n' for b in BODY)
            + '       "-----END OPENSSH PRIVATE KEY-----\\n")',
            'KEY = ("-----BEGIN OPENSSH PRIVATE KEY-----\\n"\n       "***\\n"\n       "***\\n"\n'
            '       "-----END OPENSSH PRIVATE KEY-----\\n")', id="quoted-and-concatenated"),
        pytest.param(
            "-----BEGIN PGP PRIVATE KEY BLOCK-----\nVersion: GnuPG v2\n\n" + "\n".join(BODY)
            + "\n=AbCd\n-----END PGP PRIVATE KEY BLOCK-----",
            "-----BEGIN PGP PRIVATE KEY BLOCK-----\n***\n***\n***\n***\n***\n-----END PGP PRIVATE KEY BLOCK-----",
            id="pgp"),
        pytest.param(
            "$ head -3 id_rsa\n-----BEGIN RSA PRIVATE KEY-----\n" + "\n".join(BODY) + "\n(truncated)",
            "$ head -3 id_rsa\n-----BEGIN RSA PRIVATE KEY-----\n***\n***\n(truncated)", id="no-footer"),
    ],
)
def test_private_key_block_in_every_framing(text: str, expected: str) -> None:
    result = mask_text(text)
    assert result == MaskResult(expected, 1)
    assert len(result.text.splitlines()) == len(text.splitlines())
    assert mask_text(result.text) == MaskResult(expected, 0)


def test_a_public_key_is_not_a_secret() -> None:
    text = "-----BEGIN PUBLIC KEY-----\nMIIBIjANBgkqhkiG9w0BAQEFAAOCAQ8AMIIBCgKCAQEA\n-----END PUBLIC KEY-----"
    assert mask_text(text) == MaskResult(text, 0)


def test_two_private_key_blocks_count_twice() -> None:
    block = "-----BEGIN EC PRIVATE KEY-----\nAAAA\n-----END EC PRIVATE KEY-----"
    assert mask_text(f"{block}\ntext\n{block}").count == 2


@pytest.mark.parametrize(
    ("value", "shown"),
    [("7", ""), ("7a1b", ""), ("7a1b2", "7"), ("7a1b2c", "7a"), ("7a1b2c3", "7a1"),
     ("7a1b2c3d", "7a1b"), ("7a1b2c3d4e5f6g7h", "7a1b")],
)
def test_kv_secret_shows_k_characters(value: str, shown: str) -> None:
    # k = min(4, max(0, len(value part) - 4))
    assert mask_text(f"secret: {value}").text == f"secret: {shown}***"


def test_kv_secret_opening_quote_counts_towards_the_value_part() -> None:
    assert mask_text("apikey='abcdefgh'").text == "apikey: 'abc***'"
    assert mask_text('token="ab"').text == 'token: ***"'


def test_kv_secret_keeps_the_key_as_written() -> None:
    assert mask_text("Api-Key = zyxwvutsrq").text == "Api-Key: zyxw***"
    assert mask_text("X-Auth-Token: abcdefgh12").text == "X-Auth-Token: abcd***"


def test_kv_secret_separator_spanning_lines_is_kept() -> None:
    assert mask_text("token:\n  abcdefgh").text == "token:\n  abcd***"


def test_kv_secret_honours_re_case_folding() -> None:
    # re's IGNORECASE folds U+017F (long s) to "s" and U+212A (Kelvin) to "k".
    assert mask_text("\u017fecret=abcdefgh").text == "\u017fecret: abcd***"
    assert mask_text("to\u212aen=abcdefgh").text == "to\u212aen: abcd***"


def test_env_secret_needs_upper_case_name_at_line_start() -> None:
    assert mask_text("  SERVICE_TOKEN = abc123 # comment").text == "  SERVICE_TOKEN = *** # comment"
    assert mask_text("echo MY_PASSWORD=abc").count == 0  # not at line start; no row-13 key
    assert mask_text("PASSWORD_FILE=/etc/pw\nKEY_ID='k1'").text == "PASSWORD_FILE=***\nKEY_ID='***'"


def test_url_password_then_env_secret_both_count() -> None:
    result = mask_text("DATABASE_PASSWORD=postgres://app:hunter2@db/app")
    assert result == MaskResult("DATABASE_PASSWORD=***", 2)


def test_every_match_counts() -> None:
    text = "a=sk-abcdefghijklmnopqrstuvwxyz\nb=AKIAABCDEFGHIJKLMNOP\ntoken=abcdefgh"
    assert mask_text(text).count == 3


def test_reference_double_count_is_gone() -> None:
    # The reference matched its own output "token: abcd***" again and counted it.
    assert mask_text("token: abcd***") == MaskResult("token: abcd***", 0)


def test_partly_masked_value_is_masked_and_counted() -> None:
    assert mask_text("token=ab***cdefg") == MaskResult("token: ab*****", 1)


# --- code mode --------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "text",
    [
        'password = os.environ["DB_PASSWORD"]',
        "API_KEY = os.getenv('API_KEY')",
        "def rotate(token: str, secret: bytes) -> None:",
        "token = tokens[i]",
        "SECRET_KEY = settings.SECRET_KEY",
    ],
)
def test_code_mode_leaves_code_readable(text: str) -> None:
    assert mask_text(text, code=True) == MaskResult(text, 0)


def test_code_mode_keeps_the_separator_and_quote() -> None:
    assert mask_text("  token: 'a1b2c3d4e5'", code=True).text == "  token: '***'"
    assert mask_text('apiKey:"a1b2c3d4e5"', code=True).text == 'apiKey:"***"'


def test_code_mode_still_masks_provider_tokens() -> None:
    text = "client = Client(key=sk-abcdefghijklmnopqrstuvwxyz)"
    assert mask_text(text, code=True).text == "client = Client(key=sk-abc***)"


@pytest.mark.parametrize(
    "text",
    [
        "token = tokens[i]",
        "self.access_token = access_token",
        "token = self.sync_get_token()",
        "auth = (url.username, url.password)",
        'headers = {"Authorization": f"Bearer {token}"}',
        "password: ${{ secrets.DB_PASSWORD }}",
        "id-token: write",
        "inputs:\n  token:\n    description: the token\n    required: true",
    ],
)
def test_prose_mode_leaves_references_and_templates_alone(text: str) -> None:
    assert mask_text(text) == MaskResult(text, 0)


# --- mask_value -------------------------------------------------------------------------------


def test_mask_value_walks_dicts_and_lists_and_reports_paths() -> None:
    value = {
        "query": "why token=abcdefgh",
        "hits": [
            {"text": "nothing here", "excerpt": "API_KEY=abc", "score": 0.5},
            {"text": "AKIAABCDEFGHIJKLMNOP and sk-abcdefghijklmnopqrstuvwxyz", "flags": []},
        ],
        "count": 2,
        "ok": True,
        "none": None,
    }
    original = copy.deepcopy(value)
    masked, count, sources = mask_value(value)
    assert value == original
    assert count == 4
    assert sources == ["query", "hits[0].excerpt", "hits[1].text"]
    assert masked["hits"][1]["text"] == "AKIAAB*** and sk-abc***"
    assert masked["hits"][0]["score"] == 0.5 and masked["ok"] is True and masked["none"] is None


def test_mask_value_prefixes_paths_and_handles_top_level_lists() -> None:
    assert mask_value(["x", "token=abcdefgh"], path="goal")[2] == ["goal[1]"]
    assert mask_value(["x", "token=abcdefgh"])[2] == ["[1]"]
    assert mask_value({"a": {"b": "token=abcdefgh"}}, path="p")[2] == ["p.a.b"]


def test_mask_value_does_not_mask_dict_keys() -> None:
    masked, count, sources = mask_value({"token=abcdefgh": "plain"})
    assert masked == {"token=abcdefgh": "plain"} and count == 0 and sources == []


def test_mask_value_passes_scalars_through() -> None:
    assert mask_value(42) == (42, 0, [])
    assert mask_value("TOKEN=abc", path="goal") == ("TOKEN=***", 1, ["goal"])


def test_mask_value_masks_tuples_too() -> None:
    assert mask_value(("TOKEN=abc",)) == (("TOKEN=***",), 1, ["[0]"])


def test_mask_value_code_mode() -> None:
    value = {"text": "token = hunter22"}
    assert mask_value(value, code=True) == (value, 0, [])
    assert mask_value(value)[1] == 1


def test_mask_value_sources_are_deduplicated_in_first_seen_order() -> None:
    # Key "a.b" and the nested a -> b produce the same path.
    value = {"a.b": "TOKEN=abc", "a": {"b": "TOKEN=xyz"}, "c": "TOKEN=q"}
    assert mask_value(value)[1:] == (3, ["a.b", "c"])


# --- redaction summary (§10.3) ----------------------------------------------------------------


def test_redaction_summary_starts_empty() -> None:
    assert RedactionSummary().to_dict() == {"applied": False, "maskedCount": 0, "sources": []}


def test_redaction_summary_merges_counts_and_sources() -> None:
    summary = RedactionSummary()
    summary.add(1, ["query"])
    summary.add(0, [])
    summary.add(3, ["hits[0].text", "query", "hits[2].excerpt"])
    assert summary.to_dict() == {
        "applied": True,
        "maskedCount": 4,
        "sources": ["query", "hits[0].text", "hits[2].excerpt"],
    }


def test_redaction_summary_from_mask_value() -> None:
    summary = RedactionSummary()
    _, count, sources = mask_value({"goal": "TOKEN=abc"})
    summary.add(count, sources)
    assert summary.to_dict() == {"applied": True, "maskedCount": 1, "sources": ["goal"]}


# --- the formats issue 14 found leaking ------------------------------------------------------

ISSUE_14 = [
    # (text, code mode, secret part that must go)
    ("token glpat-Ab3dE6gH9jK2mN5pQ8sT", False, "Ab3dE6gH9jK2mN5pQ8sT"),
    ("runner glrt-Zx8cV7bN6mQ1wE2rT3yU", False, "Zx8cV7bN6mQ1wE2rT3yU"),
    ("ANTHROPIC_API_KEY=sk-ant-api03-" + "Qw3rTy7Ui9oP" * 7 + "Qw3rTy7Ui-AA", False, "Qw3rTy7Ui9oPQw3rTy7Ui9oP"),
    ("//registry.npmjs.org/:_authToken=npm_Gh5Jk8Lm2Np4Qr6St9Vw1Xy3Za7Bc0De2Fgh", False, "Gh5Jk8Lm2Np4Qr6St9Vw1Xy3Za7Bc0De2Fgh"),
    ("password = pypi-AgEIcHlwaS5vcmc" + "Ab1Cd2Ef3Gh4" * 6, False, "Ab1Cd2Ef3Gh4Ab1Cd2Ef3Gh4"),
    ('SENDGRID = "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"', True, "wX1yZ4bC7eF0hI3kL6nO9qR2tU5"),
    ("hook: https://hooks.slack.com/services/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", False, "aB3dE6gH9jK2mN5pQ8sTuV1w"),
    ("DefaultEndpointsProtocol=https;AccountName=acct;AccountKey=" + "aB3dE6gH9jK2mN5p" * 5 + "Qw==;EndpointSuffix=core.windows.net",
     False, "aB3dE6gH9jK2mN5paB3dE6gH9jK2mN5p"),
    ("https://acct.blob.core.windows.net/c/b?sv=2022-11-02&sr=b&sig=aB3dE6gH9jK2mN5pQ8sTuV1wX4yZ7bC0eF3hI6kL9n%3D",
     False, "aB3dE6gH9jK2mN5pQ8sTuV1wX4yZ7bC0eF3hI6kL9n"),
    ("VAULT_TOKEN=hvs.CAESIJ" + "aB3dE6gH9jK2mN5pQ8sTuV1w" * 4, False, "aB3dE6gH9jK2mN5pQ8sTuV1w"),
    ("from huggingface_hub import login; login('hf_aB3dE6gH9jK2mN5pQ8sTuV1wX4yZ7bC0eF')", True, "aB3dE6gH9jK2mN5pQ8sTuV1wX4yZ7bC0eF"),
    ("databricks token dapi0123456789abcdef0123456789abcdef-2", False, "0123456789abcdef0123456789abcdef"),
    ("docker login -p dckr_pat_aB3dE6gH9jK2mN5pQ8sTuV1wX4y", False, "aB3dE6gH9jK2mN5pQ8sTuV1wX4y"),
    ("bot = MTA5ODc2NTQzMjEwOTg3NjU0Mw.GhIjKl.aB3dE6gH9jK2mN5pQ8sTuV1wX4yZ7bC0eF3hI6k", False, "aB3dE6gH9jK2mN5pQ8sTuV1wX4yZ7bC0eF3hI6k"),
    ("TELEGRAM_BOT=1234567890:AAaB3dE6gH9jK2mN5pQ8sTuV1wX4yZ7bC0e", False, "aB3dE6gH9jK2mN5pQ8sTuV1wX4yZ7bC0e"),
    ("shop token 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", False, "0a1b2c3d4e5f60718293a4b5c6d7e8f9"),
    ("DO=dop_v1_" + "0a1b2c3d4e5f6071" * 4, False, "0a1b2c3d4e5f60710a1b2c3d4e5f6071"),
    ("MAILGUN_API_KEY=key-0a1b2c3d4e5f60718293a4b5c6d7e8f9", False, "0a1b2c3d4e5f60718293a4b5c6d7e8f9"),
    ('curl -H "Authorization: Bearer aB3dE6gH9jK2mN5pQ8sTuV1w" https://api', False, "aB3dE6gH9jK2mN5pQ8sTuV1w"),
    ("REDIS_URL=redis://:s3cr3tPassw0rd@cache:6379/0", False, "s3cr3tPassw0rd"),
    ("DB_PASS=Tr0ub4dor-3x", False, "Tr0ub4dor-3x"),
    ("database:\n  password: Tr0ub4dor-3x\n", False, "Tr0ub4dor-3x"),
    ('{"api_token": "a8f3k2m9x7q1w5e6r4t"}', False, "a8f3k2m9x7q1w5e6r4t"),
    ("cfg = {'slack_token': 'a8f3k2m9x7q1w5e6r4t'}", True, "a8f3k2m9x7q1w5e6r4t"),
    ("password=hunter2hunter", False, "hunter2hunter"),
    ("aws_secret_access_key = wJalrXUtnFEMI/K7MDENG/bPxRfiCY4aB3dE6gH9", False, "wJalrXUtnFEMI/K7MDENG/bPxRfiCY4aB3dE6gH9"),
]


@pytest.mark.parametrize(("text", "code", "secret"), ISSUE_14, ids=[t[:24] for t, _, _ in ISSUE_14])
def test_issue_14_formats_are_masked(text: str, code: bool, secret: str) -> None:
    result = mask_text(text, code=code)
    assert result.count >= 1
    assert not evaluate.leaked(secret, result.text), result.text
    assert mask_text(result.text, code=code) == MaskResult(result.text, 0)
    assert len(result.text.splitlines()) == len(text.splitlines())


# --- ordinary code is never mangled -----------------------------------------------------------

ORDINARY = [
    "self.access_token = access_token",
    "token = self.sync_get_token()",
    "password = os.environ['PASSWORD']",
    'password = os.environ["DB_PASSWORD"]',
    "API_KEY = os.getenv('API_KEY')",
    "SECRET_KEY = settings.SECRET_KEY",
    "def rotate(token: str, secret: bytes) -> None:",
    "token = tokens[i]",
    "password: str = Field(default=None, repr=False)",
    '\tPassword string `json:"password,omitempty"`',
    "const apiKey = process.env.API_KEY ?? '';",
    'TOKEN_TYPE = "bearer"',
    'API_KEY_HEADER = "X-API-Key"',
    'PASSWORD_FIELD = "password"',
    'auth_url = "https://example.com/oauth/token"',
    'headers["Authorization"] = f"Bearer {self.token}"',
    'url = f"{scheme}://{user}:{password}@{host}"',
    "max_tokens = 4096",
    'tokenizer = "bert-base-uncased"',
    'secret_name = "my-tls-secret"',
    "auth = (username, password)",
    'request.headers.get("authorization", "")',
    "cache_key = f'user:{user_id}'",
    "sk-learn is not a key; task-management-system-overview-document",
]


@pytest.mark.parametrize("text", ORDINARY)
def test_ordinary_code_is_never_masked_in_code_mode(text: str) -> None:
    assert mask_text(text, code=True) == MaskResult(text, 0)


@pytest.mark.parametrize(
    "text",
    ["self.access_token = access_token", "token = self.sync_get_token()",
     "password = os.environ['PASSWORD']"],
)
def test_the_spec_code_examples_are_left_alone_in_prose_mode_too(text: str) -> None:
    assert mask_text(text) == MaskResult(text, 0)


@pytest.mark.parametrize(
    ("path", "kind", "code"),
    [("src/app.py", "code", True), ("cmd/main.go", "code", True), ("web/app.ts", "code", True),
     ("config/settings.yaml", "code", False), ("deploy/values.yml", "code", False),
     ("package.json", "code", False), ("pyproject.toml", "code", False), ("app.ini", "code", False),
     ("config/.env.production", "code", False), ("prod.env", "code", False),
     ("scripts/deploy.sh", "code", False), ("Dockerfile", "code", False), ("docs/guide.md", "markdown", False)],
)
def test_code_mode_by_path(path: str, kind: str, code: bool) -> None:
    assert code_mode(path, kind) is code


def test_trace_names_the_rule_and_the_line() -> None:
    trace = trace_masks("a\nGITLAB=glpat-Ab3dE6gH9jK2mN5pQ8sT\n")
    assert trace == [("gitlab_token", 2, "glpat-Ab3dE6gH9jK2mN5pQ8sT")]


def test_masked_error_masks_message_details_and_recovery() -> None:
    from ragit.errors import RagitError

    error = RagitError("INPUT_INVALID", "bad token ghp_ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789",
                       {"value": "password=hunter2hunter", "nested": ["npm_Gh5Jk8Lm2Np4Qr6St9Vw1Xy3Za7Bc0De2Fgh"]},
                       "ragit query 'sk-abcdefghijklmnopqrstuvwxyz'")
    masked = masked_error(error).to_dict()
    text = json.dumps(masked)
    for secret in ("ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789", "hunter2hunter", "Gh5Jk8Lm2Np4Qr6St9Vw1Xy3Za7Bc0De2Fgh",
                   "abcdefghijklmnopqrstuvwxyz"):
        assert secret not in text


# --- the measured corpora -------------------------------------------------------------------


@pytest.fixture(scope="module")
def leak_report() -> evaluate.LeakReport:
    return evaluate.evaluate_leaks()


def test_leak_corpus_has_150_formats_in_6_framings(leak_report: evaluate.LeakReport) -> None:
    framings: dict[str, set[str]] = {}
    for case in leak_report.positives():
        framings.setdefault(case.format, set()).add(case.framing)
    full = [fmt for fmt, seen in framings.items() if len(seen) >= 6]
    assert len(full) >= 150
    assert set(rule_table.all_format_ids()) <= set(framings)  # every format has positive cases
    negatives = {case.format for case in leak_report.negatives()}
    assert set(framings) <= negatives  # and negative ones


def test_leak_corpus_recall_is_100_percent(leak_report: evaluate.LeakReport) -> None:
    assert [(c.id, c.problem) for c in leak_report.failures()] == []
    assert leak_report.recall() == 1.0


def test_leak_corpus_is_rebuilt_byte_for_byte(tmp_path: Path) -> None:
    import build_corpus

    records = build_corpus.build()
    text = "".join(json.dumps(r, ensure_ascii=False, sort_keys=True) + "\n" for r in records)
    assert text == (FIXTURES / "secrets" / "corpus.jsonl").read_text(encoding="utf-8")


def test_ordinary_corpus_false_masks_are_within_target() -> None:
    report = evaluate.evaluate_ordinary()
    assert report.total_lines >= 20_000
    assert set(report.lines) == {"python", "go", "typescript", "yaml"}
    assert report.per_10k() <= 1.0, report.false_masks()
    known = evaluate.load_known()
    assert {(m["file"], m["line"]) for m in report.known_masks()} == set(known)  # no stale entry


def test_ordinary_corpus_ships_licenses_and_sources() -> None:
    root = FIXTURES / "ordinary_code"
    sources = json.loads((root / "SOURCES.json").read_text(encoding="utf-8"))["files"]
    projects = {entry["project"] for entry in sources}
    assert all((root / project / "LICENSE").is_file() for project in projects)
    assert all((root / entry["fixture"]).is_file() and re.fullmatch(r"[0-9a-f]{40}", entry["commit"])
               for entry in sources)
