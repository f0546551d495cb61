"""Definition kinds of the tree-sitter chunker added for the weakest code-search languages (issue
12) and since: Swift computed properties, TypeScript / JavaScript class fields and top-level
declarations, a test file's tests, TypeScript overloads, JavaScript functions assigned to a path
and JSDoc a blank line above, C macros, Go values, Java fields, Ruby constants, Lua values, Ruby
namespaces spelled as nested modules, Haskell pattern synonyms. Every input here is written for
these tests."""

from __future__ import annotations

from chunk_helpers import chunk, padding, summary


# ---- Swift: a property with code in it is a member; a stored property is not

SWIFT_REQUEST = """import Foundation

/// An HTTP request.
public final class Request: Sendable {
    public let id: String
{fields}
    /// The HTTP method.
    public var method: HTTPMethod {
        get { box.withLockedValue { $0.method } }
        set { box.withLockedValue { $0.method = newValue } }
    }

    public var isSecure: Bool { url.scheme == "https" }

    public var body: Body = .empty {
        didSet { headers.contentLength = body.count }
    }

    init(method: HTTPMethod) {
        self.id = UUID().uuidString
    }
}
"""


def test_swift_computed_properties_and_observers_are_members():
    text = SWIFT_REQUEST.replace("{fields}", padding("let field{i}: Int = {i}", 75, "    "))
    chunker, chunks = chunk("Sources/App/Request.swift", text)
    assert chunker == "code:swift/4"
    assert summary(chunks) == [
        ("module", 1, 1), ("class Request", 3, 80), ("property Request.method", 82, 86),
        ("property Request.isSecure", 88, 88), ("property Request.body", 90, 92), ("method Request.init", 94, 97),
    ]
    assert chunks[2].text.startswith("    /// The HTTP method.\n    public var method: HTTPMethod {")


def test_small_swift_type_keeps_its_properties():
    _, chunks = chunk("Request.swift", SWIFT_REQUEST.replace("{fields}\n", ""))
    assert summary(chunks) == [("module", 1, 1), ("class Request", 3, 21)]


SWIFT_TABLES = """/// Caches the formatted date.
final class DateCache {
{fields}
    /// The registry, made on first use.
    public private(set) lazy var registry: Registry = {
        isInitialized = true
        return Registry(owner: self)
    }()

    private var isInitialized: Bool = false

    func update() {
        timestamp = now()
    }
}

let dayNames = [
    "Mon", "Tue", "Wed",
]

let one = 1, two = [
    2]
"""


def test_swift_properties_whose_value_spans_lines_are_members():
    # a lazy property's closure or a lookup table was the tail of the member above it
    # (vapor's `fileExtensionMediaTypeMapping` in `method HTTPMediaType.formData (lines …)`); a
    # one-line stored property stays where it is, and so does a declaration of two names
    _, chunks = chunk("DateCache.swift", SWIFT_TABLES.replace("{fields}", padding("let field{i} = {i}", 75, "    ")))
    assert summary(chunks) == [
        ("class DateCache", 1, 77), ("property DateCache.registry", 79, 85), ("method DateCache.update", 87, 90),
        ("property dayNames", 92, 97)]
    assert chunks[1].text.endswith("}()\n\n    private var isInitialized: Bool = false")


# ---- TypeScript / JavaScript: class fields holding code are members

TS_PROJECT = """export class TestProject {
  private cache = new Map<string, string>()
{fields}
  get name(): string {
    return this.config.name
  }

  set name(value: string) {
    this.config.name = value
  }

  /** Starts the browser server once. */
  initBrowser = deduped(async () => {
    await this.parent?.initBrowser()
  })

  onRerun = (files: string[]) => {
    this.files = files
  }

  close(): Promise<void> {
    return this.server.close()
  }
}
"""


def test_class_fields_holding_functions_or_spanning_lines_are_members():
    text = TS_PROJECT.replace("{fields}", padding("private slot{i} = {i}", 75, "  "))
    _, chunks = chunk("src/project.ts", text)
    assert summary(chunks) == [
        ("class TestProject", 1, 77), ("method TestProject.name", 79, 81), ("method TestProject.name", 83, 85),
        ("property TestProject.initBrowser", 87, 90), ("method TestProject.onRerun", 92, 94),
        ("method TestProject.close", 96, 99),
    ]
    assert chunks[3].text.startswith("  /** Starts the browser server once. */\n  initBrowser = deduped(")
    # JavaScript reads its fields (``field_definition``) the same way
    _, js = chunk("src/project.js", text.replace(": string", "").replace(": Promise<void>", "")
                  .replace("<string, string>", "").replace("(files: string[])", "(files)").replace("private ", ""))
    assert [t for t, _, _ in summary(js)] == [
        "class TestProject", "method TestProject.name", "method TestProject.name", "property TestProject.initBrowser",
        "method TestProject.onRerun", "method TestProject.close",
    ]


# ---- TypeScript / JavaScript: a top-level declaration whose value spans lines is its own unit

TS_SLICE = """import { createAsyncThunk, createSlice } from '@reduxjs/toolkit'

export interface CounterState {
  value: number
  status: 'idle' | 'loading' | 'failed'
}

const initialState: CounterState = {
  value: 0,
  status: 'idle',
}

export const incrementAsync = createAsyncThunk('counter/fetchCount', async (amount: number) => {
  const response = await fetchCount(amount)
  return response.data
})

/** The counter's reducers. */
export const counterSlice = createSlice({
  name: 'counter',
  initialState,
  reducers: {
    increment: (state) => {
      state.value += 1
    },
  },
})

export const { increment } = counterSlice.actions
export const selectCount = (state: RootState) => state.counter.value

export const email: RegExp =
  /^[A-Za-z0-9_'+-]+@[A-Za-z0-9-]+\\.[A-Za-z]{2,}$/;
export const cuid: RegExp = /^[cC][0-9a-z]{6,}$/;

let {
  a,
  b,
} = load()

export namespace Limits {
  export const defaults = {
    size: 1,
  }
}
"""


def test_top_level_declarations_spanning_lines_are_units_of_their_own():
    _, chunks = chunk("src/counterSlice.ts", TS_SLICE)
    assert summary(chunks) == [
        ("module", 1, 1), ("interface CounterState", 3, 6), ("const initialState", 8, 11),
        ("const incrementAsync", 13, 16), ("const counterSlice", 18, 29), ("function selectCount", 30, 30),
        ("const email", 32, 39), ("namespace Limits", 41, 45),
    ]
    # its comment opens it; what follows on single lines stays in its unit, as a destructuring does
    # (no name to title it with)
    assert chunks[4].text.startswith("/** The counter's reducers. */\nexport const counterSlice")
    assert chunks[4].text.endswith("export const { increment } = counterSlice.actions")
    assert "export const cuid" in chunks[6].text and chunks[6].text.endswith("} = load()")
    # split at its members, the namespace's declaration is titled for it, with the word written
    _, split = chunk("src/limits.ts", TS_SLICE.split("export namespace")[0] + "export namespace Limits {\n"
                     + padding("  export const slot{i} = {i}", 85, "") + "  export let defaults = {\n    size: 1,\n  }\n}\n")
    assert summary(split)[-1] == ("let Limits.defaults", 127, 130)
    # JavaScript (``var`` too) reads them the same way
    _, js = chunk("src/store.js", "var store = configureStore({\n  reducer: {},\n})\n\nfunction f() {\n  return store\n}\n")
    assert summary(js) == [("var store", 1, 3), ("function f", 5, 7)]


TS_TEST_FILE = """import { describe, expect, it, test } from 'vitest'

const fixture = {
  size: 1,
}

function helper(n: number) {
  return n + 1
}

describe('helper', () => {
  it.each([1, 2])('adds one to %i', (n) => {
    expect(helper(n)).toBe(n + 1)
  })
})

test.concurrent(`twice`, async () => {
  expect(helper(helper(0))).toBe(2)
})

it.todo('handles negatives')
register('plugin', () => {
  return fixture
})
"""


def test_a_test_files_tests_are_its_own_code_not_the_definition_above_them():
    _, chunks = chunk("test/helper.test.ts", TS_TEST_FILE)
    # ``describe`` and ``test`` calls (a name and a function, any ``.each``/``.concurrent`` form)
    # open a ``module`` unit, as the file's head is, and the ones that follow join it; a call that
    # is not a test runner's (``register``) or has no function (``it.todo``) stays where it is
    assert summary(chunks) == [
        ("module", 1, 1), ("const fixture", 3, 5), ("function helper", 7, 9), ("module", 11, 24),
    ]
    # a test file that starts with its tests is one ``module`` unit from its first line
    _, bare = chunk("test/bare.test.js", "describe('a', () => {\n  it('b', () => {})\n})\n\ntest('c', () => {})\n")
    assert summary(bare) == [("module", 1, 5)]


TS_OVERLOADS = """import { Observable } from './Observable'

export function firstValueFrom<T, D>(source: Observable<T>, config: Config<D>): Promise<T | D>;
export function firstValueFrom<T>(source: Observable<T>): Promise<T>;

/** Resolves with the first value. */
export async function firstValueFrom<T, D>(source: Observable<T>, config?: Config<D>) {
  return new Promise((resolve) => source.subscribe(resolve))
}

export function lastValueFrom<T>(source: Observable<T>): Promise<T>;
export function other(): void {}

export class Emitter {
  private handlers = new Map()

  on(event: 'open', cb: () => void): this;
  on(event: 'close', cb: (code: number) => void): this;
  on(event: string, cb: Function): this {
    this.handlers.set(event, cb)
    return this
  }

  off(event: string): void {
    this.handlers.delete(event)
  }
}
"""


def test_typescript_overload_signatures_open_their_implementations_unit():
    _, chunks = chunk("src/firstValueFrom.ts", TS_OVERLOADS)
    # one-line signatures were units of their own (``function firstValueFrom`` over line 3, another
    # over line 4): the first hit for the name held no code; now they open the implementation's
    # unit, titled as it is; a signature the next definition does not implement stays alone
    assert summary(chunks) == [
        ("module", 1, 1), ("async function firstValueFrom", 3, 9), ("function lastValueFrom", 11, 11),
        ("function other", 12, 12), ("class Emitter", 14, 27),
    ]
    # in a class split at its members, a method's overloads open its unit the same way (the
    # class's bare head and field open its first member's)
    text = TS_OVERLOADS.replace("  off(event", padding("  m{i}(): void {{}}", 80, "") + "  off(event")
    _, split = chunk("src/emitter.ts", text)
    assert [t for t in summary(split) if t[0] == "method Emitter.on"] == [("method Emitter.on", 14, 22)]


JS_ASSIGNED = """'use strict'

var res = Object.create(http.ServerResponse.prototype)

module.exports = res

/**
 * Set status `code`.
 */
res.status = function status(code) {
  this.statusCode = code
  return this
}

res.set =
res.header = function header(field, val) {
  this.setHeader(field, val)
  return this
}

res.locals = {}
res.json = async (obj) => this.send(JSON.stringify(obj))

Router.prototype.route = function route(path) {
  return new Route(path)
}

handlers[name] = function () {}
"""


def test_functions_assigned_to_a_path_are_units_of_their_own():
    _, chunks = chunk("lib/response.js", JS_ASSIGNED)
    # CommonJS code defines its functions by assignment: each is a unit titled with the path it is
    # assigned to (the first of a chain), a prototype's as a method; a value that is not a function
    # and a computed target stay in the unit above
    assert summary(chunks) == [
        ("module", 1, 5), ("function res.status", 7, 13), ("function res.set", 15, 21),
        ("async function res.json", 22, 22), ("method Router.route", 24, 28),
    ]
    assert chunks[4].text.endswith("handlers[name] = function () {}")


JS_ASSIGNED_CLASS = """'use strict'

const Emitter = require('events')

/**
 * Expose `Application` class.
 */
module.exports = class Application extends Emitter {
  constructor (options) {
    super()
BODY  }

  use (fn) {
    this.middleware.push(fn)
    return this
  }
}

exports.Context = class {
  get state () {
    return this._state
  }
}

module.exports.settings = {
  proxy: false
}
"""


def test_a_class_assigned_to_a_path_is_a_class_cut_at_its_methods():
    # koa's application: ``module.exports = class Application extends Emitter {`` was the file's
    # own code, cut in ``module`` windows with no method of its own (session 32)
    small = JS_ASSIGNED_CLASS.replace("BODY", "")
    name, chunks = chunk("lib/application.js", small)
    assert name == "code:javascript/8"
    assert summary(chunks) == [("module", 1, 3), ("class Application", 5, 17), ("class exports.Context", 19, 23),
                               ("module", 25, 27)]
    # through a chain of assignments too
    _, chunks = chunk("lib/application.js", small.replace("module.exports = class", "const App = module.exports = class"))
    assert summary(chunks)[1] == ("class App", 5, 17)
    big = JS_ASSIGNED_CLASS.replace("BODY", padding("this.step{i} = {i}", 70, "    "))
    _, chunks = chunk("lib/application.js", big)
    assert [t for t, _, _ in summary(chunks)] == [
        "module", "class Application", "method Application.constructor", "method Application.use",
        "class exports.Context", "module"]


JS_METHODS_OBJECT = """'use strict'

const util = require('util')

const proto = module.exports = {
  inspect () {
    return this.toJSON()
  },

  get state () {
BODY    return this._state
  },

  onerror: function (err) {
    this.app.emit('error', err, this)
  },

  'quoted': async () => 1,

  name: 'context'
}

module.exports.defaults = {
  proxy: false,
  subdomainOffset: 2
}
"""


def test_an_object_holding_methods_is_cut_at_them_when_too_long_for_one_unit():
    # koa's context, request and response are object literals of methods and accessors, declared
    # (``const proto = module.exports = {``) or assigned (``module.exports = {``): too long for one
    # unit they were windows of ``const proto`` / ``module``; now each method is a unit (session 32)
    small = JS_METHODS_OBJECT.replace("BODY", "")
    _, chunks = chunk("lib/context.js", small)
    assert summary(chunks) == [("module", 1, 3), ("const proto", 5, 21), ("module", 23, 26)]
    big = JS_METHODS_OBJECT.replace("BODY", padding("this.step{i} = {i}", 70, "    "))
    _, chunks = chunk("lib/context.js", big)
    # (the bare opening line opens the first method's chunk, as a class's does)
    assert [t for t, _, _ in summary(chunks)] == [
        "module", "method proto.inspect", "method proto.state", "method proto.onerror", "method proto.quoted",
        "module"]
    assert chunks[1].text.startswith("const proto = module.exports = {")
    assigned = big.replace("const proto = module.exports = {", "module.exports = {")
    _, chunks = chunk("lib/request.js", assigned)
    assert [t for t, _, _ in summary(chunks)][1:5] == [
        "method module.exports.inspect", "method module.exports.state", "method module.exports.onerror",
        "method module.exports.quoted"]
    # so is a default export's (a Cloudflare worker's ``export default { async fetch(…) {…} }``)
    worker = big.replace("const proto = module.exports = {", "export default {")
    _, chunks = chunk("src/worker.ts", worker)
    assert [t for t, _, _ in summary(chunks)][1:5] == [
        "method default.inspect", "method default.state", "method default.onerror", "method default.quoted"]
    # a plain name is no export: Flow's ``export type Props = {`` (read by the JavaScript grammar as
    # an assignment to ``export``) stays the file's own code, as it was
    flow = ("// @flow\nimport React from 'react'\n\nexport type Props = {\n  onClick: () => void,\n}\n\n"
            "const Link = ({ onClick }: Props) => (\n  <a onClick={onClick}>x</a>\n)\n")
    assert summary(chunk("src/Link.js", flow)[1]) == [("module", 1, 6), ("function Link", 8, 10)]
    # an object of data alone is cut in windows of its unit, as before
    data = "const settings = {\n" + padding("key{i}: {i},", 90, "  ") + "}\n"
    _, chunks = chunk("lib/settings.js", data)
    assert summary(chunks) == [("const settings (lines 1-60)", 1, 60), ("const settings (lines 51-92)", 51, 92)]


def test_a_doc_comment_one_blank_line_above_opens_the_definitions_unit():
    # express writes its JSDoc, a blank line, then the definition: the comment documents what
    # follows, not the unit above (``res.format``'s doc, naming json and html, sat in
    # ``res.contentType``'s); two blank lines, or a plain comment, still part them
    text = ("/**\n * Set the type.\n */\n\nres.type = function (t) {\n  return t\n}\n\n"
            "/**\n * Respond by the Accept header: json, html.\n */\n\nres.format = function (obj) {\n  return obj\n}\n\n"
            "/** Far away. */\n\n\nfunction far() {}\n\n// a note\n\nfunction near() {}\n")
    _, chunks = chunk("lib/response.js", text)
    assert summary(chunks) == [
        ("function res.type", 1, 7), ("function res.format", 9, 17), ("function far", 20, 22),
        ("function near", 24, 24),
    ]
    # a language without the JSDoc habit keeps the rule as written (C's doc comments sit right above)
    _, c = chunk("a.c", "int a(void) { return 1; }\n\n/** B. */\n\nint b(void) { return 2; }\n")
    assert summary(c) == [("function a", 1, 3), ("function b", 5, 5)]


C_CONNECTION = """#ifndef CONNECTION_H
#define CONNECTION_H 1

#define STATE_OFF 0

typedef struct {
    int status;
} IsolationLevel;

int conn_commit(connection *self);

#define EXC_IF_CONN_CLOSED(self) if ((self)->closed > 0) { \\
    raise("connection already closed"); \\
    return NULL; }

#define ERRNO_MAP(XX) \\
  XX(E2BIG, "argument list too long") \\
  XX(EACCES, "permission denied")

#endif
"""


def test_c_macros_spanning_lines_are_units_of_their_own():
    # a ``#define`` whose body spans lines is code (a statement macro, an X-macro table): it was
    # titled for the struct above it; one-line defines stay where they are
    for path in ("connection.c", "connection.hpp"):
        _, chunks = chunk(path, C_CONNECTION)
        assert summary(chunks) == [
            ("module", 1, 4), ("struct IsolationLevel", 6, 10), ("macro EXC_IF_CONN_CLOSED", 12, 14),
            ("macro ERRNO_MAP", 16, 20),
        ]


GO_COMMANDS = """package cmd

import "github.com/spf13/cobra"

type Kind int

const (
\tKindA Kind = iota
\tKindB
)

func execute() error {
\treturn rootCmd.Execute()
}

// rootCmd is the command run without a subcommand.
var rootCmd = &cobra.Command{
\tUse:   "app",
\tShort: "An application",
}

var verbose = false

const usageTemplate = `Usage:
  {{.UseLine}}`

var a, b = pair(
\t1)
"""


def test_go_var_and_const_spanning_lines_are_units_of_their_own():
    _, chunks = chunk("cmd/root.go", GO_COMMANDS)
    # a ``const (...)`` group stays with the type it enumerates; one name over several lines is a
    # unit (its comment opens it, a one-line ``var`` after it stays in it); two names stay put
    assert summary(chunks) == [
        ("module", 1, 3), ("type Kind", 5, 10), ("function execute", 12, 14), ("var rootCmd", 16, 22),
        ("const usageTemplate", 24, 28),
    ]
    assert chunks[3].text.startswith("// rootCmd is") and chunks[3].text.endswith("var verbose = false")


JAVA_ADAPTERS = """package com.example;

public final class TypeAdapters {
  private TypeAdapters() {
    throw new UnsupportedOperationException();
  }

{fields}
  /** Writes a class name. */
  public static final TypeAdapter<Class> CLASS =
      new TypeAdapter<Class>() {
        @Override
        public void write(JsonWriter out, Class value) {
          out.value(value.getName());
        }
      }.nullSafe();

  public static final TypeAdapterFactory CLASS_FACTORY = newFactory(Class.class, CLASS);

  private static int a, b = f(
      1);

  static void checkValidFloatingPoint(double value) {
    if (Double.isNaN(value)) {
      throw new IllegalArgumentException(value + " is not a valid double value");
    }
  }
}
"""


def test_java_fields_whose_value_spans_lines_are_members_of_their_own():
    # the class is too big for one unit, so it is cut at its members: before, the field was code
    # after the constructor and titled for it
    text = JAVA_ADAPTERS.replace("{fields}", padding("private static final int SLOT_{i} = {i};", 75, "  "))
    _, chunks = chunk("src/TypeAdapters.java", text)
    titles = summary(chunks)
    assert titles[-2:] == [("field TypeAdapters.CLASS", 84, 96), ("method TypeAdapters.checkValidFloatingPoint", 98, 103)]
    # its comment opens it; a one-line field after it stays in its unit, as a field of two names does
    field = chunks[-2].text
    assert field.startswith("  /** Writes a class name. */") and "CLASS_FACTORY" in field and field.endswith("      1);")


JAVA_STATES = """package com.example;

/** The tree builder's insertion modes. */
enum BuilderState {
{constants}
  /** Before the html element. */
  BeforeHtml {
    boolean process(Token t, Builder tb) {
      return tb.insert(t);
    }
  },
  InBody("body") {
    boolean process(Token t, Builder tb) {
      return tb.reprocess(t);
    }
  };

  abstract boolean process(Token t, Builder tb);
}
"""


def test_java_enum_constants_with_a_body_are_members():
    # an enum of such constants (jsoup's HtmlTreeBuilderState: 1,700 lines of states) was windows
    # titled for the enum; plain constants stay in the enum's own unit
    text = JAVA_STATES.replace("{constants}", padding("PLAIN_{i},", 75, "  "))
    chunker, chunks = chunk("src/BuilderState.java", text)
    assert chunker == "code:java/4"
    assert summary(chunks) == [
        ("module", 1, 1), ("enum BuilderState", 3, 79), ("constant BuilderState.BeforeHtml", 81, 86),
        ("constant BuilderState.InBody", 87, 91), ("method BuilderState.process", 93, 94)]
    assert chunks[2].text.startswith("  /** Before the html element. */\n  BeforeHtml {")


# ---- Ruby: ``module A; module B; class C`` is the class A::B::C

RUBY_COMMAND = """# frozen_string_literal: true

module Rails
  module Command
    # Prints the application's routes.
    class RoutesCommand < Base # :nodoc:
      class_option :controller, aliases: "-c"
{options}
      # Lists every route.
      def perform(*)
        require_application_and_environment!
        say inspector.format(formatter)
      end
    end
  end
end
"""


def test_ruby_nested_namespace_is_titled_with_the_qualified_class():
    _, small = chunk("lib/rails/commands/routes_command.rb", RUBY_COMMAND.replace("{options}\n", ""))
    assert summary(small) == [("module", 1, 1), ("class Rails::Command::RoutesCommand", 3, 15)]
    text = RUBY_COMMAND.replace("{options}", padding("option :o{i}", 70, "      "))
    _, chunks = chunk("lib/rails/commands/routes_command.rb", text)
    assert summary(chunks) == [
        ("module", 1, 1), ("class Rails::Command::RoutesCommand", 3, 77),
        ("method RoutesCommand.perform", 79, 86),
    ]
    assert chunks[2].text.startswith("      # Lists every route.\n      def perform(*)")


def test_ruby_comment_before_the_first_member_of_a_qualified_class_stays_with_it():
    # the grammar keeps a comment right below ``class`` outside the class body
    text = "module Rails\n  class Engine\n    # Loads the engine.\n    def load\n" + padding("x{i}", 90, "      ") \
        + "    end\n  end\nend\n"
    chunks = chunk("lib/rails/engine.rb", text)[1]
    # (``module Rails`` / ``class Engine`` is a bare header: it opens the method's first window)
    assert [t for t, _, _ in summary(chunks)][:2] == ["method Engine.load (lines 1-60)", "method Engine.load (lines 51-97)"]
    assert chunks[0].text.startswith("module Rails\n  class Engine\n    # Loads the engine.\n    def load")
    # with a header that says something, the header keeps its chunk and the comment opens the method's
    said = text.replace("  class Engine\n", "  class Engine\n" + padding("CONFIG_{i} = {i}", 4, "    ") + "\n")
    chunks = chunk("lib/rails/engine.rb", said)[1]
    assert [t for t, _, _ in summary(chunks)][:2] == ["class Rails::Engine", "method Engine.load (lines 8-67)"]
    assert chunks[1].text.startswith("    # Loads the engine.\n    def load")


def test_ruby_module_with_several_members_keeps_its_own_title():
    text = "module Billing\n  class Invoice\n  end\n\n  class Line\n  end\nend\n"
    assert summary(chunk("billing.rb", text)[1]) == [("module Billing", 1, 7)]


# ---- Haskell: a pattern synonym's signature and equation are one unit


RUBY_BASE = """module ActionController
  class Base < Metal
{methods}
    def self.without_modules(*modules)
      MODULES - modules
    end

    # The modules a controller includes.
    MODULES = [
      AbstractController::Rendering,
      Caching,
    ]
    MODULES.each { |mod| include mod }

    PROTECTED_IVARS = [:@_params]
  end
end
"""


def test_ruby_constants_whose_value_spans_lines_are_members_of_their_own():
    # the class is too big for one unit, so it is cut at its members: before, the constant and the
    # code after it were the method above's
    text = RUBY_BASE.replace("{methods}", padding("def m{i}; end", 80, "    "))
    _, chunks = chunk("lib/action_controller/base.rb", text)
    assert summary(chunks)[-2:] == [("method Base.without_modules", 84, 86), ("constant Base.MODULES", 88, 97)]
    assert chunks[-1].text.startswith("    # The modules a controller includes.")  # its comment opens it
    assert "    PROTECTED_IVARS = [:@_params]\n  end\nend" in chunks[-1].text  # a one-line constant stays in it


LUA_ACTIONS = """local actions = {}
local defaults = {
  layout = "horizontal",
}

local function send_all_to_qf(prompt_bufnr, mode)
  return mode
end

--- Sends the selected entries to the quickfix list.
actions.send_selected_to_qflist = {
  pre = check_multi,
  action = function(prompt_bufnr)
    send_all_to_qf(prompt_bufnr, " ")
  end,
}
actions.close = close_picker

actions.move_up = function(prompt_bufnr)
  return prompt_bufnr
end

return actions
"""


def test_lua_assignments_whose_value_spans_lines_are_units_of_their_own():
    _, chunks = chunk("lua/telescope/actions/init.lua", LUA_ACTIONS)
    # before, the table was code after ``send_all_to_qf`` and titled for it; its doc comment opens
    # it, a one-line assignment after it stays in it, a function value keeps its ``function`` title
    assert summary(chunks) == [
        ("module", 1, 1), ("local defaults", 2, 4), ("function send_all_to_qf", 6, 8),
        ("field actions.send_selected_to_qflist", 10, 17), ("function actions.move_up", 19, 23),
    ]
    assert chunks[3].text.startswith("--- Sends the selected") and chunks[3].text.endswith("actions.close = close_picker")


def test_haskell_pattern_synonym_signature_joins_its_equation():
    text = (
        "module Opts where\n\n"
        "pattern DefaultHighlighting :: Text\n"
        "pattern DefaultHighlighting = \"default\"\n\n"
        "pattern Pair :: a -> b -> (a, b)\n"
        "pattern Pair x y <- (x, y)\n"
    )
    assert summary(chunk("src/Opts.hs", text)[1]) == [
        ("module", 1, 1), ("pattern DefaultHighlighting", 3, 4), ("pattern Pair", 6, 7),
    ]


# ---- Swift and C#: conditional compilation where the grammar cannot place it

SWIFT_CONTEXT = """import Foundation

/// The app context.
public class AppContext: NSObject, @unchecked Sendable {
{fields}
  private func listen() {
    register()
  }

  /// Posts lifecycle events.
  private func handle(_ notification: Notification) {
    switch notification.name {
    #if os(iOS)
    case UIApplication.didBecomeActiveNotification:
      post(.active)
    #elseif os(macOS)
    case NSApplication.didBecomeActiveNotification:
      post(.active)
    #endif
    default:
      return
    }
  }

  public func hasModule(_ name: String) -> Bool {
    return registry.has(name)
  }
}
"""


def test_swift_conditional_cases_in_a_switch_keep_the_class():
    # tree-sitter-swift places ``#if`` between statements and declarations only: between a
    # switch's cases the whole class became one error and its methods top-level functions
    text = SWIFT_CONTEXT.replace("{fields}", padding("let field{i}: Int = {i}", 75, "  "))
    chunker, chunks = chunk("AppContext.swift", text)
    assert chunker == "code:swift/4"
    assert summary(chunks) == [
        ("module", 1, 1), ("class AppContext", 3, 79), ("method AppContext.listen", 81, 83),
        ("method AppContext.handle", 85, 98), ("method AppContext.hasModule", 100, 103)]
    assert "    #if os(iOS)\n    case UIApplication" in chunks[3].text  # the lines as written


CSHARP_READER = """using System.Threading.Tasks;

namespace Newtonsoft.Json
{
    public abstract partial class JsonReader
#if HAVE_ASYNC_DISPOSABLE
        : IAsyncDisposable
#endif
    {
{fields}
        public virtual Task<bool> ReadAsync()
        {
            return Task.FromResult(Read());
        }

        internal async Task ReadAndAssertAsync()
        {
            if (!await ReadAsync())
            {
                throw CreateUnexpectedEndException();
            }
        }
    }
}
"""


def test_csharp_conditional_base_list_keeps_the_class_name():
    # the ``#if`` around the base list made the grammar read the condition as the class name
    text = CSHARP_READER.replace("{fields}", padding("private int _field{i};", 75, "        "))
    chunker, chunks = chunk("JsonReader.Async.cs", text)
    assert chunker == "code:csharp/4"
    assert [c.title for c in chunks][-2:] == ["method JsonReader.ReadAsync", "method JsonReader.ReadAndAssertAsync"]
    assert not any("HAVE_ASYNC_DISPOSABLE" in c.title for c in chunks)


C_TABLE = """#include <unistd.h>

static int ready;

unsigned int parallelism(void) {
  long rc = -1;
  static int mib[][2] = {
# ifdef HW_NCPUONLINE
    { CTL_HW, HW_NCPUONLINE },
# endif
    { CTL_HW, HW_NCPU }
  };

  rc = query(mib);
  return (unsigned) rc;
}

int count(void) {
  return ready;
}
"""

C_DRAIN = """#include <unistd.h>

static int ready;

void drain(int fd) {
  char buf[64];
  int r;

#if HAVE_EVFILT
  for (;!ready;) {
#else
  for (;;) {
#endif
    r = read(fd, buf, sizeof(buf));
    if (r != -1)
      break;
  }
  finish(fd);
}

int count(void) {
  return ready;
}
"""


def test_c_conditional_lines_blanked_unless_both_branches_open_one_block():
    # tree-sitter-c cannot place an ``#ifdef`` inside an initializer (libuv's
    # ``uv_available_parallelism``): the function became ``lines``; blanked, its rows read as one
    for path in ("core.c", "core.cc"):
        chunker, chunks = chunk(path, C_TABLE)
        assert chunker in ("code:c/6", "code:cpp/6")
        assert summary(chunks) == [("module", 1, 3), ("function parallelism", 5, 16), ("function count", 18, 20)]
    # two branches that each open the same loop leave a brace unclosed once both are read (the
    # parser then closes it at the end, and the loop swallows ``count``): that parse is refused
    _, chunks = chunk("async.c", C_DRAIN)
    assert summary(chunks) == [("module", 1, 3), ("lines 5-19", 5, 19), ("function count", 21, 23)]


def test_conditional_lines_are_blanked_only_where_they_cost_structure():
    # a file the grammar parses whole keeps its parse: its directives are siblings of the
    # declarations, and an ``#if`` line stays with the unit above
    source = """public class A {
{fields}
#if os(iOS)
  func f() {}
#else
  func g() {}
#endif
}
"""
    _, chunks = chunk("A.swift", source.replace("{fields}", padding("let field{i}: Int = {i}", 80, "  ")))
    assert summary(chunks) == [("class A (lines 1-60)", 1, 60), ("class A (lines 51-83)", 51, 83),
                               ("method A.f", 84, 85), ("method A.g", 86, 88)]


def test_blanked_conditionals_keep_rows_columns_and_continued_lines():
    from ragit.ingest.languages import LANGUAGES

    data = b"int a;\r\n  # if defined(A) && \\\r\n     defined(B)\r\nint b;\r\n#endif\r\n#define X 1\r\n#include <y.h>\r\n"
    lines = data.split(b"\n")
    # the ``#if``, the line its backslash continues it onto, the ``#endif``
    assert LANGUAGES["c"].retry_blank(lines) == {row: b" " * len(lines[row]) for row in (1, 2, 4)}
    assert LANGUAGES["c"].retry_blank([b"int a;", b"#define A 1"]) == {}
    # Swift spells ``#elseif``; ``#available`` and ``#selector`` are no conditionals
    swift = b"#if os(iOS)\nlet a = 1\n#elseif os(macOS)\nif #available(macOS 13, *) {}\n#endif\n"
    assert sorted(LANGUAGES["swift"].retry_blank(swift.split(b"\n"))) == [0, 2, 4]


# ---- TypeScript: syntax tree-sitter-typescript 0.23 cannot read, blanked for a second parse

TS_FACTORY = """import { Box, BoxMap, Store } from "./box"

export interface BoxFactory {
    label: string
    <T>(value: T, options?: BoxOptions): Box<T>
    <K, V>(entries: Array<[K, V]>, options?: BoxOptions): BoxMap<K, V>
    <
        S,
        A extends { type: string },
        Ext extends {} = {}
    >(
        reducer: (state: S | undefined, action: A) => S
    ): Store<S, A> & Ext
    shallow: BoxFactory
}

export const boxFactories = {
    box<T>(value: T): Box<T> {
        return new Box(value)
    },
    map<K, V>(entries: Array<[K, V]>): BoxMap<K, V> {
        return new BoxMap(entries)
    }
}

export function createBox<T>(value: T): Box<T> {
    return new Box(value)
}
"""

TS_DUAL = """import { dual } from "./Function"

/** The value of a success, or the fallback. */
export const getOrElse: {
  <B>(orElse: () => B): <A, E>(self: Result<A, E>) => A | B
  <A, E, B>(self: Result<A, E>, orElse: () => B): A | B
} = dual(2, <A, E, B>(self: Result<A, E>, orElse: () => B): A | B =>
  self._tag === "Success" ? self.value : orElse()
)

/** Keeps a value between two bounds. */
export const clamp: {
  <Min extends number, Max extends number>(
    options: { readonly minimum: Min; readonly maximum: Max }
  ): <A extends number>(self: A) => A | Min | Max
  <A extends number, Min extends number, Max extends number>(
    self: A,
    options: { readonly minimum: Min; readonly maximum: Max }
  ): A | Min | Max
} = dual(2, (self: number, options: { minimum: number; maximum: number }) =>
  Math.min(Math.max(self, options.minimum), options.maximum)
)

export const map = <A, B>(self: Result<A, never>, f: (a: A) => B): Result<B, never> => {
  if (self._tag === "Failure") {
    return self
  }
  return { _tag: "Success", value: f(self.value) }
}

export function isSuccess<A, E>(self: Result<A, E>): boolean {
  return self._tag === "Success"
}
"""

TS_VARIANCE = """export type * from "./types"

export interface Variance<in out A> {
  readonly _A: (_: A) => A
}

export class Ref<in out A, out E = never> implements Variance<A> {
  readonly _A = (a: A) => a
  constructor(private value: A) {}

  get(): A {
    return this.value
  }

  set(value: A): void {
    this.value = value
  }
}

export const make = <A>(value: A): Ref<A> => new Ref(value)
"""


def test_typescript_call_signatures_with_type_parameters_keep_the_declarations_below():
    # a call signature's type parameters opening a line (after a member without a semicolon,
    # mobx's ``IObservableFactory``; over several lines, redux's ``StoreCreator``) ran into the
    # line above: the object below became ``lines``
    chunker, chunks = chunk("src/factory.ts", TS_FACTORY)
    assert chunker == "code:typescript/9"
    assert summary(chunks) == [("module", 1, 1), ("interface BoxFactory", 3, 15), ("const boxFactories", 17, 24),
                               ("function createBox", 26, 28)]
    # effect's overloads of a ``dual`` API: the first one swallowed the rest of the file
    assert summary(chunk("src/Result.ts", TS_DUAL)[1]) == [
        ("module", 1, 1), ("const getOrElse", 3, 9), ("const clamp", 11, 22), ("function map", 24, 29),
        ("function isSuccess", 31, 33)]
    assert summary(chunk("src/Result.tsx", TS_DUAL)[1])[1:3] == [("const getOrElse", 3, 9), ("const clamp", 11, 22)]


def test_typescript_declare_global_is_a_namespace_cut_at_its_members():
    # preact's ``internal.d.ts`` declares its internal types inside ``declare global { … }``: they
    # were ``module`` windows (code:typescript/9); ``declare module "x"`` and ``namespace`` already
    # were containers
    fields = "".join(f"    field{j}: number;\n" for j in range(40))
    body = f"  export interface VNode {{\n{fields}  }}\n\n  export type Ref = () => void;\n\n" \
        f"  export interface Component {{\n{fields}  }}\n"
    text = f"import * as preact from './index';\n\ndeclare global {{\n{body}}}\n"
    chunker, chunks = chunk("src/internal.d.ts", text)
    assert chunker == "code:typescript/9"
    assert summary(chunks) == [("module", 1, 1), ("interface VNode", 3, 45), ("type Ref", 47, 47),
                               ("interface Component", 49, 91)]
    # small, it is one unit; a ``declare module`` is cut as before
    assert summary(chunk("src/env.d.ts", "declare global {\n  interface Window { x: number }\n}\n")[1]) == [
        ("namespace global", 1, 3)]
    module = text.replace("declare global {", 'declare module "preact" {')
    assert [c.title for c in chunk("src/internal.d.ts", module)[1]] == [c.title for c in chunks]


def _js_body(n: int) -> str:
    return "".join(f"    var v{i} = {i};\n" for i in range(n))


JS_WRAPPED = {
    "iife": "(function () {{\n  'use strict';\n\n{defs}  window.lib = {{ first: first }};\n}})();\n",
    "umd": (";(function (root, factory) {{\n  if (typeof define === 'function' && define.amd) {{ define([], factory); }}\n"
            "  else {{ root.Lib = factory(); }}\n}}(this, function () {{\n{defs}  return {{ first: first }};\n}}));\n"),
    "amd": "define(['jquery', './core'], function ($, core) {{\n{defs}  return $;\n}});\n",
    "bang": "!function () {{\n{defs}}}();\n",
    # lodash.js and CoffeeScript's output: the function called with ``this``
    "call": ";(function () {{\n{defs}}}.call(this));\n",
    # Rollup's UMD bundle (underscore-umd.js, zod's index.umd.js): the factory in parentheses
    "rollup": ("(function (global, factory) {{\n  typeof exports === 'object' ? factory(exports) : factory(global.Lib = {{}});\n"
               "}})(this, (function (exports) {{ 'use strict';\n{defs}  exports.first = first;\n}}));\n"),
    # jQuery's selector.js: an IIFE inside the AMD callback holds the definitions
    "nested": ("define(['./core'], function (jQuery) {{\n  'use strict';\n  var doc = document;\n\n"
               "  (function () {{\n{defs}  }})();\n\n  jQuery.find = first;\n}});\n"),
}


def test_javascript_libraries_wrapped_in_a_call_keep_their_definitions():
    # jQuery's src/*.js are AMD modules, Backbone a UMD factory, older browser code
    # an IIFE: the whole file was the call's ``module`` windows (code:javascript/8)
    defs = "".join(f"  function {name}(a) {{\n{_js_body(30)}    return a;\n  }}\n\n" for name in ("first", "second"))
    for kind, template in JS_WRAPPED.items():
        chunker, chunks = chunk("src/lib.js", template.format(defs=defs))
        assert chunker == "code:javascript/8", kind
        assert [c.title for c in chunks] == ["module", "function first", "function second"], kind
    assert chunk("src/lib.ts", JS_WRAPPED["iife"].format(defs=defs))[0] == "code:typescript/9"
    # a call whose functions define nothing stays code, and so does a test runner's block
    assert [c.title for c in chunk("src/run.js", "(function () {\n" + _js_body(90) + "})();\n")[1]][0] \
        .startswith("module")
    titles = [c.title for c in chunk("test/lib.test.js", "describe('lib', function () {\n" + defs + "});\n")[1]]
    assert all(t.startswith("module") for t in titles)
    # a callback handed to any other function is that call's code, its locals no definitions
    handler = ("app.get('/users', function (req, res) {\n  var user = req.query.id\n    ? load(req.query.id)\n    : null;\n"
               + _js_body(40) + "  res.send(user);\n});\n")
    assert [c.title for c in chunk("app.js", handler)[1]] == ["module"]


def test_javascript_a_named_function_handed_to_a_top_level_call_is_that_function():
    # express's request.js defines its getters so (code:javascript/8); an anonymous one stays code
    getter = ("defineGetter(req, 'protocol', function protocol() {{\n  var proto = this.connection.encrypted;\n"
              "{body}  return proto;\n}});\n")
    chunks = chunk("lib/request.js", "var req = {};\n\n" + getter.format(body=_js_body(20)))[1]
    assert [(c.title, c.start_line) for c in chunks] == [("module", 1), ("function protocol", 3)]
    anonymous = getter.replace("function protocol()", "function ()").format(body=_js_body(20))
    assert [c.title for c in chunk("lib/request.js", "var req = {};\n\n" + anonymous)[1]] == ["module"]


JS_EXTEND = """(function () {{
  var Model = function (attributes) {{ this.attributes = attributes; }};

  _.extend(Model.prototype, Events, {{
    get: function (attr) {{
{body}      return this.attributes[attr];
    }},
    set: function (key, val) {{
{body}      return this;
    }}
  }});

  jQuery.fn.extend({{
    css: function (name, value) {{
{body}      return this;
    }}
  }});

  Object.assign(Store.prototype, {{ dispatch(action) {{
{body}    return action;
  }} }});
}})();
"""


def test_javascript_objects_extended_with_methods_are_cut_at_them():
    # Backbone's ``_.extend(Model.prototype, Events, {…})``, jQuery's ``jQuery.extend({ ajax: … })``:
    # the methods of the object literal are the extended object's (code:javascript/8)
    chunker, chunks = chunk("backbone.js", JS_EXTEND.format(body=_js_body(40)))
    assert chunker == "code:javascript/8"
    assert [c.title for c in chunks] == ["module", "function Model", "method Model.get", "method Model.set",
                                         "object jQuery.fn", "object Store"]  # (one method each: one unit)
    # small, an extended object is one unit, titled for its owner
    small = chunk("backbone.js", JS_EXTEND.format(body=""))[1]
    assert [c.title for c in small] == ["module", "function Model", "object Model", "object jQuery.fn",
                                        "object Store"]


def test_typescript_variance_annotations_are_read():
    chunker, chunks = chunk("src/Ref.ts", TS_VARIANCE)
    assert chunker == "code:typescript/9"
    assert summary(chunks) == [("module", 1, 1), ("interface Variance", 3, 5), ("class Ref", 7, 18),
                               ("function make", 20, 20)]


def test_typescript_blanking_keeps_rows_columns_and_other_angle_brackets():
    from ragit.ingest.blanking import typescript_syntax

    lines = TS_FACTORY.encode().split(b"\n")
    blanked = typescript_syntax(lines)
    assert sorted(blanked) == [4, 5, 6, 7, 8, 9, 10]  # (rows 5-11)
    assert all(len(line) == len(lines[row]) for row, line in blanked.items())
    assert blanked[4] == b"       (value: T, options?: BoxOptions): Box<T>"
    assert blanked[10] == b"     (" and blanked[7].strip() == b""
    variance = typescript_syntax(TS_VARIANCE.encode().split(b"\n"))
    assert variance == {0: b"export      * from \"./types\"", 2: b"export interface Variance<       A> {",
                        6: b"export class Ref<       A,     E = never> implements Variance<A> {"}
    # a comparison, a generic call, ``in`` as an operator, a closing tag, a shift: nothing to blank
    assert typescript_syntax([b"if (a < b) {", b"const x = f<A>(y)", b"for (const key in object) {",
                              b"  </div>", b"  << 2", b"  <= limit", b"  <A>[a]", b"  <A; B>(c)"]) == {}


# ---- JavaScript / TypeScript: a documented one-line declaration is documented API

JS_API = """import { Immer } from "./immer"

const immer = new Immer()

/**
 * Creates a new state by applying the recipe to a draft of the base state.
 *
 * @param base - the initial state
 * @param recipe - receives a draft it may modify freely
 */
export const produce = immer.produce

/**
 * Like produce, but returns the patches too.
 */
export const produceWithPatches =
  immer.produceWithPatches.bind(immer)
/** Turns auto-freezing on or off. */
export const setAutoFreeze = immer.setAutoFreeze.bind(immer)
export const applyPatches = immer.applyPatches.bind(immer)
let nothing = Symbol("nothing"), other = 1

/**
 * Ends a draft.
 */
export function finishDraft(draft) {
  return immer.finishDraft(draft)
}
"""


def test_one_line_declarations_under_a_doc_comment_are_units():
    # a ``/**`` comment over several lines right above a one-line declaration: the documented API
    # (immer's ``produce``) is a unit titled for it; a one-line comment, or none, keeps the
    # declaration in the unit above, as before
    for path, name in (("src/immer.js", "code:javascript/8"), ("src/immer.ts", "code:typescript/9")):
        chunker, chunks = chunk(path, JS_API)
        assert chunker == name
        assert summary(chunks) == [("module", 1, 3), ("const produce", 5, 11), ("const produceWithPatches", 13, 21),
                                   ("function finishDraft", 23, 28)]
    # a blank line between the comment and the declaration: the comment is not its own
    _, chunks = chunk("src/immer.js", JS_API.replace(" */\nexport const produce =", " */\n\nexport const produce ="))
    assert [c.title for c in chunks][:2] == ["module", "const produceWithPatches"]


# ---- Kotlin: what tree-sitter-kotlin 1.1 cannot read, respelled or blanked for a second parse

KOTLIN_GATE = """package demo.sync

/** A gate that lets a number of callers through at once. */
public interface Gate {
    public val available: Int
    public suspend fun enter()
}

@JvmInline
public value class Ticket<out T>
@PublishedApi internal constructor(@PublishedApi internal val holder: Any?) {
    public val isValid: Boolean get() = holder != null
}

internal open class GateImpl(private val permits: Int) : Gate {
    override val available: Int get() = permits

    override suspend fun enter() = enter(
        waiter = Unit,
        suspend = { w -> park(w) },
        onEntered = { }
    )

    private inline fun <W> enter(waiter: W, suspend: (waiter: W) -> Boolean, onEntered: (waiter: W) -> Unit) {
        if (!suspend(waiter)) onEntered(waiter)
    }

    private fun park(waiter: Any): Boolean = true

    override fun toString(): String = $$"GateImpl[$permits]"
}

fun deferredEnter(gate: Gate) = suspend { gate.enter() }
"""


def test_kotlin_suspend_as_a_name_and_annotated_constructor_lines_keep_the_structure():
    # kotlinx.coroutines' ``Semaphore.kt`` (a named argument ``suspend = {``, a parameter called
    # ``suspend``) was all ``lines`` windows, and its ``Channel.kt`` (``@PublishedApi internal
    # constructor`` on the line under ``value class ChannelResult<out T>``) lost 9,900 bytes
    chunker, chunks = chunk("src/Gate.kt", KOTLIN_GATE)
    assert chunker == "code:kotlin/4"
    # (the first parse recovered no definition: the whole file was ``lines 1-33``)
    assert summary(chunks) == [("module", 1, 1), ("interface Gate", 3, 7), ("class Ticket", 9, 13),
                               ("class GateImpl", 15, 31), ("function deferredEnter", 33, 33)]


def test_kotlin_respelling_keeps_lengths_and_leaves_keywords_alone():
    from ragit.ingest.blanking import kotlin_syntax

    lines = KOTLIN_GATE.encode().split(b"\n")
    changed = kotlin_syntax(lines)
    assert sorted(changed) == [10, 19, 24, 29, 32]  # (a parameter called ``suspend`` reads as one)
    assert all(len(line) == len(lines[row]) for row, line in changed.items())
    assert changed[10].startswith(b"              internal constructor(@PublishedApi")
    assert changed[19] == b"        xuspend = { w -> park(w) },"
    assert changed[24] == b"        if (!xuspend(waiter)) onEntered(waiter)"
    assert changed[29].endswith(b' =   "GateImpl[$permits]"')
    # the keyword: ``suspend fun``, a suspending function type, ``suspend ==`` is a comparison
    assert kotlin_syntax([b"suspend fun f() {}", b"val g: suspend () -> Unit = {}", b"if (suspend == 1) {}"]) == {}


KOTLIN_NODES = """package demo

private typealias Node = ListNode

/**
 * A node of the list.
 */
@Suppress("LeakingThis")
@InternalApi
public actual open class ListNode {
    public actual val next: Any get() = this

    public actual fun remove(): Boolean = false
}

/**
 * Marks what is delicate.
 */
@MustBeDocumented
@Retention(value = AnnotationRetention.BINARY)
@RequiresOptIn(
    level = RequiresOptIn.Level.WARNING,
    message = "Delicate."
)
public annotation class DelicateApi
"""


def test_kotlin_annotations_read_as_an_expression_are_parsed_again_as_comments():
    # tree-sitter-kotlin 1.1 reads annotations under a comment that follows a declaration as an
    # annotated expression, with no error: kotlinx.coroutines' 250-line ``LockFreeLinkedListNode``
    # was part of the ``typealias Node`` above it, and its opt-in annotations were ``module`` code
    chunker, chunks = chunk("src/Nodes.kt", KOTLIN_NODES)
    assert chunker == "code:kotlin/4"
    # the doc comment and the annotations, respelled as line comments, open the class's unit; the
    # annotation class below was read right the first time and is as it was
    assert summary(chunks) == [("module", 1, 1), ("type Node", 3, 3), ("class ListNode", 5, 14),
                               ("annotation DelicateApi", 16, 25)]


def test_kotlin_annotation_respelling_keeps_lengths():
    from ragit.ingest.code import _parser
    from ragit.ingest.languages import _kotlin_annotated

    data = KOTLIN_NODES.encode()
    lines = data.split(b"\n")
    changed = _kotlin_annotated(_parser("kotlin").parse(data).root_node.named_children, lines)
    assert all(len(line) == len(lines[row]) for row, line in changed.items())
    assert changed[7] == b'//uppress("LeakingThis")' and changed[8] == b"//nternalApi"
    assert sorted(changed) == [7, 8]
    # annotations a declaration's line carries are read right: nothing to respell
    one_line = b'package a\n\nfun f() {}\n\n/** d */\n@Suppress("x") public class N\n'
    assert _kotlin_annotated(_parser("kotlin").parse(one_line).root_node.named_children, one_line.split(b"\n")) == {}


JS_ADAPTER = """import http from "http"

const transport = {
  request(options, cb) {
    return http.request(options, cb)
  },
}

export default isSupported &&
  function httpAdapter(config) {
    return new Promise((resolve, reject) => {
      const req = transport.request(config, resolve)
      req.on("error", reject)
      req.end(config.data)
    })
  }
"""

JS_ENVIRONMENT = """function catchErrors(window) {
  window.addEventListener("error", () => {})
}

export default {
  name: "jsdom",
  setup(global) {
    catchErrors(global)
    return { teardown() {} }
  },
}
"""


def test_default_export_over_several_lines_is_a_unit():
    # axios's node adapter, ``export default isHttpAdapterSupported && function httpAdapter(config)
    # {`` (930 lines), was the tail of ``const http2Transport`` above it
    for path in ("lib/adapters/http.js", "lib/adapters/http.ts"):
        assert summary(chunk(path, JS_ADAPTER)[1]) == [("module", 1, 1), ("const transport", 3, 7),
                                                       ("function httpAdapter", 9, 16)]
    # an object holding methods (vitest's environments: ``export default { name: 'jsdom', setup … }``)
    # is ``object default`` (session 32: cut at its methods when long); any other value is the file's
    # own code
    assert summary(chunk("src/env/jsdom.js", JS_ENVIRONMENT)[1]) == [("function catchErrors", 1, 3),
                                                                     ("object default", 5, 11)]
    data = JS_ENVIRONMENT.replace("  setup(global) {\n    catchErrors(global)\n    return { teardown() {} }\n  },\n", "  pool: 1,\n")
    assert summary(chunk("src/env/jsdom.js", data)[1]) == [("function catchErrors", 1, 3), ("module", 5, 8)]
    # a one-line default export stays where it is
    _, chunks = chunk("src/index.js", "function make() {\n  return 1\n}\n\nexport default make\n")
    assert summary(chunks) == [("function make", 1, 5)]


# ---- Rust: the items a macro invocation wraps are the file's own

RUST_TASKS = """use std::future::Future;

pub trait Schedule {
    fn release(&self);
}

cfg_rt! {
    /// Creates a new task.
    fn new_task<T: Future>(task: T) -> Task {
        Task::new(task)
    }

    cfg_fs! {
        pub(crate) fn spawn_mandatory_blocking() -> Option<Task> {
            None
        }
    }
}

bitflags! {
    struct Flags: u32 {
        const READY = 1;
        const DONE = 2;
    }
}

pub struct Task;
"""


def test_rust_items_inside_macro_invocations_are_definitions():
    # tokio wraps 10,000 lines in ``cfg_rt! { … }`` and its kin: their functions were no
    # definitions and joined the unit above (``trait Schedule``, here); a macro whose braces hold
    # no items (``bitflags!``) stays as it is
    chunker, chunks = chunk("src/task.rs", RUST_TASKS)
    assert chunker == "code:rust/4"
    # (a wrapper's opening line ends the unit above, its closing brace joins the last item's; the
    # ``bitflags!`` block joins the unit above, as any other unclaimed code does)
    assert summary(chunks) == [("module", 1, 1), ("trait Schedule", 3, 7), ("function new_task", 8, 13),
                               ("function spawn_mandatory_blocking", 14, 25), ("struct Task", 27, 27)]


JS_TOP_LEVEL_CODE = """export class Locator {
  click() {
    return this.run("click")
  }
}

page.extend({
  getByLabelText(text) {
    return new Locator(text)
  },
})

if (import.meta.vitest) {
  const { it } = import.meta.vitest
  it("works", () => {})
}

export type {
  Locator as PageLocator,
  Options,
}

init()
"""


def test_top_level_code_over_several_lines_is_module_code():
    # vitest's ``page.extend({ … })``, in-source tests, ``export type { … }`` lists and axios's
    # ``utils.forEach([…], function (method) {…})`` joined the definition above and were titled for it
    # (since code:javascript/8 an object extended with methods is the extended object's: ``object page``)
    for path in ("src/locators.ts", "src/locators.js"):
        text = JS_TOP_LEVEL_CODE if path.endswith(".ts") else JS_TOP_LEVEL_CODE.replace("export type", "export")
        assert summary(chunk(path, text)[1]) == [("class Locator", 1, 5), ("object page", 7, 11), ("module", 13, 23)]


LUA_DO_BLOCK = """local M = {}

function M.size(t)
  return #t
end

do
  local function parse(s)
    return s:match("%d+")
  end

  function M.parse_range(s)
    return parse(s)
  end
end

return M
"""


def test_lua_functions_in_a_top_level_do_block_are_definitions():
    # penlight scopes helpers with ``do … end``: their functions joined the unit above
    chunker, chunks = chunk("pl/array2d.lua", LUA_DO_BLOCK)
    assert chunker == "code:lua/3"
    assert summary(chunks) == [("module", 1, 1), ("function M.size", 3, 7), ("function parse", 8, 10),
                               ("function M.parse_range", 12, 17)]


SCALA_PACKAGE_BLOCK = """package scala.collection

package object parallel {
  def unsupported = throw new UnsupportedOperationException
}

package parallel {
  /** Implicit conversions used in the implementation. */
  private[collection] object ParallelCollectionImplicits {
    def factory = 1
  }

  class CompositeThrowable(val throwables: Set[Throwable]) extends Exception
}
"""


def test_scala_definitions_in_a_package_block_are_definitions():
    chunker, chunks = chunk("parallel/package.scala", SCALA_PACKAGE_BLOCK)
    assert chunker == "code:scala/3"
    # (the block's ``package parallel {`` line ends the unit above; before, the whole block was
    # the tail of ``package object parallel``)
    assert summary(chunks) == [("module", 1, 1), ("package object parallel", 3, 7),
                               ("object ParallelCollectionImplicits", 8, 11),
                               ("class CompositeThrowable", 13, 14)]


KOTLIN_PROPERTIES = """package demo

private val mirroredUrls = listOf(
    "https://cdn.example.com",
    "https://mirror.example.com",
)

val limit = 64

class Flow {
{fields}
    val replayCache: List<Int>
        get() = buffer.toList()

    val size by lazy {
        compute()
    }

    fun collect() {
        emit()
    }
}
"""


def test_kotlin_properties_whose_value_spans_lines_are_units():
    text = KOTLIN_PROPERTIES.replace("{fields}", padding("private var field{i} = {i}", 150, "    "))
    _, chunks = chunk("src/Flow.kt", text)
    titles = [c.title for c in chunks]
    assert titles[:2] == ["module", "property mirroredUrls"]
    assert ("property mirroredUrls", 3, 8) == summary(chunks)[1]  # (``val limit = 64`` stays in it)
    assert titles[-3:] == ["property Flow.replayCache", "property Flow.size", "method Flow.collect"]


RUST_VALUES = """use crate::case::RenameRule;

pub fn rename(rule: &str) -> Option<RenameRule> {
    RENAME_RULES.iter().find(|(name, _)| *name == rule).map(|(_, r)| *r)
}

static RENAME_RULES: &[(&str, RenameRule)] = &[
    ("lowercase", RenameRule::LowerCase),
    ("UPPERCASE", RenameRule::UpperCase),
];

const LIMIT: usize = 8;

impl RenameRule {
    const ALL: [RenameRule; 2] = [
        RenameRule::LowerCase,
        RenameRule::UpperCase,
    ];

    pub fn apply(self, s: &str) -> String {
        s.to_owned()
    }
}
"""


def test_rust_consts_and_statics_whose_value_spans_lines_are_units():
    # serde's ``RENAME_RULES`` table was the tail of the function above it
    _, chunks = chunk("src/case.rs", RUST_VALUES)
    assert summary(chunks) == [("module", 1, 1), ("function rename", 3, 5), ("static RENAME_RULES", 7, 12),
                               ("impl RenameRule", 14, 23)]


SCALA_VALUES = """package scala.util

object MurmurHash {
  def startHash(seed: Int) = seed ^ visibleMagic
{fields}
  private val storedMagicA =
    Iterator.iterate(hiddenMagicA)(nextMagicA).take(23).toArray

  lazy val releaseVersion: Option[String] = {
    val v = scalaPropOrEmpty("maven.version.number")
    if (v.endsWith("-SNAPSHOT")) None else Some(v)
  }
}
"""


def test_scala_vals_whose_value_spans_lines_are_units():
    text = SCALA_VALUES.replace("{fields}", padding("final val magic{i} = {i}", 150, "  "))
    chunker, chunks = chunk("src/MurmurHash.scala", text)
    assert chunker == "code:scala/3"
    assert [c.title for c in chunks][-2:] == ["val MurmurHash.storedMagicA", "val MurmurHash.releaseVersion"]


C_TABLES = """#include <stdio.h>

static int twice(int x) { return x * 2; }

static const char* const names[] = {
  "read",
  "write",
};

int count = 2;

void run(void) {
  int flags = 1 |
    2;
  use(flags);
}
"""

CSHARP_FIELDS = """namespace Codes;

public static class Table
{
    public static int Twice(int x) => x * 2;
{fields}
    private static readonly Dictionary<string, int> Map = new Dictionary<string, int>
    {
        ["a"] = 1,
        ["b"] = 2,
    };

    public static int Three() => 3;
}
"""

PHP_VALUES = """<?php
class Logger
{
    public function twice(int $x): int { return $x * 2; }
{fields}
    private const RFC_5424_LEVELS = [
        7 => 'debug',
        6 => 'info',
    ];

    protected array $levels = [
        'debug' => 100,
    ];

    public function three(): int { return 3; }
}
"""


def test_values_spanning_lines_are_units_in_c_csharp_and_php():
    # libuv's ``static const char* const names[] = {`` tables were the tail of the function above; a
    # local variable (indented) or a one-line value stays where it is
    chunker, chunks = chunk("src/names.c", C_TABLES)
    assert chunker == "code:c/6"
    assert summary(chunks) == [("module", 1, 1), ("function twice", 3, 3), ("variable names", 5, 10),
                               ("function run", 12, 16)]
    chunker, chunks = chunk("src/Table.cs", CSHARP_FIELDS.replace("{fields}", padding("public int Field{i} = {i};", 70, "    ")))
    assert chunker == "code:csharp/4"
    assert [c.title for c in chunks][-2:] == ["field Table.Map", "method Table.Three"]
    chunker, chunks = chunk("src/Logger.php", PHP_VALUES.replace("{fields}", padding("public int $f{i} = {i};", 70, "    ")))
    assert chunker == "code:php/4"
    assert [c.title for c in chunks][-3:] == ["const Logger.RFC_5424_LEVELS", "property Logger.levels",
                                              "method Logger.three"]


PHP_GUARDED = """<?php

use Illuminate\\Support\\Collection;

if (! function_exists('collect')) {
    /**
     * Create a collection from the given value.
     */
    function collect($value = [])
    {
        return new Collection($value);
    }
}

if (! function_exists('value')) {
    function value($value, ...$args)
    {
        return $value instanceof Closure ? $value(...$args) : $value;
    }
}

if (! class_exists('Fluent')) :
class Fluent
{
    public function get($key)
    {
        return $this->attributes[$key] ?? null;
    }
}
endif;

if (PHP_VERSION_ID >= 80200) {
    function modern() {}
} else {
    function modern() { return 1; }
}

if ($debug) {
    error_reporting(E_ALL);
}
"""


def test_php_guarded_definitions_are_units():
    # Laravel's helpers.php defines every global helper behind ``if (! function_exists(...))``:
    # they were ``module`` windows (code:php/4); a guard with an ``else`` or other code stays code
    chunker, chunks = chunk("src/helpers.php", PHP_GUARDED)
    assert chunker == "code:php/4"
    # (the version-dependent pair and the ``if ($debug)`` block stay code: the tail of the unit
    # above, as any PHP code after a definition is)
    assert summary(chunks) == [("module", 1, 3), ("function collect", 5, 13), ("function value", 15, 20),
                               ("class Fluent", 22, 40)]
    assert chunks[1].text.startswith("if (! function_exists('collect')) {\n    /**")


ELIXIR_GUARDED = """if Code.ensure_loaded?(Jason) do
  defmodule Phoenix.JSON do
    @moduledoc "JSON through Jason."

    def encode(data) do
      Jason.encode(data)
    end
  end
end

unless Code.ensure_loaded?(Plug.Cowboy) do
  # no adapter
  def cowboy?, do: false
end
"""


def test_elixir_guarded_modules_are_units():
    # ``if Code.ensure_loaded?(X) do defmodule … end end``: the module was the file's own code
    # (code:elixir/4); a guard holding a one-line function stays code, the tail of the unit above
    chunker, chunks = chunk("lib/phoenix/json.ex", ELIXIR_GUARDED)
    assert chunker == "code:elixir/4"
    assert summary(chunks) == [("module Phoenix.JSON", 1, 14)]
    lines = "      x\n" * 30
    big = ELIXIR_GUARDED.replace("    def encode", "".join(f"    def f{i}(x) do\n{lines}    end\n\n"
                                                          for i in range(3)) + "    def encode")
    assert [c.title for c in chunk("lib/phoenix/json.ex", big)[1]] == [
        "function Phoenix.JSON.f0", "function Phoenix.JSON.f1", "function Phoenix.JSON.f2",
        "function Phoenix.JSON.encode"]


ZIG_VALUES = """const std = @import("std");

pub fn twice(x: u32) u32 {
    return x * 2;
}

const names = [_][]const u8{
    "read",
    "write",
};

var count: u32 = 0;

pub fn three() u32 {
    return 3;
}
"""


def test_zig_values_spanning_lines_are_units():
    # zls's snippet tables (``const top_level = [_]Item{`` …) were windows of ``struct Item``
    chunker, chunks = chunk("src/snippets.zig", ZIG_VALUES)
    assert chunker == "code:zig/3"
    assert summary(chunks) == [("module", 1, 1), ("function twice", 3, 5), ("const names", 7, 12),
                               ("function three", 14, 16)]


ELIXIR_ATTRIBUTES = """defmodule Mix.Tasks.Gen.Context do
  @moduledoc \"\"\"
  Generates a context.
  \"\"\"

  def run(args) do
    parse(args)
  end
{functions}
  @switches [
    binary_id: :boolean,
    table: :string,
    web: :string
  ]

  @doc "Parses the arguments."
  def parse(args), do: OptionParser.parse(args, switches: @switches)
end
"""


def test_elixir_module_attributes_whose_value_spans_lines_are_members():
    # phoenix's ``@switches [`` … ``]`` of each mix task was the tail of the function above; the
    # attributes Elixir gives a meaning (``@moduledoc``, ``@doc``) stay where they are
    text = ELIXIR_ATTRIBUTES.replace("{functions}", padding("def f{i}(x), do: x + {i}", 150, "  "))
    chunker, chunks = chunk("lib/mix/tasks/gen.context.ex", text)
    assert chunker == "code:elixir/4"
    titles = [c.title for c in chunks]
    assert titles[-2:] == ["attribute Mix.Tasks.Gen.Context.switches", "function Mix.Tasks.Gen.Context.parse"]
    assert not any("moduledoc" in t or "attribute Mix.Tasks.Gen.Context.doc" == t for t in titles)


PYTHON_VALUES = """import sys


def get_encoding(headers):
    return headers.get("content-type")


DEFAULT_ACCEPT_ENCODING = ", ".join(
    ["gzip", "deflate"]
)

if sys.platform == "win32":
    def proxy_bypass(host):
        return False

LIMIT = 3


class Session:
    __attrs__ = [
        "headers",
        "cookies",
    ]

    def send(self, request):
        return request
"""


def test_python_values_and_module_code_over_several_lines_are_units():
    # requests' ``DEFAULT_ACCEPT_ENCODING`` and the ``if sys.platform == "win32":`` block after it
    # were the tail of ``function get_encoding``; a class's ``__attrs__`` list that of its header
    # (since code:python/3 the block's definition is a unit, opened by the block's line)
    chunker, chunks = chunk("src/requests/utils.py", PYTHON_VALUES)
    assert chunker == "code:python/4"
    assert summary(chunks) == [("module", 1, 1), ("function get_encoding", 4, 5),
                               ("variable DEFAULT_ACCEPT_ENCODING", 8, 10), ("function proxy_bypass", 12, 16),
                               ("class Session", 19, 26)]
    # (the class fits one unit; cut at its members, the list is a member of its own)
    big = PYTHON_VALUES.replace("class Session:\n", "class Session:\n" + padding("field{i} = {i}", 150, "    "))
    assert [c.title for c in chunk("src/requests/sessions.py", big)[1]][-2:] == [
        "variable Session.__attrs__", "method Session.send"]
