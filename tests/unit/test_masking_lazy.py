"""Lazily compiled rows (issue 15) mask exactly as the eager table does.

The rows compile on first use and the run-gate analysis parses each source once without
compiling; these tests pin both to the eager behaviour: the compiled flags, the gate sets,
and the masked output of the leak and ordinary-code corpora against a plain in-order
``finditer`` over every row, compiled up front.
"""

from __future__ import annotations

import re
import sys
from pathlib import Path

import pytest

from ragit.security import masking
from ragit.security.masking import RULES, _apply, _Gate, mask_text, trace_masks

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "fixtures" / "secrets"))
from evaluate import load_corpus, ordinary_files  # noqa: E402


def _forget_compiled() -> None:
    """Drop every row's cached pattern, as in a fresh process."""
    for rule in RULES:
        rule.__dict__.pop("pattern", None)
        rule.__dict__.pop("code_pattern", None)


def _eager_mask(text: str, code: bool) -> tuple[str, int]:
    """The table applied without the pre-scans: every row's full ``finditer``, in order (a
    row that ``requires`` a word still needs it: that is the row's meaning, not a gate)."""
    count = 0
    for rule in RULES:
        if rule.requires and rule.requires not in _Gate(text).lowered:
            continue
        pattern, replace = rule.pattern, rule.replace
        if code and rule.code_pattern is not None and rule.code_replace is not None:
            pattern, replace = rule.code_pattern, rule.code_replace
        text, hits = _apply(text, pattern.finditer(text), replace, rule.label, None)
        count += hits
    return text, count


def test_derived_flags_are_the_compiled_flags() -> None:
    for i, flags in masking._RUN_GATED_FLAGS.items():
        assert flags == re.compile(RULES[i].regex, RULES[i].flags).flags, RULES[i].label


def test_gate_analysis_matches_the_compiled_patterns() -> None:
    """``_run_width`` on a source equals it on the compiled pattern's source and flags."""
    for rule in RULES:
        if rule.family == "keyed" or rule.code_regex is not None:
            continue
        compiled = rule.pattern
        assert masking._run_width(rule.regex, rule.flags) == masking._run_width(compiled.pattern, compiled.flags)


def test_a_question_without_secrets_compiles_no_row() -> None:
    _forget_compiled()
    assert mask_text("how are routes matched").count == 0
    assert mask_text("how are routes matched", code=True).count == 0
    compiled = [rule.label for rule in RULES if "pattern" in rule.__dict__ or "code_pattern" in rule.__dict__]
    assert compiled == []


def test_a_token_compiles_only_its_rows() -> None:
    _forget_compiled()
    text = "use ghp_" + "A1b2C3d4" * 5 + " here"
    assert mask_text(text).text == "use ghp_A1***" + " here"
    compiled = {rule.label for rule in RULES if "pattern" in rule.__dict__}
    assert "github_pat" in compiled and len(compiled) <= 3


_LEAK_TEXTS = [(record["text"], record["mode"] == "code") for record in load_corpus()]


@pytest.mark.parametrize("code", [False, True])
def test_lazy_equals_eager_on_the_leak_corpus(code: bool) -> None:
    _forget_compiled()
    lazy = [(mask_text(text, code=code), trace_masks(text, code=code)) for text, _ in _LEAK_TEXTS]
    for (text, _), (result, trace) in zip(_LEAK_TEXTS, lazy):
        assert (result.text, result.count) == _eager_mask(text, code)
        assert len(trace) == result.count


@pytest.mark.parametrize("code", [False, True])
def test_lazy_equals_eager_on_the_code_corpus(code: bool) -> None:
    _forget_compiled()
    for path, text in ordinary_files():
        result = mask_text(text, code=code)
        assert (result.text, result.count) == _eager_mask(text, code), path


def test_stored_gate_table_is_current() -> None:
    """``gatetable.py`` is what the analysis computes for these rows on this Python, and it is used.

    After changing a row: ``python -c "from ragit.security.masking import write_gate_table as w; w()"``.
    """
    from ragit.security import gatetable

    assert gatetable.FINGERPRINT == masking.gate_fingerprint(), "regenerate gatetable.py (see docstring)"
    assert masking._GATE_TABLE.read_text(encoding="utf-8") == masking.render_gate_table()
    gated = masking._run_gated()
    token_start = masking._token_start_needles(gated)
    assert masking._RUN_GATED_FLAGS == gated
    assert masking._TOKEN_START_NEEDLES == token_start
    assert masking._RUN_TRIE_SOURCES == masking._run_tries(gated, token_start)
    by_needle = {n: tuple(i for i in sorted(gated) if n in RULES[i].needles) for i in gated for n in RULES[i].needles}
    assert masking._RUN_RULES_BY_NEEDLE == by_needle


def test_a_stale_gate_table_is_recomputed(monkeypatch: pytest.MonkeyPatch) -> None:
    """Rows that no longer match the stored fingerprint get the analysis computed afresh."""
    from ragit.security import gatetable

    monkeypatch.setattr(gatetable, "FINGERPRINT", "stale")
    monkeypatch.setattr(gatetable, "RUN_GATED_FLAGS", {})
    gated, needles, tries = masking._gate_analysis()
    assert gated == masking._RUN_GATED_FLAGS and needles == masking._TOKEN_START_NEEDLES
    assert tries == masking._RUN_TRIE_SOURCES


@pytest.mark.parametrize("text", [
    "plain prose with no key characters at all",
    "a pass-word: see https://example.org and <add key='x'> with -u\tuser",
    "curl -u=me --user you -----BEGIN private-lines: data: </b> xoxb-1 pw dsn",
    "tab\there, equals = there, colon: only",
    "x = -u + 1; y - v; a-u b",  # "-u" present (its group searched), none of its words
    "only - dashes -- and ---- here, no option",  # "-" without "-u": the "-u" group skipped
    "pip install --user pkg; curl -u me:pw",
])
def test_screen_groups_record_what_word_searches_find(text: str) -> None:
    """Gate words grouped by a key (skipped where the key is absent) are found as a
    search of every word finds them; what is recorded for :meth:`_Gate.has` agrees with a search."""
    assert sorted(w for _, group in masking._SCREEN_GROUPS for w in group) == list(masking._SCREEN_WORDS)
    assert all(key in word for key, group in masking._SCREEN_GROUPS if key for word in group)
    gate = _Gate(text)
    found = gate.present(masking._SCREEN_GROUPS)
    assert found == {w for w in masking._SCREEN_WORDS if w in gate.lowered}
    assert all(gate._words[w] == (w in gate.lowered) for w in masking._SCREEN_WORDS if w in gate._words)
    assert all(gate.has(w) == (w in gate.lowered) for w in masking._SCREEN_WORDS)


def test_a_needle_is_looked_for_only_at_token_starts_when_its_row_rules_out_every_letter_and_digit_before() -> None:
    """``(?<![A-Za-z])`` lets a digit precede the match, so its needles are looked for anywhere
    in a run (hypothesis found ``0ACCOUNTKEY=<key>`` masked by a full scan, not by the gated one)."""
    assert masking._head_starts_a_token(r"(?<![A-Za-z0-9_])", 0)
    assert not masking._head_starts_a_token(r"(?i)(?<![A-Za-z])", 0)
    assert "accountkey" not in masking._TOKEN_START_NEEDLES
    key = "Zm9vYmFyYmF6cXV4cXV1eDEyMzQ1Njc4OTA="
    for text in (f"0AccountKey={key}", f"x=1;9SharedAccessKey={key}", f"AccountKey={key}"):
        assert key not in masking.mask_text(text).text
