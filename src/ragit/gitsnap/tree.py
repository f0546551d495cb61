"""What a commit contains, and which paths differ between two commits.

The listing carries blob sizes (``ls-tree -l``), so too-large files are recognised without reading
their blobs (knowledge §8.1).
"""

from __future__ import annotations

from collections.abc import Collection

from ragit.gitsnap.git import MAX_PATHSPEC, Git, decode_path
from ragit.gitsnap.types import TreeEntry


def list_tree(git: Git, commit: str, *, only: Collection[str] | None = None,
              also_named: str | None = None, within: Collection[str] | None = None) -> list[TreeEntry]:
    """Every file of ``commit`` (blobs, symlinks, submodules), recursively, sorted by path.

    With ``only``, just those paths plus the files named ``also_named`` in their directories
    and every directory above them (the ``.gitignore`` files that decide about them), asked for
    by name: an incremental ingest then lists what changed, not the whole tree. With ``within``
    (paths, usually directories), every file at or below them plus those ``also_named`` files
    above them: an ingest limited to part of a repository lists that part.
    """
    if only is None and within is None:
        return _parse(git.run("ls-tree", "-r", "-l", "-z", "--full-tree", commit))
    wanted = set(only if only is not None else within)
    asked = set(wanted)
    if also_named:
        for path in wanted:
            parts = path.split("/")
            for depth in range(len(parts)):
                asked.add("/".join(parts[:depth] + [also_named]))
    if len(asked) > MAX_PATHSPEC:
        return _parse(git.run("ls-tree", "-r", "-l", "-z", "--full-tree", commit))
    if not wanted:
        return []
    if only is not None:
        listed = git.run("ls-tree", "-r", "-l", "-z", "--full-tree", commit, "--", *sorted(asked))
        return [e for e in _parse(listed) if e.path in asked]
    # literal: a directory named like a pattern (``a[1]``) is still that directory
    listed = git.run("--literal-pathspecs", "ls-tree", "-r", "-l", "-z", "--full-tree", commit, "--", *sorted(asked))
    under = tuple(p + "/" for p in wanted)
    return [e for e in _parse(listed) if e.path in asked or e.path.startswith(under)]


def _parse(out_bytes: bytes) -> list[TreeEntry]:
    out = decode_path(out_bytes)
    entries = []
    for record in out.split("\0"):
        if not record:
            continue
        meta, _, path = record.partition("\t")
        mode, kind, oid, size = meta.split()
        if size == "BAD":  # the object is not in this (partial or shallow) clone
            entries.append(TreeEntry(mode, kind, oid, None, path, missing=True))
        else:
            entries.append(TreeEntry(mode, kind, oid, None if size == "-" else int(size), path))
    entries.sort(key=lambda e: e.path)
    return entries


def changed_paths(git: Git, base: str, head: str) -> list[str]:
    """Sorted paths that differ between the commits ``base`` and ``head``.

    Rename detection is off on purpose: a renamed file then shows as deleted plus added, so it
    contributes both its old and its new path, which is exactly the set an incremental ingest
    must re-evaluate.
    """
    out = git.run("diff-tree", "-r", "-z", "--name-only", "--no-renames", base, head, "--")
    return sorted({decode_path(p) for p in out.split(b"\0") if p})
