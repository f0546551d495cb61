"""Structure-aware code chunking (knowledge §8.6).

Structure comes from the raw text (Python's ``ast``, or a tree-sitter grammar when one is
importable); chunk text comes from the same lines of the masked text, which has the same line
count. Files are partitioned at top-level definitions so every line lands in exactly one unit;
big classes are split into a header plus one unit per method, and any unit still too big is
cut into overlapping line windows.
"""

from __future__ import annotations

import ast
import warnings
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

from .chunks import Chunk
from .text import split_lines

@dataclass(frozen=True)
class CodeLimits:
    """How big a code chunk may get: a unit over ``unit_lines`` lines or ``chunk_chars``
    characters is cut into windows of ``window_lines`` lines every ``window_step``."""

    unit_lines: int
    chunk_chars: int
    window_lines: int
    window_step: int


# Per chunker version (knowledge §8.6 defines "1"; "2" halves every limit, docs/evaluation.md).
LIMITS: dict[str, CodeLimits] = {"1": CodeLimits(80, 2400, 60, 50), "2": CodeLimits(40, 1200, 30, 25)}

LINES_CHUNKER = "lines"

# extension -> (language in the chunker name, tree-sitter grammar key)
_LANGUAGES: dict[str, tuple[str, str]] = {
    ".py": ("python", "python"),
    ".pyi": ("python", "python"),
    ".go": ("go", "go"),
    ".java": ("java", "java"),
    ".js": ("javascript", "javascript"),
    ".jsx": ("javascript", "javascript"),
    ".mjs": ("javascript", "javascript"),
    ".cjs": ("javascript", "javascript"),
    ".ts": ("typescript", "typescript"),
    ".mts": ("typescript", "typescript"),
    ".cts": ("typescript", "typescript"),
    ".tsx": ("typescript", "tsx"),
    ".rs": ("rust", "rust"),
}

# grammar key -> (module, function returning the language pointer)
_GRAMMARS: dict[str, tuple[str, str]] = {
    "go": ("tree_sitter_go", "language"),
    "java": ("tree_sitter_java", "language"),
    "javascript": ("tree_sitter_javascript", "language"),
    "typescript": ("tree_sitter_typescript", "language_typescript"),
    "tsx": ("tree_sitter_typescript", "language_tsx"),
    "rust": ("tree_sitter_rust", "language"),
}


@dataclass(frozen=True)
class _Def:
    """A top-level definition: first line (decorators and attached comments included),
    title, and the (first line, title) of each method it can be split into."""

    start: int
    title: str
    methods: tuple[tuple[int, str], ...] = ()


def language_for(path: str) -> tuple[str, str] | None:
    """(language, grammar key) for a structural chunker, or None for plain line windows."""
    name = path.rsplit("/", 1)[-1]
    dot = name.rfind(".")
    return _LANGUAGES.get(name[dot:]) if dot > 0 else None


# ---------------------------------------------------------------- python (ast)


def _python_start(node: ast.stmt, lines: list[str], floor: int) -> int:
    """First line of ``node`` with decorators and directly attached comment lines (same
    indentation, no blank line in between, never above line ``floor``)."""
    decorators = getattr(node, "decorator_list", [])
    start = min([node.lineno] + [d.lineno for d in decorators])
    while start - 1 > floor:
        line = lines[start - 2]
        stripped = line.lstrip()
        if not stripped.startswith("#") or len(line) - len(stripped) != node.col_offset:
            break
        start -= 1
    return start


def _python_defs(source: str) -> list[_Def] | None:
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # invalid escapes etc. must not reach the user
            tree = ast.parse(source)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return None
    lines = split_lines(source)
    defs: list[_Def] = []
    floor = 0
    for node in tree.body:
        if isinstance(node, ast.ClassDef):
            methods: list[tuple[int, str]] = []
            inner_floor = node.lineno
            for child in node.body:
                if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef)):
                    start = _python_start(child, lines, inner_floor)
                    methods.append((start, f"method {node.name}.{child.name}"))
                inner_floor = child.end_lineno or child.lineno
            defs.append(_Def(_python_start(node, lines, floor), f"class {node.name}", tuple(methods)))
        elif isinstance(node, ast.FunctionDef):
            defs.append(_Def(_python_start(node, lines, floor), f"function {node.name}"))
        elif isinstance(node, ast.AsyncFunctionDef):
            defs.append(_Def(_python_start(node, lines, floor), f"async function {node.name}"))
        floor = node.end_lineno or node.lineno
    return defs


# ---------------------------------------------------------------- tree-sitter

_ATTACHED = frozenset({"comment", "line_comment", "block_comment", "decorator", "attribute_item"})
_METHOD_NODES = frozenset({
    "method_declaration", "constructor_declaration", "compact_constructor_declaration",  # java
    "method_definition", "abstract_method_signature", "method_signature",  # javascript, typescript
    "function_item", "function_signature_item",  # rust
})
_FUNCTION_VALUES = frozenset({"arrow_function", "function_expression", "generator_function"})


@lru_cache(maxsize=None)
def _parser(grammar: str) -> Any | None:
    """A tree-sitter parser for ``grammar``, or None when tree-sitter or the grammar is missing.

    Imported lazily: most commands never chunk code, and CLI start-up time matters.
    """
    module_name, function_name = _GRAMMARS[grammar]
    try:
        import importlib

        import tree_sitter

        module = importlib.import_module(module_name)
        return tree_sitter.Parser(tree_sitter.Language(getattr(module, function_name)()))
    except (ImportError, AttributeError, ValueError):
        return None


def _last_row(node: Any) -> int:
    """Last row holding text of ``node`` (some grammars end a line comment on the next row)."""
    end = node.end_point
    if end.column == 0 and end.row > node.start_point.row:
        return end.row - 1
    return end.row


def _start_row(siblings: list[Any], index: int) -> int:
    """Row where the unit of ``siblings[index]`` starts: attached comments, decorators and
    attributes directly above it (no blank line, not trailing a line of code) are included."""
    row = siblings[index].start_point.row
    k = index - 1
    while k >= 0:
        sibling = siblings[k]
        if sibling.type not in _ATTACHED or not row - 1 <= _last_row(sibling) <= row:
            break
        if k > 0 and _last_row(siblings[k - 1]) >= sibling.start_point.row:
            break
        row = sibling.start_point.row
        k -= 1
    return row


def _name(node: Any, field: str = "name") -> str:
    child = node.child_by_field_name(field)
    return child.text.decode("utf-8", "replace") if child is not None else "default"


def _is_async(node: Any) -> bool:
    return any(
        child.type == "async" or (child.type == "function_modifiers" and b"async" in child.text)
        for child in node.children
    )


def _base_type_name(node: Any | None) -> str:
    """``Point`` for ``*Point``, ``Wrapper<T>``, ``Recv[T]`` or ``fmt::Point``."""
    if node is None:
        return "default"
    text = node.text.decode("utf-8", "replace")
    for mark in ("<", "["):
        text = text.split(mark, 1)[0]
    return text.replace("*", "").replace("&", "").strip().rsplit("::", 1)[-1].rsplit(".", 1)[-1]


def _methods(body: Any | None, owner: str) -> tuple[tuple[int, str], ...]:
    """(1-based first line, ``method Owner.name``) of every method directly in ``body``."""
    if body is None:
        return ()
    found: list[tuple[int, str]] = []
    siblings = body.named_children
    for index, child in enumerate(siblings):
        if child.type in _METHOD_NODES:
            found.append((_start_row(siblings, index) + 1, f"method {owner}.{_name(child)}"))
        elif child.type == "enum_body_declarations":  # java: methods after the enum constants
            found.extend(_methods(child, owner))
    return tuple(found)


def _unwrap(node: Any) -> Any:
    """The declaration inside ``export ...``, ``declare ...`` or a namespace statement."""
    if node.type == "export_statement":
        declaration = node.child_by_field_name("declaration")
        if declaration is not None:
            return declaration
        for child in node.named_children:
            if child.type in ("function_expression", "class", "generator_function"):
                return child
    if node.type in ("ambient_declaration", "expression_statement") and node.named_children:
        inner = node.named_children[0]
        if inner.type in ("internal_module", "module") or node.type == "ambient_declaration":
            return inner
    return node


def _describe(node: Any) -> tuple[str, tuple[tuple[int, str], ...]] | None:
    """Title and methods of a top-level definition node, or None when it is not one."""
    kind = node.type
    if kind in ("function_declaration", "generator_function_declaration", "function_signature",
                "function_expression", "generator_function", "function_item"):
        prefix = "async function" if _is_async(node) else "function"
        return f"{prefix} {_name(node)}", ()
    if kind == "method_declaration":  # go: a method with a receiver
        receiver = node.child_by_field_name("receiver")
        params = receiver.named_children if receiver is not None else []
        owner = _base_type_name(params[0].child_by_field_name("type")) if params else "default"
        return f"method {owner}.{_name(node)}", ()
    if kind == "type_declaration":  # go
        specs = [c for c in node.named_children if c.type in ("type_spec", "type_alias")]
        if len(specs) == 1:
            value = specs[0].child_by_field_name("type")
            word = {"struct_type": "struct", "interface_type": "interface"}.get(value.type if value else "", "type")
            return f"{word} {_name(specs[0])}", ()
        return ("type " + ", ".join(_name(s) for s in specs), ()) if specs else None
    if kind in ("class_declaration", "abstract_class_declaration", "class", "interface_declaration",
                "enum_declaration", "record_declaration", "annotation_type_declaration", "trait_item"):
        word = {"interface_declaration": "interface", "enum_declaration": "enum",
                "record_declaration": "record", "annotation_type_declaration": "annotation",
                "trait_item": "trait"}.get(kind, "class")
        name = _name(node)
        return f"{word} {name}", _methods(node.child_by_field_name("body"), name)
    if kind == "impl_item":
        owner = _base_type_name(node.child_by_field_name("type"))
        trait = node.child_by_field_name("trait")
        title = f"impl {_base_type_name(trait)} for {owner}" if trait is not None else f"impl {owner}"
        return title, _methods(node.child_by_field_name("body"), owner)
    simple = {"struct_item": "struct", "enum_item": "enum", "union_item": "union",
              "type_alias_declaration": "type", "internal_module": "namespace", "module": "module",
              "macro_definition": "macro"}
    if kind in simple:
        return f"{simple[kind]} {_name(node)}", ()
    if kind == "mod_item" and node.child_by_field_name("body") is not None:
        return f"mod {_name(node)}", ()
    if kind in ("lexical_declaration", "variable_declaration"):
        for declarator in node.named_children:
            value = declarator.child_by_field_name("value") if declarator.type == "variable_declarator" else None
            if value is not None and value.type in _FUNCTION_VALUES:
                prefix = "async function" if _is_async(value) else "function"
                return f"{prefix} {_name(declarator)}", ()
            if value is not None and value.type == "class":
                name = _name(declarator)
                return f"class {name}", _methods(value.child_by_field_name("body"), name)
    return None


def _tree_sitter_defs(grammar: str, source: str) -> list[_Def] | None:
    parser = _parser(grammar)
    if parser is None:
        return None
    root = parser.parse(source.encode("utf-8")).root_node
    if root.has_error:
        return None
    defs: list[_Def] = []
    siblings = root.named_children
    for index, node in enumerate(siblings):
        described = _describe(_unwrap(node))
        if described is not None:
            defs.append(_Def(_start_row(siblings, index) + 1, described[0], described[1]))
    return defs


# ---------------------------------------------------------------- units and windows

Piece = tuple[str, int, int, str]  # (title, start line, end line, text)


def _trim(clean: list[str], start: int, end: int) -> tuple[int, int] | None:
    """The 1-based range without leading/trailing blank lines; None when all blank."""
    while start <= end and not clean[start - 1]:
        start += 1
    while end >= start and not clean[end - 1]:
        end -= 1
    return (start, end) if start <= end else None


def _text(clean: list[str], start: int, end: int) -> str:
    return "\n".join(clean[start - 1:end])


def _windows(clean: list[str], start: int, end: int, label: str, lim: CodeLimits) -> list[Piece]:
    """``lines`` windows over [start, end]: 60 lines every 50, each cut to ≤ 2,400 chars (version 1).

    A window cut short by the character limit makes the next one start right after it, so no
    line is skipped; a single line over the limit becomes consecutive 2,400-char pieces.
    """
    out: list[Piece] = []
    prefix = f"{label} (lines " if label else "lines "
    suffix = ")" if label else ""
    first = start
    while first <= end:
        line = clean[first - 1]
        if len(line) > lim.chunk_chars:
            for offset in range(0, len(line), lim.chunk_chars):
                piece = line[offset:offset + lim.chunk_chars].rstrip()
                if piece.strip():
                    out.append((f"{prefix}{first}-{first}{suffix}", first, first, piece))
            last = first
        else:
            limit = min(first + lim.window_lines - 1, end)
            last, length = first, len(line)
            while last < limit and length + 1 + len(clean[last]) <= lim.chunk_chars:
                length += 1 + len(clean[last])
                last += 1
            trimmed = _trim(clean, first, last)
            if trimmed is not None:
                a, b = trimmed
                out.append((f"{prefix}{a}-{b}{suffix}", a, b, _text(clean, a, b)))
        if last >= end:
            break
        first = min(first + lim.window_step, last + 1)
    return out


def _oversize(clean: list[str], start: int, end: int, lim: CodeLimits) -> bool:
    return end - start + 1 > lim.unit_lines or len(_text(clean, start, end)) > lim.chunk_chars


def _emit(clean: list[str], start: int, end: int, title: str, lim: CodeLimits) -> list[Piece]:
    """One chunk for the unit, or line windows titled ``<title> (lines a-b)`` when too big."""
    trimmed = _trim(clean, start, end)
    if trimmed is None:
        return []
    a, b = trimmed
    if _oversize(clean, a, b, lim):
        return _windows(clean, a, b, title, lim)
    return [(title, a, b, _text(clean, a, b))]


def _structured(clean: list[str], defs: list[_Def], lim: CodeLimits) -> list[Piece]:
    """Partition the file at definition starts; split oversized containers at their methods."""
    ordered: list[_Def] = []
    for definition in sorted(defs, key=lambda d: d.start):
        if not ordered or definition.start > ordered[-1].start:
            ordered.append(definition)  # two definitions on one line share the first's unit
    n = len(clean)
    out: list[Piece] = []
    if not ordered or ordered[0].start > 1:
        out.extend(_emit(clean, 1, ordered[0].start - 1 if ordered else n, "module", lim))
    for index, definition in enumerate(ordered):
        end = ordered[index + 1].start - 1 if index + 1 < len(ordered) else n
        trimmed = _trim(clean, definition.start, end)
        if trimmed is None:
            continue
        methods = [(s, t) for s, t in definition.methods if trimmed[0] < s <= trimmed[1]]
        if not methods or not _oversize(clean, *trimmed, lim):
            out.extend(_emit(clean, definition.start, end, definition.title, lim))
            continue
        out.extend(_emit(clean, definition.start, methods[0][0] - 1, definition.title, lim))
        for k, (start, title) in enumerate(methods):
            method_end = methods[k + 1][0] - 1 if k + 1 < len(methods) else end
            out.extend(_emit(clean, start, method_end, title, lim))
    return out


def chunk_code(path: str, raw_text: str, masked_text: str, version: str = "1") -> tuple[str, list[Chunk]]:
    """(chunker name, chunks) of a code file: ``code:python``, ``code:<language>`` or ``lines``.

    ``raw_text`` and ``masked_text`` are LF-normalised and must have the same number of lines;
    ``version`` is the chunker version, which sets the size limits (:data:`LIMITS`).
    """
    lim = LIMITS[version]
    raw_lines = split_lines(raw_text)
    masked_lines = split_lines(masked_text)
    if len(raw_lines) != len(masked_lines):
        raise ValueError(f"{path}: masked text has {len(masked_lines)} lines, raw text {len(raw_lines)}")
    clean = [line.rstrip() for line in masked_lines]
    language = language_for(path)
    if language is not None:
        name, grammar = language
        defs = _python_defs(raw_text) if name == "python" else _tree_sitter_defs(grammar, raw_text)
        if defs is not None:
            return f"code:{name}", _numbered(_structured(clean, defs, lim))
    trimmed = _trim(clean, 1, len(clean))
    pieces = _windows(clean, trimmed[0], trimmed[1], "", lim) if trimmed is not None else []
    return LINES_CHUNKER, _numbered(pieces)


def _numbered(pieces: list[Piece]) -> list[Chunk]:
    return [Chunk(i, title, a, b, text) for i, (title, a, b, text) in enumerate(pieces)]
