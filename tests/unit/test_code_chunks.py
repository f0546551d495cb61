"""Code chunking (knowledge §8.6): Python via ast, other languages via tree-sitter, `lines`."""

from __future__ import annotations

import random

import pytest

from ragit.ingest import code as code_module
from ragit.ingest.code import chunk_code


def chunk(path: str, text: str, masked: str | None = None):
    return chunk_code(path, text, text if masked is None else masked)


def summary(chunks):
    return [(c.title, c.start_line, c.end_line) for c in chunks]


def assert_covered(chunks, text: str) -> None:
    """Every non-blank line of ``text`` is in some chunk."""
    covered = {n for c in chunks for n in range(c.start_line, c.end_line + 1)}
    assert all(n in covered for n, line in enumerate(text.splitlines(), 1) if line.strip())


def method(name: str, body_lines: int) -> list[str]:
    return [f"    def {name}(self):"] + [f"        x{i} = {i}" for i in range(body_lines)] + [""]


def python_file(class_body_lines: int) -> str:
    lines = [
        "import os",
        "import sys",
        "",
        "# Load the settings.",
        "@cache",
        "def load():",
        "    return os.environ",
        "",
        "",
        "class Repo:",
        '    """A repository."""',
        "",
    ]
    per_method = (class_body_lines - 6) // 2  # 3 header lines, 2 methods, 1 blank line between
    lines += method("open", per_method) + method("close", per_method)
    return "\n".join(lines) + "\n"


# ---- checks of §8.6


def test_python_module_function_and_small_class():
    text = python_file(30)
    chunker, chunks = chunk("src/repo.py", text)
    assert chunker == "code:python/4"
    assert summary(chunks) == [("module", 1, 2), ("function load", 4, 7), ("class Repo", 10, 39)]
    assert chunks[1].text.startswith("# Load the settings.\n@cache\ndef load():")
    assert chunks[2].end_line - chunks[2].start_line + 1 == 30


def test_python_big_class_is_split_into_header_and_methods():
    text = python_file(120)
    chunker, chunks = chunk("src/repo.py", text)
    assert chunker == "code:python/4"
    titles = [c.title for c in chunks]
    assert titles == ["module", "function load", "class Repo", "method Repo.open", "method Repo.close"]
    header = chunks[2]
    assert header.text == 'class Repo:\n    """A repository."""'
    assert chunks[3].start_line == header.end_line + 2
    assert chunks[4].end_line == len(text.splitlines()) - 1  # trailing blank line dropped


def test_syntax_error_falls_back_to_lines():
    text = "def broken(:\n" + "".join(f"line_{i} = {i}\n" for i in range(2, 201))
    chunker, chunks = chunk("bad.py", text)
    assert chunker == "lines"
    assert summary(chunks)[:3] == [("lines 1-60", 1, 60), ("lines 51-110", 51, 110), ("lines 101-160", 101, 160)]
    assert summary(chunks)[-1] == ("lines 151-200", 151, 200)


def test_go_without_grammar_is_one_lines_chunk(monkeypatch):
    monkeypatch.setattr(code_module, "_parser", lambda grammar: None)
    text = "package main\n\nimport \"fmt\"\n\nfunc main() {\n\tfmt.Println(1)\n\tfmt.Println(2)\n\tfmt.Println(3)\n\tfmt.Println(4)\n}\n"
    assert len(text.splitlines()) == 10
    chunker, chunks = chunk("main.go", text)
    assert chunker == "lines"
    assert summary(chunks) == [("lines 1-10", 1, 10)]


def test_language_without_any_grammar_uses_lines():
    chunker, chunks = chunk("App.ml", "let main () =\n  print_int 1\n;;\n")
    assert chunker == "lines"
    assert summary(chunks) == [("lines 1-3", 1, 3)]


# ---- python details


def test_async_function_title_and_async_method():
    text = "async def fetch():\n    return 1\n\n\nclass A:\n    async def run(self):\n        pass\n"
    _, chunks = chunk("a.py", text)
    assert [c.title for c in chunks] == ["async function fetch", "class A"]


def test_comment_separated_by_blank_line_is_not_attached():
    text = "import x\n# about x\n\n# about f\ndef f():\n    pass\n"
    _, chunks = chunk("a.py", text)
    assert summary(chunks) == [("module", 1, 2), ("function f", 4, 6)]


def test_indented_trailing_comment_of_previous_function_is_not_attached():
    text = "def a():\n    return 1\n    # tail of a\ndef b():\n    return 2\n"
    _, chunks = chunk("a.py", text)
    assert summary(chunks) == [("function a", 1, 3), ("function b", 4, 5)]


def test_comment_inside_previous_statement_string_is_not_attached():
    text = 's = """\n# x"""\ndef f():\n    pass\n'
    _, chunks = chunk("a.py", text)
    # (the string spans lines, so the assignment is a unit of its own: code:python/2)
    assert summary(chunks) == [("variable s", 1, 2), ("function f", 3, 4)]


def test_module_code_after_a_function_is_module_code():
    # (code:python/2: code of the file's own over several lines opens a ``module`` unit instead of
    # joining the function above; a one-line statement still joins it)
    text = "def main():\n    pass\n\nif __name__ == '__main__':\n    main()\n"
    _, chunks = chunk("a.py", text)
    assert summary(chunks) == [("function main", 1, 2), ("module", 4, 5)]
    _, chunks = chunk("a.py", "def main():\n    pass\n\nmain()\n")
    assert summary(chunks) == [("function main", 1, 4)]


BLOCK_DEFS = """import sys
try:
    from json import loads
except ImportError:
    def loads(s):
        return s

def helper():
    return 1

if sys.platform == "win32":
    def path_of(x):
        return x
elif sys.platform == "darwin":
    import os

    def path_of(x):
        return os.fspath(x)
else:
    # generic
    def path_of(x):
        return str(x)

with open(__file__) as handle:
    class Reader:
        def read(self):
            return handle.read()
"""


def test_definitions_inside_a_top_level_block_are_units():
    # (code:python/3: fastapi's ``_compat.py`` defines 40 functions under ``if PYDANTIC_V2:`` …
    # ``else:``, which were cut into ten ``module`` windows; as in a C ``#ifdef``, each is a unit,
    # opened by its branch's clause line when it is the branch's first statement)
    chunker, chunks = chunk("pkg/_compat.py", BLOCK_DEFS)
    assert chunker == "code:python/4"
    assert summary(chunks) == [
        ("module", 1, 3), ("function loads", 4, 6), ("function helper", 8, 9), ("function path_of", 11, 13),
        ("module", 14, 15), ("function path_of", 17, 18), ("function path_of", 19, 22), ("class Reader", 24, 27)]
    assert chunks[6].text.startswith("else:\n    # generic\n    def path_of")


def test_blocks_without_definitions_and_nested_blocks():
    # an ``if`` of imports only stays code; a block inside a block's branch is followed (the outer
    # ``try:`` line stays with the code above); a decorated definition keeps its decorator; an
    # ``else:`` branch of code after a definition is ``module``
    text = ("import os\n\ndef a():\n    pass\n\nif os.name == 'nt':\n    import ntpath\n    import stat\n\n"
            "try:\n    if os.sep == '/':\n        @staticmethod\n        def b():\n            pass\n"
            "    else:\n        X = 1\n        Y = 2\nfinally:\n    pass\n")
    assert summary(chunk("a.py", text)[1]) == [
        ("module", 1, 1), ("function a", 3, 4), ("module", 6, 10), ("function b", 11, 14), ("module", 15, 19)]


def test_file_without_definitions_is_one_module_chunk():
    chunker, chunks = chunk("conf.py", "A = 1\nB = 2\n")
    assert chunker == "code:python/4"
    assert summary(chunks) == [("module", 1, 2)]


def test_empty_file_has_no_chunks():
    assert chunk("empty.py", "") == ("code:python/4", [])
    assert chunk("empty.go", "\n\n") == ("code:go/2", [])
    assert chunk("empty.ml", "\n\n") == ("lines", [])


def test_big_method_decorators_and_comments_attach_inside_class():
    body = ["class Big:", "    x = 1", ""]
    for name in ("a", "b"):
        body += ["    # the " + name, "    @property"] + method(name, 45)
    _, chunks = chunk("big.py", "\n".join(body) + "\n")
    assert [c.title for c in chunks] == ["class Big", "method Big.a", "method Big.b"]
    assert chunks[1].text.startswith("    # the a\n    @property\n    def a(self):")


def test_oversized_unit_is_windowed_with_unit_title():
    text = "def huge():\n" + "".join(f"    v{i} = {i}\n" for i in range(129))
    _, chunks = chunk("h.py", text)
    assert summary(chunks) == [
        ("function huge (lines 1-60)", 1, 60),
        ("function huge (lines 51-110)", 51, 110),
        ("function huge (lines 101-130)", 101, 130),
    ]


def test_oversized_method_is_windowed_after_class_split():
    text = "class C:\n    def m(self):\n" + "".join(f"        v{i} = {i}\n" for i in range(100))
    _, chunks = chunk("c.py", text)
    assert [c.title for c in chunks] == ["class C", "method C.m (lines 2-61)", "method C.m (lines 52-102)"]


def test_character_limit_windows_and_long_line_pieces():
    wide = "x = '" + "a" * 95 + "'"  # 101 chars per line → 23 lines fit in 2,400
    text = "\n".join([wide] * 30) + "\n"
    _, chunks = chunk("w.py", text)
    assert all(len(c.text) <= 2400 for c in chunks)
    assert summary(chunks) == [("module (lines 1-23)", 1, 23), ("module (lines 24-30)", 24, 30)]
    long_line = "y = '" + "b" * 5000 + "'"
    _, chunks = chunk("l.py", long_line + "\n")
    assert [len(c.text) for c in chunks] == [2400, 2400, 206]
    assert {(c.start_line, c.end_line) for c in chunks} == {(1, 1)}
    assert "".join(c.text for c in chunks) == long_line


def test_trailing_whitespace_stripped_indentation_kept():
    text = "def f():   \n    return 1\t\n\n\n"
    _, chunks = chunk("a.py", text)
    assert chunks[0].text == "def f():\n    return 1"


def test_structure_from_raw_text_and_chunk_text_from_masked_text():
    raw = 'def f():\n    token = "abcdefghijkl"\n'
    masked = 'def f():\n    token = "***"\n'
    _, chunks = chunk_code("a.py", raw, masked)
    assert chunks[0].title == "function f"
    assert chunks[0].text == masked.strip()


def test_masked_text_with_a_different_line_count_is_rejected():
    with pytest.raises(ValueError):
        chunk_code("a.py", "a = 1\nb = 2\n", "a = 1\n")


def test_invalid_escape_warnings_are_silenced(recwarn):
    chunker, _ = chunk("a.py", 'x = "\\d"\n')
    assert chunker == "code:python/4"
    assert not [w for w in recwarn if issubclass(w.category, SyntaxWarning)]


def test_code_chunking_is_deterministic():
    text = python_file(120)
    assert chunk("r.py", text) == chunk("r.py", text)


# ---- tree-sitter languages

GO = """package main

import "fmt"

// Greeter says hi.
type Greeter struct {
	Name string
}

type Speaker interface {
	Speak() string
}

// Speak implements Speaker.
func (g *Greeter) Speak() string { return "hi" }

func main() {
	fmt.Println("x")
}
"""


def test_go_structure():
    chunker, chunks = chunk("cmd/main.go", GO)
    assert chunker == "code:go/2"
    assert summary(chunks) == [
        ("module", 1, 3), ("struct Greeter", 5, 8), ("interface Speaker", 10, 12),
        ("method Greeter.Speak", 14, 15), ("function main", 17, 19),
    ]


def test_syntax_error_in_tree_sitter_language_falls_back_to_lines():
    chunker, chunks = chunk("bad.go", "package main\nfunc main( {\n")
    assert chunker == "lines"
    assert summary(chunks) == [("lines 1-2", 1, 2)]


JAVA = """package a.b;
import java.util.List;

/** Doc. */
@Deprecated
public class Foo {
    private int x;
    /** ctor */
    public Foo() {}

    @Override
    public String toString() { return ""; }
}
interface Bar { void run(); }
enum Color { RED }
"""


def test_java_structure_and_split():
    chunker, chunks = chunk("Foo.java", JAVA)
    assert chunker == "code:java/4"
    assert summary(chunks) == [
        ("module", 1, 2), ("class Foo", 4, 13), ("interface Bar", 14, 14), ("enum Color", 15, 15),
    ]
    padded = JAVA.replace("    private int x;\n", "".join(f"    private int x{i};\n" for i in range(80)))
    _, chunks = chunk("Foo.java", padded)
    assert summary(chunks) == [
        ("module", 1, 2), ("class Foo (lines 4-63)", 4, 63), ("class Foo (lines 54-86)", 54, 86),
        ("method Foo.Foo", 87, 88), ("method Foo.toString", 90, 92),
        ("interface Bar", 93, 93), ("enum Color", 94, 94),
    ]


JS = """import x from "y";
// helper
function foo() {}
export async function bar() {}
export default class Baz extends Q {
  constructor() {}
  get x() { return 1; }
}
const arrow = () => 1;
export const fe = function () {};
"""


def test_javascript_structure():
    chunker, chunks = chunk("web/app.mjs", JS)
    assert chunker == "code:javascript/8"
    assert summary(chunks) == [
        ("module", 1, 1), ("function foo", 2, 3), ("async function bar", 4, 4), ("class Baz", 5, 8),
        ("function arrow", 9, 9), ("function fe", 10, 10),
    ]


TS = """import x from "y";
@Component({})
export class Foo implements Bar {
  name: string;
  // comment
  @HostListener("x")
  onX(): void {}
  other(): number { return 1; }
}
export interface Bar { x: number; }
type T = string;
enum E { A }
namespace NS { export const a = 1; }
"""


def test_typescript_structure_and_method_split():
    chunker, chunks = chunk("src/foo.ts", TS)
    assert chunker == "code:typescript/9"
    assert summary(chunks) == [
        ("module", 1, 1), ("class Foo", 2, 9), ("interface Bar", 10, 10), ("type T", 11, 11),
        ("enum E", 12, 12), ("namespace NS", 13, 13),
    ]
    padded = TS.replace("  name: string;\n", "".join(f"  name{i}: string;\n" for i in range(80)))
    _, chunks = chunk("src/foo.ts", padded)
    titles = [c.title for c in chunks]
    assert "method Foo.onX" in titles and "method Foo.other" in titles
    on_x = chunks[titles.index("method Foo.onX")]
    assert on_x.text.startswith('  // comment\n  @HostListener("x")\n  onX()')


def test_tsx_uses_the_tsx_grammar():
    text = "export function App() {\n  return <div>hi</div>;\n}\n"
    chunker, chunks = chunk("src/App.tsx", text)
    assert chunker == "code:typescript/9"
    assert summary(chunks) == [("function App", 1, 3)]


RUST = """use std::fmt;

/// A point.
#[derive(Debug)]
pub struct Point { x: i32 }

impl fmt::Display for Point {
    fn fmt(&self, f: &mut fmt::Formatter) -> fmt::Result { Ok(()) }
}

impl<T> Wrapper<T> {
    pub fn new() -> Self { todo!() }
}

pub trait Shape { fn area(&self) -> f64; }
mod inner { fn x() {} }
mod other;
pub async fn main() {}
"""


def test_rust_structure():
    chunker, chunks = chunk("src/lib.rs", RUST)
    assert chunker == "code:rust/4"
    assert summary(chunks) == [
        ("module", 1, 1), ("struct Point", 3, 5), ("impl Display for Point", 7, 9),
        ("impl Wrapper", 11, 13), ("trait Shape", 15, 15), ("mod inner", 16, 17),
        ("async function main", 18, 18),
    ]


def test_rust_impl_for_a_reference_is_titled_for_the_type():
    # ``&'a mut T`` and ``dyn T``: the lifetime and the words before the type are no part of its
    # name (its methods read ``method 'a mut PythonSerializer.serialize_some`` before)
    text = ("impl<'a> Serializer for &'a mut PythonSerializer<'_> {\n    fn serialize_some(self) {}\n}\n\n"
            "impl<'py> IntoPyObject<'py> for &'_ PathItem {}\n\nimpl Error for dyn Cause {}\n")
    _, chunks = chunk("src/ser.rs", text)
    assert [c.title for c in chunks] == [
        "impl Serializer for PythonSerializer", "impl IntoPyObject for PathItem", "impl Error for Cause",
    ]
    methods = "".join(f"    fn m{i}(&self) -> i32 {{\n" + "        let a = 1;\n" * 20 + "    }\n" for i in range(4))
    _, split = chunk("src/ser.rs", "impl<'a> Serializer for &'a mut PythonSerializer<'_> {\n" + methods + "}\n")
    assert [c.title for c in split][-1] == "method PythonSerializer.m3"


def test_rust_big_impl_is_split_into_methods():
    methods = "".join(f"    fn m{i}(&self) -> i32 {{\n" + "        let a = 1;\n" * 20 + "    }\n" for i in range(4))
    text = f"struct S;\n\nimpl S {{\n{methods}}}\n"
    _, chunks = chunk("s.rs", text)
    # ``impl S {`` alone is a bare header: it opens the first method's chunk
    assert [c.title for c in chunks] == ["struct S", "method S.m0", "method S.m1", "method S.m2", "method S.m3"]
    assert chunks[1].start_line == 3 and chunks[1].text.startswith("impl S {\n    fn m0(&self) -> i32 {")
    # a documented impl keeps its header chunk
    doc = "".join(f"/// Line {i} of what S does and why each of its methods exists.\n" for i in range(3))
    _, chunks = chunk("s.rs", text.replace("impl S {", doc + "impl S {"))
    assert [c.title for c in chunks] == ["struct S", "impl S", "method S.m0", "method S.m1", "method S.m2", "method S.m3"]
    assert summary(chunks)[1] == ("impl S", 3, 6)


# ---- bare headers: a split container's header of at most 3 non-blank lines / 120 characters
# makes no chunk of its own, its lines open the first member's chunk (code.BARE_LINES)


def _lines(template: str, count: int, indent: str) -> str:
    return "".join(f"{indent}{template.format(i=i)}\n" for i in range(count))


def test_nested_bare_ruby_openers_open_the_first_method():
    def ruby_method(name: str) -> str:
        return f"    def {name}(job)\n" + _lines("step_{i}(job)", 40, "      ") + "    end\n"

    text = (
        'require "active_support"\n\nmodule ActiveJob\n  class Foo < Bar\n'
        + ruby_method("perform") + "\n" + ruby_method("retry_job") + "  end\nend\n"
    )
    chunker, chunks = chunk("lib/active_job/foo.rb", text)
    assert chunker == "code:ruby/4"
    assert summary(chunks) == [("module", 1, 1), ("method Foo.perform", 3, 46), ("method Foo.retry_job", 48, 91)]
    assert chunks[1].text.startswith("module ActiveJob\n  class Foo < Bar\n    def perform(job)\n")
    assert not [c for c in chunks if c.text.strip() in ("module ActiveJob", "class Foo < Bar")]
    assert_covered(chunks, text)


def test_csharp_namespace_and_its_brace_open_the_class():
    def get(k: int) -> str:
        return (f"        public int Get{k}()\n        {{\n" + _lines("var x{i} = {i};", 40, " " * 12)
                + "            return 0;\n        }\n")

    text = (
        "using System;\n\nnamespace App\n{\n"
        "    /// <summary>The store of every record the app keeps, opened once per process.</summary>\n"
        "    public class Store\n    {\n        private int _x;\n        private int _y;\n\n"
        + get(0) + "\n" + get(1) + "    }\n}\n"
    )
    chunker, chunks = chunk("src/Store.cs", text)
    assert chunker == "code:csharp/4"
    # no namespace-only chunk: ``namespace App`` and ``{`` open the class's own (not bare) header
    assert summary(chunks) == [
        ("module", 1, 1), ("class Store", 3, 9), ("method Store.Get0", 11, 54), ("method Store.Get1", 56, 101),
    ]
    assert chunks[1].text.startswith("namespace App\n{\n    /// <summary>")
    assert "namespace App" not in [c.title for c in chunks]
    assert_covered(chunks, text)


def test_a_header_that_says_something_keeps_its_chunk_and_python_keeps_every_header():
    def java(doc: str) -> str:
        def method(name: str) -> str:
            return f"    public void {name}() {{\n" + _lines("step({i});", 40, " " * 8) + "    }\n"

        return "package app;\n\n" + doc + "public class Store {\n" + method("open") + "\n" + method("close") + "}\n"

    long_doc = "/** The store of every record the app keeps: opened once per process, closed when the last reader is done. */\n"
    text = java(long_doc)
    _, chunks = chunk("Store.java", text)
    assert summary(chunks) == [
        ("module", 1, 1), ("class Store", 3, 4), ("method Store.open", 5, 46), ("method Store.close", 48, 90),
    ]
    assert_covered(chunks, text)
    text = java("/** The store. */\n")
    _, chunks = chunk("Store.java", text)
    assert summary(chunks) == [("module", 1, 1), ("method Store.open", 3, 46), ("method Store.close", 48, 90)]
    assert chunks[1].text.startswith("/** The store. */\npublic class Store {\n    public void open() {")
    assert_covered(chunks, text)
    # Python keeps §8.6's header unit whatever it holds, a long docstring or a one-line one
    for doc in ('"""A repository: the commits, trees and blobs of one working copy, read through its object database."""',
                '"""A repository."""'):
        text = "\n".join(["class Repo:", f"    {doc}", ""] + method("open", 45) + method("close", 45)) + "\n"
        chunker, chunks = chunk("repo.py", text)
        assert chunker == "code:python/4"
        assert summary(chunks) == [("class Repo", 1, 2), ("method Repo.open", 4, 49), ("method Repo.close", 51, 96)]
        assert chunks[0].text == f"class Repo:\n    {doc}"
        assert_covered(chunks, text)


def test_chunker_version_2_halves_the_limits():
    body = "\n".join(f"    v{i} = {i}" for i in range(55))
    text = f"def big():\n{body}\n"
    _, v1 = chunk_code("a.py", text, text)
    _, v2 = chunk_code("a.py", text, text, "2")
    assert [(c.title, c.start_line, c.end_line) for c in v1] == [("function big", 1, 56)]
    assert [(c.title, c.start_line, c.end_line) for c in v2] == [
        ("function big (lines 1-30)", 1, 30), ("function big (lines 26-55)", 26, 55), ("function big (lines 51-56)", 51, 56),
    ]


def _windows_reference(clean, start, end, label, lim):
    """``code_module._windows`` as it was written first: each window grown line by line."""
    out = []
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
            trimmed = code_module._trim(clean, first, last)
            if trimmed is not None:
                a, b = trimmed
                out.append((f"{prefix}{a}-{b}{suffix}", a, b, "\n".join(clean[a - 1:b])))
        if last >= end:
            break
        first = min(first + lim.window_step, last + 1)
    return out


def test_windows_find_their_last_line_by_bisection_as_the_line_loop_did():
    rng = random.Random(5)
    for _ in range(400):
        lines = ["x" * rng.choice([0, 0, 1, 5, 40, 79, 80, 200, 1199, 1200, 2399, 2400, 2401, 5000])
                 for _ in range(rng.randint(1, 300))]
        start = rng.randint(1, len(lines))
        end = rng.randint(start, len(lines))
        for lim in code_module.LIMITS.values():
            label = rng.choice(["", "function f"])
            assert code_module._windows(lines, start, end, label, lim) == _windows_reference(lines, start, end, label, lim)
