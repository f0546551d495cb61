"""Document types (knowledge §8.3): the spec's checks plus each rule in isolation."""

from __future__ import annotations

import pytest

from ragit.ingest.doctypes import TypeHints, path_type, resolve_doc_type, type_hints


def detect(path: str, text: str, kind: str = "markdown") -> str:
    return resolve_doc_type(path, type_hints(text), kind)


# ---- the checks of §8.3


def test_front_matter_type_beats_path_and_heading():
    assert detect("docs/adr/001.md", "---\ntype: glossary\n---\n# ADR\n") == "glossary"


def test_ddd_directory():
    assert detect("docs/ddd/order-context.md", "# Domain Model\n") == "ddd"


def test_front_matter_alias_specification():
    assert detect("docs/module/readme.md", "---\ntype: specification\n---\nText\n") == "spec"


def test_specs_directory_is_spec_not_srs():
    assert detect("docs/specs/cache-adapter.md", "# Cache Adapter\n") == "spec"


def test_requirements_directory_is_srs():
    assert detect("docs/requirements/cache.md", "Text\n") == "srs"


def test_korean_pbd_heading():
    assert detect("notes.md", "# 위상과 결속\n") == "pbd"


def test_korean_glossary_heading():
    assert detect("notes.md", "# 용어집\n") == "glossary"


def test_untyped_markdown_is_doc():
    assert detect("notes.md", "# Meeting notes\n") == "doc"


def test_code_files_are_code():
    assert detect("src/app.py", "# plan: a python comment\n", kind="code") == "code"


# ---- rule 1: front matter


@pytest.mark.parametrize(
    ("declared", "expected"),
    [
        ("adr", "adr"), ("PRD", "prd"), (" Srs ", "srs"), ("spec", "spec"), ("plan", "plan"),
        ("ddd", "ddd"), ("glossary", "glossary"), ("pbd", "pbd"),
        ("term", "glossary"), ("terms", "glossary"), ("specification", "spec"),
        ("pb", "pbd"), ("phase-binding", "pbd"), ("phase-bindings", "pbd"),
        ("phase-and-bindings", "pbd"), ("phase-binding-documents", "pbd"),
        ("phase-and-binding-documents", "pbd"), ('"adr"', "adr"),
    ],
)
def test_front_matter_types_and_aliases(declared, expected):
    assert type_hints(f"---\ntype: {declared}\n---\nbody\n").front_matter_type == expected


def test_unknown_front_matter_type_falls_through():
    hints = type_hints("---\ntype: memo\n---\n# Plan for Q3\n")
    assert hints == TypeHints(None, "plan")
    assert resolve_doc_type("docs/adr/x.md", hints) == "adr"


# ---- rule 2: path segments


@pytest.mark.parametrize(
    ("path", "expected"),
    [
        ("docs/adr/1.md", "adr"), ("architecture-decision/x.md", "adr"), ("a/decisions/x.md", "adr"),
        ("prd/x.md", "prd"), ("a/product-requirement/x.md", "prd"), ("product-requirements/x.md", "prd"),
        ("srs/x.md", "srs"), ("requirement/x.md", "srs"),
        ("spec/x.md", "spec"), ("specification/x.md", "spec"), ("specifications/x.md", "spec"),
        ("plan/x.md", "plan"), ("roadmap/x.md", "plan"), ("wbs/x.md", "plan"),
        ("ddd/x.md", "ddd"), ("domain-driven/x.md", "ddd"), ("domain-model/x.md", "ddd"),
        ("glossary/x.md", "glossary"), ("terms/x.md", "glossary"), ("vocabulary/x.md", "glossary"),
        ("pbd/x.md", "pbd"), ("pb/x.md", "pbd"), ("phase-binding/x.md", "pbd"),
        ("phase-bindings/x.md", "pbd"), ("phase-and-bindings/x.md", "pbd"),
        ("phase-binding-documents/x.md", "pbd"), ("phase-and-binding-documents/x.md", "pbd"),
        ("Docs/ADR/x.md", "adr"),
    ],
)
def test_path_segments(path, expected):
    assert path_type(path) == expected


def test_file_name_is_not_a_directory_segment():
    assert path_type("docs/auth.adr.md") is None
    assert path_type("adr") is None
    assert detect("docs/auth.adr.md", "Text\n") == "doc"


def test_partial_segment_does_not_match():
    assert path_type("docs/adrs/x.md") is None
    assert path_type("my-spec/x.md") is None


def test_path_rules_checked_in_type_order():
    assert path_type("specs/adr/x.md") == "adr"
    assert path_type("plan/requirements/x.md") == "srs"


# ---- rule 3: first heading


@pytest.mark.parametrize(
    ("heading", "expected"),
    [
        ("# ADR 12: storage", "adr"), ("# Architecture Decision", "adr"),
        ("# PRD", "prd"), ("# Product Requirements", "prd"),
        ("# SRS", "srs"), ("# Software Requirements", "srs"),
        ("# Spec", "spec"), ("# API Specification", "spec"), ("# 기능 명세", "spec"), ("# 상세 명세", "spec"),
        ("# Plan", "plan"), ("# 실행계획", "plan"), ("# Explanation", "plan"),
        ("# DDD", "ddd"), ("# Domain-Driven design", "ddd"),
        ("# Glossary", "glossary"), ("# 용어집", "glossary"),
        ("# PBD", "pbd"), ("# the pb list", "pbd"), ("# Phase and Binding Documents", "pbd"),
        ("# Phase and bindings", "pbd"), ("# 위상 및 결속", "pbd"),
        ("## Meeting", None), ("# pbx", None), ("# apb", None),
    ],
)
def test_heading_substrings(heading, expected):
    assert type_hints(f"intro\n{heading}\n").heading_type == expected


def test_only_the_first_heading_line_counts():
    assert type_hints("# Notes\n# Plan\n").heading_type is None


def test_heading_line_is_trimmed_and_taken_from_the_body():
    assert type_hints("   # Glossary\n").heading_type == "glossary"
    assert type_hints("---\ntitle: # plan\n---\n# Glossary\n").heading_type == "glossary"


def test_heading_rule_order():
    assert type_hints("# ADR for the plan\n").heading_type == "adr"
    assert type_hints("# Spec plan\n").heading_type == "spec"


def test_no_heading_no_front_matter_is_doc():
    assert type_hints("plain text\n") == TypeHints(None, None)
    assert detect("README.md", "plain text\n") == "doc"


def test_path_beats_heading():
    assert detect("docs/plan/x.md", "# Glossary\n") == "plan"
