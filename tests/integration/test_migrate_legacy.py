"""migrate from-json-store / from-sqlitevss (knowledge §18)."""

from __future__ import annotations

import json

from conftest import tree_snapshot, write_placeholder_config


def _repo(git_repo):
    write_placeholder_config(git_repo.root)
    git_repo.commit("docs", {"docs/a.md": "# A\n\nalpha\n", "docs/b.md": "# B\n\nbeta\n", "src/c.py": "x = 1\n"})
    return git_repo


def test_json_store_paths_are_indexed_from_head(git_repo, cli):
    repo = _repo(git_repo)
    legacy = {"documents": {"d1": {"path": "docs/a.md", "text": "stale legacy text"},
                            "d2": {"path": "./docs/gone.md"}},
              "chunks": {"c1": {"documentId": "d1", "text": "stale"}}}
    (repo.root / ".ragit" / "store").mkdir(parents=True)
    (repo.root / ".ragit" / "store" / "index.json").write_text(json.dumps(legacy))
    before = tree_snapshot(repo.root)
    dry = cli("migrate", "from-json-store", "--dry-run", "--cwd", str(repo.root))
    assert dry.code == 0, dry
    assert dry.json == {"mode": "dry-run", "docs": 1, "chunks": 1, "missing": ["docs/gone.md"]}
    assert tree_snapshot(repo.root) == before
    r = cli("migrate", "from-json-store", "--cwd", str(repo.root))
    assert r.json == {"mode": "apply", "docs": 1, "chunks": 1, "snapshotSha": repo.head(), "missing": ["docs/gone.md"]}
    manifest = json.loads((repo.root / ".ragit" / "manifest" / f"{repo.head()}.json").read_text())
    assert [d["path"] for d in manifest["docs"]] == ["docs/a.md"] and manifest["ingest"]["mode"] == "paths"
    hits = cli("query", "alpha", "--cwd", str(repo.root), "--format", "json", "--view", "full").json["data"]["hits"]
    assert hits and "stale" not in hits[0]["text"]


def test_sqlitevss_export_and_missing_store(git_repo, cli):
    repo = _repo(git_repo)
    r = cli("migrate", "from-sqlitevss", "--cwd", str(repo.root))
    assert r.code == 2 and "file_not_found" in r.err
    (repo.root / ".ragit" / "sqlite-vss").mkdir(parents=True)
    (repo.root / ".ragit" / "sqlite-vss" / "records.json").write_text(
        json.dumps([{"id": 1, "metadata": {"path": "docs/b.md"}}, {"id": 2, "path": "src/c.py"}]))
    r = cli("migrate", "from-sqlitevss", "--cwd", str(repo.root), "--format", "json")
    assert r.json["docs"] == 2 and r.json["missing"] == []
