"""What the agent was served: the last pack, packet or query result of each MCP session.

After every successful ``context_pack``, ``context_packet`` or ``query`` call the MCP server
replaces one small JSON file per client session: the citations (path, blob, lines and digests of
the cited lines, never the text). It lives in the user's runtime directory
(``$XDG_RUNTIME_DIR/ragit-gate/<repository key>/``, else ``<tmp>/ragit-<uid>/ragit-gate/…``,
private to the user), not in the repository: those tools are read-only for the repository
(cli-contract §11), and the record is session state of a running process, gone with it. A
session is the MCP client process: the Claude Code process that also runs the ``PreToolUse``
hook, so the gate finds its record by walking up its own parent processes. Built-in modules only.
"""

from __future__ import annotations

import json
import os

TYPE_CHECKING = False  # not ``typing``: the gate reads records with built-in modules only
if TYPE_CHECKING:  # pragma: no cover
    from pathlib import Path
    from collections.abc import Iterator
    from typing import Any, Callable

RECORDED_TOOLS = {"context_pack": "context pack", "context_packet": "context packet", "query": "query"}
MAX_CITATIONS = 200
_HANDLE = r"(?P<path>.+)@(?P<sha>[0-9a-f]{7,40}):L(?P<start>[0-9]+)-L(?P<end>[0-9]+)"


def state_dir() -> str:
    """The user's private runtime directory for gate records."""
    base = os.environ.get("XDG_RUNTIME_DIR") or ""
    if not (os.path.isabs(base) and os.path.isdir(base)):
        uid = os.getuid() if hasattr(os, "getuid") else 0
        tmp = os.environ.get("TMPDIR") or os.environ.get("TEMP") or ("/tmp" if os.name != "nt" else ".")
        base = os.path.join(tmp, f"ragit-{uid}")
    return os.path.join(base, "ragit-gate")


def repository_key(root: Path | str) -> str:
    """16 hex of SHA-1 of the repository's real path: one directory of records per repository."""
    try:
        from _sha1 import sha1
    except ImportError:  # pragma: no cover
        from hashlib import sha1
    return sha1(os.path.realpath(str(root)).encode("utf-8", "surrogatepass")).hexdigest()[:16]


def record_path(root: Path | str, key: str) -> str:
    """Where the record ``key`` (``pid-<client pid>``) of the repository at ``root`` lives."""
    return os.path.join(state_dir(), repository_key(root), f"{key}.json")


def _private(directory: str) -> bool:
    """Whether ``directory`` belongs to this user and nobody else may write to it (a shared
    temporary directory must not let another user plant records)."""
    if not hasattr(os, "getuid"):  # pragma: no cover - Windows: per-user temp directories
        return True
    try:
        st = os.stat(directory)
    except OSError:
        return False
    return st.st_uid == os.getuid() and not st.st_mode & 0o022


def client_key(pid: int) -> str:
    return f"pid-{pid}"


def _objects(value: Any) -> "Iterator[dict[str, Any]]":
    """Every JSON object in ``value``, depth first, each before the objects inside it."""
    if isinstance(value, dict):
        yield value
        for child in value.values():
            yield from _objects(child)
    elif isinstance(value, list):
        for child in value:
            yield from _objects(child)


def cited_ranges(value: Any) -> list[dict[str, Any]]:
    """Repository citations in a tool result: every object with a ``document`` citation and a line
    range (hits, pack items), deduplicated, in the order served."""
    out: list[dict[str, Any]] = []
    seen: set[tuple[Any, ...]] = set()
    for node in _objects(value):
        citation = node.get("citation")
        if (isinstance(citation, dict) and citation.get("sourceType") == "document"
                and isinstance(node.get("path"), str) and isinstance(node.get("startLine"), int)
                and isinstance(node.get("endLine"), int) and isinstance(citation.get("sourceVersion"), str)):
            key = (node["path"], citation["sourceVersion"], node["startLine"], node["endLine"])
            if key not in seen:
                seen.add(key)
                out.append({"path": node["path"], "blobId": citation["sourceVersion"],
                            "startLine": node["startLine"], "endLine": node["endLine"],
                            "sha": citation.get("sourceSha"), "citationId": citation.get("id")})
    return out[:MAX_CITATIONS]


def packet_handles(value: Any) -> list[tuple[str, str, int, int]]:
    """``(path, sha prefix, start, end)`` of packet items built from retrieval: their ``source`` /
    ``reference`` is the display handle ``path@sha12:Lx-Ly`` (context §2.4), without the blob."""
    import re

    handle = re.compile(_HANDLE)
    out: list[tuple[str, str, int, int]] = []
    for node in _objects(value):
        for key in ("source", "reference"):
            m = handle.fullmatch(node[key]) if isinstance(node.get(key), str) else None
            if m is not None:
                item = (m["path"], m["sha"], int(m["start"]), int(m["end"]))
                if item not in out:
                    out.append(item)
    return out


def add_digests(citations: list[dict[str, Any]], read_blob: Callable[[str], bytes | None]) -> None:
    """Digest of each citation's lines and of its first line (:func:`ragit.gate.check.text_digest`),
    so the gate can find the text in a changed file without reading git objects."""
    from .check import _lines, text_digest

    cache: dict[str, list[str] | None] = {}
    for c in citations:
        blob = c["blobId"]
        if blob not in cache:
            data = read_blob(blob)
            cache[blob] = None if data is None else _lines(data)
        lines = cache[blob]
        if lines is None or c["endLine"] > len(lines) or c["startLine"] < 1:
            continue
        cited = lines[c["startLine"] - 1 : c["endLine"]]
        c["textDigest"] = text_digest(cited)
        c["firstLineDigest"] = text_digest(cited[:1])


def record_served(root: Path, tool: str, result: Any, *, pid: int | None = None, now: str | None = None,
                  resolve: Callable[[str, str], tuple[str, str] | None] | None = None,
                  read_blob: Callable[[str], bytes | None] | None = None) -> Path | None:
    """Replace the session's record with the citations of ``result`` (a successful tool result).

    ``resolve(sha, path)`` → ``(commit, blob id)`` binds packet handles (which name a commit, not
    a blob); without it they are left out. ``read_blob(oid)`` (None when absent) adds the digests
    of the cited lines. Returns the file written, or None for tools the gate
    does not follow."""
    command = RECORDED_TOOLS.get(tool)
    if command is None:
        return None
    from ..fsutil import atomic_write_text

    citations = cited_ranges(result)
    if resolve is not None:
        known = {(c["path"], c["startLine"], c["endLine"]) for c in citations}
        for path, sha, start, end in packet_handles(result):
            bound = resolve(sha, path) if (path, start, end) not in known else None
            if bound is not None and len(citations) < MAX_CITATIONS:
                citations.append({"path": path, "blobId": bound[1], "startLine": start, "endLine": end,
                                  "sha": bound[0], "citationId": None})

    client = os.getppid() if pid is None else pid
    if now is None:
        from ..clock import now_iso

        now = now_iso()
    if read_blob is not None:
        add_digests(citations, read_blob)
    from pathlib import Path

    record = {"clientPid": client, "command": command, "servedAt": now, "root": os.path.realpath(str(root)),
              "citations": citations}
    target = Path(record_path(root, client_key(client)))
    base = state_dir()
    for directory in (os.path.dirname(base), base, str(target.parent)):  # each level private
        if not os.path.isdir(directory):
            os.mkdir(directory, 0o700)
        if not _private(directory):
            return None
    atomic_write_text(target, json.dumps(record, ensure_ascii=False, indent=2) + "\n")
    _prune(str(target.parent), keep=target.name)
    return target


def _prune(directory: str, keep: str) -> None:
    """Remove the records of client processes that are gone: a record outlives nothing it served."""
    if os.name != "posix":  # pragma: no cover
        return
    for name in os.listdir(directory):
        if name == keep or not (name.startswith("pid-") and name.endswith(".json")):
            continue
        try:
            os.kill(int(name[4:-5]), 0)
        except ProcessLookupError:
            try:
                os.unlink(os.path.join(directory, name))
            except OSError:
                pass
        except (ValueError, PermissionError):  # not a pid, or a live process of another user
            continue


def ancestors(pid: int, depth: int = 8) -> list[int]:
    """``pid`` and its parents (Linux ``/proc``; elsewhere only ``pid`` and this process's parent)."""
    chain = [pid]
    current = pid
    for _ in range(depth):
        try:
            with open(f"/proc/{current}/stat", encoding="utf-8", errors="replace") as fh:
                stat = fh.read()
        except OSError:
            if current == os.getpid():
                chain.append(os.getppid())
            break
        # the command name may hold spaces and parentheses: the fields follow the last ")"
        parent = int(stat.rsplit(")", 1)[1].split()[1])
        if parent <= 1:
            break
        chain.append(parent)
        current = parent
    return chain


def find_record(root: Path | str, pid: int | None = None) -> dict[str, Any] | None:
    """The record of the MCP session serving the client that runs this process (``pid``, default
    this one): the nearest ancestor with a record. Claude Code does not give the MCP server its
    session id, so the process tree is what ties the hook to the server."""
    candidates = [record_path(root, client_key(p)) for p in ancestors(os.getpid() if pid is None else pid)]
    if not _private(os.path.dirname(candidates[0])):
        return None
    for path in candidates:
        try:
            with open(path, encoding="utf-8") as fh:
                value = json.loads(fh.read())
        except (OSError, ValueError):
            continue
        if isinstance(value, dict):
            return value
    return None


def record_with_git(root: Path, git: Any, tool: str, result: Any, *, pid: int | None = None) -> None:
    """:func:`record_served` for a process holding the repository (the MCP server): packet handles
    are bound to blobs and every citation gets its digests. A failure to record never fails the
    tool that served the result."""
    from ..gitsnap.blobs import BlobReader, MissingObject
    from ..gitsnap.git import GitError
    from ..memory.evidence import blobs_at

    def resolve(sha: str, path: str) -> tuple[str, str] | None:
        try:
            commit = git.run("rev-parse", "--verify", "--quiet", f"{sha}^{{commit}}").decode().strip()
            blob = blobs_at(git, commit, [path]).get(path) if commit else None
        except GitError:
            return None
        return (commit, blob) if blob else None

    try:
        with BlobReader(git) as blobs:
            def read_blob(oid: str) -> bytes | None:
                try:
                    return blobs.read(oid)
                except (MissingObject, ValueError):
                    return None

            record_served(root, tool, result, resolve=resolve, read_blob=read_blob, pid=pid)
    except (OSError, GitError):
        pass
