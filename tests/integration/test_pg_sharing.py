"""One PostgreSQL database shared by many worktrees, clones and repositories (issue 16 §2):
everything equal is stored once, snapshots are per repository, and ``status`` shows the totals."""

from __future__ import annotations

import subprocess
from pathlib import Path

from conftest import SAMPLE_FILES, pg_rows, write_pg_config


def _worktrees(repo, count: int, base: Path) -> list[Path]:
    """``count`` worktrees of ``repo``: the first half at HEAD on branches of their own, the
    others on branches with one more commit each (a file of their own)."""
    out = []
    for i in range(count):
        path = base / f"wt{i}"
        repo.git("worktree", "add", "-q", "-b", f"topic{i}", str(path))
        if i >= count // 2:
            (path / f"src/topic{i}.py").write_text(f"def topic_{i}():\n    return {i}\n", encoding="utf-8")
            subprocess.run(["git", "add", "-A"], cwd=path, check=True)
            subprocess.run(["git", "commit", "-qm", f"topic {i}"], cwd=path, check=True)
        write_pg_config(path)
        out.append(path)
    return out


def test_ten_worktrees_store_each_blob_once(git_repo, tmp_path, cli, pg_dsn, monkeypatch):
    monkeypatch.setenv("RAGIT_DATABASE_URL", pg_dsn)
    write_pg_config(git_repo.root)  # also keeps .ragit/ out of every worktree's `git add -A`
    git_repo.commit("initial", SAMPLE_FILES)
    trees = _worktrees(git_repo, 10, tmp_path)
    for path in trees:
        r = cli("ingest", "--all", "--cwd", str(path), "--format", "json")
        assert r.code == 0, r

    # blobs: the sample files once, plus one per topic commit
    distinct_blobs = len(SAMPLE_FILES) + 5
    assert pg_rows(pg_dsn, "SELECT COUNT(*), COUNT(DISTINCT blob_id) FROM blobs")[0] == (distinct_blobs, distinct_blobs)
    chunks, distinct_chunks = pg_rows(pg_dsn, "SELECT COUNT(*), COUNT(DISTINCT chunk_id) FROM chunks")[0]
    assert chunks == distinct_chunks
    assert pg_rows(pg_dsn, "SELECT COUNT(*) FROM vectors")[0][0] == chunks
    # one keyword row per (path, chunk) pair, whatever number of snapshots use it
    assert pg_rows(pg_dsn, "SELECT COUNT(*) FROM keyword_rows")[0][0] == chunks
    # snapshots: the shared HEAD commit once (five worktrees published it), each topic commit once
    assert pg_rows(pg_dsn, "SELECT COUNT(*) FROM repositories")[0][0] == 1
    assert pg_rows(pg_dsn, "SELECT COUNT(*) FROM snapshots")[0][0] == 6
    head = git_repo.head()
    assert pg_rows(pg_dsn, "SELECT COUNT(*) FROM snapshot_manifests WHERE commit_sha = %s", (head,))[0][0] == 5
    assert pg_rows(pg_dsn, "SELECT COUNT(*) FROM snapshot_docs WHERE commit_sha = %s", (head,))[0][0] == len(SAMPLE_FILES)

    # every worktree reads its own commit, including the ones whose manifest another published first
    for i, path in enumerate(trees):
        r = cli("query", "restore auth context", "--cwd", str(path), "--format", "json", "--view", "minimal")
        assert r.code == 0, r
        assert r.json["data"]["hits"][0]["path"] == "src/auth.py"
        if i >= 5:
            r = cli("query", f"topic {i}", "--cwd", str(path), "--format", "json", "--view", "minimal")
            assert f"src/topic{i}.py" in [h["path"] for h in r.json["data"]["hits"]]

    status = cli("status", "--cwd", str(trees[0]), "--format", "json").json["data"]
    assert status["backend"] == "postgres"
    assert status["store"]["status"] == "loaded" and status["store"]["searchReady"] is True
    assert status["store"]["stats"] == {"documents": distinct_blobs, "chunks": chunks, "vectors": chunks,
                                        "snapshots": 6, "repositories": 1}


def test_repositories_share_content_not_snapshots(tmp_path, cli, pg_dsn, monkeypatch):
    """Two unrelated repositories with one identical file: one blob and chunk row, two
    repositories, and each reads only its own snapshots."""
    from conftest import GitRepo

    monkeypatch.setenv("RAGIT_DATABASE_URL", pg_dsn)
    repos = []
    for name, extra in (("one", {"one.md": "# One\n\nAlpha bravo charlie.\n"}),
                        ("two", {"two.md": "# Two\n\nDelta echo foxtrot.\n"})):
        root = tmp_path / name
        root.mkdir()
        subprocess.run(["git", "init", "-q", "-b", "main", str(root)], check=True)
        repo = GitRepo(root)
        write_pg_config(root)
        repo.commit(f"{name} start", {"shared/auth.py": SAMPLE_FILES["src/auth.py"], **extra})
        r = cli("ingest", "--all", "--cwd", str(root), "--format", "json")
        assert r.code == 0, r
        repos.append(repo)
    assert pg_rows(pg_dsn, "SELECT COUNT(*) FROM repositories")[0][0] == 2
    assert pg_rows(pg_dsn, "SELECT COUNT(*) FROM blobs")[0][0] == 3  # shared/auth.py once
    assert pg_rows(pg_dsn, "SELECT COUNT(*) FROM keyword_rows WHERE path = 'shared/auth.py'")[0][0] == \
        pg_rows(pg_dsn, "SELECT COUNT(*) FROM chunks c JOIN blobs b USING (blob_id)"
                        " WHERE b.blob_id IN (SELECT blob_id FROM snapshot_docs WHERE path = 'shared/auth.py')")[0][0]
    one = cli("query", "delta echo foxtrot", "--cwd", str(repos[0].root), "--format", "json").json["data"]
    assert "two.md" not in [h["path"] for h in one["hits"]]
    # a repository key can be set explicitly (store.repository_id), e.g. for a mirror with another root
    write_pg_config(repos[1].root, extra='repository_id = "team/two"\n')
    r = cli("query", "delta", "--cwd", str(repos[1].root), "--format", "json")
    assert r.code == 3 and r.json["error"]["code"] == "SNAPSHOT_STORE_UNAVAILABLE"
    assert cli("migrate", "rebuild", "--cwd", str(repos[1].root), "--format", "json").code == 0
    assert cli("query", "delta", "--cwd", str(repos[1].root), "--format", "json").code == 0
    assert pg_rows(pg_dsn, "SELECT COUNT(*) FROM repositories")[0][0] == 3
