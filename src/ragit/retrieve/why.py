"""``why``: the commits that introduced and last changed some lines, and the memory resting on
them (knowledge §22.3).

The git walk is ragit.gitsnap.linehistory (``git log -L`` for a range, ``--follow`` for a whole
file); this module validates the target like ``verify`` validates a handle, masks every hunk and
subject (knowledge §10.2: everything not from the store is masked on output), keeps the answer
bounded (newest commits plus the one that introduced the lines) and asks the caller's
:class:`MemoryCitations` for the memory items citing the lines. Retrieval never imports memory:
the higher layer (``Repo.why``) passes that lookup in; without it the list is empty. Read-only.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime, timezone
from typing import Any, Protocol

from ..errors import RagitError, input_invalid
from ..gitsnap.git import Git, GitError, decode_path
from ..gitsnap.linehistory import LineCommit, MissingHistory, line_history
from ..gitsnap.refs import resolve_at
from ..history.hunks import capped, masked_diff, printable_path

DEFAULT_LIMIT = 10  # commits reported (the newest, plus the introducing one when cut)
MAX_LIMIT = 1000
MAX_HUNK_LINES = 80  # per commit; a longer hunk is cut with a marker line
MAX_HUNK_CHARS = 8000
MAX_MESSAGE_LINES = 40  # the whole commit message, cut like a hunk
MAX_MESSAGE_CHARS = 4000
_RANGE = re.compile(r"^(?P<path>.+?):L(?P<start>[0-9]+)(?:-L(?P<end>[0-9]+))?$")


@dataclass(frozen=True)
class WhyTarget:
    """A parsed ``<path>[:L<start>-L<end>]`` (``:L<n>`` is one line)."""

    path: str
    start: int | None
    end: int | None

    def display(self) -> str:
        return self.path if self.start is None else f"{self.path}:L{self.start}-L{self.end}"


class MemoryCitations(Protocol):
    """Memory items whose evidence cites some lines: supplied by the memory plane (``Repo.why``)."""

    def items_citing(self, path: str, start: int | None, end: int | None, sha: str) -> Sequence[Mapping[str, Any]]:
        """The items with an evidence handle on ``path`` overlapping ``start..end`` (anywhere in the
        file when None), as JSON-ready objects carrying at least ``id`` and ``stale`` (their
        evidence read against commit ``sha``), in a stable order."""
        ...


def parse_target(target: str) -> WhyTarget:
    """``path``, ``path:L7`` or ``path:L7-L12``; a bad range is INPUT_INVALID (the path is checked
    against the commit later, as ``verify`` does)."""
    text = target.strip()
    if not text:
        raise input_invalid("path", "empty", "why needs a path, e.g. src/app.py:L10-L24", command="why")
    m = _RANGE.match(text)
    if m is None:
        return WhyTarget(_normal(text), None, None)
    start = int(m["start"])
    end = int(m["end"]) if m["end"] is not None else start
    if not 1 <= start <= end:
        raise input_invalid("path", "invalid_range",
                            f"{target!r}: lines are 1-based and start ≤ end (path:L<start>-L<end>)",
                            command="why", value=target)
    return WhyTarget(_normal(m["path"]), start, end)


def _normal(path: str) -> str:
    import posixpath

    norm = posixpath.normpath(path.replace("\\", "/")) if path not in ("", ".") else path
    return norm[2:] if norm.startswith("./") else norm


def _not_found(target: str, reason: str, message: str) -> RagitError:
    return RagitError("CITATION_NOT_FOUND", message, {"citation": target, "reason": reason}, "ragit doctor")


def _file_lines(git: Git, commit: str, path: str) -> int | None:
    """The number of lines of ``path`` at ``commit``; None when it is not a file there, -1 when
    its blob is missing from the clone."""
    out = git.run("ls-tree", "-z", "--full-tree", commit, "--", path)
    blob = None
    for record in out.split(b"\0"):
        meta, _, name = record.partition(b"\t")
        fields = meta.split()
        if len(fields) == 3 and fields[1] == b"blob" and decode_path(name) == path:
            blob = fields[2].decode()
    if blob is None:
        return None
    try:
        data = git.run("cat-file", "blob", blob)
    except GitError:
        return -1  # the blob is not in this clone
    if not data:
        return 0
    return data.count(b"\n") + (0 if data.endswith(b"\n") else 1)


def _iso(seconds: int) -> str:
    from ..clock import format_iso

    return format_iso(datetime.fromtimestamp(seconds, timezone.utc))


def _entry(c: LineCommit) -> tuple[dict[str, Any], dict[str, int]]:
    """One commit as reported, and the secrets masking hid per field."""
    from ..security.masking import mask_text

    hunk, n = masked_diff(capped(c.hunk_text(), MAX_HUNK_LINES, MAX_HUNK_CHARS), c.path)
    subject = mask_text(c.subject)
    message = mask_text(capped(c.message, MAX_MESSAGE_LINES, MAX_MESSAGE_CHARS))
    path = mask_text(printable_path(c.path))
    entry = {"sha": c.sha, "subject": subject.text, "committedAt": _iso(c.committed), "path": path.text,
             "message": message.text, "hunk": hunk}
    return entry, {"subject": subject.count, "path": path.count, "message": message.count, "hunk": n}


def select_commits(commits: list[LineCommit], limit: int) -> tuple[list[LineCommit], int]:
    """The newest ``limit`` commits; when that cuts the list, the newest ``limit - 1`` plus the
    oldest (the one that introduced the lines). Returns the kept commits and how many were left out."""
    if len(commits) <= limit:
        return commits, 0
    if limit == 1:
        return commits[:1], len(commits) - 1
    return commits[: limit - 1] + commits[-1:], len(commits) - limit


PARTIAL_WARNING = ("this clone lacks objects of older history (partial or damaged): only the newest commits "
                   "are shown and the introducing commit is unknown")


def _walk(git: Git, sha: str, parsed: WhyTarget, limit: int, target: str,
          warnings: list[str]) -> tuple[list[LineCommit], bool]:
    """The line history and whether it is complete. A clone missing older objects still answers
    with the newest ``limit`` commits (git stops before the objects it lacks), or for a whole
    file with its commits under its present name, without hunks; a range it cannot walk at all
    is CITATION_NOT_FOUND (``missing_object``)."""
    try:
        return line_history(git, sha, parsed.path, parsed.start, parsed.end), True
    except MissingHistory:
        warnings.append(PARTIAL_WARNING)
    try:
        return line_history(git, sha, parsed.path, parsed.start, parsed.end, max_count=limit), False
    except MissingHistory:
        if parsed.start is None:
            try:
                return line_history(git, sha, parsed.path, max_count=limit, patches=False), False
            except MissingHistory:
                pass
    raise _not_found(target, "missing_object",
                     f"the history of {parsed.display()} needs objects this clone does not have (partial clone?)")


def why(git: Git, target: str, *, at: str = "HEAD", limit: int = DEFAULT_LIMIT,
        memory: MemoryCitations | None = None, commit: str | None = None) -> dict[str, Any]:
    """The ``data`` of ``ragit why`` for ``target`` at ``at`` (§5.1 resolution) or at the full SHA
    ``commit`` (already resolved; a bare repository's caller passes it). Read-only."""
    parsed = parse_target(target)
    if not isinstance(limit, int) or isinstance(limit, bool) or not 1 <= limit <= MAX_LIMIT:
        raise input_invalid("--limit", "out_of_range", f"--limit must be an integer from 1 to {MAX_LIMIT}",
                            command="why", value=limit)
    from .verify import outside_repo

    if outside_repo(parsed.path):
        raise _not_found(target, "path_outside_repo", f"{parsed.path} is not a path inside the repository")
    sha = commit if commit is not None else resolve_at(git, at)
    total = _file_lines(git, sha, parsed.path) if parsed.path not in ("", ".") else None
    if total is None:
        raise _not_found(target, "path_not_in_commit", f"{parsed.path} is not a file of commit {sha}")
    if total < 0:
        raise _not_found(target, "missing_object", f"{parsed.path} at {sha} is not in this clone (partial clone?)")
    if parsed.end is not None and parsed.end > total:
        raise _not_found(target, "lines_out_of_range",
                         f"{parsed.path} has {total} lines at {sha}; asked for L{parsed.start}-L{parsed.end}")
    warnings: list[str] = []
    history, complete = _walk(git, sha, parsed, limit, target, warnings)
    kept, omitted = select_commits(history, limit)
    entries: list[dict[str, Any]] = []
    masked, sources = 0, []
    for i, c in enumerate(kept):
        entry, counts = _entry(c)
        entries.append(entry)
        for name, n in counts.items():
            if n:
                masked += n
                sources.append(f"commits[{i}].{name}")
    oldest = history[-1] if history and complete else None
    items: list[Any] = []
    if memory is not None:  # re-masked like every output (knowledge §10.2)
        from ..security.masking import mask_value

        found = [dict(item) for item in memory.items_citing(parsed.path, parsed.start, parsed.end, sha)]
        items, n, paths = mask_value(found, path="memoryItems")
        masked += n
        sources += paths
    return {
        "path": parsed.path,
        "startLine": parsed.start,
        "endLine": parsed.end,
        "sha": sha,
        "commits": entries,
        "lastChanged": history[0].sha if history else None,
        "introduced": oldest.sha if oldest is not None and oldest.adds else None,
        "omitted": omitted,
        "memoryItems": items,
        "warnings": warnings,
        "redactionSummary": {"applied": masked > 0, "maskedCount": masked, "sources": sources},
    }
