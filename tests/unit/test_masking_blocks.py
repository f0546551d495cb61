"""A long text that rows rewrite keeps its masking gate by block of lines, reading again only the
blocks a rewrite touched (``masking._BlockGate``). It must mask exactly as the gate read whole
after every rewrite does: the same text and count on the leak corpus joined into long texts
(rewrites near, across and inside block boundaries: blocks down to one character), in text and
code mode, and on this repository's files."""

from __future__ import annotations

import random
import sys
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ragit.security import masking

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "fixtures" / "secrets"))
from evaluate import load_corpus  # noqa: E402

_ROOT = Path(__file__).resolve().parents[2]
_CASES = [case["text"] for case in load_corpus()]
_SEPARATORS = ["\n", "\n\n", " ", "\r\n", "\\n", "", "\t", "\n# ", "\n  key = ", "\u2028"]


def _whole(text: str, code: bool, monkeypatch: pytest.MonkeyPatch) -> masking.MaskResult:
    """The gate read whole after every rewrite (how every text shorter than the threshold is masked)."""
    with monkeypatch.context() as m:
        m.setattr(masking, "_BLOCKED_MIN", 10**12)
        return masking.mask_text(text, code=code)


def _blocked(text: str, code: bool, block: int, monkeypatch: pytest.MonkeyPatch) -> masking.MaskResult:
    with monkeypatch.context() as m:
        m.setattr(masking, "_BLOCKED_MIN", 0)
        m.setattr(masking, "_BLOCK", block)
        return masking.mask_text(text, code=code)


def test_the_block_gate_is_used_on_a_long_rewritten_text(monkeypatch: pytest.MonkeyPatch) -> None:
    made = []
    real = masking._BlockGate.edited

    def edited(self, text, edits):
        made.append(len(edits))
        return real(self, text, edits)

    monkeypatch.setattr(masking._BlockGate, "edited", edited)
    text = "\n".join(_CASES)
    assert len(text) >= masking._BLOCKED_MIN
    assert masking.mask_text(text).count > 100
    assert len(made) > 100  # each rewrite after the first updated the blocks


@pytest.mark.parametrize("code", [False, True])
def test_the_whole_corpus_as_one_text(code: bool, monkeypatch: pytest.MonkeyPatch) -> None:
    text = "\n".join(_CASES)
    whole = _whole(text, code, monkeypatch)
    for block in (1, 13, 4096):
        assert _blocked(text, code, block, monkeypatch) == whole, block


@settings(max_examples=150, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), pieces=st.integers(1, 30), block=st.integers(1, 600),
       code=st.booleans(), rotate=st.booleans())
def test_corpus_cases_joined_at_random(seed: int, pieces: int, block: int, code: bool, rotate: bool) -> None:
    rnd = random.Random(seed)
    text = "".join(rnd.choice(_CASES) + rnd.choice(_SEPARATORS) for _ in range(pieces))
    if rotate:  # start and end in the middle of a case (a key block cut in two, a token at the end)
        at = rnd.randrange(len(text) + 1)
        text = text[at:] + text[:at]
    with pytest.MonkeyPatch.context() as m:
        assert _blocked(text, code, block, m) == _whole(text, code, m)


def test_this_repositorys_files(monkeypatch: pytest.MonkeyPatch) -> None:
    for path in sorted((_ROOT / "src" / "ragit" / "security").glob("*.py")) + sorted((_ROOT / "tests").glob("unit/test_mask*.py")):
        text = path.read_text(encoding="utf-8")
        for code in (False, True):
            assert _blocked(text, code, 97, monkeypatch) == _whole(text, code, monkeypatch), path


_PIECES = ["\n", "ghp_" + "a1B2" * 9, "sk-ant-api03-" + "x" * 40, " password = 'hunter22hunter22' ", "AKIA" + "Q" * 16,
           "token", "-----BEGIN RSA PRIVATE KEY-----", "\\n", "https://user:pw@host/", "***", "plain words ", "\t"]


def _edited_text(text: str, edits: list[tuple[int, int, str]]) -> str:
    out, last = [], 0
    for s, e, new in edits:
        out += (text[last:s], new)
        last = e
    return "".join(out) + text[last:]


@settings(max_examples=300, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), block=st.integers(1, 120))
def test_edited_blocks_answer_as_the_gate_of_the_new_text(seed: int, block: int) -> None:
    """Random edits (newlines taken or added, edits ending at a block's start, empty ones): the
    kept and re-read blocks cover the new text in order, each starting a line, and answer every
    question the gate is asked as the gate of the new text read whole does."""
    rnd = random.Random(seed)
    text = "".join(rnd.choice(_PIECES) for _ in range(rnd.randint(1, 60)))
    with pytest.MonkeyPatch.context() as m:
        m.setattr(masking, "_BLOCK", block)
        gate = masking._BlockGate.of(text)
        for _ in range(3):
            cuts = sorted(rnd.sample(range(len(text) + 1), min(len(text) + 1, 2 * rnd.randint(0, 4))))
            edits = [(cuts[i], cuts[i + 1], rnd.choice(_PIECES + ["", "***"])) for i in range(0, len(cuts) - 1, 2)]
            if rnd.random() < 0.3:  # an empty edit: text inserted
                at = rnd.randint(0, len(text))
                edits = sorted([e for e in edits if not e[0] <= at < e[1] and e[1] != at] + [(at, at, "***")])
            new = _edited_text(text, edits)
            gate = gate.edited(new, [(s, e, len(n)) for s, e, n in edits])
            text = new
            assert gate.text == text
            ends = gate.starts[1:] + [len(text)]
            assert all(a < b for a, b in zip(gate.starts, ends))
            assert (gate.starts[:1] == [0]) if text else gate.starts == []
            assert all(text[a - 1] == "\n" for a in gate.starts[1:])
            assert [b.runs.text for b in gate.blocks] == [text[a:b] for a, b in zip(gate.starts, ends)]
            whole = masking._Gate(text)
            assert gate.present(masking._SCREEN_GROUPS) == whole.present(masking._SCREEN_GROUPS)
            runs, truth = gate.runs(), whole.runs()
            assert bool(runs.spans) == bool(truth.spans)
            assert runs.present == truth.present
            needles = tuple(sorted(masking._RUN_NEEDLES))
            assert runs.starts(needles) == truth.starts(needles)
            assert runs.spans_with(needles) == truth.spans_with(needles)
