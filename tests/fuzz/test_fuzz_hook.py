"""Fuzz ``python -m ragit.cli.hook <event>``, the Claude Code hooks ``ragit setup`` installs:
the other command that reads stdin. A hook must never break the user's session: whatever its
payload, it exits 0, prints nothing or one JSON line, and leaves no temp file behind; the
session-start hook and any payload that is not a JSON object write nothing at all.
"""

from __future__ import annotations

import contextlib
import io
import json
import os
import sys
import traceback
from pathlib import Path

import pytest
from fuzzgen import hook_case
from fuzzkit import TRACEBACK, Places, build_repos, changes, conclude, flush_stats, fuzz_settings, git_env, head_of, seeded, snapshot, strict_json
from hypothesis import given

from ragit.cli import hook

EXAMPLES = 150


@pytest.fixture(scope="module")
def places(tmp_path_factory):
    base = tmp_path_factory.mktemp("fuzz-hook")
    with git_env(base / "home"):
        repos = build_repos(base)
    yield Places(repos, {name: head_of(root) for name, root in repos.items()})
    flush_stats()


def test_hook_fuzz(places):
    root = places.repos["indexed"]

    @fuzz_settings(EXAMPLES)
    @seeded
    @given(case=hook_case())
    def fuzz(case):
        event, klass, data = case
        data = data.replace(b"@@ROOT@@", os.fsencode(root))
        roots = [root, Path(os.environ["HOME"])]
        before = snapshot(roots)
        saved = sys.stdin
        sys.stdin = io.TextIOWrapper(io.BytesIO(data), encoding="utf-8")
        out, err = io.StringIO(), io.StringIO()
        violations: list[tuple[str, str]] = []
        code = None
        try:
            with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
                code = hook.main([event, "--cwd", str(root)])
        except BaseException:  # noqa: BLE001 - a hook must never raise
            violations.append(("traceback", traceback.format_exc().strip().splitlines()[-1]))
        finally:
            sys.stdin = saved
        if code not in (0, None):
            violations.append(("exit_code", f"hook returned {code}"))
        if TRACEBACK in out.getvalue() or TRACEBACK in err.getvalue():
            violations.append(("traceback", "a traceback was printed"))
        lines = out.getvalue().splitlines()
        if len(lines) > 1:
            violations.append(("json", f"{len(lines)} stdout lines"))
        elif lines:
            try:
                strict_json(lines[0])
            except ValueError as exc:
                violations.append(("json", f"stdout is not JSON: {exc}"))
        wrote, _ = changes(before, snapshot(roots))
        try:
            is_object = isinstance(json.loads(data), dict)
        except (ValueError, RecursionError):
            is_object = False
        leftovers = [w for w in wrote if w.startswith("added") and ".tmp" in w]
        if leftovers:
            violations.append(("temp_file", "; ".join(leftovers[:3])))
        if wrote and (event == "session-start" or not is_object):
            violations.append(("write_on_rejected" if not is_object else "write_on_read", "; ".join(wrote[:3])))
        conclude("hook", event, klass, f"exit {code} {'json' if lines else 'silent'}", violations,
                 f"hook {event} stdin={data[:300]!r} ({len(data)} bytes)")

    fuzz()
