"""Git history as ``eval mine`` needs it: commits with messages, their first-parent diffs, and
which paths were ingest candidates at a commit.

A handful of git processes serve a whole history (one ``log``, one ``diff-tree --stdin``), so
mining thousands of commits stays fast. Plumbing and fixed formats only, so user configuration
cannot change what is read.
"""

from __future__ import annotations

import posixpath
import re
from dataclasses import dataclass
from pathlib import Path

from ..gitsnap.git import Git, decode_path
from ..gitsnap.history import diff_tree_records
from ..gitsnap.types import TreeEntry


@dataclass(frozen=True)
class CommitInfo:
    sha: str
    parents: tuple[str, ...]
    message: str


def log_commits(git: Git, head: str) -> list[CommitInfo]:
    """Every commit reachable from ``head``, newest first, with its raw message."""
    out = git.run("log", "-z", "--no-color", "--format=%H%x1f%P%x1f%B", head, "--")
    commits = []
    for record in out.split(b"\0"):
        if not record.strip():
            continue
        sha, parents, message = record.decode("utf-8", "replace").split("\x1f", 2)
        commits.append(CommitInfo(sha.strip(), tuple(parents.split()), message))
    return commits


def name_status(git: Git, shas: list[str]) -> dict[str, list[tuple[str, str]]]:
    """``sha -> [(status, path)]`` of each (single-parent) commit against its parent.

    Renames are off: a moved file is a deletion plus an addition, neither of which is an ``M``.
    """
    out: dict[str, list[tuple[str, str]]] = {sha: [] for sha in shas}
    if not shas:
        return out
    raw = git.run("diff-tree", "--stdin", "-r", "-z", "--no-renames", "--name-status",
                  input=("\n".join(shas) + "\n").encode())
    for sha, entries in diff_tree_records(raw):
        if sha in out:
            out[sha].extend((status, paths[-1]) for status, paths in entries)
    return out


def _ancestor_gitignores(paths: list[str]) -> list[str]:
    dirs = {""}
    for path in paths:
        parent = posixpath.dirname(path)
        while parent:
            dirs.add(parent)
            parent = posixpath.dirname(parent)
    return sorted(posixpath.join(d, ".gitignore") if d else ".gitignore" for d in dirs)


def candidates_at(git: Git, commit: str, paths: list[str], config, read_blob) -> set[str]:
    """The subset of ``paths`` that are ingest candidates (knowledge §8.1) at ``commit``.

    Only the entries that can decide the verdict are listed: the paths themselves and the
    ``.gitignore`` files of their directories (the deepest matching one wins, §8.1 rule 5).
    """
    from ..ingest.discovery import select_candidates

    if not paths:
        return set()  # ls-tree without paths would list the whole root
    listing = git.run("ls-tree", "-z", "--full-tree", commit, "--", *paths, *_ancestor_gitignores(paths))
    entries = []
    for record in decode_path(listing).split("\0"):
        if not record:
            continue
        meta, _, path = record.partition("\t")
        mode, kind, oid = meta.split()
        entries.append(TreeEntry(mode, kind, oid, None, path))
    wanted = set(paths)
    return {c.path for c in select_candidates(entries, config, read_blob) if c.path in wanted}


def repo_name(git: Git, root: Path) -> str:
    """``owner/name`` from the ``origin`` remote URL, else the root directory's name."""
    result = git.call("config", "--get", "remote.origin.url", allowed=(0, 1))
    url = result.stdout.decode("utf-8", "replace").strip()
    match = re.search(r"[:/]([^/:]+)/([^/]+?)(?:\.git)?/?$", url) if url else None
    return f"{match.group(1)}/{match.group(2)}" if match else Path(root).name
