"""Commit-then-read (knowledge §5.7): a read of a commit that a running ingest is indexing waits
for it (bounded by ``retrieval.ingest_wait_seconds``), ``--no-wait`` fails at once, and what is
still missing is the retryable SNAPSHOT_INGEST_IN_PROGRESS instead of SNAPSHOT_NOT_INDEXED.

The concurrent ingest is a real one in another process (real pipeline, write lock and
publication); its embedder stops at a gate that the test opens through a pipe, so every step is
synchronised on an observed event, never on a sleep.
"""

from __future__ import annotations

import subprocess
import sys
import threading
import time

import pytest

import ragit
from conftest import PLACEHOLDER_CONFIG

# A real ingest whose embedder announces "embedding" on stdout, then waits for "go" on stdin.
GATED_INGEST = r"""
import sys
from pathlib import Path

from ragit.config import load_config
from ragit.embed import load_embedder
from ragit.gitsnap.git import Git
from ragit.ingest.pipeline import IngestRequest, run_ingest

root = Path(sys.argv[1])
config = load_config(root)
inner = load_embedder(config)


class Gate:
    id = inner.id
    dimensions = inner.dimensions
    opened = False

    def embed(self, texts):
        if not self.opened:
            print("embedding", flush=True)
            if sys.stdin.readline().strip() != "go":
                raise SystemExit(5)
            self.opened = True
        return inner.embed(texts)


if len(sys.argv) > 3 and sys.argv[3] == "at-listing":  # stop earlier: before the tree is even listed
    import ragit.gitsnap.tree as tree

    real_list_tree = tree.list_tree

    def gated_list_tree(*args, **kwargs):
        print("listing", flush=True)
        if sys.stdin.readline().strip() != "go":
            raise SystemExit(5)
        return real_list_tree(*args, **kwargs)

    tree.list_tree = gated_list_tree
    Gate.opened = True

request = IngestRequest("since", since=sys.argv[2]) if len(sys.argv) > 2 else IngestRequest("full")
result = run_ingest(root, Git(root), config, request, embedder=Gate())
print("published " + result.commit_sha, flush=True)
"""

# Holds the write lock, recording the given commit, until stdin closes.
HOLD_LOCK = r"""
import sys
from pathlib import Path

from ragit.store.lock import write_lock

with write_lock(Path(sys.argv[1]), target=sys.argv[2] if len(sys.argv) > 2 else None):
    print("locked", flush=True)
    sys.stdin.read()
"""


class Child:
    """A Python child process driven line by line through its stdin and stdout."""

    def __init__(self, script: str, *args: str):
        self.proc = subprocess.Popen([sys.executable, "-c", script, *args], stdin=subprocess.PIPE,
                                     stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)

    def expect(self, line: str) -> None:
        got = self.proc.stdout.readline().strip()  # blocks until the child reaches that point
        assert got == line, (got, self.proc.stderr.read() if not got else "")

    def send(self, line: str) -> None:
        self.proc.stdin.write(line + "\n")
        self.proc.stdin.flush()

    def finish(self) -> tuple[int, str]:
        out, err = self.proc.communicate(timeout=60)
        assert self.proc.returncode == 0, err
        return self.proc.returncode, out

    def kill(self) -> None:
        if self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait()


def watch_for_writer(monkeypatch) -> threading.Event:
    """An event set once a read has seen the running writer of its commit: from then on it is
    inside the wait, so releasing the writer tests the wait, not a race."""
    import ragit.store.lock as lock

    seen = threading.Event()
    real = lock.running_writer

    def observed(store_dir):
        writer = real(store_dir)
        if writer is not None and writer.commit_sha is not None:
            seen.set()
        return writer

    monkeypatch.setattr(lock, "running_writer", observed)
    return seen


def set_wait(repo, seconds: int) -> None:
    (repo.root / ".ragit" / "config.toml").write_text(
        PLACEHOLDER_CONFIG + f"\n[retrieval]\ningest_wait_seconds = {seconds}\n", encoding="utf-8")


@pytest.fixture
def committed_while_indexing(indexed_repo):
    """``indexed_repo`` plus a new commit whose ingest (started as a hook would) is running and
    stopped at its embedder: yields ``(repo, base sha, new head, child)``."""
    base = indexed_repo.head()
    head = indexed_repo.commit("walrus", {"docs/plan/walrus.md": "# Walrus plan\n\nfeed the walrus at noon\n"})
    child = Child(GATED_INGEST, str(indexed_repo.root), base)
    try:
        child.expect("embedding")
        yield indexed_repo, base, head, child
    finally:
        child.kill()


def read(cli, repo, command: str, *args: str):
    words = {"query": ["query", "walrus"], "pack": ["context", "pack", "walrus"],
             "recall": ["memory", "recall", "walrus"]}[command]
    return cli(*words, *args, "--cwd", str(repo.root), "--format", "json")


@pytest.mark.parametrize("command", ["query", "pack"])
def test_no_wait_fails_fast_with_the_retryable_error(committed_while_indexing, cli, command):
    repo, _, head, child = committed_while_indexing
    set_wait(repo, 600)  # --no-wait must not even start this wait (the ingest is held until "go")
    started = time.monotonic()
    r = read(cli, repo, command, "--no-wait")
    assert time.monotonic() - started < 60
    assert r.code == 3, r
    err = r.json["error"]
    assert err["code"] == "SNAPSHOT_INGEST_IN_PROGRESS" and err["category"] == "transient"
    assert err["retryable"] is True
    assert err["details"] == {"resolvedSha": head, "waitedMs": 0}
    assert err["recovery"] == {"command": "re-run the same command"}
    child.send("go")
    assert child.finish()[1].strip() == f"published {head}"
    assert read(cli, repo, command, "--no-wait").code == 0  # published: no wait needed


def test_a_limit_of_zero_skips_the_wait(committed_while_indexing, cli):
    repo, _, head, _ = committed_while_indexing
    set_wait(repo, 0)
    r = read(cli, repo, "query")
    assert r.code == 3 and r.json["error"]["details"] == {"resolvedSha": head, "waitedMs": 0}


def test_the_wait_is_bounded_by_the_config(committed_while_indexing, cli):
    repo, _, head, child = committed_while_indexing
    set_wait(repo, 1)
    started = time.monotonic()
    r = read(cli, repo, "query")
    elapsed = time.monotonic() - started
    assert r.code == 3, r
    err = r.json["error"]
    assert err["code"] == "SNAPSHOT_INGEST_IN_PROGRESS" and err["retryable"] is True
    # the ingest is held until "go": returning at all proves the bound; the margin absorbs a busy machine
    assert err["details"]["resolvedSha"] == head and 1000 <= err["details"]["waitedMs"] < 30000
    assert 1 <= elapsed < 60
    assert child.proc.poll() is None  # the ingest was never disturbed


@pytest.mark.parametrize("call", ["query", "pack", "recall"])
def test_a_read_waits_for_the_running_ingest_and_answers_from_its_snapshot(committed_while_indexing,
                                                                           monkeypatch, call):
    repo, _, head, child = committed_while_indexing
    set_wait(repo, 60)
    waiting = watch_for_writer(monkeypatch)
    api = ragit.Repo.open(repo.root)
    outcome: dict = {}

    def run() -> None:
        try:
            outcome["result"] = {"query": lambda: api.query("walrus"), "pack": lambda: api.pack("walrus"),
                                 "recall": lambda: api.recall("walrus")}[call]()
        except BaseException as exc:  # noqa: BLE001 - reported by the assertion below
            outcome["error"] = exc

    reader = threading.Thread(target=run)
    reader.start()
    assert waiting.wait(30), "the read never looked for the running ingest"
    child.send("go")
    child.finish()
    reader.join(60)
    assert not reader.is_alive() and "error" not in outcome, outcome
    data = outcome["result"].to_dict()
    assert data["snapshotSha"] == head and data["snapshot"]["status"] == "indexed"
    hits = data["retrievedHits"] if call == "recall" else data["hits"]
    assert any(h["path"] == "docs/plan/walrus.md" for h in hits)


def test_the_ingest_is_visible_before_it_reads_the_tree(indexed_repo, cli):
    """An apply announces its commit from its start, not only while it writes."""
    base = indexed_repo.head()
    head = indexed_repo.commit("walrus", {"docs/plan/walrus.md": "# Walrus plan\n\nfeed the walrus\n"})
    child = Child(GATED_INGEST, str(indexed_repo.root), base, "at-listing")
    try:
        child.expect("listing")
        r = read(cli, indexed_repo, "query", "--no-wait")
        assert r.code == 3 and r.json["error"]["code"] == "SNAPSHOT_INGEST_IN_PROGRESS", r
        child.send("go")
        assert child.finish()[1].strip() == f"published {head}"
    finally:
        child.kill()


def test_recall_no_wait_degrades_naming_the_code(committed_while_indexing, cli):
    repo, _, head, _ = committed_while_indexing
    set_wait(repo, 600)
    r = read(cli, repo, "recall", "--no-wait")
    assert r.code == 0, r
    data = r.json["data"]
    assert data["snapshotSha"] is None and data["snapshot"]["status"] == "unavailable"
    assert data["snapshot"]["resolvedSha"] == head
    assert any("SNAPSHOT_INGEST_IN_PROGRESS" in w for w in data["warnings"])


def test_an_ingest_of_another_commit_is_not_waited_for(indexed_repo, cli):
    base = indexed_repo.head()
    indexed_repo.commit("later", {"docs/later.md": "# Later\n\nlater doc\n"})
    set_wait(indexed_repo, 600)
    child = Child(HOLD_LOCK, str(indexed_repo.root / ".ragit" / "store"), base)
    try:
        child.expect("locked")
        started = time.monotonic()
        r = read(cli, indexed_repo, "query")
        assert time.monotonic() - started < 60  # far below the configured 600 s
        assert r.code == 3 and r.json["error"]["code"] == "SNAPSHOT_NOT_INDEXED"
    finally:
        child.kill()


def test_an_ingest_that_ends_without_publishing_ends_the_wait(indexed_repo, monkeypatch):
    indexed_repo.commit("later", {"docs/later.md": "# Later\n\nlater doc\n"})
    head = indexed_repo.head()
    set_wait(indexed_repo, 600)
    child = Child(HOLD_LOCK, str(indexed_repo.root / ".ragit" / "store"), head)
    child.expect("locked")
    outcome: dict = {}
    waiting = watch_for_writer(monkeypatch)
    api = ragit.Repo.open(indexed_repo.root)

    def run() -> None:
        try:
            api.query("later")
        except ragit.RagitError as exc:
            outcome["error"] = exc

    try:
        reader = threading.Thread(target=run)
        reader.start()
        assert waiting.wait(30)
        child.proc.stdin.close()  # the writer stops without publishing (a failed ingest)
        child.proc.wait(30)
        reader.join(30)
    finally:
        child.kill()
    assert not reader.is_alive()
    assert outcome["error"].code == "SNAPSHOT_NOT_INDEXED"  # nothing runs any more: not retryable


def test_the_lock_records_its_commit_only_while_held(git_repo):
    from ragit.store.lock import running_writer

    store = git_repo.root / ".ragit" / "store"
    assert running_writer(store) is None and not store.exists()  # looking creates nothing
    sha = "ab" * 20
    child = Child(HOLD_LOCK, str(store), sha)
    child.expect("locked")
    writer = running_writer(store)
    assert writer is not None and writer.commit_sha == sha and writer.pid == child.proc.pid
    child.proc.stdin.close()
    assert child.proc.wait(30) == 0
    assert running_writer(store) is None
    assert (store / "write.lock").read_bytes() == b""  # the record never outlives its holder
