"""Does the evidence an edit rests on still match the working tree? (knowledge §22.4, issue 17)

Two sets of citations are checked against the files on disk (not a commit: the agent is about
to edit the working tree): the citations of the last pack, packet or query the MCP server served
this session (:mod:`ragit.gate.served`), and the evidence of current memory decisions and open
loops that cite the edited file. A range is current when the file still has the cited blob, or
the cited lines unchanged at the same or other lines (``verify``'s ``ok``/``shifted``; the
line search is :func:`ragit.ingest.text.locate_block`, shared with verify). Built-in modules and
light ragit modules only.
"""

from __future__ import annotations

import hashlib
import json
import re
import subprocess
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

EDIT_TOOLS = ("Edit", "Write", "MultiEdit", "NotebookEdit")
MODES = ("warn", "block")
_STORED = re.compile(r"(?P<path>.+)@(?P<blob>[0-9a-f]{40}):L(?P<start>[0-9]+)-L(?P<end>[0-9]+)")
REFRESH = "ragit context pack \"<your task>\" (or the MCP tool context_pack) for fresh citations"
MAX_LISTED = 8


@dataclass(frozen=True)
class Range:
    """One cited range and where it came from (``served`` or a memory item)."""

    path: str
    blob_id: str
    start: int
    end: int
    origin: str  # "served" | "decision" | "open_loop"
    title: str = ""

    def handle(self) -> str:
        return f"{self.path}@{self.blob_id[:12]}:L{self.start}-L{self.end}"


@dataclass
class GateResult:
    drifted: list[tuple[Range, str]] = field(default_factory=list)  # (range, status)
    memory_current: list[Range] = field(default_factory=list)
    checked: int = 0


def blob_hash(data: bytes) -> str:
    """Git's object id of ``data`` as a blob (no filters applied)."""
    return hashlib.sha1(b"blob %d\0" % len(data) + data).hexdigest()


def _lines(data: bytes) -> list[str]:
    from ..ingest.text import decode_blob, normalize_newlines, split_lines

    text, _ = decode_blob(data)
    if text is None:
        text = normalize_newlines(data.decode("utf-8", "replace"))
    return split_lines(text)


def read_blobs(root: Path, oids: list[str]) -> dict[str, bytes]:
    """Blob contents through one ``git cat-file --batch`` (absent objects are left out)."""
    if not oids:
        return {}
    proc = subprocess.run(["git", "-C", str(root), "cat-file", "--batch"], input="".join(f"{o}\n" for o in oids).encode(),
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
            out.append(Range(c["path"], c["blobId"], c["startLine"], c["endLine"], "served"))
    return out


def memory_ranges(root: Path, working_dir: str, edited: str) -> list[Range]:
    """Evidence of current decisions and open loops (``current.json``) on the edited file."""
    try:
        current = json.loads((root / working_dir / "current.json").read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return []
    out = []
    if not isinstance(current, dict):
        return []
    for key, origin in (("decisions", "decision"), ("openLoops", "open_loop")):
        for item in current.get(key) or []:
            if not isinstance(item, dict):
                continue
            for ev in item.get("evidence") or []:
                m = _STORED.fullmatch(str(ev.get("handle", ""))) if isinstance(ev, dict) else None
                if m is not None and m["path"] == edited:
                    out.append(Range(m["path"], m["blob"], int(m["start"]), int(m["end"]), origin,
                                     str(item.get("title", ""))))
    return out


def check_ranges(root: Path, ranges: list[Range]) -> list[str]:
    """The status of each range against the working tree: ok, shifted, changed or deleted."""
    from ..ingest.text import locate_block

    files: dict[str, bytes | None] = {}
    for r in ranges:
        if r.path not in files:
            try:
                files[r.path] = (root / r.path).read_bytes()
            except OSError:
                files[r.path] = None
    same = {r.path for r in ranges if files[r.path] is not None and blob_hash(files[r.path]) == r.blob_id}
    # only ranges whose file changed need the cited text: one cat-file for all of them
    wanted = sorted({r.blob_id for r in ranges if files[r.path] is not None and r.path not in same})
    blobs = read_blobs(root, wanted)
    now_lines: dict[str, list[str]] = {}
    statuses = []
    for r in ranges:
        data = files[r.path]
        if data is None:
            statuses.append("deleted")
            continue
        if r.path in same:
            statuses.append("ok")
            continue
        cited_blob = blobs.get(r.blob_id)
        if cited_blob is None:
            statuses.append("changed")  # the cited text cannot be read: treat as drift
            continue
        cited = _lines(cited_blob)[r.start - 1 : r.end]
        if r.path not in now_lines:
            now_lines[r.path] = _lines(data)
        found = locate_block(now_lines[r.path], cited, r.start) if len(cited) == r.end - r.start + 1 else None
        statuses.append("changed" if found is None else ("ok" if found == r.start else "shifted"))
    return statuses


def evaluate(root: Path, edited: str, record: dict[str, Any] | None, working_dir: str) -> GateResult:
    served = served_ranges(record)
    memory = memory_ranges(root, working_dir, edited)
    ranges = served + memory
    result = GateResult(checked=len(ranges))
    for r, status in zip(ranges, check_ranges(root, ranges)):
        if status in ("ok", "shifted"):
            if r.origin != "served":
                result.memory_current.append(r)
        else:
            result.drifted.append((r, status))
    return result


def message(result: GateResult, edited: str) -> str:
    """The short text the agent (and the user, in warn mode) sees."""
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
