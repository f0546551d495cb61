"""The code re-rank (ragit.retrieve.rerank): what each rule does to a pool of candidates, and the
invariants the engine relies on (deterministic, pure, the best ``top`` only)."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ragit.pathroles import bundled_project, platform_twin
from ragit.retrieve.rerank import (
    _DECLARATION,
    RerankInput,
    RerankWeights,
    _declares,
    _declares_seen,
    _level,
    _local,
    _definitions,
    _norm,
    _title_names,
    asked_roles,
    defines,
    import_block,
    main_block,
    pool_indices,
    read_question,
    rerank,
    stand_in,
)

NEUTRAL = RerankWeights(definition=0.0, path_name=0.0, path_words=0.0, file=0.0, role=1.0, example=1.0, doc=1.0,
                        other=1.0, diversity=1.0, header=1.0, vendored=1.0, changelog=1.0, platform=1.0)


def pool(*rows: tuple[float, str, str, str]) -> RerankInput:
    """Candidates as (fused score, path, title, text)."""
    return RerankInput(hybrid=[r[0] for r in rows], paths=[r[1] for r in rows], titles=[r[2] for r in rows],
                       texts=[r[3] for r in rows])


def ranked_paths(question: str, inp: RerankInput, weights: RerankWeights = RerankWeights()) -> list[str]:
    return [inp.paths[i] for i in rerank(question, inp, weights, len(inp.paths)).order]


# ---------------------------------------------------------------- the question


def test_a_bare_identifier_is_a_symbol_question():
    q = read_question("JsonReader")
    assert q.symbol and q.names == ("JsonReader",)
    qualified = read_question("Rails::Engine")
    assert qualified.symbol and qualified.names == ("Engine", "RailsEngine")


def test_identifiers_inside_a_sentence_are_names_plain_words_are_not():
    q = read_question("where does _send_handling_redirects follow a Location header")
    assert not q.symbol and q.names == ("_send_handling_redirects",)
    assert read_question("where are redirects followed").names == ()


def test_a_capitalised_word_next_to_the_kind_it_names_is_a_name():
    assert read_question("Content protocol for encoding and decoding bodies").names == ("Content",)
    assert read_question("how the Request type represents an HTTP request").names == ("Request",)
    assert read_question("where does class Blueprint register its routes").names == ("Blueprint",)
    assert read_question("Flow interfaces and cold streams").names == ("Flow",)
    # a capitalised word alone, a lower-case one, or a kind word that is not next to it: no name
    assert read_question("Content negotiation for request bodies").names == ()
    assert read_question("the content protocol of responses").names == ()
    assert read_question("Reimplement function with_metaclass()").names == ("with_metaclass",)
    # read from the first line only: an issue's body mentions types in passing
    assert read_question("crash on empty input\n\nthe Parser class raises").names == ()


def test_what_a_question_asks_for_is_read_from_its_first_line():
    assert read_question("add tests for the cli").asks == frozenset({"test"})
    assert read_question("crash in parser\n\nsteps: run the tests, see the docs").asks == frozenset()


# ---------------------------------------------------------------- definitions


def test_defines_exact_normalised_and_declared():
    assert defines("class JsonReader", "", ["JsonReader"]) == 1.0
    assert defines("function field_validator", "", ["fieldValidator"]) == 0.5
    assert defines("module", "x = 1\npub struct Engine {\n}\n", ["Engine"]) == 1.0
    assert defines("module", "// class Engine is an example\nuse Engine;\n", ["Engine"]) == 0.0
    assert defines("class Other", "", []) == 0.0


def test_a_variable_local_to_a_function_body_defines_nothing():
    # a handler's ``const createContext = ...`` took the full definition boost for "createContext"
    handler = ("export function awsLambdaRequestHandler(opts) {\n  const createContext = async () => {\n"
               "    return opts.createContext?.()\n  }\n  return resolve({ createContext })\n}\n")
    assert defines("function awsLambdaRequestHandler", handler, ["createContext"]) == 0.0
    # at the chunk's own level it is a definition: top level, or a member's own chunk
    assert defines("const createContext", "export const createContext = () => ({})\n", ["createContext"]) == 1.0
    assert defines("property Job.parent", "    /** Its parent. */\n    val parent: Job?\n", ["parent"]) == 1.0
    # other declaring words keep the rule as it was: a nested ``def`` or ``class`` still counts
    assert defines("class Outer", "class Outer:\n    class Inner:\n        pass\n", ["Inner"]) == 1.0


def test_a_modifier_with_arguments_opens_a_declaration():
    # Rust's restricted visibility and an annotation with arguments on the declaring line: a
    # method folded into its ``impl`` chunk (tokio's ``pub(super) fn is_join_waker_set``) is found
    impl = "impl Snapshot {\n    pub(super) fn is_join_waker_set(self) -> bool {\n        true\n    }\n}\n"
    assert defines("impl Snapshot", impl, ["is_join_waker_set"]) == 1.0
    assert defines("module", "pub(in crate::rt) struct Handle;\n", ["Handle"]) == 1.0
    assert defines("module", '@available(iOS 13, *) public func render() {}\n', ["render"]) == 1.0
    assert defines("module", '@Deprecated("old") fun start() {}\n', ["start"]) == 1.0
    # a call is not a modifier: its argument list is not followed by a declaring keyword
    assert defines("function f", "    assert!(snapshot.is_join_waker_set());\n", ["is_join_waker_set"]) == 0.0


def test_an_export_macro_before_a_cpp_class_name_is_passed_over():
    # expo's ``class JSI_EXPORT LazyObject``, fmt's ``class FMT_API format_error``: the class is
    # declared in the header, which a bare-name question should rank above the .cpp using it
    header = "namespace expo {\n\nclass JSI_EXPORT LazyObject : public jsi::HostObject {\n};\n}\n"
    assert defines("namespace expo", header, ["LazyObject"]) == 1.0
    assert defines("module", "struct FMT_API format_error : std::runtime_error {};\n", ["format_error"]) == 1.0
    # an upper-case name declared alone, a Haskell type with a parameter: as before
    assert defines("module", "class FOO;\n", ["FOO"]) == 1.0
    assert defines("module", "newtype IO a = IO (World -> (World, a))\n", ["IO"]) == 1.0
    assert defines("module", "class JSI_EXPORT LazyObject {};\n", ["JSI_EXPORT"]) == 0.0


def test_a_declaring_keyword_before_another_word_is_a_modifier():
    # ``data``, ``enum``, ``const`` and ``typedef`` declare too, so the name after them was taken
    # for the declared one: ``data class Point`` declared "class", ``const fn new`` declared "fn"
    assert defines("module", "data class Point(val x: Int)\n", ["Point"]) == 1.0
    assert defines("module", "enum class Color {\n    RED\n}\n", ["Color"]) == 1.0
    assert defines("impl Handle", "impl Handle {\n    pub const fn new() -> Self {\n    }\n}\n", ["new"]) == 1.0
    assert defines("module", "typedef struct node {\n    int v;\n} node_t;\n", ["node"]) == 1.0
    assert defines("module", "data class Point(val x: Int)\n", ["class"]) == 0.0
    # a keyword that is the name itself stays one (``def record(self)``, ``let data = 1``)
    assert defines("class Log", "class Log:\n    def record(self):\n        pass\n", ["record"]) == 1.0
    assert defines("module", "let data = load()\n", ["data"]) == 1.0


def test_an_indented_associated_type_binding_declares_nothing():
    impl = "impl<'de> IntoDeserializer<'de> for Foo {\n    type Deserializer = Self;\n}\n"
    assert defines("impl IntoDeserializer for Foo", impl, ["Deserializer"]) == 0.0
    assert defines("impl X for Y", "    type Item<'a> = &'a T;\n", ["Item"]) == 0.0
    # an alias at the top level, one with modifiers, and an associated type a trait declares: declared
    assert defines("module", "pub type Result<T> = std::result::Result<T, Error>;\n", ["Result"]) == 1.0
    assert defines("module", "mod a {\n    pub type Id = u64;\n}\n", ["Id"]) == 1.0
    assert defines("trait Visitor", "trait Visitor {\n    type Value;\n}\n", ["Value"]) == 1.0
    assert defines("module", "export type Props = { a: 1 }\n", ["Props"]) == 1.0


_LINES = st.lists(st.sampled_from([
    "class Engine", "  def run(self):", "pub fn run()", "// class Engine", "export default function render() {",
    "impl Engine for X", "struct Engine;", "x = Engine()", "  public static void main()", "", "    ",
    "const run = 1", "type Engine = { a: 1 }", "# def run", "fn main() { run() }", "defmodule Engine do",
    "  const run = 2", "    let Engine = f()", "\tval main = 3",
]), max_size=12)


@settings(max_examples=300, deadline=None)
@given(_LINES, st.sampled_from(["\n", "\r\n"]), st.lists(st.sampled_from(["Engine", "run", "main", "render", "x"]),
                                                        min_size=1, max_size=3))
def test_declares_looks_only_at_lines_naming_the_identifier_and_agrees_with_a_full_scan(lines, eol, names):
    text = eol.join(lines)
    wanted = [n for n in names if len(n) > 1 and n in text]
    reference = any(m.group("name") in wanted and not _local(m, _level(text), text)
                    for m in _DECLARATION.finditer(text)) if wanted else False
    assert _declares(text, names) == reference


@settings(max_examples=300, deadline=None)
@given(_LINES, st.sampled_from(["\n", "\r\n"]), st.lists(st.sampled_from(["Engine", "run", "main", "render", "x"]),
                                                        min_size=1, max_size=3))
def test_a_warm_process_reads_a_seen_text_whole_with_the_same_answer(lines, eol, names):
    text = eol.join(lines) + " "  # (a text of its own: the first look is the targeted one)
    spelled = frozenset(n for n in names if len(n) > 1)
    assert [_declares_seen(text, names, spelled) for _ in range(3)] == [_declares(text, names)] * 3


_TITLES = st.sampled_from(["class Engine", "function run", "method Engine.run", "module", "function engine",
                           "struct Engine", "impl Engine for X", "section Engine", ""])


def _definitions_reference(titles, texts, names):
    """:func:`_definitions` as first written: every row tested whole, nothing kept between calls."""
    exact, normalised = set(names), {_norm(n) for n in names}
    out = {}
    for i, (title, text) in enumerate(zip(titles, texts)):
        defined = _title_names(title)[0]
        if defined and defined in exact:
            out[i] = 1.0
        elif defined and _norm(defined) in normalised:
            out[i] = 0.5
        elif _declares(text, names):
            out[i] = 1.0
    return out


@settings(max_examples=300, deadline=None)
@given(st.lists(st.tuples(_TITLES, _LINES), min_size=1, max_size=6),
       st.lists(st.lists(st.sampled_from(["Engine", "run", "main", "render", "x", "engine"]), min_size=1, max_size=3),
                min_size=1, max_size=4))
def test_a_warm_process_tests_definitions_as_a_cold_one_does(rows, questions):
    # (texts of their own, so earlier examples' kept facts cannot answer for them; a text repeated
    # under another title is tested under its own)
    titles = [title for title, _ in rows]
    texts = ["\n".join(lines) + f" #{id(rows)}" for _, lines in rows]
    for _ in range(3):  # first look, second look, then the kept keys
        for names in questions:
            assert _definitions(titles, texts, names) == _definitions_reference(titles, texts, names)


# ---------------------------------------------------------------- each rule


def test_definition_lifts_the_chunk_that_defines_the_named_symbol():
    inp = pool((0.9, "tests/test_reader.py", "function test_reader", "JsonReader() used here"),
               (0.6, "src/reader.py", "class JsonReader", "class JsonReader:\n    pass"))
    assert ranked_paths("JsonReader", inp, RerankWeights(role=1.0))[0] == "src/reader.py"
    assert ranked_paths("JsonReader", inp, RerankWeights(role=1.0, definition=0.0, path_name=0.0))[0] == \
        "tests/test_reader.py"


def test_a_name_many_files_define_earns_no_definition_boost_in_a_sentence():
    # Newtonsoft.Json: every file's ``namespace Newtonsoft.Json`` defined "Json" for "date handling
    # and ISO 8601 parsing in Newtonsoft.Json"; jQuery's ``jQuery.extend({…})`` in most of its files
    weights = RerankWeights(path_name=0.0, path_words=0.0, file=0.0, diversity=1.0)
    rows = [(0.4, f"src/part{k}.js", "object jQuery", "jQuery.extend({ x: 1 })") for k in range(5)]
    answer = (0.45, "src/ready.js", "function completed", "document ready: DOMContentLoaded")
    question = "how does jQuery detect when the document is ready"
    assert ranked_paths(question, pool(*rows, answer), weights)[0] == "src/ready.js"
    # four files defining it still tell them apart from the rest; a question that is the name alone
    # asks for its definitions, however many
    assert ranked_paths(question, pool(*rows[:4], answer), weights)[0] == "src/part0.js"
    assert ranked_paths("jQuery", pool(*rows, answer), weights)[0] == "src/part0.js"
    # the boost of a name few files define is kept beside a common one
    rare = (0.3, "src/deferred.js", "function readyWait", "function readyWait() {}")
    lifted = ranked_paths("how do jQuery and readyWait wait for the document", pool(*rows, answer, rare), weights)
    assert lifted[0] == "src/deferred.js"


def test_path_words_lift_a_file_named_for_the_question():
    inp = pool((0.8, "src/client.py", "function send", "send"), (0.7, "src/redirects.py", "function follow", "x"))
    assert ranked_paths("where are redirects followed", inp, RerankWeights(file=0.0))[0] == "src/redirects.py"
    assert ranked_paths("where are redirects followed", inp, NEUTRAL)[0] == "src/client.py"


def test_file_aggregation_favours_a_file_that_answers_in_several_places():
    inp = pool((0.80, "src/lucky.py", "function a", "a"), (0.78, "src/core.py", "function b", "b"),
               (0.70, "src/core.py", "function c", "c"), (0.70, "src/core.py", "function d", "d"))
    only_file = RerankWeights(definition=0.0, path_name=0.0, path_words=0.0, role=1.0, example=1.0, doc=1.0,
                              other=1.0, diversity=1.0)
    assert ranked_paths("zzz", inp, only_file)[0] == "src/core.py"
    assert ranked_paths("zzz", inp, NEUTRAL)[0] == "src/lucky.py"


def test_roles_rank_tests_docs_and_examples_below_code_unless_asked_for():
    inp = pool((0.9, "tests/test_auth.py", "function test_login", "x"), (0.9, "docs/auth.md", "Auth", "x"),
               (0.9, "examples/login.py", "module", "x"), (0.6, "src/auth.py", "function login", "x"))
    assert ranked_paths("login flow", inp)[0] == "src/auth.py"
    assert ranked_paths("tests for the login flow", inp)[0] == "tests/test_auth.py"
    assert ranked_paths("docs for the login flow", inp)[0] == "docs/auth.md"


def test_a_main_block_is_told_from_its_title_and_first_code_line():
    guard = 'if __name__ == "__main__":  # pragma: no cover\n    demo()\n'
    assert main_block("rich/markup.py", "module", guard)
    assert main_block("rich/live.py", "module (lines 271-330)", "# a tour\n# of it\nif __name__=='__main__' :\n    x()\n")
    assert main_block("a.py", "module", "  \tif\t__name__ == '__main__':\n")
    assert not main_block("a.pyi", "module", guard)  # Python modules only
    assert not main_block("a.py", "function main", guard)  # a definition is never one
    assert not main_block("a.py", "module", "import sys\n\n" + guard)  # the file's head: the script itself
    assert not main_block("a.py", "module", "if __name__ == \"__main__\" and sys.argv:\n")
    assert not main_block("a.py", "module", "if __name__ == '__main__\":\n")  # quotes must pair
    assert not main_block("a.py", "module", "if TYPE_CHECKING:\n    import x\n")


def test_a_main_block_named_by_the_caller_ranks_as_an_example_unless_asked_for():
    inp = pool((0.9, "rich/markup.py", "module", "x"), (0.6, "rich/markup.py", "function render", "x"),
               (0.5, "tests/test_markup.py", "module", "x"), (0.4, "rich/text.py", "module", "x"))
    named = RerankInput(inp.hybrid, inp.paths, inp.titles, inp.texts, main_blocks=frozenset({0, 2}))
    examples = NEUTRAL.__class__(**{**NEUTRAL.__dict__, "example": 0.5, "role": 0.5})
    result = rerank("where is markup parsed", named, examples, 4)
    assert result.order == [1, 0, 3, 2]
    assert result.scores[0] == 0.45 and result.factors[0] == {"role": 0.5}
    # a test file's block is demoted once, as a test; a block not named is left alone
    assert result.scores[2] == 0.25 and result.factors[2] == {"role": 0.5} and 3 not in result.factors
    # asked for an example, or with the example weight neutral, nothing changes
    assert rerank("an example of parsed markup", named, examples, 4).order == [0, 1, 3, 2]
    assert rerank("where is markup parsed", named, NEUTRAL, 4).order == [0, 1, 2, 3]
    assert rerank("where is markup parsed", inp, examples, 4).order == [0, 1, 3, 2]


def test_a_word_naming_a_source_directory_of_the_candidates_asks_for_no_role():
    # in pytest's own repository "pytest" is the project (src/_pytest/), not a request for tests
    q = read_question("where does pytest rewrite assert statements")
    assert q.asks == frozenset({"test"})
    assert asked_roles(q, ["src/_pytest/assertion/rewrite.py", "testing/test_assertrewrite.py"]) == frozenset()
    assert asked_roles(q, ["src/pytest/__init__.py"]) == frozenset()
    # a directory of tests, docs or examples names nothing, nor does a test's file name
    assert asked_roles(q, ["testing/pytest/test_rewrite.py", "docs/pytest/index.md"]) == frozenset({"test"})
    assert asked_roles(q, ["testing/pytest.py", "app/tests.py"]) == frozenset({"test"})
    # a source module's name does (session 31), a plural one in the singular too: pytest's
    # fixtures are its src/_pytest/fixtures.py
    assert asked_roles(q, ["src/pytest.py"]) == frozenset()
    fixture = read_question("how are session-scoped fixture finalizers run at teardown")
    assert fixture.asks == frozenset({"test"})
    assert asked_roles(fixture, ["src/_pytest/fixtures.py", "testing/python/fixtures.py"]) == frozenset()
    assert asked_roles(fixture, ["src/_pytest/runner.py", "testing/python/fixtures.py"]) == frozenset({"test"})
    # only words asking for tests are read from module names: Go's doc.go documents its package,
    # a docs site's sidebars.js is the site
    assert asked_roles(read_question("doc(context): add cookie doc"), ["doc.go", "context.go"]) == {"doc"}
    sidebar = read_question("Remove ImmutableJS from sidebar")
    assert asked_roles(sidebar, ["website/sidebars.js"]) == sidebar.asks == {"site"}
    # another word of the first line still asks
    assert asked_roles(read_question("pytest tests for the rewrite"), ["src/_pytest/rewrite.py"]) == {"test"}
    assert asked_roles(read_question("history of the log"), ["lib/history/log.py"]) == frozenset()
    inp = pool((0.9, "testing/test_assertrewrite.py", "function test_rewrite", "x"),
               (0.8, "src/_pytest/assertion/rewrite.py", "class AssertionRewriter", "x"))
    roles_only = NEUTRAL.__class__(**{**NEUTRAL.__dict__, "role": 0.5})
    result = rerank("where does pytest rewrite assert statements", inp, roles_only, 2)
    assert [inp.paths[i] for i in result.order] == ["src/_pytest/assertion/rewrite.py", "testing/test_assertrewrite.py"]
    assert result.factors[0] == {"role": 0.5}
    # without the project's directory among the candidates the word still asks for tests
    alone = pool((0.9, "testing/test_assertrewrite.py", "function test_rewrite", "x"), (0.8, "src/rewrite.py", "x", "x"))
    assert ranked_paths("where does pytest rewrite assert statements", alone, roles_only)[0] == \
        "testing/test_assertrewrite.py"


def test_a_word_naming_a_source_module_with_the_word_beside_it_asks_for_no_role():
    # starlette's test client is its starlette/testclient.py: the question asks about that module,
    # not for the tests that send requests through it
    q = read_question("how does the test client send a request to the app")
    assert q.asks == frozenset({"test"})
    assert asked_roles(q, ["starlette/testclient.py", "tests/test_requests.py"]) == frozenset()
    assert asked_roles(q, ["lib/test_client/__init__.py"]) == frozenset()  # a package, separators dropped
    assert asked_roles(read_question("how do test clients send a request"), ["starlette/testclient.py"]) == frozenset()
    # a test file of that name, or no such module, names nothing
    assert asked_roles(q, ["tests/test_testclient.py", "starlette/requests.py"]) == {"test"}
    assert asked_roles(q, ["starlette/client.py"]) == {"test"}
    # the words must stand side by side, and another asking word still asks
    assert asked_roles(read_question("the client used in a test sends a request"), ["starlette/testclient.py"]) == {"test"}
    assert asked_roles(read_question("test client docs"), ["starlette/testclient.py"]) == {"doc"}
    tests = pool((0.9, "tests/test_requests.py", "function test_request_send", "x"),
                 (0.8, "starlette/testclient.py", "method _TestClientTransport.handle_request", "x"))
    roles_only = NEUTRAL.__class__(**{**NEUTRAL.__dict__, "role": 0.5})
    assert ranked_paths("how does the test client send a request to the app", tests, roles_only)[0] == \
        "starlette/testclient.py"
    assert ranked_paths("how do the tests send a request to the app", tests, roles_only)[0] == "tests/test_requests.py"


def test_a_word_inside_a_qualified_name_asks_for_no_role():
    # ``vi.mock`` and ``mock.patch`` are APIs: the question is about their code, not about tests
    for question in ("how does vi.mock hoist calls to the top of the file", "how does mock.patch restore attributes",
                     "pytest.fixture ignores its scope", "A::Test::Helper fails", "x.mock() returns"):
        assert read_question(question).asks == frozenset(), question
    # the same word on its own still asks, as does a file name or a snake_case name
    assert read_question("how does vi.mock hoist mock calls").asks == {"test"}
    assert read_question("fixture in conftest.py is not found").asks == {"test"}
    assert read_question("conftest.py is not found").asks == {"test"}
    assert read_question("test_client loses cookies").asks == {"test"}
    inp = pool((0.9, "test/mocking/vi-fn.test.ts", "module", "x"), (0.8, "packages/vitest/src/vi.ts", "method mock", "x"))
    roles_only = NEUTRAL.__class__(**{**NEUTRAL.__dict__, "role": 0.5})
    assert ranked_paths("how does vi.mock hoist calls", inp, roles_only)[0] == "packages/vitest/src/vi.ts"
    assert ranked_paths("how are mock calls hoisted", inp, roles_only)[0] == "test/mocking/vi-fn.test.ts"


def test_a_changelog_ranks_below_other_docs_unless_asked_for_and_explains_itself():
    inp = pool((0.9, "CHANGES", "module", "Added redirect to the app."), (0.6, "docs/api.rst", "API", "x"),
               (0.5, "src/app.py", "function redirect", "x"))
    only_changelog = NEUTRAL.__class__(**{**NEUTRAL.__dict__, "changelog": 0.5})
    result = rerank("add redirect method to app", inp, only_changelog, 3)
    assert [inp.paths[i] for i in result.order] == ["docs/api.rst", "src/app.py", "CHANGES"]
    assert result.factors[0] == {"changelog": 0.5}
    assert 1 not in result.factors and 2 not in result.factors
    for asked in ("update the changelog for redirect", "history of the redirect method",
                  "what changed in the redirect release"):
        assert ranked_paths(asked, inp, only_changelog)[0] == "CHANGES"
        assert "changelog" not in rerank(asked, inp, only_changelog, 3).factors.get(0, {})
    # on by default, after the doc role: a changelog ends below a docs page of the same score
    assert RerankWeights().changelog == 0.5
    assert ranked_paths("add redirect method to app", inp)[-1] == "CHANGES"


def test_a_question_naming_read_the_docs_asks_for_docs():
    assert "doc" in read_question("Convert readthedocs link for their .org -> .io migration").asks


def test_diversity_spreads_the_top_over_files_and_explains_itself():
    inp = pool((0.9, "src/a.py", "function one", "x"), (0.89, "src/a.py", "function two", "x"),
               (0.85, "src/b.py", "function three", "x"))
    weights = RerankWeights(file=0.0)
    result = rerank("zzz", inp, weights, 3)
    assert [inp.paths[i] for i in result.order] == ["src/a.py", "src/b.py", "src/a.py"]
    assert result.factors[1] == {"diversity": 0.5}
    assert 0 not in result.factors  # neutral factors are not reported


def test_a_header_ranks_below_its_implementation_file_and_explains_itself():
    inp = pool((0.9, "src/idna.h", "module", "int uv__idna_toascii(const char* s);"),
               (0.8, "src/idna.c", "function uv__idna_toascii", "int uv__idna_toascii(const char* s) {}"),
               (0.5, "include/uv.h", "module", "int uv_run(void);"))
    only_header = NEUTRAL.__class__(**{**NEUTRAL.__dict__, "header": 0.7})
    result = rerank("IDNA domain name encoding", inp, only_header, 3)
    assert [inp.paths[i] for i in result.order] == ["src/idna.c", "src/idna.h", "include/uv.h"]
    assert result.factors[0] == {"header": 0.7}
    assert 2 not in result.factors  # uv.h has no uv.c among the candidates: left alone
    assert ranked_paths("IDNA domain name encoding", inp, NEUTRAL)[0] == "src/idna.h"


def test_header_pairs_by_file_name_across_directories_and_cpp_extensions():
    inp = pool((0.9, "include/fmt/format.hpp", "struct formatter", "x"), (0.8, "src/format.cc", "function f", "x"),
               (0.85, "lib/parser.h", "module", "x"), (0.1, "lib/parser.py", "module", "x"))
    only_header = NEUTRAL.__class__(**{**NEUTRAL.__dict__, "header": 0.7})
    result = rerank("zzz", inp, only_header, 4)
    assert result.factors.get(0) == {"header": 0.7}
    assert 2 not in result.factors  # parser.py is not a C/C++ implementation of parser.h


def test_a_python_stub_or_typescript_declaration_ranks_below_its_implementation_beside_it():
    # attrs ships setters.pyi beside setters.py: "how does frozen prevent attribute assignment" gave
    # the stub's ``def frozen`` a place of the top 10 beside the function itself
    inp = pool((0.9, "src/attr/setters.pyi", "function frozen", "def frozen(inst, attr, value): ..."),
               (0.8, "src/attr/setters.py", "function frozen", "def frozen(inst, attr, value):\n    raise"),
               (0.85, "index.d.ts", "interface AxiosInterceptorOptions", "x"), (0.7, "index.js", "module", "x"),
               (0.6, "lib/a.d.mts", "module", "x"), (0.5, "lib/a.mts", "module", "x"),
               (0.95, "src/attr/__init__.pyi", "module", "x"),  # no __init__.py among the candidates
               (0.4, "stubs/attr/setters.pyi", "module", "x"), (0.3, "src/b.d.ts", "module", "x"),
               (0.2, "src/b.d.js", "module", "x"))  # not a declaration file: no pair
    only_header = NEUTRAL.__class__(**{**NEUTRAL.__dict__, "header": 0.7})
    result = rerank("zzz", inp, only_header, len(inp.paths))
    assert {inp.paths[i] for i in result.factors} == {"src/attr/setters.pyi", "index.d.ts", "lib/a.d.mts"}
    assert all(f == {"header": 0.7} for f in result.factors.values())
    assert [inp.paths[i] for i in result.order][:3] == ["src/attr/__init__.pyi", "src/attr/setters.py", "index.js"]


def test_an_import_block_is_told_from_its_title_and_statements_in_every_language():
    blocks = {
        "typescript": '// types only!\nimport {\n\tImmerState,\n\tAnyMap\n} from "../internal"\nimport "./polyfill";',
        "re-exports": 'export * from "./a"\nexport { b as c } from \'./b\'\n',
        "commonjs": "'use strict'\n\nconst fs = require('fs')\nconst { join } = require(\"path\");\n",
        "python": "import os\nimport sys as system, re\nfrom . import (\n    a,\n    b,\n)\nfrom x.y import *  # all\n",
        "go": 'package gin\n\nimport (\n\t"fmt"\n\tnet "net/http"\n)\n',
        "go single": 'package main\n\nimport "os"\n',
        "java": "package org.acme;\n\nimport java.util.List;\nimport static org.junit.Assert.*;\n",
        "rust": "use std::io;\npub use crate::{a, b};\nmod x;\nextern crate serde;\n",
        "csharp": "using System;\nusing Json = Newtonsoft.Json;\n",
        "c": "#pragma once\n/* the API */\n#include <stdio.h>\n#include \"uv.h\"\n",
        "ruby": "require 'json'\nrequire_relative \"helper\"\n",
        "php": "<?php\n\nuse App\\Models\\User;\n",
    }
    for language, text in blocks.items():
        assert import_block("module", text), language
        assert import_block("module (lines 1-60)", text), language
        assert not import_block("function load", text), language  # only top-level code before a definition
    # anything else at the top of the file is the file's own code: a docstring, a constant, a call
    for text in ('"""Console markup."""\nimport re\n', "import os\nX = 1\n", 'import { a } from "a"\na()\n',
                 "export const getPrototypeOf = Object.getPrototypeOf\n", "// only a comment\n", ""):
        assert not import_block("module", text), text


def _import_block_as_first_written(title: str, text: str) -> bool:
    """Session 35's test, whole: every statement removed, then nothing but comments left."""
    from ragit.retrieve.rerank import _BETWEEN_IMPORTS, _BLOCK_COMMENT, _IMPORT_STATEMENT

    if not title.startswith("module"):
        return False
    rest = _IMPORT_STATEMENT.sub("", _BLOCK_COMMENT.sub("", text))
    return rest != text and not _BETWEEN_IMPORTS.sub("", rest).strip()


_IMPORT_LINES = st.sampled_from([
    "import os", "import sys as system, re", "from . import (", "    a,", ")", "from x.y import *  # all",
    'import { a } from "a"', 'import {', "} from '../internal'", 'export * from "./a"', "import \"./p\";",
    "const fs = require('fs')", "'use strict'", "package gin", "import (", '\t"fmt"', "use std::io;",
    "pub use crate::{a, b};", "mod x;", "using System;", "#include <stdio.h>", "#pragma once", "# a comment",
    "// a comment", "-- a comment", "", "   ", "/* block", "comment */", "/* one */", "<?php",
    "require 'json'", "module Text.Pandoc.X where", "import qualified Data.Map as M", "{-# LANGUAGE CPP #-}",
    "X = 1", "a()", '"""doc"""', "export const x = 1", "#include \"uv.h\" // why",
])


@settings(max_examples=400, deadline=None)
@given(lines=st.lists(_IMPORT_LINES, max_size=12), title=st.sampled_from(["module", "module (lines 3-9)", "function f"]))
def test_the_import_block_shortcut_answers_as_the_whole_test(lines, title):
    """The first-line shortcut (and the memo) never changes the answer of removing every statement."""
    text = "\n".join(lines)
    assert import_block(title, text) == _import_block_as_first_written(title, text)


def test_a_stand_in_is_an_import_block_an_export_list_or_a_display_method_not_asked_for():
    asked = read_question("how does the connection pool pick an idle connection for a request")
    block = "import os\nimport sys\n"
    assert stand_in("module", block, asked) and stand_in("variable __all__", '__all__ = [\n    "a",\n]', asked)
    for title, text in (("method ConnectionPool.__repr__", "x"), ("method Pool.__str__ (lines 10-70)", "x"),
                        ("method Pool.toString", "  toString() {\n    return `Pool(${this.size})`\n  }"),
                        ("method Pool.ToString", "public override string ToString()\n{"),
                        ("method T.String", "func (t *T) String() string {"),
                        ("method Pool.to_s", "  def to_s\n    name\n  end"), ("impl Display for Pool", "x"),
                        ("impl fmt::Debug for Pool", "x")):
        assert stand_in(title, text, asked), title
    # a method of a display name that takes parameters is other code: gin's ``c.String(200, "ok")``
    for title, text in (("method Context.String", "func (c *Context) String(code int, format string) {"),
                        ("method Pool.toString", "  toString(radix) {"), ("method Pool.to_s", "def to_s(io)")):
        assert not stand_in(title, text, asked), title
    for title in ("method Pool.acquire", "function __repr__helper", "variable __all__s", "impl Drop for Pool",
                  "class Repr", "method Pool.string"):
        assert not stand_in(title, "x", asked), title
    # a question that asks how something is shown, or names the method, keeps it
    for question in ("how is a connection pool printed", "repr of the connection pool", "ConnectionPool.__repr__",
                     "pool string representation", "what does toString return for a pool"):
        assert not stand_in("method ConnectionPool.__repr__", "x", read_question(question)), question
        assert not stand_in("method Pool.toString", "toString() {", read_question(question)), question
    assert stand_in("module", block, read_question("how is a connection pool printed"))


def test_an_import_block_trades_places_with_its_files_best_other_candidate():
    # immer: "how does a draft proxy record changes to an object" showed four files by their import
    # lists (``import { createProxy, markChanged, ... } from "../internal"``), not their code
    inp = pool((0.9, "src/plugins/mapset.ts", "module", "import { a } from 'x'"),
               (0.5, "src/plugins/mapset.ts", "function enableMapSet", "x"),
               (0.6, "src/plugins/mapset.ts", "function other", "x"),
               (0.8, "src/core/proxy.ts", "function createProxy", "x"),
               (0.7, "src/utils/common.ts", "module", "import { b } from 'y'"),  # its only candidate
               (0.95, "src/scope.ts", "function createScope", "x"),
               (0.4, "src/scope.ts", "module", "import { c } from 'z'"))  # not the file's best: stays
    inp.stand_ins = frozenset({0, 4, 6})
    result = rerank("zzz", inp, NEUTRAL, len(inp.paths))
    assert [(inp.paths[i], inp.titles[i]) for i in result.order] == [
        ("src/scope.ts", "function createScope"), ("src/plugins/mapset.ts", "function other"),
        ("src/core/proxy.ts", "function createProxy"), ("src/utils/common.ts", "module"),
        ("src/plugins/mapset.ts", "module"), ("src/plugins/mapset.ts", "function enableMapSet"),
        ("src/scope.ts", "module")]
    assert result.scores[2] == 0.9 and result.scores[0] == 0.6  # every file keeps its best score
    assert result.factors[2] == {"stand-in": 0.9 - 0.6} and result.factors[0] == {"stand-in": 0.6 - 0.9}
    assert 4 not in result.factors and 6 not in result.factors
    # unnamed, an import block ranks as any chunk (the default)
    inp.stand_ins = frozenset()
    assert rerank("zzz", inp, NEUTRAL, 1).order == [5]
    assert ranked_paths("zzz", inp, NEUTRAL)[1] == "src/plugins/mapset.ts"


def test_windows_only_code_ranks_below_its_twin_for_other_systems_unless_windows_is_asked_for():
    inp = pool((0.9, "src/win/tcp.c", "function uv_tcp_connect", "x"),
               (0.8, "src/unix/tcp.c", "function uv_tcp_connect", "x"),
               (0.85, "src/win/winapi.h", "module", "x"),  # no twin among the candidates: left alone
               (0.7, "os/file_windows.go", "func Open", "x"), (0.6, "os/file_unix.go", "func Open", "x"))
    only_platform = NEUTRAL.__class__(**{**NEUTRAL.__dict__, "platform": 0.6})
    result = rerank("TCP stream connect and accept", inp, only_platform, 5)
    assert [inp.paths[i] for i in result.order] == [
        "src/win/winapi.h", "src/unix/tcp.c", "os/file_unix.go", "src/win/tcp.c", "os/file_windows.go"]
    assert result.factors[0] == {"platform": 0.6} and result.factors[3] == {"platform": 0.6}
    assert 2 not in result.factors and 1 not in result.factors
    for asking in ("TCP connect on Windows", "win32 TCP connect", "TCP connect with IOCP"):
        assert ranked_paths(asking, inp, only_platform)[0] == "src/win/tcp.c"
    # "window" (a terminal's window size) is not Windows
    assert "platform" in rerank("tty window size", inp, only_platform, 5).factors[0]
    assert ranked_paths("TCP stream connect and accept", inp, NEUTRAL)[0] == "src/win/tcp.c"
    assert RerankWeights().platform == 0.6  # on by default


@pytest.mark.parametrize(("path", "twin"), [
    ("src/win/tcp.c", (True, "tcp.c")), ("src/unix/tcp.c", (False, "tcp.c")),
    ("library/std/src/sys/windows/fs.rs", (True, "fs.rs")), ("src/os/file_windows.go", (True, "file.go")),
    ("src/os/file_unix.go", (False, "file.go")), ("src/os/file_linux.go", (False, "file.go")),
    ("command_win.go", (True, "command.go")), ("src/poll-win32.c", (True, "poll.c")),
    ("src/Windows/Dialog.cs", (True, "Dialog.cs")), ("src/twin.c", (False, "twin.c")),
    ("src/window.c", (False, "window.c")), ("README", (False, "README")),
])
def test_platform_twin_reads_windows_directories_and_platform_suffixes(path, twin):
    assert platform_twin(path) == twin


@pytest.mark.parametrize(("path", "project"), [
    ("requests/packages/urllib3/util/retry.py", "urllib3"),  # a vendored package
    ("src/urllib3/packages/six.py", "six"),  # a vendored single module
    ("src/pip/_vendor/rich/console.py", "rich"),
    ("botocore/vendored/requests/api.py", "requests"),
    ("seaborn/external/husl.py", "husl"),
    ("web/_vendor/lodash/lodash.js", "lodash"),  # _vendor is unambiguous in any language
    ("requests/packages/__init__.py", None),  # the project's own import shim
    ("packages/vitest/src/runner.ts", None),  # a JavaScript monorepo's own packages
    ("src/packages/ui/button.ts", None),  # `packages` counts only for Python
    ("packages/core/external/io.py", "io"),
    ("external/lib.py", None),  # a top-level directory is the project's own
    ("src/flask/app.py", None),
])
def test_bundled_project_names_the_vendored_project(path, project):
    assert bundled_project(path) == project


def test_vendored_code_ranks_below_the_projects_own_unless_named_or_asked_for():
    inp = pool((0.9, "requests/packages/urllib3/response.py", "class HTTPResponse", "x"),
               (0.8, "requests/packages/chardet/big5freq.py", "module", "x"),
               (0.6, "requests/models.py", "class Response", "x"))
    only_vendored = NEUTRAL.__class__(**{**NEUTRAL.__dict__, "vendored": 0.5})
    result = rerank("decode the response body", inp, only_vendored, 3)
    assert inp.paths[result.order[0]] == "requests/models.py"
    assert result.factors[0] == {"vendored": 0.5}
    assert 2 not in result.factors
    # the question names the bundled project: its code is what the user wants
    named = rerank("urllib3 response decoding", inp, only_vendored, 3)
    assert inp.paths[named.order[0]] == "requests/packages/urllib3/response.py"
    assert "vendored" not in named.factors.get(0, {}) and named.factors[1] == {"vendored": 0.5}
    assert ranked_paths("vendored response decoding", inp, only_vendored)[0] == "requests/packages/urllib3/response.py"
    assert ranked_paths("decode the response body", inp, NEUTRAL)[0] == "requests/packages/urllib3/response.py"
    assert RerankWeights().vendored == 0.5  # on by default


# ---------------------------------------------------------------- invariants


_C_PATHS = ["src/a.h", "src/a.c", "include/b.hpp", "src/b.cc", "src/c.h", "src/c.py", "tests/test_a.c", "d.hh"]


@settings(max_examples=100, deadline=None)
@given(st.lists(st.tuples(st.floats(0.0, 1.0), st.sampled_from(_C_PATHS)), min_size=1, max_size=20),
       st.floats(0.1, 1.0))
def test_header_rule_only_lowers_headers_whose_source_is_a_candidate(rows, factor):
    inp = pool(*[(h, p, "module", "x") for h, p in rows])
    plain = rerank("zzz", inp, RerankWeights(diversity=1.0, header=1.0), len(rows))
    paired = rerank("zzz", inp, RerankWeights(diversity=1.0, header=factor), len(rows))
    stems = {p.rpartition("/")[2].rpartition(".")[0] for p in inp.paths if p.endswith((".c", ".cc"))}
    for i, p in enumerate(inp.paths):
        is_paired_header = p.endswith((".h", ".hpp", ".hh")) and p.rpartition("/")[2].rpartition(".")[0] in stems
        if is_paired_header:
            assert abs(paired.scores[i] - plain.scores[i] * factor) < 1e-12
        else:
            assert paired.scores[i] == plain.scores[i]
            assert "header" not in paired.factors.get(i, {})


@settings(max_examples=100, deadline=None)
@given(st.lists(st.tuples(st.floats(0.0, 1.0), st.sampled_from(["src/a.py", "src/b.py", "tests/test_a.py",
                                                                 "docs/a.md", "a.json"]),
                          st.sampled_from(["class A", "function b", "module", "A"]),
                          st.sampled_from(["class A:\n  pass", "b()", "", "def b(): pass"])),
                min_size=1, max_size=30),
       st.sampled_from(["A", "b", "where is a", "tests for b", "docs"]), st.integers(1, 40))
def test_rerank_is_deterministic_and_returns_the_best_top(rows, question, top):
    inp = pool(*rows)
    first = rerank(question, inp, RerankWeights(), top)
    again = rerank(question, inp, RerankWeights(), top)
    assert first == again
    assert len(first.order) == min(top, len(rows)) and len(set(first.order)) == len(first.order)
    scores = [first.scores[i] for i in first.order]
    assert scores == sorted(scores, reverse=True)
    everything = rerank(question, inp, RerankWeights(), len(rows))
    assert everything.order[:top] == first.order


def test_pool_takes_the_best_by_each_score_and_never_swells_on_ties():
    import numpy as np

    hybrid = np.array([0.5] * 50 + [0.9])
    keyword = np.array([0.0] * 50 + [1.0])
    vector = np.array([0.1] * 51)
    chosen = pool_indices(hybrid, keyword, vector, 5, 2)
    assert 50 in chosen and len(chosen) <= 5 + 5 + 5
    assert list(chosen) == sorted(chosen)


def test_declaration_pattern_ignores_comment_lines():
    assert not _DECLARATION.search("# class Engine\n// fn run\n * def run")
