"""Document types (knowledge §8.3): front matter, then path segments, then the first heading.

Detection is split in two so the pipeline can cache the text-dependent part per blob
(``type_hints``) while the path-dependent part (``resolve_doc_type``) is recomputed for every
path the blob appears under (renames and copies keep the blob).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from .frontmatter import FrontMatter, parse_front_matter

MARKDOWN_TYPES = ("adr", "prd", "srs", "spec", "plan", "ddd", "glossary", "pbd")
DEFAULT_TYPE = "doc"
CODE_TYPE = "code"

_PBD_NAMES = (
    "pbd", "pb", "phase-binding", "phase-bindings", "phase-and-bindings",
    "phase-binding-documents", "phase-and-binding-documents",
)

_FRONT_MATTER_ALIASES: dict[str, str] = {
    **{t: t for t in MARKDOWN_TYPES},
    "term": "glossary",
    "terms": "glossary",
    "specification": "spec",
    **{name: "pbd" for name in _PBD_NAMES},
}

# Directory segments, checked type by type in this order.
_PATH_SEGMENTS: tuple[tuple[str, frozenset[str]], ...] = (
    ("adr", frozenset({"adr", "architecture-decision", "decisions"})),
    ("prd", frozenset({"prd", "product-requirement", "product-requirements"})),
    ("srs", frozenset({"srs", "requirement", "requirements"})),
    ("spec", frozenset({"spec", "specs", "specification", "specifications"})),
    ("plan", frozenset({"plan", "roadmap", "wbs"})),
    ("ddd", frozenset({"ddd", "domain-driven", "domain-model"})),
    ("glossary", frozenset({"glossary", "terms", "vocabulary"})),
    ("pbd", frozenset(_PBD_NAMES)),
)

# Substring tests on the lower-cased first heading line, in order. They misfire
# ("explanation" contains "plan"); kept for parity with the reference.
_HEADING_SUBSTRINGS: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("adr", ("adr", "architecture decision")),
    ("prd", ("prd", "product requirements")),
    ("srs", ("srs", "software requirements")),
    ("spec", ("spec", "specification", "기능 명세", "상세 명세")),
    ("plan", ("plan", "실행계획")),
    ("ddd", ("ddd", "domain-driven")),
    ("glossary", ("glossary", "용어집")),
)
_PBD_WORD = re.compile(r"\b(?:pbd|pb)\b")
_PBD_PHRASES = ("phase and binding documents", "phase and bindings", "위상과 결속", "위상 및 결속")


@dataclass(frozen=True)
class TypeHints:
    """What the (masked) text alone says about the type; None means "no opinion"."""

    front_matter_type: str | None
    heading_type: str | None


def _heading_type(body: str) -> str | None:
    for line in body.split("\n"):
        stripped = line.strip()
        if not stripped.startswith("#"):
            continue
        lowered = stripped.lower()
        for doc_type, needles in _HEADING_SUBSTRINGS:
            if any(needle in lowered for needle in needles):
                return doc_type
        if _PBD_WORD.search(lowered) or any(phrase in lowered for phrase in _PBD_PHRASES):
            return "pbd"
        return None
    return None


def type_hints(masked_text: str, front: FrontMatter | None = None) -> TypeHints:
    """Front-matter and first-heading hints of a Markdown text (a pure function of the text;
    ``front`` is its ``parse_front_matter`` when the caller has it already)."""
    if front is None:
        front = parse_front_matter(masked_text)
    declared = front.fields.get("type")
    fm_type = _FRONT_MATTER_ALIASES.get(declared.strip().lower()) if declared is not None else None
    return TypeHints(fm_type, _heading_type(front.body))


def path_type(path: str) -> str | None:
    """Type implied by a whole directory segment of the path (the file name never counts)."""
    directories = set(path.lower().split("/")[:-1])
    for doc_type, names in _PATH_SEGMENTS:
        if directories & names:
            return doc_type
    return None


def resolve_doc_type(path: str, hints: TypeHints, kind: str = "markdown") -> str:
    """The document type: ``code`` for code files, else the first rule of §8.3 that matches."""
    if kind == "code":
        return CODE_TYPE
    return hints.front_matter_type or path_type(path) or hints.heading_type or DEFAULT_TYPE
