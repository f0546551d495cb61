"""What the code-chunking tests share: chunk a text as its own masked text, and a chunk list's
(title, start line, end line) summary."""

from __future__ import annotations

from ragit.ingest.code import chunk_code


def chunk(path: str, text: str):
    return chunk_code(path, text, text)


def summary(chunks):
    return [(c.title, c.start_line, c.end_line) for c in chunks]


def padding(template: str, count: int, indent: str) -> str:
    """``count`` lines of ``template`` (formatted with ``i``), each indented by ``indent``."""
    return "".join(f"{indent}{template.format(i=i)}\n" for i in range(count))
