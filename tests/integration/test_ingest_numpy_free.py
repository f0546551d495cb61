"""A small ``ingest --since`` in a fresh process never imports numpy (the ``git commit`` hook's
case), and stores exactly the vectors, rows and file norms a full ingest computes with numpy."""

from __future__ import annotations

import os
import shutil
import sqlite3
import subprocess
import sys
from array import array
from pathlib import Path

from ragit.api import Repo

RUN_CLI = (
    "import sys\n"
    "from ragit.cli.main import main\n"
    "try:\n"
    "    main(sys.argv[1:])\n"
    "except SystemExit as exc:\n"
    "    code = exc.code\n"
    "print('numpy' in sys.modules, code, file=sys.stderr)\n"
)


def _unpack(code: str, data: bytes) -> list:
    out = array(code)
    out.frombytes(data)
    return out.tolist()


def _published(root: Path, sha: str) -> dict[tuple[str, str], tuple[bytes, float]]:
    """(path, chunk id) -> (its float32 vector, its file's norm) of one snapshot."""
    store = root / ".ragit" / "store"
    conn = sqlite3.connect(store / "ragit.db")
    try:
        embedder_id, rowids, slots, files, norms = conn.execute(
            "SELECT embedder_id, rowids, slots, files, file_norms FROM snapshot_rows WHERE commit_sha = ?",
            (sha,)).fetchone()
        dims, heap = conn.execute("SELECT dims, heap FROM embedders WHERE embedder_id = ?", (embedder_id,)).fetchone()
        where = dict(((rowid, (path, chunk)) for rowid, path, chunk in conn.execute(
            "SELECT rowid, path, chunk_id FROM fts_rows")))
    finally:
        conn.close()
    data = (store / heap).read_bytes()
    norm_of = _unpack("d", norms)
    return {where[r]: (data[s * dims * 4:(s + 1) * dims * 4], norm_of[f])
            for r, s, f in zip(_unpack("q", rowids), _unpack("q", slots), _unpack("i", files))}


def test_small_since_ingest_skips_numpy_and_equals_a_full_ingest(git_repo):
    root = git_repo.root
    git_repo.commit("base", {
        "docs/a.md": "# Token rotation\n\nSessions renew their token every hour.\n",
        "docs/b.md": "# Store\n\nThe store keeps chunks and vectors.\n",
        "src/auth.py": "def rotate(session):\n    return session.renew()\n\n\nclass Vault:\n    pass\n",
    })
    Repo.open(root).ingest(all=True)
    base = git_repo.head()
    git_repo.git("rm", "-q", "docs/b.md")
    git_repo.commit("change", {
        "docs/a.md": "# Token rotation\n\nSessions renew their token every thirty minutes.\n\n## Why\n\nLeaks.\n",
        "src/auth.py": "def rotate(session):\n    return session.renew(force=True)\n\n\nclass Vault:\n    x = 1\n",
        "docs/c.md": "# Cache\n\nA new document about the cache adapter.\n",
    })
    head = git_repo.head()
    run = subprocess.run([sys.executable, "-c", RUN_CLI, "ingest", "--since", base, "--cwd", str(root),
                          "--format", "json"], capture_output=True, text=True, env=os.environ.copy())
    assert run.stderr.split()[-2:] == ["False", "0"], run.stderr
    incremental = _published(root, head)
    assert {path for path, _ in incremental} == {"docs/a.md", "docs/c.md", "src/auth.py"}

    shutil.rmtree(root / ".ragit" / "store")
    Repo.open(root).ingest(all=True)  # numpy is loaded in this process
    assert _published(root, head) == incremental
