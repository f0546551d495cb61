"""Harness of the fuzz suite: real repositories, an in-process runner, disk snapshots, the
contract's invariants, and the counts written to ``tests/fuzz/last_run.json``.

Definitions the assertions rest on (cli-contract §2, §3.3–3.5, §5–6):

- **rejected**: the command exited 2 (category ``invalid_input``: "invalid or ambiguous input
  or ref"), or the contract says the input must be rejected. Input validation happens before any
  work and never writes, so a rejected case must leave the disk unchanged.
- **unchanged**: every path under the repository root except ``.git/`` (the ``.ragit/`` tree,
  the working tree, and the outside-input directory next to it) and under ``$HOME``: the same
  set of files and directories, each file with the same size, mtime and BLAKE2 hash, each
  directory with the same mtime (a file created and removed again changes it).
- Read commands (``query``, ``context pack|packet|assemble``, ``window check``, ``window compact``
  without ``--session``) and every ``--dry-run`` write nothing whatever the exit code.
"""

from __future__ import annotations

import contextlib
import fcntl
import hashlib
import io
import json
import os
import re
import subprocess
import sys
import time
import traceback
from collections import Counter, defaultdict
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from hypothesis import HealthCheck, settings
from hypothesis import seed as hypothesis_seed

EXIT_OF_CATEGORY = {"invalid_input": 2, "not_ready": 3, "transient": 3, "io": 3, "corrupt_or_incompatible": 4,
                    "internal": 1}
ENVELOPE_KEYS = ["command", "ok", "version", "cwd", "data", "warnings"]
ERROR_KEYS = ["code", "category", "message", "retryable", "details", "recovery"]
TRACEBACK = "Traceback (most recent call last)"
LAST_RUN = Path(os.environ.get("RAGIT_FUZZ_RECORD") or Path(__file__).resolve().parent / "last_run.json")

# Knobs: RAGIT_FUZZ_SCALE multiplies every example count; RAGIT_FUZZ_SEED explores another fixed
# seed instead of the derandomized default; RAGIT_FUZZ_CENSUS=1 runs every case and only counts
# violations (the report behind last_run.json) instead of failing at the first one.
SCALE = float(os.environ.get("RAGIT_FUZZ_SCALE", "1"))
SEED = os.environ.get("RAGIT_FUZZ_SEED")
CENSUS = os.environ.get("RAGIT_FUZZ_CENSUS") == "1"


def fuzz_settings(examples: int):
    """Deterministic by default (``derandomize``: the same cases every CI run, so no flakes),
    no example database, no deadline (a case's time depends on the machine)."""
    return settings(max_examples=max(1, round(examples * SCALE)), deadline=None, derandomize=SEED is None,
                    database=None, suppress_health_check=list(HealthCheck), print_blob=False)


def seeded(test):
    return hypothesis_seed(int(SEED))(test) if SEED else test


@contextlib.contextmanager
def generates(surface: str, examples: int):
    """Check that a fuzz test really ran its share of the run's cases (hypothesis stops early
    when a strategy cannot produce more distinct inputs)."""
    before = STATS.cases[surface]
    yield
    ran = STATS.cases[surface] - before
    assert ran >= 0.9 * max(1, round(examples * SCALE)), f"only {ran} of {examples} {surface} cases ran"


# ------------------------------------------------------------------ counts


class Stats:
    """Cases and violations per surface (cli, mcp, stdio, process), in this worker."""

    def __init__(self) -> None:
        self.started = time.monotonic()
        self.cases: Counter[str] = Counter()
        self.by_command: dict[str, Counter[str]] = defaultdict(Counter)
        self.by_class: dict[str, Counter[str]] = defaultdict(Counter)
        self.exits: dict[str, Counter[str]] = defaultdict(Counter)
        self.violations: dict[str, Counter[str]] = defaultdict(Counter)
        self.examples: dict[str, list[str]] = defaultdict(list)
        self.command_exits: dict[str, Counter[str]] = defaultdict(Counter)  # "exit 0" / "result" per command
        self.transient: Counter[str] = Counter()  # read-only cases whose only trace was a directory mtime

    def record(self, surface: str, command: str, klass: str, outcome: str, violations: list[tuple[str, str]],
               reproducer: str) -> None:
        self.cases[surface] += 1
        self.by_command[surface][command] += 1
        self.by_class[surface][klass] += 1
        self.exits[surface][outcome] += 1
        self.command_exits[f"{surface} {command}"][outcome.split(" ")[0] + " " + outcome.split(" ")[1]
                                                    if outcome.startswith("exit ") else outcome.split(" ")[0]] += 1
        for kind, detail in violations:
            self.violations[surface][kind] += 1
            key = f"{surface}:{kind}:{command}"
            if len(self.examples[key]) < 3:
                self.examples[key].append(f"{detail} <- {reproducer}"[:1500])

    def to_dict(self) -> dict[str, Any]:
        return {
            "cases": dict(self.cases), "seconds": round(time.monotonic() - self.started, 1),
            "byCommand": {k: dict(v) for k, v in self.by_command.items()},
            "byClass": {k: dict(v) for k, v in self.by_class.items()},
            "outcomes": {k: dict(v) for k, v in self.exits.items()},
            "byCommandOutcome": {k: dict(v) for k, v in sorted(self.command_exits.items())},
            "violations": {k: dict(v) for k, v in self.violations.items()},
            "examples": dict(self.examples),
            "transientOnly": dict(self.transient),
        }


STATS = Stats()


def flush_stats() -> None:
    """Merge this worker's counts into last_run.json (one section per xdist worker of this run)."""
    run = os.environ.get("PYTEST_XDIST_TESTRUNUID", f"pid{os.getppid()}-{os.getpid()}")
    worker = os.environ.get("PYTEST_XDIST_WORKER", "main")
    LAST_RUN.touch()
    with LAST_RUN.open("r+", encoding="utf-8") as fh:
        fcntl.flock(fh, fcntl.LOCK_EX)
        try:
            current = json.loads(fh.read() or "{}")
        except ValueError:
            current = {}
        if current.get("run") != run:
            current = {"run": run, "workers": {}}
        current["settings"] = {"scale": SCALE, "seed": SEED, "derandomize": SEED is None, "census": CENSUS}
        current["workers"][worker] = STATS.to_dict()
        totals: dict[str, Any] = {"cases": 0, "bySurface": Counter(), "violations": Counter(), "workerSeconds": {}}
        for name, section in current["workers"].items():
            totals["cases"] += sum(section["cases"].values())
            totals["bySurface"].update(section["cases"])
            for per_surface in section["violations"].values():
                totals["violations"].update(per_surface)
            totals["workerSeconds"][name] = section["seconds"]
        current["totals"] = {**totals, "bySurface": dict(totals["bySurface"]), "violations": dict(totals["violations"])}
        fh.seek(0)
        fh.truncate()
        fh.write(json.dumps(current, indent=2, ensure_ascii=False) + "\n")


DUMP = os.environ.get("RAGIT_FUZZ_DUMP")  # a directory: every violating case's full input lands there


def conclude(surface: str, command: str, klass: str, outcome: str, violations: list[tuple[str, str]],
             reproducer: str, payload: bytes | None = None) -> None:
    """Count the case; outside census mode, fail it with its reproducer."""
    STATS.record(surface, command, klass, outcome, violations, reproducer)
    if violations and DUMP:
        target = Path(DUMP)
        target.mkdir(parents=True, exist_ok=True)
        stem = f"{surface}-{command.replace(' ', '_')}-{violations[0][0]}-{STATS.cases[surface]}"
        (target / f"{stem}.txt").write_text(f"{violations}\n{reproducer}\n", encoding="utf-8", errors="backslashreplace")
        if payload is not None:
            (target / f"{stem}.bin").write_bytes(payload)
    if violations and not CENSUS:
        lines = "\n".join(f"- {kind}: {detail}" for kind, detail in violations)
        raise AssertionError(f"{len(violations)} contract violation(s):\n{lines}\nreproducer: {reproducer}\n"
                             "(RAGIT_FUZZ_DUMP=<dir> saves the whole input of every violating case)")


# ------------------------------------------------------------------ disk snapshots


INPUT_DIR = ".fuzz-input"  # where a case's --input file is written (git-excluded, not snapshotted)


def snapshot(roots: list[Path]) -> dict[str, tuple[Any, ...]]:
    """Every file and directory under ``roots`` (``.git`` and the input directory at a root
    skipped): kind, size, mtime, hash."""
    out: dict[str, tuple[Any, ...]] = {}
    for root in roots:
        if not root.exists():
            continue
        for dirpath, dirnames, filenames in os.walk(root):
            if Path(dirpath) == root:
                dirnames[:] = [d for d in dirnames if d not in (".git", INPUT_DIR)]
            st = os.stat(dirpath)
            out[dirpath] = ("dir", st.st_mtime_ns)
            for name in filenames:
                path = os.path.join(dirpath, name)
                try:
                    st = os.lstat(path)
                    with open(path, "rb") as fh:
                        digest = hashlib.blake2b(fh.read(), digest_size=16).hexdigest()
                except OSError as exc:
                    out[path] = ("unreadable", str(exc))
                    continue
                out[path] = ("file", st.st_size, st.st_mtime_ns, digest)
    return out


def _sqlite_side_file(path: str, before: dict[str, tuple[Any, ...]], after: dict[str, tuple[Any, ...]]) -> bool:
    """An empty ``-wal``/``-shm`` file of a database that is itself unchanged: SQLite's WAL mode
    keeps them while any connection (a server's warm reader) has the database open."""
    for suffix in ("-wal", "-shm"):
        if path.endswith(suffix):
            db = path[: -len(suffix)]
            entry = after.get(path) or before.get(path)
            return db in before and before.get(db) == after.get(db) and (suffix == "-shm" or entry[1] == 0)
    return False


def changes(before: dict[str, tuple[Any, ...]], after: dict[str, tuple[Any, ...]]) -> tuple[list[str], list[str]]:
    """Paths added, removed or modified (a verdict each), and directories whose mtime alone
    changed: a file created and removed again inside them, such as the WAL side files SQLite
    makes while a reader has the database open. Those leave nothing behind and are counted,
    not treated as writes."""
    transient = [f"side file {p}" for p in after.keys() ^ before.keys() if _sqlite_side_file(p, before, after)]
    out = [f"added {p}" for p in after.keys() - before.keys() if not _sqlite_side_file(p, before, after)]
    out += [f"removed {p}" for p in before.keys() - after.keys() if not _sqlite_side_file(p, before, after)]
    for p in before.keys() & after.keys():
        if before[p] != after[p]:
            (transient if before[p][0] == after[p][0] == "dir" else out).append(f"modified {p}")
    return sorted(out), sorted(transient)


# ------------------------------------------------------------------ running the CLI in-process


@dataclass
class Run:
    code: int | None
    out: str
    err: str
    escaped: str | None = None  # the traceback of an exception that escaped main()
    seconds: float = 0.0


def run_cli(argv: list[str], stdin: bytes = b"") -> Run:
    """``ragit <argv>`` through ``main`` in this process: stdin from bytes, stdout/stderr captured."""
    from ragit.cli.main import main

    saved = sys.stdin
    sys.stdin = io.TextIOWrapper(io.BytesIO(stdin), encoding="utf-8")
    out, err = io.StringIO(), io.StringIO()
    escaped = None
    code: int | None = None
    started = time.monotonic()
    try:
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            try:
                main(list(argv))
                code = 0
            except SystemExit as exc:
                code = exc.code if isinstance(exc.code, int) else (0 if exc.code is None else 1)
            except BaseException:  # noqa: BLE001 - exactly what the fuzz looks for
                escaped = traceback.format_exc()
    finally:
        sys.stdin = saved
    return Run(code, out.getvalue(), err.getvalue(), escaped, time.monotonic() - started)


def strict_json(text: str) -> Any:
    """Parse JSON the way a strict client would: NaN/Infinity tokens are an error."""
    def refuse(token: str) -> Any:
        raise ValueError(f"non-standard JSON token {token}")

    return json.loads(text, parse_constant=refuse)


def envelope_of(run: Run, fmt: str | None) -> dict[str, Any] | None:
    """The JSON envelope on stdout: all of it (json), or after the text rendering (both/default)."""
    text = run.out
    if fmt != "json":
        at = text.rfind('{\n  "command": ')
        if at < 0:
            return None
        text = text[at:]
    try:
        value = strict_json(text)
    except ValueError:
        return None
    return value if isinstance(value, dict) else None


_TEXT_CODE = re.compile(r"^- code: (\S+)$", re.M)
_TEXT_DETAILS = re.compile(r"^- details: (.*)$", re.M)
_TEXT_CATEGORY = re.compile(r"^\[ragit\] error \((\S+)\)$", re.M)


def error_of(run: Run, fmt: str | None) -> dict[str, Any] | None:
    """The failure's error object, from the envelope or from the stderr text block."""
    env = envelope_of(run, fmt)
    if env is not None and isinstance(env.get("error"), dict):
        return env["error"]
    code = _TEXT_CODE.search(run.err)
    if code is None:
        return None
    details: Any = {}
    found = _TEXT_DETAILS.search(run.err)
    if found:
        try:
            details = json.loads(found.group(1))
        except ValueError:
            details = {}
    category = _TEXT_CATEGORY.search(run.err)
    return {"code": code.group(1), "category": category.group(1) if category else None, "details": details}


def cli_violations(command: str, fmt: str | None, run: Run, expect: Any, wrote: list[str], *,
                   may_write: bool) -> list[tuple[str, str]]:
    """The contract checks of one CLI case (see the module docstring)."""
    v: list[tuple[str, str]] = []
    if run.escaped is not None:
        v.append(("traceback", run.escaped.strip().splitlines()[-1]))
        return v
    if TRACEBACK in run.out or TRACEBACK in run.err:
        v.append(("traceback", "a traceback was printed"))
    if run.code not in (0, 1, 2, 3, 4):
        v.append(("exit_code", f"exit {run.code}"))
    error = error_of(run, fmt)
    if fmt == "json":
        try:
            env = strict_json(run.out)
        except ValueError as exc:
            env = None
            v.append(("json", f"stdout is not one JSON document ({exc}): {run.out[:200]!r}"))
        if isinstance(env, dict):
            keys = list(env)
            want = ENVELOPE_KEYS + (["error"] if "error" in env else [])
            if keys != want:
                v.append(("json", f"envelope keys {keys}"))
            if not run.out.endswith("}\n"):
                v.append(("json", "stdout does not end with one newline"))
            if "error" in env and run.err:
                v.append(("json", f"stderr not empty on a json failure: {run.err[:200]!r}"))
            if "error" in env and (not isinstance(env["error"], dict) or list(env["error"]) != ERROR_KEYS):
                v.append(("json", f"error keys {list(env['error']) if isinstance(env['error'], dict) else env['error']}"))
        elif env is not None:
            v.append(("json", "stdout is JSON but not an envelope object"))
    if error is not None:
        if error.get("code") == "INTERNAL_ERROR":
            v.append(("internal_error", f"INTERNAL_ERROR {error.get('details')} {error.get('message', '')[:200]}"))
        elif EXIT_OF_CATEGORY.get(error.get("category")) not in (None, run.code):
            v.append(("exit_code", f"exit {run.code} for category {error.get('category')}"))
    elif run.code == 1:
        v.append(("internal_error", "exit 1 without an error object"))
    elif run.code not in (0, None) and not (run.code == 3 and command == "context packet"):
        v.append(("exit_code", f"exit {run.code} without an error object"))
    reason = (error or {}).get("details", {}).get("reason") if isinstance((error or {}).get("details"), dict) else None
    if expect.reject:
        if run.code != 2:
            got = f"{error.get('code')}/{reason}" if error else "success"
            v.append(("not_rejected", f"exit {run.code} ({got}); the contract rejects this input"
                                      + (f" with {sorted(expect.reasons)}" if expect.reasons else "")))
        elif expect.reasons and (error is None or error.get("code") != "INPUT_INVALID" or reason not in expect.reasons):
            v.append(("wrong_reason", f"{(error or {}).get('code')}/{reason}, expected INPUT_INVALID/{sorted(expect.reasons)}"))
    if reason is not None and reason in expect.forbid:
        v.append(("false_reject", f"INPUT_INVALID/{reason} on an input without that fault"))
    if wrote and (run.code == 2 or expect.reject):
        v.append(("write_on_rejected", "; ".join(wrote[:5])))
    elif wrote and not may_write:
        v.append(("write_on_read", "; ".join(wrote[:5])))
    return v


# ------------------------------------------------------------------ repositories


def git(root: Path, *args: str) -> str:
    return subprocess.run(["git", *args], cwd=root, capture_output=True, text=True, check=True).stdout.strip()


def head_of(root: Path) -> str:
    try:
        return git(root, "rev-parse", "HEAD")
    except subprocess.CalledProcessError:
        return "HEAD"


def build_repos(base: Path) -> dict[str, Path]:
    """Four places a command can run: an indexed repository with memory, a session and an
    artifact; a committed but unindexed one; one with an unborn HEAD; a plain directory."""
    from conftest import SAMPLE_FILES, GitRepo, write_placeholder_config

    repos: dict[str, Path] = {}
    for name in ("indexed", "unindexed", "unborn"):
        root = base / name
        root.mkdir(parents=True)
        subprocess.run(["git", "init", "-q", "-b", "main", str(root)], check=True)
        write_placeholder_config(root)
        if name != "unborn":
            GitRepo(root).commit("initial", SAMPLE_FILES)
            GitRepo(root).commit("second", {"src/extra.py": "def extra():\n    return 'auth token'\n"})
        repos[name] = root
    plain = base / "plain"
    plain.mkdir()
    write_placeholder_config(plain)
    repos["plain"] = plain
    for root in repos.values():
        (root / INPUT_DIR).mkdir()
        if (root / ".git").is_dir():
            with (root / ".git" / "info" / "exclude").open("a", encoding="utf-8") as fh:
                fh.write(f"{INPUT_DIR}/\n")
    root = repos["indexed"]
    setup = [
        (["ingest", "--all"], b""),
        (["memory", "wrap", "--input", "-"], json.dumps({
            "goal": "finish auth migration", "summary": "rotation done",
            "decisions": [{"title": "rotate tokens", "summary": "on every use"}],
            "openLoops": [{"title": "docs", "nextAction": "write the ADR"}]}).encode()),
        (["artifact", "capture", "--input", "-"], json.dumps({
            "scope": "session", "kind": "finding", "title": "auth", "text": "tokens rotate on use"}).encode()),
        (["session", "mirror", "--input", "-", "--session", "fz-mirror"], json.dumps([
            {"role": "user", "content": "why is the auth token test flaky"},
            {"role": "assistant", "content": "rotation race"}]).encode()),
    ]
    for argv, stdin in setup:
        run = run_cli([*argv, "--cwd", str(root), "--format", "json"], stdin)
        assert run.code == 0, (argv, run)
    return repos


@contextlib.contextmanager
def git_env(home: Path):
    """The fixed git identity and dates of tests/conftest.py, for module-scoped setup."""
    from conftest import GIT_ENV

    import pytest

    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("HOME", str(home))
        mp.setenv("GIT_CONFIG_GLOBAL", str(home / ".gitconfig"))
        for key, value in GIT_ENV.items():
            mp.setenv(key, value)
        for key in ("RAGIT_NOW", "RAGIT_DEBUG", "RAGIT_SKIP_HOOKS", "RAGIT_EMBEDDER"):
            mp.delenv(key, raising=False)
        yield


# ------------------------------------------------------------------ one CLI case


@dataclass
class Places:
    repos: dict[str, Path]
    heads: dict[str, str]


def cli_argv(case: Any, places: Places) -> tuple[list[str], bytes]:
    """The full argv and stdin of ``case`` in its repository; input files are written first."""
    from fuzzgen import HEAD

    root = places.repos[case.repo]
    data = case.stdin.replace(HEAD.encode(), places.heads[case.repo].encode())
    extra: list[str] = []
    stdin = b""
    if case.with_input:
        spec = case.input_spec
        if spec == "-":
            stdin = data
        elif spec == "@file":
            (root / INPUT_DIR / "in.json").write_bytes(data)
            spec = f"{INPUT_DIR}/in.json"
        else:
            (root.parent / "fuzz-outside.json").write_bytes(data)
            (Path(os.environ["HOME"]) / "fuzz-home.json").write_bytes(data)
            if spec == "@abs-outside":
                spec = str(root.parent / "fuzz-outside.json")
        extra += ["--input", spec]
    extra += ["--cwd", str(root)]
    if case.fmt:
        extra += ["--format", case.fmt]
    argv = list(case.argv)
    cut = argv.index("--") if "--" in argv else len(argv)
    return argv[:cut] + extra + argv[cut:], stdin


def outcome_of(code: int | None, error: dict[str, Any] | None) -> str:
    if error is None:
        return f"exit {code}"
    details = error.get("details") if isinstance(error.get("details"), dict) else {}
    reason = details.get("reason")
    return f"exit {code} {error.get('code')}" + (f"/{reason}" if reason else "")


def execute_cli(case: Any, places: Places) -> Run:
    """Run one case in-process, check the contract, count it (and fail it unless in census mode)."""
    argv, stdin = cli_argv(case, places)
    roots = [places.repos[case.repo], Path(os.environ["HOME"])]
    before = snapshot(roots)
    run = run_cli(argv, stdin)
    wrote, transient = changes(before, snapshot(roots))
    if transient and not case.writes_allowed:
        STATS.transient[f"cli {case.command}"] += 1
    violations = cli_violations(case.command, case.fmt, run, case.expect, wrote, may_write=case.writes_allowed)
    outcome = "escaped" if run.escaped else outcome_of(run.code, error_of(run, case.fmt))
    shown = " ".join(a if len(a) < 120 else a[:60] + f"...<{len(a)} chars>" for a in argv)
    conclude("cli", case.command, case.klass, outcome, violations,
             f"ragit {shown!r} stdin={case_bytes(stdin or case.stdin)}", stdin or case.stdin)
    return run


def case_bytes(data: bytes) -> str:
    return repr(data if len(data) <= 400 else data[:300] + b"..." + data[-60:]) + f" ({len(data)} bytes)"


def documented_limits(command: str) -> dict[str, int]:
    """The limits ``describe <command>`` documents (spec.limits), by kind: text, payload, depth."""
    run = run_cli(["describe", *command.split(), "--format", "json"])
    try:
        limits = json.loads(run.out)["data"]["spec"].get("limits")
    except (ValueError, KeyError, TypeError):
        return {}
    found: dict[str, int] = {}
    stack: list[tuple[str, Any]] = [("", limits)]
    while stack:
        key, value = stack.pop()
        if isinstance(value, dict):
            label = " ".join(str(value.get(k, "")) for k in ("name", "field", "kind") if k in value)
            stack += [(f"{key} {label} {k}", v) for k, v in value.items()]
        elif isinstance(value, list):
            stack += [(key, v) for v in value]
        elif isinstance(value, int) and not isinstance(value, bool):
            low = key.lower()
            kind = ("depth" if "depth" in low or "nest" in low else "payload" if "payload" in low
                    else "file" if "file" in low else "text" if any(w in low for w in ("text", "question", "goal"))
                    else None)
            if kind and kind not in found:
                found[kind] = value
    return found


# ------------------------------------------------------------------ one MCP tool call


def substitute(value: Any, old: str, new: str) -> Any:
    """``value`` with ``old`` replaced in every string, without recursion (values nest 5,000 deep)."""
    if isinstance(value, str):
        return value.replace(old, new)
    if not isinstance(value, (dict, list)):
        return value
    top: Any = {} if isinstance(value, dict) else []
    stack = [(value, top)]
    while stack:
        src, dst = stack.pop()
        items = src.items() if isinstance(src, dict) else enumerate(src)
        for k, v in items:
            if isinstance(v, (dict, list)):
                child: Any = {} if isinstance(v, dict) else []
                stack.append((v, child))
            else:
                child = v.replace(old, new) if isinstance(v, str) else v
            key = k.replace(old, new) if isinstance(k, str) else k
            if isinstance(dst, dict):
                dst[key] = child
            else:
                dst.append(child)
    return top


def tool_violations(outcome: Any, expect: Any, wrote: list[str], *, may_write: bool) -> list[tuple[str, str]]:
    """The contract checks of one tool outcome (cli-contract §11): compact JSON text, a typed
    error object (never INTERNAL_ERROR) without structured content, the snapshot block on
    success, the reasons the contract names, and no writes when rejected or read-only."""
    v: list[tuple[str, str]] = []
    try:
        text_value = strict_json(outcome.text)
    except ValueError as exc:
        v.append(("json", f"text content is not JSON: {exc}"))
        text_value = None
    error = outcome.error if outcome.is_error else None
    if outcome.is_error:
        if outcome.structured is not None:
            v.append(("json", "a tool error carries structured content"))
        if not isinstance(error, dict) or list(error) != ERROR_KEYS or text_value != error:
            v.append(("json", f"error object {str(error)[:200]}"))
            error = error if isinstance(error, dict) else {}
        if error.get("code") == "INTERNAL_ERROR":
            v.append(("internal_error", f"INTERNAL_ERROR {error.get('details')} {str(error.get('message'))[:200]}"))
    elif not isinstance(outcome.structured, dict) or "snapshot" not in outcome.structured:
        v.append(("json", "a result without the snapshot block"))
    elif text_value != outcome.structured:
        v.append(("json", "text content differs from the structured content"))
    details = (error or {}).get("details")
    reason = details.get("reason") if isinstance(details, dict) else None
    rejected = bool(error) and error.get("category") == "invalid_input"
    if expect.reject:
        if not rejected:
            got = f"{error.get('code')}/{reason}" if error else "a result"
            v.append(("not_rejected", f"{got}; the contract rejects these arguments"
                                      + (f" with {sorted(expect.reasons)}" if expect.reasons else "")))
        elif expect.reasons and (error.get("code") != "INPUT_INVALID" or reason not in expect.reasons):
            v.append(("wrong_reason", f"{error.get('code')}/{reason}, expected INPUT_INVALID/{sorted(expect.reasons)}"))
    if reason is not None and reason in expect.forbid:
        v.append(("false_reject", f"INPUT_INVALID/{reason} on arguments without that fault"))
    if wrote and (rejected or expect.reject):
        v.append(("write_on_rejected", "; ".join(wrote[:5])))
    elif wrote and not may_write:
        v.append(("write_on_read", "; ".join(wrote[:5])))
    return v


def tool_outcome_name(outcome: Any) -> str:
    if not outcome.is_error:
        return "result"
    details = outcome.error.get("details") if isinstance(outcome.error.get("details"), dict) else {}
    return f"error {outcome.error.get('code')}" + (f"/{details['reason']}" if details.get("reason") else "")


# ------------------------------------------------------------------ real processes


def process_argv(argv: list[str]) -> list[bytes] | None:
    """``argv`` as the bytes a shell would pass (lone surrogates from undecodable bytes become
    those bytes again); None when no real process can receive it (NUL, other surrogates)."""
    try:
        out = [os.fsencode(a) for a in argv]
    except UnicodeEncodeError:
        return None
    return None if any(b"\0" in a for a in out) else out


def run_process(argv: list[bytes], stdin: bytes, env: dict[str, str] | None = None) -> Run:
    """``python -m ragit <argv>`` as a real process (stdout and stderr pipes, so not a terminal)."""
    started = time.monotonic()
    proc = subprocess.run([os.fsencode(sys.executable), b"-m", b"ragit", *argv], input=stdin, capture_output=True,
                          timeout=120, env=env)
    return Run(proc.returncode, proc.stdout.decode("utf-8", "replace"), proc.stderr.decode("utf-8", "replace"),
               None, time.monotonic() - started)


def verdict(run: Run, fmt: str | None) -> tuple[Any, ...]:
    """What must agree between an in-process run and a real process: exit code, error code, reason."""
    error = error_of(run, fmt)
    details = (error or {}).get("details")
    return (run.code, (error or {}).get("code"), details.get("reason") if isinstance(details, dict) else None)


class RawServer:
    """``ragit mcp`` as a subprocess driven with raw lines on stdin; a thread pumps stdout lines
    into a queue, so a request that is never answered shows as a timeout."""

    def __init__(self, root: Path, errlog: Path, env: dict[str, str]):
        import queue
        import threading

        self.errlog = errlog
        self._err = errlog.open("wb")
        self.proc = subprocess.Popen([sys.executable, "-m", "ragit", "mcp", "--cwd", str(root)], stdin=subprocess.PIPE,
                                     stdout=subprocess.PIPE, stderr=self._err, env=env)
        self.lines: queue.Queue[bytes | None] = queue.Queue()
        threading.Thread(target=self._pump, daemon=True).start()
        self.send(json.dumps({"jsonrpc": "2.0", "id": "init", "method": "initialize", "params": {
            "protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "fuzz", "version": "1"}}}).encode())
        assert self.recv()["id"] == "init"
        self.send(b'{"jsonrpc": "2.0", "method": "notifications/initialized"}')

    def _pump(self) -> None:
        assert self.proc.stdout is not None
        for line in self.proc.stdout:
            self.lines.put(line)
        self.lines.put(None)

    def send(self, line: bytes) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.write(line + b"\n")
        self.proc.stdin.flush()

    def recv(self, timeout: float = 60.0) -> Any:
        """The next stdout line, parsed (raises queue.Empty when nothing comes)."""
        line = self.lines.get(timeout=timeout)
        if line is None:
            raise EOFError("the server exited")
        return strict_json(line.decode("utf-8"))

    def stderr_text(self) -> str:
        if not self._err.closed:
            self._err.flush()
        return self.errlog.read_text(encoding="utf-8", errors="replace")

    def close(self) -> int | None:
        if self.proc.poll() is None:
            assert self.proc.stdin is not None
            self.proc.stdin.close()
            try:
                self.proc.wait(timeout=30)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        self._err.close()
        return self.proc.returncode
