"""The ``ragit`` console entry point.

It stays small on purpose: a read-only command is first offered to the repository's
``ragit serve`` (:mod:`ragit.cli.serve.client`, built-in modules only), and click, the command
modules and everything below them are imported only when the command runs in this process
(:mod:`ragit.cli.app`). The click group and the helpers tests and command modules used to import
from here are still reachable as attributes of this module.
"""

from __future__ import annotations

import sys

# Names that live in ragit.cli.app, importable from here as before (``from .main import cli``).
_APP_NAMES = frozenset({
    "cli", "COMMAND_ORDER", "COMMAND_MODULES", "RagitCommand", "RagitGroup", "failure_cwd", "out_format", "run",
    "_register", "_usage_error", "_success_cwd",
})


def main(args: list[str] | None = None) -> None:
    """Console entry point: ``ragit <args>`` (default ``sys.argv[1:]``); exits with its code.

    Only the console entry (``args`` None) forwards to a running ``ragit serve``: callers that
    drive the CLI in-process (the Claude Code hook, tests) always run it here.
    """
    raw = list(sys.argv[1:] if args is None else args)
    if args is None:
        # ragit's vector math is one dot product a row (no BLAS matrix product), and on small
        # matrices BLAS threads only add contention: one thread spares OpenBLAS its thread pool
        # (≈ 17 % of numpy's import CPU)
        import os

        os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
    if raw == ["--version"]:  # click's version_option prints exactly this; spare its import
        from .._version import __version__

        sys.stdout.write(f"ragit {__version__}\n")
        sys.stdout.flush()
        sys.exit(0)
    if raw[:1] == ["gate"] and not {"--help", "-h"} & set(raw):  # the PreToolUse hook: no click, no numpy
        from ..gate.hook import main as gate_main

        sys.exit(gate_main(raw[1:]))
    one_shot = exit_now = False
    if args is None:
        from .serve.client import forward

        code = forward(raw)
        if code is not None:
            sys.exit(code)
        one_shot, exit_now = _exit_kind(raw)
        if one_shot:
            # The collector's passes over the hundreds of thousands of young objects that numpy,
            # ragit's read path and the embedder's vocabulary create, none in a cycle worth
            # freeing before exit, cost ~5-10 ms CPU; reference counting still frees the rest.
            import gc

            gc.disable()
    from .app import run

    code = run(raw)
    if exit_now:
        _exit_now(code)
    sys.exit(code)


# Commands besides the one-shot reads whose process skips the interpreter's teardown: an ingest
# leaves hundreds of thousands of cached objects (term and piece caches, the vocabulary, the
# analysed rows' strings) whose one-by-one freeing costs ~35-40 ms CPU after a 1,000-document
# first ingest (issue 15); it has closed its store and written its files (atomically, in
# ``with`` blocks) before it returns, so the teardown has nothing left to flush.
EXIT_NOW_COMMANDS = frozenset({"ingest"})


def _exit_kind(raw: list[str]) -> tuple[bool, bool]:
    """(one-shot read, exit without teardown) for a command run from the console entry point.
    A one-shot read answers once and exits (``query``, ``context pack``, ...: the commands
    ``ragit serve`` may answer); it and :data:`EXIT_NOW_COMMANDS` exit through :func:`_exit_now`."""
    from . import argv as argvmod
    from .serve.protocol import FORWARDED

    command = " ".join(argvmod.command_path(raw))
    one_shot = command in FORWARDED
    return one_shot, one_shot or command in EXIT_NOW_COMMANDS


def _exit_now(code: int) -> None:
    """Exit with ``code`` once the output is flushed, skipping the interpreter's teardown
    (freeing every module and object one by one, and a last full collection: ~20-30 ms CPU
    after a query, more than its own retrieval). Exit handlers still run. Returns (for a
    normal ``sys.exit``) when another thread is alive or a stream cannot be flushed, so that
    those cases end exactly as before."""
    import atexit
    import os
    import threading

    run_exit_handlers = getattr(atexit, "_run_exitfuncs", None)
    if run_exit_handlers is None or threading.active_count() > 1:
        return
    try:
        sys.stdout.flush()
        sys.stderr.flush()
    except Exception:  # noqa: BLE001 - a closed pipe: let the normal exit report it as before
        return
    run_exit_handlers()
    try:
        sys.stdout.flush()
        sys.stderr.flush()
    except Exception:  # noqa: BLE001
        return
    os._exit(code)


def __getattr__(name: str) -> object:
    if name in _APP_NAMES:
        from . import app

        return getattr(app, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


if __name__ == "__main__":  # pragma: no cover
    main()
