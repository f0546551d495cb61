"""What a commit contains, and which paths differ between two commits.

The listing carries blob sizes (``ls-tree -l``), so too-large files are recognised without reading
their blobs (knowledge §8.1).
"""

from __future__ import annotations

from ragit.gitsnap.git import Git, decode_path
from ragit.gitsnap.types import TreeEntry


def list_tree(git: Git, commit: str) -> list[TreeEntry]:
    """Every file of ``commit`` (blobs, symlinks, submodules), recursively, sorted by path."""
    out = decode_path(git.run("ls-tree", "-r", "-l", "-z", "--full-tree", commit))
    entries = []
    for record in out.split("\0"):
        if not record:
            continue
        meta, _, path = record.partition("\t")
        mode, kind, oid, size = meta.split()
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
