"""The code re-rank (knowledge §12.3): what a user of a code-search tool expects on top of fusion.

Fusion ranks chunks; a developer asks for *files that implement something*, often by name. The
re-rank adjusts each candidate's retrieval score (the fused hybrid) with factors computed from
the candidate set and the question, every one of which ``--explain`` shows:

* ``definition`` (+): the chunk defines an identifier the question names (its title is
  ``class JsonReader`` for "JsonReader", or its text declares it), unless the question is a
  sentence and chunks of five or more files define that name (a project's namespace or an
  overloaded name tells no file apart);
* ``path`` (+): the file's name matches a named identifier (``JsonReader.java``), or its name and
  directory share words with the question ("redirects" → ``redirects.py``);
* ``file`` (+): file aggregation: the best chunk of a file gains with the total evidence of the
  file's other candidates, so a file that answers in several places ranks above a lucky chunk;
* ``role`` (×): tests, examples, fixtures, benchmarks, docs and data files rank below
  implementation unless the question asks for them (:mod:`ragit.pathroles`); a word that names a
  source directory of the candidates asks for nothing ("pytest" in pytest's ``src/_pytest/``),
  nor does one written inside a qualified name ("mock" in ``vi.mock``, an API);
  A Python module's ``if __name__ == "__main__":`` block, demo code at the foot of a library
  module (:func:`main_block`), counts as an example wherever its file is implementation;
* ``changelog`` (×): a changelog (``CHANGES``, ``HISTORY.rst``) ranks below other docs unless the
  question asks for it: it repeats every change's words, so it matches any question about one;
* ``header`` (×): a C/C++ header ranks below its implementation file when both are candidates
  (``idna.h`` / ``idna.c``): the header declares, the source file holds the code; so do a Python
  stub and a TypeScript declaration file below the implementation beside them (``setters.pyi`` /
  ``setters.py``, ``index.d.ts`` / ``index.js``);
* ``platform`` (×): code for Windows alone (``src/win/tcp.c``, ``file_windows.go``) ranks below its
  twin for other systems (``src/unix/tcp.c``, ``file_unix.go``) when both are candidates, unless the
  question asks about Windows: most questions mean the code that runs everywhere else;
* ``vendored`` (×): a bundled copy of another project (``pip/_vendor/``, ``requests/packages/urllib3/``)
  ranks below the project's own code unless the question names that project or asks for vendored code
  (:func:`ragit.pathroles.bundled_project`);
* ``stand-in`` (±): a chunk that names its file's code and holds none of it (:func:`stand_in`: the
  import block before the first definition, a Python ``__all__`` list, a ``__repr__``/``toString``
  method unless the question asks how something is shown) never stands for its file: when it is
  the file's best candidate it trades scores with the file's best other one, so the file keeps its
  place and shows its code (immer's ``import { createProxy, markChanged } from "../internal"`` named
  what a question asked about and implemented none of it; httpcore's ``ConnectionPool.__repr__``
  counts idle connections, ``_assign_requests_to_connections`` picks one);
* ``diversity`` (×): a file's second and later chunks are demoted, so the top results span files.

Boosts are fractions of the best fused score in the pool, so they mean the same for any question.
The re-rank is a pure function of its inputs (deterministic; ties broken by the caller's order).
Every weight below was kept only where it earned its place on the development sets
(``bench/quality_lab.py --ablate``; docs/evaluation.md).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from functools import lru_cache
from itertools import pairwise
from typing import Collection, Iterable, Sequence

from ..lazyre import LazyPattern
from ..lexical import identifier_parts, terms as lexical_terms, title_name
from ..pathroles import KNOWN_EXTENSIONS, bundled_project, is_changelog, path_role, platform_twin
from ..arrays import kth_largest, unique_sorted


@dataclass(frozen=True)
class RerankWeights:
    """The re-rank's constants, measured on the development sets; four of them can be set per
    repository (:data:`CONFIG_DEFAULTS`, chosen by ``ragit tune``)."""

    definition: float = 1.0  # × pool max, for a chunk defining a named identifier
    path_name: float = 0.5  # × pool max, file name equal to a named identifier
    path_words: float = 0.6  # × pool max × share of question words in the file's name and directory
    file: float = 0.2  # × pool max × the file's summed evidence / the best file's
    role: float = 0.5  # × for tests, fixtures, benchmarks (unless asked for)
    example: float = 0.5  # × for examples, demos, samples (unless asked for)
    doc: float = 0.35  # × for docs (unless asked for)
    other: float = 0.6  # × for data and configuration files
    diversity: float = 0.5  # × per earlier chunk of the same file in the ranking
    header: float = 0.7  # × for a C/C++ header, a .pyi or .d.ts whose implementation file is a candidate
    platform: float = 0.6  # × for Windows-only code whose twin for other systems is a candidate (unless asked for)
    vendored: float = 0.5  # × for a bundled copy of another project (``_vendor/``), unless asked for
    changelog: float = 0.5  # × for a changelog (after ``doc``), unless asked for
    pool: int = 100  # candidates re-ranked: the best by fused, keyword and vector score each


# The re-rank's configuration keys (``[retrieval]``) and their measured defaults. ``ragit tune``
# searches them per repository; ``rerank_path`` scales both path boosts (name 0.5, words 0.6).
CONFIG_DEFAULTS = {"rerank_definition": 1.0, "rerank_path": 1.0, "rerank_file": 0.2, "rerank_role": 0.5}


def weights_from_config(retrieval: dict) -> RerankWeights:
    """The weights a ``[retrieval]`` table asks for; the defaults give ``RerankWeights()`` exactly."""
    return _weights(*(float(retrieval.get(key, default)) for key, default in CONFIG_DEFAULTS.items()))


@lru_cache(maxsize=64)
def _weights(definition: float, path: float, file: float, role: float) -> RerankWeights:
    """The weights of these four settings (immutable, so one object serves every query)."""
    base = RerankWeights()
    return RerankWeights(definition=definition, path_name=base.path_name * path, path_words=base.path_words * path,
                         file=file, role=role)


# ``--ablate`` rows of bench/quality_lab.py: each rule switched off alone.
ABLATIONS: dict[str, dict[str, float]] = {
    "definition": {"definition": 0.0},
    "path": {"path_name": 0.0, "path_words": 0.0},
    "file aggregation": {"file": 0.0},
    "roles": {"role": 1.0, "example": 1.0, "doc": 1.0, "other": 1.0},
    "diversity": {"diversity": 1.0},
    "header": {"header": 1.0},
    "platform": {"platform": 1.0},
    "vendored": {"vendored": 1.0},
    "changelog": {"changelog": 1.0},
}


@dataclass
class RerankInput:
    """The candidates: fused score per row, and what each row is (path, title, text)."""

    hybrid: "Sequence[float]"
    paths: Sequence[str]
    titles: Sequence[str]
    texts: Sequence[str]
    # candidates known to be a Python ``__main__`` block (:func:`main_block`): the caller reads
    # titles and texts only for the few rows that can be hits, so it names them
    main_blocks: frozenset[int] = frozenset()
    # candidates known to stand in for their file's code (:func:`stand_in`), named the same way
    stand_ins: frozenset[int] = frozenset()


@dataclass
class RerankResult:
    order: list[int]  # candidate indices, best first
    scores: dict[int, float]  # adjusted retrieval score per ranked candidate
    factors: dict[int, dict[str, float]] = field(default_factory=dict)  # non-neutral factors only


# ---------------------------------------------------------------- the question

_QUALIFIED = LazyPattern(r"^[A-Za-z_$][\w$]*(?:(?:::|\\|->|\.|#)[A-Za-z_$][\w$]*)+[!?]?$")
_SINGLE = LazyPattern(r"^[A-Za-z_$][\w$]*[!?]?$")
# A qualified name in a sentence: a.b, A::B, a#b, a->b, maybe called (``a.b()``).
_DOTTED = r"[A-Za-z_$][\w$]*(?:(?:::|\.|#|->)[A-Za-z_$][\w$]*)+(?:\(\))?"
_EMBEDDED = LazyPattern(
    r"(?<![\w.])(?:"
    + _DOTTED +  # qualified
    r"|_*[a-z][a-z0-9]*(?:_[a-z0-9]+)+_*"  # snake_case
    r"|_+[A-Za-z][\w]*"  # _private
    r"|[a-z]+[0-9]*[A-Z][A-Za-z0-9]*"  # camelCase
    r"|[A-Z][a-z0-9]+[A-Z][A-Za-z0-9]*"  # PascalCase with an inner capital
    r"|[A-Z]{2,}[a-z][A-Za-z0-9]*"  # HTTPServer
    r"|[A-Za-z_][\w]*\(\)"  # name()
    r")(?![\w])"
)
_QUALIFIED_NAME = LazyPattern(r"(?<![\w.$])" + _DOTTED + r"(?![\w$])")


def _without_api_names(text: str) -> str:
    """``text`` with its qualified names (``vi.mock``, ``A::B``) blanked, file names
    (:data:`ragit.pathroles.KNOWN_EXTENSIONS`) kept."""
    return _QUALIFIED_NAME.sub(
        lambda m: m.group(0) if "." + m.group(0).rsplit(".", 1)[-1] in KNOWN_EXTENSIONS else " ", text)


_SEPARATORS = LazyPattern(r"::|\\|->|\.|#")
# A capitalised word next to the kind of thing it names ("the Content protocol", "Request type",
# "class Blueprint"): a name, though a sentence's capitalised words on their own are not (as a
# rule they cost more languages than they helped: docs/evaluation.md).
_KINDS = r"(?:protocol|class|struct|type|trait|interface|enum|module|typeclass|record|object|behaviour)"
_KIND_NAMED = LazyPattern(rf"(?<![\w.$])([A-Z][a-z0-9]+)[ \t]+{_KINDS}s?(?![\w$])|(?<![\w$]){_KINDS}[ \t]+([A-Z][a-z0-9]+)(?![\w$])")

# Words that ask for a role the re-rank would otherwise demote.
_ASKS = {
    "test": ("test", "tests", "testing", "spec", "specs", "unittest", "pytest", "conftest", "fixture", "fixtures",
             "mock", "mocks"),
    "example": ("example", "examples", "demo", "demos", "sample", "samples", "tutorial"),
    "doc": ("doc", "docs", "documentation", "readme", "guide", "changelog", "document", "documented", "manual",
            "readthedocs"),
    "benchmark": ("benchmark", "benchmarks", "bench", "perf"),
    "vendored": ("vendor", "vendored", "vendoring", "bundled", "bundle"),
    "changelog": ("changelog", "changelogs", "history", "news", "whatsnew", "release", "releases", "released"),
    "site": ("page", "pages", "sidebar"),  # a docs site's pages: read by ragit.retrieve.docsite only
    # code for Windows alone (a digit ends a word here: "win32" is read as "win")
    "windows": ("windows", "win", "winapi", "msvc", "mingw", "iocp"),
}

_ASK_SETS = tuple((role, frozenset(words)) for role, words in _ASKS.items())
_ASK_WORDS = frozenset(w for words in _ASKS.values() for w in words)
_LETTERS = LazyPattern(r"[A-Za-z]+")


ASK_WORDS = 24  # words of the first line read for what the question asks for


@dataclass(frozen=True)
class Question:
    names: tuple[str, ...]  # identifiers the question names (last component of a qualified one)
    symbol: bool  # the question is one identifier
    words: frozenset[str]  # stemmed content terms
    asks: frozenset[str]  # roles the question asks for
    ask_words: frozenset[str] = frozenset()  # the first line's words that ask for them
    # (asking word, it joined with the word beside it): "test client" may name ``testclient.py``
    ask_compounds: frozenset[tuple[str, str]] = frozenset()


@lru_cache(maxsize=65536)
def _norm(name: str) -> str:
    """Case- and separator-insensitive form of an identifier: ``field_validator`` = ``FieldValidator``."""
    return "".join(identifier_parts(name))


@lru_cache(maxsize=1024)
def read_question(question: str) -> Question:
    q = question.strip()
    names: list[str] = []
    symbol = bool(_SINGLE.match(q) or _QUALIFIED.match(q))
    # the first line (an issue's title) is what the question asks: a capitalised word next to its
    # kind is read there only, as are the roles it asks for (a long bug report mentions "test",
    # "docs" or "the Parser class" in passing)
    first = q.split("\n", 1)[0]
    candidates = [q] if symbol else _EMBEDDED.findall(q) + [a or b for a, b in _KIND_NAMED.findall(first)]
    for c in candidates:
        c = c.rstrip("()")
        parts = [p for p in _SEPARATORS.split(c) if p]
        if parts:
            names.append(parts[-1])
            if len(parts) > 1:
                names.append("".join(parts))
    title = first.split()[:ASK_WORDS]
    # a word written inside a qualified name (``vi.mock``, ``mock.patch``) names code and asks
    # for no role; a file name (``conftest.py``) still does
    ordered = [w.lower() for w in _LETTERS.findall(_without_api_names(" ".join(title)))]
    lowered = set(ordered)
    asks = _roles_asked_by(lowered)
    compounds = frozenset((w, c) for a, b in pairwise(ordered) for w in (a, b) if w in _ASK_WORDS
                          for c in {a + b, (a + b).removesuffix("s")}) if asks else frozenset()
    return Question(tuple(dict.fromkeys(n for n in names if _norm(n))), symbol,
                    frozenset(lexical_terms(q)), asks, frozenset(lowered & _ASK_WORDS), compounds)


def _roles_asked_by(words: "set[str] | frozenset[str]") -> frozenset[str]:
    return frozenset(role for role, asking in _ASK_SETS if not words.isdisjoint(asking))


def asked_roles(q: Question, paths: Iterable[str]) -> frozenset[str]:
    """The roles ``q`` asks for, less those only asked by words that name a source directory or
    module of the candidates ``paths`` (:func:`_source_names`): in pytest's repository "pytest"
    names ``src/_pytest/``, the project, not its tests (as "history" names a ``history/`` package,
    "bundle" a ``bundle/`` one and "fixture" pytest's ``fixtures.py``). A word that names one
    together with the word beside it asks for nothing either: "the test client" is starlette's
    ``testclient.py`` (:func:`_joined_names`)."""
    if not q.asks:
        return q.asks
    named: set[str] = set()
    compounds = {c for _, c in q.ask_compounds}
    for p in paths:
        found = _source_names(p)
        if found and not found.isdisjoint(q.ask_words):
            named |= found & q.ask_words
        if compounds:
            joined = _joined_names(p)
            if not compounds.isdisjoint(joined):
                named.update(w for w, c in q.ask_compounds if c in joined)
    return _roles_asked_by(q.ask_words - named) if named else q.asks


_TEST_WORDS = frozenset(_ASKS["test"])

# A top-level ``if __name__ == "__main__":`` opening a chunk, after any comment lines.
_MAIN_GUARD = LazyPattern(r"""[ \t]*(?:#[^\n]*\n[ \t]*)*if[ \t]+__name__[ \t]*==[ \t]*(['"])__main__\1[ \t]*:""")


def main_block(path: str, title: str, text: str) -> bool:
    """Whether a chunk is a Python module's ``if __name__ == "__main__":`` block: the code that
    runs when the module is a script, which in a library is a demo of it (rich ends 47 of its 78
    modules with one). The chunker titles such top-level code ``module``; only the first window of
    a long block opens with the guard, so later windows are not recognised."""
    return path.endswith(".py") and title.startswith("module") and _MAIN_GUARD.match(text) is not None


# One statement that imports, includes or uses another file (or names the file's package), in
# the languages the chunker cuts: JavaScript/TypeScript ``import``/``export … from``/``require``,
# Python ``import``/``from … import``, Go's import block, Java/Kotlin/Swift ``import``, Rust
# ``use``/``mod``, C# ``using``, C/C++ ``#include``, Ruby ``require``, PHP ``use``.
_IMPORT_STATEMENT = LazyPattern(
    r"""^[ \t]*(?:
        (?:import|export)\b[^;'"`]*?\bfrom[ \t]*(['"])[^'"\n]*\1[ \t]*;?
      | import[ \t]*(['"])[^'"\n]*\2[ \t]*;?
      | (?:const|let|var)[ \t]+[^=;\n]+=[ \t]*require\([^)\n]*\)[ \t]*;?
      | from[ \t]+[\w.]+[ \t]+import[ \t]+(?:\([^)]*\)|[^\n]*)
      | import[ \t]+(?:static[ \t]+)?[\w.]+(?:\.\*)?(?:[ \t]+as[ \t]+\w+)?
        (?:[ \t]*,[ \t]*[\w.]+(?:[ \t]+as[ \t]+\w+)?)*[ \t]*;?
      | import[ \t]*\([^)]*\)
      | import[ \t]+(?:[\w.]+[ \t]+)?"[^"\n]*"
      | package[ \t]+[\w.]+[ \t]*;?
      | (?:pub[ \t]+)?(?:use[ \t]+[^;]+|mod[ \t]+\w+|extern[ \t]+crate[ \t]+[^;]+);
      | using[ \t]+(?:static[ \t]+)?[\w.]+(?:[ \t]*=[ \t]*[\w.<>]+)?[ \t]*;
      | \#[ \t]*(?:include[ \t]*[<"][^>"\n]*[>"]|pragma[ \t]+once)
      | require(?:_relative)?[ \t(]+['"][^'"\n]*['"]\)?
      | ['"]use[ \t]+strict['"][ \t]*;?
      | <\?php
    )[ \t]*$""", re.MULTILINE | re.VERBOSE)
# what may stand between them: blank lines and comments (``//``, ``#``, ``--``, ``/* */``)
_BETWEEN_IMPORTS = LazyPattern(r"^[ \t]*(?://.*|\#.*|--.*)?$", re.MULTILINE)
_BLOCK_COMMENT = LazyPattern(r"/\*.*?\*/", re.DOTALL)


def import_block(title: str, text: str) -> bool:
    """Whether a chunk is a file's import block: the top-level code before its first definition
    (titled ``module``) holding nothing but import statements and comments. It names what a
    question asks about (``import { createProxy, markChanged } from "./internal"``) and implements
    none of it, so it never represents its file (:func:`rerank_pool`)."""
    return title.startswith("module") and _import_block(text)


@lru_cache(maxsize=4096)
def _import_block(text: str) -> bool:
    """:func:`import_block`'s test of a ``module`` chunk's text; remembered: a warm process meets
    the same module chunks question after question."""
    bare = _BLOCK_COMMENT.sub("", text) if "/*" in text else text
    if not _opens_with_statement(bare):
        return False
    rest = _IMPORT_STATEMENT.sub("", bare)
    return rest != text and not _BETWEEN_IMPORTS.sub("", rest).strip()


def _opens_with_statement(bare: str) -> bool:
    """Whether the first line of ``bare`` that is neither blank nor a line comment opens an import
    statement (or there is no such line): else no import block, and the statements need not be
    looked for. Exact: a statement match spans whole lines from the line its keyword opens, and
    none opens on a blank or ``//``/``--`` line, or ends past an ``#include`` line it opens; so
    that first line survives every removal and is what is left. (A Haskell module's ``module
    Text.Pandoc.X where`` chunk failed only after each ``import`` line's lazy scan for ``from``
    had read the rest of the chunk: ≈ 0.9 ms of each pandoc question.)"""
    at = 0
    for line in bare.split("\n"):
        if not _BETWEEN_IMPORTS.fullmatch(line):
            return _IMPORT_STATEMENT.match(bare, at) is not None
        at += len(line) + 1
    return True


# the last name of a method that shows its object (Python, Java/Kotlin/JS/TS, C#, Go, Ruby) and the
# Rust trait implementations that do; and the question words that ask how an object is shown
_DISPLAY_METHODS = frozenset({"__repr__", "__str__", "__rich_repr__"})
# names other code also uses (gin's ``Context.String(code, format, values...)`` writes a response):
# a display method only when defined without parameters (``String() string``, ``toString()``, ``def to_s``)
_DISPLAY_NAMED = frozenset({"toString", "ToString", "String", "to_s"})
_DISPLAY_DEFINED = LazyPattern(r"\b(?:toString|ToString|String)\s*\(\s*\)|\bdef\s+(?:self\.)?to_s\b(?!\s*\(\s*\w)")
_DISPLAY_IMPL = LazyPattern(r"impl (?:fmt::)?(?:Display|Debug) for ")
_DISPLAY_WORDS = "repr representation str string tostring print display debug format show"


@lru_cache(maxsize=1)
def _display_terms() -> frozenset[str]:
    return frozenset(lexical_terms(_DISPLAY_WORDS))


def stand_in(title: str, text: str, question: Question) -> bool:
    """Whether a chunk names its file's code without holding it, so it never represents its file
    (:func:`rerank_pool`): the file's import block (:func:`import_block`), a Python ``__all__``
    list, or a method that shows its object (``__repr__``, ``toString``, Go's ``String``, Rust's
    ``impl Display``) unless the question asks how something is shown or names the method."""
    if import_block(title, text) or title == "variable __all__":
        return True
    kind, _, name = title.partition(" ")
    last = name.split(" (lines ", 1)[0].rsplit(".", 1)[-1]
    if kind == "method" and last in _DISPLAY_NAMED:
        if not _DISPLAY_DEFINED.search(text):
            return False
    elif not ((kind == "method" and last in _DISPLAY_METHODS) or _DISPLAY_IMPL.match(title)):
        return False
    return not (question.words & _display_terms() or last in question.names)


@lru_cache(maxsize=65536)
def _source_names(path: str) -> frozenset[str]:
    """The directory names of a source file, lower-cased and without leading or trailing
    underscores (``_pytest`` names pytest), and its module name where that is a word asking for
    tests, a plural one also in the singular: test frameworks name their own modules so (pytest's
    ``fixtures.py``, ``unittest/mock.py``, flask's ``testing.py``). No other role's word is read
    from a module name: Go's ``doc.go`` documents its package, a docs site's ``sidebars.js`` is
    the site. None for a file of any other role."""
    if path_role(path) != "source":
        return frozenset()
    *dirs, name = path.lower().split("/")
    stem = name.split(".", 1)[0].strip("_")
    modules = {stem, stem[:-1] if stem.endswith("s") else stem} & _TEST_WORDS
    return frozenset({d.strip("_") for d in dirs} | modules)


@lru_cache(maxsize=65536)
def _joined_names(path: str) -> frozenset[str]:
    """The names of a source file's directories and module, lower-cased, without separators
    (``test_utils/`` → ``testutils``), each also without a plural's ``s``: what two words of a
    question name when joined. None for a file of any other role."""
    if path_role(path) != "source":
        return frozenset()
    *dirs, name = path.lower().split("/")
    found = {_JOINERS.sub("", n) for n in (*dirs, name.split(".", 1)[0])}
    return frozenset(found | {n[:-1] for n in found if n.endswith("s")})


_JOINERS = LazyPattern(r"[-_]")


# ---------------------------------------------------------------- the candidates

# Keywords that declare the name after them (``impl X``, ``using X``, ``alias X`` only refer to it).
_DEF_KEYWORDS = (r"class|struct|interface|trait|enum|union|type|typedef|protocol|record|object|module"
                 r"|defmodule|defprotocol|namespace|def|defp|defmacro|fn|func|fun|function|sub|proc|macro"
                 r"|data|newtype|actor|let|const|var|val")


# A declaration that starts a line: optional modifier words (``pub``, ``export default``,
# ``public static``; one may carry an argument list, as Rust's ``pub(crate)`` and an annotation's
# ``@available(iOS 13, *)``), a declaring keyword, the declared name (possibly qualified; the last
# part is captured). A C++ class, struct or union may carry an export macro before its name
# (``class FMT_API format_error``, ``class JSI_EXPORT LazyObject``): an upper-case word there is
# passed over. A declaring keyword followed by a word is a modifier, not the name (Kotlin's ``data
# class Point``, ``enum class Color``, Rust's ``const fn new``, C's ``typedef struct node``).
# Comment lines start with punctuation (``//``, ``#``, ``*``), so examples in doc comments never
# match. An indented bare ``type X = ...`` binds an associated type of an ``impl`` (Rust: ``type
# Deserializer = Self;``, dozens of them) and declares nothing. One pattern for every name:
# compiled once, not per question.
_DECLARATION = LazyPattern(
    r"^(?![ \t]+type[ \t]+[A-Za-z_$][\w$]*[ \t]*(?:<[^>\n]*>[ \t]*)?=)"
    rf"[ \t]*(?:[\w@]+(?:\([^()\n]*\))?[ \t]+)*?(?P<word>{_DEF_KEYWORDS})[ \t]+"
    r"(?:(?:(?<=class[ \t])|(?<=struct[ \t])|(?<=union[ \t]))[A-Z][A-Z0-9_]*[ \t]+(?=[A-Za-z_]))?"
    rf"(?!(?:{_DEF_KEYWORDS})[ \t]+[A-Za-z_$])"
    r"(?:[\w:.]+[.:])?(?P<name>[A-Za-z_$][\w$]*[!?]?)",
    re.MULTILINE)

# ``let``/``const``/``var``/``val`` declare a local as readily as a definition: one deeper than the
# chunk's own level (the least indentation of its lines) is a local inside a function's body (a
# handler's ``const createContext = ...``), which defines nothing a question asks for
_VARIABLE_WORDS = frozenset(("let", "const", "var", "val"))


def _level(text: str) -> int:
    """The least indentation of ``text``'s non-blank lines."""
    return min((len(line) - len(line.lstrip(" \t")) for line in text.split("\n") if line.strip()), default=0)


def _local(m: "re.Match[str]", level: "int | None", text: str) -> bool:
    """Whether the declaration ``m`` (a :data:`_DECLARATION` match in ``text``; ``level``: its
    :func:`_level`, None until known) is a variable declared deeper than the chunk's level."""
    line = m.group(0)
    indent = len(line) - len(line.lstrip(" \t"))
    if not indent or m.group("word") not in _VARIABLE_WORDS:
        return False
    return indent > (_level(text) if level is None else level)


def _declares(text: str, names: Sequence[str]) -> bool:
    """``text`` has a line declaring one of ``names`` (spelled exactly)."""
    wanted = [n for n in names if len(n) > 1 and n in text]  # a substring test (in C) first
    if not wanted:
        return False
    # a declaration lies within one line and names what it declares, so only the lines holding
    # a wanted name can declare it: match there instead of scanning every line of the chunk
    tried: set[int] = set()
    for name in wanted:
        at = text.find(name)
        while at >= 0:
            start = text.rfind("\n", 0, at) + 1
            if start not in tried:
                tried.add(start)
                m = _DECLARATION.match(text, start)
                if m is not None and m.group("name") in wanted and not _local(m, None, text):
                    return True
            end = text.find("\n", at)
            if end < 0:
                break
            at = text.find(name, end)
    return False


# The names each chunk text declares (one per declaring line), kept for a warm process: a small
# repository's pool holds much the same chunks question after question, whatever it asks. A text
# is read whole from its second look on; the first tests only the lines that hold the names asked
# for (:func:`_declares`), so a one-shot query does no more work than that.
_DECLARED_MAX = 8192
_declared: dict[str, "frozenset[str] | None"] = {}


def _declares_seen(text: str, names: Sequence[str], spelled: "frozenset[str]") -> bool:
    """:func:`_declares` (``spelled``: the ``names`` longer than one character). A line declares
    at most one name and holds the name it declares, so ``text`` declares one of ``names`` iff the
    set of the names its lines declare meets ``spelled``."""
    found = _declared.get(text, _declared)  # (the dict itself: never seen)
    if found is _declared:
        if len(_declared) >= _DECLARED_MAX:
            _declared.clear()
        _declared[text] = None
        return bool(spelled) and _declares(text, names)
    if found is None:
        matches = list(_DECLARATION.finditer(text))
        level = _level(text) if matches else 0
        found = _declared[text] = frozenset(m.group("name") for m in matches if not _local(m, level, text))
    return not found.isdisjoint(spelled)


@lru_cache(maxsize=65536)
def _title_names(title: str) -> tuple[str, str]:
    """(defined name, owner) of a chunk title: ``method Client.send`` → (``send``, ``Client``)."""
    name = title_name(title)
    if not name:
        return "", ""
    parts = [p for p in _SEPARATORS.split(name.split(" ")[-1]) if p]
    if not parts:
        return "", ""
    return parts[-1], parts[-2] if len(parts) > 1 else ""


def defines(title: str, text: str, names: Sequence[str]) -> float:
    """How surely the chunk defines one of ``names``: 1.0 when its title or a declaration in its
    text spells the name exactly (``class Command`` for "Command"), 0.5 when only the case or the
    separators differ (``def command``, ``fieldValidator`` for ``field_validator``), else 0."""
    if not names:
        return 0.0
    return _definitions((title,), (text,), names).get(0, 0.0)


@lru_cache(maxsize=1024)
def _normalised(names: tuple[str, ...]) -> frozenset[str]:
    return frozenset(_norm(n) for n in names)


# Files whose path facts a process keeps (a snapshot with more files than this is not computed whole)
PATH_CACHE = 65536


def _path_parts(path: str) -> tuple[str, frozenset[str]]:
    """(normalised file stem, stemmed words of the file stem and its directory; read once per
    path, through :data:`_PATH_FACTS`)."""
    directory, _, name = path.rpartition("/")
    dot = name.find(".")
    file_stem = name[:dot] if dot > 0 else name
    return _norm(file_stem), _dir_words(directory.rpartition("/")[2]).union(lexical_terms(file_stem))


@lru_cache(maxsize=16384)
def _dir_words(parent: str) -> frozenset[str]:
    """The stemmed words of a directory name (once per directory: its files share them)."""
    return frozenset(lexical_terms(parent))


def _top(scores, k: int, tie_order=None, finite: bool = False):
    """Positions of the ``k`` highest finite scores. When rows tied at the threshold must be cut,
    ``tie_order`` (positions → the same positions in a content order, e.g. by path and chunk id)
    decides which stay, so the pool does not depend on row numbering (which follows the order a
    store ingested its commits); without it, the first rows. A pool never swells with a run of
    equal scores. ``finite``: the caller knows every score is finite."""
    import numpy as np

    if finite:
        return _top_of(scores, None, k, tie_order)
    is_finite = np.isfinite(scores)
    if is_finite.all():  # every row a candidate, none gathered
        return _top_of(scores, None, k, tie_order)
    idx = np.flatnonzero(is_finite)
    return _top_of(scores[idx], idx, k, tie_order)


def _top_of(values, idx, k: int, tie_order=None):
    """:func:`_top` of the candidates ``values`` (finite), at positions ``idx`` (None: 0, 1, ...)."""
    import numpy as np

    if len(values) <= k:
        return np.arange(len(values)) if idx is None else idx
    kth = kth_largest(values, k)
    # the rows at or above the threshold (about k), then which of them are above it and tied:
    # one pass over the candidates instead of two
    reach = np.flatnonzero(values >= kth)
    if len(reach) <= k:  # no row tied at the threshold is cut: all of them, in position order
        return reach if idx is None else idx[reach]
    at = values[reach]
    above, tied = reach[at > kth], reach[at == kth]
    if idx is not None:
        above, tied = idx[above], idx[tied]
    need = k - len(above)
    if tie_order is not None and len(tied) > need:
        tied = tie_order(tied)
    return np.concatenate([above, tied[:need]])


# Below this many rows per chosen row, the pool's rows are marked in a mask instead of sorted.
_MASK_RATIO = 64


def pool_indices(hybrid, keyword, vector, size: int, top: int, tie_order=None, *, finite: bool = False,
                 matches=None):
    """Rows worth re-ranking: the ``max(size, 2·top)`` best by fused score, and the ``size`` best
    by keyword (matches only) and by vector score each (a definition can rank low on one input
    alone); ties cut at a threshold are settled by ``tie_order`` (see :func:`_top`). Arrays in
    (``-inf`` = not a candidate), a sorted int64 array out. A caller that knows may say that every
    fused and vector score is ``finite`` and give the keyword ``matches`` (the positions of the
    positive keyword scores, ascending), which are then not looked for again."""
    import numpy as np

    if matches is None:
        matches = np.flatnonzero(keyword > 0)  # the finite positive keyword scores: the positive ones,
    matched = keyword[matches]  # then (seldom) without an infinite one
    if len(matched) and matched.max() == np.inf:
        is_finite = matched < np.inf
        matches, matched = matches[is_finite], matched[is_finite]
    parts = (_top(hybrid, max(size, 2 * top), tie_order, finite), _top_of(matched, matches, size, tie_order),
             _top(vector, size, tie_order, finite))
    n = len(hybrid)
    if n <= _MASK_RATIO * sum(map(len, parts)):  # a small snapshot: mark the rows, read them in order
        chosen = np.zeros(n, dtype=bool)
        for part in parts:
            chosen[part] = True
        return np.flatnonzero(chosen).astype(np.int64, copy=False)
    return unique_sorted(np.concatenate(parts)).astype(np.int64, copy=False)


_HEADERS = (".h", ".hh", ".hpp", ".hxx", ".h++")
_SOURCES = (".c", ".cc", ".cpp", ".cxx", ".c++", ".m", ".mm")


# Python's type stubs (``.pyi``) and TypeScript's declaration files (``.d.ts``) declare what a
# file of the same name beside them implements, as a C header does
_STUBBED = frozenset((".py", ".pyi", ".ts", ".mts", ".cts", ".js", ".mjs", ".cjs"))
_DECLARATION_FILE = LazyPattern(r"(?:\.pyi|\.d\.[mc]?ts)$")


def _split_ext(path: str) -> tuple[str, str]:
    """(file name without its last extension, the extension with its dot, lower-cased)."""
    name = path.rpartition("/")[2]
    dot = name.rfind(".")
    return (name[:dot], name[dot:].lower()) if dot > 0 else (name, "")


_Path = tuple[str, frozenset[str], str, "str | None", str, str, bool, bool, str]


def _path_facts(path: str) -> _Path:
    """Everything the re-rank reads from a path alone, once per path: (normalised file stem, its
    words, :func:`ragit.pathroles.path_role`, :func:`ragit.pathroles.bundled_project`, file name
    without its extension, ``.c`` for a C/C++ source file, ``.h`` for a header, else "" (a Python,
    TypeScript or JavaScript file is ``.c`` and its stub or declaration file ``.h``, named by their
    path without the extension: the pair must share a directory),
    :func:`ragit.pathroles.is_changelog`, and the two of :func:`ragit.pathroles.platform_twin`)."""
    file_stem, words = _path_parts(path)
    name, ext = _split_ext(path)
    kind = ".c" if ext in _SOURCES else ".h" if ext in _HEADERS else ""
    if not kind and ext in _STUBBED:  # a stub or declaration file and its implementation: the same directory
        declares = _DECLARATION_FILE.search(path)
        kind = ".h" if declares else ".c"
        name = "\0" + path[:declares.start() if declares else -len(ext)]
    # (bundled_project and is_changelog uncached: their answer is kept here, and a miss of a full
    # lru_cache costs an eviction in memory the question's other stages have evicted; path_role
    # stays cached, the docs-site stage asks it again)
    return (file_stem, words, path_role(path), bundled_project.__wrapped__(path), name, kind,
            is_changelog.__wrapped__(path), *platform_twin(path))


class _PathFacts(dict):
    """Path → :func:`_path_facts`, computed on first use; up to :data:`PATH_CACHE` paths, then
    started afresh. A plain dict, not an ``lru_cache``: a hit is one C-level look-up that writes
    nothing (an LRU moves its link on every hit: memory the einsum evicted, ~170 paths a question).

    ``word_paths`` indexes the kept paths by the words of their names (:func:`_path_parts`), so
    the re-rank finds the pool's files whose names share a word with the question from the
    question's few words, instead of reading every file's words (~0.15 µs a file once the einsum
    has evicted them); ``generation`` counts the restarts."""

    def __init__(self) -> None:
        super().__init__()
        self.word_paths: dict[str, "str | set[str]"] = {}  # (a word of one path: that path)
        self.generation = 0
        self.windows = 0  # kept paths of code for Windows alone (none in most repositories)

    def __missing__(self, path: str) -> _Path:
        if len(self) >= PATH_CACHE:
            self.clear()
            self.word_paths.clear()
            self.generation += 1
            self.windows = 0
        value = self[path] = _path_facts(path)
        if value[7]:
            self.windows += 1
        index = self.word_paths
        for word in value[1]:
            found = index.get(word)
            if found is None:
                index[word] = path
            elif found.__class__ is str:
                index[word] = {found, path}
            else:
                found.add(path)
        return value

    def sharing(self, words: "frozenset[str]", files: int) -> "set[str] | None":
        """The kept paths whose name words meet ``words``; None when a word names more than
        ``files`` paths (reading those costs more than testing the ``files`` of a pool)."""
        index = self.word_paths
        out: set[str] = set()
        for word in words:
            found = index.get(word)
            if found is None:
                continue
            if found.__class__ is str:
                out.add(found)
            elif len(found) > files:
                return None
            else:
                out |= found
        return out


_PATH_FACTS = _PathFacts()


def remember_paths(paths: "Iterable[str]") -> None:
    """Compute :func:`_path_facts` of ``paths`` now (a warm process's small snapshot, whole:
    its questions then find every file's facts kept)."""
    facts = _PATH_FACTS
    for path in paths:
        facts[path]  # (computed when missing)


# What a warm process knows of each chunk it has tested (by text, with the title it was tested
# under): the keys its definition test can meet, ``=`` + the name its title defines, ``~`` + that
# name normalised and ``+`` + each name a line of its text declares. A pool's test is then one set
# intersection a row: the einsum over the snapshot's matrix has just pushed the objects the full
# test reads (titles, the title caches, the declared sets) out of the processor's caches, so the
# fewer a row touches, the less it waits (Newtonsoft.Json: 52 µs a question alone, 126 µs after the
# einsum). Kept only once a text's declarations are known (its second look), for at most as many
# texts as :data:`_declared`.
_keys: dict[str, tuple[str, frozenset[str]]] = {}


@lru_cache(maxsize=1024)
def _probe(names: tuple[str, ...]) -> frozenset[str]:
    """The keys (as in :data:`_keys`) that ``names`` would meet."""
    return frozenset(["=" + n for n in names] + ["~" + n for n in _normalised(names)]
                     + ["+" + n for n in names if len(n) > 1])


def _definitions(titles: Sequence[str], texts: Sequence[str], names: Sequence[str]) -> dict[int, float]:
    """:func:`defines` of every candidate that defines one of ``names`` (non-empty), by position."""
    names = tuple(names)
    exact = set(names)
    normalised = _normalised(names)
    spelled = frozenset(n for n in names if len(n) > 1)  # what _declares looks for
    probe = _probe(names)
    keys = _keys
    out: dict[int, float] = {}
    for i, (title, text) in enumerate(zip(titles, texts)):
        known = keys.get(text)
        if known is not None and known[0] == title and known[1].isdisjoint(probe):
            continue  # defines none of them (what the test below would find)
        defined = _title_names(title)[0]
        if defined:
            if defined in exact:
                out[i] = 1.0
                continue
            if _norm(defined) in normalised:
                out[i] = 0.5
                continue
        if _declares_seen(text, names, spelled):
            out[i] = 1.0
        if known is None:
            declared = _declared.get(text)
            if declared is not None:  # (a frozenset: the text's declarations are known)
                if len(keys) >= _DECLARED_MAX:
                    keys.clear()
                own = ["=" + defined, "~" + _norm(defined)] if defined else []
                keys[text] = (title, frozenset(own + ["+" + d for d in declared]))
    return out


class _RoleFactors(dict):
    """Role → :func:`_role_factor` for one question kind and weights, each role's computed on
    first use (kept across questions by :func:`_role_factors`)."""

    def __init__(self, asks: frozenset[str], weights: RerankWeights) -> None:
        super().__init__()
        self.asks, self.weights = asks, weights

    def __missing__(self, role: str) -> float:
        value = self[role] = _role_factor(role, self.asks, self.weights)
        return value


_role_factors = lru_cache(maxsize=256)(_RoleFactors)


def _role_factor(role: str, asks: frozenset[str], weights: RerankWeights) -> float:
    if role in ("test", "fixture", "benchmark"):
        asked = role in asks or (role == "fixture" and "test" in asks)
        return 1.0 if asked else weights.role
    if role == "example":
        return 1.0 if "example" in asks else weights.example
    if role == "doc":
        return 1.0 if "doc" in asks else weights.doc
    if role == "other":
        return weights.other
    return 1.0


# What the re-rank found about one file of the pool (every rule but ``definition`` is a fact about
# a file): (path boost, file boost, the chunk the file boost goes to or -1, role factor, changelog,
# bundled copy, header of a candidate source file, Windows-only twin of a candidate file).
_Facts = tuple[float, float, int, float, bool, bool, bool, bool]


@dataclass
class Ranking:
    """The re-rank of a whole pool: each candidate's score and, on demand, its factors. A query
    reports ten candidates of ~150, so the factors are rebuilt only for those (:meth:`factors`)."""

    scores: list[float]  # the re-ranked retrieval score of each candidate
    paths: "Sequence[str]"
    weights: RerankWeights
    definition: dict[int, float]  # candidate → its definition boost
    files: dict[str, _Facts]
    ranked: dict[str, list[int]]  # a file's candidates (two or more), best adjusted score first
    demos: frozenset[int] = frozenset()  # candidates demoted as a ``__main__`` block (an example)
    demote_main: bool = False  # a ``__main__`` block of an implementation file would be demoted
    # the scores a stand-in (:func:`stand_in`) and its file's best other candidate traded: what each gained
    traded: dict[int, float] = field(default_factory=dict)
    shared: Collection[str] = frozenset()  # the files of several candidates
    _order: list[int] | None = None

    @property
    def order(self) -> list[int]:
        """Every candidate, best first (ties keep the candidates' order)."""
        if self._order is None:
            import numpy as np

            scores = np.array(self.scores, dtype=np.float64)
            if len(scores) > 1 and np.isfinite(scores).all():  # a stable sort of the negated: the same
                self._order = np.argsort(-scores, kind="stable").tolist()
            else:
                self._order = sorted(range(len(self.scores)), key=self.scores.__getitem__, reverse=True)
        return self._order

    def trades_stand_in(self, i: int) -> bool:
        """Whether candidate ``i``, were it a stand-in for its file's code (:func:`stand_in`), could
        trade its score: its file has another candidate."""
        return self.paths[i] in self.shared

    def demotes_main_block(self, i: int) -> bool:
        """Whether candidate ``i``, were it a ``__main__`` block (:func:`main_block`), would be
        demoted: the question asks for no example and its file is implementation."""
        return self.demote_main and self.files[self.paths[i]][3] == 1.0

    def factors(self, i: int) -> dict[str, float]:
        """Candidate ``i``'s non-neutral factors, in the order the rules apply."""
        out: dict[str, float] = {}
        boost = self.definition.get(i)
        if boost is not None:
            out["definition"] = boost
        p = self.paths[i]
        path_boost, file_boost, best, role, changelog, vendored, header, platform = self.files[p]
        if path_boost:
            out["path"] = path_boost
        if file_boost and i == best:
            out["file"] = file_boost
        if role != 1.0:
            out["role"] = role
        elif i in self.demos:
            out["role"] = self.weights.example
        if changelog:
            out["changelog"] = self.weights.changelog
        if vendored:
            out["vendored"] = self.weights.vendored
        if header:
            out["header"] = self.weights.header
        if platform:
            out["platform"] = self.weights.platform
        gained = self.traded.get(i)
        if gained is not None:
            out["stand-in"] = gained
        ranked = self.ranked.get(p)
        if ranked is not None:
            k = ranked.index(i)
            if k:
                out["diversity"] = self.weights.diversity ** k
        return out


def rerank(question: str, inp: RerankInput, weights: RerankWeights, top: int) -> RerankResult:
    """Re-rank the pool of candidates (every row given) and return the best ``top``."""
    ranking = rerank_pool(question, inp, weights)
    ranked = ranking.order[:top]
    scores = ranking.scores
    factors = {}
    for i in ranked:
        found = ranking.factors(i)
        if found:
            factors[i] = found
    return RerankResult(ranked, {i: scores[i] for i in ranked}, factors)


# A name that chunks of this many files of the pool define tells none of them apart: in a sentence
# ("date handling and ISO 8601 parsing in Newtonsoft.Json", every file's ``namespace
# Newtonsoft.Json``; jQuery's ``jQuery.extend({…})`` in most of its files; fmt's ``format_to``
# overloads in seven headers) it earns no definition boost. A question that is the name alone keeps it.
# Measured at 3 to 8 files (docs/evaluation.md, session 35): 3 and 4 lose tasks, 5 and 6 only gain.
_COMMON_FILES = 5


def _telling(found: dict[int, float], titles: Sequence[str], paths: Sequence[str]) -> dict[int, float]:
    """``found`` (candidate → definition sureness) without the chunks whose title defines a name that
    chunks of :data:`_COMMON_FILES` or more files of the pool define too."""
    files: dict[str, set[str]] = {}
    named = {}
    for i in found:
        name = _norm(_title_names(titles[i])[0])
        named[i] = name
        if name:
            files.setdefault(name, set()).add(paths[i])
    common = {n for n, fs in files.items() if len(fs) >= _COMMON_FILES}
    return {i: v for i, v in found.items() if named[i] not in common} if common else found


def rerank_pool(question: str, inp: RerankInput, weights: RerankWeights) -> Ranking:
    """The re-rank of every candidate (:func:`rerank` without the cut, factors on demand)."""
    q = read_question(question)
    paths = inp.paths
    n = len(paths)
    if not n:
        return Ranking([], paths, weights, {}, {}, {}, frozenset())
    hybrid = inp.hybrid.tolist() if hasattr(inp.hybrid, "tolist") else [float(h) for h in inp.hybrid]
    best = max(hybrid)
    unit = best if best > 0 else 1.0
    adjusted = list(hybrid)
    names = q.names if weights.definition or weights.path_name else ()
    path_words = weights.path_words and q.words and not q.symbol

    # definitions: the chunk defines a name the question asks for
    definition: dict[int, float] = {}
    if weights.definition and names:
        found = _definitions(inp.titles, inp.texts, names)
        if not q.symbol and len(found) >= _COMMON_FILES:
            found = _telling(found, inp.titles, paths)
        for i, sure in found.items():
            boost = weights.definition * sure * unit
            adjusted[i] += boost
            definition[i] = boost

    # every other rule is a fact about a file. A file of one candidate (most) is kept as that
    # candidate's position; a file of several, as their positions in candidate order, with its
    # summed evidence (file aggregation: 0.0 plus each positive score in turn) and best chunk (the
    # first of the highest score) found after
    groups: dict[str, "int | list[int]"] = {}
    for i, p in enumerate(paths):
        found = groups.get(p)
        if found is None:
            groups[p] = i
        elif found.__class__ is int:
            groups[p] = [found, i]
        else:
            found.append(i)
    several: dict[str, tuple[float, int]] = {}
    if len(groups) < n:
        for p, rows in groups.items():
            if rows.__class__ is not int:
                total, best_row, high = 0.0, rows[0], hybrid[rows[0]]
                for i in rows:
                    h = hybrid[i]
                    total = total + (h if h > 0.0 else 0.0)
                    if h > high:
                        best_row, high = i, h
                several[p] = (total, best_row)
    # path names: a file stem equal to a named identifier (or its plural, or it the name's)
    named = {k for k in _normalised(tuple(names)) if k} if names and weights.path_name else set()
    stems = named | {k + "s" for k in named}
    words, asks = q.words, asked_roles(q, groups)
    vendored = weights.vendored != 1.0 and "vendored" not in asks
    changelogs = weights.changelog != 1.0 and "changelog" not in asks
    generation = _PATH_FACTS.generation
    facts = list(map(_PATH_FACTS.__getitem__, groups))
    # the files whose name words meet the question's (each of them kept: the index holds them all
    # unless the facts started afresh meanwhile); None: test every file's words
    sharing = _PATH_FACTS.sharing(words, len(groups)) \
        if path_words and generation == _PATH_FACTS.generation else None
    sources = {f[4] for f in facts if f[5] == ".c"}  # the C/C++ source files among the candidates
    # the largest summed evidence: a file's one score (clipped at 0) or the sum of several, which is
    # at least each of its scores (the same float as the maximum over every file's sum)
    top_sum = max([best if best > 0.0 else 0.0] + [total for total, _ in several.values()]) if weights.file else 0.0
    header_rule = weights.header != 1.0 and bool(sources)
    # the file names of the candidates not for Windows alone, which a Windows-only file's twin may have
    # (no Windows-only path kept, and the facts not restarted meanwhile: none among the candidates)
    windows_seen = _PATH_FACTS.windows or generation != _PATH_FACTS.generation
    portable = {f[8] for f in facts if not f[7]} if weights.platform != 1.0 and windows_seen \
        and "windows" not in q.asks and any(f[7] for f in facts) else None
    roles = _role_factors(asks, weights)
    name_boost = weights.path_name * unit
    words_unit = weights.path_words * unit  # (the same products and quotients as written out per file)
    file_unit = weights.file * unit
    file_on = top_sum > 0
    keep_best = bool(weights.file)
    files: dict[str, _Facts] = {}
    for (p, rows), (file_stem, stem_words, role_name, project, c_name, c_kind, log, windows, twin) \
            in zip(groups.items(), facts):
        if rows.__class__ is int:
            best_row = rows
            h = hybrid[rows]
            total = h if h > 0.0 else 0.0
            rows = (rows,)
        else:
            total, best_row = several[p]
        # path (+), file (+, the best chunk only), role (×), changelog (×), bundled copy (×), header (×),
        # platform (×): in this order on each candidate (the same floats as one rule over all candidates at a time)
        path_boost = 0.0
        if named and (file_stem in stems or file_stem + "s" in named):
            path_boost = name_boost
        elif path_words and (p in sharing if sharing is not None else not words.isdisjoint(stem_words)):
            path_boost = words_unit * len(words & stem_words) / len(words)
        file_boost = file_unit * total / top_sum if file_on else 0.0
        role = roles[role_name]
        demote = vendored and project is not None and words.isdisjoint(lexical_terms(project))
        header = header_rule and c_kind == ".h" and c_name in sources
        changelog = changelogs and log
        platform = windows and portable is not None and twin in portable
        files[p] = (path_boost, file_boost, best_row if keep_best else -1, role, changelog, demote, header, platform)
        # one rule at a time over the file's candidates: each candidate sees the same operations
        # in the same order as one candidate at a time
        if path_boost:
            for i in rows:
                adjusted[i] += path_boost
        if file_boost:
            adjusted[best_row] += file_boost
        if role != 1.0:
            for i in rows:
                adjusted[i] *= role
        if changelog:
            for i in rows:
                adjusted[i] *= weights.changelog
        if demote:
            for i in rows:
                adjusted[i] *= weights.vendored
        if header:
            for i in rows:
                adjusted[i] *= weights.header
        if platform:
            for i in rows:
                adjusted[i] *= weights.platform

    # a __main__ block of an implementation file is an example (after the file's factors, as
    # ``role`` would be)
    demote_main = weights.example != 1.0 and "example" not in asks
    demos = frozenset()
    if inp.main_blocks and demote_main:
        demos = frozenset(i for i in inp.main_blocks if files[paths[i]][3] == 1.0)
        for i in demos:
            adjusted[i] *= weights.example

    # a stand-in never represents its file: it trades scores with the file's best other candidate
    # when that one scores lower, so every file keeps its place
    traded: dict[int, float] = {}
    if inp.stand_ins:
        for p in several:
            rows = groups[p]
            top = max(rows, key=adjusted.__getitem__)
            if top in inp.stand_ins:
                others = [i for i in rows if i not in inp.stand_ins]
                if others:
                    other = max(others, key=adjusted.__getitem__)
                    high, low = adjusted[top], adjusted[other]
                    if low < high:
                        adjusted[top], adjusted[other] = low, high
                        traded[top], traded[other] = low - high, high - low

    # diversity: in order of the adjusted score, a file's k-th chunk is multiplied by diversity^k
    final = adjusted
    ranked: dict[str, list[int]] = {}
    if weights.diversity != 1.0:
        final = list(adjusted)
        total = sum(adjusted)
        if total == total:  # no NaN: a file's chunks in the order the whole ranking gives them
            for p in several:
                ranked[p] = sorted(groups[p], key=adjusted.__getitem__, reverse=True)
        else:  # NaN scores: sort the whole ranking, as first written
            for i in sorted(range(n), key=adjusted.__getitem__, reverse=True):
                ranked.setdefault(paths[i], []).append(i)
        powers = [1.0]
        for rows in ranked.values():
            while len(powers) < len(rows):
                powers.append(weights.diversity ** len(powers))
            for k in range(1, len(rows)):
                i = rows[k]
                final[i] = adjusted[i] * powers[k]
    return Ranking(final, paths, weights, definition, files, ranked, demos, demote_main, traded, several)
