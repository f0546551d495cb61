"""The Python skeleton (ragit.ingest.pyskeleton): function bodies cut to one ``pass`` only where
the cut is certain, so the chunker's definitions are those of the whole file's syntax tree."""

from __future__ import annotations

import ast

from hypothesis import given, settings
from hypothesis import strategies as st

from ragit.ingest import code
from ragit.ingest.code import chunk_code
from ragit.ingest.pyskeleton import skeleton
from ragit.ingest.text import split_lines


def _defs(source: str, tree_source: str) -> list[tuple]:
    lines = split_lines(source)
    found: list = []
    code._python_statements(ast.parse(tree_source).body, lines, 0, found, 0)
    return [(d.start, d.title, [(m.start, m.title) for m in d.member_defs()]) for d in found]


def _functions(tree: ast.AST) -> list[tuple]:
    """(name, lineno, end_lineno, col_offset) of every function outside another function."""
    out = []

    def walk(node: ast.AST) -> None:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef)):
                out.append((child.name, child.lineno, child.end_lineno, child.col_offset))
            else:
                walk(child)

    walk(tree)
    return out


def _same_as_whole(source: str) -> str:
    cut = skeleton(source)
    assert cut is not None
    assert cut.count("\n") == source.count("\n")
    assert _defs(source, cut) == _defs(source, source)
    assert _functions(ast.parse(cut)) == _functions(ast.parse(source))
    return cut


def test_a_body_becomes_one_pass_on_its_last_line():
    source = ("import os\n\n\n@decorate(\n    x=1,\n)\ndef load(path, *, mode='r'):  # reads\n"
              "    '''Read it.'''\n    with open(path) as f:\n        return f.read()\n\n"
              "# trailing comment\n\nclass A:\n    limit = {\n        'a': 1,\n    }\n\n"
              "    async def run(self) -> dict[str, int]:\n        await go()\n")
    cut = _same_as_whole(source)
    assert cut.splitlines() == [
        "import os", "", "", "@decorate(", "    x=1,", ")", "def load(path, *, mode='r'):  # reads",
        "", "", " pass", "", "# trailing comment", "", "class A:", "    limit = {", "        'a': 1,",
        "    }", "", "    async def run(self) -> dict[str, int]:", "     pass"]


def test_what_hides_a_dedent_or_a_def_is_lexed_first():
    # a string's lines at column 0, a def inside a string and a comment, a quote in a comment,
    # a '#' in a string, escaped quotes and a raw string ending in an escaped quote
    source = ('def f():\n    s = """\ndef fake():\n    pass\n"""\n    t = \'\'\'it\'s\n\'\'\'\n'
              '    # don\'t "def" here\n    u = "#(" + r\'\\\'\' + "\\"("\n    return s\n\n'
              'def g():\n    return """\nx = 1\n  """\n\nx = 2\n')
    cut = _same_as_whole(source)
    assert "fake" not in cut and cut.count("pass") == 2


def test_a_continuation_past_the_dedent_leaves_the_body_whole():
    # sympy's test_solvers.py: a backslash, then a comment line; and a bracket closed at column 0
    backslash = ("def a():\n    assert f(x) \\\n        #== comment\n\n\ndef b():\n    return 1\n")
    bracket = "def c():\n    x = [\n1, 2,\n]\n    return x\n\ny = 1\n"
    assert _same_as_whole(backslash).count("pass") == 1  # b's: a's body is left whole
    assert _same_as_whole(bracket) == bracket


def test_headers_and_bodies_it_does_not_cut():
    source = ("def one(): return 1\n"  # the body on the header's line
              "def two(x=lambda: {1: 2}, *a,\n        **k) -> 'T':\n    return x\n"
              "def three() \\\n        :\n    return 3\n"  # a header continued by a backslash
              "def four():\n    pass")  # no final newline
    cut = _same_as_whole(source)
    assert cut.splitlines()[0] == "def one(): return 1"
    assert cut.count("return") == 2  # one's and three's


def test_nested_functions_go_with_their_outer_body():
    source = ("def outer():\n    def inner():\n        return 1\n    class K:\n        def m(self):\n"
              "            pass\n    return inner\n\n\nclass C:\n    def m(self):\n        def helper():\n"
              "            pass\n        return helper\n    class D:\n        def n(self):\n            return 2\n")
    cut = _same_as_whole(source)
    assert "inner" not in cut and "helper" not in cut and "def n(self):" in cut


def test_files_it_leaves_whole():
    assert skeleton("def f():\n\treturn 1\n") is None  # tabs in the indentation
    assert skeleton("def f():\r\n    return 1\r\n") is None
    assert skeleton("x = 1\n\x0cdef f():\n    return 1\n") is None
    text = "x = 1\ny = [1,\n2]\n"
    assert skeleton(text) is text  # no function: the file itself


def test_a_file_broken_only_inside_a_function_is_cut_at_its_definitions():
    # (code:python/4) Python 2's print statement, which the running Python rejects
    source = "import sys\n\n\ndef main():\n    print 'hello'\n\n\nclass A:\n    def m(self):\n        return 1\n"
    chunker, chunks = chunk_code("legacy.py", source, source)
    assert chunker == "code:python/4"
    assert [c.title for c in chunks] == ["module", "function main", "class A"]
    broken = "import sys\nprint 'top level'\n\ndef main():\n    return 1\n"
    assert chunk_code("legacy.py", broken, broken)[0] == "lines"


_STATEMENT = st.sampled_from([
    "x = 1", "return x", "y = [\n1,\n  2]", "z = f(a,\n      b)", "s = '''\ndef no():\n'''",
    's = """a\n  b"""', "t = 'it\\'s'  # (", "if x:\n    pass", "q = 1 + \\\n    2",
    "# comment at the body's indentation", "def inner():\n    return 1", "u = r'\\\\'", "v = {'#': ':'}",
])
_TOP = st.sampled_from([
    "import os", "X = {\n    'a': 1,\n}", "if TYPE_CHECKING:\n    from a import b", "# a comment",
    "try:\n    import c\nexcept ImportError:\n    c = None", "w = (1,\n2)",
])


@st.composite
def _module(draw) -> str:
    parts = []
    for _ in range(draw(st.integers(1, 6))):
        kind = draw(st.sampled_from(["def", "async", "class", "top", "if", "blank"]))
        body = draw(st.lists(_STATEMENT, min_size=1, max_size=4))
        indent = draw(st.sampled_from(["    ", "  "]))
        block = "\n".join(indent + line if i == 0 or not line.startswith(("1", "2", "def no", "'''")) else line
                          for statement in body for i, line in enumerate(statement.split("\n")))
        if kind == "def":
            head = draw(st.sampled_from(["def f(a, b=1):", "@dec\ndef g(x=(1,\n      2)) -> int:",
                                         "def h(): # note", "def k(x=lambda: 0):"]))
            parts.append(head + "\n" + block)
        elif kind == "async":
            parts.append("async def a():\n" + block)
        elif kind == "class":
            method = "\n".join("    " + line for line in ("def m(self):\n" + block).split("\n"))
            parts.append("class C(Base):\n    '''Doc.'''\n    n = 1\n" + method)
        elif kind == "if":
            inner = "\n".join("    " + line for line in ("def f():\n" + block).split("\n"))
            parts.append("if flag:\n" + inner + "\nelse:\n    f = None")
        elif kind == "top":
            parts.append(draw(_TOP))
        else:
            parts.append("")
    return "\n".join(parts) + draw(st.sampled_from(["\n", "", "\n\n# end\n"]))


@settings(max_examples=300, deadline=None)
@given(_module())
def test_the_skeleton_gives_the_definitions_of_the_whole_file(source):
    try:
        ast.parse(source)
    except SyntaxError:
        return  # (a generated mix that is no Python: the caller parses such a file whole)
    _same_as_whole(source)
