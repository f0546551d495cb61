"""Diff hunks as ragit shows and stores them: cut to a size, secrets masked (knowledge §10).

Shared by ``why`` (hunks in its answer) and the history index (hunks stored for search).
"""

from __future__ import annotations


def printable_path(path: str) -> str:
    """A path as text that can be stored and printed: bytes that are not UTF-8 (kept by git as
    surrogate escapes) become U+FFFD. For display and search only, never to read a file."""
    return path.encode("utf-8", "surrogateescape").decode("utf-8", "replace")


def capped(text: str, max_lines: int, max_chars: int) -> str:
    """``text`` cut to ``max_lines`` lines and ``max_chars`` characters, with a marker line."""
    lines = text.split("\n")
    kept: list[str] = []
    used = 0
    for line in lines:
        if len(kept) == max_lines or used + len(line) + 1 > max_chars:
            kept.append(f"... ({len(lines) - len(kept)} more lines)")
            break
        kept.append(line)
        used += len(line) + 1
    return "\n".join(kept)


def masked_diff(text: str, path: str) -> tuple[str, int]:
    """A unified diff masked line by line, and how many secrets that hid. Rules anchored at a
    line start (a ``.env`` assignment, a PEM block) must see each line without the
    ``+``/``-``/`` `` column, so each side (context plus removed, context plus added lines) is
    masked as the file read at one commit, in code mode for source files; then the whole text
    once more (headers, anything a side did not show). Lines and prefixes are kept."""
    from ..pathroles import is_source_path
    from ..security.masking import code_mode, mask_text

    code = code_mode(path, "code" if is_source_path(path) else "doc")
    lines = text.split("\n")
    body = [i for i, line in enumerate(lines) if line[:1] in (" ", "-", "+") and not line.startswith(("---", "+++"))]
    out = list(lines)
    count = 0
    for side in ("-", "+"):
        rows = [i for i in body if lines[i][:1] in (" ", side)]
        if not rows:
            continue
        result = mask_text("\n".join(lines[i][1:] for i in rows), code=code)
        count += result.count
        for i, masked in zip(rows, result.text.split("\n")):
            if lines[i][:1] == side or masked != lines[i][1:]:
                out[i] = lines[i][:1] + masked
    final = mask_text("\n".join(out), code=code)
    return final.text, count + final.count
