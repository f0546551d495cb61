"""`ragit hooks install | uninstall | status` and the hook script, fired by real Git commands
(knowledge §14 checks)."""

from __future__ import annotations

import json
import os
import stat
import subprocess
import sys
import time
from pathlib import Path

import pytest

from ragit.cli.main import main
from ragit.hooks import FAILURE_LINE, hook_script

PLACEHOLDER_CONFIG = '[embedding]\nprovider = "placeholder"\ndimensions = 64\n'
NAMES = ("post-commit", "post-merge", "post-checkout")


@pytest.fixture(autouse=True)
def _no_ragit_on_path(monkeypatch):
    """Hooks must fall back to ``<python> -m ragit``; tests that want a ``ragit`` put one first."""
    dirs = os.environ.get("PATH", "").split(os.pathsep)
    monkeypatch.setenv("PATH", os.pathsep.join(d for d in dirs if d and not os.access(Path(d) / "ragit", os.X_OK)))


def ragit(capsys, *args: str, code: int = 0) -> str:
    """Run the CLI in-process; checks the exit code and returns stdout."""
    with pytest.raises(SystemExit) as exit_info:
        main(list(args))
    out = capsys.readouterr().out
    assert exit_info.value.code == code, out
    return out


def git(root: Path, *args: str, env: dict[str, str] | None = None) -> str:
    """A real git command; ``timeout`` makes a hook that blocks Git fail the test."""
    proc = subprocess.run(["git", *args], cwd=root, check=False, capture_output=True, text=True, timeout=15,
                          env={**os.environ, **(env or {})})
    assert proc.returncode == 0, f"git {' '.join(args)}: {proc.stderr}"
    return proc.stdout.strip()


def commit(root: Path, path: str, text: str, env: dict[str, str] | None = None) -> str:
    (root / path).parent.mkdir(parents=True, exist_ok=True)
    (root / path).write_text(text, encoding="utf-8")
    git(root, "add", "-A", env=env)
    git(root, "commit", "-q", "-m", f"change {path}", env=env)
    return git(root, "rev-parse", "HEAD")


def indexed_repo(git_repo) -> Path:
    """A repository with the placeholder embedder committed and one document."""
    git_repo.commit("init", {".ragit/config.toml": PLACEHOLDER_CONFIG, "docs/guide.md": "# Guide\n\nHello.\n"})
    return git_repo.root


def wait_for(predicate, what: str, timeout: float = 20.0) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if predicate():
            return
        time.sleep(0.05)
    raise AssertionError(f"timed out waiting for {what}")


def log_path(root: Path) -> Path:
    return root / ".ragit/cache/hooks.log"


def log_text(root: Path) -> str:
    path = log_path(root)
    return path.read_text(encoding="utf-8") if path.exists() else ""


def wait_indexed(root: Path, sha: str) -> None:
    """Until the background ingest published ``sha`` and reported it in hooks.log (its last words)."""
    rel = f".ragit/manifest/{sha}.json"
    wait_for(lambda: (root / rel).is_file() and f"- manifest: {rel}" in log_text(root), f"manifest {sha}")


def dir_state(path: Path) -> dict[str, tuple[bytes, int]]:
    return {p.name: (p.read_bytes(), p.stat().st_mode) for p in sorted(path.iterdir())} if path.exists() else {}


def write_hook(path: Path, body: str, mode: int = 0o750) -> bytes:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("#!/bin/sh\n" + body, encoding="utf-8")
    path.chmod(mode)
    return path.read_bytes()


def fake_ragit(bin_dir: Path, body: str) -> dict[str, str]:
    """A ``ragit`` on PATH (recording its arguments in ``bin/calls``); returns the env to use it."""
    bin_dir.mkdir(exist_ok=True)
    write_hook(bin_dir / "ragit", f'echo "$*" >> "{bin_dir}/calls"\n{body}', mode=0o755)
    return {"PATH": f"{bin_dir}{os.pathsep}{os.environ['PATH']}"}


# ---------------------------------------------------------------- install / status / uninstall

def test_install_then_status_reports_all_installed(git_repo, capsys):
    root = indexed_repo(git_repo)
    out = ragit(capsys, "hooks", "install", "--cwd", str(root))
    assert out == ("# ragit hooks install\n- dry_run: false\n\n"
                   "- post-commit: installed (.git/hooks/post-commit)\n"
                   "- post-merge: installed (.git/hooks/post-merge)\n"
                   "- post-checkout: installed (.git/hooks/post-checkout)\n")
    hooks_dir = root / ".git/hooks"
    for name in NAMES:
        assert stat.S_IMODE((hooks_dir / name).stat().st_mode) == 0o755
        assert "# managed-by-ragit" in (hooks_dir / name).read_text().splitlines()
    before = dir_state(hooks_dir)

    out = ragit(capsys, "hooks", "status", "--cwd", str(root))
    envelope = json.loads(out)
    assert envelope["command"] == "hooks status" and envelope["cwd"] == str(root)
    assert envelope["data"] == {"dryRun": False, "root": str(root), "hooks": [
        {"name": n, "target": f".git/hooks/{n}", "action": "status", "state": "installed"} for n in NAMES]}

    ragit(capsys, "hooks", "install", "--cwd", str(root))
    assert dir_state(hooks_dir) == before  # re-installing is idempotent
    assert not (root / ".ragit/cache").exists()


def test_foreign_hook_is_chained_run_by_a_real_merge_and_restored(git_repo, capsys, tmp_path):
    root = indexed_repo(git_repo)
    git(root, "checkout", "-q", "-b", "feature")
    commit(root, "docs/feature.md", "# Feature\n\nNew.\n")
    git(root, "checkout", "-q", "main")
    commit(root, "docs/main.md", "# Main\n\nOther.\n")
    marker = tmp_path / "merge-marker"
    hooks_dir = root / ".git/hooks"
    original = write_hook(hooks_dir / "post-merge", f'echo "merged $*" >> "{marker}"\nexit 3\n')

    out = ragit(capsys, "hooks", "status", "--cwd", str(root), "--format", "text")
    assert "- post-merge: external (.git/hooks/post-merge)" in out
    out = ragit(capsys, "hooks", "install", "--cwd", str(root), "--format", "json")
    states = {h["name"]: h["state"] for h in json.loads(out)["data"]["hooks"]}
    assert states == {"post-commit": "installed", "post-merge": "chained", "post-checkout": "installed"}
    chained = hooks_dir / "post-merge.ragit-chained"
    assert chained.read_bytes() == original and stat.S_IMODE(chained.stat().st_mode) == 0o750

    git(root, "merge", "-q", "--no-edit", "feature")
    assert marker.read_text() == "merged 0\n"
    wait_indexed(root, git(root, "rev-parse", "HEAD"))

    out = ragit(capsys, "hooks", "uninstall", "--cwd", str(root))
    assert out.splitlines()[3:] == ["- post-commit: absent (.git/hooks/post-commit)",
                                    "- post-merge: external (.git/hooks/post-merge)",
                                    "- post-checkout: absent (.git/hooks/post-checkout)"]
    restored = hooks_dir / "post-merge"
    assert restored.read_bytes() == original and stat.S_IMODE(restored.stat().st_mode) == 0o750
    assert not chained.exists()
    out = ragit(capsys, "hooks", "status", "--cwd", str(root))
    assert [h["state"] for h in json.loads(out)["data"]["hooks"]] == ["absent", "external", "absent"]


def test_existing_chained_file_leaves_the_foreign_hook_untouched(git_repo, capsys):
    root = indexed_repo(git_repo)
    hooks_dir = root / ".git/hooks"
    foreign = write_hook(hooks_dir / "post-commit", "exit 0\n")
    leftover = write_hook(hooks_dir / "post-commit.ragit-chained", "exit 1\n")
    out = ragit(capsys, "hooks", "install", "--cwd", str(root))
    assert "- post-commit: external (.git/hooks/post-commit)" in out
    assert (hooks_dir / "post-commit").read_bytes() == foreign
    assert (hooks_dir / "post-commit.ragit-chained").read_bytes() == leftover


def test_dry_run_reports_planned_and_writes_nothing(git_repo, capsys):
    root = indexed_repo(git_repo)
    hooks_dir = root / ".git/hooks"
    write_hook(hooks_dir / "post-merge", "exit 0\n")
    before = dir_state(hooks_dir)
    out = ragit(capsys, "hooks", "install", "--dry-run", "--cwd", str(root), "--format", "json")
    data = json.loads(out)["data"]
    assert data["dryRun"] is True and [h["state"] for h in data["hooks"]] == ["planned"] * 3
    assert dir_state(hooks_dir) == before

    ragit(capsys, "hooks", "install", "--cwd", str(root))
    installed = dir_state(hooks_dir)
    out = ragit(capsys, "hooks", "uninstall", "--dry-run", "--cwd", str(root))
    assert out.startswith("# ragit hooks uninstall\n- dry_run: true\n\n")
    assert out.count(": planned (") == 3
    assert dir_state(hooks_dir) == installed
    assert not (root / ".ragit/cache").exists() and not (root / ".ragit/store").exists()


def test_disabled_hooks_are_not_written(git_repo, capsys):
    root = indexed_repo(git_repo)
    ragit(capsys, "config", "set", "hooks.post_checkout", "false", "--cwd", str(root))
    out = ragit(capsys, "hooks", "install", "--cwd", str(root), "--format", "json")
    assert [h["state"] for h in json.loads(out)["data"]["hooks"]] == ["installed", "installed", "absent"]
    assert not (root / ".git/hooks/post-checkout").exists()


def test_status_outside_git_is_a_typed_failure(tmp_path, capsys, monkeypatch):
    monkeypatch.setenv("GIT_CEILING_DIRECTORIES", str(tmp_path))
    plain = tmp_path / "plain"
    plain.mkdir()
    out = ragit(capsys, "hooks", "status", "--cwd", str(plain), "--format", "json", code=3)
    assert json.loads(out)["error"]["code"] == "GIT_REPOSITORY_REQUIRED"
    assert list(plain.iterdir()) == []


def test_describe_registers_the_hook_commands(capsys):
    facts = {}
    for sub in ("install", "uninstall", "status"):
        out = ragit(capsys, "describe", "hooks", sub)
        spec = json.loads(out)["data"]["spec"]
        facts[sub] = (spec["mutating"], spec["supportsDryRun"], spec["defaultFormat"], spec["failureFormat"])
    assert facts == {"install": (True, True, "text", "text"), "uninstall": (True, True, "text", "text"),
                     "status": (False, False, "json", "text")}


def test_script_is_deterministic():
    assert hook_script("post-commit", "/opt/py/bin/python3") == hook_script("post-commit", "/opt/py/bin/python3")
    assert "'/opt/my py/python'" in hook_script("post-merge", "/opt/my py/python")


# ---------------------------------------------------------------- the hook script, fired by Git

def test_commit_returns_before_the_background_ingest_finishes(git_repo, capsys, tmp_path):
    root = indexed_repo(git_repo)
    first = git(root, "rev-parse", "HEAD")
    ragit(capsys, "ingest", "--all", "--cwd", str(root))
    ragit(capsys, "hooks", "install", "--cwd", str(root))
    gate = tmp_path / "gate"
    # The ingest waits for the gate: a hook that waited for it would time the commit out.
    env = fake_ragit(tmp_path / "bin", f'while [ ! -f "{gate}" ]; do sleep 0.05; done\n'
                                       f'exec "{sys.executable}" -m ragit "$@"\n')
    log_path(root).parent.mkdir(parents=True, exist_ok=True)  # ingest keeps caches there (co-change, history)
    log_path(root).write_text("earlier run\n", encoding="utf-8")

    head = commit(root, "docs/new.md", "# New\n\nA new page.\n", env=env)
    assert not (root / f".ragit/manifest/{head}.json").exists()
    gate.touch()
    wait_indexed(root, head)
    log = log_text(root)
    assert log.startswith("earlier run\n") and len(log) > len("earlier run\n")
    assert (tmp_path / "bin/calls").read_text() == f"ingest --since {first} --format text\n"


def test_skip_hooks_runs_the_chained_original_only(git_repo, capsys, tmp_path):
    root = indexed_repo(git_repo)
    hooks_dir = root / ".git/hooks"
    write_hook(hooks_dir / "post-commit",
               f'echo "args:$*" >> "{tmp_path}/ran"\ncat >> "{tmp_path}/stdin"\nexit 3\n')
    ragit(capsys, "hooks", "install", "--cwd", str(root))

    head = commit(root, "docs/skip.md", "# Skip\n", env={"RAGIT_SKIP_HOOKS": "1"})
    assert (tmp_path / "ran").read_text() == "args:\n"
    assert not (root / ".ragit/cache").exists()  # the hook stopped before starting the ingest
    assert not (root / f".ragit/manifest/{head}.json").exists()

    # Same arguments, same standard input, the original's exit status.
    proc = subprocess.run([str(hooks_dir / "post-commit"), "a", "b c"], cwd=root, input="payload", check=False,
                          capture_output=True, text=True, timeout=15, env={**os.environ, "RAGIT_SKIP_HOOKS": "1"})
    assert proc.returncode == 3
    assert (tmp_path / "ran").read_text() == "args:\nargs:a b c\n"
    assert (tmp_path / "stdin").read_text() == "payload"


def test_post_checkout_of_files_does_nothing_and_branch_checkout_indexes(git_repo, capsys):
    root = indexed_repo(git_repo)
    ragit(capsys, "hooks", "install", "--cwd", str(root))
    (root / "docs/guide.md").write_text("# Guide\n\nEdited.\n", encoding="utf-8")
    git(root, "checkout", "--", "docs/guide.md")
    assert not (root / ".ragit/cache").exists()

    git(root, "checkout", "-q", "-b", "other")
    wait_indexed(root, git(root, "rev-parse", "HEAD"))


def test_failed_ingest_appends_the_failure_line(git_repo, capsys, tmp_path):
    root = indexed_repo(git_repo)
    parent = git(root, "rev-parse", "HEAD")
    ragit(capsys, "hooks", "install", "--cwd", str(root))
    env = fake_ragit(tmp_path / "bin", 'echo "boom" >&2\nexit 1\n')

    commit(root, "docs/fail.md", "# Fail\n", env=env)
    wait_for(lambda: FAILURE_LINE in log_text(root), "the failure line")
    log = log_text(root)
    assert log.endswith(FAILURE_LINE + "\n") and log.count(FAILURE_LINE) == 1
    assert "boom" in log
    assert (tmp_path / "bin/calls").read_text() == (f"ingest --since {parent} --format text\n"
                                                     "ingest --all --format text\n")


def test_core_hooks_path_is_honoured(git_repo, capsys, tmp_path):
    root = indexed_repo(git_repo)
    shared = tmp_path / "shared-hooks"
    git(root, "config", "core.hooksPath", str(shared))
    out = ragit(capsys, "hooks", "install", "--cwd", str(root), "--format", "json")
    assert [h["target"] for h in json.loads(out)["data"]["hooks"]] == [f"../shared-hooks/{n}" for n in NAMES]
    assert sorted(p.name for p in shared.iterdir()) == sorted(NAMES)
    assert not (root / ".git/hooks/post-commit").exists()

    head = commit(root, "docs/path.md", "# Hooks path\n")
    wait_indexed(root, head)


def test_linked_worktree_uses_the_common_hooks_and_indexes_itself(git_repo, capsys, tmp_path):
    root = indexed_repo(git_repo)
    ragit(capsys, "hooks", "install", "--cwd", str(root))
    worktree = tmp_path / "wt"
    git(root, "worktree", "add", "-q", str(worktree), "-b", "feature")
    wait_indexed(worktree, git(worktree, "rev-parse", "HEAD"))  # post-checkout of the new worktree

    out = ragit(capsys, "hooks", "status", "--cwd", str(worktree))
    data = json.loads(out)["data"]
    assert data["root"] == str(worktree)
    assert [(h["target"], h["state"]) for h in data["hooks"]] == [(f"../repo/.git/hooks/{n}", "installed")
                                                                   for n in NAMES]

    head = commit(worktree, "docs/wt.md", "# Worktree\n")
    wait_indexed(worktree, head)
    assert not (root / ".ragit/cache").exists()


# ---------------------------------------------------------------- commit-then-read (knowledge §5.7)


def _query(root: Path, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "ragit", "query", "a new page", "--format", "json",
                           "--cwd", str(root), *args], capture_output=True, text=True, timeout=60)


def test_a_read_right_after_commit_knows_the_hook_ingest_is_coming(git_repo, capsys, tmp_path):
    """Between `git commit` returning and the hook's job taking the write lock (its Python is
    still starting, here held at a gate), a read of the new HEAD is told the ingest is running:
    retryable SNAPSHOT_INGEST_IN_PROGRESS with --no-wait, and with the wait, the answer."""
    from ragit.hooks.script import PENDING_RELPATH

    root = indexed_repo(git_repo)
    ragit(capsys, "ingest", "--all", "--cwd", str(root))
    ragit(capsys, "hooks", "install", "--cwd", str(root))
    gate = tmp_path / "gate"
    env = fake_ragit(tmp_path / "bin", f'while [ ! -f "{gate}" ]; do sleep 0.05; done\n'
                                       f'exec "{sys.executable}" -m ragit "$@"\n')
    head = commit(root, "docs/new.md", "# New\n\nA new page.\n", env=env)
    assert (root / PENDING_RELPATH).read_text().strip() == head

    r = _query(root, "--no-wait")
    assert r.returncode == 3, r.stderr
    err = json.loads(r.stdout)["error"]
    assert err["code"] == "SNAPSHOT_INGEST_IN_PROGRESS" and err["retryable"] is True
    assert err["details"]["resolvedSha"] == head

    waiting = subprocess.Popen([sys.executable, "-m", "ragit", "query", "a new page", "--format", "json",
                                "--cwd", str(root)], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    gate.touch()
    out, errs = waiting.communicate(timeout=60)
    assert waiting.returncode == 0, errs
    assert json.loads(out)["data"]["snapshotSha"] == head
    wait_indexed(root, head)
    wait_for(lambda: not (root / PENDING_RELPATH).exists(), "the job to withdraw its announcement")


def test_without_a_fresh_announcement_the_read_does_not_wait(git_repo, capsys, tmp_path):
    from ragit.hooks.script import PENDING_RELPATH

    root = indexed_repo(git_repo)
    ragit(capsys, "ingest", "--all", "--cwd", str(root))
    ragit(capsys, "hooks", "install", "--cwd", str(root))
    gate = tmp_path / "gate"
    env = fake_ragit(tmp_path / "bin", f'while [ ! -f "{gate}" ]; do sleep 0.05; done\n'
                                       f'exec "{sys.executable}" -m ragit "$@"\n')
    head = commit(root, "docs/new.md", "# New\n\nA new page.\n", env=env)
    marker = root / PENDING_RELPATH
    old = time.time() - 3600  # a job that died an hour ago announced it
    os.utime(marker, (old, old))
    r = _query(root)
    assert r.returncode == 3 and json.loads(r.stdout)["error"]["code"] == "SNAPSHOT_NOT_INDEXED", r.stdout
    marker.unlink()
    r = _query(root)
    assert json.loads(r.stdout)["error"]["code"] == "SNAPSHOT_NOT_INDEXED"
    gate.touch()
    wait_indexed(root, head)
