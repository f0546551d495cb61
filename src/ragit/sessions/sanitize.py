"""FTS5 query sanitiser (memory §8.1).

User queries are keyword lists, not FTS5 programs: punctuation such as ``-`` or ``:`` would
otherwise be parsed as operators or column filters and turn an ordinary search
(``file-not-found``) into a syntax error. Tokens that FTS5 accepts as barewords are kept
as they are; everything else becomes a quoted phrase.
"""

from __future__ import annotations

_OPERATOR_CHARS = frozenset("-.:()*^+")


def _is_bare_char(char: str) -> bool:
    if char.isascii():
        return char.isalnum() or char == "_"
    return char.isalpha()


def sanitize_fts_query(query: str) -> str:
    """Return an FTS5 MATCH expression for ``query``; ``""`` means "do not search"."""
    tokens: list[str] = []
    for token in query.split():
        if all(char in _OPERATOR_CHARS for char in token):
            continue
        if all(_is_bare_char(char) for char in token):
            tokens.append(token)
        else:
            tokens.append('"' + token.replace('"', '""') + '"')
    return " ".join(tokens)
