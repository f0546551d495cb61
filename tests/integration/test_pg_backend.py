"""Backend selection, connection faults and ``ragit migrate`` (knowledge §2.2, §3, §18;
cli-contract ``STORE_UNAVAILABLE`` and ``RAGIT_DATABASE_URL``)."""

from __future__ import annotations

import json

import pytest
from conftest import SAMPLE_FILES, pg_rows, tree_snapshot, write_pg_config, write_placeholder_config

from ragit.config import load_config
from ragit.store.pg_connect import redact_dsn

DEAD = "postgresql://app:hunter2@127.0.0.1:1/app"


@pytest.mark.parametrize("dsn, shown", [
    ("postgres://app:hunter2@db.internal:5432/app", "postgres://app:***@db.internal:5432/app"),
    ("postgresql://app:hunter2@db/app?sslmode=require", "postgresql://app:***@db/app?sslmode=require"),
    ("postgresql://app@db/app?password=hunter2&sslmode=require", "postgresql://app@db/app?password=***&sslmode=require"),
    ("host=db user=app password=hunter2 dbname=app", "host=db user=app password=*** dbname=app"),
    ("host=db password='hun ter2' dbname=app", "host=db password=*** dbname=app"),
    ("postgresql:///app?host=/tmp/sock", "postgresql:///app?host=/tmp/sock"),
])
def test_dsn_is_shown_without_its_password(dsn, shown):
    assert redact_dsn(dsn) == shown


def test_dead_dsn_is_store_unavailable_without_the_password(indexed_repo, cli, monkeypatch):
    write_pg_config(indexed_repo.root, DEAD)
    before = tree_snapshot(indexed_repo.root)
    for args in (("query", "restore auth context"), ("ingest", "--all"), ("migrate",)):
        r = cli(*args, "--cwd", str(indexed_repo.root), "--format", "json")
        assert r.code == 3, r
        error = r.json["error"]
        assert error["code"] == "STORE_UNAVAILABLE" and error["retryable"] is True
        assert error["category"] == "transient"
        assert error["details"] == {"backend": "postgres", "dsn": "postgresql://app:***@127.0.0.1:1/app",
                                    "reason": "connection_failed"}
        assert error["recovery"]["command"] == "ragit doctor"
        assert "hunter2" not in r.out + r.err
    # RAGIT_DATABASE_URL wins over store.dsn, and is never printed either
    monkeypatch.setenv("RAGIT_DATABASE_URL", "postgresql://ci:s3cret@127.0.0.1:1/ci")
    r = cli("query", "restore", "--cwd", str(indexed_repo.root), "--format", "both")
    assert r.code == 3 and "s3cret" not in r.out + r.err
    assert r.json["error"]["details"]["dsn"] == "postgresql://ci:***@127.0.0.1:1/ci"
    assert tree_snapshot(indexed_repo.root) == before  # nothing written
    status = cli("status", "--cwd", str(indexed_repo.root), "--format", "json")
    assert status.code == 0 and status.json["data"]["backend"] == "postgres"
    assert status.json["data"]["store"]["status"] == "missing"
    doctor = cli("doctor", "--cwd", str(indexed_repo.root), "--format", "json")
    runtime = next(c for c in doctor.json["data"]["checks"] if c["name"] == "store.runtime")
    assert not runtime["ok"] and "connection_failed" in runtime["detail"] and "s3cret" not in doctor.out


def test_config_keys_and_the_older_alias(git_repo, cli):
    write_placeholder_config(git_repo.root)
    cfg = git_repo.root / ".ragit" / "config.toml"
    assert load_config(git_repo.root)["store"]["backend"] == "sqlite"
    cfg.write_text(cfg.read_text(encoding="utf-8") + '[storage]\nbackend = "postgres"\n', encoding="utf-8")
    assert load_config(git_repo.root)["store"]["backend"] == "postgres"  # storage.backend is an alias
    r = cli("config", "set", "store.dsn", "postgresql://app:hunter2@db/app", "--cwd", str(git_repo.root),
            "--format", "json")
    assert r.code == 0 and "hunter2" not in r.out
    assert r.json["data"]["value"] == "postgresql://app:***@db/app"
    r = cli("config", "get", "store.dsn", "--cwd", str(git_repo.root), "--format", "text")
    assert r.out == "postgresql://app:***@db/app\n"
    assert load_config(git_repo.root)["store"]["dsn"] == "postgresql://app:hunter2@db/app"  # kept as written
    r = cli("config", "set", "store.backend", "mysql", "--cwd", str(git_repo.root), "--format", "json")
    assert r.code == 2 and r.json["error"]["details"]["reason"] == "not_one_of"


def test_migrate_on_sqlite(git_repo, cli):
    write_placeholder_config(git_repo.root)
    git_repo.commit("initial", SAMPLE_FILES)
    root = str(git_repo.root)
    dry = cli("migrate", "--dry-run", "--cwd", root, "--format", "json")
    assert dry.code == 0 and dry.json["data"] == {"backend": "sqlite", "current": None, "applied": [], "pending": [5]}
    assert not (git_repo.root / ".ragit" / "store").exists()
    first = cli("migrate", "--cwd", root, "--format", "json").json["data"]
    assert first == {"backend": "sqlite", "current": 5, "applied": [5], "pending": []}
    again = cli("migrate", "--cwd", root, "--format", "json").json["data"]
    assert again == {"backend": "sqlite", "current": 5, "applied": [], "pending": []}
    assert cli("ingest", "--all", "--cwd", root, "--format", "json").code == 0
    text = cli("migrate", "--cwd", root, "--format", "text").out
    assert text == "# ragit migrate\n- backend: sqlite\n- current: 5\n- applied: none\n- pending: none\n"
    # the sub-commands still work under the group
    assert cli("migrate", "rebuild", "--dry-run", "--cwd", root, "--format", "json").json["data"]["mode"] == "dry-run"


def test_migrate_on_postgres(git_repo, cli, pg_dsn, monkeypatch):
    from ragit.store import pg_schema

    monkeypatch.setenv("RAGIT_DATABASE_URL", pg_dsn)
    write_pg_config(git_repo.root)
    git_repo.commit("initial", SAMPLE_FILES)
    root = str(git_repo.root)
    everything = [m.version for m in pg_schema.MIGRATIONS]
    # an empty database: nothing to read yet
    r = cli("query", "restore", "--cwd", root, "--format", "json")
    assert r.code == 3 and r.json["error"]["code"] == "SNAPSHOT_NOT_INDEXED"
    dry = cli("migrate", "--dry-run", "--cwd", root, "--format", "json").json["data"]
    assert dry == {"backend": "postgres", "current": None, "applied": [], "pending": everything}
    assert pg_rows(pg_dsn, "SELECT to_regclass('ragit_migrations') IS NULL")[0][0]  # dry run wrote nothing
    first = cli("migrate", "--cwd", root, "--format", "json").json["data"]
    assert first == {"backend": "postgres", "current": pg_schema.LATEST, "applied": everything, "pending": []}
    assert [r[0] for r in pg_rows(pg_dsn, "SELECT version FROM ragit_migrations ORDER BY version")] == everything
    again = cli("migrate", "--cwd", root, "--format", "json").json["data"]
    assert again == {"backend": "postgres", "current": pg_schema.LATEST, "applied": [], "pending": []}
    assert pg_rows(pg_dsn, "SELECT extname FROM pg_extension WHERE extname = 'vector'") == [("vector",)]
    r = cli("ingest", "--all", "--cwd", root, "--format", "json")
    assert r.code == 0, r
    status = cli("status", "--cwd", root, "--format", "json").json["data"]["store"]
    assert status["schemaVersion"] == 5 and status["searchReady"] is True


def test_pending_migration_refuses_writes_until_migrate(git_repo, cli, pg_dsn, monkeypatch):
    """A database an older ragit created: ingest asks for ``ragit migrate`` instead of changing
    the schema under other clients; ``migrate`` applies the missing step once."""
    from ragit.store import pg_schema

    monkeypatch.setenv("RAGIT_DATABASE_URL", pg_dsn)
    write_pg_config(git_repo.root)
    git_repo.commit("initial", SAMPLE_FILES)
    root = str(git_repo.root)
    assert cli("migrate", "--cwd", root, "--format", "json").code == 0
    extra = pg_schema.Migration(pg_schema.LATEST + 1, "test step", "CREATE TABLE test_step(x INTEGER)")
    monkeypatch.setattr(pg_schema, "MIGRATIONS", (*pg_schema.MIGRATIONS, extra))
    r = cli("ingest", "--all", "--cwd", root, "--format", "json")
    assert r.code == 3 and r.json["error"]["code"] == "STORE_UNAVAILABLE"
    assert r.json["error"]["details"]["reason"] == "migration_required"
    assert cli("migrate", "--dry-run", "--cwd", root, "--format", "json").json["data"]["pending"] == [extra.version]
    assert cli("migrate", "--cwd", root, "--format", "json").json["data"]["applied"] == [extra.version]
    assert cli("migrate", "--cwd", root, "--format", "json").json["data"]["applied"] == []
    assert pg_rows(pg_dsn, "SELECT COUNT(*) FROM test_step")[0][0] == 0


def test_a_database_a_newer_ragit_migrated_is_not_written(git_repo, cli, pg_dsn, monkeypatch):
    """A migration this ragit does not know: writers stop with ``schema_newer`` and readers see
    no usable layout, rather than writing into tables they may not understand."""
    from ragit.store import pg_schema

    monkeypatch.setenv("RAGIT_DATABASE_URL", pg_dsn)
    write_pg_config(git_repo.root)
    git_repo.commit("initial", SAMPLE_FILES)
    root = str(git_repo.root)
    assert cli("ingest", "--all", "--cwd", root, "--format", "json").code == 0
    pg_rows(pg_dsn, "INSERT INTO ragit_migrations(version, name) VALUES (%s, 'from the future') RETURNING version",
            (pg_schema.LATEST + 1,))
    git_repo.commit("more", {"src/more.py": "def more():\n    return 1\n"})
    r = cli("ingest", "--cwd", root, "--format", "json")
    assert r.code == 3 and r.json["error"]["code"] == "STORE_UNAVAILABLE"
    assert r.json["error"]["details"]["reason"] == "schema_newer"
    assert pg_schema.layout_version(pg_schema.LATEST + 1) is None
    assert pg_schema.layout_version(pg_schema.LATEST) == 5


def test_describe_lists_bare_migrate(cli):
    r = cli("describe", "migrate", "--format", "json")
    assert r.code == 0
    spec = r.json["data"]["spec"]
    assert spec["supportsDryRun"] and spec["mutating"]
    assert spec["outputSchemaSummary"] == ["backend", "current", "applied", "pending"]
    assert "STORE_UNAVAILABLE" in spec["errorCodes"]
    json.dumps(spec)


def test_doctor_and_status_on_a_healthy_database(git_repo, cli, pg_dsn, monkeypatch):
    monkeypatch.setenv("RAGIT_DATABASE_URL", pg_dsn)
    write_pg_config(git_repo.root)
    git_repo.commit("initial", SAMPLE_FILES)
    root = str(git_repo.root)
    assert cli("ingest", "--all", "--cwd", root, "--format", "json").code == 0
    doctor = cli("doctor", "--cwd", root, "--format", "json")
    assert doctor.code == 0, doctor
    checks = {c["name"]: c for c in doctor.json["data"]["checks"]}
    assert checks["store.runtime"] == {"name": "store.runtime", "ok": True, "detail": "postgres"}
    assert checks["store.schema"]["ok"] and checks["ragit.manifest-consistency"]["ok"]
    assert checks["ragit.config"]["detail"].startswith("backend=postgres")
    text = cli("status", "--cwd", root, "--format", "text").out
    assert "- backend: postgres\n" in text
    # a vector lost from the shared table is what doctor reports, and migrate rebuild restores
    pg_rows(pg_dsn, "DELETE FROM vectors WHERE chunk_id = (SELECT min(chunk_id) FROM vectors) RETURNING 1")
    doctor = cli("doctor", "--cwd", root, "--format", "json").json["data"]
    consistency = next(c for c in doctor["checks"] if c["name"] == "ragit.manifest-consistency")
    assert not consistency["ok"] and "missingChunkIds=1" in consistency["detail"]
    rebuilt = cli("migrate", "rebuild", "--cwd", root, "--format", "json").json["data"]
    assert rebuilt["rebuilt"] == 1 and rebuilt["failed"] == 0
    doctor = cli("doctor", "--cwd", root, "--format", "json").json["data"]
    assert next(c for c in doctor["checks"] if c["name"] == "ragit.manifest-consistency")["ok"]


def test_init_on_postgres_creates_no_local_store(git_repo, cli):
    """``store.backend = "postgres"``: init writes its drafts and config but no SQLite file, and
    needs no database (the first ingest or ``ragit migrate`` prepares it)."""
    write_pg_config(git_repo.root)
    git_repo.commit("initial", SAMPLE_FILES)
    r = cli("init", "--yes", "--cwd", str(git_repo.root), "--format", "json")
    assert r.code == 0, r
    assert r.json["data"]["bootstrap"]["storage"] == {"backend": "postgres", "status": "planned",
                                                      "searchReady": False, "migrationRequired": False}
    assert not (git_repo.root / ".ragit" / "store" / "ragit.db").exists()
    assert 'backend = "postgres"' in (git_repo.root / ".ragit" / "config.toml").read_text(encoding="utf-8")
