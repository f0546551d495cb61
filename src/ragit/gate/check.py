"""Does the evidence an edit rests on still match the working tree? (knowledge §22.4, issue 17)

Two sets of citations are checked against the files on disk (not a commit: the agent is about
to edit the working tree): the citations of the last pack, packet or query the MCP server served
this session (:mod:`ragit.gate.served`), and the evidence of current memory decisions and open
loops that cite the edited file. A range is current when the file still has the cited blob, or
the cited lines unchanged at the same or other lines (``verify``'s ``ok``/``shifted``; the
line search is :func:`ragit.ingest.text.locate_block`, shared with verify).

The hook runs before every edit, so this module imports nothing at load time beyond ``json``
and ``os``; git (one ``cat-file --batch``) and the text helpers are loaded only when a cited file
has changed.
"""

from __future__ import annotations

import json
import os

TYPE_CHECKING = False
if TYPE_CHECKING:  # pragma: no cover
    from typing import Any

EDIT_TOOLS = ("Edit", "Write", "MultiEdit", "NotebookEdit")
MODES = ("warn", "block")
CURRENT = ("ok", "shifted")
REFRESH = "ragit context pack \"<your task>\" (or the MCP tool context_pack) for fresh citations"
MAX_LISTED = 8


class Range:
    """One cited range and where it came from (``served``, ``decision`` or ``open_loop``).

    ``digest`` (served ranges) is :func:`text_digest` of the cited lines, ``first`` that of their
    first line: with them a changed file is searched without reading the cited blob from git."""

    __slots__ = ("path", "blob_id", "start", "end", "origin", "title", "digest", "first")

    def __init__(self, path: str, blob_id: str, start: int, end: int, origin: str, title: str = "",
                 digest: str | None = None, first: str | None = None) -> None:
        self.path, self.blob_id, self.start, self.end, self.origin, self.title = path, blob_id, start, end, origin, title
        self.digest, self.first = digest, first

    def handle(self) -> str:
        return f"{self.path}@{self.blob_id[:12]}:L{self.start}-L{self.end}"


class GateResult:
    __slots__ = ("drifted", "memory_current", "checked")

    def __init__(self) -> None:
        self.drifted: list[tuple[Range, str]] = []  # (range, status)
        self.memory_current: list[Range] = []
        self.checked = 0


def _sha1():
    try:
        from _sha1 import sha1  # the built-in module: spares hashlib's OpenSSL load
    except ImportError:  # pragma: no cover
        from hashlib import sha1
    return sha1


def blob_hash(data: bytes) -> str:
    """Git's object id of ``data`` as a blob (no filters applied)."""
    return _sha1()(b"blob %d\0" % len(data) + data).hexdigest()


def text_digest(lines: list[str]) -> str:
    from ..ingest.text import text_digest as digest

    return digest(lines)


def locate_digest(lines: list[str], r: Range) -> int | None:
    """Start of the window of ``r``'s size whose digest is ``r.digest``, nearest ``r.start``."""
    size, sha1 = r.end - r.start + 1, _sha1()
    best: int | None = None
    for i, line in enumerate(lines):
        start = i + 1
        if best is not None and abs(start - r.start) >= abs(best - r.start):
            if start > r.start:
                break
            continue
        if sha1(line.encode("utf-8", "surrogatepass")).hexdigest() == r.first \
                and i + size <= len(lines) and text_digest(lines[i : i + size]) == r.digest:
            best = start
    return best


def parse_stored(handle: str) -> tuple[str, str, int, int] | None:
    """``path@<40 hex blob>:L<start>-L<end>`` → parts (memory §10's stored form), else None."""
    path, at, rest = handle.rpartition("@")
    blob, colon, lines = rest.partition(":")
    if not (path and at and colon and len(blob) == 40 and lines.startswith("L")):
        return None
    start, dash, end = lines[1:].partition("-L")
    if not (dash and start.isdigit() and end.isdigit()) or any(c not in "0123456789abcdef" for c in blob):
        return None
    return path, blob, int(start), int(end)


def _lines(data: bytes) -> list[str]:
    from ..ingest.text import blob_lines

    return blob_lines(data)


def read_blobs(root: str, oids: list[str]) -> dict[str, bytes]:
    """Blob contents through one ``git cat-file --batch`` (absent objects are left out)."""
    if not oids:
        return {}
    import subprocess

    proc = subprocess.run(["git", "-C", root, "cat-file", "--batch"], input="".join(f"{o}\n" for o in oids).encode(),
                          capture_output=True, check=False)
    out: dict[str, bytes] = {}
    data, pos = proc.stdout, 0
    for oid in oids:
        end = data.find(b"\n", pos)
        if end < 0:
            break
        header = data[pos:end].split()
        pos = end + 1
        if len(header) != 3:  # "<oid> missing"
            continue
        size = int(header[2])
        out[oid] = data[pos : pos + size]
        pos += size + 1
    return out


def served_ranges(record: dict[str, Any] | None) -> list[Range]:
    out = []
    for c in (record or {}).get("citations") or []:
        if isinstance(c, dict) and isinstance(c.get("path"), str) and isinstance(c.get("blobId"), str) \
                and isinstance(c.get("startLine"), int) and isinstance(c.get("endLine"), int):
            digest, first = c.get("textDigest"), c.get("firstLineDigest")
            out.append(Range(c["path"], c["blobId"], c["startLine"], c["endLine"], "served", "",
                             digest if isinstance(digest, str) else None, first if isinstance(first, str) else None))
    return out


def memory_ranges(root: str, working_dir: str, edited: str) -> list[Range]:
    """Evidence of current decisions and open loops (``current.json``) on the edited file."""
    try:
        with open(os.path.join(root, working_dir, "current.json"), encoding="utf-8") as fh:
            current = json.loads(fh.read())
    except (OSError, ValueError):
        return []
    if not isinstance(current, dict):
        return []
    out = []
    for key, origin in (("decisions", "decision"), ("openLoops", "open_loop")):
        items = current.get(key)
        for item in items if isinstance(items, list) else []:
            evidence = item.get("evidence") if isinstance(item, dict) else None
            for ev in evidence if isinstance(evidence, list) else []:
                parts = parse_stored(str(ev.get("handle", ""))) if isinstance(ev, dict) else None
                if parts is not None and parts[0] == edited:
                    digest, first = ev.get("textDigest"), ev.get("firstLineDigest")
                    out.append(Range(*parts, origin, str(item.get("title", "")),
                                     digest if isinstance(digest, str) else None,
                                     first if isinstance(first, str) else None))
    return out


def check_ranges(root: str, ranges: list[Range]) -> list[str]:
    """The status of each range against the working tree: ok, shifted, changed or deleted."""
    files: dict[str, bytes | None] = {}
    for r in ranges:
        if r.path not in files:
            try:
                with open(os.path.join(root, r.path), "rb") as fh:
                    files[r.path] = fh.read()
            except OSError:
                files[r.path] = None
    hashes = {p: blob_hash(data) for p, data in files.items() if data is not None}
    changed = [r for r in ranges if r.path in hashes and hashes[r.path] != r.blob_id and r.digest is None]
    # ranges without a digest whose file changed need the cited text: one cat-file for all of them
    blobs = read_blobs(root, sorted({r.blob_id for r in changed})) if changed else {}
    now_lines: dict[str, list[str]] = {}
    statuses = []
    for r in ranges:
        data = files[r.path]
        if data is None:
            statuses.append("deleted")
        elif hashes[r.path] == r.blob_id:
            statuses.append("ok")
        elif r.digest is not None and r.first is not None:
            if r.path not in now_lines:
                now_lines[r.path] = _lines(data)
            found = locate_digest(now_lines[r.path], r)
            statuses.append("changed" if found is None else ("ok" if found == r.start else "shifted"))
        elif r.blob_id not in blobs:
            statuses.append("changed")  # the cited text cannot be read: treat as drift
        else:
            from ..ingest.text import locate_block

            cited = _lines(blobs[r.blob_id])[r.start - 1 : r.end]
            if r.path not in now_lines:
                now_lines[r.path] = _lines(data)
            found = locate_block(now_lines[r.path], cited, r.start) if len(cited) == r.end - r.start + 1 else None
            statuses.append("changed" if found is None else ("ok" if found == r.start else "shifted"))
    return statuses


def evaluate(root: str, edited: str, record: dict[str, Any] | None, working_dir: str) -> GateResult:
    ranges = served_ranges(record) + memory_ranges(root, working_dir, edited)
    result = GateResult()
    result.checked = len(ranges)
    for r, status in zip(ranges, check_ranges(root, ranges)):
        if status in CURRENT:
            if r.origin != "served":
                result.memory_current.append(r)
        else:
            result.drifted.append((r, status))
    return result


def message(result: GateResult, edited: str) -> str:
    """The short text the agent sees (the deny reason, or context in warn mode)."""
    lines = []
    if result.drifted:
        lines.append(f"ragit gate: {len(result.drifted)} citation(s) this edit relies on no longer match the "
                     f"working tree:")
        for r, status in result.drifted[:MAX_LISTED]:
            what = "served" if r.origin == "served" else f"{r.origin.replace('_', ' ')} \"{r.title}\""
            lines.append(f"- {r.handle()} ({status}; {what})")
        if len(result.drifted) > MAX_LISTED:
            lines.append(f"- … {len(result.drifted) - MAX_LISTED} more")
        lines.append(f"Refresh: {REFRESH}; `ragit memory verify` lists stale memory.")
    if result.memory_current:
        lines.append(f"ragit memory citing {edited}:")
        for r in result.memory_current[:MAX_LISTED]:
            lines.append(f"- {r.origin.replace('_', ' ')} \"{r.title}\" ({r.handle()})")
    return "\n".join(lines)


def hook_output(result: GateResult, edited: str, mode: str) -> dict[str, Any] | None:
    """The ``PreToolUse`` JSON: deny with the reason (block mode, drift), else context; None = silent."""
    if not result.drifted and not result.memory_current:
        return None
    text = message(result, edited)
    out: dict[str, Any] = {"hookEventName": "PreToolUse"}
    if result.drifted and mode == "block":
        out["permissionDecision"] = "deny"
        out["permissionDecisionReason"] = text
        return {"hookSpecificOutput": out}
    out["additionalContext"] = text
    wrapped: dict[str, Any] = {"hookSpecificOutput": out}
    if result.drifted:  # one line for the user
        names = ", ".join(f"{r.handle()} {status}" for r, status in result.drifted[:3])
        more = f" and {len(result.drifted) - 3} more" if len(result.drifted) > 3 else ""
        wrapped["systemMessage"] = f"ragit gate: cited evidence drifted ({names}{more}); refresh with ragit context pack"
    return wrapped
