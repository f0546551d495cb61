"""An incremental ingest lists only what changed, yet publishes what a full ingest would.

For random commit sequences (edits, deletions, renames, files under directories that
``.gitignore`` files exclude, symlinks, too-large files), the documents of every ``--since``
manifest equal those of a ``--all`` manifest of the same commit, the store's document rows carried
over from the base equal a full ingest's, and the lines of unchanged documents are byte-identical
to the base's.
"""

from __future__ import annotations

import json
import os
import subprocess
import tempfile
from pathlib import Path

from hypothesis import given, settings
from hypothesis import strategies as st

from conftest import GitRepo, write_placeholder_config

PATHS = ["README.md", "docs/a.md", "docs/deep/b.md", "build/c.md", "src/build/d.md", "src/x.py",
         "src/keep.md", "notes/e.md", "vendor/f.py"]
IGNORES = ["", "build/\n", "*.py\n", "vendor/\n!vendor/f.py\n", "deep/\n"]
OPS = st.one_of(
    st.tuples(st.just("write"), st.sampled_from(PATHS), st.integers(0, 3)),
    st.tuples(st.just("delete"), st.sampled_from(PATHS), st.just(0)),
    st.tuples(st.just("ignore"), st.sampled_from(["", "src/", "docs/"]), st.integers(0, len(IGNORES) - 1)),
    st.tuples(st.just("large"), st.sampled_from(PATHS), st.just(0)),
)


def _run(root: Path, *args: str) -> None:
    from ragit.api import Repo

    repo = Repo.open(root)
    if args[0] == "all":
        repo.ingest(all=True)
    else:
        repo.ingest(since=args[1])


def _docs(root: Path, sha: str) -> list[dict]:
    return json.loads((root / ".ragit" / "manifest" / f"{sha}.json").read_text())["docs"]


def _store_docs(root: Path, sha: str) -> list[tuple]:
    import sqlite3

    conn = sqlite3.connect(root / ".ragit" / "store" / "ragit.db")
    try:
        return conn.execute("SELECT path, doc_type, blob_id, chunker_key FROM snapshot_docs"
                            " WHERE commit_sha = ? ORDER BY path", (sha,)).fetchall()
    finally:
        conn.close()


def _content(path: str, n: int) -> str:
    if path.endswith(".py"):
        return f"def f{n}():\n    return {n}\n"
    return f"# Title {n}\n\ntext {n} about {path}\n"


@settings(max_examples=15, deadline=None)
@given(st.lists(st.lists(OPS, min_size=1, max_size=4), min_size=1, max_size=4))
def test_since_publishes_what_all_would(commits):
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp) / "repo"
        root.mkdir()
        subprocess.run(["git", "init", "-q", "-b", "main", str(root)], check=True)
        repo = GitRepo(root)
        write_placeholder_config(root)
        with (root / ".ragit" / "config.toml").open("a") as fh:
            fh.write("[ingest]\nmax_file_bytes = 4000\n")
        repo.commit("base", {"README.md": "# Readme\n\nhello\n", "src/x.py": "def x():\n    return 1\n",
                             ".gitignore": "build/\n", "docs/.gitignore": "deep/\n"})
        _run(root, "all")
        for ops in commits:
            base = repo.head()
            for op, where, n in ops:
                target = root / where
                if op == "write":
                    repo.write(where, _content(where, n))
                elif op == "delete" and target.exists():
                    target.unlink()
                elif op == "ignore":
                    repo.write(where + ".gitignore", IGNORES[n])
                elif op == "large":
                    repo.write(where, "# Big\n\n" + "word " * 2000)
            if (root / "docs").is_dir() and not (root / "link.md").is_symlink():
                os.symlink("docs", root / "link.md")
            repo.git("add", "-A")
            # force-add written files, so ignored paths reach the commit tree (as files that were
            # committed before a rule ignored them do); discovery must still leave them out
            forced = sorted({w for op, w, _ in ops if op in ("write", "large") and (root / w).is_file()})
            if forced:
                repo.git("add", "-f", "--", *forced)
            repo.git("commit", "-q", "--allow-empty", "-m", "step")
            head = repo.head()
            before = (root / ".ragit" / "manifest" / f"{base}.json").read_text().split("\n")
            _run(root, "since", base)
            incremental = _docs(root, head)
            incremental_rows = _store_docs(root, head)
            assert [r[0] for r in incremental_rows] == [d["path"] for d in incremental]
            lines = (root / ".ragit" / "manifest" / f"{head}.json").read_text().split("\n")
            # unchanged documents keep their exact line (modulo the trailing comma of the last one)
            kept = {ln.rstrip(",") for ln in before if ln.startswith("    {")}
            assert {ln.rstrip(",") for ln in lines if ln.startswith("    {")} >= {
                k for k in kept if json.loads(k) in incremental
            }
            _run(root, "all")
            assert _docs(root, head) == incremental
            assert _store_docs(root, head) == incremental_rows  # carried-over store rows match too
