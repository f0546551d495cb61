"""Code chunking of the tree-sitter languages added to §8.6: one hand-written file per language
with its exact units, nested containers split recursively, tolerance of parse errors, and the
``.h`` rule. Every input here is written for these tests."""

from __future__ import annotations

import subprocess
import sys

import pytest

from ragit.ingest import code as code_module
from ragit.ingest.languages import LANGUAGES

from chunk_helpers import chunk, padding, summary

#: each table's chunker name (``code:<language>`` and its revision; pinned in test_chunker_revisions.py)
CODE = {key: spec.chunker for key, spec in LANGUAGES.items()}


# ---- one realistic file per language

KOTLIN = """package com.example.inventory

import kotlinx.coroutines.flow.Flow

/** Stock kept per warehouse. */
@JvmInline
value class Sku(val code: String)

interface StockRepository {
    suspend fun load(sku: Sku): Int
    fun watch(sku: Sku): Flow<Int>
}

class Warehouse(private val repo: StockRepository) {
    private val reserved = mutableMapOf<Sku, Int>()

    // Reserves units if enough are left.
    suspend fun reserve(sku: Sku, units: Int): Boolean {
        val left = repo.load(sku) - (reserved[sku] ?: 0)
        if (left < units) return false
        reserved[sku] = (reserved[sku] ?: 0) + units
        return true
    }

    companion object {
        fun empty(): Warehouse = Warehouse(NoStock)
    }
}

object NoStock : StockRepository {
    override suspend fun load(sku: Sku) = 0
    override fun watch(sku: Sku): Flow<Int> = TODO()
}

enum class Unit { PIECE, BOX }

typealias Listener = (Sku) -> kotlin.Unit

fun Sku.isValid(): Boolean = code.isNotBlank()
"""

SCALA = """package shop.billing

import scala.concurrent.Future

/** An invoice line. */
final case class Line(sku: String, cents: Long)

sealed trait Discount {
  def apply(total: Long): Long
}

object Discount {
  case object None extends Discount {
    def apply(total: Long): Long = total
  }

  // Percentage off, rounded down.
  final case class Percent(p: Int) extends Discount {
    def apply(total: Long): Long = total * (100 - p) / 100
  }
}

class Invoice(lines: Seq[Line], discount: Discount) {
  def subtotal: Long = lines.map(_.cents).sum

  def total: Long = discount(subtotal)
}

type Cents = Long

def render(invoice: Invoice): String =
  s"total: ${invoice.total}"

extension (l: Line)
  def euros: Double = l.cents / 100.0
"""

SWIFT = """import Foundation

/// A to-do item.
struct Todo: Codable, Identifiable {
    let id: UUID
    var title: String
    var done = false
}

protocol TodoStore {
    func all() async throws -> [Todo]
    func save(_ todo: Todo) async throws
}

@MainActor
final class TodoList: ObservableObject {
    @Published private(set) var items: [Todo] = []
    private let store: TodoStore

    init(store: TodoStore) {
        self.store = store
    }

    // Reloads from the store.
    func reload() async {
        items = (try? await store.all()) ?? []
    }
}

extension Todo {
    var isOverdue: Bool { false }

    func toggled() -> Todo {
        var copy = self
        copy.done.toggle()
        return copy
    }
}

enum Filter: String, CaseIterable {
    case all, open, done
}

func makeList() -> TodoList {
    TodoList(store: MemoryStore())
}
"""

C = """#include <stdio.h>
#include <stdlib.h>

#define RING_CAP 64

/* A fixed-size ring buffer. */
typedef struct {
    int data[RING_CAP];
    size_t head, tail;
} ring_t;

enum ring_status { RING_OK, RING_FULL, RING_EMPTY };

static size_t next(size_t i) { return (i + 1) % RING_CAP; }

/* Pushes one value; fails when full. */
enum ring_status ring_push(ring_t *r, int v) {
    if (next(r->head) == r->tail)
        return RING_FULL;
    r->data[r->head] = v;
    r->head = next(r->head);
    return RING_OK;
}

enum ring_status ring_pop(ring_t *r, int *out) {
    if (r->head == r->tail)
        return RING_EMPTY;
    *out = r->data[r->tail];
    r->tail = next(r->tail);
    return RING_OK;
}

int main(void) {
    ring_t r = {0};
    ring_push(&r, 1);
    return 0;
}
"""

CPP = """#pragma once
#include <string>
#include <vector>

namespace geo {

// A 2-D point.
struct Point {
  double x = 0, y = 0;
};

template <typename T>
class Polygon {
 public:
  explicit Polygon(std::vector<T> pts) : pts_(std::move(pts)) {}

  // Perimeter of the closed shape.
  double perimeter() const {
    double sum = 0;
    for (size_t i = 0; i < pts_.size(); ++i) sum += distance(pts_[i], pts_[(i + 1) % pts_.size()]);
    return sum;
  }

  size_t size() const { return pts_.size(); }

 private:
  std::vector<T> pts_;
};

double distance(const Point& a, const Point& b);

}  // namespace geo

double geo::distance(const Point& a, const Point& b) {
  return std::hypot(a.x - b.x, a.y - b.y);
}

enum class Shape { Triangle, Square };

int main() {
  geo::Polygon<geo::Point> p({{0, 0}, {1, 0}, {0, 1}});
  return p.size() == 3 ? 0 : 1;
}
"""

CSHARP = """using System;
using System.Collections.Generic;

namespace Library.Catalog
{
    /// <summary>A book on the shelf.</summary>
    public record Book(string Isbn, string Title);

    public interface IShelf
    {
        IEnumerable<Book> Books { get; }
        void Add(Book book);
    }

    [Serializable]
    public sealed class Shelf : IShelf
    {
        private readonly List<Book> _books = new();

        public Shelf(int capacity) => Capacity = capacity;

        public int Capacity { get; }

        public IEnumerable<Book> Books => _books;

        // Adds a book unless the shelf is full.
        public void Add(Book book)
        {
            if (_books.Count >= Capacity) throw new InvalidOperationException("full");
            _books.Add(book);
        }
    }

    public enum Genre { Fiction, Science }
}
"""

RUBY = """# frozen_string_literal: true

require "json"

module Billing
  # A customer invoice.
  class Invoice
    attr_reader :lines

    def initialize(lines = [])
      @lines = lines
    end

    # Total in cents.
    def total
      lines.sum(&:cents)
    end

    def self.from_json(text)
      new(JSON.parse(text).map { |h| Line.new(**h) })
    end
  end

  Line = Struct.new(:sku, :cents, keyword_init: true)

  def self.currency
    "EUR"
  end
end
"""

PHP = """<?php

declare(strict_types=1);

namespace App\\Billing;

use InvalidArgumentException;

/**
 * A money amount in cents.
 */
final class Money
{
    public function __construct(private int $cents)
    {
        if ($cents < 0) {
            throw new InvalidArgumentException('negative');
        }
    }

    // Adds two amounts.
    public function plus(Money $other): self
    {
        return new self($this->cents + $other->cents);
    }
}

interface Priced
{
    public function price(): Money;
}

enum Currency: string
{
    case Euro = 'EUR';
}

function format_money(Money $m): string
{
    return sprintf('%.2f', $m->cents / 100);
}
"""

ELIXIR = """defmodule Chat.Room do
  @moduledoc "A chat room process."
  use GenServer

  alias Chat.Message

  @doc "Starts a room."
  @spec start_link(String.t()) :: GenServer.on_start()
  def start_link(name) do
    GenServer.start_link(__MODULE__, name, name: via(name))
  end

  def post(room, %Message{} = msg), do: GenServer.cast(room, {:post, msg})
  def post(room, text) when is_binary(text), do: post(room, %Message{text: text})

  @impl true
  def init(name), do: {:ok, %{name: name, log: []}}

  defp via(name), do: {:via, Registry, {Chat.Registry, name}}

  defmacro log(msg) do
    quote do: IO.puts(unquote(msg))
  end
end

defmodule Chat.Message do
  defstruct [:text, :at]
end
"""

HASKELL = """{-# LANGUAGE OverloadedStrings #-}
-- | Simple stack machine.
module Machine
  ( Instr(..)
  , run
  ) where

import qualified Data.Map as M

-- | One instruction.
data Instr
  = Push Int
  | Add
  | Pop
  deriving (Show, Eq)

newtype Stack = Stack [Int]

type Program = [Instr]

class Pretty a where
  pretty :: a -> String

instance Pretty Instr where
  pretty = show

-- | Runs a program on an empty stack.
run :: Program -> Stack
run = foldl step (Stack [])

step :: Stack -> Instr -> Stack
step (Stack xs) (Push n) = Stack (n : xs)
step (Stack (a : b : xs)) Add = Stack (a + b : xs)
step (Stack (_ : xs)) Pop = Stack xs
step s _ = s
"""

LUA = """-- Tiny event emitter.
local Emitter = {}
Emitter.__index = Emitter

--- Creates an emitter.
function Emitter.new()
  return setmetatable({ handlers = {} }, Emitter)
end

function Emitter:on(name, fn)
  self.handlers[name] = self.handlers[name] or {}
  table.insert(self.handlers[name], fn)
end

Emitter.emit = function(self, name, ...)
  for _, fn in ipairs(self.handlers[name] or {}) do
    fn(...)
  end
end

local function noop() end

return Emitter
"""

ZIG = """const std = @import("std");

/// A growable stack of u32.
pub const Stack = struct {
    items: std.ArrayList(u32),

    pub fn init(allocator: std.mem.Allocator) Stack {
        return .{ .items = std.ArrayList(u32).init(allocator) };
    }

    /// Pushes one value.
    pub fn push(self: *Stack, v: u32) !void {
        try self.items.append(v);
    }
};

pub const Op = enum { push, pop };

fn double(x: u32) u32 {
    return x * 2;
}

test "push grows the stack" {
    var s = Stack.init(std.testing.allocator);
    try s.push(1);
}
"""

BASH = """#!/usr/bin/env bash
set -euo pipefail

LOG_DIR=${LOG_DIR:-/var/log/app}

# Prints a message with a timestamp.
log() {
  printf '%s %s\\n' "$(date +%T)" "$*"
}

function rotate {
  local keep=${1:-5}
  ls -1t "$LOG_DIR"/*.log | tail -n +"$((keep + 1))" | xargs -r rm --
}

main() {
  log "rotating"
  rotate 3
}

main "$@"
"""

EXPECTED = {
    'KOTLIN': ('src/main/kotlin/Warehouse.kt', CODE["kotlin"], [
        ('module', 1, 3), ('class Sku', 5, 7), ('interface StockRepository', 9, 12), ('class Warehouse', 14, 28),
        ('object NoStock', 30, 33), ('enum Unit', 35, 35), ('type Listener', 37, 37), ('function isValid', 39, 39),
    ]),
    'SCALA': ('src/main/scala/Billing.scala', CODE["scala"], [
        ('module', 1, 3), ('class Line', 5, 6), ('trait Discount', 8, 10), ('object Discount', 12, 21),
        ('class Invoice', 23, 27), ('type Cents', 29, 29), ('function render', 31, 32), ('extension Line', 34, 35),
    ]),
    'SWIFT': ('Sources/Todo.swift', CODE["swift"], [
        ('module', 1, 1), ('struct Todo', 3, 8), ('protocol TodoStore', 10, 13), ('class TodoList', 15, 28),
        ('extension Todo', 30, 38), ('enum Filter', 40, 42), ('function makeList', 44, 46),
    ]),
    'C': ('src/ring.c', CODE["c"], [
        ('module', 1, 4), ('struct ring_t', 6, 10), ('enum ring_status', 12, 12), ('function next', 14, 14),
        ('function ring_push', 16, 23), ('function ring_pop', 25, 31), ('function main', 33, 37),
    ]),
    'CPP': ('src/geo.cpp', CODE["cpp"], [
        ('module', 1, 3), ('namespace geo', 5, 32), ('method geo.distance', 34, 36), ('enum Shape', 38, 38),
        ('function main', 40, 43),
    ]),
    'CSHARP': ('src/Shelf.cs', CODE["csharp"], [
        ('module', 1, 2), ('namespace Library.Catalog', 4, 35),
    ]),
    'RUBY': ('lib/billing/invoice.rb', CODE["ruby"], [
        ('module', 1, 3), ('module Billing', 5, 29),
    ]),
    'PHP': ('src/Money.php', CODE["php"], [
        ('module', 1, 7), ('class Money', 9, 26), ('interface Priced', 28, 31), ('enum Currency', 33, 36),
        ('function format_money', 38, 41),
    ]),
    'ELIXIR': ('lib/chat/room.ex', CODE["elixir"], [
        ('module Chat.Room', 1, 24), ('module Chat.Message', 26, 28),
    ]),
    'HASKELL': ('src/Machine.hs', CODE["haskell"], [
        ('module', 1, 8), ('data Instr', 10, 15), ('newtype Stack', 17, 17), ('type Program', 19, 19),
        ('class Pretty', 21, 22), ('instance Pretty Instr', 24, 25), ('function run', 27, 29),
        ('function step', 31, 35),
    ]),
    'LUA': ('lua/emitter.lua', CODE["lua"], [
        ('module', 1, 3), ('function Emitter.new', 5, 8), ('function Emitter:on', 10, 13),
        ('function Emitter.emit', 15, 19), ('function noop', 21, 23),
    ]),
    'ZIG': ('src/stack.zig', CODE["zig"], [
        ('module', 1, 1), ('struct Stack', 3, 15), ('enum Op', 17, 17), ('function double', 19, 21),
        ('test "push grows the stack"', 23, 26),
    ]),
    'BASH': ('bin/rotate.sh', CODE["bash"], [
        ('module', 1, 4), ('function log', 6, 9), ('function rotate', 11, 14), ('function main', 16, 21),
    ]),
}


@pytest.mark.parametrize("language", sorted(EXPECTED))
def test_language_structure(language):
    path, chunker, expected = EXPECTED[language]
    name, chunks = chunk(path, globals()[language])
    assert name == chunker
    assert summary(chunks) == expected


def test_attached_comments_decorators_and_docs_start_the_unit():
    _, kotlin = chunk("Warehouse.kt", KOTLIN)
    assert kotlin[1].text.startswith("/** Stock kept per warehouse. */\n@JvmInline\nvalue class Sku")
    _, swift = chunk("Todo.swift", SWIFT)
    assert swift[3].text.startswith("@MainActor\nfinal class TodoList")
    _, haskell = chunk("Machine.hs", HASKELL)
    assert haskell[6].text.startswith("-- | Runs a program on an empty stack.\nrun :: Program -> Stack\nrun = ")
    _, lua = chunk("emitter.lua", LUA)
    assert lua[1].text.startswith("--- Creates an emitter.\nfunction Emitter.new()")


# ---- containers too big for one unit are split at their members, recursively


SPLITS = {
    # namespace → class → members; an auto-property is a field, a property with code a member; the
    # namespace's bare header (its name and brace) opens its first member's chunk
    "Shelf.cs": (
        CSHARP, "        private readonly List<Book> _books = new();\n", "private int _slot{i};", 70, " " * 8, [
        ("module", 1, 2), ("record Book", 4, 7), ("interface IShelf", 9, 13),
        ("class Shelf", 15, 88), ("method Shelf.Shelf", 90, 92), ("property Shelf.Books", 94, 94),
        ("method Shelf.Add", 96, 102), ("enum Genre", 104, 105),
    ]),
    # module → class → methods; a module's own ``def self.x`` is titled with the module; the bare
    # ``module Billing`` opens the class's (long) header chunk
    "invoice.rb": (RUBY, "    attr_reader :lines\n", "LIMIT_{i} = {i}", 70, "    ", [
        ("module", 1, 3), ("class Invoice", 5, 78), ("method Invoice.initialize", 80, 82),
        ("method Invoice.total", 84, 87), ("method Invoice.from_json", 89, 94), ("method Billing.currency", 96, 99),
    ]),
    # defmodule → def/defp/defmacro; clauses of one function form one unit; @doc/@spec/@impl attach
    "room.ex": (ELIXIR, "  alias Chat.Message\n", "@limit_{i} {i}", 70, "  ", [
        ("module Chat.Room", 1, 75), ("function Chat.Room.start_link", 77, 81), ("function Chat.Room.post", 83, 84),
        ("function Chat.Room.init", 86, 87), ("function Chat.Room.via", 89, 89), ("macro Chat.Room.log", 91, 94),
        ("module Chat.Message", 96, 98),
    ]),
    # const Stack = struct { fn ... }
    "stack.zig": (ZIG, "    items: std.ArrayList(u32),\n", "slot_{i}: u32 = {i},", 70, "    ", [
        ("module", 1, 1), ("struct Stack", 3, 75), ("method Stack.init", 77, 79), ("method Stack.push", 81, 85),
        ("enum Op", 87, 87), ("function double", 89, 91), ("test \"push grows the stack\"", 93, 96),
    ]),
    # namespace → class template → methods; an oversized header is windowed with the class title;
    # the bare ``namespace geo {`` opens the first member's chunk
    "geo.cpp": (CPP, " public:\n", "static constexpr int kCorner{i} = {i};", 70, "  ", [
        ("module", 1, 3), ("struct Point", 5, 10), ("class Polygon (lines 12-71)", 12, 71),
        ("class Polygon (lines 62-84)", 62, 84), ("method Polygon.Polygon", 85, 85),
        ("method Polygon.perimeter", 87, 92), ("method Polygon.size", 94, 102), ("method geo.distance", 104, 106),
        ("enum Shape", 108, 108), ("function main", 110, 113),
    ]),
    "Warehouse.kt": (
        KOTLIN, "    private val reserved = mutableMapOf<Sku, Int>()\n", "private val limit{i} = {i}", 70, " " * 4, [
        ("module", 1, 3), ("class Sku", 5, 7), ("interface StockRepository", 9, 12), ("class Warehouse", 14, 85),
        ("method Warehouse.reserve", 87, 93), ("companion object Companion", 95, 98), ("object NoStock", 100, 103),
        ("enum Unit", 105, 105), ("type Listener", 107, 107), ("function isValid", 109, 109),
    ]),
    # an object's nested case object and case class keep their own titles
    "Billing.scala": (SCALA, "object Discount {\n", "val Tier{i} = {i}", 75, "  ", [
        ("module", 1, 3), ("class Line", 5, 6), ("trait Discount", 8, 10), ("object Discount", 12, 87),
        ("object None", 88, 90), ("class Percent", 92, 96), ("class Invoice", 98, 102), ("type Cents", 104, 104),
        ("function render", 106, 107), ("extension Line", 109, 110),
    ]),
    "Todo.swift": (SWIFT, "extension Todo {\n", "static let sample{i} = {i}", 75, "    ", [
        ("module", 1, 1), ("struct Todo", 3, 8), ("protocol TodoStore", 10, 13), ("class TodoList", 15, 28),
        ("extension Todo", 30, 105), ("property Todo.isOverdue", 106, 106), ("method Todo.toggled", 108, 113),
        ("enum Filter", 115, 117),
        ("function makeList", 119, 121),
    ]),
    "Money.php": (PHP, "final class Money\n{\n", "private const LIMIT_{i} = {i};", 70, "    ", [
        ("module", 1, 7), ("class Money", 9, 83), ("method Money.__construct", 84, 89), ("method Money.plus", 91, 96),
        ("interface Priced", 98, 101), ("enum Currency", 103, 106), ("function format_money", 108, 111),
    ]),
}


@pytest.mark.parametrize("path", sorted(SPLITS))
def test_oversized_container_is_split_at_its_members(path):
    text, anchor, template, count, indent, expected = SPLITS[path]
    assert anchor in text
    padded = text.replace(anchor, anchor + padding(template, count, indent))
    _, chunks = chunk(path, padded)
    assert summary(chunks) == expected


def test_haskell_instance_split_groups_clauses_and_windows_the_big_one():
    clauses = padding('pretty (Push {i}) = "push {i}"', 80, "  ")
    text = HASKELL.replace("  pretty = show\n", clauses + "  pretty i = show i\n\n  prettyList = concatMap pretty\n")
    _, chunks = chunk("Machine.hs", text)
    # the bare ``instance Pretty Instr where`` opens the grouped clauses, windowed from it
    assert summary(chunks) == [
        ("module", 1, 8), ("data Instr", 10, 15), ("newtype Stack", 17, 17), ("type Program", 19, 19),
        ("class Pretty", 21, 22), ("method Instr.pretty (lines 24-83)", 24, 83),
        ("method Instr.pretty (lines 74-105)", 74, 105), ("method Instr.prettyList", 107, 107),
        ("function run", 109, 111), ("function step", 113, 117),
    ]
    assert chunks[5].text.startswith('instance Pretty Instr where\n  pretty (Push 0) = "push 0"')


def test_nested_namespaces_split_three_levels_deep():
    methods = "".join(
        f"            public int Get{k}()\n            {{\n" + "                var x = 1;\n" * 12
        + "                return x;\n            }\n\n" for k in range(5)
    )
    text = (
        "namespace Outer\n{\n    namespace Inner\n    {\n        public class Store\n        {\n"
        + methods + "        }\n    }\n}\n"
    )
    _, chunks = chunk("Store.cs", text)
    # each level's header (its name and brace) is bare: together they open the first method's chunk
    assert [c.title for c in chunks] == [
        "method Store.Get0", "method Store.Get1", "method Store.Get2", "method Store.Get3", "method Store.Get4",
    ]
    assert chunks[0].start_line == 1
    assert chunks[0].text.startswith(
        "namespace Outer\n{\n    namespace Inner\n    {\n        public class Store\n        {\n"
        "            public int Get0()\n"
    )
    assert chunks[-1].end_line == len(text.splitlines())


def test_small_container_stays_one_unit():
    _, chunks = chunk("invoice.rb", RUBY)
    assert summary(chunks) == [("module", 1, 3), ("module Billing", 5, 29)]


def test_ruby_rake_and_spec_blocks():
    text = (
        "namespace :cache do\n"
        "  desc \"Empties the cache\"\n"
        "  task clear: :environment do\n"
        "    Rails.cache.clear\n"
        "  end\n"
        "end\n"
        "\n"
        "describe Cart do\n"
        "  it \"starts empty\" do\n"
        "    expect(Cart.new).to be_empty\n"
        "  end\n"
        "end\n"
    )
    chunker, chunks = chunk("lib/tasks/cache.rake", text)
    assert chunker == CODE["ruby"]
    assert summary(chunks) == [("namespace cache", 1, 6), ("describe Cart", 8, 12)]
    padded = text.replace("    Rails.cache.clear\n", padding("Rails.cache.delete(:k{i})", 80, "    "))
    # the bare ``namespace :cache do`` opens the task, which is then windowed from it
    assert summary(chunk("Rakefile", padded)[1]) == [
        ("task clear (lines 1-60)", 1, 60), ("task clear (lines 51-85)", 51, 85), ("describe Cart", 87, 91),
    ]


# ---- parse errors cost structure only where they are


GO_WITH_GARBAGE = """package main

import "fmt"

// Greet prints a greeting.
func Greet(name string) {
\tfmt.Println("hello", name)
}

%%% pasted by accident ###

func Farewell(name string) {
\tfmt.Println("bye", name)
}

func main() {
\tGreet("a")
\tFarewell("b")
}
"""


def test_unparsed_run_becomes_a_lines_unit_and_structure_around_it_is_kept():
    chunker, chunks = chunk("main.go", GO_WITH_GARBAGE)
    assert chunker == "code:go/2"
    assert summary(chunks) == [
        ("module", 1, 3), ("function Greet", 5, 8), ("lines 10-10", 10, 10), ("function Farewell", 12, 14),
        ("function main", 16, 19),
    ]


def test_macros_do_not_cost_the_structure_of_a_c_file():
    text = (
        "#include \"uv.h\"\n\n"
        "#define DEFINE_INIT(name) \\\n  int name##_init(void) { return 0; }\n\n"
        "DEFINE_INIT(timer)\nDEFINE_INIT(idle)\n\n"
        "static int helper(int x) {\n  return x + 1;\n}\n\n"
        "int uv_run(void) {\n  return helper(1);\n}\n"
    )
    chunker, chunks = chunk("src/core.c", text)
    assert chunker == CODE["c"]
    assert summary(chunks) == [("module", 1, 7), ("function helper", 9, 11), ("function uv_run", 13, 15)]



# A macro before a constructor (``FMT_CONSTEXPR size_padding(...) : ...``) breaks tree-sitter's parse
# of the record, and error recovery swallows every definition after it into the record's body (fmt's
# format.h: 50 functions titled ``method size_padding.*`` until session 25). ALL_CAPS macros are now
# blanked before parsing (``code._blank_macros``); a lower-case one still breaks the record.
BROKEN_RECORD = (
    "namespace fmt {\n\n"
    "struct size_padding {\n  unsigned size;\n  unsigned padding;\n\n"
    "  fmt_constexpr size_padding(int num_digits, unsigned prefix)\n"
    "      : size(prefix + num_digits), padding(0) {\n    if (num_digits > 4) {\n      padding = 1;\n    }\n  }\n"
    "};\n\n"
    + "".join(
        f"template <typename Char, typename OutputIt>\n"
        f"FMT_CONSTEXPR FMT_INLINE auto write_{name}(OutputIt out, int arg) -> OutputIt {{\n"
        + padding("out = step(out, arg, {i});", 24, "  ")
        + "  return out;\n}\n\n"
        for name in ("int", "char", "float"))
    + "}  // namespace fmt\n"
)


def test_definitions_error_recovery_swallows_into_a_record_are_cut_and_titled_outside_it(monkeypatch):
    chunker, chunks = chunk("include/fmt/format.h", BROKEN_RECORD)
    assert chunker == CODE["cpp"]
    # (the broken parse loses the namespace too: its first line is an unparsed run)
    assert summary(chunks) == [
        ("lines 1-1", 1, 1), ("struct size_padding", 3, 13), ("function write_int", 15, 42),
        ("function write_char", 44, 71), ("function write_float", 73, 102)]
    # a record small enough for one unit ends where the swallowed definitions start (the macros
    # left in place, as a grammar meets those the blanking does not know)
    monkeypatch.setattr(code_module, "_blank_macros", lambda data: data)
    small = (
        "#include <string>\n\nnamespace fmt {\n\n"
        "// Size and padding computed apart from the writers.\n"
        "struct size_padding {\n  unsigned size;\n  unsigned padding;\n\n"
        "  FMT_CONSTEXPR size_padding(int num_digits, unsigned prefix)\n"
        "      : size(prefix + num_digits), padding(0) {\n    if (num_digits > 4) {\n      padding = 1;\n    }\n  }\n"
        "};\n\n"
        "template <typename Char, typename OutputIt>\n"
        "FMT_CONSTEXPR FMT_INLINE auto write_int(OutputIt out, int arg) -> OutputIt {\n"
        "  auto sp = size_padding(arg, 0);\n  return out;\n}\n\n"
        "template <typename Char, typename OutputIt>\n"
        "FMT_CONSTEXPR auto write_char(OutputIt out, Char value) -> OutputIt {\n"
        "  *out++ = value;\n  return out;\n}\n\n}  // namespace fmt\n"
    )
    assert summary(chunk("include/fmt/format.h", small)[1]) == [
        ("module", 1, 1), ("lines 3-3", 3, 3), ("struct size_padding", 5, 16), ("function write_int", 18, 22),
        ("function write_char", 24, 30)]
    # the record's own members keep its name; a record that parses keeps every member in it
    inner = "struct box {\n  int a;\n\n" + "".join(
        f"  int get_{n}() const {{\n" + padding("a += {i};", 24, "    ") + "    return a;\n  }\n\n"
        for n in ("x", "y", "z")) + "};\n"
    assert [c.title for c in chunk("box.hpp", inner)[1] if "get_" in c.title] == [
        "method box.get_x", "method box.get_y", "method box.get_z"]


EXPORTED_CLASS = (
    "// A file wrapper.\n#include <cstdio>\n\nFMT_BEGIN_NAMESPACE\n\n"
    "class FMT_API file {\n private:\n  int fd_;\n\n public:\n"
    "  FMT_CONSTEXPR file() noexcept : fd_(-1) {}\n\n  FMT_API file(const char* path, int oflag);\n\n"
    "  auto descriptor() const noexcept -> int { return fd_; }\n\n  FMT_API void close();\n};\n\n"
    "FMT_API auto open_file(const char* path) -> file;\n\nFMT_END_NAMESPACE\n"
)


def test_export_and_specifier_macros_do_not_cost_a_cpp_file_its_structure():
    # ``class FMT_API file`` parsed as written is a function named ``class``
    assert summary(chunk("include/fmt/os.h", EXPORTED_CLASS)[1]) == [("module", 1, 4), ("class file", 6, 22)]


def test_macros_are_blanked_in_place_and_only_where_they_cost_structure():
    text = (b"#define X(a) \\\nPERL_STATIC_INLINE U64 \\\nFNC\nPERL_STATIC_INLINE\nvoid f(void) {}\n"
            b"class FMT_API file {\n  FMT_CONSTEXPR file(int n)\n  FMT_CATCH(x)\n};\r\nFMT_BEGIN_NAMESPACE\r\n"
            b"int UINT_MAX_VALUE = 1;\n")
    blanked = code_module._blank_macros(text)
    assert len(blanked) == len(text) and blanked.count(b"\n") == text.count(b"\n")
    assert blanked.split(b"\n") == [
        b"#define X(a) \\", b"PERL_STATIC_INLINE U64 \\", b"FNC",  # a directive's lines stay
        b" " * 18, b"void f(void) {}", b"class         file {", b"                file(int n)",
        b"  FMT_CATCH(x)", b"};\r", b" " * 19 + b"\r", b"int UINT_MAX_VALUE = 1;", b""]
    assert code_module._blank_macros(b"int main(void) { return 0; }\n") == b"int main(void) { return 0; }\n"

def test_a_file_that_is_mostly_errors_falls_back_to_lines():
    python_source = (
        "import os\n\n\ndef main(argv):\n    for a in argv:\n        print(a, end='')\n"
        "    return {k: v for k, v in os.environ.items()}\n"
    )
    assert summary(chunk("Main.java", python_source)[1]) == [("lines 1-7", 1, 7)]
    assert chunk("main.go", python_source)[0] == "lines"


def test_missing_tokens_alone_are_not_errors():
    text = "#include \"uv.h\"\n\nDEFINE_WATCHER(prepare, PREPARE)\nDEFINE_WATCHER(check, CHECK)\n"
    chunker, chunks = chunk("w.c", text)
    assert chunker == CODE["c"]
    assert summary(chunks) == [("module", 1, 4)]


# ---- .h: C or C++


C_HEADER = """#ifndef RING_H
#define RING_H

#include <stddef.h>

/* A fixed-size ring buffer. */
typedef struct ring {
  int *data;
  size_t head, tail, cap;
} ring_t;

int ring_push(ring_t *r, int v);

static inline size_t ring_size(const ring_t *r) {
  return (r->head + r->cap - r->tail) % r->cap;
}

#endif
"""

CPP_HEADER = """#pragma once
#include <vector>

namespace ring {

template <typename T>
class Ring {
 public:
  void push(T v) { data_.push_back(v); }

 private:
  std::vector<T> data_;
};

}  // namespace ring
"""


def test_c_header_is_c():
    chunker, chunks = chunk("include/ring.h", C_HEADER)
    assert chunker == CODE["c"]
    assert summary(chunks) == [("module", 1, 4), ("struct ring", 6, 12), ("function ring_size", 14, 18)]


def test_cpp_header_is_cpp():
    chunker, chunks = chunk("include/ring.h", CPP_HEADER)
    assert chunker == CODE["cpp"]
    assert summary(chunks) == [("module", 1, 2), ("namespace ring", 4, 15)]


def test_header_that_only_the_cpp_grammar_parses_is_cpp():
    # no C++ keyword the sniff knows, but references and a trailing return type are not C
    text = (
        "#pragma once\n\ninline int& at(int* p, int i) { return p[i]; }\n\n"
        "auto twice(int x) -> int { return 2 * x; }\n"
    )
    chunker, chunks = chunk("util.h", text)
    assert chunker == CODE["cpp"]
    assert summary(chunks) == [("module", 1, 1), ("function at", 3, 3), ("function twice", 5, 5)]


def test_extern_c_and_preprocessor_blocks_are_looked_through():
    text = (
        "#ifdef __cplusplus\nextern \"C\" {\n#endif\n\n"
        "#if defined(_WIN32)\nint open_file(const wchar_t* name) {\n  return 0;\n}\n"
        "#else\nint open_file(const char* name) {\n  return 0;\n}\n#endif\n\n"
        "#ifdef __cplusplus\n}\n#endif\n"
    )
    chunker, chunks = chunk("file.h", text)
    assert chunker == CODE["c"]
    assert summary(chunks) == [("module", 1, 5), ("function open_file", 6, 9), ("function open_file", 10, 17)]


# ---- file names, grammars, start-up


@pytest.mark.parametrize(("path", "chunker"), [
    ("build.gradle.kts", CODE["kotlin"]), ("script.sc", CODE["scala"]), ("vec.hpp", CODE["cpp"]),
    ("impl.ipp", CODE["cpp"]), ("x.c++", CODE["cpp"]), ("tasks/db.rake", CODE["ruby"]), ("app.gemspec", CODE["ruby"]),
    ("Rakefile", CODE["ruby"]), ("Gemfile", CODE["ruby"]), ("test/room_test.exs", CODE["elixir"]),
    ("env.zsh", CODE["bash"]), ("run.bash", CODE["bash"]),
    ("Setup.lhs", "lines"), ("notes.txt", "lines"),
])
def test_file_names(path, chunker):
    assert chunk(path, "") == (chunker, [])


def test_missing_grammar_uses_lines(monkeypatch):
    monkeypatch.setattr(code_module, "_parser", lambda grammar: None)
    assert chunk("emitter.lua", LUA)[0] == "lines"
    assert chunk("ring.h", C_HEADER)[0] == "lines"


def test_grammars_are_imported_lazily():
    script = (
        "import sys\nimport ragit.ingest.code as c\n"
        "assert not [m for m in sys.modules if m.startswith('tree_sitter')], 'imported at start-up'\n"
        "c.chunk_code('a.lua', 'local x = 1\\n', 'local x = 1\\n')\n"
        "loaded = sorted(m for m in sys.modules if m.startswith('tree_sitter_') and '.' not in m)\n"
        "assert loaded == ['tree_sitter_lua'], loaded\n"
    )
    subprocess.run([sys.executable, "-c", script], check=True)


def test_every_new_language_is_deterministic_and_partitions_its_file():
    for language, (path, _, _) in EXPECTED.items():
        text = globals()[language]
        first = chunk(path, text)
        assert first == chunk(path, text)
        lines = text.splitlines()
        covered = {n for c in first[1] for n in range(c.start_line, c.end_line + 1)}
        assert all(n in covered for n, line in enumerate(lines, 1) if line.strip())


def test_a_parse_over_its_time_budget_falls_back_to_lines(monkeypatch):
    # some grammars spend minutes on a few KB of odd input; a budget of 0 s stands in for that
    monkeypatch.setattr(code_module, "PARSE_SECONDS", 0.0)
    assert chunk("Warehouse.kt", KOTLIN * 4)[0] == "lines"
    monkeypatch.undo()
    assert chunk("Warehouse.kt", KOTLIN)[0] == CODE["kotlin"]  # the halted parser is usable again


def test_a_file_ending_in_an_annotation_without_a_newline_is_chunked():
    # tree-sitter-kotlin 1.1's scanner loops for good inside one parse step, out of the time
    # budget's reach, when the last bytes are an annotation after a statement; every parse now
    # ends with a newline (the unclosed body still falls back to lines, as it should). A child
    # process, so that a regression fails instead of hanging the run.
    script = (
        "from ragit.ingest.code import _parsed, chunk_code\n"
        "assert _parsed('kotlin', b'val x = 1\\n@Foo').data.endswith(b'@Foo\\n')  # any caller's parse\n"
        "for text in ('val x = 1\\n@InternalApi', 'fun f() {\\n  val x = 1\\n  @Foo', 'val x = 1\\n@Foo(1)'):\n"
        "    name, chunks = chunk_code('src/A.kt', text, text, '2')\n"
        "    assert chunks[-1].end_line == text.count('\\n') + 1, (name, chunks)\n"
    )
    subprocess.run([sys.executable, "-c", script], check=True, timeout=60)


def test_every_grammar_parses_under_the_time_budget():
    # TSX (like the other grammars chunked before the budget existed) parsed without one: these
    # five shuffled lines of a component kept its error recovery busy for minutes. A child
    # process, so that a regression fails instead of hanging the run.
    text = ("const [rows, setRows] = useState(() => [\n  setRows(rows => rows.filter((_, i) => i !== k))\n"
            "  </li>\n  <ul>\n  name: 'one two',\n")
    script = (
        "from ragit.ingest import code\n"
        "code.PARSE_SECONDS = 0.2\n"
        f"assert code.chunk_code('src/List.tsx', {text!r}, {text!r})[0] == 'lines'\n"
        "assert code.chunk_code('src/List.tsx', 'const a = 1\\n', 'const a = 1\\n')[0].startswith('code:')\n"
    )
    subprocess.run([sys.executable, "-c", script], check=True, timeout=60)
