"""Co-change statistics: which files changed together in the history a snapshot's commit reaches.

A fix rarely touches one file: ``app.py`` and ``ctx.py`` change together, so a question that finds
one strongly is likely to need the other. The retrieval re-rank (ragit.retrieve.cochange_boost)
reads these statistics; this module only mines them from git.

What is counted, and why:

* the last ``limit`` non-merge commits reachable from the snapshot's commit (``git rev-list
  --no-merges``), newest first: the snapshot's own past and nothing after it, bounded for cost;
* each commit's changed paths from ``git diff-tree -M`` (plumbing: user configuration cannot
  change what is read); paths are carried forward through renames, so ``flask/app.py`` of an old
  commit counts for ``src/flask/app.py`` of the snapshot;
* a shallow clone's boundary commit, whose "changes" are its whole tree, counts as changing
  nothing (the history behind it is simply absent);
* a commit with more than ``max_files`` paths (a reformat, a vendored update, a move of the whole
  package) says nothing about which files belong together: it is skipped (its renames still apply);
* in a commit of ``k`` paths each pair gets weight ``1 / (k - 1)``, so every commit gives each of
  its files one unit of co-change mass, shared among its partners; ``P(f | h)`` is the mass ``h``
  shared with ``f`` over the commits touching ``h`` plus one (a file changed once is weak evidence).

What each counted commit's message says is kept beside its files (its keyword terms,
:func:`ragit.lexical.terms`): ``retrieve/precedent.py`` finds the past commits whose messages
resemble a question and raises the files they changed.

A commit's changed paths never change, so they are cached by commit id in
``.ragit/cache/cochange/changes.json``, and their messages' terms in ``said.json``: a new snapshot
mines only the commits the cache lacks (usually the few since the last query). The history a
commit reaches never changes either, so a snapshot's counts are kept in ``counts-<sha>.json``
beside it (the newest ``COUNTS_KEEP``; the files and message terms of each counted commit, whose
counts are added up again in the same order): a one-shot query process reads one small file and
runs no git command; counting is also memoised per process.
"""

from __future__ import annotations

import json
import os
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

from .git import Git
from .history import diff_tree_records, diff_tree_stdin

DEFAULT_LIMIT = 2000  # commits mined per snapshot (flask's whole history is about 3,000)
MAX_FILES = 30  # commits touching more paths are skipped
PRIOR = 1.0  # added to a file's commit count in P(f | h)
CACHE_DIR = Path(".ragit") / "cache" / "cochange"
CACHE_VERSION = 1
SAID_VERSION = 1  # said.json: each mined commit's message terms (ragit.lexical, masked first)
CACHE_KEEP = 4  # the cache holds at most this many × limit commits
COUNTS_KEEP = 8  # snapshots whose counts are kept on disk
COUNTS_VERSION = 3  # 2: each counted commit's files, not the pair sums; 3: and its message's terms
DIFF_FLAGS = ("--root", "-r", "-z", "-M", "--name-status", "--no-ext-diff")
MINERS = 2  # diff-tree processes sharing the commits to mine, at most one per core (history.diff_tree_stdin)


@dataclass(frozen=True)
class Change:
    """One commit's changed paths (as named at that commit) and its renames (old, new)."""

    sha: str
    paths: tuple[str, ...]
    renames: tuple[tuple[str, str], ...] = ()


@dataclass
class CoChange:
    """Co-change counts of one snapshot: ``touched[h]`` commits changed ``h`` (commits within the
    size bound), ``shared[h][f]`` the co-change mass ``h`` shared with ``f``."""

    commits: int = 0
    touched: dict[str, int] = field(default_factory=dict)
    shared: dict[str, dict[str, float]] = field(default_factory=dict)
    counted: list[list[str]] = field(default_factory=list)  # each counted commit's files, newest first
    said: list[str] = field(default_factory=list)  # each counted commit's message terms, space-joined

    def partners(self, path: str) -> dict[str, float]:
        """``P(f | path)`` for every file ``f`` that changed with ``path`` (empty when none did)."""
        mass = self.shared.get(path)
        if not mass:
            return {}
        cached = self.__dict__.setdefault("_partners", {})
        out = cached.get(path)
        if out is None:
            denominator = self.touched.get(path, 0) + PRIOR
            out = cached[path] = {f: m / denominator for f, m in mass.items()}
        return out


# ---------------------------------------------------------------- mining


def _parse_diff_tree(raw: bytes) -> list[Change]:
    """Parse ``git diff-tree --stdin -r -z -M --name-status`` output (commit ids interleaved)."""
    return [Change(sha, tuple(paths[-1] for _, paths in entries),
                   tuple((paths[0], paths[1]) for status, paths in entries if status.startswith("R")))
            for sha, entries in diff_tree_records(raw)]


def count(changes: Sequence[Change], max_files: int = MAX_FILES) -> CoChange:
    """Co-change counts of ``changes`` (newest first), paths named as at the newest commit."""
    return tally(len(changes), counted_files(changes, max_files))


def counted_files(changes: Sequence[Change], max_files: int = MAX_FILES) -> list[list[str]]:
    """The files of each commit of ``changes`` (newest first) that counts, in order: those with
    ``1..max_files`` paths, each path named as at the newest commit (renames carried forward)."""
    return _counted(changes, max_files)[1]


def _counted(changes: Sequence[Change], max_files: int) -> tuple[list[str], list[list[str]]]:
    """:func:`counted_files` with the ids of the commits that count, in the same order."""
    alias: dict[str, str] = {}  # a path of an older commit -> its name at the snapshot
    shas: list[str] = []
    out: list[list[str]] = []
    for change in changes:
        if 0 < len(change.paths) <= max_files:
            shas.append(change.sha)
            out.append(list(dict.fromkeys(alias.get(p, p) for p in change.paths)))
        for old, new in change.renames:  # older commits name the file by its old path
            alias[old] = alias.get(new, new)
    return shas, out


def message_terms(git: Git, wanted: Sequence[str]) -> list[str]:
    """The keyword terms (space-joined) of the masked message of each commit of ``wanted``, in
    order (one ``git log`` of exactly those commits; a commit it does not list says nothing).
    Masked first, as every text ragit keeps: a token pasted into a commit message never reaches
    ``.ragit/``."""
    from ..lexical import terms
    from ..security.masking import mask_text

    if not wanted:
        return []
    raw = git.run("log", "--no-walk=unsorted", "--stdin", "--format=%H%x00%B%x00",
                  input="".join(f"{s}\n" for s in wanted).encode("ascii"))
    parts = raw.decode("utf-8", "replace").split("\0")
    said = {parts[k].strip(): parts[k + 1] for k in range(0, len(parts) - 1, 2)}
    bodies = [said.get(s, "") for s in wanted]
    # one masking pass over every message (a call per message costs four times as much); a
    # record separator on a line of its own is no part of any secret, so the parts come back
    masked = mask_text(_SEPARATOR.join(bodies)).text.split(_SEPARATOR)
    if len(masked) != len(bodies):  # (never seen: then message by message)
        masked = [mask_text(b).text for b in bodies]
    return [" ".join(terms(m)) for m in masked]


_SEPARATOR = "\n\x1e\n"


def tally(commits: int, counted: Sequence[Sequence[str]], said: Sequence[str] = ()) -> CoChange:
    """The counts of ``commits`` commits whose counted files (:func:`counted_files`) are
    ``counted``: each commit gives each of its ``k`` files ``1 / (k - 1)`` with every partner,
    added in commit order (so the float sums are the same bits wherever they are recomputed).
    ``said``: each counted commit's message terms, kept with its files (empty: none known)."""
    touched: dict[str, int] = {}
    shared: dict[str, dict[str, float]] = {}
    for files in counted:
        for f in files:
            touched[f] = touched.get(f, 0) + 1
        if len(files) > 1:
            weight = 1.0 / (len(files) - 1)
            for h in files:
                row = shared.setdefault(h, {})
                for f in files:
                    if f != h:
                        row[f] = row.get(f, 0.0) + weight
    return CoChange(commits, touched, shared, list(counted),
                    list(said) if len(said) == len(counted) else [""] * len(counted))


# ---------------------------------------------------------------- cache


def _cache_file(root: Path) -> Path:
    return Path(root) / CACHE_DIR / "changes.json"


_READ: dict[str, tuple[tuple[int, int], dict[str, Change]]] = {}  # path -> (stat key, parsed cache)


def _read_cache(path: Path) -> dict[str, Change]:
    """Cached change lists by commit (a commit's changes never change); empty when unreadable.
    Parsed once per process while the file is unchanged (``eval run`` asks for many commits)."""
    return _read_memoised(path, _READ, CACHE_VERSION, lambda doc: {
        sha: Change(sha, tuple(p), tuple((a, b) for a, b in r)) for sha, p, r in doc["changes"]})


# Cache files a process keeps parsed, per kind: ``eval run`` asks for the tasks of several
# repositories in turn (SWE-Lite's six interleaved), each with its own cache file; keeping only
# the last one read parsed a repository's change cache again for 40 of its 52 tasks.
_READ_KEEP = 8


def _read_memoised(path: Path, memo: dict, version: int, parse) -> dict:
    """A cache file's contents as ``parse`` makes them from its JSON, parsed once per process while
    the file is unchanged (``memo`` keeps the last :data:`_READ_KEEP` files read); empty when
    unreadable or written by another version."""
    try:
        st = path.stat()
        key = (st.st_mtime_ns, st.st_size)
        seen = memo.get(str(path))
        if seen is not None and seen[0] == key:
            return dict(seen[1])
        doc = json.loads(path.read_text(encoding="utf-8", errors="surrogateescape"))
        if doc.get("version") != version:
            return {}
        parsed = parse(doc)
    except (OSError, ValueError, KeyError, TypeError, AttributeError):
        return {}
    memo.pop(str(path), None)
    while len(memo) >= _READ_KEEP:  # the oldest file read goes first
        memo.pop(next(iter(memo)))
    memo[str(path)] = (key, parsed)
    return dict(parsed)


def _write_cache(path: Path, changes: dict[str, Change]) -> None:
    _write_json(path, {"version": CACHE_VERSION,
                       "changes": [[c.sha, list(c.paths), [list(r) for r in c.renames]] for c in changes.values()]})


def _write_json(path: Path, doc: dict) -> None:
    """Write a cache file of this module: compact JSON through a temp file and a rename (atomic: a
    concurrent reader sees the old or the new file; a rebuildable cache needs no fsync)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f"{path.name}.{os.getpid()}.tmp")
    tmp.write_text(json.dumps(doc, separators=(",", ":")), encoding="utf-8", errors="surrogateescape")
    os.replace(tmp, path)


def _trimmed(known: dict, wanted: Sequence[str], keep: int) -> dict:
    """``known`` (by commit, oldest entries first) with its oldest entries beyond ``keep`` dropped,
    except those of ``wanted`` (a snapshot's own commits always stay)."""
    if len(known) <= keep:
        return known
    needed = set(wanted)
    others = [s for s in known if s not in needed]
    drop = set(others[: len(known) - keep])
    return {s: v for s, v in known.items() if s not in drop}


def _said_file(root: Path) -> Path:
    return Path(root) / CACHE_DIR / "said.json"


_SAID_READ: dict[str, tuple[tuple[int, int], dict[str, str]]] = {}  # path -> (stat key, parsed)


def _read_said(path: Path) -> dict[str, str]:
    """Cached message terms by commit (a commit's message never changes); empty when unreadable.
    Parsed once per process while the file is unchanged."""
    return _read_memoised(path, _SAID_READ, SAID_VERSION, lambda doc: {
        str(k): v for k, v in doc["said"].items() if isinstance(v, str)})


def _write_said(path: Path, said: dict[str, str]) -> None:
    try:
        _write_json(path, {"version": SAID_VERSION, "said": said})
    except OSError:
        pass  # a read-only cache directory costs speed, never an answer


def _said_of(git: Git, cache_root: Path | None, shas: list[str], keep: int) -> tuple[list[str], dict[str, str] | None]:
    """The message terms of ``shas`` (:func:`message_terms`), those cached under ``cache_root``
    read back; and the cache to keep when some were new (None: nothing to write), its oldest
    entries beyond ``keep`` dropped (``shas`` themselves always stay)."""
    path = _said_file(cache_root) if cache_root is not None else None
    known = _read_said(path) if path is not None and path.is_file() else {}
    missing = [s for s in shas if s not in known]
    if missing:
        known.update(zip(missing, message_terms(git, missing)))
    said = [known[s] for s in shas]
    if not missing or path is None:
        return said, None
    return said, _trimmed(known, shas, keep)


def _shallow_boundary(git: Git, parentless: list[str]) -> set[str]:
    """Those of ``parentless`` commits that are a shallow clone's boundary (``$GIT_DIR/shallow``),
    not true root commits."""
    if not parentless:
        return set()
    listed = Path(git.root) / git.run("rev-parse", "--git-path", "shallow").decode().strip()
    try:
        shallow = set(listed.read_text(encoding="ascii").split())
    except OSError:
        return set()
    return {s for s in parentless if s in shallow}


def load_changes(git: Git, cache_root: Path | None, sha: str, limit: int = DEFAULT_LIMIT,
                 write: bool = True) -> list[Change]:
    """The change lists of the last ``limit`` non-merge commits reachable from ``sha``, newest
    first. Commits already in the cache under ``cache_root`` (the worktree root; None: no cache)
    are not read again, so a new snapshot mines only the commits since the last one; ``write =
    False`` leaves the cache as it is (a read command writes nothing)."""
    changes, cache = _gather(git, cache_root, sha, limit)
    if cache is not None and cache_root is not None and write:
        _keep_cache(_cache_file(cache_root), cache)
    return changes


def _gather(git: Git, cache_root: Path | None, sha: str, limit: int) -> tuple[list[Change], dict[str, Change] | None]:
    """:func:`load_changes` without writing: the change lists, and the cache to keep when
    commits were mined (None when the cache already had them all), trimmed to ``CACHE_KEEP``."""
    listed = [line.split() for line in
              git.run("rev-list", "--no-merges", "--parents", f"--max-count={limit}", sha, "--").decode().splitlines()]
    shas = [ids[0] for ids in listed]
    if not shas:
        return [], None
    path = _cache_file(cache_root) if cache_root is not None else None
    known = _read_cache(path) if path is not None and path.is_file() else {}
    roots = _shallow_boundary(git, [ids[0] for ids in listed if len(ids) == 1])
    missing = [s for s in shas if s not in known and s not in roots]
    cache = None
    if missing:
        raw = diff_tree_stdin(git, missing, DIFF_FLAGS, min(MINERS, os.cpu_count() or 1))
        mined = {c.sha: c for c in _parse_diff_tree(raw)}
        for s in missing:  # an empty commit prints nothing
            known[s] = mined.get(s) or Change(s, ())
        if path is not None:  # this snapshot's commits and the newest others
            cache = _trimmed(known, shas, CACHE_KEEP * limit)
    return [Change(s, ()) if s in roots else known[s] for s in shas], cache


def _keep_cache(path: Path, changes: dict[str, Change]) -> None:
    try:
        _write_cache(path, changes)
    except OSError:
        pass  # a read-only cache directory costs speed, never an answer


_MEMO: dict[tuple[str, str, int, int], CoChange] = {}
_MEMO_SIZE = 4


def _counts_file(root: Path, sha: str) -> Path:
    return Path(root) / CACHE_DIR / f"counts-{sha}.json"


def _read_counts(path: Path, limit: int, max_files: int) -> CoChange | None:
    """A snapshot's stored counts, or None when absent, unreadable or counted otherwise."""
    try:
        doc = json.loads(path.read_text(encoding="utf-8", errors="surrogateescape"))
        if doc.get("version") != COUNTS_VERSION or doc.get("limit") != limit or doc.get("max_files") != max_files:
            return None
        files = doc["files"]
        counted = [[files[i] for i in group] for group in doc["counted"]]
        said = doc["said"]
        if len(said) != len(counted) or not all(isinstance(s, str) for s in said):
            return None
        return tally(int(doc["commits"]), counted, said)
    except (OSError, ValueError, KeyError, TypeError, IndexError):
        return None


def _write_counts(path: Path, commits: int, counted: list[list[str]], said: list[str], limit: int,
                  max_files: int) -> None:
    """Store what a snapshot's counts are made of (atomically) and drop all but the newest
    ``COUNTS_KEEP``; a read-only cache directory costs speed, never an answer.

    The file holds each counted commit's files (as indices into its list of paths), not the
    pair sums: a few integers per commit instead of a float per pair (3.4 MB → ~0.2 MB on
    vitest), so writing it costs a thirtieth and reading it back (:func:`tally`) no more than
    parsing the sums did."""
    try:
        index: dict[str, int] = {}
        groups = [[index.setdefault(f, len(index)) for f in files] for files in counted]
        _write_json(path, {"version": COUNTS_VERSION, "limit": limit, "max_files": max_files, "commits": commits,
                           "files": list(index), "counted": groups, "said": said})
        kept = sorted(path.parent.glob("counts-*.json"), key=lambda p: p.stat().st_mtime_ns, reverse=True)
        for old in kept[COUNTS_KEEP:]:
            old.unlink(missing_ok=True)
    except OSError:
        pass


def cochange_at(git: Git, cache_root: Path | None, sha: str, limit: int = DEFAULT_LIMIT,
                max_files: int = MAX_FILES, *, keep_changes: bool = False, keep_counts: bool = False,
                ahead: "Mining | None" = None) -> CoChange:
    """Co-change counts of snapshot ``sha``: memoised per process (a warm query pays nothing),
    then read from the snapshot's stored counts, else mined and counted (by ``ahead``, mining
    started earlier, when it mined this very snapshot without failing). Only a writing command
    keeps what it mined (``keep_changes``) and counted (``keep_counts``): ``ingest`` keeps both, so
    the queries after it read one small file; ``eval run``, which asks for many commits once
    each, keeps only the change lists; a query keeps nothing."""
    key = (str(git.root), sha, limit, max_files)
    got = _MEMO.get(key)
    if got is None:
        stored = _counts_file(cache_root, sha) if cache_root is not None else None
        got = _read_counts(stored, limit, max_files) if stored is not None else None
        if got is None:
            from ..gcpause import paused

            with paused():  # thousands of acyclic change records: no collector passes over them
                found = ahead.result() if ahead is not None and ahead.answers(key, cache_root) else None
                if found is None:
                    found = _mine(git, cache_root, sha, limit, max_files)
                if found.cache is not None and cache_root is not None and keep_changes:
                    _keep_cache(_cache_file(cache_root), found.cache)
                if found.said_cache is not None and cache_root is not None and keep_changes:
                    _write_said(_said_file(cache_root), found.said_cache)
                if stored is not None and keep_counts:
                    counts = found.counts
                    _write_counts(stored, counts.commits, counts.counted, counts.said, limit, max_files)
                got = found.counts
        if len(_MEMO) >= _MEMO_SIZE:
            _MEMO.pop(next(iter(_MEMO)))
        _MEMO[key] = got
    return got


@dataclass(frozen=True)
class _Mined:
    """One snapshot mined: its counts (with each counted commit's files and message terms, what
    the counts file keeps), and the change and message-terms caches to keep (None: unchanged)."""

    counts: CoChange
    cache: dict[str, Change] | None
    said_cache: dict[str, str] | None = None


def _mine(git: Git, cache_root: Path | None, sha: str, limit: int, max_files: int) -> _Mined:
    """Mine and count snapshot ``sha``, writing nothing."""
    changes, cache = _gather(git, cache_root, sha, limit)
    shas, counted = _counted(changes, max_files)
    said, said_cache = _said_of(git, cache_root, shas, CACHE_KEEP * limit)
    return _Mined(tally(len(changes), counted, said), cache, said_cache)


class Mining:
    """Co-change mining of one snapshot started ahead in a thread, so that its git processes
    (``rev-list``, ``diff-tree -M``: most of the mining's time, ~0.1-0.25 s on the speed set's
    repositories) run while the caller does other work: ``ingest`` starts it once it knows the
    commit it will publish, chunks and embeds meanwhile, and hands it to :func:`cochange_at`
    after publishing. It writes nothing and never raises: a failure leaves :func:`cochange_at`
    to mine again in the caller's thread, as it would without this. The collector switch is
    process-global: start it and hand it over inside one ``gcpause.paused`` block."""

    def __init__(self, git: Git, cache_root: Path | None, sha: str, limit: int = DEFAULT_LIMIT,
                 max_files: int = MAX_FILES):
        import threading

        self.key = (str(git.root), sha, limit, max_files)
        self.cache_root = cache_root
        self._found: _Mined | None = None
        self._thread = threading.Thread(target=self._work, args=(git, cache_root, sha, limit, max_files),
                                        name="ragit-cochange", daemon=True)
        self._thread.start()

    def _work(self, git: Git, cache_root: Path | None, sha: str, limit: int, max_files: int) -> None:
        try:
            self._found = _mine(git, cache_root, sha, limit, max_files)
        except Exception:  # noqa: BLE001 — GitError, OSError, ...: the caller's own attempt reports it
            self._found = None

    def answers(self, key: tuple[str, str, int, int], cache_root: Path | None) -> bool:
        """Whether this mining is of the snapshot (and limits) ``key`` with the same cache."""
        return key == self.key and cache_root == self.cache_root

    def result(self) -> "_Mined | None":
        """Wait for the thread; what it mined, or None when it failed."""
        self._thread.join()
        return self._found


def mine_ahead(git: Git, cache_root: Path | None, sha: str) -> Mining | None:
    """Start mining snapshot ``sha`` in the background (:class:`Mining`), unless this process
    has its counts already or the snapshot's counts file exists (nothing to overlap then)."""
    if (str(git.root), sha, DEFAULT_LIMIT, MAX_FILES) in _MEMO:
        return None
    if cache_root is not None and _counts_file(cache_root, sha).is_file():
        return None
    return Mining(git, cache_root, sha)
