"""Secret masking: the knowledge §10.1 table, its examples, and the §10.3 summary."""

from __future__ import annotations

import copy

import pytest

from ragit.security.masking import (
    MASKING_VERSION,
    RULES,
    MaskResult,
    RedactionSummary,
    mask_text,
    mask_value,
)

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


def test_masking_version_is_1() -> None:
    assert MASKING_VERSION == "1"


def test_rule_table_matches_spec_order() -> None:
    assert [(rule.number, rule.label) for rule in RULES] == [
        (1, "private_key_block"), (2, "openai_key"), (3, "openai_scoped_key"),
        (4, "github_pat"), (5, "github_token"), (6, "aws_access_key"), (7, "slack_token"),
        (8, "stripe_key"), (9, "google_api_key"), (10, "jwt"), (11, "url_password"),
        (12, "env_secret"), (13, "kv_secret"),
    ]


def test_only_rows_12_and_13_have_a_code_mode() -> None:
    assert [rule.number for rule in RULES if rule.code_pattern is not None] == [12, 13]


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


def test_private_key_header_must_start_a_line() -> None:
    text = "x -----BEGIN PRIVATE KEY-----\nAAAA\n-----END PRIVATE KEY-----"
    assert mask_text(text).count == 0


def test_two_private_key_blocks_count_twice() -> None:
    block = "-----BEGIN EC PRIVATE KEY-----\nAAAA\n-----END EC PRIVATE KEY-----"
    assert mask_text(f"{block}\ntext\n{block}").count == 2


@pytest.mark.parametrize(
    ("value", "shown"),
    [("a", ""), ("abcd", ""), ("abcde", "a"), ("abcdef", "ab"), ("abcdefg", "abc"),
     ("abcdefgh", "abcd"), ("abcdefghijklmnop", "abcd")],
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
    assert mask_text("  token: 'abcdefgh'", code=True).text == "  token: '***'"
    assert mask_text('apiKey:"abcdefgh"', code=True).text == 'apiKey:"***"'


def test_code_mode_still_masks_provider_tokens() -> None:
    text = "client = Client(key=sk-abcdefghijklmnopqrstuvwxyz)"
    assert mask_text(text, code=True).text == "client = Client(key=sk-abc***)"


def test_prose_mode_masks_unquoted_assignments() -> None:
    assert mask_text("token = tokens[i]").text == "token: toke***"


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
    value = {"text": 'token = request.headers["Authorization"]'}
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
