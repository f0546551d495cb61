"""Syntax a tree-sitter grammar cannot place, blanked for a second parse.

A parse with errors is tried again on the file with such syntax replaced by spaces
(``code._retry_blanked``); each blanked line keeps its length, so rows, columns and the chunks'
lines hold, and the chunks keep the text as written. A :data:`Blanker` gets the file's lines and
returns the changed ones, by row (empty when it found nothing to blank).

- Conditional compilation (C, C++, C#, Swift: :func:`directive_lines`): the grammars place
  ``#if`` / ``#else`` / ``#endif`` only between declarations or statements, so one between a
  switch's cases or inside a base list breaks the structure around it.
- TypeScript (:func:`typescript_syntax`): tree-sitter-typescript 0.23 reads neither a call
  signature's type parameters at the start of a line (``<T>(value: T): Box<T>`` after a member
  without a semicolon: ``number`` and ``<T>`` run together) nor variance annotations
  (``interface Queue<in out A>``); mobx's ``IObservableFactory`` and most of effect's modules
  became errors, some from their first line. Nor ``export type * from``.
- Kotlin (:func:`kotlin_syntax`): tree-sitter-kotlin 1.1 takes ``suspend`` used as a name for the
  keyword (respelled ``xuspend``, the same length), and reads neither annotations opening the
  line of a primary constructor nor multi-dollar strings (blanked).

The TypeScript and Kotlin blankers look only at the lines a search for a literal finds
(:func:`_candidate_rows`): the rules tried at every line took 20 to 60 times as long.
"""

from __future__ import annotations

import re
from collections.abc import Callable

Blanker = Callable[[list[bytes]], "dict[int, bytes]"]


def _spaces(line: bytes, spans: list[tuple[int, int]]) -> bytes:
    out = bytearray(line)
    for a, b in spans:
        out[a:b] = b" " * (b - a)
    return bytes(out)


def directive_lines(pattern: "re.Pattern[bytes]") -> Blanker:
    """A blanker of the whole lines ``pattern`` matches at their start, and of the lines a
    backslash continues them onto."""

    def blank(lines: list[bytes]) -> dict[int, bytes]:
        out: dict[int, bytes] = {}
        continued = False
        for i, line in enumerate(lines):
            if continued or pattern.match(line):
                continued = line.rstrip(b" \t\r").endswith(b"\\")
                out[i] = b" " * len(line)
        return out

    return blank


#: ``in`` / ``out`` / ``in out`` before a type parameter's name (``<in out K, out V = never>``):
#: after ``<`` or ``,`` or at a line's start, and followed by a name that ends the parameter or
#: opens its constraint or default
_VARIANCE = re.compile(
    rb"(?:^|(?<=[<,]))[ \t]*((?:in[ \t]+)?out|in)[ \t]+(?=[A-Za-z_$][\w$]*[ \t]*(?:[,=>]|extends\b|\r?$))")
#: ``export type * from``: the grammar reads ``export * from`` only
_EXPORT_TYPE_STAR = re.compile(rb"[ \t]*export[ \t]+(type)[ \t]+\*")
#: the lines worth those two rules, and lines opening with ``<`` (not ``</``, ``<<``, ``<=``): each
#: pattern starts with a literal, which ``re`` searches for fast (the rules themselves tried at
#: every line, or at every byte, took 20 to 60 times as long on effect's ``Effect.ts``)
_CANDIDATES = (re.compile(rb"in[ \t]+[A-Za-z_$]"), re.compile(rb"out[ \t]+[A-Za-z_$]"),
               re.compile(rb"export[ \t]+type[ \t]+\*"), re.compile(rb"\n[ \t]*<(?![/<=])"))
#: how many lines a call signature's type parameters may span (redux's ``StoreCreator``: 7)
_TYPE_PARAMETER_LINES = 30


def _type_parameters_end(lines: list[bytes], row: int, column: int) -> tuple[int, int] | None:
    """(row, column) just past the ``>`` closing the ``<`` at (row, column) when the next
    character on that line (spaces aside) is ``(``, else None. ``=>`` inside (a function type)
    does not close; a ``;`` before the end means no type parameters."""
    depth = 0
    for r in range(row, min(row + _TYPE_PARAMETER_LINES, len(lines))):
        line = lines[r]
        c = column if r == row else 0
        while c < len(line):
            ch = line[c]
            if ch == 0x3C:  # <
                depth += 1
            elif ch == 0x3E and not (c and line[c - 1] == 0x3D):  # > (not =>)
                depth -= 1
                if depth == 0:
                    rest = line[c + 1:].lstrip(b" \t")
                    return (r, c + 1) if rest[:1] == b"(" else None
            elif ch == 0x3B:  # ;
                return None
            c += 1
    return None


def typescript_syntax(lines: list[bytes]) -> dict[int, bytes]:
    """The lines with the type parameters of a call signature that opens a line (``<K, V>(``, over
    several lines too), variance annotations or the ``type`` of ``export type *`` blanked."""
    out: dict[int, bytes] = {}
    for row in sorted({0, *_candidate_rows(b"\n".join(lines), _CANDIDATES)}):
        line = out.get(row, lines[row])  # (a line inside blanked type parameters is looked at blanked)
        stripped = line.lstrip(b" \t")
        if stripped[:1] == b"<" and stripped[1:2] not in (b"/", b"<", b"="):
            column = len(line) - len(stripped)
            end = _type_parameters_end(lines, row, column)
            if end is not None:
                last, stop = end
                for r in range(row, last + 1):
                    out[r] = _spaces(out.get(r, lines[r]), [(column if r == row else 0, stop if r == last else len(lines[r]))])
                line = out[row]
        spans = [m.span(1) for m in _VARIANCE.finditer(line)]
        star = _EXPORT_TYPE_STAR.match(line)
        if star:
            spans.append(star.span(1))
        if spans:
            out[row] = _spaces(line, spans)
    return out


#: Kotlin: ``suspend`` as a name (a named argument ``suspend = { … }``, the standard library's
#: ``suspend { … }``, a call of a parameter named so, ``suspend(waiter)``), respelled ``xuspend``;
#: the annotations opening a line that holds a primary constructor (``@PublishedApi internal
#: constructor(…)`` under ``value class ChannelResult<out T>``); the ``$`` prefix of a
#: multi-dollar string (``$$"…"``, Kotlin 2.2)
_KOTLIN_SUSPEND = re.compile(rb"\b(suspend)(?=[ \t]*(?:=(?!=)|\{)|\()")
_KOTLIN_CONSTRUCTOR = re.compile(
    rb"[ \t]*((?:@[\w.]+(?:\([^()\n]*\))?[ \t]+)+)(?:(?:public|private|protected|internal)[ \t]+)?constructor\b")
_KOTLIN_DOLLARS = re.compile(rb"(\$\$+)(?=\")")
_KOTLIN_CANDIDATES = (re.compile(rb"suspend[ \t]*[={(]"), re.compile(rb"constructor"), re.compile(rb"\$\$"))


def _candidate_rows(data: bytes, patterns: "tuple[re.Pattern[bytes], ...]") -> list[int]:
    """The rows (sorted) of ``data`` (the lines joined) where a match of one of ``patterns`` ends
    (each starts with a literal, which ``re`` searches for fast; a match may start with the
    newline before its row)."""
    rows = set()
    row = previous = 0
    for at in sorted(m.end() - 1 for pattern in patterns for m in pattern.finditer(data)):
        row += data.count(b"\n", previous, at)
        previous = at
        rows.add(row)
    return sorted(rows)


def kotlin_syntax(lines: list[bytes]) -> dict[int, bytes]:
    """The lines with the Kotlin that tree-sitter-kotlin 1.1 cannot read respelled or blanked: a
    soft keyword used as a name, a primary constructor's annotations opening its line, the ``$``
    prefix of a multi-dollar string."""
    out: dict[int, bytes] = {}
    for row in _candidate_rows(b"\n".join(lines), _KOTLIN_CANDIDATES):
        line = lines[row]
        changed = bytearray(line)
        for m in _KOTLIN_SUSPEND.finditer(line):
            changed[m.start(1):m.start(1) + 1] = b"x"
        m = _KOTLIN_CONSTRUCTOR.match(line)
        if m:
            changed[m.start(1):m.end(1)] = b" " * (m.end(1) - m.start(1))
        for m in _KOTLIN_DOLLARS.finditer(line):
            changed[m.start(1):m.end(1)] = b" " * (m.end(1) - m.start(1))
        if changed != line:
            out[row] = bytes(changed)
    return out
