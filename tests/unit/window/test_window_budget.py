"""D.3 budget policy: every number of the table, plus the routes and catalogue of §3.1."""

from __future__ import annotations

import pytest

from ragit.window.budget import resolve_budget
from ragit.window.routes import ModelCatalog, ModelRoute, ProviderCapabilities

# window, tier, reserve, effective, warning, critical, tool-sum thr, per-tool cap, max summary, keep(10), aggressive
TABLE = [
    (10_000, "small", 2_000, 8_000, 4_000, 7_200, 160, 500, 2_000, 5, 3),
    (128_000, "small", 20_000, 108_000, 54_000, 97_200, 2_160, 6_400, 6_400, 5, 3),
    (200_000, "small", 20_000, 180_000, 90_000, 162_000, 3_600, 10_000, 10_000, 5, 3),
    (202_752, "small", 20_000, 182_752, 91_376, 164_476, 3_655, 10_137, 10_137, 5, 3),
    (400_000, "standard", 20_000, 380_000, 266_000, 342_000, 7_600, 20_000, 12_000, 8, 4),
    (1_000_000, "large", 20_000, 980_000, 784_000, 882_000, 19_600, 50_000, 12_000, 10, 5),
]


def row(window: int) -> tuple:
    p = resolve_budget(window=window)
    return (
        p.window, p.tier.name, p.output_reserve, p.effective, p.warning, p.critical, p.tool_summary_threshold,
        p.per_tool_result_cap, p.max_summary_tokens, p.keep_recent(10), p.aggressive_keep_recent(10),
    )


@pytest.mark.parametrize("expected", TABLE, ids=[str(r[0]) for r in TABLE])
def test_D_3_table_row(expected):
    assert row(expected[0]) == expected


def test_D_3_a_200k():
    assert row(200_000) == TABLE[2]


def test_D_3_b_400k():
    assert row(400_000) == TABLE[4]


def test_D_3_c_1m_and_native_trigger():
    assert row(1_000_000) == TABLE[5]
    assert resolve_budget(window=1_000_000).native_compaction_trigger == 784_000
    assert resolve_budget(window=200_000).native_compaction_trigger == 90_000
    assert resolve_budget(window=10_000).native_compaction_trigger == 50_000


def test_D_3_d_small_window_and_zero_window():
    p = resolve_budget(window=10_000)
    assert (p.output_reserve, p.effective) == (2_000, 8_000)
    zero = resolve_budget(window=0)
    assert zero.window == 1 and zero.effective == 1 and zero.warning == 1 and zero.critical == 2
    assert resolve_budget(window=-5).window == 1


def test_D_3_e_unknown_model_defaults():
    p = resolve_budget(model="no-such-model")
    assert p.window == 200_000 and p.estimated is True
    assert p.default_tools_overhead == 10_000
    assert p.apply_margin(100) == 120
    assert resolve_budget().estimated is True
    assert resolve_budget(window=200_000).estimated is False


def test_D_3_f_input_cap_bounds_the_budget():
    catalog = ModelCatalog({"big": {"window": 400_000, "input_cap": 150_000, "provider": "p"}})
    p = resolve_budget(model="big", catalog=catalog)
    assert (p.effective, p.warning, p.critical) == (150_000, 105_000, 135_000)
    assert p.provider == "p" and p.estimated is False


def test_D_3_constants():
    p = resolve_budget()
    assert p.chars_per_token == 4 and p.absolute_ceiling == 200_000 and p.safety_margin == 1.2
    assert (p.summary_input_max_chars, p.summary_input_head_chars, p.summary_input_tail_chars) == (6_000, 4_000, 1_500)
    assert (p.tool_args_max_chars, p.tool_args_head_chars, p.tool_args_tail_chars) == (1_500, 1_200, 300)
    assert p.summary_attempts == 3 and p.tool_arg_leaf_chars == 200 and p.min_tool_result_chars == 200


def test_D_3_summary_tokens_with_source_size():
    p = resolve_budget(window=1_000_000)  # max summary 12,000
    assert p.summary_output_tokens() == 12_000
    assert p.summary_output_tokens(source_tokens=30_000) == 6_000
    assert p.summary_output_tokens(source_tokens=1_000) == 2_000
    assert p.summary_output_tokens(source_tokens=10_000_000) == 12_000


def test_D_3_keep_recent_caps():
    assert resolve_budget(window=200_000).keep_recent(3) == 3
    assert resolve_budget(window=1_000_000).keep_recent(50) == 50
    assert resolve_budget(window=1_000_000).aggressive_keep_recent(4) == 3


def test_D_3_bad_catalogue_entry_falls_back():
    catalog = ModelCatalog({"weird": {"window": "lots"}, "float": {"window": 1.5e5}})
    for model in ("weird", "float"):
        p = resolve_budget(model=model, catalog=catalog)
        assert p.window == 200_000 and p.estimated is True
    assert resolve_budget(window=12.5).window == 200_000


def test_routes_capabilities_and_reserve_from_catalogue():
    catalog = ModelCatalog({
        "m": {"window": 128_000, "output_reserve": 8_000, "reserve_is_planning_only": True, "source": "subscription",
              "capabilities": {"server_compaction": True, "include_date": False}},
    })
    route = catalog.resolve("m", provider="prov")
    assert route == ModelRoute(
        model="m", provider="prov", source="subscription", window=128_000, input_cap=None, output_reserve=8_000,
        reserve_is_planning_only=True, estimated=False,
        capabilities=ProviderCapabilities(server_compaction=True, include_date=False),
    )
    p = resolve_budget(model="m", catalog=catalog)
    assert p.output_reserve == 8_000 and p.effective == 120_000
    assert p.capabilities.server_compaction is True


def test_default_capabilities():
    caps = ProviderCapabilities()
    assert (caps.server_compaction, caps.tool_result_clearing, caps.max_cache_breakpoints, caps.include_date,
            caps.contract_known, caps.allow_opaque_rewrite) == (False, False, 4, True, True, False)


def test_policy_to_dict_is_json_ready():
    d = resolve_budget(window=400_000).to_dict()
    assert d["tier"] == "standard" and d["warning"] == 266_000 and d["keep_recent_cap"] == 8
