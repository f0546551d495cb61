"""Code-aware lexical analysis for the keyword index (knowledge §11.5).

SQLite's ``unicode61`` tokenizer already splits ``send_file`` into ``send`` and ``file``, but it
keeps ``sendFile`` whole and never produces the joined ``sendfile``; so a query that names an
identifier in one style misses code written in the other. For every identifier with more than
one part, the index gets an extra *symbols* field with the joined form and the camelCase parts,
and a query gets the same expansion. Stemming (``porter``) is applied by the FTS tokenizer.
"""

from __future__ import annotations

import re

_IDENTIFIER = re.compile(r"[A-Za-z][A-Za-z0-9_]*[A-Za-z0-9]|[A-Za-z]")
_PARTS = re.compile(r"[A-Z]+(?=[A-Z][a-z])|[A-Z]?[a-z]+|[A-Z]+|[0-9]+")


def identifier_parts(word: str) -> list[str]:
    """``HTTPServerError`` → ``http, server, error``; ``send_file`` → ``send, file`` (lower case)."""
    return [p.lower() for chunk in word.split("_") if chunk for p in _PARTS.findall(chunk)]


def symbol_terms(text: str) -> list[str]:
    """Joined forms and camelCase parts of the multi-part identifiers in ``text``, first-seen order.

    Snake-case parts are left out: the FTS tokenizer produces them from the text itself. Every
    indexed chunk goes through this, so each distinct word is looked at once, and a plain word
    (letters only, lower case, capitalised or all capitals: always one part) is skipped early.
    """
    out: dict[str, None] = {}
    for word in dict.fromkeys(_IDENTIFIER.findall(text)):
        if word.isalpha() and (word.islower() or word.isupper() or word[1:].islower()):
            continue
        parts = identifier_parts(word)
        if len(parts) < 2:
            continue
        out.setdefault("".join(parts), None)
        if any(c.isupper() for c in word[1:]):
            for part in parts:
                out.setdefault(part, None)
    return list(out)


def symbols_field(text: str) -> str:
    """The symbols field of one indexed chunk: its symbol terms separated by spaces."""
    return " ".join(symbol_terms(text))
