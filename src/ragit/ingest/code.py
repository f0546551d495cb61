"""Structure-aware code chunking (knowledge §8.6).

Structure comes from the raw text (Python's ``ast``, or a tree-sitter grammar, see
:mod:`ragit.ingest.languages`); chunk text comes from the same lines of the masked text, which
has the same line count. Files are partitioned at top-level definitions so every line lands in
exactly one unit; a container (class, namespace, module, impl, ...) too big for one unit is split
into a header plus one unit per member definition, recursively (a namespace into its classes,
a class into its methods), and any unit still too big is cut into overlapping line windows.

Parse errors (macros, newer syntax than the grammar knows) only cost structure where they are:
tree-sitter's ``ERROR`` nodes are looked through for the definitions they still contain, and a
run of tokens the grammar could not place becomes a plain ``lines`` unit. The whole file falls
back to ``lines`` only when more than :data:`MAX_UNPARSED` of its non-blank characters are
such tokens, or when there are some and no definition was recovered at all. (Missing tokens
that tree-sitter inserts, such as the ``;`` after a macro call, are not errors for this rule.)
A C, C++, C# or Swift parse with errors is tried again with its conditional-compilation lines
(``#if``, ``#else``, ...) blanked, which those grammars cannot place inside an expression or
between a switch's cases; it is kept when it places more tokens without closing more
constructs the parser had to invent (:func:`_retry_blanked`). A TypeScript parse with errors is
tried again the same way with the syntax tree-sitter-typescript 0.23 cannot read blanked (a call
signature's type parameters opening a line, variance annotations: :mod:`ragit.ingest.blanking`).

Every grammar parses under a time budget (:data:`PARSE_SECONDS`): a file that takes longer,
which only pathological input does, is chunked as ``lines``. Every file is
parsed as if it ended with a newline: a budget cannot stop a grammar's own scanner looping in
C, which tree-sitter-kotlin 1.1's does for good on a file whose last token is an annotation after
a statement (``val x = 1`` ``@Foo``, no newline at the end; session 31). The newline adds an empty
last row only, so every row and column holds.

``.h`` headers are C or C++: a header that shows C++ syntax (``namespace x {``, ``template <``,
``class X {``, ``public:``, ``std::``, ``constexpr``, ``nullptr``) is parsed as C++; any other
is parsed as C, and if that parse has errors the C++ grammar (which accepts most C) is tried
too, the parse with fewer unplaced tokens winning (ties keep C). The chunker (``code:c`` /
``code:cpp``) names the grammar that won. (Trying C after a failed C++ parse is not done: C++
headers nearly always show C++ syntax, and the C grammar's error recovery on them is slow.)
"""

from __future__ import annotations

import ast
import re
import time
import warnings
from bisect import bisect_right
from dataclasses import dataclass
from functools import lru_cache
from itertools import accumulate, repeat
from operator import add
from typing import Any, Callable, NamedTuple, Union

from .blanking import Blanker
from .chunks import Chunk
from .languages import CPP_SYNTAX, EXTENSIONS, FILENAMES, LANGUAGES, MODULE, PYTHON_CHUNKER, Found, Language
from .pyskeleton import skeleton
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

#: Share of a file's non-blank characters that may be tokens the grammar could not place before
#: the whole file falls back to ``lines`` (measured on real repositories: files that parse at
#: all stay far below; text in the wrong language usually lands above).
MAX_UNPARSED = 0.25

#: Seconds one parse may take (plus as much again per MB) before the file falls back to ``lines``.
#: Real code parses at 4-18 MB/s, but error recovery can spend minutes on a few KB of odd input
#: (Kotlin's grammar on a malformed file; TSX on shuffled lines of a component, session 31); the
#: budget is far enough above normal that only such files hit it. The progress callback that
#: checks it costs about 4 % of a parse (the five grammars chunked before the budget existed
#: parsed without one until session 31).
#: The budget is checked between parse steps; a scanner that loops inside one step is out of its
#: reach, hence the newline every parse ends with (module docstring).
PARSE_SECONDS = 2.0

#: A container cut at its members keeps its own lines before the first member as a header chunk,
#: unless they are at most this many non-blank lines of at most this many characters together:
#: ``module ActiveJob``, ``namespace Foo`` and a brace, ``public class FooTest extends TestCase {``
#: say nothing on their own, yet as a tiny chunk that spells the container's name they outranked
#: the code for any question naming it (a Ruby gem's namespace opened at the top of each of its
#: files). Such a bare header opens its first member's chunk instead (session 23). Python keeps
#: knowledge §8.6's header unit whatever it holds, as the spec's worked example asks (``class
#: Repo:`` and a one-line docstring); docs/architecture.md, "Per-language chunker revisions".
BARE_LINES = 3
BARE_CHARS = 120

_MAX_DEPTH = 48  # wrapper / container nesting followed; deeper nodes count as plain statements
_MAX_TITLE = 120


def _short_title(title: str) -> str:
    """``title`` on one line, cut to :data:`_MAX_TITLE` characters (names can span lines, or be
    missing after error recovery)."""
    title = " ".join(title.split()) or "definition"
    if " " not in title:
        title += " (anonymous)"  # the grammar gave the definition no name
    return title if len(title) <= _MAX_TITLE else title[:_MAX_TITLE - 1] + "…"


class _Def(NamedTuple):
    """A definition: first line (decorators and attached comments included), title, and its
    member definitions (a tuple, or a function computing them only when the unit is split).
    An empty title marks a run of unparsed tokens, which is windowed as plain ``lines``."""

    start: int
    title: str
    members: Union[tuple["_Def", ...], Callable[[], list["_Def"]]] = ()

    def member_defs(self) -> list["_Def"]:
        return list(self.members) if isinstance(self.members, tuple) else self.members()


def language_for(path: str) -> str | None:
    """Language key of a structural chunker for ``path`` (a key of
    :data:`ragit.ingest.languages.LANGUAGES`, ``python`` or ``h``), or None for ``lines``."""
    name = path.rsplit("/", 1)[-1]
    dot = name.rfind(".")
    language = EXTENSIONS.get(name[dot:]) if dot > 0 else None
    return language if language is not None else FILENAMES.get(name)


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


def _python_defs(source: str, lines: list[str]) -> list[_Def] | None:
    """Top-level definitions of ``source`` (``lines``: its lines), and the methods of its classes;
    definitions inside a top-level ``if``/``try``/``with`` count as top-level ones."""
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # invalid escapes etc. must not reach the user
            tree = _python_tree(source)
    except _PARSE_ERRORS:
        return None
    defs: list[_Def] = []
    _python_statements(tree.body, lines, 0, defs, 0)
    return defs


_PARSE_ERRORS = (SyntaxError, ValueError, RecursionError, MemoryError)


def _python_tree(source: str) -> ast.Module:
    """The syntax tree of ``source``'s skeleton (:mod:`ragit.ingest.pyskeleton`: function bodies
    are never read here, and parsing them was most of a Python file's cost), or of the whole file
    when it has no skeleton or its skeleton does not parse."""
    cut = skeleton(source)
    if cut is not None and cut is not source:
        try:
            return ast.parse(cut)
        except _PARSE_ERRORS:
            pass  # the whole file decides
    return ast.parse(source)


def _python_statements(nodes: list[ast.stmt], lines: list[str], floor: int, defs: list[_Def], depth: int) -> int:
    """Append the units of the statements ``nodes`` to ``defs``; ``floor`` is the last line an
    attached comment may not climb above. Returns the last line of ``nodes``."""
    for node in nodes:
        if isinstance(node, ast.ClassDef):
            methods: list[_Def] = []
            inner_floor = node.lineno
            for child in node.body:
                if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef)):
                    start = _python_start(child, lines, inner_floor)
                    methods.append(_Def(start, f"method {node.name}.{child.name}"))
                elif (name := _python_value(child)) is not None:
                    methods.append(_Def(_python_start(child, lines, inner_floor), f"variable {node.name}.{name}"))
                inner_floor = child.end_lineno or child.lineno
            defs.append(_Def(_python_start(node, lines, floor), f"class {node.name}", tuple(methods)))
        elif isinstance(node, ast.FunctionDef):
            defs.append(_Def(_python_start(node, lines, floor), f"function {node.name}"))
        elif isinstance(node, ast.AsyncFunctionDef):
            defs.append(_Def(_python_start(node, lines, floor), f"async function {node.name}"))
        elif (name := _python_value(node)) is not None:
            defs.append(_Def(_python_start(node, lines, floor), f"variable {name}"))
        elif depth < _MAX_DEPTH and (branches := _python_branches(node)):
            _python_block(node, branches, lines, floor, defs, depth)
        elif isinstance(node, _PYTHON_CODE) and (node.end_lineno or node.lineno) > node.lineno \
                and defs and defs[-1].title != "module":
            # the file's own code over several lines (``if sys.platform == "win32":`` …, ``try:`` …)
            # after a definition is ``module`` code, not the tail of the definition above it (as in
            # JavaScript, ``languages._js_code``); before any, it is the file's head already
            defs.append(_Def(_python_start(node, lines, floor), "module"))
        floor = node.end_lineno or node.lineno
    return floor


def _python_block(node: ast.stmt, branches: list[tuple[int | None, list[ast.stmt]]], lines: list[str],
                  floor: int, defs: list[_Def], depth: int) -> None:
    """The units of a block whose branches define something (``if PYDANTIC_V2:`` over three
    hundred lines of functions, ``try: … except ImportError: def …``): each definition is a unit,
    as the definitions of a C ``#ifdef`` are. A branch's clause line (``if …:``, ``else:``,
    ``except …:``) opens the unit of its first statement when that is a definition, and a ``module``
    unit when it is other code."""
    inner = floor
    for k, (clause, branch) in enumerate(branches):
        if k == 0:
            start = _python_start(node, lines, floor)
        else:
            start = clause if clause is not None else _python_clause(lines, inner, branch[0].lineno, node.col_offset)
        first = len(defs)
        opens = isinstance(branch[0], _PYTHON_DEFS)
        if not opens and not _python_defines(branch[0]) and defs and defs[-1].title != "module":
            defs.append(_Def(start, "module"))
        inner = _python_statements(branch, lines, start, defs, depth + 1)
        if opens:
            defs[first] = defs[first]._replace(start=start)


def _python_clause(lines: list[str], low: int, high: int, column: int) -> int:
    """Line of the ``else:`` or ``finally:`` between lines ``low`` and ``high`` (the end of the
    branch before, the first statement of this one) at the block's ``column``; ``high`` when none."""
    for number in range(high - 1, low, -1):
        line = lines[number - 1]
        stripped = line.lstrip()
        if len(line) - len(stripped) == column and _CLAUSE.match(stripped):
            return number
    return high


def _python_branches(node: ast.stmt) -> list[tuple[int | None, list[ast.stmt]]]:
    """The branches of a ``if``/``try``/``with`` in line order, each as (its clause's line when the
    syntax tree gives it, its statements), when one of them defines a function or class (directly
    or in a block of its own); otherwise none."""
    branches: list[tuple[int | None, list[ast.stmt]]]
    if isinstance(node, ast.If):
        elif_ = len(node.orelse) == 1 and isinstance(node.orelse[0], ast.If) \
            and node.orelse[0].col_offset == node.col_offset
        branches = [(node.lineno, node.body), (node.orelse[0].lineno if elif_ else None, node.orelse)]
    elif isinstance(node, _PYTHON_TRY):
        branches = [(node.lineno, node.body)] + [(h.lineno, h.body) for h in node.handlers] \
            + [(None, node.orelse), (None, node.finalbody)]
    elif isinstance(node, (ast.With, ast.AsyncWith)):
        branches = [(node.lineno, node.body)]
    else:
        return []
    branches = [(line, body) for line, body in branches if body]
    return branches if any(_python_defines(s) for _, body in branches for s in body) else []


def _python_defines(node: ast.stmt) -> bool:
    """Whether ``node`` is a function or class definition or a block holding one."""
    return isinstance(node, _PYTHON_DEFS) or bool(_python_branches(node))


_CLAUSE = re.compile(r"(?:else|finally)\s*:")
_PYTHON_DEFS = (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)
_PYTHON_TRY = (ast.Try, ast.TryStar) if hasattr(ast, "TryStar") else (ast.Try,)
_PYTHON_CODE = (ast.If, ast.For, ast.AsyncFor, ast.While, ast.With, ast.AsyncWith, ast.Expr,
                ast.Match, ast.Assign, ast.AnnAssign, ast.AugAssign) + _PYTHON_TRY


def _python_value(node: ast.stmt) -> str | None:
    """The name an assignment of one name binds when its value spans lines (``DEFAULT_CONFIG = {``
    … ``}``, a class's ``table = {`` … ``}``): such a value is a unit of its own, ``variable
    <name>``, as in every other language since session 26; its lines were the tail of the
    function or method above. A one-line assignment stays in the unit above."""
    if isinstance(node, ast.Assign):
        target = node.targets[0] if len(node.targets) == 1 else None
    elif isinstance(node, ast.AnnAssign) and node.value is not None:
        target = node.target
    else:
        return None
    if not isinstance(target, ast.Name) or (node.end_lineno or node.lineno) <= node.lineno:
        return None
    return target.id


# ---------------------------------------------------------------- tree-sitter


@lru_cache(maxsize=None)
def _parser(grammar: str) -> Any | None:
    """A tree-sitter parser for language key ``grammar``, or None when tree-sitter or the
    grammar is missing.

    Imported lazily: most commands never chunk code, and CLI start-up time matters.
    """
    module_name, function_name = LANGUAGES[grammar].grammar
    try:
        import importlib

        import tree_sitter

        module = importlib.import_module(module_name)
        return tree_sitter.Parser(tree_sitter.Language(getattr(module, function_name)()))
    except (ImportError, AttributeError, ValueError):
        return None


class _Reader:
    """Feeds the parser its text through a callback (the only way to stop a parse early). A tree
    parsed that way reads ``Node.text`` back through the same callback, so once parsing is done
    the slices shrink to name size: copying 64 KB per name would cost more than the parse."""

    __slots__ = ("data", "size")

    def __init__(self, data: bytes) -> None:
        self.data = data
        self.size = 65536

    def __call__(self, offset: int, _point: Any) -> bytes:
        return self.data[offset:offset + self.size]


def _parse(parser: Any, data: bytes, old: Any | None = None) -> Any | None:
    """The syntax tree of ``data``, or None when parsing exceeds its time budget; ``old`` is an
    edited tree of a previous version of ``data`` whose unchanged parts the parser may reuse."""
    budget = PARSE_SECONDS * (1 + len(data) / 1_000_000)
    deadline = time.monotonic() + budget
    reader = _Reader(data)
    reuse = () if old is None else (old,)  # (``parse`` takes no None for it)
    try:
        tree = parser.parse(reader, *reuse, progress_callback=lambda *_: time.monotonic() > deadline)
    except ValueError:  # halted by the callback
        tree = None
    except TypeError:  # tree-sitter < 0.25: a timeout instead of a progress callback
        parser.timeout_micros = int(budget * 1_000_000)
        tree = parser.parse(data, *reuse)
    reader.size = 256
    if tree is None:
        parser.reset()  # or the next parse would resume this one
    return tree


def _last_row(node: Any) -> int:
    """Last row holding text of ``node`` (some grammars end a line comment on the next row)."""
    end = node.end_point
    if end.column == 0 and end.row > node.start_point.row:
        return end.row - 1
    return end.row


def _flatten(spec: Language, nodes: list[Any], out: list[Any], junk: set[int], depth: int = 0) -> None:
    """Append ``nodes`` to ``out`` with wrappers (preprocessor blocks, ``extern "C"``, ``ERROR``
    nodes) replaced by their children, so definitions inside them count as siblings; the
    positions of tokens the grammar could not place (leaves of ``ERROR`` nodes) go to ``junk``."""
    transparent = spec.transparent
    for node in nodes:
        kind = node.type
        if kind == "ERROR" and depth < _MAX_DEPTH:
            for child in node.children:
                if child.child_count == 0 and child.type not in spec.attached:
                    junk.add(len(out))
                    out.append(child)
                else:
                    _flatten(spec, [child], out, junk, depth + 1)
        elif kind in transparent and depth < _MAX_DEPTH and (inner := transparent[kind](node)) is not None:
            _flatten(spec, inner, out, junk, depth + 1)
        else:
            out.append(node)


def _attached(spec: Language, node: Any) -> bool:
    return node.type in spec.attached or (spec.is_attached is not None and spec.is_attached(node))


def _start_row(spec: Language, items: list[Any], junk: set[int], index: int) -> int:
    """Row where the unit of ``items[index]`` starts: attached comments, decorators and
    attributes directly above it (no blank line, not trailing a line of code; a ``/**`` doc
    comment right above may leave one blank line where the language has ``doc_gap``) are included."""
    row = items[index].start_point.row
    k = index - 1
    while k >= 0:
        sibling = items[k]
        lowest = row - 2 if spec.doc_gap and k == index - 1 and sibling.type == "comment" \
            and sibling.text[:3] == b"/**" else row - 1
        if k in junk or not _attached(spec, sibling) or not lowest <= _last_row(sibling) <= row:
            break
        if k > 0 and _last_row(items[k - 1]) >= sibling.start_point.row:
            break
        row = sibling.start_point.row
        k -= 1
    return row


def _member_nodes(spec: Language, container: Any, body: Any) -> list[Any]:
    """The nodes among which a container's members are found: comments of the node holding the
    body that precede it (Ruby keeps them outside ``body_statement``), then the body's children
    (or the body itself when it is a single definition, as in Scala ``extension (x: T) def f``)."""
    if body.type in spec.handlers:
        return [body]
    owner = body.parent if body.parent is not None else container  # an inner node's (Ruby ``module A; class B``)
    before = [c for c in owner.named_children if c.end_byte <= body.start_byte and _attached(spec, c)]
    return before + body.named_children


class _Outside:
    """The members of a record whose parse has errors, as they are collected: error recovery may
    have swallowed the rest of the file into it (``struct S { ... };`` and every definition after
    it, where a macro broke the parse). Members sit right of the record's first ``column``
    (``Found.indented``), so the first definition at or left of it, and every one after it, belong
    to the scope around the record (``owner``, ``word``); ``at`` is that definition's index."""

    __slots__ = ("column", "owner", "word", "at")

    def __init__(self, column: int, owner: str | None, word: str) -> None:
        self.column, self.owner, self.word = column, owner, word
        self.at: int | None = None


def _collect(spec: Language, nodes: list[Any], owner: str | None, members_word: str, depth: int = 0,
             outside: _Outside | None = None) -> list[_Def]:
    """Definitions among ``nodes`` (siblings in the tree), titled for ``owner`` when not None.

    A run of unplaced tokens becomes an untitled definition from the first line it has to
    itself, closed by the next real definition. ``outside``: collecting a broken record's
    members (:class:`_Outside`), those found outside it are titled for the scope around it.
    """
    items: list[Any] = []
    junk: set[int] = set()
    _flatten(spec, nodes, items, junk)
    defs: list[_Def] = []
    handlers = spec.handlers
    recover = spec.recover
    previous_end = -1  # last row of what came before (only tracked when there are unplaced tokens)
    in_region = False
    joins: str | None = None  # the name of the overload signature that opened the last unit
    for index, node in enumerate(items):
        if junk:
            if index in junk:
                # a stray ``}`` or ``;`` stays with the unit it closes; a word opens an unparsed run
                if node.is_named or node.type[:1].isalnum():
                    if not in_region:  # the run starts on a line of its own, never mid-line
                        defs.append(_Def(max(node.start_point.row, previous_end + 1) + 1, ""))
                        in_region = True
                    previous_end = max(previous_end, _last_row(node))
                continue
            previous_end = max(previous_end, _last_row(node))
        handler = handlers.get(node.type)
        found = handler(node) if handler is not None else None
        first = index
        if found is None and recover is not None:
            recovered = recover(items, index)
            if recovered is not None:
                found, first = recovered
        if found is not None:
            escaping = outside is not None and outside.at is None and items[first].start_point.column <= outside.column
            if escaping:
                owner, members_word = outside.owner, outside.word
            if found.callable and owner is not None:
                title = f"{found.member_word or members_word} {owner}.{found.name}"
            else:
                title = found.title
            if found is MODULE:
                title = MODULE.title
            elif not title or len(title) > _MAX_TITLE or "\n" in title or title[-1] == " " or " " not in title:
                title = _short_title(title)
            overloaded = joins == found.name and bool(defs)
            joins = found.name if found.overload else None
            opens = overloaded or not ((spec.merge_clauses or found is MODULE) and defs and defs[-1].title == title)
            if overloaded:  # the signatures above open the unit, titled for what follows them
                start = defs.pop().start
            elif opens:
                start = _start_row(spec, items, junk, first) + 1
            if opens:
                if defs and not defs[-1].title and defs[-1].start >= start:
                    defs.pop()  # the unparsed run was this definition's own head
                if escaping:
                    outside.at = len(defs)
                if found.indented and node.has_error and found.body is not None and depth < _MAX_DEPTH:
                    inside, after = _broken_record(spec, node, found, owner, members_word, depth)
                    defs.append(_Def(start, title, tuple(inside)))
                    defs.extend(after)  # the record's unit ends where they start
                else:
                    members = _members(spec, node, found, owner, members_word, depth) if (
                        found.split or found.callable and node.has_error) else ()
                    defs.append(_Def(start, title, members))
            elif escaping:
                outside.at = len(defs)
            in_region = False
    return defs


def _broken_record(spec: Language, node: Any, found: Found, owner: str | None, members_word: str,
                   depth: int) -> tuple[list[_Def], list[_Def]]:
    """A record whose parse has errors: its own members, and the definitions error recovery
    swallowed into it from the scope around it (:class:`_Outside`), which are that scope's."""
    outside = _Outside(node.start_point.column, owner, members_word)
    defs = _collect(spec, _member_nodes(spec, node, found.body), _owner_within(found, owner), found.members_word,
                    depth + 1, outside)
    at = len(defs) if outside.at is None else outside.at
    return defs[:at], defs[at:]


def _owner_within(found: Found, owner: str | None) -> str | None:
    """The name a container's members are titled with (``Found.owner``)."""
    return owner if found.owner == "" else (found.owner or found.name or owner)


def _members(spec: Language, node: Any, found: Found, owner: str | None, members_word: str,
             depth: int) -> tuple[()] | Callable[[], list[_Def]]:
    """A function computing the member definitions of ``node`` when its unit gets split: those
    of a container, or those error recovery swallowed into a callable (titled as if they were
    its siblings, which they are)."""
    if depth >= _MAX_DEPTH:
        return ()
    body = found.body if found.body is not None or found.split else node.child_by_field_name("body")
    if body is None:
        return ()
    if not found.split:
        inner_owner, inner_word = owner, members_word
    else:
        inner_owner, inner_word = _owner_within(found, owner), found.members_word

    def compute() -> list[_Def]:
        return _collect(spec, _member_nodes(spec, node, body), inner_owner, inner_word, depth + 1)

    return compute


def _unplaced_bytes(spec: Language, root: Any) -> int:
    """Bytes of the tokens tree-sitter could not fit into any construct (the leaf children of
    ``ERROR`` nodes; comments excluded). Only subtrees that contain an error are visited."""
    total = 0
    stack = [root]
    while stack:
        node = stack.pop()
        if node.type == "ERROR":
            for child in node.children:
                if child.child_count == 0:
                    if child.type not in spec.attached:
                        total += child.end_byte - child.start_byte
                elif child.has_error:
                    stack.append(child)
        else:
            stack.extend(child for child in node.children if child.has_error)
    return total


# C and C++ macros the grammars cannot expand, in the places where they cost a parse its structure:
# an ALL_CAPS identifier with an underscore (``FMT_API``, ``UV_EXTERN``, ``GTEST_API_``) between
# ``class``/``struct``/``union`` and the name, a leading run of them before more code on a line
# (``FMT_CONSTEXPR FMT_INLINE auto write_int(``), or one alone on a line (``FMT_BEGIN_NAMESPACE``).
# They are blanked with as many spaces in the bytes parsed, so rows and columns hold; a macro
# called with arguments (``FMT_CATCH(...)``, ``DEFINE_INIT(timer)``) and every line of a
# preprocessor directive (``#define`` bodies continued with ``\``) are left as they are.
_MACRO = rb"[A-Z][A-Z0-9]*_[A-Z0-9_]*"
_MACRO_SPOTS = re.compile(  # matched within one line
    rb"\b(?:class|struct|union)[ \t]+((?:" + _MACRO + rb"[ \t]+)+)(?=[A-Za-z_])"
    rb"|^[ \t]*((?:" + _MACRO + rb"[ \t]+)+)(?=[A-Za-z_~])"
    rb"|^[ \t]*(" + _MACRO + rb")[ \t\r]*$")
_MACRO_HINT = re.compile(rb"[A-Z][A-Z0-9]*_")
_MACRO_LANGUAGES = frozenset({"c", "cpp", "h"})


def _blank(m: "re.Match[bytes]") -> bytes:
    out = bytearray(m.group(0))
    for group in (1, 2, 3):
        if m.start(group) >= 0:
            a, b = m.start(group) - m.start(0), m.end(group) - m.start(0)
            out[a:b] = b" " * (b - a)
    return bytes(out)


def _blank_macros(data: bytes) -> bytes:
    """``data`` with the macros of :data:`_MACRO_SPOTS` replaced by spaces (same length), line by
    line; the lines of a preprocessor directive (one starting with ``#`` and those it continues
    with a backslash) are left as written. ≈ 0.9 µs a line of C."""
    if not _MACRO_HINT.search(data):
        return data
    lines = data.split(b"\n")
    directive = False
    for i, line in enumerate(lines):
        starts = directive or line.lstrip(b" \t")[:1] == b"#"
        directive = starts and line.rstrip(b" \t\r").endswith(b"\\")
        if not starts and _MACRO_HINT.search(line):
            lines[i] = _MACRO_SPOTS.sub(_blank, line)
    return b"\n".join(lines)


def _tree_sitter_defs(language: str, source: str) -> tuple[str, list[_Def]] | None:
    """(chunker name, definitions) from one parse, or None for ``lines`` (no grammar, a parse
    over its time budget, or one that is mostly errors / recovers no definition)."""
    data = source.encode("utf-8")
    if language in _MACRO_LANGUAGES:
        data = _blank_macros(data)
    if language == "h":  # C++ syntax → C++; otherwise C, with C++ as the fallback
        candidates: tuple[str, ...] = ("cpp",) if CPP_SYNTAX.search(source) else ("c", "cpp")
    else:
        candidates = (language,)
    best: _Parsed | None = None
    for key in candidates:
        parsed = _parsed(key, data)
        if parsed is not None and (best is None or parsed.unplaced < best.unplaced):
            best = parsed
        if parsed is not None and not parsed.unplaced:
            break
    if best is None:
        return None
    blanker = LANGUAGES[best.key].retry_blank
    if best.unplaced and blanker is not None:
        best = _retry_blanked(blanker, best)
    if LANGUAGES[best.key].unwrap is not None:
        best = _unwrapped(best)
    respell = LANGUAGES[best.key].respell
    if respell is not None:
        best = _respelled(respell, best)
    unplaced, key, root = best.unplaced, best.key, best.root
    spec = LANGUAGES[key]
    if unplaced and unplaced > MAX_UNPARSED * (len(data) - sum(data.count(c) for c in b" \t\n\r\f\v")):
        return None
    defs = _collect(spec, [root] if root.type == "ERROR" else root.named_children, None, "method")
    if unplaced and not any(d.title for d in defs):
        return None  # broken, and no structure to show for it
    return spec.chunker, defs


class _Parsed(NamedTuple):
    """One parse of a file's bytes."""

    unplaced: int  # bytes of tokens the grammar could not place (:func:`_unplaced_bytes`)
    key: str  # the grammar's language key
    root: Any
    tree: Any
    data: bytes  # the bytes parsed (a retry's have lines blanked or respelled)


def _parsed(key: str, data: bytes, old: Any | None = None) -> _Parsed | None:
    """``data`` parsed with grammar ``key`` (reusing the edited tree ``old``, when given), or None
    (no grammar, or over the parse's time budget). The bytes parsed, kept as the parse's ``data``,
    end with a newline: a grammar's scanner can loop for good at the end of the bytes (module
    docstring), and every parse of a file, first or second, comes through here."""
    parser = _parser(key)
    if parser is None:
        return None
    if not data.endswith(b"\n"):
        data += b"\n"
    tree = _parse(parser, data, old)
    if tree is None:
        return None
    root = tree.root_node
    return _Parsed(_unplaced_bytes(LANGUAGES[key], root) if root.has_error else 0, key, root, tree, data)


def _retry_blanked(blanker: Blanker, parsed: _Parsed) -> _Parsed:
    """``parsed`` (a parse with errors), or the parse of its bytes with the syntax its
    grammar cannot place blanked (:attr:`Language.retry_blank`; for conditional compilation every
    branch of each ``#if`` is then read in turn, which the grammars place where a branch holds
    whole members or statements) when that one places more tokens without inventing more:
    branches that each open the same block (``#if A`` ``for (a) {`` ``#else`` ``for (;;) {``
    ``#endif``) leave a brace unclosed, which tree-sitter closes with a ``MISSING`` token at the
    end, after swallowing every definition below it. The second parse reuses the first's tree
    outside the blanked lines (:func:`_reparsed`)."""
    lines = parsed.data.split(b"\n")
    again = _lines_changed(parsed, lines, blanker(lines))
    if again is None or again.unplaced >= parsed.unplaced or _missing(again.root) > _missing(parsed.root):
        return parsed
    return again


def _respelled(respell: Callable[[list[Any], list[bytes]], dict[int, bytes]], parsed: _Parsed) -> _Parsed:
    """``parsed``, or the parse of its bytes with the lines :attr:`Language.respell` finds read
    wrongly respelled, where that one leaves no more bytes unplaced and invents no more tokens."""
    lines = parsed.data.split(b"\n")
    again = _lines_changed(parsed, lines, respell(parsed.root.named_children, lines))
    if again is None or again.unplaced > parsed.unplaced or _missing(again.root) > _missing(parsed.root):
        return parsed
    return again


def _lines_changed(parsed: _Parsed, lines: list[bytes], changes: dict[int, bytes]) -> _Parsed | None:
    """The parse of ``lines`` with ``changes`` (row -> the line's new bytes, the same length, so
    rows and columns hold) made, reusing ``parsed``'s tree elsewhere; None when nothing changes."""
    if not changes:
        return None
    spans = []
    at = done = 0  # the byte offset of row ``done``
    for row in sorted(changes):
        at += sum(map(len, lines[done:row])) + row - done
        done = row
        spans.append((at, at + len(lines[row]), (row, 0), (row, len(lines[row]))))
    changed = list(lines)
    for row, line in changes.items():
        changed[row] = line
    return _reparsed(parsed, b"\n".join(changed), spans)


def _unwrapped(parsed: _Parsed) -> _Parsed:
    """``parsed``, or a parse of its bytes with the wrappers :attr:`Language.unwrap` finds among the
    top-level nodes blanked (newlines kept: rows and columns hold) where their contents then parse
    without errors, repeated for wrappers inside them (tokio's ``cfg_rt! { … cfg_fs! { … } }``).
    Each parse is incremental from the one before; one that would leave more bytes unplaced is
    not kept."""
    unwrap = LANGUAGES[parsed.key].unwrap
    assert unwrap is not None
    for _ in range(_UNWRAP_DEPTH):
        wrappers = unwrap(parsed.root.named_children, parsed.data)
        again = _blank_wrappers(parsed, wrappers)
        if again is None:
            break
        # a wrapper whose contents read as errors (no items after all) is put back
        kept = [w for w in wrappers if not _errors_within(again.root, w[1], w[2])]
        if len(kept) < len(wrappers):
            again = _blank_wrappers(parsed, kept)
            if again is None:
                break
        if again.unplaced > parsed.unplaced:
            break
        parsed = again
    return parsed


_UNWRAP_DEPTH = 3  # wrappers within wrappers within wrappers


def _blank_wrappers(parsed: _Parsed, wrappers: list[tuple[int, int, int, int]]) -> _Parsed | None:
    """The parse of ``parsed``'s bytes with each wrapper's opening and closing blanked, reusing its
    tree, or None when there is nothing to blank or no parse."""
    if not wrappers:
        return None
    data = parsed.data
    blanked = bytearray(data)
    spans = []
    for start, inner, close, end in wrappers:
        for a, b in ((start, inner), (close, end)):
            blanked[a:b] = re.sub(rb"[^\n]", b" ", data[a:b])
            spans.append((a, b, _point(data, a), _point(data, b)))
    return _reparsed(parsed, bytes(blanked), spans)


def _reparsed(parsed: _Parsed, data: bytes, spans: list[tuple[int, int, tuple[int, int], tuple[int, int]]]) \
        -> _Parsed | None:
    """The parse of ``data``, which differs from ``parsed``'s bytes only inside ``spans`` (start
    and end byte, start and end (row, column); each the same length as before), reusing
    ``parsed``'s tree outside them (an incremental parse: the same tree as a whole one, in a
    third of its time on Newtonsoft.Json, fmt and libuv)."""
    old = parsed.tree.copy()
    for a, b, first, last in spans:
        old.edit(start_byte=a, old_end_byte=b, new_end_byte=b, start_point=first, old_end_point=last,
                 new_end_point=last)
    return _parsed(parsed.key, data, old)


def _errors_within(root: Any, start: int, end: int) -> bool:
    """Whether a top-level node of ``root`` overlapping bytes [start, end) holds an error."""
    return root.has_error and any(child.has_error for child in root.children
                                  if child.end_byte > start and child.start_byte < end)


def _point(data: bytes, at: int) -> tuple[int, int]:
    """(row, column) of byte ``at``."""
    return data.count(b"\n", 0, at), at - data.rfind(b"\n", 0, at) - 1


def _missing(root: Any) -> int:
    """Tokens tree-sitter inserted to close constructs (``MISSING`` nodes) in ``root``'s tree."""
    count = 0
    stack = [root] if root.has_error else []
    while stack:
        node = stack.pop()
        if node.is_missing:
            count += 1
        stack.extend(child for child in node.children if child.has_error)
    return count


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
    # ends[k]: characters of lines start .. start + k - 1, a newline after each; lines first ..
    # last then hold ends[last - start + 1] - ends[first - start] - 1 characters, so a window's
    # last line is found by bisection (a loop over its lines before: ~0.1 s of sympy)
    ends = list(accumulate(map(add, map(len, clean[start - 1:end]), repeat(1)), initial=0))
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
            # the longest run from ``first`` of at most window_lines lines within chunk_chars
            limit = min(first + lim.window_lines - 1, end)
            k = first - start
            last = start - 1 + bisect_right(ends, ends[k] + lim.chunk_chars + 1, k + 1, limit - start + 2) - 1
            trimmed = _trim(clean, first, last)
            if trimmed is not None:
                a, b = trimmed
                out.append((f"{prefix}{a}-{b}{suffix}", a, b, _text(clean, a, b)))
        if last >= end:
            break
        first = min(first + lim.window_step, last + 1)
    return out


def _oversize(clean: list[str], start: int, end: int, lim: CodeLimits) -> bool:
    return _fitting(clean, start, end, lim) is None


def _fitting(clean: list[str], start: int, end: int, lim: CodeLimits) -> str | None:
    """The text of lines [start, end] when it fits one chunk (``lim``), else None."""
    if end - start + 1 > lim.unit_lines:
        return None
    text = _text(clean, start, end)
    return text if len(text) <= lim.chunk_chars else None


def _emit(clean: list[str], start: int, end: int, title: str, lim: CodeLimits) -> list[Piece]:
    """One chunk for the unit, or line windows titled ``<title> (lines a-b)`` when too big.

    An untitled unit (unparsed tokens) is windowed like the ``lines`` chunker, titles ``lines a-b``.
    """
    trimmed = _trim(clean, start, end)
    if trimmed is None:
        return []
    a, b = trimmed
    if not title:
        return _windows(clean, a, b, "", lim)
    text = _fitting(clean, a, b, lim)  # (joined once: measured, then kept)
    if text is None:
        return _windows(clean, a, b, title, lim)
    return [(title, a, b, text)]


def _boundaries(defs: list[_Def], low: int, high: int) -> list[_Def]:
    """``defs`` starting in (low, high], by start line; of two on one line the first is kept
    (they share its unit)."""
    ordered: list[_Def] = []
    for definition in sorted(defs, key=lambda d: d.start):
        if low < definition.start <= high and (not ordered or definition.start > ordered[-1].start):
            ordered.append(definition)
    return ordered


def _bare(clean: list[str], start: int, end: int) -> bool:
    """Lines [start, end] hold at most :data:`BARE_LINES` non-blank lines of at most
    :data:`BARE_CHARS` characters together (leading and trailing spaces aside)."""
    count = chars = 0
    for line in clean[start - 1:end]:
        text = line.strip()
        if text:
            count += 1
            chars += len(text)
            if count > BARE_LINES or chars > BARE_CHARS:
                return False
    return True


def _unit(clean: list[str], definition: _Def, end: int, lim: CodeLimits, out: list[Piece], fold: bool,
          depth: int = 0, lead: int | None = None) -> None:
    """Chunks of the unit of ``definition`` (its start through ``end``; from ``lead`` when an
    enclosing bare header opens it): one unit, or, when it is too big and has members, a header
    unit plus the units of its members, recursively. With ``fold``, a bare header
    (:data:`BARE_LINES`) makes no chunk: its lines open the first member's."""
    start = definition.start if lead is None else lead
    trimmed = _trim(clean, definition.start, end)
    if trimmed is None:
        return
    members: list[_Def] = []
    if definition.title and depth < _MAX_DEPTH and definition.members and _oversize(clean, *trimmed, lim):
        members = _boundaries(definition.member_defs(), trimmed[0], trimmed[1])
    if not members:
        out.extend(_emit(clean, start, end, definition.title, lim))
        return
    # its own header lines decide (an enclosing bare header's lines were judged by their unit)
    carried = fold and _bare(clean, definition.start, members[0].start - 1)
    if not carried:
        out.extend(_emit(clean, start, members[0].start - 1, definition.title, lim))
    for k, member in enumerate(members):
        member_end = members[k + 1].start - 1 if k + 1 < len(members) else end
        opened = start if carried and k == 0 else None
        if member.members:
            _unit(clean, member, member_end, lim, out, fold, depth + 1, opened)
        else:
            out.extend(_emit(clean, member.start if opened is None else opened, member_end, member.title, lim))


def _structured(clean: list[str], defs: list[_Def], lim: CodeLimits, fold: bool = True) -> list[Piece]:
    """Partition the file at definition starts; split oversized containers at their members
    (folding bare headers into their first member's chunk with ``fold``)."""
    n = len(clean)
    ordered = _boundaries(defs, 0, n)
    out: list[Piece] = []
    if ordered and ordered[0].title == MODULE.title:  # (the file's own code from its first line)
        ordered[0] = ordered[0]._replace(start=1)
    if not ordered or ordered[0].start > 1:
        out.extend(_emit(clean, 1, ordered[0].start - 1 if ordered else n, "module", lim))
    for index, definition in enumerate(ordered):
        _unit(clean, definition, ordered[index + 1].start - 1 if index + 1 < len(ordered) else n, lim, out, fold)
    return out


def chunk_code(path: str, raw_text: str, masked_text: str, version: str = "1") -> tuple[str, list[Chunk]]:
    """(chunker name, chunks) of a code file: ``code:python/4``, ``code:<language>`` (with
    ``/<revision>`` when the language's table was revised, :attr:`Language.revision`) or ``lines``.

    ``raw_text`` and ``masked_text`` are LF-normalised and must have the same number of lines;
    ``version`` is the chunker version, which sets the size limits (:data:`LIMITS`).
    """
    lim = LIMITS[version]
    raw_lines = split_lines(raw_text)
    masked_lines = raw_lines if masked_text is raw_text else split_lines(masked_text)  # (nothing masked)
    if len(raw_lines) != len(masked_lines):
        raise ValueError(f"{path}: masked text has {len(masked_lines)} lines, raw text {len(raw_lines)}")
    clean = [line.rstrip() for line in masked_lines]
    language = language_for(path)
    if language == "python":
        defs = _python_defs(raw_text, raw_lines)
        if defs is not None:
            return PYTHON_CHUNKER, _numbered(_structured(clean, defs, lim, fold=False))
    elif language is not None:
        found = _tree_sitter_defs(language, raw_text)
        if found is not None:
            return found[0], _numbered(_structured(clean, found[1], lim))
    trimmed = _trim(clean, 1, len(clean))
    pieces = _windows(clean, trimmed[0], trimmed[1], "", lim) if trimmed is not None else []
    return LINES_CHUNKER, _numbered(pieces)


def _numbered(pieces: list[Piece]) -> list[Chunk]:
    return [Chunk(i, title, a, b, text) for i, (title, a, b, text) in enumerate(pieces)]
