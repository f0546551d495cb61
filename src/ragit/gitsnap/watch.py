"""Reuse of the dirty listing in a long-lived process while nothing in the worktree changes.

Every read reports dirty paths, and ``git status`` must stat every tracked file to list them: on
a 16,700-file repository that is 20–30 ms, more than the whole warm query. A warm process (the
Python API's ``Repo``, the MCP server) instead watches the worktree with Linux inotify and runs
``status`` again only after something changed.

Correctness rests on two facts. The kernel queues an inotify event before the system call that
caused it returns, so a change made before a read starts is always seen by that read. And the
listing is only remembered when no event arrived while ``status`` ran. Watched are every
directory git does not ignore (not ``.git`` and not ``.ragit/``, whose changes never count), the
git dir (index, HEAD) and the common dir with its ``info/`` (config, exclude). A ``.gitignore``
or exclude change, a lost event (queue overflow) or a watch that cannot be added makes the next
read rebuild the watches or give up watching for good; the listing is keyed by HEAD and never
older than ``MAX_AGE_S`` (changes to global git config or a global excludes file are not watched).
Off Linux, or without ``inotify_simple``, every read runs ``status`` as before.

The same events keep HEAD: a warm read takes HEAD (and its re-read after loading the manifest,
§5.2 step 3) from memory while no event arrived since the ref files were read, the directories
of the loose ref HEAD names being watched as well (:meth:`WorktreeWatch.head`).
"""

from __future__ import annotations

import os
import time
from array import array
from functools import partial
from pathlib import Path
from typing import Any, Callable

from ragit.gitsnap.dirty import RAGIT_DIR

MAX_AGE_S = 10.0
MAX_DIRS = 20_000  # beyond this many directories, watching costs more than it saves
_SKIP_NAMES = frozenset({".git"})


class WorktreeWatch:
    """The last dirty listing of one worktree and whether it can still be trusted.

    ``listing(head)`` answers the cached listing or None; a caller that gets None runs
    ``status`` between ``begin()`` and ``remember(...)``. The watch is set up on the second read,
    so a one-shot process never pays for it.
    """

    def __init__(self, root: Path, *, clock=time.monotonic) -> None:
        self.root = root
        self._clock = clock
        self._reads = 0
        self._inotify: Any = None
        self._paths: dict[int, Path] = {}
        self._info: Path | None = None
        self._disabled = False
        self._rebuild = False
        self._events = 0
        self._listing: tuple[str, list[str], float] | None = None
        self._head: tuple[int, Any] | None = None  # (event count before the read, HEAD as read)
        self._ref_watches: dict[Path, int] = {}  # directories watched for HEAD's ref file → wd
        self._queued = array("i", [0])  # bytes waiting in the inotify queue (FIONREAD)
        self._count_queued: Any = None  # writes that count into _queued, once watching
        self.status_runs = 0  # how many listings were asked of git (tests, benchmarks)

    # ---------------------------------------------------------------- the cache

    def listing(self, head: str | None) -> list[str] | None:
        """The remembered dirty paths when nothing changed since, else None."""
        self._reads += 1
        if head is None or self._reads < 2 or not self._ready():
            return None
        self._drain()
        cached = self._listing
        if cached is None or cached[0] != head or self._clock() - cached[2] > MAX_AGE_S:
            return None
        return list(cached[1])

    def begin(self) -> int:
        """Mark the start of a ``status`` run; pass the answer to :meth:`remember`."""
        self.status_runs += 1
        if self._inotify is not None:
            self._drain()
        return self._events

    def remember(self, head: str | None, dirty: list[str], token: int) -> None:
        """Keep ``dirty`` for ``head`` unless something changed while ``status`` ran."""
        if self._inotify is None or head is None:
            return
        self._drain()
        if self._events == token and not self._rebuild:
            self._listing = (head, list(dirty), self._clock())

    # ---------------------------------------------------------------- HEAD

    def head(self, read: Callable[[], Any]) -> tuple[Any, int | None]:
        """``(HEAD, token)``: ``read()``'s answer (a ragit.gitsnap.context.HeadFiles or None),
        remembered while no watched file changed; ``token`` (else None) is what
        :meth:`unchanged` takes to tell whether it still holds.

        HEAD's commit depends on the HEAD file (git dir), ``packed-refs`` (common dir) and the
        loose ref file HEAD names, whose directories are watched too (from the common dir down,
        the existing ones: a directory created on the way is an event in its watched parent).
        The event count is taken before the files are read, so a change racing the read is an
        event after the token and makes the next read read again. Only a HEAD whose ref
        directories were already watched before that count is remembered.
        """
        if self._inotify is None or self._rebuild:  # not watching (yet): the first reads set it up
            return read(), None
        self._drain()
        if self._rebuild:
            return read(), None
        token = self._events
        kept = self._head
        if kept is not None and kept[0] == token:
            return kept[1], token
        known = read()
        if known is None or not self._watch_ref(known.common_dir, known.ref):
            return known, None
        self._head = (token, known)
        return known, token

    def unchanged(self, token: int) -> bool:
        """No watched file changed since :meth:`head` gave ``token``."""
        if self._inotify is None:
            return False
        self._drain()
        return self._events == token and not self._rebuild

    def _watch_ref(self, common: Path, ref: str | None) -> bool:
        """Watch the directories of ``ref``'s loose file; True when all were watched already."""
        if ref is None:
            return True
        ready = True
        current = common
        for part in ref.split("/")[:-1]:
            current = current / part
            wd = self._ref_watches.get(current)
            if wd is not None and self._paths.get(wd) == current:
                continue
            if current.is_symlink():  # (a watch would follow nothing: DONT_FOLLOW)
                return False
            if not current.is_dir():
                break
            ready = False
            try:
                self._ref_watches[current] = self._add(current)
            except (OSError, ValueError):
                return False
        return ready

    def close(self) -> None:
        if self._inotify is not None:
            self._inotify.close()
            self._events += 1  # its queued events are lost: a token taken before never matches again
        self._inotify = None
        self._paths = {}
        self._listing = None
        self._head = None
        self._ref_watches = {}

    # ---------------------------------------------------------------- watches

    def _ready(self) -> bool:
        if self._disabled:
            return False
        if self._inotify is not None and not self._rebuild:
            return True
        self.close()
        self._rebuild = False
        try:
            self._setup()
        except (OSError, ImportError, ValueError):
            self.close()
            self._disabled = True
            return False
        return True

    def _setup(self) -> None:
        from inotify_simple import INotify  # Linux only; ImportError elsewhere disables watching

        from ragit.gitsnap.location import git_dirs

        dirs = git_dirs(self.root)
        if dirs is None:
            raise ValueError("unusual git layout")
        git_dir, common = dirs
        self._inotify = INotify(nonblocking=True)
        import fcntl  # (POSIX: imported where inotify is)
        import termios

        self._count_queued = partial(fcntl.ioctl, self._inotify.fileno(), termios.FIONREAD, self._queued, True)
        self._info = common / "info"
        ignored = _ignored_dirs(self.root)
        self._add_tree(self.root, ignored)
        for extra in {git_dir, common, common / "info"}:
            if extra.is_dir():
                self._add(extra)

    def _add(self, path: Path) -> int:
        if len(self._paths) >= MAX_DIRS:
            raise ValueError("too many directories to watch")
        wd = self._inotify.add_watch(path, _mask())
        self._paths[wd] = path
        return wd

    def _add_tree(self, top_dir: Path, ignored: set[str]) -> None:
        stack = [top_dir]
        while stack:
            current = stack.pop()
            self._add(current)
            try:
                entries = list(os.scandir(current))
            except FileNotFoundError:
                continue
            for entry in entries:
                if entry.name in _SKIP_NAMES or not entry.is_dir(follow_symlinks=False):
                    continue
                child = Path(entry.path)
                rel = _inside(self.root, child)
                if rel == RAGIT_DIR or f"{rel}/" in ignored:
                    continue
                stack.append(child)

    def _drain(self) -> None:
        # a quiet queue (nearly every warm read, which drains up to three times) is told by one
        # FIONREAD into a kept buffer, without read()'s ctypes buffer, parse and flags import
        self._count_queued()
        if not self._queued[0]:
            return
        from inotify_simple import flags

        for event in self._inotify.read(timeout=0):
            self._events += 1
            self._listing = None
            if event.mask & flags.Q_OVERFLOW:
                self._rebuild = True
                continue
            if event.mask & flags.IGNORED:
                self._paths.pop(event.wd, None)
                continue
            parent = self._paths.get(event.wd)
            if event.name == ".gitignore" or (event.name == "exclude" and parent == self._info):
                self._rebuild = True
            if parent is not None and event.mask & flags.ISDIR and event.mask & (flags.CREATE | flags.MOVED_TO):
                child = parent / event.name
                inside = _inside(self.root, child)
                if inside is not None and inside.split("/")[0] not in (RAGIT_DIR, *_SKIP_NAMES):
                    try:
                        self._add_tree(child, set())
                    except (OSError, ValueError):
                        self._rebuild = True


def _inside(root: Path, path: Path) -> str | None:
    try:
        return path.relative_to(root).as_posix()
    except ValueError:
        return None


def _ignored_dirs(root: Path) -> set[str]:
    """Directories git ignores as a whole (``dir/``), from one ``ls-files``."""
    from ragit.gitsnap.git import Git, decode_path

    out = Git(root).run("ls-files", "--others", "--ignored", "--exclude-standard", "--directory", "-z")
    return {decode_path(p) for p in out.split(b"\0") if p.endswith(b"/")}


def _mask() -> int:
    from inotify_simple import flags

    return (flags.MODIFY | flags.ATTRIB | flags.CLOSE_WRITE | flags.MOVED_FROM | flags.MOVED_TO
            | flags.CREATE | flags.DELETE | flags.DELETE_SELF | flags.MOVE_SELF | flags.DONT_FOLLOW)
