"""Line history for ``ragit why`` (knowledge §22.3): which commits changed these lines.

``git log -L<start>,<end>:<path> <commit>`` walks the history of a line range, following it
through edits above it and through renames, and prints each commit's diff of that range; without a
range the file's commits come from ``git log --follow -p``. Both take a commit and a path, never a
worktree file, so they work on a bare repository. They are porcelain commands, so every setting
that would change what they print (prefixes, colour, external diff drivers, signatures, textconv)
is pinned on the command line; the patch text is parsed by ragit.gitsnap.patches.
"""

from __future__ import annotations

from dataclasses import dataclass

from .git import Git, GitError
from .patches import FileDiff, Hunk, parse_patch

# Settings that change ``git log``'s patch output; pinned so user configuration cannot.
PINNED_CONFIG = (
    "-c", "diff.noprefix=false", "-c", "diff.mnemonicPrefix=false", "-c", "diff.srcPrefix=a/",
    "-c", "diff.dstPrefix=b/", "-c", "log.showSignature=false", "-c", "log.follow=false",
    "-c", "diff.relative=false", "-c", "color.ui=never", "-c", "core.quotePath=true", "-c", "diff.context=3",
    "-c", "diff.interHunkContext=0", "-c", "diff.algorithm=myers",
)
PINNED_OPTIONS = ("--no-color", "--no-ext-diff", "--no-textconv", "--no-abbrev")
_MARK = "\0COMMIT\0"
LOG_FORMAT = "--format=%x00COMMIT%x00%H%x00%ct%x00%s%x00%B%x00"


class MissingHistory(Exception):
    """Git could not read an object the walk needs (a partial clone, a damaged repository)."""


_MISSING = ("unable to read", "bad object", "missing blob", "missing tree", "could not read")


@dataclass(frozen=True)
class LineCommit:
    """One commit of a line (or file) history: what it changed in the tracked lines."""

    sha: str
    committed: int  # committer time, seconds since the epoch
    subject: str
    message: str  # the whole commit message
    path: str  # the file's name at this commit (renames are followed)
    hunks: tuple[Hunk, ...]
    adds: bool  # the commit created the tracked lines (no old side) or added the file

    def hunk_text(self) -> str:
        """Every hunk of this commit, as git printed them (unmasked)."""
        return "\n".join(h.text() for h in self.hunks)


def log_records(raw: bytes) -> list[tuple[str, int, str, str, str]]:
    """``(sha, committer seconds, subject, message, patch text)`` per commit of ``git log``
    output made with :data:`LOG_FORMAT`."""
    text = raw.decode("utf-8", "replace")
    out: list[tuple[str, int, str, str, str]] = []
    for record in text.split(_MARK)[1:]:
        sha, seconds, subject, message, patch = (record.split("\0", 4) + ["", "", "", ""])[:5]
        out.append((sha, int(seconds or 0), subject, message.strip("\n"), patch))
    return out


def _commit(sha: str, seconds: int, subject: str, message: str, patch: str, path: str,
            whole_file: bool) -> tuple[LineCommit, str]:
    """The commit's entry and the file's name before it (its old path across a rename)."""
    files = parse_patch(patch)
    diff: FileDiff | None = next((f for f in files if path in (f.new_path, f.old_path)), files[0] if files else None)
    if diff is None:  # a merge (its combined diff is not parsed) or a mode-only change
        return LineCommit(sha, seconds, subject, message, path, (), False), path
    hunks = tuple(diff.hunks)
    if whole_file:
        adds = diff.old_path is None and not diff.binary
    else:
        adds = bool(hunks) and all(h.old_count == 0 for h in hunks)
    return LineCommit(sha, seconds, subject, message, diff.path, hunks, adds), diff.old_path or diff.path


def line_history(git: Git, commit: str, path: str, start: int | None = None, end: int | None = None,
                 max_count: int | None = None, patches: bool = True) -> list[LineCommit]:
    """The commits reachable from ``commit`` that changed lines ``start..end`` of ``path`` (the
    whole file when no range is given), newest first, each with its hunks of those lines.

    ``max_count`` stops the walk after that many commits (git reads no older objects);
    ``patches = False`` lists a whole file's commits under its present name without reading any
    blob (no hunks, no rename following). The caller checks
    that ``path`` is a file of ``commit`` and that the range lies inside it (git would fail with
    an untyped error). An object git cannot read raises :class:`MissingHistory`."""
    limit = () if max_count is None else (f"--max-count={max_count}",)
    if start is not None and end is not None:
        args = ("log", *PINNED_OPTIONS, LOG_FORMAT, *limit, f"-L{start},{end}:{path}", commit)
        whole = False
    else:
        follow = ("--follow", "-M", "-p") if patches else ()  # rename detection reads blobs too
        args = ("log", *PINNED_OPTIONS, LOG_FORMAT, *limit, *follow, commit, "--", path)
        whole = True
    try:
        raw = git.run(*PINNED_CONFIG, *args)
    except GitError as exc:
        if any(m in exc.stderr for m in _MISSING):
            raise MissingHistory(exc.stderr) from None
        raise
    out: list[LineCommit] = []
    current = path
    for sha, seconds, subject, message, patch in log_records(raw):
        item, current = _commit(sha, seconds, subject, message, patch, current, whole)  # older commits: the old name
        out.append(item)
    return out
