"""HEAD, branch and ``--at`` resolution (knowledge §5.1, §5.2), and ingest revisions (§7.1).

Reads accept only commit forms: ``HEAD``, a full SHA or a unique hex prefix. Resolution asks git
for every object sharing the prefix and keeps the commits, so a blob or tree that happens to share
it can never make a commit prefix ambiguous, nor be mistaken for one. ``ingest --since/--at``
accept any revision git resolves to a commit (``HEAD~1``, a branch, a tag), resolved once.
"""

from __future__ import annotations

import os
import re
from pathlib import Path

from ragit.errors import RagitError
from ragit.gitsnap.git import Git

_HEX_REF = re.compile(r"[0-9a-fA-F]{4,40}")
FULL_SHA = re.compile(r"[0-9a-f]{40}")
_BRANCH_PREFIX = "refs/heads/"


def is_commit_form(ref: str) -> bool:
    """Syntax check of §5.1 (``HEAD`` or 4–40 hex digits, any case); no git I/O."""
    return ref == "HEAD" or _HEX_REF.fullmatch(ref) is not None


def head_sha(git: Git) -> str | None:
    """The HEAD commit, or None when HEAD is unborn."""
    result = git.call("rev-parse", "-q", "--verify", "HEAD^{commit}", allowed=(0, 1))
    if result.returncode == 1:
        return None
    return result.stdout.decode().strip()


def head_from_files(git_dir: Path, common_dir: Path) -> str | None:
    """HEAD's commit read straight from the ref files, or None when that is not certain.

    Re-reading HEAD after a manifest load (knowledge §5.2 step 3) happens on every read; doing
    it without a git process keeps warm queries fast. Only the plain cases are handled (a
    detached SHA, or a symbolic ref to a loose or packed ref); anything else (unborn HEAD,
    reftable, nested symbolic refs) returns None and the caller asks git.
    """
    try:
        content = read_ref_file(os.path.join(git_dir, "HEAD")).strip()
    except OSError:
        return None
    return head_sha_from(content, common_dir)


def read_ref_file(path: str) -> str:
    """A small git file's text (``HEAD``, a loose ref) read with ``os.open``/``os.read``: a warm
    query reads four of them, and a buffered file object costs more system calls and objects
    than the read itself (raises the same ``OSError`` subclasses as ``open``)."""
    fd = os.open(path, os.O_RDONLY | getattr(os, "O_CLOEXEC", 0))
    try:
        data = os.read(fd, _REF_READ)
        if len(data) == _REF_READ:  # a regular file reads short only at its end: this one is longer
            parts = [data]
            while data:
                data = os.read(fd, _REF_READ)
                parts.append(data)
            data = b"".join(parts)
    finally:
        os.close(fd)
    return data.decode("utf-8")


_REF_READ = 4096


def head_sha_from(content: str, common_dir: Path) -> str | None:
    """The commit of an already-read (stripped) HEAD file, or None when not certain."""
    if FULL_SHA.fullmatch(content):
        return content
    if not content.startswith("ref: "):
        return None
    name = content[5:].strip()
    try:
        value = read_ref_file(os.path.join(common_dir, name)).strip()
        return value if FULL_SHA.fullmatch(value) else None
    except (FileNotFoundError, NotADirectoryError, IsADirectoryError):
        pass
    except OSError:
        return None
    try:
        packed = (common_dir / "packed-refs").read_text(encoding="utf-8")
    except OSError:
        return None
    for line in packed.splitlines():
        sha, _, ref = line.partition(" ")
        if ref == name and FULL_SHA.fullmatch(sha):
            return sha
    return None


def branch_from_symref(full_ref: str) -> str:
    """``refs/heads/feature/x`` -> ``feature/x``: the branch's own name, never abbreviated."""
    return full_ref[len(_BRANCH_PREFIX):] if full_ref.startswith(_BRANCH_PREFIX) else full_ref


def current_branch(git: Git) -> str | None:
    """The branch HEAD points at (also when unborn), or None when HEAD is detached."""
    result = git.call("symbolic-ref", "-q", "HEAD", allowed=(0, 1))
    if result.returncode == 1:
        return None
    return branch_from_symref(result.stdout.decode("utf-8", "surrogateescape").rstrip("\n"))


def commits_with_prefix(git: Git, prefix: str) -> list[str]:
    """Sorted full SHAs of the commits whose id starts with the hex ``prefix`` (4–40 digits)."""
    if _HEX_REF.fullmatch(prefix) is None:
        raise ValueError(f"not a hex prefix of 4-40 digits: {prefix!r}")
    prefix = prefix.lower()
    if len(prefix) == 40:  # a full id needs no listing: its type alone decides
        candidates = [prefix.encode()]
    else:
        candidates = git.run("rev-parse", f"--disambiguate={prefix}").split()
        if not candidates:
            return []
    listing = git.run(
        "cat-file",
        "--batch-check=%(objectname) %(objecttype)",
        input=b"\n".join(candidates) + b"\n",
    )
    commits: set[str] = set()
    for line in listing.decode().splitlines():
        oid, _, kind = line.partition(" ")
        if kind == "commit":
            commits.add(oid)
    return sorted(commits)


def _ref_invalid(ref: str, message: str) -> RagitError:
    return RagitError("SNAPSHOT_REF_INVALID", message, {"ref": ref}, "git rev-parse --verify HEAD")


def resolve_at(git: Git, ref: str) -> str:
    """Resolve an ``--at`` value to a lower-case full commit SHA, exactly as §5.1 says."""
    if not is_commit_form(ref):
        raise _ref_invalid(
            ref, f"{ref!r} is not HEAD, a full commit SHA or a hex prefix of at least 4 digits"
        )
    if ref == "HEAD":
        sha = head_sha(git)
        if sha is None:
            raise _ref_invalid(ref, "HEAD is unborn: the repository has no commit yet")
        return sha
    matches = commits_with_prefix(git, ref)
    if not matches:
        raise _ref_invalid(ref, f"no commit matches {ref!r}")
    if len(matches) > 1:
        raise RagitError(
            "SNAPSHOT_REF_AMBIGUOUS",
            f"{ref!r} matches {len(matches)} commits; use a longer prefix",
            {"ref": ref, "matches": matches},
            f"git rev-parse --disambiguate={ref.lower()}",
        )
    return matches[0]


def revision_commit(git: Git, rev: str) -> str | None:
    """The commit ``rev`` names (``git rev-parse --verify <rev>^{commit}``), or None.

    A revision starting with ``-`` would be read as an option, so it names nothing.
    """
    if not rev or rev.startswith("-"):
        return None
    result = git.call("rev-parse", "-q", "--verify", f"{rev}^{{commit}}")
    if result.returncode != 0:
        return None
    sha = result.stdout.decode("utf-8", "replace").strip().lower()
    return sha if FULL_SHA.fullmatch(sha) else None


def resolve_revision(git: Git, rev: str) -> str:
    """Resolve an ingest ``--since``/``--at`` revision once to a full commit SHA (knowledge §7.1).

    Commit forms keep the §5.1 rules (a blob sharing a prefix is ignored, an ambiguous prefix is
    SNAPSHOT_REF_AMBIGUOUS); anything else is up to git; no commit → SNAPSHOT_REF_INVALID.
    """
    if is_commit_form(rev):
        try:
            return resolve_at(git, rev)
        except RagitError as exc:
            if exc.code != "SNAPSHOT_REF_INVALID" or rev == "HEAD":
                raise
            # a branch or tag may be spelled in hex digits (`cafe`): git decides
    sha = revision_commit(git, rev)
    if sha is None:
        raise _ref_invalid(rev, f"{rev!r} does not name a commit")
    return sha
