"""Ingest workers (issue 15): a large ingest forks processes for the per-blob work (read, mask,
chunk, embed, keyword fields) while the ingesting process writes every row. The store must be
the one a single process makes, byte for byte (row ids and chunk ids included), and a worker
that fails or dies must fail the ingest cleanly: an error, nothing published, no hang.

Each ingest runs in a fresh interpreter (``_run``): forking is only safe in a process without
other threads, which a pytest-xdist worker is not; there the byte thresholds are lowered so a
small repository is shared out, and a spy records each fork.
"""

from __future__ import annotations

import json
import os
import shutil
import sqlite3
import subprocess
import sys
import threading

import pytest
from conftest import write_placeholder_config
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from store_digest import store_digest

from ragit.config import defaults
from ragit.errors import RagitError
from ragit.ingest import workers
from ragit.maintenance.doctor import run_doctor

SCRIPT = r"""
import json, os, signal, sys, threading
import ragit.ingest.workers as w
from ragit.errors import RagitError
w.MIN_PARALLEL_BYTES, w.MIN_WORKER_BYTES = 0, 1
if os.environ.get("TEST_SMALL_BATCHES"):  # many embedding calls and batch commits; no worker runs ahead
    from ragit.ingest import batches, pipeline
    pipeline.EMBED_BATCH, batches.COMMIT_CHUNKS, w.MAX_AHEAD = 3, 4, 0
forks = []
start = w.Workers.__init__
def spied(self, parts, *rest):
    forks.append({"shares": [len(p) for p in parts], "threads": threading.active_count()})
    start(self, parts, *rest)
w.Workers.__init__ = spied
fault, parent = os.environ.get("TEST_FAULT"), os.getpid()
if fault:
    from ragit.ingest import blobwork
    chunk = blobwork.BlobChunker.__call__
    def faulty(self, c, profile, data, rows):
        if os.getpid() != parent and c.path == os.environ["TEST_FAULT_PATH"]:
            if fault == "raise":
                raise RuntimeError("injected worker failure")
            os.kill(os.getpid(), signal.SIGKILL)
        return chunk(self, c, profile, data, rows)
    blobwork.BlobChunker.__call__ = faulty
if os.environ.get("TEST_ABSENT_OID"):  # git streams no content for this blob (as for a vanished object)
    from ragit.ingest import blobwork as bw
    stream = bw.stream_present
    def gappy(reader, ids, progress):
        for oid, data in stream(reader, ids, progress):
            yield oid, None if oid == os.environ["TEST_ABSENT_OID"] else data
    bw.stream_present = gappy
from ragit.api import Repo
out = {"forks": forks}
try:
    result = Repo.open(sys.argv[1]).ingest(all=True, at=sys.argv[2] or None)
    out["embedded"], out["skipped"] = result.embedded_chunks, result.skipped_files
except RagitError as exc:
    out["error"], out["message"] = exc.code, exc.message
except RuntimeError as exc:
    out["error"], out["message"] = type(exc).__name__, str(exc)
print(json.dumps(out))
"""


def _run(root, count: int, at: str = "", **env: str) -> dict:
    """One ``Repo.ingest(all=True)`` in a fresh process with RAGIT_INGEST_WORKERS=``count``."""
    environ = {**os.environ, "RAGIT_INGEST_WORKERS": str(count), "RAGIT_NOW": "2026-03-08T10:00:00.000Z", **env}
    proc = subprocess.run([sys.executable, "-c", SCRIPT, str(root), at], capture_output=True, text=True,
                          env=environ, check=False)
    assert proc.returncode == 0, proc.stderr
    return json.loads(proc.stdout.strip().splitlines()[-1])


def _reset(root) -> None:
    for sub in ("store", "manifest", "cache"):
        shutil.rmtree(root / ".ragit" / sub, ignore_errors=True)


def _files(tag: str, n: int) -> dict[str, str]:
    """Docs, code in three languages, a secret to mask, copies of one blob at several paths."""
    files = {f"docs/{tag}-{i}.md": f"# {tag} guide {i}\n\n" + "\n\n".join(
        f"## Part {j}\n\nsection {j} of {tag} guide {i} explains token rotation {i * j}" for j in range(1 + i % 4))
        for i in range(n)}
    files.update({f"src/{tag}_{i}.py": f"import os\n\n\ndef handler_{i}(value):\n    return value * {i}\n\n\n"
                  f"class Store{i}:\n    def rotate(self, token):\n        return token[::-1]\n" for i in range(n)})
    files.update({f"web/{tag}_{i}.js": f"export function render{i}(node) {{\n  return node.id + {i};\n}}\n"
                  for i in range(n // 2)})
    files[f"cmd/{tag}.go"] = "package main\n\nfunc main() {\n\tprintln(\"hi\")\n}\n"
    files[f"config/{tag}.env"] = "AWS_SECRET_ACCESS_KEY=wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY\n"
    same = f"# Same {tag}\n\nThe same bytes under several paths and two kinds.\n"
    files[f"docs/{tag}-same.md"] = files[f"docs/{tag}-copy.md"] = files[f"src/{tag}_same.txt.py"] = same
    files[f"docs/{tag}-empty.md"] = ""
    return files


@pytest.fixture
def two_commits(git_repo):
    """A repository of two commits (the second adds and changes files) with the test embedder."""
    write_placeholder_config(git_repo.root)
    (git_repo.root / "bin.dat").write_bytes(b"\x00\x01binary\x00" * 50)
    first = git_repo.commit("first", _files("alpha", 12))
    second = git_repo.commit("second", {**_files("beta", 9), "docs/alpha-3.md": "# Changed\n\nnew text\n"})
    return git_repo, first, second


def _both_commits(root, first: str, count: int, **env: str) -> tuple[dict, list[dict]]:
    """The store after ingesting ``first`` then HEAD with ``count`` workers, and each run's forks."""
    _reset(root)
    runs = [_run(root, count, first, **env), _run(root, count, "", **env)]
    assert all("error" not in r for r in runs), runs
    return store_digest(root, manifests=True), [f for r in runs for f in r["forks"]]


@pytest.mark.parametrize("small_batches", [False, True])
def test_workers_make_the_sequential_store(two_commits, small_batches):
    repo, first, _ = two_commits
    env = {"TEST_SMALL_BATCHES": "1"} if small_batches else {}
    expected, forks = _both_commits(repo.root, first, 1, **env)
    assert forks == []
    for count in (2, 3):
        digest, forks = _both_commits(repo.root, first, count, **env)
        assert digest == expected, count
        # both ingests forked (the second one only for its new blobs), before any thread started
        assert len(forks) == 2 and all(len(f["shares"]) == count and f["threads"] == 1 for f in forks), forks


def test_workers_with_the_bundled_model(two_commits):
    """The default embedder (``code-static``): vectors made in a worker are the same bits."""
    repo, first, _ = two_commits
    (repo.root / ".ragit" / "config.toml").write_text("", encoding="utf-8")
    expected, _ = _both_commits(repo.root, first, 1)
    digest, forks = _both_commits(repo.root, first, 2)
    assert forks and digest == expected


@settings(max_examples=4, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.lists(st.tuples(st.sampled_from(["md", "py", "txt", "rs"]), st.integers(0, 6), st.integers(0, 40)),
                min_size=2, max_size=24))
def test_row_and_chunk_ids_do_not_depend_on_the_workers(git_repo, specs):
    """Any mix of files, sizes and repeated contents: chunk rows, keyword rows and vector slots
    get the same ids with and without workers."""
    write_placeholder_config(git_repo.root)
    files = {}
    for i, (ext, variant, lines) in enumerate(specs):
        body = "\n".join(f"line {k} of variant {variant} token{k % 7}" for k in range(lines))
        files[f"f{i}.{ext}"] = (f"# Title {variant}\n\n{body}\n" if ext == "md"
                                else f"def f{variant}():\n    return {lines}\n\n{body}\n")
    git_repo.commit(f"c{len(specs)}", files)
    root = git_repo.root
    ids = {}
    for count in (1, 2):
        _reset(root)
        assert "error" not in _run(root, count)
        db = sqlite3.connect(root / ".ragit" / "store" / "ragit.db")
        ids[count] = [db.execute(q).fetchall() for q in (
            "SELECT rowid, chunk_id, blob_id, ordinal FROM chunks ORDER BY rowid",
            "SELECT rowid, path, chunk_id, tokens FROM fts_rows ORDER BY rowid",
            "SELECT chunk_id, slot FROM vectors ORDER BY slot")]
        db.close()
        ids[count].append(store_digest(root, manifests=True))
    assert ids[1] == ids[2]


def test_a_blob_git_cannot_stream_is_skipped_at_each_path(two_commits):
    """Content git does not give (its object vanished): every candidate of it is skipped as
    ``missing_object``, and the workers' results stay aligned with the candidates after it."""
    repo, _, _ = two_commits
    oid = repo.git("rev-parse", "HEAD:docs/beta-same.md")  # also at docs/beta-copy.md, src/beta_same.txt.py
    runs = {}
    for count in (1, 2):
        _reset(repo.root)
        out = _run(repo.root, count, "", TEST_ABSENT_OID=oid)
        assert "error" not in out and bool(out["forks"]) == (count > 1), out
        runs[count] = (sorted(f["path"] for f in out["skipped"] if f["reason"] == "missing_object"),
                       store_digest(repo.root, manifests=True))
    assert runs[1][0] == ["docs/beta-copy.md", "docs/beta-same.md", "src/beta_same.txt.py"]
    assert runs[2] == runs[1]


@pytest.mark.parametrize("fault", ["raise", "kill"])
def test_a_failed_worker_fails_the_ingest_and_publishes_nothing(two_commits, fault):
    repo, first, _ = two_commits
    root = repo.root
    _reset(root)
    assert "error" not in _run(root, 2, first)
    published = store_digest(root)
    manifests = sorted(p.name for p in (root / ".ragit" / "manifest").rglob("*") if p.is_file())
    out = _run(root, 2, "", TEST_FAULT=fault, TEST_FAULT_PATH="docs/beta-4.md")
    assert out["forks"], out
    if fault == "raise":  # the worker's own error, raised again in the ingesting process
        assert out["error"] == "RuntimeError" and "injected worker failure" in out["message"]
    else:  # a worker that dies: a typed error naming how it ended
        assert out["error"] == "INTERNAL_ERROR" and "signal 9" in out["message"], out
    # the first snapshot is still the only one; batches committed before the failure are
    # unreferenced rows, which doctor accepts and the next ingest reuses
    assert sorted(p.name for p in (root / ".ragit" / "manifest").rglob("*") if p.is_file()) == manifests
    after = store_digest(root)
    for table in ("fts_rows", "vocab", "snapshot_rows", "snapshot_docs", "snapshots", "blob_norms"):
        assert after[table] == published[table], table
    db = sqlite3.connect(root / ".ragit" / "store" / "ragit.db")
    assert [r[0] for r in db.execute("SELECT commit_sha FROM snapshots")] == [first]
    db.close()
    _, report = run_doctor(root)
    hygiene = next(c for c in report["checks"] if c["name"] == "store.hygiene")
    assert hygiene["ok"], hygiene
    assert "error" not in _run(root, 2, "")
    resumed = store_digest(root, manifests=True)
    expected, _ = _both_commits(root, first, 1)
    assert resumed == expected


def test_small_ingests_stay_in_one_process(git_repo, monkeypatch):
    """Below the byte threshold, or with no second core or no fork, nothing is forked."""
    write_placeholder_config(git_repo.root)
    git_repo.commit("one", {"a.md": "# A\n\nsmall\n"})
    out = subprocess.run([sys.executable, "-c", SCRIPT.replace("w.MIN_PARALLEL_BYTES, w.MIN_WORKER_BYTES = 0, 1", ""),
                          str(git_repo.root), ""], capture_output=True, text=True, check=False,
                         env={**os.environ, "RAGIT_INGEST_WORKERS": "2"})
    assert out.returncode == 0, out.stderr
    assert json.loads(out.stdout.strip().splitlines()[-1])["forks"] == []


def test_planned_workers(monkeypatch):
    config = defaults()
    monkeypatch.setattr(os, "cpu_count", lambda: 8)
    assert workers.planned_workers(config) == workers.MAX_AUTO_WORKERS  # -1: one per core, capped
    monkeypatch.setattr(os, "cpu_count", lambda: 1)
    assert workers.planned_workers(config) == 0  # one core: never
    for value, expected in ((0, 0), (1, 0), (2, 2), (6, 6)):
        config.data["ingest"]["workers"] = value
        assert workers.planned_workers(config) == expected
    monkeypatch.setenv("RAGIT_INGEST_WORKERS", "3")  # the environment wins over the config
    assert workers.planned_workers(config) == 3
    monkeypatch.setenv("RAGIT_INGEST_WORKERS", "1")
    assert workers.planned_workers(config) == 0
    monkeypatch.setenv("RAGIT_INGEST_WORKERS", "two")
    with pytest.raises(RagitError) as err:
        workers.planned_workers(config)
    assert err.value.code == "CONFIG_INVALID"


def test_workers_setting_is_not_part_of_the_config_hash():
    """``ingest.workers`` changes how an ingest runs, not what it stores: same manifests."""
    config = defaults()
    before = config.config_hash()
    config.data["ingest"]["workers"] = 4
    assert config.config_hash() == before


def test_no_fork_while_another_thread_runs():
    assert workers.can_fork() or threading.active_count() > 1
    stop = threading.Event()
    thread = threading.Thread(target=stop.wait)
    thread.start()
    try:
        assert not workers.can_fork()
    finally:
        stop.set()
        thread.join()


def test_shares_interleave_by_bytes():
    jobs = [(i, f"job{i}") for i in range(6)]
    parts = workers.shares(jobs, [10, 1, 1, 1, 10, 1], 2)
    assert parts == [[(0, "job0"), (5, "job5")], [(1, "job1"), (2, "job2"), (3, "job3"), (4, "job4")]]
    assert sorted(j for p in parts for j in p) == jobs


def test_blob_wire_gives_back_the_result_it_was_given():
    """A worker's results travel as plain tuples (cheap to pickle); the parent's rebuilt record,
    rows, vectors and keyword fields equal the chunker's, named tuples and dataclass included."""
    import pickle

    from ragit.ingest.blobwork import BlobChunker
    from ragit.ingest.discovery import Candidate
    from ragit.ingest.manifest import ManifestParams
    from ragit.store.records import BlobRecord, NewChunk, StoredChunk

    chunker = BlobChunker(ManifestParams("1", "1", "placeholder:sha1:64:v1", "sha256:" + "0" * 64))
    wire = workers.BlobWire()
    blobs = [
        (Candidate("docs/a.md", "a" * 40, 80, "markdown"), b"---\ntype: guide\n---\n# Title\n\nSome text.\n\n## Part\n\nMore.\n"),
        (Candidate("src/m.py", "b" * 40, 60, "code"), b"import os\n\n\ndef f(x):\n    return x + 1\n\n\nclass C:\n    pass\n"),
        (Candidate("bin/x.dat", "c" * 40, 4, "markdown"), b"\x00\x01\x02\x03"),  # skipped: no chunks
    ]
    for c, data in blobs:
        record, chunks = chunker(c, f"{c.kind}@1", data, True)
        assert bool(chunks) == (c.path != "bin/x.dat") and len(chunks) == len(record.chunks)
        vectors = bytes(range(8)) * len(chunks)
        fields = [("t", "h", "p", 3)] * len(chunks)
        for sent in ((record, chunks, vectors, fields), (record, chunks, None, None)):
            back = wire.decode(pickle.loads(pickle.dumps(wire.encode(*sent), protocol=pickle.HIGHEST_PROTOCOL)))
            assert back == sent
            assert type(back[0]) is BlobRecord
            assert all(type(n) is NewChunk for n in back[1])
            assert all(type(s) is StoredChunk for s in back[0].chunks)
    assert wire.decode(None) is None
