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
        # ragit's vector math is einsum (no BLAS), and on small matrices BLAS threads only add
        # contention: one thread spares OpenBLAS its thread pool (≈ 17 % of numpy's import CPU)
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
    if args is None:
        from .serve.client import forward

        code = forward(raw)
        if code is not None:
            sys.exit(code)
        _pause_collector(raw)
    from .app import run

    sys.exit(run(raw))


def _pause_collector(raw: list[str]) -> None:
    """Turn the cyclic garbage collector off for a one-shot read (``query``, ``context pack``, ...).

    Such a process imports numpy and ragit's read path, builds the embedder's vocabulary and
    exits within a fraction of a second: the collector's passes over those hundreds of thousands
    of young objects, none of them in a cycle worth freeing before exit, cost ~5-10 ms CPU.
    Reference counting still frees everything else. Long-running commands keep the collector.
    """
    from . import argv as argvmod
    from .serve.protocol import FORWARDED

    if " ".join(argvmod.command_path(raw)) in FORWARDED:
        import gc

        gc.disable()


def __getattr__(name: str) -> object:
    if name in _APP_NAMES:
        from . import app

        return getattr(app, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


if __name__ == "__main__":  # pragma: no cover
    main()
