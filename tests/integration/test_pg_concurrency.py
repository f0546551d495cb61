"""Concurrent writers on the shared PostgreSQL store (issue 16 §2 and targets): two ingests of
one commit publish it once, and ``kill -9`` of an ingest leaves every published snapshot
readable. Real processes (``python -m ragit``), a real server."""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

from conftest import SAMPLE_FILES, pg_rows, write_pg_config

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "ordinary_code"


def _ragit(cwd: Path, dsn: str, *args: str) -> subprocess.Popen:
    env = {**os.environ, "RAGIT_DATABASE_URL": dsn}
    return subprocess.Popen([sys.executable, "-m", "ragit", *args, "--cwd", str(cwd), "--format", "json"],
                            env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def _add_corpus(root: Path, project: str) -> None:
    for src in sorted((FIXTURES / project).rglob("*.py")) + sorted((FIXTURES / project).rglob("*.go")):
        target = root / project / src.relative_to(FIXTURES / project)
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(src, target)


def _errors(outs: list[tuple[str, str]]) -> list:
    """Each run's error object (code, message, details) and stderr tail: what a failure needs, which
    pytest's truncated repr of the whole envelopes hid once (an exit 3 under heavy load)."""
    import json

    found = []
    for stdout, stderr in outs:
        try:
            envelope = json.loads(stdout)
        except ValueError:
            envelope = {}
        found.append((envelope.get("error") or envelope.get("errors"), stderr[-2000:]))
    return found


def test_two_ingests_of_one_commit_publish_it_once(git_repo, tmp_path, pg_dsn):
    write_pg_config(git_repo.root)
    _add_corpus(git_repo.root, "requests")
    git_repo.commit("initial", SAMPLE_FILES)
    trees = []
    for i in range(2):
        path = tmp_path / f"wt{i}"
        git_repo.git("worktree", "add", "-q", "--detach", str(path))
        write_pg_config(path)
        trees.append(path)
    procs = [_ragit(path, pg_dsn, "ingest", "--all") for path in trees]
    outs = [p.communicate(timeout=300) for p in procs]
    assert [p.returncode for p in procs] == [0, 0], _errors(outs)

    head = git_repo.head()
    assert pg_rows(pg_dsn, "SELECT COUNT(*) FROM snapshots WHERE commit_sha = %s", (head,))[0][0] == 1
    # each worktree recorded its own manifest, in a transaction of its own
    manifests = pg_rows(pg_dsn, "SELECT xmin::text FROM snapshot_manifests WHERE commit_sha = %s", (head,))
    assert len(manifests) == 2 and len({m[0] for m in manifests}) == 2
    # ... but the snapshot's rows were written by exactly one of them: published once
    snapshot_tx = pg_rows(pg_dsn, "SELECT xmin::text FROM snapshots WHERE commit_sha = %s", (head,))[0][0]
    assert snapshot_tx in {m[0] for m in manifests}
    assert {r[0] for r in pg_rows(pg_dsn, "SELECT DISTINCT xmin::text FROM snapshot_docs")} == {snapshot_tx}
    assert {r[0] for r in pg_rows(pg_dsn, "SELECT DISTINCT xmin::text FROM snapshot_rows")} == {snapshot_tx}
    chunks = pg_rows(pg_dsn, "SELECT COUNT(*) FROM chunks")[0][0]
    assert pg_rows(pg_dsn, "SELECT COUNT(*) FROM vectors")[0][0] == chunks
    assert pg_rows(pg_dsn, "SELECT COUNT(*) FROM keyword_rows")[0][0] == chunks
    for path in trees:
        q = _ragit(path, pg_dsn, "query", "restore auth context")
        out, err = q.communicate(timeout=120)
        assert q.returncode == 0, err
        assert '"path": "src/auth.py"' in out


def _wait_for(predicate, timeout: float = 120.0) -> None:
    deadline = time.monotonic() + timeout
    while not predicate():
        assert time.monotonic() < deadline, "timed out"
        time.sleep(0.05)


def test_kill_9_of_an_ingest_leaves_published_snapshots_readable(git_repo, pg_dsn, cli, monkeypatch):
    import psycopg

    from ragit.config import load_config
    from ragit.store import repository_id
    from ragit.store.postgres import PUBLISH_LOCK_CLASS, _lock_key

    monkeypatch.setenv("RAGIT_DATABASE_URL", pg_dsn)
    write_pg_config(git_repo.root)
    first = git_repo.commit("initial", SAMPLE_FILES)
    assert cli("ingest", "--all", "--cwd", str(git_repo.root), "--format", "json").code == 0
    _add_corpus(git_repo.root, "gin")
    second = git_repo.commit("gin")
    before = cli("query", "restore auth context", "--at", first, "--cwd", str(git_repo.root), "--format", "json")

    # hold the publication lock of the second commit, so the ingest is caught inside its
    # publishing transaction (its batches of chunks and vectors are already committed)
    repo = repository_id(git_repo.root, load_config(git_repo.root))
    holder = psycopg.connect(pg_dsn, autocommit=True)
    try:
        holder.execute("SELECT pg_advisory_lock(%s, %s)", (PUBLISH_LOCK_CLASS, _lock_key(repo, second)))
        proc = _ragit(git_repo.root, pg_dsn, "ingest", "--all")
        _wait_for(lambda: pg_rows(
            pg_dsn, "SELECT COUNT(*) FROM pg_stat_activity WHERE wait_event_type = 'Lock'"
                    " AND wait_event = 'advisory'")[0][0] == 1 or proc.poll() is not None)
        assert proc.poll() is None, proc.communicate()
        os.kill(proc.pid, signal.SIGKILL)
        proc.communicate(timeout=60)
        assert proc.returncode == -signal.SIGKILL
    finally:
        holder.close()

    # the server rolled the publication back: no trace of the second snapshot, the first intact
    assert pg_rows(pg_dsn, "SELECT commit_sha FROM snapshots") == [(first,)]
    assert not pg_rows(pg_dsn, "SELECT 1 FROM snapshot_docs WHERE commit_sha = %s", (second,))
    after = cli("query", "restore auth context", "--at", first, "--cwd", str(git_repo.root), "--format", "json")
    assert after.code == 0 and after.json["data"]["hits"] == before.json["data"]["hits"]
    doctor = cli("doctor", "--cwd", str(git_repo.root), "--format", "json").json["data"]
    consistency = next(c for c in doctor["checks"] if c["name"] == "ragit.manifest-consistency")
    assert consistency["ok"], consistency
    # the batches the killed ingest committed are reused by the next one
    again = cli("ingest", "--all", "--cwd", str(git_repo.root), "--format", "json")
    assert again.code == 0, again
    assert again.json["data"]["embeddedChunks"] == 0
    r = cli("query", "router group", "--at", second, "--cwd", str(git_repo.root), "--format", "json")
    assert r.code == 0 and any(h["path"].startswith("gin/") for h in r.json["data"]["hits"])


def test_a_second_writer_waits_for_the_first_to_finish_the_schema(pg_dsn):
    """Each migration step commits on its own, so between two steps of a first writer's schema the
    ledger lists the first only. A second writer opening then waits for the whole schema instead of
    refusing with "needs schema migrations" (an exit 3 in the test above, once, under load)."""
    import threading

    import psycopg

    from ragit.store import pg_schema
    from ragit.store.postgres import PostgresStore

    assert len(pg_schema.MIGRATIONS) >= 2
    first = pg_schema.MIGRATIONS[0]
    opened: dict[str, object] = {}

    def second_writer() -> None:
        try:
            opened["store"] = PostgresStore.open_write(pg_dsn, "repo")
        except Exception as exc:  # noqa: BLE001 - reported by the assertion below
            opened["error"] = exc

    with psycopg.connect(pg_dsn, autocommit=True) as first_writer:
        with pg_schema.migration_lock(first_writer):
            with first_writer.transaction():  # the first step, as apply_pending makes it
                first_writer.execute(pg_schema._LEDGER)
                first_writer.execute(first.sql)
                first_writer.execute("INSERT INTO ragit_migrations(version, name) VALUES (%s, %s)",
                                     (first.version, first.name))
            thread = threading.Thread(target=second_writer)
            thread.start()
            for _ in range(600):  # until the second writer waits on the migration lock
                if first_writer.execute("SELECT count(*) FROM pg_locks WHERE locktype = 'advisory'"
                                        " AND NOT granted").fetchone()[0]:
                    break
                if not thread.is_alive():
                    break
                time.sleep(0.05)
            assert thread.is_alive(), opened.get("error")
            pg_schema.apply_pending(first_writer)  # the remaining steps
        thread.join(60)
    assert "error" not in opened, opened.get("error")
    store = opened["store"]
    assert store.schema_version() == pg_schema.layout_version(pg_schema.LATEST)
    store.close()
