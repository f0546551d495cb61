"""Candidate selection at a commit (knowledge §8.1).

Works only on the commit's tree listing plus its own ``.gitignore`` blobs, so the result is a
pure function of the commit and the config: working-tree state can never leak in.
"""

from __future__ import annotations

import posixpath
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from functools import lru_cache
from typing import TYPE_CHECKING

from ..config import Config
from ..gitsnap.types import TreeEntry
from .globs import GlobSet, literal_prefix

if TYPE_CHECKING:
    import pathspec

REGULAR_FILE_MODES = frozenset({"100644", "100755"})
GITIGNORE = ".gitignore"
RAGIT_GITIGNORE_PATH = ".ragit/.gitignore"
_BOM = "\ufeff"


@dataclass(frozen=True)
class Candidate:
    """A tree entry admitted for evaluation; ``kind`` is ``markdown`` or ``code``."""

    path: str
    blob_id: str
    size: int | None
    kind: str
    missing: bool = False  # the blob is not in this clone: skipped as ``missing_object``


@dataclass(frozen=True)
class _Filters:
    docs: GlobSet
    code: GlobSet
    include: GlobSet
    exclude: GlobSet


@lru_cache(maxsize=16)
def _compile_filters(
    docs: tuple[str, ...], code: tuple[str, ...], include: tuple[str, ...], exclude: tuple[str, ...],
) -> _Filters:
    return _Filters(GlobSet(docs), GlobSet(code), GlobSet(include), GlobSet(exclude))


def _filters(config: Config) -> _Filters:
    ingest = config["ingest"]
    return _compile_filters(
        tuple(ingest["doc_globs"]), tuple(ingest["code_globs"]),
        tuple(ingest["include"]), tuple(ingest["exclude"]),
    )


def _parent(path: str) -> str:
    """Directory part of a repo path ("" at the root); cheaper than posixpath.dirname."""
    return path.rpartition("/")[0]


def _has_dot_segment(path: str) -> bool:
    return path.startswith(".") or "/." in path


def _kind(path: str, filters: _Filters) -> str | None:
    # include first: under an include root most of a tree's paths fail it, and the answer
    # is None whichever test fails
    if _has_dot_segment(path) or not filters.include.matches(path):
        return None
    if filters.docs.matches(path):
        kind = "markdown"
    elif filters.code.matches(path):
        kind = "code"
    else:
        return None
    return None if filters.exclude.matches(path) else kind


def matches_filter(path: str, config: Config) -> str | None:
    """Kind a path would have as a candidate, ignoring file mode and ``.gitignore``.

    Used to classify dirty working-tree paths, which have no tree entry yet.
    """
    return _kind(path, _filters(config))


def listing_scope(config: Config) -> list[str] | None:
    """The parts of a commit's tree that can hold candidates: the plain leading directories (or
    paths) of the ``ingest.include`` patterns, sorted; None when one of them may match anywhere
    (the default ``**``). A listing limited to them (plus the ``.gitignore`` files above them)
    admits exactly the candidates the whole tree does."""
    prefixes: set[str] = set()
    for pattern in config["ingest"]["include"]:
        prefix = literal_prefix(pattern)
        if prefix is None:
            return None
        prefixes.add(prefix)
    return sorted(prefixes)


def gitignore_changed(paths: Iterable[str]) -> bool:
    """True when any path is a ``.gitignore`` file: candidate selection must be redone.

    ``.ragit/.gitignore`` (written by ragit itself, knowledge §2.1) judges only ``.ragit/``,
    which holds no candidates, so committing it never forces a full evaluation.
    """
    return any(posixpath.basename(path) == GITIGNORE and path != RAGIT_GITIGNORE_PATH for path in paths)


class _GitIgnore:
    """The commit's ``.gitignore`` files with git's precedence rules.

    Each file applies to paths below its directory, matched relative to it; the deepest file
    with a matching pattern decides; a path inside an ignored directory stays ignored even if
    a later pattern would re-include it (git never descends into ignored directories).
    """

    def __init__(self, specs: dict[str, pathspec.GitIgnoreSpec]):
        self._specs = specs
        self._dirs: dict[str, bool] = {}

    @classmethod
    def from_entries(cls, entries: Iterable[TreeEntry], read_blob: Callable[[str], bytes]) -> _GitIgnore:
        import pathspec  # only a commit with .gitignore files pays for it

        specs: dict[str, pathspec.GitIgnoreSpec] = {}
        for entry in entries:
            directory = _parent(entry.path)
            if _has_dot_segment(directory):
                continue  # rules there could only affect paths that are never candidates
            text = read_blob(entry.oid).decode("utf-8", "replace").removeprefix(_BOM)
            spec = pathspec.GitIgnoreSpec.from_lines(text.splitlines())
            if spec.patterns:
                specs[directory] = spec
        return cls(specs)

    def _decide(self, path: str) -> bool:
        """Verdict of the deepest ``.gitignore`` with a matching pattern (path may end in /)."""
        directory = _parent(path.rstrip("/"))
        while True:
            spec = self._specs.get(directory)
            if spec is not None:
                relative = path[len(directory) + 1:] if directory else path
                result = spec.check_file(relative)
                if result.include is not None:
                    return result.include
            if not directory:
                return False
            directory = _parent(directory)

    def _dir_ignored(self, directory: str) -> bool:
        cached = self._dirs.get(directory)
        if cached is None:
            parent = _parent(directory)
            cached = (bool(parent) and self._dir_ignored(parent)) or self._decide(directory + "/")
            self._dirs[directory] = cached
        return cached

    def ignored(self, path: str) -> bool:
        if not self._specs:
            return False
        parent = _parent(path)
        return (bool(parent) and self._dir_ignored(parent)) or self._decide(path)


def select_candidates(
    entries: Iterable[TreeEntry], config: Config, read_blob: Callable[[str], bytes],
) -> list[Candidate]:
    """Candidates of a commit tree, sorted by path (code-point order).

    ``read_blob(oid)`` returns the raw bytes of a ``.gitignore`` blob of the same tree; it is
    called only when ``ingest.respect_gitignore`` is true.
    """
    filters = _filters(config)
    regular = [e for e in entries if e.kind == "blob" and e.mode in REGULAR_FILE_MODES]
    admitted = [(entry, kind) for entry in regular if (kind := _kind(entry.path, filters)) is not None]
    if config["ingest"]["respect_gitignore"]:
        ignores = [e for e in regular if posixpath.basename(e.path) == GITIGNORE]
        if ignores:
            gitignore = _GitIgnore.from_entries(ignores, read_blob)
            admitted = [(entry, kind) for entry, kind in admitted if not gitignore.ignored(entry.path)]
    candidates = [Candidate(entry.path, entry.oid, entry.size, kind, entry.missing) for entry, kind in admitted]
    candidates.sort(key=lambda c: c.path)
    return candidates
