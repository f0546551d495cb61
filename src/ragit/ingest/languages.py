"""Per-language tables of the tree-sitter code chunker (knowledge §8.6).

One :class:`Language` per chunker language: which file names it covers, which grammar parses
it, which nodes are definitions (and how they are named and titled), which nodes hold member
definitions, which nodes are mere wrappers whose children count as siblings (preprocessor
blocks, ``extern "C"``), and which nodes attach to the definition below them (comments,
decorators, ``@doc``). The walk that turns these tables into chunk boundaries lives in
:mod:`ragit.ingest.code`; this module only describes nodes, so it imports no grammar.

Title scheme: a definition is titled ``<word> <name>`` (``class Cart``, ``namespace shop``,
``impl Display for Point``). A function-like definition found inside a container is titled
``<member word> <owner>.<name>``, where the owner is the innermost container's name and the
member word is ``method`` for type-like containers (class, struct, trait, impl, object,
Ruby module, ...) and ``function`` for namespace-like ones (C++/C#/PHP namespace, Rust ``mod``,
TypeScript namespace, Elixir ``defmodule``). Nested types keep their own title
(``class Inner``).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any, Callable, NamedTuple

from ragit.ingest.blanking import Blanker, directive_lines, kotlin_syntax, typescript_syntax

Node = Any  # tree_sitter.Node; typed loosely so this module never imports tree_sitter


class Found(NamedTuple):
    """What a definition node is.

    ``title`` is used when the node is not titled through an owner; ``callable`` definitions
    found among a container's members are titled ``<member word> <owner>.<name>`` instead
    (``member_word`` overrides the container's word, e.g. C# ``property``). ``body`` holds the
    member definitions of a container (``split``). A callable's body (its ``body`` field unless
    given) is only searched when the callable contains a parse error, because error recovery
    often swallows the definitions that follow into it. ``owner`` is the name members are
    titled with (default ``name``; ``""`` keeps the enclosing owner, e.g. Ruby ``class << self``).
    ``indented``: the members sit right of the container's first column (C and C++ records), so
    when a macro breaks the container's parse and error recovery swallows the rest of the file
    into it, a definition at or left of that column is known to be outside it (``code._broken_record``).
    ``overload``: a signature without a body (TypeScript overloads); the definition of the same
    name right after it joins its unit, so the signatures open their implementation's unit.
    """

    title: str
    name: str = ""
    callable: bool = False
    body: Node | None = None
    split: bool = False
    owner: str | None = None
    members_word: str = "method"
    member_word: str = ""
    indented: bool = False
    overload: bool = False


Describe = Callable[[Node], "Found | None"]


@dataclass(frozen=True)
class Language:
    """How one language's syntax tree maps to definitions."""

    name: str  # the chunker is ``code:<name>`` (``code:<name>/<revision>`` from revision 2)
    grammar: tuple[str, str]  # (module, function returning the language pointer)
    extensions: tuple[str, ...]  # file name endings, dot included
    handlers: dict[str, Describe]  # node type -> description (None: not a definition after all)
    attached: frozenset[str] = frozenset()  # node types that attach to the definition below
    #: node types whose children count as siblings (preprocessor blocks); a function returning None
    #: leaves that node as it is (JavaScript: only a call that wraps a library, ``_js_wrapped``)
    transparent: dict[str, Callable[[Node], list[Node] | None]] = field(default_factory=dict)
    is_attached: Callable[[Node], bool] | None = None  # extra attachment test (Elixir ``@doc``)
    merge_clauses: bool = False  # consecutive definitions with one title form one unit (Haskell)
    #: a ``/**`` doc comment one blank line above a definition still opens its unit (JSDoc as
    #: express writes it: ``*/``, a blank line, ``res.format = function(obj){``)
    doc_gap: bool = False
    #: blanks the syntax the grammar cannot place (conditional compilation, TypeScript's variance
    #: annotations, ...; :mod:`ragit.ingest.blanking`): a parse with errors is tried again with it
    #: blanked (``code._retry_blanked``)
    retry_blank: "Blanker | None" = None
    #: wrappers whose contents may be the file's own code (Rust's item macros,
    #: ``_rust_item_macros``): (top-level nodes, bytes) -> (start, content start, content end, end)
    #: of each; ``code._unwrapped`` blanks the wrapper and keeps it so where the contents parse
    unwrap: Callable[[list[Node], bytes], list[tuple[int, int, int, int]]] | None = None
    #: finds what the grammar read wrongly without an error (Kotlin's annotated declarations read
    #: as an expression, ``_kotlin_annotated``): (top-level nodes, lines) -> respelled lines by
    #: row, each the same length; ``code._respelled`` parses again with them where that places
    #: no fewer bytes
    respell: Callable[[list[Node], list[bytes]], dict[int, bytes]] | None = None
    #: recovers a definition error recovery tore apart: (siblings, index) -> (found, its first sibling)
    recover: Callable[[list[Node], int], "tuple[Found, int] | None"] | None = None
    filenames: tuple[str, ...] = ()  # whole file names (``Rakefile``)
    #: bumped whenever this table starts chunking some file differently: the revision is part of
    #: the chunker name, hence of every chunk id (knowledge §9), so two stores never hold
    #: different chunks under one id; tables sharing a ``name`` share their revision
    revision: int = 1

    @property
    def chunker(self) -> str:
        """The chunker name of this table at its revision (:func:`chunker_name`)."""
        return chunker_name(self.name, self.revision)


def chunker_name(name: str, revision: int) -> str:
    """``code:<name>``, or ``code:<name>/<revision>`` above revision 1 (the ids of revision 1
    are those of every store made before revisions existed)."""
    return f"code:{name}" if revision == 1 else f"code:{name}/{revision}"


# ---------------------------------------------------------------- shared helpers


def text(node: Node | None, default: str = "") -> str:
    """UTF-8 text of ``node`` (``default`` when missing)."""
    return node.text.decode("utf-8", "replace") if node is not None else default


def name_of(node: Node, field_name: str = "name", default: str = "default") -> str:
    """Text of the ``field_name`` child, or ``default``."""
    return text(node.child_by_field_name(field_name), default)


def spans_lines(node: Node) -> bool:
    """Whether ``node`` ends on a later line than it starts: a declaration or field whose value
    spans lines is a unit of its own in several tables (its code would otherwise join the unit
    above and be titled for it); a one-line one stays in the unit above."""
    return node.start_point.row != node.end_point.row


def one_line(value: str, limit: int = 80) -> str:
    """``value`` squeezed onto one line and cut to ``limit`` characters (titles stay short)."""
    value = " ".join(value.split())
    return value if len(value) <= limit else value[:limit - 1] + "…"


_TYPE_MARKS = frozenset(("mut", "dyn", "const"))  # Rust words before a type: ``&'a mut T``, ``dyn T``


def base_type_name(node: Node | None) -> str:
    """``Point`` for ``*Point``, ``Wrapper<T>``, ``Recv[T]``, ``fmt::Point`` or Rust's ``&'a mut
    Point<'_>`` (a lifetime and ``mut``/``dyn`` are no part of the name)."""
    if node is None:
        return "default"
    value = text(node)
    for mark in ("<", "["):
        value = value.split(mark, 1)[0]
    value = value.replace("*", "").replace("&", "").strip()
    if value[:1] == "'" or value.split(" ", 1)[0] in _TYPE_MARKS:
        value = " ".join(w for w in value.split() if w[:1] != "'" and w not in _TYPE_MARKS)
    return value.rsplit("::", 1)[-1].rsplit(".", 1)[-1]


def _first(node: Node, types: frozenset[str] | set[str] | tuple[str, ...]) -> Node | None:
    for child in node.named_children:
        if child.type in types:
            return child
    return None


def _named(node: Node) -> list[Node]:
    return node.named_children


def _function(word: str = "function", field_name: str = "name") -> Describe:
    def describe(node: Node) -> Found:
        child = node.child_by_field_name(field_name)  # name_of, inlined: this runs for every method
        name = child.text.decode("utf-8", "replace") if child is not None else "default"
        return Found(f"{word} {name}", name, True)
    return describe


def _container(word: str, members_word: str = "method", field_name: str = "name", body: str = "body",
               leaf_without_body: bool = False) -> Describe:
    def describe(node: Node) -> Found | None:
        name = name_of(node, field_name)
        inner = node.child_by_field_name(body)
        if inner is None and leaf_without_body:
            return None
        return Found(f"{word} {name}", name, body=inner, split=True, members_word=members_word)
    return describe


def _member(word: str, name: str) -> Found:
    """A definition titled ``<word> <name>``, and ``<word> Owner.name`` inside a container: a
    field, property, constant or value of its own (the value rules of every table)."""
    return Found(f"{word} {name}", name, callable=True, member_word=word)


def _leaf(word: str, field_name: str = "name") -> Describe:
    def describe(node: Node) -> Found:
        name = name_of(node, field_name)
        return Found(f"{word} {name}", name)
    return describe


COMMENTS = frozenset({"comment", "line_comment", "block_comment"})
ATTACHED = COMMENTS | {"decorator", "attribute_item"}


# ---------------------------------------------------------------- JavaScript / TypeScript


def _is_async(node: Node) -> bool:
    return any(
        child.type == "async" or (child.type == "function_modifiers" and b"async" in child.text)
        for child in node.children
    )


def _function_word(node: Node) -> str:
    """``async function`` or ``function``: how a JavaScript function (``node``) is titled."""
    return "async function" if _is_async(node) else "function"


def _js_function(node: Node) -> Found:
    name = name_of(node)
    return Found(f"{_function_word(node)} {name}", name, callable=True)


def _js_overload(word: str) -> Describe:
    """A TypeScript overload signature (``function f(a: string): A;``, ``on(e: "x"): this;`` in a
    class): one line of a definition whose implementation (or next signature) follows, never a
    unit of its own (``Found.overload``)."""
    describe = _function(word)
    return lambda node: describe(node)._replace(overload=True)


_JS_FUNCTION_VALUES = frozenset({"arrow_function", "function_expression", "generator_function"})


def _js_value(value: Node | None) -> Node | None:
    """The value a chain of assignments gives (``const proto = module.exports = {`` → the object;
    ``res.set = res.header = function``), or None where a link has no right side."""
    while value is not None and value.type == "assignment_expression":
        value = value.child_by_field_name("right")
    return value


def _js_variable(node: Node) -> Found | None:
    for declarator in node.named_children:
        value = _js_value(declarator.child_by_field_name("value")) if declarator.type == "variable_declarator" else None
        if value is None:
            continue
        if value.type in _JS_FUNCTION_VALUES:
            name = name_of(declarator)
            return Found(f"{_function_word(value)} {name}", name, callable=True)
        if value.type == "class":
            name = name_of(declarator)
            return Found(f"class {name}", name, body=value.child_by_field_name("body"), split=True)
    # a value spanning lines (``export const counterSlice = createSlice({`` ..., ``const email:
    # RegExp =`` / its pattern) is a unit of its own, ``const <name>``: its code would otherwise join
    # the unit above and be titled for it; one-line values stay there, as one-line class fields do
    word = node.children[0].type if node.children else ""
    if word not in ("const", "let", "var"):
        return None
    for declarator in node.named_children:
        if declarator.type == "variable_declarator" and spans_lines(declarator):
            name_node = declarator.child_by_field_name("name")
            value = declarator.child_by_field_name("value")
            if name_node is not None and name_node.type == "identifier" and value is not None:
                name = text(name_node)
                if _js_methods_object(object_value := _js_value(value)):  # (``const proto = module.exports = {``)
                    return Found(f"{word} {name}", name, body=object_value, split=True)
                return _member(word, name)
    # a one-line declaration under a doc comment of its own (``/** … */`` over several lines:
    # immer's ``export const produce: IProduce = immer.produce``) is documented API, a unit too
    if len(node.named_children) == 1 and _documented(node):
        declarator = node.named_children[0]
        name_node = declarator.child_by_field_name("name") if declarator.type == "variable_declarator" else None
        if name_node is not None and name_node.type == "identifier":
            name = text(name_node)
            return _member(word, name)
    return None


def _documented(node: Node) -> bool:
    """Whether a ``/**`` comment over several lines ends on the line above ``node`` (or above the
    ``export`` that holds it)."""
    holder = node.parent if node.parent is not None and node.parent.type == "export_statement" else node
    comment = holder.prev_sibling
    return comment is not None and comment.type == "comment" and spans_lines(comment) \
        and comment.end_point.row + 1 == holder.start_point.row and text(comment).startswith("/**")


def _js_methods_object(value: Node | None) -> bool:
    """Whether ``value`` is an object literal holding a method (``inspect() {…}``, ``get body()
    {…}``, ``onerror: function (err) {…}``): such an object is a container cut at its methods when
    it is too long for one unit (koa's ``const proto = module.exports = {`` context, its request and
    response; session 32), as a class is; an object of data is not."""
    if value is None or value.type != "object":
        return False
    for member in value.named_children:
        if member.type == "method_definition":
            return True
        if member.type == "pair":
            inner = member.child_by_field_name("value")
            if inner is not None and inner.type in _JS_FUNCTION_VALUES:
                return True
    return False


def _js_pair(node: Node) -> Found | None:
    """A property of an object literal holding a function (``onerror: function (err) {…}``,
    ``'quoted': async () => …``): a method of the object (``_js_methods_object``)."""
    value = node.child_by_field_name("value")
    key = node.child_by_field_name("key")
    if value is None or key is None or value.type not in _JS_FUNCTION_VALUES:
        return None
    name = text(key).strip("'\"`")
    return Found(f"{_function_word(value)} {name}", name, callable=True, member_word="method")


def _js_field(node: Node) -> Found | None:
    """A class field holding a function (``onClick = () => {...}``) is a method; one whose value
    spans lines (``cache = new Map([`` ... ``])``, ``run = deduped(async () => {`` ...) a
    property (its code would otherwise join the method above it); one-line fields stay in the
    unit above, as other fields do."""
    value = node.child_by_field_name("value")
    name_node = node.child_by_field_name("name") or node.child_by_field_name("property")
    if value is None or name_node is None:
        return None
    name = text(name_node)
    if value.type in _JS_FUNCTION_VALUES:
        return Found(f"{_function_word(value)} {name}", name, callable=True)
    if spans_lines(value):
        return _member("property", name)
    return None


def _js_export(node: Node) -> Found | None:
    declaration = node.child_by_field_name("declaration")
    if declaration is None:
        declaration = _first(node, ("function_expression", "class", "generator_function"))
    if declaration is not None:
        return _describe_js(declaration)
    # ``export default <expression>`` over several lines is a unit of its own: its code would
    # otherwise join the unit above and be titled for it (axios's 930-line ``export default
    # isHttpAdapterSupported && function httpAdapter(config) {`` was ``const http2Transport``).
    # A named function it guards or chooses is the title (``function httpAdapter``); any other
    # value (``export default {`` with the module's names, an arrow function) is the file's own
    # code, ``module``
    value = node.child_by_field_name("value")
    if value is None:  # ``export {`` / ``export type {`` a list of names ``}``
        return _js_code(node)
    if not spans_lines(value):
        return None
    while value.type in _JS_DEFAULT_WRAPPERS:
        value = value.child_by_field_name(_JS_DEFAULT_WRAPPERS[value.type]) or value.named_children[-1]
    name_node = value.child_by_field_name("name") if value.type in _JS_FUNCTION_VALUES else None
    if name_node is not None:
        name = text(name_node)
        return Found(f"{_function_word(value)} {name}", name, callable=True)
    if _js_methods_object(value):  # ``export default { async fetch(request, env) {…} }``
        return Found("object default", "default", body=value, split=True)
    return MODULE


#: expressions a default export's function hides in: ``supported && function f() {…}``,
#: ``(function f() {…})``, ``cond ? function f() {…} : null`` (the right operand, the inner
#: expression, the first choice)
_JS_DEFAULT_WRAPPERS = {"binary_expression": "right", "parenthesized_expression": "",
                        "ternary_expression": "consequence"}


def _js_ambient(node: Node) -> Found | None:
    """``declare function f()``, ``declare module "x" { … }``: what follows ``declare``; ``declare
    global { … }`` is a namespace of the global scope, whose members are units as a namespace's are
    (preact's ``internal.d.ts`` declares its internal interfaces so; they were ``module`` windows)."""
    if not node.named_children:
        return None
    inner = node.named_children[0]
    if inner.type == "statement_block":
        return Found("namespace global", "global", body=inner, split=True, members_word="function")
    return _describe_js(inner)


#: what a handler returns for code that is the file's own, not a definition's: it ends the unit
#: above and opens one titled ``module``, as the file's head is (consecutive ones are one unit)
MODULE = Found("module")

_JS_TEST_CALLS = frozenset(("describe", "suite", "context", "it", "test", "specify", "bench"))


def _js_test_call(call: Node) -> bool:
    """``describe('parser', () => {...})``, ``it.each([...])('works', fn)``, ``test.skip(...)``: a
    test runner's call with a name and a function (Jest, Vitest, Mocha, Jasmine)."""
    function = call.child_by_field_name("function")
    while function is not None and function.type in ("member_expression", "call_expression"):
        function = function.child_by_field_name("object" if function.type == "member_expression" else "function")
    if function is None or function.type != "identifier" or text(function) not in _JS_TEST_CALLS:
        return False
    arguments = call.child_by_field_name("arguments")
    named = arguments.named_children if arguments is not None else []
    return len(named) >= 2 and named[0].type in ("string", "template_string") \
        and named[-1].type in _JS_FUNCTION_VALUES


def _js_defines(body: Node, depth: int) -> bool:
    """Whether a function body holds a statement the table reads as a definition (a function,
    class or value declared, a function assigned to a path, an object extended with methods), or
    a wrapper that does (jQuery's ``selector.js``: an IIFE inside its AMD ``define``)."""
    for statement in body.named_children:
        handler = _JS.get(statement.type)
        found = handler(statement) if handler is not None else None
        if found is not None and found is not MODULE:
            return True
        if statement.type == "expression_statement" and depth < _JS_WRAP_DEPTH and \
                _js_wrapped(statement, depth + 1) is not None:
            return True
    return False


_JS_WRAP_DEPTH = 4  # wrappers inside wrappers looked into (UMD → AMD → IIFE is three)
_JS_LOADERS = frozenset({"define", "require"})  # AMD: ``define([…], function (…) {…})``, ``sap.ui.define``


def _js_wrapped(statement: Node, depth: int = 0) -> list[Node] | None:
    """The statements of the functions a top-level call wraps a library in, when they define
    something: an IIFE (``(function () { function a() {…} … })();``, ``!function () {…}()``,
    ``(function () {…}.call(this))``), a UMD factory (``(function (root, factory) {…}(this,
    function () {…}))``), an AMD module
    (``define(['jquery'], function ($) {…})``). Its definitions count as the file's own, as a C
    ``#ifdef``'s do; they were ``module`` windows. None for any other statement: a callback handed
    to any other function is that call's code, however many locals it declares (express's
    ``defineGetter(req, 'protocol', function protocol() { var proto = …``, ``app.get('/', (req, res)
    => {…})``, a test runner's ``describe(…)``)."""
    expression = statement.named_children[0] if statement.named_children else None
    while expression is not None and expression.type in ("parenthesized_expression", "unary_expression"):
        expression = expression.named_children[-1] if expression.named_children else None
    if expression is None or expression.type != "call_expression" or _js_test_call(expression):
        return None
    functions = []
    callee = _js_unparenthesized(expression.child_by_field_name("function"))
    if callee is not None and callee.type == "member_expression":  # ``(function () {…}.call(this))``: lodash
        prop, target = callee.child_by_field_name("property"), _js_unparenthesized(callee.child_by_field_name("object"))
        if prop is not None and text(prop) in ("call", "apply") and target is not None \
                and target.type in _JS_FUNCTION_VALUES:
            callee = target
    if callee is not None and callee.type in _JS_FUNCTION_VALUES:
        functions.append(callee)
    else:  # only AMD's loader calls a library's factory; any other callback is code (``_js_code``)
        path = _js_path(callee)
        if path is None or path[-1] not in _JS_LOADERS:
            return None
    for argument in _js_arguments(expression):
        argument = _js_unparenthesized(argument)  # ``}(this, (function () {…})))``: Rollup's UMD
        if argument is not None and argument.type in _JS_FUNCTION_VALUES:
            functions.append(argument)
    bodies = [body for body in (f.child_by_field_name("body") for f in functions)
              if body is not None and body.type == "statement_block" and _js_defines(body, depth)]
    return [child for body in bodies for child in body.named_children] or None


def _js_unparenthesized(node: Node | None) -> Node | None:
    """``node`` without the parentheses around it (``(function () {…})`` → the function)."""
    while node is not None and node.type == "parenthesized_expression" and node.named_children:
        node = node.named_children[0]
    return node


def _js_arguments(call: Node) -> list[Node]:
    """The arguments of ``call``, comments left out."""
    arguments = call.child_by_field_name("arguments")
    return [a for a in arguments.named_children if a.type not in COMMENTS] if arguments is not None else []


def _js_path(node: Node | None) -> list[str] | None:
    """``["a", "b", "c"]`` of ``a.b.c`` (an identifier or ``this`` and a chain of property names,
    ``#private`` ones included); None for anything else (a call, an index, a computed name)."""
    parts: list[str] = []
    while node is not None and node.type == "member_expression":
        prop = node.child_by_field_name("property")
        if prop is None or prop.type not in ("property_identifier", "private_property_identifier"):
            return None
        parts.append(text(prop))
        node = node.child_by_field_name("object")
    if node is None or node.type not in ("identifier", "this"):
        return None
    parts.append(text(node))
    parts.reverse()
    return parts


def _js_assigned_function(assignment: Node) -> Found | None:
    """``res.send = function send(body) {…}``, ``Foo.prototype.bar = async () => {…}``,
    ``exports.parse = function (s) {…}``: CommonJS code defines its functions by assignment
    (express's ``response.js`` is 1,150 lines of them). A function assigned to a plain name or a
    dotted path (through a chain, ``res.set = res.header = function``) is a unit titled with the
    first path (``function res.send``; on a prototype, ``method Foo.bar``); other assignments stay
    in the unit above. So is a class (``module.exports = class Application extends Emitter {``,
    koa's application): ``class Application``, or the path for an anonymous one, cut at its
    methods as a declared class is (session 32; it was ``module`` windows)."""
    value = _js_value(assignment.child_by_field_name("right"))  # (res.set = res.header = function)
    if value is None or (value.type not in _JS_FUNCTION_VALUES and value.type != "class"
                         and not _js_methods_object(value)):
        return None
    path = _js_path(assignment.child_by_field_name("left"))
    if path is None:
        return None
    if value.type == "class":
        own = value.child_by_field_name("name")
        name = text(own) if own is not None else ".".join(path)
        return Found(f"class {name}", name, body=value.child_by_field_name("body"), split=True)
    if value.type == "object":  # (holding methods: _js_methods_object) exported through a path;
        if len(path) < 2:  # a plain name is no export (Flow's ``export type P = {`` misread as one)
            return None
        name = ".".join(path)
        return Found(f"object {name}", name, body=value, split=True)
    if len(path) >= 3 and path[-2] == "prototype":
        return Found(f"method {'.'.join(path[:-2])}.{path[-1]}", path[-1], callable=True, member_word="method")
    name = ".".join(path)
    return Found(f"{_function_word(value)} {name}", name, callable=True)


_JS_EXTENDS = frozenset({"extend", "assign", "mixin"})


def _js_extend_call(call: Node) -> Found | None:
    """``jQuery.extend({ ajax: function (url, options) {…}, … })``, ``_.extend(Model.prototype,
    Events, { get: function (attr) {…}, … })``, ``Object.assign(Foo.prototype, {…})``: before
    classes, libraries defined their methods by extending an object with an object literal; it is
    a container cut at its methods as ``Foo.prototype = {…}`` is (``_js_assigned_function``),
    owned by the extended object (the callee's own for one argument, the first argument's
    otherwise; ``.prototype`` dropped). It was ``module`` windows (jQuery's ``ajax.js``, Backbone)."""
    callee = call.child_by_field_name("function")
    if callee is None or callee.type != "member_expression":
        return None
    prop = callee.child_by_field_name("property")
    named = _js_arguments(call)
    if prop is None or text(prop) not in _JS_EXTENDS or not named or not _js_methods_object(named[-1]):
        return None
    path = _js_path(callee.child_by_field_name("object") if len(named) == 1 else named[0])
    if path is None or (path == ["Object"] and len(named) == 1):
        return None
    owner = ".".join(path).removesuffix(".prototype")
    return Found(f"object {owner}", owner, body=named[-1], split=True)


def _js_named_callback(call: Node) -> Found | None:
    """``defineGetter(req, 'protocol', function protocol() {…})``, ``app.use(function errorHandler(err,
    req, res, next) {…})``: a top-level call whose last argument is a function expression with a
    name of its own defines that function (express's ``request.js`` defines its getters so); an
    anonymous callback stays the file's code (``_js_code``)."""
    named = _js_arguments(call)
    last = named[-1] if named else None
    if last is None or last.type not in ("function_expression", "generator_function"):
        return None
    own = last.child_by_field_name("name")
    if own is None:
        return None
    name = text(own)
    return Found(f"{_function_word(last)} {name}", name, callable=True)


def _js_statement(node: Node) -> Found | None:
    inner = node.named_children[0] if node.named_children else None
    if inner is None:
        return None
    if inner.type in ("internal_module", "module"):
        return _describe_js(inner)
    if inner.type == "call_expression" and _js_test_call(inner):
        # a test file's tests are its own code: not titled for the helper or fixture above them
        return MODULE
    if inner.type == "call_expression":
        found = _js_extend_call(inner) or _js_named_callback(inner)
        if found is not None:
            return found
    if inner.type == "assignment_expression":
        found = _js_assigned_function(inner)
        if found is not None:
            return found
    return _js_code(node)


def _js_code(node: Node) -> Found | None:
    """A top-level statement over several lines that defines nothing (``watch(() => …, …)``,
    ``utils.forEach([…], function (method) {…})``, ``if (import.meta.vitest) {…}``, ``module.exports
    = {…}``) is the file's own code, ``module``: it no longer joins the unit above and is no longer
    titled for that definition. One-line statements stay where they are."""
    return MODULE if spans_lines(node) else None


_JS: dict[str, Describe] = {
    "function_declaration": _js_function,
    "generator_function_declaration": _js_function,
    "function_signature": _js_overload("function"),
    "function_expression": _js_function,
    "generator_function": _js_function,
    "class_declaration": _container("class"),
    "abstract_class_declaration": _container("class"),
    "class": _container("class"),
    "interface_declaration": _container("interface"),
    "enum_declaration": _leaf("enum"),
    "type_alias_declaration": _leaf("type"),
    "internal_module": _container("namespace", "function"),
    "module": _container("module", "function"),
    "lexical_declaration": _js_variable,
    "variable_declaration": _js_variable,
    "export_statement": _js_export,
    "ambient_declaration": _js_ambient,
    "expression_statement": _js_statement,
    "if_statement": _js_code,
    "for_statement": _js_code,
    "for_in_statement": _js_code,
    "while_statement": _js_code,
    "do_statement": _js_code,
    "try_statement": _js_code,
    "switch_statement": _js_code,
    # members
    "method_definition": _function("method"),
    "pair": _js_pair,
    "field_definition": _js_field,
    "public_field_definition": _js_field,
    "abstract_method_signature": _js_overload("method"),
    "method_signature": _js_overload("method"),
}


def _describe_js(node: Node) -> Found | None:
    handler = _JS.get(node.type)
    return handler(node) if handler is not None else None


# ---------------------------------------------------------------- Go, Java, Rust


def _go_method(node: Node) -> Found:
    receiver = node.child_by_field_name("receiver")
    params = receiver.named_children if receiver is not None else []
    owner = base_type_name(params[0].child_by_field_name("type")) if params else "default"
    name = name_of(node)
    return Found(f"method {owner}.{name}", name)


def _go_type(node: Node) -> Found | None:
    specs = [c for c in node.named_children if c.type in ("type_spec", "type_alias")]
    if len(specs) == 1:
        value = specs[0].child_by_field_name("type")
        word = {"struct_type": "struct", "interface_type": "interface"}.get(value.type if value else "", "type")
        return Found(f"{word} {name_of(specs[0])}", name_of(specs[0]))
    return Found("type " + ", ".join(name_of(s) for s in specs)) if specs else None


def _go_value(node: Node) -> Found | None:
    """``var rootCmd = &cobra.Command{`` ... or ``const usageTemplate = `...` `` over several lines
    is a unit of its own (``var rootCmd``), as in JavaScript; a ``var (...)`` or ``const (...)``
    group stays with the unit above (a type's enumerated values follow the type)."""
    spec = node.named_children[0] if len(node.named_children) == 1 else None
    if spec is None or spec.type not in ("var_spec", "const_spec") or not spans_lines(spec):
        return None
    names = spec.children_by_field_name("name")
    if len(names) != 1 or spec.child_by_field_name("value") is None:
        return None
    return Found(f"{node.children[0].type} {text(names[0])}", text(names[0]))


_GO: dict[str, Describe] = {
    "function_declaration": _function(),
    "method_declaration": _go_method,
    "type_declaration": _go_type,
    "var_declaration": _go_value,
    "const_declaration": _go_value,
}


def _java_field(node: Node) -> Found | None:
    """A field with one declarator whose value spans lines (gson's ``public static final
    TypeAdapter<Class> CLASS = new TypeAdapter<Class>() {`` ... ``}``) is a member of its own,
    ``field TypeAdapters.CLASS``: its code would otherwise join the member above and be titled for
    it; one-line fields stay there, as in JavaScript."""
    declarators = node.children_by_field_name("declarator")
    if len(declarators) != 1 or declarators[0].child_by_field_name("value") is None \
            or not spans_lines(declarators[0]):
        return None
    name = name_of(declarators[0])
    return _member("field", name)


def _java_enum_constant(node: Node) -> Found | None:
    """An enum constant with a body of its own (a state of jsoup's ``HtmlTreeBuilderState``, one
    of gson's ``FieldNamingPolicy`` values) is a member, ``constant HtmlTreeBuilderState.InBody``:
    an enum of such constants was otherwise windows titled for the enum; a plain constant stays
    in the enum's own unit."""
    if node.child_by_field_name("body") is None:
        return None
    name = name_of(node)
    return _member("constant", name)


_JAVA: dict[str, Describe] = {
    "field_declaration": _java_field,
    "enum_constant": _java_enum_constant,
    "class_declaration": _container("class"),
    "interface_declaration": _container("interface"),
    "enum_declaration": _container("enum"),
    "record_declaration": _container("record"),
    "annotation_type_declaration": _container("annotation"),
    "method_declaration": _function("method"),
    "constructor_declaration": _function("method"),
    "compact_constructor_declaration": _function("method"),
}


def _rust_impl(node: Node) -> Found:
    owner = base_type_name(node.child_by_field_name("type"))
    trait = node.child_by_field_name("trait")
    title = f"impl {base_type_name(trait)} for {owner}" if trait is not None else f"impl {owner}"
    return Found(title, owner, body=node.child_by_field_name("body"), split=True)


def _rust_value(word: str) -> Describe:
    """``static RENAME_RULES: &[(&str, RenameRule)] = &[`` … or ``pub const BYTE_FREQUENCIES: [u8;
    256] = [`` … over several lines is a unit of its own (``static RENAME_RULES``), as a Go value
    is; a one-line one stays in the unit above."""

    def describe(node: Node) -> Found | None:
        if not spans_lines(node) or node.child_by_field_name("value") is None:
            return None
        name = name_of(node)
        return _member(word, name)

    return describe


_RUST: dict[str, Describe] = {
    "const_item": _rust_value("const"),
    "static_item": _rust_value("static"),
    "function_item": _js_function,  # ``async fn`` is spotted like ``async function``
    "function_signature_item": _js_function,
    "struct_item": _leaf("struct"),
    "enum_item": _leaf("enum"),
    "union_item": _leaf("union"),
    "trait_item": _container("trait"),
    "impl_item": _rust_impl,
    "mod_item": _container("mod", "function", leaf_without_body=True),
    "macro_definition": _leaf("macro"),
}


def _rust_item_macros(nodes: list[Node], data: bytes) -> list[tuple[int, int, int, int]]:
    """The macro invocations among ``nodes`` that may wrap items: one spanning lines with its
    tokens in braces, as (its start, just past ``{``, the ``}``, its end) in bytes. tokio puts
    10,000 lines in ``cfg_rt! { fn new_task … }`` and its kin, which the grammar reads as one
    token tree: their functions were no definitions, and their lines joined the unit above
    (``method Schedule.unhandled_panic``). Those whose braces hold anything but items
    (``bitflags! { struct Flags: u32 {``, ``lazy_static! { static ref …``) are put back by the
    caller (``code._unwrapped``)."""
    found = []
    for node in nodes:
        if node.type != "macro_invocation" or not spans_lines(node) or not node.named_children:
            continue
        tree = node.named_children[-1]
        if tree.type == "token_tree" and data[tree.start_byte:tree.start_byte + 1] == b"{" \
                and data[tree.end_byte - 1:tree.end_byte] == b"}" \
                and _RUST_ITEM_LINE.search(data, tree.start_byte + 1, tree.end_byte - 1):
            found.append((node.start_byte, tree.start_byte + 1, tree.end_byte - 1, tree.end_byte))
    return found


#: a line that opens an item (serde's ``forward_to_deserialize_any! { bool i8 … }`` has none, so
#: it costs no second parse)
_RUST_ITEM_LINE = re.compile(
    rb"^[ \t]*(?:#\[|///|(?:pub(?:\([^)\n]*\))?[ \t]+)?(?:fn|impl|struct|enum|trait|mod|use|const|static|type"
    rb"|async|unsafe|extern|macro_rules!)(?!\w))", re.MULTILINE)


# ---------------------------------------------------------------- Kotlin, Scala, Swift


def _kotlin_class(node: Node) -> Found:
    word = "class"
    body = None
    for child in node.children:
        if child.type == "interface":
            word = "interface"
        elif child.type == "modifiers":
            for modifier in child.named_children:
                if modifier.type == "class_modifier" and modifier.text in (b"enum", b"annotation"):
                    word = modifier.text.decode()
        elif child.type in ("class_body", "enum_class_body"):
            body = child
    name = name_of(node)
    return Found(f"{word} {name}", name, body=body, split=True)


def _kotlin_object(node: Node) -> Found:
    name = name_of(node)
    return Found(f"object {name}", name, body=_first(node, ("class_body",)), split=True)


def _kotlin_companion(node: Node) -> Found:
    name = name_of(node, default="Companion")
    return Found(f"companion object {name}", name, body=_first(node, ("class_body",)), split=True, owner="")


def _kotlin_function(node: Node) -> Found:
    name = name_of(node)
    body = _first(node, ("function_body",)) if node.has_error else None
    return Found(f"function {name}", name, callable=True, body=body)


def _kotlin_property(node: Node) -> Found | None:
    """A property of one name whose value, accessors or delegate reach past its declaration's line
    (``private val mirroredUrls = listOf(`` … ``)``, ``val size: Int`` / ``get() = …``, ``val x by
    lazy {`` … ``}``) is a unit, ``property <name>``, as Java fields and Swift properties are; a
    one-line property stays in the unit above, as a field does."""
    declaration = _first(node, ("variable_declaration",))
    if declaration is None or node.end_point.row <= declaration.end_point.row:
        return None
    name = text(_first(declaration, ("identifier", "simple_identifier")), "default")
    return _member("property", name)


# A line declaring something (modifier words, then the declaring keyword) where tree-sitter-kotlin
# 1.1 reads the annotations above it as an expression's
_KOTLIN_DECLARING = re.compile(rb"[ \t]*(?:[a-z]+[ \t]+)*(?:class|interface|object|fun|val|var|typealias)\b")


def _kotlin_annotated(nodes: list[Node], lines: list[bytes]) -> dict[int, bytes]:
    """The annotation lines above a declaration that tree-sitter-kotlin 1.1 read as an annotated
    expression, without an error (after a declaration and a comment, ``@Suppress("x")`` /
    ``@InternalCoroutinesApi`` / ``public actual open class LockFreeLinkedListNode {``: kotlinx's
    250-line class was part of the ``typealias`` above it), each respelled as a line comment
    (``@S`` → ``//``), so the declaration parses as one with its annotations as comments attached
    above it."""
    out: dict[int, bytes] = {}
    for node in nodes:
        if node.type != "annotated_expression" or node.end_point.row == node.start_point.row:
            continue
        rows: list[int] = []
        while node.type == "annotated_expression" and len(node.named_children) == 2 \
                and node.named_children[0].type == "annotation":
            annotation, node = node.named_children
            first, last = annotation.start_point.row, annotation.end_point.row
            if annotation.end_point.column != len(lines[last].rstrip()) or node.start_point.row <= last:
                break  # an annotation sharing its line with code: left as it is
            rows.extend(range(first, last + 1))
        else:
            if rows and _KOTLIN_DECLARING.match(lines[node.start_point.row]):
                for row in rows:
                    line = lines[row]
                    at = len(line) - len(line.lstrip())
                    out[row] = line[:at] + (b"//" if len(line.rstrip()) - at >= 2 else b" ") + line[at + 2:]
    return out


_KOTLIN: dict[str, Describe] = {
    "class_declaration": _kotlin_class,
    "property_declaration": _kotlin_property,
    "object_declaration": _kotlin_object,
    "companion_object": _kotlin_companion,
    "function_declaration": _kotlin_function,
    "secondary_constructor": lambda node: Found("function constructor", "constructor", callable=True),
    "type_alias": _leaf("type", "type"),
}


def _scala_extension(node: Node) -> Found:
    params = node.child_by_field_name("parameters")
    parameter = _first(params, ("parameter",)) if params is not None else None
    owner = base_type_name(parameter.child_by_field_name("type")) if parameter is not None else "default"
    return Found(f"extension {owner}", owner, body=node.child_by_field_name("body"), split=True)


def _scala_given(node: Node) -> Found:
    name = name_of(node, default="") or one_line(name_of(node, "return_type", "given"))
    return Found(f"given {name}", name)


def _scala_value(node: Node) -> Found | None:
    """``val freqs = Map(`` … ``)`` or ``lazy val x: Int = {`` … ``}`` of one name over several lines is
    a unit of its own, ``val <name>`` (``val Owner.name`` in an object or class), as a Java field
    or a Kotlin property is; a one-line one stays in the unit above."""
    pattern = node.child_by_field_name("pattern")
    value = node.child_by_field_name("value")
    if pattern is None or pattern.type != "identifier" or value is None or not spans_lines(value):
        return None
    word = "var" if node.type == "var_definition" else "val"
    name = text(pattern)
    return _member(word, name)


def _scala_package_block(node: Node) -> list[Node]:
    """The definitions of a ``package p { … }`` block, looked into as the file's own (Scala's
    ``collection/parallel/package.scala`` holds ``package parallel { object
    ParallelCollectionImplicits … }``, 180 lines that joined the method above); a ``package p``
    line holds none."""
    body = node.child_by_field_name("body")
    return body.named_children if body is not None else []


_SCALA: dict[str, Describe] = {
    "val_definition": _scala_value,
    "var_definition": _scala_value,
    "class_definition": _container("class"),
    "trait_definition": _container("trait"),
    "object_definition": _container("object"),
    "enum_definition": _container("enum"),
    "package_object": _container("package object"),
    "function_definition": _function(),
    "function_declaration": _function(),
    "type_definition": _leaf("type"),
    "given_definition": _scala_given,
    "extension_definition": _scala_extension,
}


def _swift_class(node: Node) -> Found:
    kind = text(node.child_by_field_name("declaration_kind"), "class")
    name_node = node.child_by_field_name("name")
    name = base_type_name(name_node) if kind == "extension" else text(name_node, "default")
    return Found(f"{kind} {name}", name, body=node.child_by_field_name("body"), split=True)


def _swift_property(node: Node) -> Found | None:
    """A property with code in it (``var x: T { get {...} set {...} }``, ``var y: T { expr }``, or
    ``willSet`` / ``didSet`` observers), like a C# property, or one name whose value spans lines
    (``lazy var moduleRegistry: ModuleRegistry = {`` ... ``}()``, a lookup table), like a Java
    field; a one-line stored property (``let x = 1``) is a field and stays in the unit above it."""
    if node.child_by_field_name("computed_value") is None and _first(node, ("willset_didset_block",)) is None:
        values = node.children_by_field_name("value")
        if len(node.children_by_field_name("name")) != 1 or len(values) != 1 or not spans_lines(values[0]):
            return None
    pattern = node.child_by_field_name("name")
    name_node = pattern.child_by_field_name("bound_identifier") if pattern is not None else None
    name = text(name_node if name_node is not None else pattern, "default")
    return _member("property", name)


_SWIFT: dict[str, Describe] = {
    "class_declaration": _swift_class,
    "property_declaration": _swift_property,
    "protocol_declaration": _container("protocol"),
    "function_declaration": _function(),
    "protocol_function_declaration": _function(),
    "init_declaration": lambda node: Found("function init", "init", callable=True),
    "deinit_declaration": lambda node: Found("function deinit", "deinit", callable=True),
    "subscript_declaration": lambda node: Found("function subscript", "subscript", callable=True),
    "typealias_declaration": _leaf("typealias"),
}


# ---------------------------------------------------------------- C, C++, C#

_DECLARATOR_WRAPPERS = frozenset({
    "pointer_declarator", "reference_declarator", "function_declarator", "parenthesized_declarator",
    "attributed_declarator", "array_declarator",
})


def _c_declarator_name(node: Node | None) -> Node | None:
    """The innermost name node of a C/C++ declarator (``**f(...)`` → ``f``)."""
    for _ in range(16):
        if node is None or node.type not in _DECLARATOR_WRAPPERS:
            return node
        inner = node.child_by_field_name("declarator")
        if inner is None:  # e.g. a reference_declarator keeps its target as a plain child
            inner = next((c for c in node.named_children if c.type not in ("parameter_list", "type_qualifier")), None)
        node = inner
    return node


_C_NAMES = frozenset({
    "identifier", "field_identifier", "qualified_identifier", "destructor_name", "operator_name",
    "template_function", "operator_cast",
})


def _c_function(node: Node) -> Found | None:
    declarator = node.child_by_field_name("declarator")
    name_node = _c_declarator_name(declarator)
    specifier = node.child_by_field_name("type")
    if specifier is not None and specifier.type in _C_RECORDS and specifier.child_by_field_name("body") is not None:
        # ``class X { ... <broken> ... }`` glued to what follows: the class is the definition
        return _C_RECORDS[specifier.type](specifier)
    if name_node is not None and name_node.type == "identifier" and name_node.text == b"namespace":
        # ``SOME_MACRO namespace x {``: a macro before ``namespace`` makes the namespace parse as
        # a function named "namespace"; its body still holds the real definitions.
        error = _first(node, ("ERROR",))
        name = text(error, "(anonymous)").strip() if error is not None else "(anonymous)"
        return Found(f"namespace {name}", name, body=node.child_by_field_name("body"), split=True,
                     members_word="function")
    if name_node is None or name_node.type not in _C_NAMES:
        return None  # a declarator error recovery made up; not worth a title
    if name_node.type == "template_function":
        name_node = name_node.child_by_field_name("name") or name_node
    if name_node.type == "qualified_identifier":
        scope = name_node.child_by_field_name("scope")
        name = text(name_node.child_by_field_name("name"), text(name_node))
        owner = base_type_name(scope)
        if scope is not None and owner.isidentifier() and owner not in ("template", "typename"):
            return Found(f"method {owner}.{name}", name, callable=True)
        return Found(f"function {name}", name, callable=True)
    name = text(name_node)
    return Found(f"function {name}", name, callable=True)


def _c_record(word: str) -> Describe:
    def describe(node: Node) -> Found | None:
        body = node.child_by_field_name("body")
        if body is None:
            return None  # a use of the type, not its definition
        name_node = node.child_by_field_name("name")
        if name_node is not None and name_node.type == "template_type":  # a specialisation
            name_node = name_node.child_by_field_name("name") or name_node
        name = text(name_node, "(anonymous)")
        if word == "enum":
            return Found(f"enum {name}", name)
        return Found(f"{word} {name}", name, body=body, split=True, indented=True)
    return describe


_C_RECORDS: dict[str, Describe] = {
    "struct_specifier": _c_record("struct"),
    "union_specifier": _c_record("union"),
    "enum_specifier": _c_record("enum"),
    "class_specifier": _c_record("class"),
}


def _c_typedef(node: Node) -> Found | None:
    """``typedef struct {...} name;`` is the definition of ``struct name``."""
    specifier = node.child_by_field_name("type")
    if specifier is None or specifier.type not in _C_RECORDS or specifier.child_by_field_name("body") is None:
        return None
    found = _C_RECORDS[specifier.type](specifier)
    declarator = _c_declarator_name(node.child_by_field_name("declarator"))
    if found is None or declarator is None or specifier.child_by_field_name("name") is not None:
        return found
    name = text(declarator)
    word = found.title.split(" ", 1)[0]
    return Found(f"{word} {name}", name, body=found.body, split=found.split)


def _c_declaration(node: Node) -> Found | None:
    """``struct x {...} var;`` or ``class API x {...};`` define the record they spell out; one
    variable whose initializer spans lines (libuv's ``static const char* const names[] = {`` …
    ``};``, a lookup table) is a unit of its own, ``variable <name>``, as a Go value is: it was the
    tail of the function above it. A one-line one stays in the unit above."""
    specifier = node.child_by_field_name("type")
    if specifier is not None and specifier.type in _C_RECORDS:
        return _C_RECORDS[specifier.type](specifier)
    declarators = node.children_by_field_name("declarator")
    # (at a line's start only: a local variable of a function whose head error recovery lost is
    # a sibling of the file's declarations too, but indented; and no class field)
    if node.type != "declaration" or node.start_point.column or len(declarators) != 1 \
            or declarators[0].type != "init_declarator":
        return None
    value = declarators[0].child_by_field_name("value")
    name_node = _c_declarator_name(declarators[0].child_by_field_name("declarator"))
    if value is None or not spans_lines(value) or name_node is None or name_node.type not in _C_NAMES:
        return None
    name = text(name_node)
    return _member("variable", name)


def _c_macro(node: Node) -> Found | None:
    """A ``#define`` whose body spans lines (``#define EXC_IF_CONN_CLOSED(self) if (...) { \\``,
    an X-macro table) is code of its own, ``macro <NAME>``: it was titled for the record or
    function above it; a one-line one stays in the unit above."""
    value = node.child_by_field_name("value")  # (the node itself ends on the next line)
    if value is None or not spans_lines(value):
        return None
    name = name_of(node)
    return Found(f"macro {name}", name)


def _c_orphan_body(items: list[Node], index: int) -> tuple[Found, int] | None:
    """``MACRO(x)`` without a semicolon before ``static int f(int a) {`` makes the head of ``f``
    an error and its body a lone block: a block right after a function declarator is ``f``."""
    node = items[index]
    if node.type != "compound_statement" or index == 0 or items[index - 1].type != "function_declarator":
        return None
    declarator = items[index - 1]
    name_node = _c_declarator_name(declarator)
    if name_node is None or name_node.type not in _C_NAMES:
        return None
    first = index - 1
    row = declarator.start_point.row
    while first > 0 and items[first - 1].start_point.row == row and items[first - 1].end_point.row == row:
        first -= 1  # ``static int`` before the declarator, on its line
    name = text(name_node)
    return Found(f"function {name}", name, callable=True, body=node), first


def _cpp_template(node: Node) -> Found | None:
    for child in reversed(node.named_children):
        handler = _CPP.get(child.type)
        if handler is not None:
            return handler(child)
    return None


def _cpp_namespace(node: Node) -> Found:
    name = name_of(node, default="(anonymous)")
    return Found(f"namespace {name}", name, body=node.child_by_field_name("body"), split=True,
                 members_word="function")


def _linkage_children(node: Node) -> list[Node]:
    body = node.child_by_field_name("body")
    if body is None:
        return []
    return body.named_children if body.type == "declaration_list" else [body]


_C: dict[str, Describe] = {
    "function_definition": _c_function,
    "type_definition": _c_typedef,
    "declaration": _c_declaration,
    "preproc_function_def": _c_macro,
    "preproc_def": _c_macro,
    **_C_RECORDS,
}
_CPP: dict[str, Describe] = {
    **_C,
    "field_declaration": _c_declaration,
    "namespace_definition": _cpp_namespace,
    "template_declaration": _cpp_template,
}
_C_TRANSPARENT: dict[str, Callable[[Node], list[Node]]] = {
    "preproc_if": _named, "preproc_ifdef": _named, "preproc_else": _named, "preproc_elif": _named,
    "preproc_elifdef": _named, "linkage_specification": _linkage_children,
}

#: A header (``.h``) that shows C++ syntax is parsed as C++, any other as C (see ``code.py``).
CPP_SYNTAX = re.compile(
    r"\bnamespace\s+[\w:]*\s*\{|\btemplate\s*<|\bclass\s+\w+[^;(]*\{|^\s*(?:public|private|protected)\s*:"
    r"|\bstd::|\bconstexpr\b|\bnullptr\b",
    re.MULTILINE,
)


def _cs_member(word: str, name: Callable[[Node], str]) -> Describe:
    def describe(node: Node) -> Found:
        value = name(node)
        return Found(f"{word} {value}", value, callable=True, member_word=word if word != "function" else "")
    return describe


def _cs_property(node: Node) -> Found | None:
    """A property with code in it (an accessor body or ``=> expr``); an auto-property such as
    ``int X { get; set; }`` is a field and stays in the unit above it."""
    for child in node.named_children:
        if child.type == "arrow_expression_clause":
            break
        if child.type == "accessor_list" and any(
            accessor.child_by_field_name("body") is not None
            or any(c.type in ("block", "arrow_expression_clause") for c in accessor.named_children)
            for accessor in child.named_children
        ):
            break
    else:
        return None
    name = name_of(node)
    return _member("property", name)


def _cs_operator(node: Node) -> str:
    operator = node.child_by_field_name("operator")
    if operator is not None:
        return "operator " + text(operator)
    return "operator " + name_of(node, "type", "")


_CSHARP: dict[str, Describe] = {
    "namespace_declaration": _container("namespace", "function"),
    "class_declaration": _container("class"),
    "struct_declaration": _container("struct"),
    "interface_declaration": _container("interface"),
    "record_declaration": _container("record"),
    "enum_declaration": _leaf("enum"),
    "delegate_declaration": _leaf("delegate"),
    "method_declaration": _cs_member("function", name_of),
    "constructor_declaration": _cs_member("function", name_of),
    "destructor_declaration": _cs_member("function", lambda node: "~" + name_of(node)),
    "operator_declaration": _cs_member("function", _cs_operator),
    "conversion_operator_declaration": _cs_member("function", _cs_operator),
    "indexer_declaration": _cs_member("function", lambda node: "this"),
    "property_declaration": _cs_property,
    "field_declaration": lambda node: _one_value(node, "field", "variable_declarator", lambda d: d.named_children[-1]),
}


# ---------------------------------------------------------------- Ruby, PHP, Elixir


def _ruby_singleton_method(node: Node) -> Found:
    name = name_of(node)
    receiver = name_of(node, "object", "self")
    return Found(f"function {receiver}.{name}", name, callable=True)


_RUBY_BLOCKS = {  # DSL calls with a ``do`` block that name a unit: Rake, RSpec, minitest
    "namespace": True, "describe": True, "context": True,  # True: a container
    "task": False, "it": False, "test": False, "specify": False,
}


def _ruby_label(arguments: Node | None) -> str:
    """``clear`` for ``task clear: :env``, ``log`` for ``:log``, ``"starts empty"`` as written."""
    first = arguments.named_children[0] if arguments is not None and arguments.named_children else None
    if first is None:
        return ""
    if first.type == "pair":
        first = first.child_by_field_name("key") or first
    label = text(first)
    if first.type in ("simple_symbol", "hash_key_symbol"):
        label = label.lstrip(":").rstrip(":")
    return one_line(label, 60)


def _ruby_call(node: Node) -> Found | None:
    method = node.child_by_field_name("method")
    block = node.child_by_field_name("block")
    receiver = node.child_by_field_name("receiver")  # only ``RSpec.describe`` has one
    if method is None or block is None or block.type != "do_block":
        return None
    if receiver is not None and receiver.text != b"RSpec":
        return None
    word = text(method)
    if word not in _RUBY_BLOCKS:
        return None
    label = _ruby_label(node.child_by_field_name("arguments"))
    if _RUBY_BLOCKS[word]:
        return Found(f"{word} {label}".rstrip(), label, body=block.child_by_field_name("body"), split=True, owner="")
    return Found(f"{word} {label}".rstrip(), label)


def _ruby_attached(node: Node) -> bool:
    """A Rake ``desc "..."`` line directly above a ``task`` belongs to it."""
    if node.type != "call" or node.child_by_field_name("block") is not None:
        return False
    method = node.child_by_field_name("method")
    return method is not None and method.text == b"desc" and node.child_by_field_name("receiver") is None


def _ruby_namespace(word: str) -> Describe:
    """``module Rails`` whose body is only ``module Command`` whose body is only ``class Routes``
    is how Ruby spells the class ``Rails::Command::Routes``: titled so (members ``method
    Routes.x``), not by the outer namespace every file of a library opens with."""
    plain = _container(word)

    def describe(node: Node) -> Found | None:
        body = node.child_by_field_name("body")
        inner = body.named_children if body is not None else []
        if len(inner) != 1 or inner[0].type not in ("class", "module"):
            return plain(node)
        found = _RUBY[inner[0].type](inner[0])
        if found is None:
            return plain(node)
        kind, _, qualified = found.title.partition(" ")
        return found._replace(title=f"{kind} {name_of(node)}::{qualified}")
    return describe


def _ruby_constant(node: Node) -> Found | None:
    """A constant whose value spans lines (``MODULES = [`` ... ``]`` in ``ActionController::Base``)
    is a unit of its own, ``constant Base.MODULES``, as in JavaScript; one-line ones stay put."""
    left = node.child_by_field_name("left")
    if left is None or left.type != "constant" or not spans_lines(node):
        return None
    name = text(left)
    return _member("constant", name)


_RUBY: dict[str, Describe] = {
    "assignment": _ruby_constant,
    "call": _ruby_call,
    "class": _ruby_namespace("class"),
    "module": _ruby_namespace("module"),
    "method": _function(),
    "singleton_method": _ruby_singleton_method,
    "singleton_class": lambda node: Found("class << self", body=node.child_by_field_name("body"), split=True,
                                          owner=""),
}

def _one_value(node: Node, word: str, element: str, value_of: Callable[[Node], Node | None]) -> Found | None:
    """A declaration of one ``element`` whose value (``value_of`` the element) spans lines is a
    member of its own, ``<word> Owner.name``, as a Java field is (C#'s ``private static readonly
    Dictionary<string, int> Map = new … {`` … ``};``, PHP's ``private const MAP = [`` … ``];`` and
    ``protected array $levels = [`` … ``];``): it was the tail of the member above it."""
    elements = [child for child in node.named_children if child.type == element]
    if not elements and node.named_children:  # (C#: inside the variable_declaration)
        elements = [c for c in node.named_children[-1].named_children if c.type == element]
    if len(elements) != 1:
        return None
    value = value_of(elements[0])
    if value is None or value is elements[0].named_children[0] or not spans_lines(value):
        return None
    name = text(elements[0].child_by_field_name("name") or elements[0].named_children[0]).lstrip("$")
    return _member(word, name)


_PHP_GUARDED = ("function_definition", "class_declaration", "interface_declaration", "trait_declaration",
                "enum_declaration")


def _php_guarded(node: Node) -> Found | None:
    """``if (! function_exists('collect')) { function collect($value) { … } }``: the one definition
    a guard holds is the guard's unit, titled for it (Laravel's ``helpers.php`` defines its global
    helpers so, WordPress plugins their classes behind ``class_exists``); they were ``module``
    windows. A guard with an ``else``, or holding other statements, stays code."""
    body = node.child_by_field_name("body")
    if body is None or node.child_by_field_name("alternative") is not None:
        return None
    inside = [child for child in body.named_children if child.type not in COMMENTS]
    if len(inside) != 1 or inside[0].type not in _PHP_GUARDED:
        return None
    return _PHP[inside[0].type](inside[0])


_PHP: dict[str, Describe] = {
    "if_statement": _php_guarded,
    "const_declaration": lambda node: _one_value(node, "const", "const_element", lambda e: e.named_children[-1]),
    "property_declaration": lambda node: _one_value(node, "property", "property_element",
                                                    lambda e: e.child_by_field_name("default_value")),
    "namespace_definition": _container("namespace", "function", leaf_without_body=True),
    "class_declaration": _container("class"),
    "interface_declaration": _container("interface"),
    "trait_declaration": _container("trait"),
    "enum_declaration": _container("enum"),
    "function_definition": _function(),
    "method_declaration": _function(),
}

_ELIXIR_MODULES = {"defmodule": "module", "defprotocol": "protocol", "defimpl": "impl"}
_ELIXIR_FUNCTIONS = {
    "def": "function", "defp": "function", "defdelegate": "function", "defguard": "function",
    "defguardp": "function", "defn": "function", "defnp": "function", "defmacro": "macro", "defmacrop": "macro",
}
_ELIXIR_DOCS = frozenset({b"doc", b"spec", b"impl", b"deprecated", b"decorate", b"dialyzer"})


def _elixir_head(call: Node) -> Node | None:
    arguments = _first(call, ("arguments",))
    return arguments.named_children[0] if arguments is not None and arguments.named_children else None


def _elixir_function_name(head: Node | None) -> str:
    for _ in range(8):
        if head is None:
            return "default"
        if head.type == "binary_operator":  # ``def f(x) when x > 0``
            head = head.child_by_field_name("left")
        elif head.type == "call":
            return text(head.child_by_field_name("target"), "default")
        else:
            return text(head)
    return "default"


def _elixir_call(node: Node) -> Found | None:
    target = node.child_by_field_name("target")
    if target is None or target.type != "identifier":
        return None
    keyword = text(target)
    body = _first(node, ("do_block",))
    if keyword in _ELIXIR_MODULES:
        name = one_line(text(_elixir_head(node), "default"))
        return Found(f"{_ELIXIR_MODULES[keyword]} {name}", name, body=body, split=True, members_word="function")
    if keyword in _ELIXIR_FUNCTIONS:
        name = _elixir_function_name(_elixir_head(node))
        word = _ELIXIR_FUNCTIONS[keyword]
        return Found(f"{word} {name}", name, callable=True, body=body, member_word="macro" if word == "macro" else "")
    if keyword in ("if", "unless") and body is not None:
        # ``if Code.ensure_loaded?(Jason) do defmodule Phoenix.JSON do … end end``: the one module or
        # function a guard holds is the guard's unit, titled for it (as PHP's ``_php_guarded``); a
        # guard with an ``else`` or other code stays code
        inside = [child for child in body.named_children if child.type not in COMMENTS]
        if len(inside) == 1 and inside[0].type == "call":
            found = _elixir_call(inside[0])
            if found is not None and found.body is not None and not found.title.startswith(("describe ", "test ")):
                return found
        return None
    if keyword in ("describe", "test") and body is not None:  # ExUnit
        label = one_line(text(_elixir_head(node), '""'))
        if keyword == "describe":
            return Found(f"describe {label}", label, body=body, split=True, owner="")
        return Found(f"test {label}", label)
    return None


#: module attributes Elixir gives a meaning: documentation, types, specs, callbacks, compiler
#: hooks; they stay where they are (``@moduledoc`` with its module, ``@doc`` with its function)
_ELIXIR_RESERVED = _ELIXIR_DOCS | frozenset({
    b"moduledoc", b"typedoc", b"type", b"typep", b"opaque", b"callback", b"macrocallback",
    b"optional_callbacks", b"behaviour", b"derive", b"compile", b"enforce_keys", b"external_resource",
    b"on_load", b"on_definition", b"before_compile", b"after_compile", b"after_verify", b"vsn", b"file"})


def _elixir_attribute(node: Node) -> Found | None:
    """A module attribute of the module's own whose value spans lines (``@levels %{`` … ``}``,
    ``@default_opts [`` … ``]``) is a member of its own, ``attribute Owner.levels``, as a Java
    field is: it was the tail of the function above it. The attributes Elixir gives a meaning
    (:data:`_ELIXIR_RESERVED`) and one-line values stay where they are."""
    operand = node.child_by_field_name("operand")
    if text(node.child_by_field_name("operator")) != "@" or operand is None or operand.type != "call" \
            or not spans_lines(operand):
        return None
    target = operand.child_by_field_name("target")
    if target is None or target.type != "identifier" or target.text in _ELIXIR_RESERVED:
        return None
    name = text(target)
    return _member("attribute", name)


def _elixir_attached(node: Node) -> bool:
    """``@doc``, ``@spec``, ``@impl`` ... directly above a ``def`` belong to it."""
    if node.type != "unary_operator":
        return False
    operand = node.child_by_field_name("operand")
    target = operand.child_by_field_name("target") if operand is not None and operand.type == "call" else operand
    return target is not None and target.text in _ELIXIR_DOCS


# ---------------------------------------------------------------- Haskell, Lua, Zig, Bash


def _haskell_instance(node: Node) -> Found:
    cls = name_of(node)
    patterns = node.child_by_field_name("patterns")
    owner = one_line(text(patterns, cls))
    return Found(f"instance {cls} {owner}".strip(), owner, body=node.child_by_field_name("declarations"),
                 split=True)


def _haskell_function(node: Node) -> Found | None:
    name_node = node.child_by_field_name("name")
    if name_node is None:
        return None  # a pattern binding such as ``(a, b) = ...``
    name = text(name_node)
    return Found(f"function {name}", name, callable=True)


def _haskell_pattern(node: Node) -> Found:
    """``pattern Foo`` for ``pattern Foo :: T`` and ``pattern Foo x <- ...`` alike, so that a
    pattern synonym's signature and its equation form one unit (as a function's do)."""
    inner = node.named_children[0] if node.named_children else None
    synonym = inner.child_by_field_name("synonym") if inner is not None else None
    if synonym is not None and synonym.type in ("constructor", "apply") and text(synonym).split():
        return Found("pattern " + text(synonym).split()[0])
    return Found("pattern " + one_line(text(node).split("=", 1)[0].split("<-", 1)[0].replace("pattern", "", 1)
                                       .strip(), 60))


_HASKELL: dict[str, Describe] = {
    "data_type": _leaf("data"),
    "newtype": _leaf("newtype"),
    "type_synonym": _leaf("type"),
    "type_family": _leaf("type family"),
    "data_family": _leaf("data family"),
    "pattern_synonym": _haskell_pattern,
    "class": _container("class", field_name="name", body="declarations"),
    "instance": _haskell_instance,
    "signature": _haskell_function,
    "function": _haskell_function,
    "bind": _haskell_function,
}


def _lua_assignment(node: Node) -> Found | None:
    """``M.foo = function() ... end`` and ``local foo = function() ... end``; a value spanning lines
    (``actions.send_to_qflist = {`` ... ``}``, ``local defaults = {`` ...) is a unit of its own too,
    ``field actions.send_to_qflist`` / ``local defaults``, as in JavaScript."""
    local = node.type == "variable_declaration"
    if local:
        node = _first(node, ("assignment_statement",))
        if node is None:
            return None
    targets = _first(node, ("variable_list",))
    values = _first(node, ("expression_list",))
    if targets is None or values is None or not values.named_children or not targets.named_children:
        return None
    name = text(targets.named_children[0])
    if values.named_children[0].type == "function_definition":
        return Found(f"function {name}", name, callable=True)
    target = targets.named_children[0]
    if len(targets.named_children) != 1 or not spans_lines(node) \
            or target.type not in ("identifier", "dot_index_expression"):
        return None
    word = "local" if local else "field" if target.type == "dot_index_expression" else "variable"
    return Found(f"{word} {name}", name, callable=True)


def _lua_function(node: Node) -> Found:
    name = name_of(node)
    return Found(f"function {name}", name, callable=True)


_LUA: dict[str, Describe] = {
    "function_declaration": _lua_function,
    "variable_declaration": _lua_assignment,
    "assignment_statement": _lua_assignment,
}


def _lua_do_block(node: Node) -> list[Node]:
    """The statements of a top-level ``do … end`` block, looked into as the file's own: Lua code
    scopes a helper to the functions that use it with one (penlight's ``array2d.lua``: ``do local
    function _parse(s) … end function M.parse_range(s) … end end``), whose functions were no
    definitions and joined the unit above."""
    return [child for block in node.named_children if block.type == "block" for child in block.named_children]

_ZIG_CONTAINERS = {
    "struct_declaration": "struct", "enum_declaration": "enum", "union_declaration": "union",
    "opaque_declaration": "opaque",
}


def _zig_variable(node: Node) -> Found | None:
    """``const Foo = struct { ... };`` defines the container ``struct Foo``; any other value over
    several lines (``const names = [_][]const u8{`` … ``};``) is a unit of its own, ``const names``,
    as a Go value is: it was the tail of the function above it."""
    name = None
    for child in node.named_children:
        if child.type == "identifier" and name is None:
            name = text(child)
        elif child.type in _ZIG_CONTAINERS:
            name = name or "default"
            return Found(f"{_ZIG_CONTAINERS[child.type]} {name}", name, body=child, split=True)
    if name is None or not spans_lines(node) or not node.children:
        return None
    word = "var" if any(child.type == "var" for child in node.children) else "const"
    return _member(word, name)


def _zig_test(node: Node) -> Found:
    label = _first(node, ("string", "identifier"))
    return Found(f"test {one_line(text(label, ''))}".rstrip())


_ZIG: dict[str, Describe] = {
    "function_declaration": _function(),
    "variable_declaration": _zig_variable,
    "test_declaration": _zig_test,
}

_BASH: dict[str, Describe] = {"function_definition": _function()}


# ---------------------------------------------------------------- the table


def _language(name: str, module: str, extensions: tuple[str, ...], handlers: dict[str, Describe],
              attached: frozenset[str] = ATTACHED, function: str = "language", **rules: Any) -> Language:
    return Language(name, (module, function), extensions, handlers, attached, **rules)


_PREPROC = {"preproc_if": _named, "preproc_elif": _named, "preproc_else": _named}
# a library wrapped in a call (IIFE, UMD, AMD): ``_js_wrapped``, None for any other statement
_JS_TRANSPARENT = {"expression_statement": _js_wrapped}

# Conditional compilation where the grammar cannot place it: inside an expression or an initializer
# (C: libuv's ``static int mib[][2] = {`` with ``# ifdef HW_NCPUONLINE`` around one row), between a
# switch's cases (Swift: ``#if os(iOS)``), around a base list (C#: ``#if HAVE_ASYNC_DISPOSABLE``).
# tree-sitter-swift made expo's ``class AppContext`` (lines 8-944) one ERROR. A line matching one of these
# at its start is such a directive (``blanking.directive_lines``).
_SWIFT_CONDITIONALS = re.compile(rb"[ \t]*#(?:if|elseif|else|endif)\b")
_CSHARP_CONDITIONALS = re.compile(rb"[ \t]*#[ \t]*(?:if|elif|else|endif)\b")
_C_CONDITIONALS = re.compile(rb"[ \t]*#[ \t]*(?:if|ifdef|ifndef|elif|elifdef|elifndef|else|endif)\b")

#: language key -> table (``tsx`` is TypeScript parsed with the TSX grammar). Revisions (see
#: :attr:`Language.revision`; docs/architecture.md, "Chunking"): 2 for JavaScript / TypeScript
#: (class fields holding functions), Swift (computed properties), Ruby (``module A; class B``
#: titled ``class A::B``) and Haskell (pattern synonym signature and equation one unit); one more
#: for every table with containers cut at their members (all but Go, Lua and Bash), whose bare
#: headers open their first member's chunk since session 23 (``code.BARE_LINES``); 3 for C and C++
#: (session 25: the definitions error recovery swallowed into a record are cut and titled as the
#: scope around it's, ``Found.indented``). Session 26, a declaration whose value spans lines is a
#: unit of its own: 4 for JavaScript / TypeScript (``_js_variable``; and a test runner's calls are
#: the file's own code, :data:`MODULE`), 2 for Go (``_go_value``), 3 for Java (``_java_field``), 4
#: for Ruby (``_ruby_constant``) and 2 for Lua (``_lua_assignment``). Session 27: 5 for JavaScript /
#: TypeScript (a function assigned to a path is a unit, ``_js_assigned_function``; a doc comment one
#: blank line above a definition opens its unit, ``Language.doc_gap``; and in TypeScript an overload
#: signature opens its implementation's unit, ``Found.overload``); 3 for Rust (``impl … for &'a mut T``
#: titled for ``T``, not ``'a mut T``: ``base_type_name``); 4 for C and C++ (a ``#define`` spanning
#: lines is a unit, ``_c_macro``). Session 28: 4 for Swift, 3 for C#, 5 for C and C++ (a parse with
#: errors is tried again with its conditional-compilation lines blanked, ``Language.retry_blank``;
#: and in Swift a property whose value spans lines is a member, ``_swift_property``); 4 for Java (an
#: enum constant with a body is a member, ``_java_enum_constant``). Session 29: 6 for JavaScript /
#: TypeScript (a one-line declaration under a doc comment of several lines is a unit,
#: ``_documented``; and in TypeScript a parse with errors is tried again with the syntax
#: tree-sitter-typescript cannot read blanked: a call signature's type parameters opening a line,
#: variance annotations, ``export type *``; ``blanking.typescript_syntax``); 3 for Kotlin (the same
#: retry, ``blanking.kotlin_syntax``: ``suspend`` as a name, a constructor's annotations opening its
#: line, multi-dollar strings; and a property whose value spans lines is a unit,
#: ``_kotlin_property``); 4 for Rust (the items a macro invocation wraps are the file's own,
#: ``_rust_item_macros``; a ``const`` or ``static`` whose value spans lines is a unit, ``_rust_value``); 3 for Lua (a top-level ``do … end`` block is looked into, ``_lua_do_block``)
#: and for Scala (so is a ``package p { … }`` block, ``_scala_package_block``; a ``val`` whose value
#: spans lines is a unit, ``_scala_value``); 6 for C and C++, 4 for C# and 3 for PHP (a variable,
#: field, constant or property whose value spans lines is a unit, ``_c_declaration``, ``_one_value``);
#: 3 for Zig (so is a ``const`` or ``var`` of any other value, ``_zig_variable``) and for Elixir (so
#: is a module attribute of the module's own, ``_elixir_attribute``). Session 30: 4 for Kotlin
#: (annotations the grammar read as an expression's are parsed again as comments, ``Language.respell``,
#: ``_kotlin_annotated``). Session 32: 7 for JavaScript / TypeScript (a class assigned to a path,
#: ``module.exports = class Application extends Emitter {``, is a class cut at its methods,
#: ``_js_assigned_function``; so is an object literal holding methods, ``_js_methods_object``).
#: Session 34: 8 for JavaScript and 9 for TypeScript (the definitions of a library wrapped in an IIFE,
#: a UMD factory or an AMD ``define`` are the file's own, ``_js_wrapped``; before it, 8 for TypeScript:
#: ``declare global { … }`` is a namespace cut at its members, ``_js_ambient``)
#: and 4 for PHP and Elixir (a guarded definition, ``if (! function_exists('x')) { function x() … }``,
#: ``if Code.ensure_loaded?(Jason) do defmodule … end end``, is a unit: ``_php_guarded``, ``_elixir_call``)
LANGUAGES: dict[str, Language] = {
    "javascript": _language("javascript", "tree_sitter_javascript", (".js", ".jsx", ".mjs", ".cjs"), _JS,
                            transparent=_JS_TRANSPARENT, doc_gap=True, revision=8),
    "typescript": _language("typescript", "tree_sitter_typescript", (".ts", ".mts", ".cts"), _JS,
                            function="language_typescript", transparent=_JS_TRANSPARENT, doc_gap=True,
                            retry_blank=typescript_syntax, revision=9),
    "tsx": _language("typescript", "tree_sitter_typescript", (".tsx",), _JS, function="language_tsx",
                     transparent=_JS_TRANSPARENT, doc_gap=True, retry_blank=typescript_syntax, revision=9),
    "go": _language("go", "tree_sitter_go", (".go",), _GO, revision=2),
    "java": _language("java", "tree_sitter_java", (".java",), _JAVA, transparent={"enum_body_declarations": _named},
                      revision=4),
    "rust": _language("rust", "tree_sitter_rust", (".rs",), _RUST, unwrap=_rust_item_macros, revision=4),
    "kotlin": _language("kotlin", "tree_sitter_kotlin", (".kt", ".kts"), _KOTLIN, retry_blank=kotlin_syntax,
                        respell=_kotlin_annotated, revision=4),
    "scala": _language("scala", "tree_sitter_scala", (".scala", ".sc"), _SCALA,
                       transparent={"package_clause": _scala_package_block}, revision=3),
    "swift": _language("swift", "tree_sitter_swift", (".swift",), _SWIFT, ATTACHED | {"multiline_comment"},
                       retry_blank=directive_lines(_SWIFT_CONDITIONALS), revision=4),
    # ``.h`` is either C or C++: see ``code.py``
    "c": _language("c", "tree_sitter_c", (".c",), _C, transparent=_C_TRANSPARENT, recover=_c_orphan_body,
                   retry_blank=directive_lines(_C_CONDITIONALS), revision=6),
    "cpp": _language("cpp", "tree_sitter_cpp",
                     (".cc", ".cpp", ".cxx", ".c++", ".hpp", ".hh", ".hxx", ".h++", ".ipp", ".tpp"), _CPP,
                     ATTACHED | {"attribute_declaration"}, transparent=_C_TRANSPARENT, recover=_c_orphan_body,
                     retry_blank=directive_lines(_C_CONDITIONALS), revision=6),
    "csharp": _language("csharp", "tree_sitter_c_sharp", (".cs",), _CSHARP, transparent=_PREPROC,
                        retry_blank=directive_lines(_CSHARP_CONDITIONALS), revision=4),
    "ruby": _language("ruby", "tree_sitter_ruby", (".rb", ".rake", ".gemspec"), _RUBY, is_attached=_ruby_attached,
                      filenames=("Rakefile", "Gemfile"), revision=4),
    "php": _language("php", "tree_sitter_php", (".php",), _PHP, function="language_php", revision=4),
    "elixir": _language("elixir", "tree_sitter_elixir", (".ex", ".exs"),
                        {"call": _elixir_call, "unary_operator": _elixir_attribute},
                        is_attached=_elixir_attached, merge_clauses=True, revision=4),
    # ``.lhs`` (literate Haskell) is left to ``lines``: the grammar does not read bird tracks
    "haskell": _language("haskell", "tree_sitter_haskell", (".hs",), _HASKELL, ATTACHED | {"haddock", "pragma"},
                         transparent={"declarations": _named, "imports": _named}, merge_clauses=True, revision=3),
    "lua": _language("lua", "tree_sitter_lua", (".lua",), _LUA, transparent={"do_statement": _lua_do_block},
                     revision=3),
    "zig": _language("zig", "tree_sitter_zig", (".zig",), _ZIG, revision=3),
    # a script wrapped in ``{ ... }`` (so it only runs once fully downloaded) is looked into
    "bash": _language("bash", "tree_sitter_bash", (".sh", ".bash", ".zsh"), _BASH,
                      transparent={"compound_statement": _named}),
}

#: extension -> language key: a key of :data:`LANGUAGES`, ``python`` (chunked with ``ast``) or
#: ``h`` (the C-or-C++ header rule of ``code.py``)
EXTENSIONS: dict[str, str] = {
    ".py": "python", ".pyi": "python", ".h": "h",
    **{extension: key for key, spec in LANGUAGES.items() for extension in spec.extensions},
}

#: whole file names without a telling extension -> language key
FILENAMES: dict[str, str] = {filename: key for key, spec in LANGUAGES.items() for filename in spec.filenames}

#: revision of the Python chunker (``ast``, in :mod:`ragit.ingest.code`): 2 since session 29, an
#: assignment of one name whose value spans lines is a unit (``code._python_value``); 3 since
#: session 34, the definitions inside a top-level ``if``/``try``/``with`` are units (``code._python_block``);
#: 4 since session 37, ``ast`` reads the file's skeleton (:mod:`ragit.ingest.pyskeleton`), so a
#: file whose only syntax errors lie inside function bodies (Python 2 ``print``, newer syntax
#: than the running Python's) is cut at its definitions instead of in line windows
PYTHON_REVISION = 4
PYTHON_CHUNKER = chunker_name("python", PYTHON_REVISION)

#: chunker names of every earlier revision of a table: a store record chunked by one of them
#: predates the table's revision, so ingest chunks that blob again (``pipeline.superseded``)
SUPERSEDED: frozenset[str] = frozenset(
    [chunker_name(spec.name, r) for spec in LANGUAGES.values() for r in range(1, spec.revision)]
    + [chunker_name("python", r) for r in range(1, PYTHON_REVISION)])
