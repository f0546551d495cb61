"""Human defaults (issue 13, item 6) through real processes, pseudo-terminals and git repositories.

- cli-contract §1.1/§3.1: without ``--format``, ``text`` when stdout is a terminal, the table's
  default when piped; §5.1: an error prints once (one text block on a terminal, never also the
  envelope or a framework usage message).
- knowledge §2.1: ``.ragit/.gitignore`` keeps the rebuildable parts out of ``git add -A``, with or
  without ``init``; §7.3: untracked files never block or warn; §15: status text shows the counts.
- cli-contract §1: every ``--help`` ends with examples; a typo gets a "did you mean".
"""

from __future__ import annotations

import errno
import json
import os
import subprocess
import sys
from pathlib import Path

import click
import pytest
from conftest import PLACEHOLDER_CONFIG, SAMPLE_FILES

DOC = "# Auth\n\nWe rotate refresh tokens on every use so a stolen token is useless.\n"


def _env() -> dict[str, str]:
    env = dict(os.environ)
    env.pop("RAGIT_DEBUG", None)
    return env


def on_terminal(args: list[str], cwd: Path, timeout: float = 60) -> tuple[int, str, str]:
    """Run ``python -m ragit`` with stdout on a real pseudo-terminal and stderr on a pipe: the
    process sees ``isatty()`` true exactly as under a person's shell. Returns (exit, tty, stderr)."""
    master, slave = os.openpty()
    try:
        proc = subprocess.Popen([sys.executable, "-m", "ragit", *args], cwd=cwd, stdin=subprocess.DEVNULL,
                                stdout=slave, stderr=subprocess.PIPE, env=_env())
    finally:
        os.close(slave)
    chunks: list[bytes] = []
    try:
        while True:
            try:
                data = os.read(master, 65536)
            except OSError as exc:  # EIO: the child closed the terminal
                if exc.errno != errno.EIO:
                    raise
                break
            if not data:
                break
            chunks.append(data)
    finally:
        os.close(master)
    err = proc.stderr.read().decode("utf-8") if proc.stderr else ""
    code = proc.wait(timeout=timeout)
    return code, b"".join(chunks).decode("utf-8").replace("\r\n", "\n"), err


def piped(args: list[str], cwd: Path, timeout: float = 60) -> subprocess.CompletedProcess:
    """The same command with stdout on a pipe (an agent or a script)."""
    return subprocess.run([sys.executable, "-m", "ragit", *args], cwd=cwd, capture_output=True, text=True,
                          stdin=subprocess.DEVNULL, timeout=timeout, env=_env())


@pytest.fixture
def indexed(git_repo):
    """A committed corpus with its own config, indexed by a real ``ragit ingest`` process."""
    git_repo.commit("corpus", {**SAMPLE_FILES, ".ragit/config.toml": PLACEHOLDER_CONFIG})
    proc = piped(["ingest", "--all"], git_repo.root)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    return git_repo


# ------------------------------------------------------------------ 1. default format


@pytest.mark.parametrize("command", [["query", "restore auth context"], ["context", "pack", "auth context"]])
def test_terminal_default_is_text_only_and_piped_default_is_both(indexed, command):
    code, tty, err = on_terminal(command, indexed.root)
    assert code == 0, tty + err
    assert tty.startswith(f"# ragit {' '.join(command[:-1])}\n")
    assert '"command"' not in tty and "{" not in tty.splitlines()[-1]  # no envelope after the text
    assert err == ""
    proc = piped(command, indexed.root)
    assert proc.returncode == 0
    text, _, envelope = proc.stdout.partition("\n\n{")
    assert text.startswith("# ragit") and json.loads("{" + envelope)["ok"] is True  # `both` (§1.1 [seed])


def test_terminal_default_applies_to_json_default_commands(git_repo):
    git_repo.commit("c", {"docs/a.md": DOC})
    code, tty, _ = on_terminal(["status"], git_repo.root)
    assert code == 0 and tty.startswith("# ragit status\n")
    assert json.loads(piped(["status"], git_repo.root).stdout)["command"] == "status"
    code, tty, _ = on_terminal(["describe", "query"], git_repo.root)
    assert code == 0 and tty.startswith("# ragit describe\n- command: query\n")


def test_explicit_format_wins_on_a_terminal(git_repo):
    git_repo.commit("c", {"docs/a.md": DOC})
    code, tty, _ = on_terminal(["status", "--format", "json"], git_repo.root)
    assert code == 0 and json.loads(tty)["command"] == "status"


# ------------------------------------------------------------------ 2. one error print


def test_an_error_prints_once_on_a_terminal(git_repo):
    git_repo.commit("c", {"docs/a.md": DOC})  # HEAD is not indexed
    code, tty, err = on_terminal(["query", "auth"], git_repo.root)
    assert code == 3
    assert tty == ""  # no envelope on stdout
    assert err.count("SNAPSHOT_NOT_INDEXED") == 1 and err.startswith("[ragit] error (not_ready)\n")
    # a click usage error too: the typed block once, never click's own "Usage:" message
    code, tty, err = on_terminal(["query", "auth", "--top-k"], git_repo.root)
    assert code == 2 and tty == ""
    assert err.count("- code: INPUT_INVALID") == 1 and "Usage:" not in err and "Error:" not in err
    # an unrecognised --format: text on a terminal, `both` when piped (cli-contract §5.1)
    code, tty, err = on_terminal(["query", "x", "--format", "yaml"], git_repo.root)
    assert code == 2 and tty == "" and err.count("- code: INPUT_INVALID") == 1
    proc = piped(["query", "x", "--format", "yaml"], git_repo.root)
    assert proc.returncode == 2 and json.loads(proc.stdout)["error"]["details"]["field"] == "--format"
    assert proc.stderr.count("- code: INPUT_INVALID") == 1


@pytest.mark.parametrize("fmt, on_stdout, on_stderr", [("json", 1, 0), ("text", 0, 1), ("both", 1, 1)])
def test_an_error_prints_once_per_stream_in_every_format(git_repo, fmt, on_stdout, on_stderr):
    git_repo.commit("c", {"docs/a.md": DOC})
    proc = piped(["query", "auth", "--format", fmt], git_repo.root)
    assert proc.returncode == 3
    assert proc.stdout.count("SNAPSHOT_NOT_INDEXED") == on_stdout
    assert proc.stderr.count("SNAPSHOT_NOT_INDEXED") == on_stderr


# ------------------------------------------------------------------ 3. .ragit/.gitignore


RAGIT_IGNORES = ["store/", "cache/", "sessions/", "manifest/"]


def _ignore_lines(root: Path) -> list[str]:
    text = (root / ".ragit" / ".gitignore").read_text(encoding="utf-8")
    return [line for line in text.splitlines() if line and not line.startswith("#")]


def test_ingest_without_init_keeps_the_store_out_of_git_add(git_repo):
    git_repo.commit("c", {"docs/a.md": DOC, "src/app.py": "def rotate():\n    return 1\n"})
    proc = piped(["ingest", "--all"], git_repo.root, timeout=180)  # the default embedder, no config
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert (git_repo.root / ".ragit" / "store" / "ragit.db").is_file()
    git_repo.git("add", "-A")
    staged = git_repo.git("status", "--porcelain").splitlines()
    assert staged == ["A  .ragit/.gitignore"], staged
    assert _ignore_lines(git_repo.root) == RAGIT_IGNORES
    # committing ragit's own .gitignore never forces the next incremental ingest to evaluate everything
    base = git_repo.head()
    git_repo.commit("with .ragit/.gitignore", {"docs/b.md": "# B\n\nAnother document.\n"})
    proc = piped(["ingest", "--since", base], git_repo.root, timeout=180)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    data = json.loads(proc.stdout)["data"]
    assert data["fullSnapshot"] is False and data["plannedFiles"] == ["docs/b.md"]


def test_existing_ragit_gitignore_is_kept_and_init_completes_it_once(git_repo):
    git_repo.commit("c", {"docs/a.md": DOC})
    (git_repo.root / ".ragit").mkdir()
    (git_repo.root / ".ragit" / ".gitignore").write_text("memory/\n/store\n!manifest/\n", encoding="utf-8")
    for _ in range(2):
        proc = piped(["init", "--yes"], git_repo.root)
        assert proc.returncode == 0, proc.stdout + proc.stderr
    # user lines kept, `!manifest/` (the team shares manifests) respected, nothing listed twice
    assert _ignore_lines(git_repo.root) == ["memory/", "/store", "!manifest/", "cache/", "sessions/"]


def test_read_commands_still_create_nothing(git_repo):
    git_repo.commit("c", {"docs/a.md": DOC})
    assert piped(["status"], git_repo.root).returncode == 0
    assert piped(["query", "auth"], git_repo.root).returncode == 3
    assert not (git_repo.root / ".ragit").exists()


# ------------------------------------------------------------------ 4. untracked files


def test_untracked_files_never_block_or_warn(git_repo):
    git_repo.commit("c", {"docs/a.md": DOC, ".ragit/config.toml": PLACEHOLDER_CONFIG})
    git_repo.write("NOTES.md", "# Notes\n\nscratch\n")
    git_repo.write("docs/draft.md", "# Draft\n")
    git_repo.write("scratch.py", "x = 1\n")
    proc = piped(["ingest", "--all"], git_repo.root)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    data = json.loads(proc.stdout)["data"]
    assert data["dirtyCandidates"] == [] and data["warnings"] == [] and data["plannedFiles"] == ["docs/a.md"]
    # a modified tracked document still blocks (knowledge §7.3 [ref])
    git_repo.write("docs/a.md", DOC + "\nmore\n")
    proc = piped(["ingest", "--all"], git_repo.root)
    assert proc.returncode == 3 and json.loads(proc.stdout)["error"]["details"] == {"dirtyCandidates": ["docs/a.md"]}


# ------------------------------------------------------------------ 6. status counts


def test_status_text_shows_the_counts(indexed, cli):
    out = cli("status", "--cwd", str(indexed.root), "--format", "text").out
    stats = cli("status", "--cwd", str(indexed.root), "--format", "json").json["data"]["store"]["stats"]
    for key in ("documents", "chunks", "vectors", "snapshots"):
        assert f"\n- {key}: {stats[key]}\n" in out
    assert "\n- language markdown: " in out and "\n- language python: " in out
    lines = out.splitlines()
    assert lines.index("- store: loaded") + 1 == lines.index(f"- documents: {stats['documents']}")


def test_status_text_without_a_store(git_repo, cli):
    git_repo.commit("c", {"docs/a.md": DOC})
    out = cli("status", "--cwd", str(git_repo.root), "--format", "text").out
    assert "\n- store: missing\n- documents: none\n- chunks: none\n- vectors: none\n- snapshots: none\n" in out


# ------------------------------------------------------------------ 7. examples in every --help


def _help_paths() -> list[str]:
    from ragit.cli.main import _register, cli as root

    _register()
    out: list[str] = [""]

    def walk(group: click.Group, prefix: str) -> None:
        for name, cmd in sorted(group.commands.items()):
            path = f"{prefix} {name}".strip()
            out.append(path)
            if isinstance(cmd, click.Group):
                walk(cmd, path)

    walk(root, "")
    return out


@pytest.mark.parametrize("path", _help_paths())
def test_every_help_ends_with_examples(cli, path):
    from ragit.contract.describe import REGISTRY

    r = cli(*path.split(), "--help")
    assert r.code == 0, r
    head, sep, tail = r.out.rpartition("\nExamples:\n")
    assert sep, f"ragit {path} --help has no examples"
    examples = [line.strip() for line in tail.splitlines() if line.strip()]
    assert examples and all(e.startswith("ragit ") for e in examples), examples
    if path in REGISTRY:  # a leaf: exactly the describe registry's examples, unwrapped
        assert examples[: len(REGISTRY[path]["examples"])] == REGISTRY[path]["examples"]


# ------------------------------------------------------------------ 8. did you mean


@pytest.mark.parametrize("argv, suggestion", [
    (["qurey", "auth"], '"query"'),
    (["context", "pakc", "auth"], '"pack"'),
    (["memroy", "recall", "x"], '"memory"'),
])
def test_a_mistyped_command_gets_did_you_mean(cli, git_repo, argv, suggestion):
    r = cli(*argv, "--cwd", str(git_repo.root), "--format", "json")
    assert r.code == 2, r
    error = r.json["error"]
    assert error["code"] == "COMMAND_UNKNOWN" and error["recovery"] == {"command": "ragit --help"}
    assert f"did you mean {suggestion}" in error["message"]


def test_a_mistyped_option_gets_did_you_mean(cli, git_repo):
    r = cli("query", "auth", "--top-kk", "3", "--cwd", str(git_repo.root), "--format", "json")
    assert r.code == 2
    error = r.json["error"]
    assert error["code"] == "INPUT_INVALID" and error["details"] == {"field": "--top-kk", "reason": "usage"}
    assert 'did you mean "--top-k"?' in error["message"]
    r = cli("context", "pack", "x", "--budget-unti", "tokens", "--format", "text")
    assert r.code == 2 and 'did you mean "--budget-unit"' in r.err


def test_a_mistyped_describe_path_gets_did_you_mean(cli):
    r = cli("describe", "contxt", "pack", "--format", "json")
    assert r.code == 2 and 'did you mean "context pack"' in r.json["error"]["message"]


def test_nothing_close_gets_no_hint(cli):
    r = cli("zzzzzz", "--format", "json")
    assert r.code == 2 and "did you mean" not in r.json["error"]["message"]


def test_a_group_without_its_command_names_the_choices(cli):
    r = cli("context")  # piped: json, the default of an [ours] path
    assert r.code == 2
    error = r.json["error"]
    assert error["code"] == "INPUT_INVALID" and error["details"] == {"field": "command", "reason": "required"}
    assert error["message"] == "ragit context needs a command: assemble, pack, packet"
    assert error["recovery"] == {"command": "ragit context --help"}
