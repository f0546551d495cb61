"""Snapshot bundles move between backends (issue 16: "`ragit snapshot import file`, into either
backend"): a bundle exported from SQLite and imported into PostgreSQL answers byte-identically to a
local ingest, and a bundle exported from PostgreSQL imports into a fresh SQLite clone the same way."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

from conftest import SAMPLE_FILES, pg_rows, write_pg_config, write_placeholder_config

QUESTIONS = ["restore auth context", "token rotation", "roadmap milestone", "zzzz nothing matches"]


def _clone(source: Path, target: Path) -> Path:
    subprocess.run(["git", "clone", "-q", str(source), str(target)], check=True)
    return target


def _answers(cli, root: Path) -> list[str]:
    out = []
    for question in QUESTIONS:
        r = cli("query", question, "--view", "full", "--explain", "--cwd", str(root), "--format", "json")
        assert r.code == 0, r
        out.append(json.dumps(r.json["data"], sort_keys=True))
    return out


def _ok(result):
    assert result.code == 0, result
    return result


def test_sqlite_bundle_imports_into_postgres(git_repo, cli, tmp_path, pg_dsn, monkeypatch):
    git_repo.commit("initial", SAMPLE_FILES)
    exporter = _clone(git_repo.root, tmp_path / "exporter")
    write_placeholder_config(exporter)
    _ok(cli("ingest", "--all", "--cwd", str(exporter), "--format", "json"))
    bundle = tmp_path / "head.bundle"
    _ok(cli("snapshot", "export", "HEAD", "--out", str(bundle), "--cwd", str(exporter), "--format", "json"))
    local = _answers(cli, exporter)

    monkeypatch.setenv("RAGIT_DATABASE_URL", pg_dsn)
    importer = _clone(git_repo.root, tmp_path / "importer")
    write_pg_config(importer)
    _ok(cli("snapshot", "import", str(bundle), "--cwd", str(importer), "--format", "json"))
    assert len(pg_rows(pg_dsn, "SELECT commit_sha FROM snapshots")) == 1
    assert not (importer / ".ragit" / "store" / "ragit.db").exists()
    assert _answers(cli, importer) == local


def test_postgres_bundle_imports_into_sqlite(git_repo, cli, tmp_path, pg_dsn, monkeypatch):
    git_repo.commit("initial", SAMPLE_FILES)
    monkeypatch.setenv("RAGIT_DATABASE_URL", pg_dsn)
    exporter = _clone(git_repo.root, tmp_path / "exporter")
    write_pg_config(exporter)
    _ok(cli("ingest", "--all", "--cwd", str(exporter), "--format", "json"))
    bundle = tmp_path / "head.bundle"
    _ok(cli("snapshot", "export", "HEAD", "--out", str(bundle), "--cwd", str(exporter), "--format", "json"))
    local = _answers(cli, exporter)
    monkeypatch.delenv("RAGIT_DATABASE_URL")

    importer = _clone(git_repo.root, tmp_path / "importer")
    write_placeholder_config(importer)
    _ok(cli("snapshot", "import", str(bundle), "--cwd", str(importer), "--format", "json"))
    assert (importer / ".ragit" / "store" / "ragit.db").exists()
    assert _answers(cli, importer) == local
