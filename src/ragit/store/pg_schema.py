"""The PostgreSQL store's schema as versioned migrations (knowledge §2.2, §18).

Each migration runs once, in order, inside one transaction that also records it in
``ragit_migrations``; ``ragit migrate`` applies the pending ones (``--dry-run`` lists them). A
transaction-scoped advisory lock makes two clients migrating at once apply each step once.

Tables fall in two groups:

* content-addressed, shared by every repository, branch and worktree in the database: ``blobs``,
  ``chunks``, ``vectors`` (pgvector, one row per (chunk, embedder)), ``blob_norms`` and the keyword
  index (``keyword_rows`` per (path, chunk) pair; ``keyword_segments``, each term's postings
  packed in segments: see ragit.store.pg_keyword);
* per repository: ``repositories``, ``snapshots`` (one per (repository, commit)),
  ``snapshot_manifests`` (every manifest file published for it, one per clone or worktree),
  ``snapshot_docs`` and ``snapshot_rows`` (the packed rows of ragit.store.packed).

``LAYOUT`` maps the newest migration to the store layout version (``SCHEMA_VERSION`` of
ragit.store.base) it implements: a layout change of the SQLite store (a new keyword layout) needs
a migration here too.
"""

from __future__ import annotations

from contextlib import contextmanager
from dataclasses import dataclass

# the advisory lock key that serialises migrations (any constant distinct from snapshot locks)
MIGRATION_LOCK = 0x7261676974  # "ragit"


@dataclass(frozen=True)
class Migration:
    version: int
    name: str
    sql: str


MIGRATIONS: tuple[Migration, ...] = (
    Migration(1, "extension vector and the initial tables", """
CREATE EXTENSION IF NOT EXISTS vector;
CREATE TABLE store_meta(key TEXT PRIMARY KEY, value TEXT NOT NULL);
INSERT INTO store_meta VALUES ('keyword_generation', '0');
CREATE TABLE repositories(
  repo_id TEXT PRIMARY KEY, created_at TIMESTAMPTZ NOT NULL DEFAULT now());
CREATE TABLE blobs(
  blob_id TEXT NOT NULL, profile TEXT NOT NULL, chunker TEXT NOT NULL, chunker_key TEXT NOT NULL,
  front_matter_type TEXT, heading_type TEXT, masked_count INTEGER NOT NULL, skip_reason TEXT,
  chunk_count INTEGER NOT NULL, PRIMARY KEY(blob_id, profile));
CREATE TABLE chunks(
  chunk_id TEXT PRIMARY KEY, blob_id TEXT NOT NULL, chunker_key TEXT NOT NULL, ordinal INTEGER NOT NULL,
  title TEXT NOT NULL, start_line INTEGER NOT NULL, end_line INTEGER NOT NULL, text TEXT NOT NULL,
  token_count INTEGER NOT NULL, citation_id TEXT NOT NULL);
CREATE INDEX chunks_by_blob ON chunks(blob_id, chunker_key, ordinal);
CREATE INDEX chunks_by_citation ON chunks(citation_id);
CREATE TABLE embedders(embedder_id TEXT PRIMARY KEY, dims INTEGER NOT NULL);
CREATE TABLE vectors(
  slot BIGSERIAL UNIQUE, chunk_id TEXT NOT NULL, embedder_id TEXT NOT NULL, vec vector NOT NULL,
  PRIMARY KEY(chunk_id, embedder_id));
CREATE TABLE blob_norms(
  blob_id TEXT NOT NULL, chunker_key TEXT NOT NULL, embedder_id TEXT NOT NULL, norm DOUBLE PRECISION NOT NULL,
  PRIMARY KEY(blob_id, chunker_key, embedder_id));
CREATE TABLE keyword_rows(
  row_id BIGSERIAL PRIMARY KEY, path TEXT NOT NULL, chunk_id TEXT NOT NULL, tokens INTEGER NOT NULL,
  UNIQUE(path, chunk_id));
CREATE TABLE keyword_postings(
  term TEXT NOT NULL, row_id BIGINT NOT NULL, tf DOUBLE PRECISION NOT NULL, PRIMARY KEY(term, row_id));
CREATE TABLE snapshots(
  repo_id TEXT NOT NULL, commit_sha TEXT NOT NULL, content_sha256 TEXT NOT NULL, params TEXT NOT NULL,
  created_at TEXT NOT NULL, PRIMARY KEY(repo_id, commit_sha));
CREATE TABLE snapshot_manifests(
  repo_id TEXT NOT NULL, commit_sha TEXT NOT NULL, manifest_sha256 TEXT NOT NULL,
  published_at TIMESTAMPTZ NOT NULL DEFAULT now(), PRIMARY KEY(repo_id, commit_sha, manifest_sha256));
CREATE TABLE snapshot_docs(
  repo_id TEXT NOT NULL, commit_sha TEXT NOT NULL, path TEXT NOT NULL, doc_type TEXT NOT NULL,
  blob_id TEXT NOT NULL, chunker_key TEXT NOT NULL, PRIMARY KEY(repo_id, commit_sha, path));
CREATE TABLE snapshot_rows(
  repo_id TEXT NOT NULL, commit_sha TEXT NOT NULL, embedder_id TEXT NOT NULL, rowids BYTEA NOT NULL,
  slots BYTEA NOT NULL, files BYTEA NOT NULL, lengths BYTEA NOT NULL, file_norms BYTEA NOT NULL,
  PRIMARY KEY(repo_id, commit_sha, embedder_id));
"""),
    Migration(2, "keyword postings packed per term", """
CREATE TABLE keyword_segments(
  term TEXT NOT NULL, seg BIGSERIAL NOT NULL, first_row BIGINT NOT NULL, last_row BIGINT NOT NULL,
  offsets BYTEA NOT NULL, tfs BYTEA NOT NULL, PRIMARY KEY(term, seg));
ALTER TABLE keyword_segments ALTER COLUMN offsets SET STORAGE EXTERNAL, ALTER COLUMN tfs SET STORAGE EXTERNAL;
INSERT INTO keyword_segments(term, first_row, last_row, offsets, tfs)
SELECT term, (row_id >> 20) << 20, max(row_id),
       string_agg(int4send((row_id - ((row_id >> 20) << 20))::int4), ''::bytea ORDER BY row_id),
       string_agg(float8send(tf), ''::bytea ORDER BY row_id)
  FROM keyword_postings GROUP BY term, row_id >> 20;
DROP TABLE keyword_postings;
"""),
)

LATEST = MIGRATIONS[-1].version
# migration version -> store layout version (ragit.store.base.SCHEMA_VERSION) from that migration
# on; a migration that leaves the layout as it was needs no entry
LAYOUT = {1: 5}


def layout_version(migrated: int) -> int | None:
    """The store layout a database migrated up to ``migrated`` provides (None for a database a
    newer ragit migrated past what this one knows: its tables may not be these)."""
    if migrated > LATEST:
        return None
    steps = [v for v in LAYOUT if v <= migrated]
    return LAYOUT[max(steps)] if steps else None

_LEDGER = """CREATE TABLE IF NOT EXISTS ragit_migrations(
  version INTEGER PRIMARY KEY, name TEXT NOT NULL, applied_at TIMESTAMPTZ NOT NULL DEFAULT now())"""


def applied_versions(conn) -> list[int]:
    """Versions recorded in the database (empty when ragit never migrated it)."""
    exists = conn.execute("SELECT to_regclass('ragit_migrations') IS NOT NULL").fetchone()[0]
    if not exists:
        return []
    return [int(r[0]) for r in conn.execute("SELECT version FROM ragit_migrations ORDER BY version")]


def pending(conn) -> list[Migration]:
    done = set(applied_versions(conn))
    return [m for m in MIGRATIONS if m.version not in done]


@contextmanager
def migration_lock(conn):
    """Hold the migration lock for this session (for a decision that must not see another
    client's schema half applied: each step commits on its own, so between two steps the ledger
    lists the first and not the next). Steps this session applies meanwhile take the same lock
    again, which a holder always gets."""
    conn.execute("SELECT pg_advisory_lock(%s)", (MIGRATION_LOCK,))
    try:
        yield
    finally:
        conn.execute("SELECT pg_advisory_unlock(%s)", (MIGRATION_LOCK,))


def apply_pending(conn) -> list[int]:
    """Apply every pending migration, each in its own transaction with its ledger row; returns
    the versions this call applied (another client may have applied some meanwhile)."""
    applied: list[int] = []
    for migration in MIGRATIONS:
        with conn.transaction():
            conn.execute("SELECT pg_advisory_xact_lock(%s)", (MIGRATION_LOCK,))
            conn.execute(_LEDGER)
            done = conn.execute("SELECT 1 FROM ragit_migrations WHERE version = %s", (migration.version,)).fetchone()
            if done:
                continue
            conn.execute(migration.sql)
            conn.execute("INSERT INTO ragit_migrations(version, name) VALUES (%s, %s)",
                         (migration.version, migration.name))
            applied.append(migration.version)
    return applied
