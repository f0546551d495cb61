"""One way to run git: argv lists (no shell), bytes out, failures carry stderr.

Every git process ragit starts goes through ``Git`` so the environment is the same for all of
them: repository-locating variables inherited from a hook (``GIT_DIR``, ``GIT_INDEX_FILE``, ...)
are dropped, because ragit always addresses the worktree it was pointed at, and optional locks
are disabled, so git skips the index refreshes it is allowed to skip while ragit only reads.
"""

from __future__ import annotations

import os
import subprocess
from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import IO

# Above this many paths, one command over the whole tree beats a long pathspec argument list
# (tree listing and status of an incremental ingest).
MAX_PATHSPEC = 1000

# Variables that make git address another repository, index or object store than the one the
# working directory belongs to (the list of ``git rev-parse --local-env-vars`` that locate things).
_LOCAL_REPO_VARS = (
    "GIT_DIR",
    "GIT_WORK_TREE",
    "GIT_INDEX_FILE",
    "GIT_COMMON_DIR",
    "GIT_OBJECT_DIRECTORY",
    "GIT_ALTERNATE_OBJECT_DIRECTORIES",
    "GIT_IMPLICIT_WORK_TREE",
    "GIT_PREFIX",
    "GIT_SHALLOW_FILE",
    "GIT_GRAFT_FILE",
)


def git_env() -> dict[str, str]:
    """The environment of every git child process."""
    env = {k: v for k, v in os.environ.items() if k not in _LOCAL_REPO_VARS}
    env["GIT_OPTIONAL_LOCKS"] = "0"
    env["GIT_TERMINAL_PROMPT"] = "0"
    return env


def anonymous_file() -> IO[bytes]:
    """A file without a name for a child's stderr: a memfd on Linux (no ``tempfile`` import,
    which costs a one-file ingest ~5 ms), else a temporary file."""
    if hasattr(os, "memfd_create"):
        return os.fdopen(os.memfd_create("ragit-git-stderr", os.MFD_CLOEXEC), "w+b")
    import tempfile

    return tempfile.TemporaryFile()


class GitError(Exception):
    """A git process failed; internal (callers map it to a typed ``RagitError`` when it matters)."""

    def __init__(self, args: Sequence[str], returncode: int, stderr: bytes) -> None:
        self.args_list = list(args)
        self.returncode = returncode
        self.stderr = stderr.decode("utf-8", "replace").strip()
        super().__init__(f"git {' '.join(self.args_list)} exited {returncode}: {self.stderr}")


@dataclass(frozen=True)
class GitResult:
    """Exit status and raw output of one git process."""

    args: tuple[str, ...]
    returncode: int
    stdout: bytes
    stderr: bytes

    def checked(self) -> bytes:
        """stdout, or ``GitError`` when the process failed."""
        if self.returncode != 0:
            raise GitError(self.args, self.returncode, self.stderr)
        return self.stdout


class Git:
    """Runs git inside one worktree root (``git rev-parse --show-toplevel``)."""

    def __init__(self, root: Path) -> None:
        self.root = Path(root)

    def call(
        self, *args: str, input: bytes | None = None, allowed: Collection[int] | None = None,
        extra_env: Mapping[str, str] | None = None,
    ) -> GitResult:
        """Run ``git <args>``; an exit status outside ``allowed`` (when given) raises ``GitError``.

        For commands whose exit status is an answer (``merge-base --is-ancestor``,
        ``rev-parse --verify``) rather than a failure. ``extra_env`` adds variables for this
        process only (e.g. ``RAGIT_SKIP_HOOKS`` for a commit ragit makes itself).
        """
        # Without input git gets an empty stdin: it must never read the caller's (MCP stdio).
        proc = subprocess.run(
            ["git", *args],
            cwd=self.root,
            input=b"" if input is None else input,
            capture_output=True,
            env=git_env() if extra_env is None else {**git_env(), **extra_env},
            check=False,
        )
        if allowed is not None and proc.returncode not in allowed:
            raise GitError(args, proc.returncode, proc.stderr)
        return GitResult(args, proc.returncode, proc.stdout, proc.stderr)

    def run(self, *args: str, input: bytes | None = None, check: bool = True) -> bytes:
        """Run ``git <args>`` and return stdout; with ``check`` a failure raises ``GitError``."""
        return self.call(*args, input=input, allowed=(0,) if check else None).stdout

    def call_parallel(self, *commands: Sequence[str]) -> list[GitResult]:
        """Run independent git commands concurrently; wall time is that of the slowest one."""
        return [pending.result() for pending in [self.start(*cmd) for cmd in commands]]

    def start(self, *args: str) -> "PendingCall":
        """Start ``git <args>`` in the background; ``result()`` collects it."""
        proc = subprocess.Popen(
            ["git", *args],
            cwd=self.root,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            env=git_env(),
        )
        return PendingCall(tuple(args), proc)

    def git_path(self, name: str) -> Path:
        """Absolute ``git rev-parse --git-path <name>``.

        Per-worktree files (``HEAD``, ``index``) resolve into the worktree's own git dir and
        ``hooks`` honours ``core.hooksPath``.
        """
        out = self.run("rev-parse", "--git-path", name).decode("utf-8", "surrogateescape")
        path = Path(out.rstrip("\n"))
        return path if path.is_absolute() else self.root / path


class PendingCall:
    """A git process started ahead of time, so it runs while the caller does other work."""

    def __init__(self, args: tuple[str, ...], proc: subprocess.Popen):
        self.args = args
        self._proc = proc
        self._result: GitResult | None = None

    def result(self) -> GitResult:
        if self._result is None:
            out, err = self._proc.communicate()
            self._result = GitResult(self.args, self._proc.returncode, out, err)
        return self._result

    def cancel(self) -> None:
        """Stop and reap the process when its answer is no longer wanted."""
        if self._result is None:
            self._proc.kill()
            self._proc.communicate()


def decode_path(raw: bytes) -> str:
    """Git path bytes to ``str``; undecodable bytes survive a round trip through argv."""
    return raw.decode("utf-8", "surrogateescape")


def find_root(cwd: Path) -> Path | None:
    """Absolute worktree root containing ``cwd``; None outside a worktree or inside ``.git``."""
    cwd = Path(cwd)
    if not cwd.is_dir():
        return None
    plain = _plain_worktree_root(cwd)
    if plain is not None:
        return plain
    proc = subprocess.run(
        ["git", "rev-parse", "--show-toplevel"],
        cwd=cwd,
        stdin=subprocess.DEVNULL,
        capture_output=True,
        env=git_env(),
        check=False,
    )
    out = decode_path(proc.stdout).rstrip("\n")
    if proc.returncode != 0 or not out:
        return None
    return Path(out)


def is_sha256_repo(git: Git) -> bool:
    """True for SHA-256 object-format repositories, which the first release does not support."""
    fmt = git.run("rev-parse", "--show-object-format").decode().strip()
    return fmt == "sha256"


_FALSE = ("false", "no", "off", "0")


def _plain_worktree_root(cwd: Path) -> Path | None:
    """``cwd`` (its real path, as git prints it) when it is the top of an ordinary repository
    whose ``.git`` directory git itself would take without a second look, else None (then
    ``git rev-parse --show-toplevel`` decides). A cold read is usually started at the root; this
    spares it a git process. Ordinary means: ``.git`` is a directory with ``objects/``, ``refs/``
    and a valid ``HEAD`` (git's own test), this user owns it and ``cwd`` (so ``safe.directory``
    cannot object), and its config sets neither ``core.worktree`` nor a true ``core.bare``, and
    has no ``include`` or ``extensions`` section (those could move the worktree or make git refuse
    the repository)."""
    dot = cwd / ".git"
    try:
        uid = os.geteuid()
        if uid == 0 and "SUDO_UID" in os.environ:  # git then checks ownership against the sudo user
            return None
        if not dot.is_dir() or os.stat(dot).st_uid != uid or os.stat(cwd).st_uid != uid:
            return None
        if not ((dot / "objects").is_dir() and (dot / "refs").is_dir()):
            return None
        head = (dot / "HEAD").read_bytes().strip()
        if not (head.startswith(b"ref: refs/") or (len(head) in (40, 64) and not head.strip(b"0123456789abcdef"))):
            return None
        config = (dot / "config").read_bytes().decode("utf-8", "replace").lower()
    except (OSError, ValueError):
        return None
    for line in config.splitlines():
        line = line.strip()
        if line.startswith(("[include", "[extensions")):
            return None
        name, eq, value = line.partition("=")
        name = name.strip()
        if name == "worktree" or (name == "bare" and (not eq or value.strip() not in _FALSE)):
            return None
    return Path(os.path.realpath(cwd))
