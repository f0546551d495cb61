"""Typed errors for every fault, and crash hygiene (issue 14 items 3–4; cli-contract §3.3, §6;
knowledge §4.3, §8.1, §16, §20).

Storage faults use real mechanisms, not mocks:

- read-only: a read-only bind mount of ``.ragit`` (or of one directory in it) in a private mount
  namespace (``unshare -m``), so the kernel answers EROFS; skipped where namespaces are not
  permitted;
- permission denied: directories without write permission, written by an unprivileged user
  (tests run as root here, and root ignores permission bits, so the command runs as ``nobody``
  through ``setpriv``);
- disk full: ``RLIMIT_FSIZE`` in the child process (writes past the limit fail with EFBIG, the
  "no room for this write" of a quota), and a tiny tmpfs in a mount namespace (ENOSPC).

Crashes are real ``SIGKILL``s of a child process at the exact point of interest (after the
manifest's temp file is written, after the vector heap is appended), so the leftovers are what
a crash leaves.
"""

from __future__ import annotations

import json
import os
import resource
import shlex
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from functools import cache
from pathlib import Path

import pytest
from conftest import SAMPLE_FILES, GitRepo, tree_snapshot, write_placeholder_config

# cli-contract §3.3's defaults (ragit.contract.limits defines them; test_describe_lists_the_limits checks)
TEXT_LIMIT_BYTES, PAYLOAD_LIMIT_BYTES, DEPTH_LIMIT = 65_536, 1_048_576, 64
FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "transcripts"
CODEX = FIXTURES / "codex_rollout.jsonl"
NOBODY = 65534
WRAP = {"goal": "finish auth migration", "summary": "moved token rotation into the store"}
FINDING = {"scope": "session", "kind": "finding", "title": "Refresh tokens rotate",
           "text": "TokenStore.rotate returns a fresh token.", "confidence": 0.7,
           "sessionId": "20260308T100000Z-5c4669af"}
MORE_DOCS = {f"docs/notes/n{i:03d}.md": f"# Note {i}\n\n" + "\n\n".join(
    f"## Part {j}\n\nrotation token store number {i} part {j} " + "word " * 40 for j in range(6)) + "\n"
    for i in range(120)}


class Result:
    def __init__(self, code: int, out: str, err: str):
        self.code, self.out, self.err = code, out, err

    @property
    def json(self):
        return json.loads(self.out)

    def __repr__(self) -> str:  # pragma: no cover - shown on assertion failures
        return f"Result(code={self.code}, out={self.out[:1500]!r}, err={self.err[-1500:]!r})"


def ragit(root: Path, *args: str, stdin: str | None = None, limit_bytes: int | None = None,
          user: int | None = None, env: dict[str, str] | None = None) -> Result:
    """``python -m ragit`` in a child process: optionally with a file-size limit or as ``user``."""
    cmd = [sys.executable, "-m", "ragit", *args]
    child_env = {**os.environ, **(env or {})}
    if user is not None and os.geteuid() == 0:
        cmd = ["setpriv", f"--reuid={user}", f"--regid={user}", "--clear-groups", *cmd]

    def limit() -> None:
        if limit_bytes is not None:
            signal.signal(signal.SIGXFSZ, signal.SIG_IGN)  # EFBIG instead of a signal
            resource.setrlimit(resource.RLIMIT_FSIZE, (limit_bytes, limit_bytes))

    proc = subprocess.run(cmd, cwd=root, input=stdin, capture_output=True, text=True, env=child_env,
                          preexec_fn=limit if limit_bytes is not None else None, timeout=300)
    return Result(proc.returncode, proc.stdout, proc.stderr)


def assert_write_failed(r: Result, reason: str, under: Path | None = None) -> None:
    """A typed STORE_WRITE_FAILED envelope on stdout, nothing on stderr, exit 3."""
    assert r.code == 3, r
    assert r.err == "", r
    env = r.json
    assert env["ok"] is False and env["data"] is None
    err = env["error"]
    assert (err["code"], err["category"], err["retryable"]) == ("STORE_WRITE_FAILED", "io", False), r
    assert err["details"]["reason"] == reason, r
    assert err["recovery"] == {"command": "ragit doctor"}
    if under is not None:
        assert err["details"]["path"].startswith(str(under)), r


@cache
def namespaces_available() -> bool:
    """Whether this process may make private mount namespaces with read-only bind mounts."""
    if os.geteuid() != 0 or shutil.which("unshare") is None:
        return False
    probe = tempfile.mkdtemp()
    try:
        script = f"mount --bind {probe} {probe} && mount -o remount,bind,ro {probe} && ! touch {probe}/x 2>/dev/null"
        return subprocess.run(["unshare", "-m", "sh", "-c", script], capture_output=True).returncode == 0
    finally:
        shutil.rmtree(probe, ignore_errors=True)


def in_namespace(root: Path, mounts: list[str], commands: list[tuple[list[str], str | None]]) -> list[Result]:
    """Run ``ragit`` commands one after another in a private mount namespace set up by ``mounts``
    (shell commands); the mounts vanish with it, so the real directories are what remains."""
    if not namespaces_available():
        pytest.skip("mount namespaces are not available (needs root and unshare)")
    out = Path(tempfile.mkdtemp())
    try:
        lines = [" && ".join(mounts) + " || exit 99"]
        for i, (args, stdin) in enumerate(commands):
            cmd = shlex.join([sys.executable, "-m", "ragit", *args])
            if stdin is not None:
                (out / f"{i}.in").write_text(stdin, encoding="utf-8")
                cmd += f" < {out / f'{i}.in'}"
            lines.append(f"{cmd} > {out / f'{i}.out'} 2> {out / f'{i}.err'}; echo $? > {out / f'{i}.rc'}")
        proc = subprocess.run(["unshare", "-m", "bash", "-c", "\n".join(lines)], cwd=root, capture_output=True,
                              text=True, timeout=600)
        assert proc.returncode != 99, proc.stderr
        return [Result(int((out / f"{i}.rc").read_text()), (out / f"{i}.out").read_text(),
                       (out / f"{i}.err").read_text()) for i in range(len(commands))]
    finally:
        shutil.rmtree(out, ignore_errors=True)


def read_only(path: Path) -> list[str]:
    return [f"mount --bind {shlex.quote(str(path))} {shlex.quote(str(path))}",
            f"mount -o remount,bind,ro {shlex.quote(str(path))}"]


@pytest.fixture
def two_commits(git_repo, cli):
    """A: the sample files, indexed. B: A plus more documents, not indexed yet."""
    write_placeholder_config(git_repo.root)
    a = git_repo.commit("a", SAMPLE_FILES)
    assert cli("ingest", "--all", "--cwd", str(git_repo.root), "--format", "json").code == 0
    b = git_repo.commit("b", {"docs/notes/extra.md": "# Extra\n\nrotation of the refresh token store\n"})
    return git_repo, a, b


def query_at(root: Path, sha: str) -> Result:
    r = ragit(root, "query", "restore auth context token rotation", "--at", sha, "--format", "json")
    assert r.code == 0, r
    return r


def manifest(root: Path, sha: str) -> Path:
    return root / ".ragit" / "manifest" / f"{sha}.json"


def heaps(root: Path) -> list[Path]:
    return sorted((root / ".ragit" / "store").glob("vectors-*.f32"))


def hygiene(root: Path) -> dict:
    r = ragit(root, "doctor", "--format", "json")
    return next(c for c in r.json["data"]["checks"] if c["name"] == "store.hygiene")


# ================================================================ storage: read-only


def test_read_only_store_every_write_is_typed_and_every_snapshot_still_answers(two_commits):
    repo, a, b = two_commits
    root = repo.root
    before_answer = query_at(root, a).out
    before = tree_snapshot(root / ".ragit")
    results = in_namespace(root, read_only(root / ".ragit"), [
        (["ingest", "--all", "--format", "json"], None),
        (["memory", "wrap", "--input", "-", "--format", "json"], json.dumps(WRAP)),
        (["artifact", "capture", "--input", "-", "--format", "json"], json.dumps(FINDING)),
        (["session", "mirror", "--session", "s1", "--input", str(CODEX), "--format", "json"], None),
        (["window", "compact", "--session", "s1", "--input", str(CODEX), "--window", "2000", "--format", "json"],
         None),
        (["config", "set", "retrieval.top_k", "7", "--format", "json"], None),
        (["query", "restore auth context token rotation", "--at", a, "--format", "json"], None),
        (["doctor", "--format", "json"], None),
    ])
    for r in results[:6]:
        assert_write_failed(r, "read_only", root / ".ragit")
    assert results[6].code == 0 and results[6].out == before_answer  # the read-only store still answers
    assert results[7].code in (0, 1) and results[7].json["command"] == "doctor"
    assert tree_snapshot(root / ".ragit") == before
    assert not manifest(root, b).exists()


def test_read_only_manifest_directory_publishes_nothing(two_commits):
    """The store rows commit, the manifest cannot be written: B is not published (the manifest
    is the source of truth), A answers as before, and the next ingest succeeds."""
    repo, a, b = two_commits
    root = repo.root
    before_answer = query_at(root, a).out
    manifests = sorted(p.name for p in (root / ".ragit" / "manifest").iterdir())
    results = in_namespace(root, read_only(root / ".ragit" / "manifest"), [
        (["ingest", "--all", "--format", "json"], None),
        (["query", "restore auth context token rotation", "--at", a, "--format", "json"], None),
        (["query", "rotation", "--at", b, "--format", "json"], None),
    ])
    assert_write_failed(results[0], "read_only", root / ".ragit" / "manifest")
    assert results[1].out == before_answer
    assert results[2].code == 3 and results[2].json["error"]["code"] == "SNAPSHOT_NOT_INDEXED"
    assert sorted(p.name for p in (root / ".ragit" / "manifest").iterdir()) == manifests
    assert ragit(root, "ingest", "--all", "--format", "json").code == 0
    assert manifest(root, b).is_file() and query_at(root, a).out == before_answer


# ================================================================ storage: permission denied


@pytest.fixture
def shared_repo():
    """A two-commit repository (A indexed) in a directory an unprivileged user can reach, owned
    by that user when the tests run as root."""
    if os.geteuid() == 0 and shutil.which("setpriv") is None:
        pytest.skip("running as root without setpriv: permission bits cannot be enforced")
    base = Path(tempfile.mkdtemp(prefix="ragit-perm-"))
    try:
        base.chmod(0o755)
        root = base / "repo"
        root.mkdir()
        subprocess.run(["git", "init", "-q", "-b", "main", str(root)], check=True)
        repo = GitRepo(root)
        write_placeholder_config(root)
        a = repo.commit("a", SAMPLE_FILES)
        assert ragit(root, "ingest", "--all", "--format", "json").code == 0
        b = repo.commit("b", {"docs/notes/extra.md": "# Extra\n\nrotation notes\n"})
        (root / ".ragit" / "memory").mkdir()
        if os.geteuid() == 0:
            subprocess.run(["chown", "-R", f"{NOBODY}:{NOBODY}", str(base)], check=True)
        yield root, a, b
    finally:
        for path in base.rglob("*"):
            if path.is_dir() and not path.is_symlink():
                path.chmod(0o755)
        shutil.rmtree(base, ignore_errors=True)


def test_permission_denied_store_and_memory(shared_repo):
    root, a, b = shared_repo
    env = {"HOME": str(root.parent), "GIT_CONFIG_GLOBAL": os.devnull}
    answer = ragit(root, "query", "token rotation", "--at", a, "--format", "json", user=NOBODY, env=env)
    assert answer.code == 0, answer
    store = root / ".ragit" / "store"
    store.chmod(0o555)
    (root / ".ragit" / "memory").chmod(0o555)
    before = tree_snapshot(root / ".ragit")
    r = ragit(root, "ingest", "--all", "--format", "json", user=NOBODY, env=env)
    assert_write_failed(r, "permission_denied", store)
    r = ragit(root, "memory", "wrap", "--input", "-", "--format", "json", stdin=json.dumps(WRAP), user=NOBODY, env=env)
    assert_write_failed(r, "permission_denied", root / ".ragit" / "memory")
    assert tree_snapshot(root / ".ragit") == before
    again = ragit(root, "query", "token rotation", "--at", a, "--format", "json", user=NOBODY, env=env)
    assert again.out == answer.out
    assert not manifest(root, b).exists()


# ================================================================ storage: disk full


def store_files(root: Path) -> dict[str, int]:
    return {p.name: p.stat().st_size for p in (root / ".ragit" / "store").iterdir() if p.is_file()}


def test_disk_full_file_size_limit_keeps_the_previous_snapshot(two_commits):
    """EFBIG from RLIMIT_FSIZE mid-ingest: typed, the heap is cut back, nothing is published."""
    repo, a, _ = two_commits
    root = repo.root
    b = repo.commit("big", MORE_DOCS)
    before_answer = query_at(root, a).out
    sizes = store_files(root)
    limit = max(sizes.values()) + 8192
    r = ragit(root, "ingest", "--all", "--format", "json", limit_bytes=limit)
    assert_write_failed(r, "disk_full", root / ".ragit")
    assert not manifest(root, b).exists()
    assert {h.name: h.stat().st_size for h in heaps(root)} == {h: s for h, s in sizes.items() if h.endswith(".f32")}
    assert query_at(root, a).out == before_answer
    assert hygiene(root)["ok"] is True
    assert ragit(root, "ingest", "--all", "--format", "json").code == 0  # room again: it goes through
    assert manifest(root, b).is_file()


def test_first_ingest_out_of_space_leaves_no_orphan_vector_file(git_repo):
    """The issue's 1.5 MB orphan: a first ingest that runs out of space removes the heap it created."""
    write_placeholder_config(git_repo.root)
    head = git_repo.commit("big", {**SAMPLE_FILES, **MORE_DOCS})
    r = ragit(git_repo.root, "ingest", "--all", "--format", "json", limit_bytes=160 * 1024)
    assert_write_failed(r, "disk_full", git_repo.root / ".ragit")
    assert heaps(git_repo.root) == []
    assert not manifest(git_repo.root, head).exists()
    assert hygiene(git_repo.root) == {"name": "store.hygiene", "ok": True, "detail": "tempFiles=0, orphanVectors=0"}


def test_other_stores_out_of_space(git_repo):
    """sessions.db, memory and artifacts under the same file-size limit: typed, nothing left."""
    write_placeholder_config(git_repo.root)
    git_repo.commit("a", SAMPLE_FILES)
    before = tree_snapshot(git_repo.root)
    r = ragit(git_repo.root, "session", "mirror", "--session", "s1", "--input", str(CODEX), "--format", "json",
              limit_bytes=4096)
    assert_write_failed(r, "disk_full", git_repo.root / ".ragit")
    big = dict(WRAP, summary="moved token rotation into the store " * 400)
    r = ragit(git_repo.root, "memory", "wrap", "--input", "-", "--format", "json", stdin=json.dumps(big),
              limit_bytes=4096)
    assert_write_failed(r, "disk_full", git_repo.root / ".ragit")
    leftovers = {k for k in tree_snapshot(git_repo.root).keys() - before.keys() if not k.endswith("/")}
    assert not [k for k in leftovers if k.endswith(".tmp")], leftovers


def test_an_sqlite_write_refusal_anywhere_is_typed():
    """The last line of defence (errors.internal_error): a real SQLITE_FULL from a database at
    its page limit becomes STORE_WRITE_FAILED, not INTERNAL_ERROR."""
    import sqlite3

    from ragit.errors import internal_error

    conn = sqlite3.connect(":memory:")
    conn.execute("CREATE TABLE t(x TEXT)")
    conn.execute("PRAGMA max_page_count = 2")
    with pytest.raises(sqlite3.OperationalError) as full:
        conn.executemany("INSERT INTO t VALUES (?)", [("x" * 4000,)] * 10)
    err = internal_error(full.value)
    assert (err.code, err.category, err.exit_code, err.details["reason"]) == ("STORE_WRITE_FAILED", "io", 3, "disk_full")
    assert internal_error(ValueError("bug")).code == "INTERNAL_ERROR"
    assert internal_error(PermissionError(13, "denied", "/x")).code == "INTERNAL_ERROR"  # a read may say that too


def test_full_tmpfs_is_disk_full(two_commits):
    """ENOSPC from a real (tiny) file system mounted over the store."""
    repo, a, _ = two_commits
    root = repo.root
    b = repo.commit("big", MORE_DOCS)
    before_answer = query_at(root, a).out
    store = root / ".ragit" / "store"
    size = sum(store_files(root).values()) + 64 * 1024
    stage = Path(tempfile.mkdtemp())
    try:
        mounts = [f"cp -a {store}/. {stage}/", f"mount -t tmpfs -o size={size} tmpfs {store}",
                  f"cp -a {stage}/. {store}/"]
        results = in_namespace(root, mounts, [
            (["ingest", "--all", "--format", "json"], None),
            (["query", "restore auth context token rotation", "--at", a, "--format", "json"], None),
            (["doctor", "--format", "json"], None),
        ])
    finally:
        shutil.rmtree(stage, ignore_errors=True)
    assert_write_failed(results[0], "disk_full", root / ".ragit")
    assert results[1].out == before_answer
    checks = {c["name"]: c for c in results[2].json["data"]["checks"]}
    assert checks["store.hygiene"]["ok"] is True and checks["ragit.manifest-consistency"]["ok"] is True
    assert not manifest(root, b).exists()


# ================================================================ crash hygiene


def killed_ingest(root: Path, patch: str) -> tuple[int, int, str]:
    """An ingest in a child process that SIGKILLs itself where ``patch`` says: (exit status,
    pid, stderr)."""
    script = "\n".join([
        "import os, signal, sys",
        patch,
        "from ragit.cli.main import main",
        "main(['ingest', '--all', '--format', 'json'])",
    ])
    proc = subprocess.Popen([sys.executable, "-c", script], cwd=root, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True)
    _, err = proc.communicate(timeout=300)
    return proc.returncode, proc.pid, err


KILL_BEFORE_MANIFEST_RENAME = """
_replace = os.replace
def replace(src, dst, *args, **kwargs):
    if '/manifest/' in str(dst):
        os.kill(os.getpid(), signal.SIGKILL)  # temp file written and fsynced, not yet renamed
    return _replace(src, dst, *args, **kwargs)
os.replace = replace
"""

KILL_AFTER_HEAP_APPEND = """
from ragit.store.sqlite import SqliteStore
_append = SqliteStore._append_heap
def append(self, *args, **kwargs):
    slot = _append(self, *args, **kwargs)
    os.kill(os.getpid(), signal.SIGKILL)  # vectors on disk, their rows never committed
    return slot
SqliteStore._append_heap = append
"""


def test_kill_during_manifest_publication_leaves_a_temp_file_that_doctor_reports_and_ingest_removes(two_commits):
    repo, a, b = two_commits
    root = repo.root
    before_answer = query_at(root, a).out
    status, pid, err = killed_ingest(root, KILL_BEFORE_MANIFEST_RENAME)
    assert status == -signal.SIGKILL, err
    temps = sorted((root / ".ragit" / "manifest").glob(f"{b}.json.*.tmp"))
    assert len(temps) == 1 and temps[0].name.split(".")[2] == str(pid)  # <sha>.json.<pid>.<uuid>.tmp
    assert not manifest(root, b).exists()
    assert query_at(root, a).out == before_answer
    check = hygiene(root)
    assert check["ok"] is False and check["detail"].startswith("tempFiles=1, orphanVectors=0")
    assert temps[0].relative_to(root).as_posix() in check["detail"]
    r = ragit(root, "ingest", "--all", "--format", "json")
    assert r.code == 0, r
    assert list((root / ".ragit" / "manifest").glob("*.tmp")) == []
    assert manifest(root, b).is_file()
    assert hygiene(root)["ok"] is True


def test_kill_between_heap_append_and_commit_leaves_an_orphan_heap_that_doctor_reports(git_repo):
    write_placeholder_config(git_repo.root)
    head = git_repo.commit("a", SAMPLE_FILES)
    root = git_repo.root
    status, _, err = killed_ingest(root, KILL_AFTER_HEAP_APPEND)
    assert status == -signal.SIGKILL, err
    orphan = heaps(root)
    assert len(orphan) == 1 and orphan[0].stat().st_size > 0
    check = hygiene(root)
    assert check["ok"] is False and check["detail"].startswith("tempFiles=0, orphanVectors=1")
    r = ragit(root, "ingest", "--all", "--format", "json")
    assert r.code == 0, r
    assert hygiene(root)["ok"] is True and manifest(root, head).is_file()
    # the heap now in use is the one this ingest wrote, referenced by the store
    doctor = ragit(root, "doctor", "--format", "json").json["data"]
    assert doctor["hasFailure"] is False, doctor


def test_next_write_removes_only_temp_files_whose_writer_is_gone(tmp_path):
    from ragit.fsutil import atomic_write_text, stale_temps

    directory = tmp_path / "d"
    directory.mkdir()
    dead = subprocess.Popen([sys.executable, "-c", "pass"])
    dead.wait()
    leftovers = {
        "dead": directory / f"a.json.{dead.pid}.{'0' * 32}.tmp",
        "live": directory / f"b.json.{os.getppid()}.{'1' * 32}.tmp",
        "mine": directory / f"c.json.{os.getpid()}.{'2' * 32}.tmp",
        "other": directory / "notes.tmp",
    }
    for path in leftovers.values():
        path.write_text("x")
    assert stale_temps(directory) == [leftovers["dead"]]
    atomic_write_text(directory / "new.json", "{}")
    assert sorted(p.name for p in directory.iterdir()) == sorted(
        [leftovers[k].name for k in ("live", "mine", "other")] + ["new.json"])


def test_directory_is_fsynced_after_the_rename(tmp_path, monkeypatch):
    import stat

    from ragit import fsutil

    events: list[str] = []
    real_fsync, real_replace = os.fsync, os.replace

    def fsync(fd):
        events.append("fsync-dir" if stat.S_ISDIR(os.fstat(fd).st_mode) else "fsync-file")
        return real_fsync(fd)

    def replace(src, dst):
        events.append("rename")
        return real_replace(src, dst)

    monkeypatch.setattr(os, "fsync", fsync)
    monkeypatch.setattr(os, "replace", replace)
    fsutil.atomic_write_bytes(tmp_path / "m.json", b"{}")
    assert events == ["fsync-file", "rename", "fsync-dir"]


# ================================================================ hostile input (cli-contract §3.3)


INPUT_COMMANDS = [("query",), ("context", "pack"), ("context", "packet"), ("context", "assemble"), ("ingest",),
                  ("memory", "wrap"), ("memory", "promote"), ("artifact", "capture"), ("window", "check"),
                  ("window", "compact", "--session", "s1"), ("session", "mirror", "--session", "s1")]
DEEP = "[" * 5000 + "]" * 5000
HOSTILE = {
    "too_deep": (DEEP, "input"),
    "lone_surrogate": ('{"question": "a\\ud800b", "goal": "a\\ud800b"}', None),
    "non_finite_number": ('{"question": "x", "goal": "x", "topK": NaN, "budget": Infinity}', None),
    "too_large": (json.dumps({"question": "q" * (PAYLOAD_LIMIT_BYTES + 1)}), "--input"),
}


# transcripts (and `context assemble`'s messages) are files: the file limit applies, not the payload limit
TRANSCRIPT_COMMANDS = {("context", "assemble"), ("window", "check"), ("window", "compact", "--session", "s1"),
                       ("session", "mirror", "--session", "s1")}


@pytest.mark.parametrize("reason", sorted(HOSTILE))
@pytest.mark.parametrize("command", INPUT_COMMANDS, ids=lambda c: " ".join(c[:2]))
def test_hostile_input_is_a_typed_rejection_that_writes_nothing(indexed_repo, cli, command, reason):
    if reason == "too_large" and command in TRANSCRIPT_COMMANDS:
        pytest.skip("a transcript is measured against the file limit (test_file_limit)")
    text, field = HOSTILE[reason]
    before = tree_snapshot(indexed_repo.root)
    r = cli(*command, "--input", "-", "--cwd", str(indexed_repo.root), "--format", "json", stdin=text)
    assert r.code == 2, r
    err = r.json["error"]
    assert (err["code"], err["details"]["reason"]) == ("INPUT_INVALID", reason), r
    if field is not None:
        assert err["details"]["field"] == field
    assert tree_snapshot(indexed_repo.root) == before


@pytest.mark.parametrize("transcript,reason,field", [
    ('[{"role": "user", "content": "a\\ud800b"}]', "lone_surrogate", "input[0].content"),
    ('[{"role": "user", "content": "x", "n": NaN}]', "non_finite_number", "input"),
    ('[{"role": "user", "content": "x"}]\n{"type": "meta", "x": "\\udc00"}', "lone_surrogate", "input"),
    ('[{"role": "user", "content": ' + "[" * 3000 + "]" * 3000 + "}]", "too_deep", "input"),
])
def test_window_compact_hostile_transcript_gives_json_on_stdout(git_repo, cli, transcript, reason, field):
    before = tree_snapshot(git_repo.root)
    r = cli("window", "compact", "--session", "s1", "--input", "-", "--cwd", str(git_repo.root), "--format", "json",
            stdin=transcript)
    assert r.code == 2 and r.err == "", r
    assert r.json["error"]["code"] == "INPUT_INVALID" and r.json["error"]["details"]["reason"] == reason
    assert r.json["error"]["details"]["field"] in (field, "input")
    assert tree_snapshot(git_repo.root) == before


def test_positional_question_and_goal_limits(indexed_repo, cli):
    root = str(indexed_repo.root)

    def reason(*args: str) -> tuple[str, str] | None:
        r = cli(*args, "--cwd", root, "--format", "json")
        if r.code == 0:
            return None
        return r.json["error"]["details"]["field"], r.json["error"]["details"]["reason"]

    assert reason("query", "caf\udcff") == ("question", "lone_surrogate")  # argv that was not UTF-8
    assert reason("query", "a\ud800") == ("question", "lone_surrogate")
    assert reason("context", "pack", "g" * (TEXT_LIMIT_BYTES + 1)) == ("goal", "too_large")
    assert reason("query", "é" * (TEXT_LIMIT_BYTES // 2 + 1)) == ("question", "too_large")  # bytes, not chars
    assert reason("query", "auth " * (TEXT_LIMIT_BYTES // 5)) is None  # exactly at the limit: answered
    assert reason("memory", "recall", "x\udc80") == ("goal", "lone_surrogate")
    assert reason("session", "search", "q" * (TEXT_LIMIT_BYTES + 1)) == ("query", "too_large")


def test_argv_that_is_not_utf8_is_rejected_by_the_real_process(indexed_repo):
    proc = subprocess.run([sys.executable, "-m", "ragit", "query", b"caf\xff", "--format", "json"],
                          cwd=indexed_repo.root, capture_output=True)
    assert proc.returncode == 2, proc
    assert json.loads(proc.stdout)["error"]["details"] == {"field": "question", "reason": "lone_surrogate"}


def test_file_limit(tmp_path):
    """Files read as external material stop at their limit without being read past it."""
    from ragit.contract.inputs import Validator, read_text_input
    from ragit.errors import RagitError

    (tmp_path / "t.json").write_bytes(b"[" + b" " * 100 + b"]")
    assert read_text_input("t.json", tmp_path, Validator("window check"), limit=102) == "[" + " " * 100 + "]"
    with pytest.raises(RagitError) as exc:
        read_text_input("t.json", tmp_path, Validator("window check"), limit=101)
    assert exc.value.details == {"field": "--input", "reason": "too_large"}


def test_transcript_keys_named_like_questions_are_data(git_repo, cli):
    """A tool call's 70 KB ``query`` argument is transcript content, not a question."""
    call = {"name": "search", "arguments": json.dumps({"query": "q" * 70_000})}
    transcript = [{"role": "assistant", "content": "", "tool_calls": [{"id": "c1", "type": "function", "function": call}]},
                  {"role": "tool", "tool_call_id": "c1", "content": "done", "query": "q" * 70_000}]
    r = cli("window", "check", "--input", "-", "--cwd", str(git_repo.root), "--format", "json",
            stdin=json.dumps(transcript))
    assert r.code == 0, r


def test_python_api_shares_the_limits(indexed_repo):
    from ragit import Repo
    from ragit.errors import RagitError

    repo = Repo.open(indexed_repo.root)
    started = time.monotonic()
    with pytest.raises(RagitError) as big:
        repo.query("w" * 10_000_000)  # the 10 MB question ran past 90 s
    assert time.monotonic() - started < 1.0
    assert big.value.details == {"field": "input.question", "reason": "too_large"}
    with pytest.raises(RagitError) as lone:
        repo.pack("goal \ud800")
    assert lone.value.details == {"field": "input.goal", "reason": "lone_surrogate"}


def test_describe_lists_the_limits_mcp_enforces():
    from ragit.contract.describe import REGISTRY
    from ragit.contract.limits import LIMITS
    from ragit.mcp import limits as mcp_limits

    assert LIMITS == {"textBytes": 65_536, "textFields": ["citation", "goal", "query", "question"],
                      "payloadBytes": 1_048_576, "fileBytes": 268_435_456, "depth": DEPTH_LIMIT}
    for spec in REGISTRY.values():
        assert spec["limits"] == LIMITS, spec["path"]
    assert (mcp_limits.TEXT_LIMIT_BYTES, mcp_limits.PAYLOAD_LIMIT_BYTES, mcp_limits.DEPTH_LIMIT) == (
        TEXT_LIMIT_BYTES, PAYLOAD_LIMIT_BYTES, DEPTH_LIMIT)


# ================================================================ verify: paths outside the repository


@pytest.mark.parametrize("citation", ["../../etc/passwd@HEAD:L1-L2", "/etc/passwd@HEAD:L1-L2",
                                      "docs/../../outside.md@HEAD:L1-L1"])
def test_verify_citation_outside_the_repository(indexed_repo, cli, citation):
    r = cli("verify", citation, "--cwd", str(indexed_repo.root), "--format", "json")
    assert r.code == 2, r
    err = r.json["error"]
    assert err["code"] == "CITATION_NOT_FOUND" and err["category"] == "invalid_input"
    assert err["details"] == {"citation": citation, "reason": "path_outside_repo"}
    assert err["recovery"] == {"command": "ragit doctor"}


# ================================================================ names that are not UTF-8, missing blobs


def test_file_name_that_is_not_utf8_is_skipped_with_a_warning(git_repo, cli):
    write_placeholder_config(git_repo.root)
    git_repo.write("docs/a.md", "# Auth\n\nWe rotate tokens.\n")
    latin = os.fsencode(git_repo.root / "docs") + b"/caf\xe9.md"
    with open(latin, "wb") as fh:
        fh.write(b"# Cafe\n\nlatin one file name\n")
    first = git_repo.commit("latin-1 name")
    assert b"docs/caf\xe9.md" in subprocess.run(["git", "ls-files", "-z"], cwd=git_repo.root,
                                                 capture_output=True).stdout
    r = cli("ingest", "--all", "--cwd", str(git_repo.root), "--format", "json")
    assert r.code == 0, r
    data = r.json["data"]
    assert {"path": "docs/caf\\xe9.md", "reason": "path_not_utf8"} in data["skippedFiles"]
    assert "docs/caf\\xe9.md" in data["plannedFiles"] and data["processed"] == 1
    assert any("not valid UTF-8" in w and "docs/caf\\xe9.md" in w for w in data["warnings"])
    assert [d["path"] for d in json.loads(manifest(git_repo.root, first).read_text())["docs"]] == ["docs/a.md"]
    # an incremental ingest that touches the file skips it again, and the hook path never aborts
    with open(latin, "ab") as fh:
        fh.write(b"more\n")
    git_repo.write("docs/a.md", "# Auth\n\nWe rotate tokens often.\n")
    second = git_repo.commit("edit both")
    r = cli("ingest", "--since", first, "--cwd", str(git_repo.root), "--format", "json")
    assert r.code == 0, r
    assert {"path": "docs/caf\\xe9.md", "reason": "path_not_utf8"} in r.json["data"]["skippedFiles"]
    q = cli("query", "rotate tokens", "--cwd", str(git_repo.root), "--format", "json")
    assert q.code == 0 and q.json["data"]["snapshotSha"] == second


def test_missing_blob_is_skipped_with_a_warning(git_repo, cli):
    write_placeholder_config(git_repo.root)
    git_repo.commit("a", {"docs/a.md": "# Auth\n\nWe rotate tokens.\n", "docs/gone.md": "# Gone\n\nvanishing\n"})
    oid = git_repo.git("rev-parse", "HEAD:docs/gone.md")
    (git_repo.root / ".git" / "objects" / oid[:2] / oid[2:]).unlink()  # as a partial clone lacks it
    assert "BAD" in git_repo.git("ls-tree", "-r", "-l", "HEAD")
    r = cli("ingest", "--all", "--cwd", str(git_repo.root), "--format", "json")
    assert r.code == 0, r
    data = r.json["data"]
    assert data["skippedFiles"] == [{"path": "docs/gone.md", "reason": "missing_object"}]
    assert data["processed"] == 1 and any("missing from this clone" in w for w in data["warnings"])


@pytest.mark.parametrize("command", ["ingest", "migrate rebuild", "migrate from-json-store", "snapshot import"])
def test_describe_lists_store_write_failed_for_every_store_writer(command, cli):
    """Every command that writes the store can fail with a full or read-only disk, and says so."""
    r = cli("describe", *command.split(), "--format", "json")
    assert r.code == 0, r
    assert "STORE_WRITE_FAILED" in r.json["data"]["spec"]["errorCodes"]
