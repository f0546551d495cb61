"""The history index: commit messages and masked diff hunks, searchable by keyword
(knowledge §12.8, ``--scope history``).

A commit's message and diff never change, so each commit is indexed once, by ``ingest`` (the
last :data:`INDEX_COMMITS` commits reachable from the commit it indexed, minus those already
held), and a query only reads. The index is a cache, rebuildable from git: one SQLite file under
``.ragit/cache/history/`` in rollback-journal mode, so a read-only connection creates nothing.

Per commit: one *message* entry (the whole message; its path is the 12-hex SHA) and one *hunk*
entry per diff hunk of a non-binary file (path = the file after the change, lines = the hunk's
new side). Bounded: at most :data:`MAX_FILES` files and :data:`MAX_HUNKS` hunks per commit
(a larger commit — a vendored update, a mass rename — keeps its first ones), each hunk cut to
:data:`MAX_HUNK_LINES` lines / :data:`MAX_HUNK_CHARS` characters, files the ingest skip table
calls generated or vendored (lock files, minified bundles) left out; merges index only their
message. Every text is masked (ragit.security.masking) before it is stored. A masking-version or
format change rebuilds the file at the next ingest; a read of a file built otherwise finds
nothing and says so.

A search is scoped to the commits reachable from the snapshot's commit (``git rev-list``, the
same window), so the answer at a commit never depends on what else the index holds. FTS5's own
BM25 (columns text, title, path weighted 1, 2, 2, terms from ragit.lexical) picks the best
:data:`SEARCH_LIMIT` entries; retrieval then scores them like every overlay candidate.
"""

from __future__ import annotations

import sqlite3
from dataclasses import dataclass
from pathlib import Path

from ..gitsnap.git import Git, GitError
from ..gitsnap.linehistory import PINNED_CONFIG, PINNED_OPTIONS
from ..gitsnap.patches import parse_patch

INDEX_COMMITS = 1000  # commits reachable from a snapshot that are indexed and searched
MAX_FILES = 50  # files per commit whose hunks are indexed
MAX_HUNKS = 100  # hunks per commit
MAX_HUNK_LINES = 40
MAX_HUNK_CHARS = 3000
MAX_MESSAGE_CHARS = 4000
SEARCH_LIMIT = 50  # entries a search hands to retrieval
BATCH = 200  # commits read per git process
FORMAT_VERSION = "1"
INDEX_DIR = Path(".ragit") / "cache" / "history"
INDEX_FILE = "history.db"
_MARK = "\0COMMIT\0"
_FORMAT = "--format=%x00COMMIT%x00%H%x00%ct%x00%P%x00%B%x00"

_SCHEMA = """
CREATE TABLE IF NOT EXISTS meta(key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS commits(id INTEGER PRIMARY KEY, sha TEXT NOT NULL UNIQUE, committed INTEGER NOT NULL,
                                   subject TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS entries(id INTEGER PRIMARY KEY, commit_id INTEGER NOT NULL, kind TEXT NOT NULL,
                                   path TEXT NOT NULL, ordinal INTEGER NOT NULL, start_line INTEGER,
                                   end_line INTEGER, text TEXT NOT NULL);
CREATE INDEX IF NOT EXISTS entries_commit ON entries(commit_id);
CREATE VIRTUAL TABLE IF NOT EXISTS entries_fts USING fts5(text, title, path, content='', tokenize='ascii');
"""


@dataclass(frozen=True)
class Entry:
    """One searchable piece of a commit: its message, or one masked hunk of one file."""

    sha: str
    committed: int  # committer time, seconds since the epoch
    subject: str  # masked
    kind: str  # ``message`` or ``hunk``
    path: str  # the file, or the commit's 12-hex SHA for the message
    ordinal: int  # 0 for the message, 1.. for the commit's hunks in diff order
    start_line: int | None
    end_line: int | None
    text: str  # masked


@dataclass
class SearchResult:
    """A search's entries (best first) and why there may be none (a warning for the reader)."""

    entries: list[Entry]
    warning: str | None = None


def index_file(root: Path) -> Path:
    return Path(root) / INDEX_DIR / INDEX_FILE


def _masking_key() -> str:
    from ..security.masking import MASKING_VERSION

    return f"{FORMAT_VERSION}+mask-{MASKING_VERSION}"


# ---------------------------------------------------------------- reading commits


def _fields(text: str, title: str, path: str) -> tuple[str, str, str]:
    """The three FTS columns as space-separated ragit.lexical terms (repeats kept)."""
    from ..lexical import path_text, term_counts, title_name

    return tuple(" ".join(" ".join([t] * n) for t, n in term_counts(s).items())  # type: ignore[return-value]
                 for s in (text, title_name(title), path_text(path)))


def commit_entries(sha: str, committed: int, message: str, patch: str) -> list[Entry]:
    """The masked entries of one commit from its message and patch text."""
    from ..ingest.skips import path_skip
    from ..security.masking import mask_text
    from .hunks import capped, masked_diff, printable_path

    message = message.strip("\n")
    subject = mask_text(message.split("\n", 1)[0]).text
    out = [Entry(sha, committed, subject, "message", sha[:12], 0, None, None,
                 mask_text(message[:MAX_MESSAGE_CHARS]).text)]
    files = [f for f in parse_patch(patch) if not f.binary and f.hunks and path_skip(f.path) is None]
    ordinal = 0
    for diff in files[:MAX_FILES]:
        for hunk in diff.hunks:
            if ordinal == MAX_HUNKS:
                return out
            ordinal += 1
            span = hunk.new_range
            text = masked_diff(capped(hunk.text(), MAX_HUNK_LINES, MAX_HUNK_CHARS), diff.path)[0]
            out.append(Entry(sha, committed, subject, "hunk", mask_text(printable_path(diff.path)).text, ordinal,
                             span[0] if span else None, span[1] if span else None, text))
    return out


def read_commits(git: Git, shas: list[str]) -> list[list[Entry]]:
    """Entries of each of ``shas`` (one ``git log --no-walk`` per :data:`BATCH` commits). A
    commit whose diff git cannot read (a blob missing from a partial clone) keeps its message."""
    out: list[list[Entry]] = []
    for i in range(0, len(shas), BATCH):
        chunk = shas[i:i + BATCH]
        try:
            out += _read(git, chunk, True)
        except GitError:
            for sha in chunk:
                try:
                    out += _read(git, [sha], True)
                except GitError:
                    out += _read(git, [sha], False)
    return out


def _read(git: Git, shas: list[str], patches: bool) -> list[list[Entry]]:
    raw = git.run(*PINNED_CONFIG, "log", *PINNED_OPTIONS, "--no-walk=unsorted", "--stdin",
                  *(("-p", "-M", "--diff-merges=off") if patches else ("--no-patch",)), _FORMAT,
                  input=("\n".join(shas) + "\n").encode())
    out: list[list[Entry]] = []
    for record in raw.decode("utf-8", "replace").split(_MARK)[1:]:
        sha, seconds, _parents, message, patch = (record.split("\0", 4) + ["", "", "", ""])[:5]
        out.append(commit_entries(sha, int(seconds or 0), message, patch))
    return out


def reachable(git: Git, sha: str, window: int = INDEX_COMMITS) -> list[str]:
    """The last ``window`` commits reachable from ``sha``, newest first (merges included)."""
    return git.run("rev-list", f"--max-count={window}", sha, "--").decode().split()


# ---------------------------------------------------------------- writing (ingest)


def _open_write(path: Path) -> sqlite3.Connection:
    path.parent.mkdir(parents=True, exist_ok=True)
    db = sqlite3.connect(path, timeout=30.0, isolation_level=None)
    db.execute("PRAGMA journal_mode=DELETE")
    return db


def update_index(git: Git, root: Path, sha: str, window: int = INDEX_COMMITS) -> int:
    """Index the commits of ``sha``'s window that the index lacks; returns how many were added.
    A file of another format or masking version is rebuilt. Concurrent ingests are safe: each
    commit is inserted once (``INSERT OR IGNORE`` on its SHA, one transaction per batch)."""
    path = index_file(root)
    wanted = reachable(git, sha, window)
    if not wanted:
        return 0
    db = _open_write(path)
    try:
        db.executescript(_SCHEMA)
        row = db.execute("SELECT value FROM meta WHERE key = 'version'").fetchone()
        if row is not None and row[0] != _masking_key():
            db.close()
            path.unlink(missing_ok=True)
            db = _open_write(path)
            db.executescript(_SCHEMA)
            row = None
        if row is None:
            db.execute("INSERT OR REPLACE INTO meta(key, value) VALUES ('version', ?)", (_masking_key(),))
        known = {s for (s,) in db.execute("SELECT sha FROM commits")}
        missing = [s for s in wanted if s not in known]
        added = 0
        for i in range(0, len(missing), BATCH):
            batch = read_commits(git, missing[i:i + BATCH])
            db.execute("BEGIN IMMEDIATE")
            try:
                for entries in batch:
                    added += _insert(db, entries)
                db.execute("COMMIT")
            except BaseException:
                db.execute("ROLLBACK")
                raise
        return added
    finally:
        db.close()


def _insert(db: sqlite3.Connection, entries: list[Entry]) -> int:
    head = entries[0]
    cur = db.execute("INSERT OR IGNORE INTO commits(sha, committed, subject) VALUES (?, ?, ?)",
                     (head.sha, head.committed, head.subject))
    if cur.rowcount == 0:  # a concurrent ingest indexed it first
        return 0
    commit_id = cur.lastrowid
    for e in entries:
        rowid = db.execute(
            "INSERT INTO entries(commit_id, kind, path, ordinal, start_line, end_line, text) VALUES (?, ?, ?, ?, ?, ?, ?)",
            (commit_id, e.kind, e.path, e.ordinal, e.start_line, e.end_line, e.text)).lastrowid
        db.execute("INSERT INTO entries_fts(rowid, text, title, path) VALUES (?, ?, ?, ?)",
                   (rowid, *_fields(e.text, e.subject, e.path)))
    return 1


def indexed_commits(root: Path) -> int:
    """How many commits the index holds (0 when absent)."""
    path = index_file(root)
    if not path.is_file():
        return 0
    db = _open_read(path)
    try:
        return int(db.execute("SELECT count(*) FROM commits").fetchone()[0])
    finally:
        db.close()


# ---------------------------------------------------------------- reading (query)


def _open_read(path: Path) -> sqlite3.Connection:
    db = sqlite3.connect(f"{path.resolve().as_uri()}?mode=ro", uri=True, timeout=30.0)
    db.execute("PRAGMA temp_store=MEMORY")
    return db


ABSENT = ("history index is absent: turn it on with `ragit config set history.index true`, then run "
          "`ragit ingest` to build it (--scope history found nothing)")


def search(git: Git, root: Path, sha: str, terms: list[str], limit: int = SEARCH_LIMIT,
           window: int = INDEX_COMMITS) -> SearchResult:
    """The best ``limit`` entries for ``terms`` (analysed keyword terms) among the commits
    reachable from ``sha``, by FTS5 BM25. Writes nothing."""
    path = index_file(root)
    if not path.is_file():
        return SearchResult([], ABSENT)
    try:
        db = _open_read(path)
    except sqlite3.Error:
        return SearchResult([], ABSENT)
    try:
        try:
            row = db.execute("SELECT value FROM meta WHERE key = 'version'").fetchone()
        except sqlite3.Error:
            return SearchResult([], ABSENT)
        if row is None or row[0] != _masking_key():
            return SearchResult([], "history index was built by another ragit version: run `ragit ingest`")
        if db.execute("SELECT 1 FROM commits WHERE sha = ?", (sha,)).fetchone() is None:
            warning = f"history index does not cover commit {sha[:12]}: run `ragit ingest` (--scope history found nothing)"
            return SearchResult([], warning)
        distinct = list(dict.fromkeys(t for t in terms if t))
        if not distinct:
            return SearchResult([])
        db.execute("CREATE TEMP TABLE reach(sha TEXT PRIMARY KEY) WITHOUT ROWID")
        db.executemany("INSERT OR IGNORE INTO temp.reach(sha) VALUES (?)", [(s,) for s in reachable(git, sha, window)])
        match = " OR ".join('"' + t.replace('"', '""') + '"' for t in distinct)
        rows = db.execute(
            "SELECT c.sha, c.committed, c.subject, e.kind, e.path, e.ordinal, e.start_line, e.end_line, e.text,"
            " bm25(entries_fts, 1.0, 2.0, 2.0) AS score"
            " FROM entries_fts JOIN entries e ON e.id = entries_fts.rowid"
            " JOIN commits c ON c.id = e.commit_id JOIN temp.reach r ON r.sha = c.sha"
            " WHERE entries_fts MATCH ? ORDER BY score, c.sha, e.ordinal LIMIT ?", (match, limit)).fetchall()
    finally:
        db.close()
    return SearchResult([Entry(*r[:9]) for r in rows])

