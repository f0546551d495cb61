"""The gate's light config reader agrees with the TOML parser on every file ``ragit config`` writes,
and hands any other form to tomllib (ragit.gate.hook.settings)."""

from __future__ import annotations

import tomllib

from hypothesis import given, settings as hsettings, strategies as st

from ragit.config import defaults, render_config
from ragit.gate.hook import _simple_values, settings

PATHS = st.text(st.characters(whitelist_categories=("Ll", "Lu", "Nd"), whitelist_characters="._-/ #'"),
                min_size=1, max_size=30)


@hsettings(max_examples=200, deadline=None)
@given(mode=st.sampled_from(["warn", "block"]), working=PATHS)
def test_agrees_with_tomllib_on_written_configs(mode, working):
    config = defaults()
    config.data["gate"]["mode"] = mode
    config.data["memory"]["working_dir"] = working
    text = render_config(config)
    data = tomllib.loads(text)
    got = _simple_values(text)
    assert got is not None
    assert got[("gate", "mode")] == data["gate"]["mode"]
    assert got[("memory", "working_dir")] == data["memory"]["working_dir"]


def test_other_forms_go_to_tomllib(tmp_path):
    for text in ('gate = { mode = "block" }\n', 'gate.mode = "block"\n', '[gate]\nmode = "a\\"b"\n'):
        assert _simple_values(text) is None
    (tmp_path / ".ragit").mkdir()
    (tmp_path / ".ragit" / "config.toml").write_text('gate = { mode = "block" }\n')
    assert settings(str(tmp_path)) == ("block", ".ragit/memory/working")
    (tmp_path / ".ragit" / "config.toml").write_text('[gate]\nmode = "loud"\n')
    assert settings(str(tmp_path))[0] == "warn"
