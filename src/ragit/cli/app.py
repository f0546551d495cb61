"""The click application behind ``ragit``: the command group, lazy registration of command
modules, and one run of a command line with uniform rendering of results and typed failures.
:mod:`ragit.cli.main` imports this only when a command runs in this process."""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path

import click

from .._version import __version__
from ..errors import RagitError, internal_error
from . import argv as argvmod
from .output import emit, emit_failure, normalize_format, stdout_is_terminal


COMMAND_ORDER = (
    "init", "describe", "config", "hooks", "ingest", "query", "context", "memory", "migrate", "status",
    "doctor", "verify", "why", "eval", "artifact", "window", "session", "mcp", "snapshot", "serve", "setup",
    "gate", "tune",
)


class RagitCommand(click.Command):
    """A leaf command whose help ends with its ``describe`` examples (cli-contract §1)."""

    def format_epilog(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:
        from .helptext import write_examples

        super().format_epilog(ctx, formatter)
        write_examples(ctx, formatter)


class RagitGroup(click.Group):
    """Lists commands in the order of cli-contract §1; every command and sub-group declared on
    it is a :class:`RagitCommand` / :class:`RagitGroup`, so each help page ends with examples."""

    command_class = RagitCommand
    group_class = type  # sub-groups are RagitGroups too

    def list_commands(self, ctx: click.Context) -> list[str]:
        rank = {name: i for i, name in enumerate(COMMAND_ORDER)}
        return sorted(self.commands, key=lambda n: (rank.get(n, len(rank)), n))

    def add_command(self, cmd: click.Command, name: str | None = None) -> None:
        """A plain click command or group added with ``add_command`` gets the examples too."""
        if type(cmd) is click.Command:
            cmd.__class__ = RagitCommand
        elif type(cmd) is click.Group:
            cmd.__class__ = RagitGroup
        super().add_command(cmd, name)

    def format_epilog(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:
        from .helptext import write_examples

        super().format_epilog(ctx, formatter)
        write_examples(ctx, formatter)


@click.group(cls=RagitGroup, context_settings={"help_option_names": ["--help", "-h"]})
@click.version_option(__version__, "--version", prog_name="ragit", message="%(prog)s %(version)s")
def cli() -> None:
    """ragit: commit-bound, cited, budgeted context for coding agents."""


# The command modules that register each top-level command and everything under it, so a
# command imports only its own modules (tests/unit/test_cli_registry.py checks this map against
# importing them all). A command missing here, help and ``describe`` register everything.
COMMAND_MODULES: dict[str, tuple[str, ...]] = {
    "artifact": ("commands_artifact",),
    "config": ("commands_meta",),
    "context": ("commands_assemble", "commands_context"),
    "doctor": ("commands_knowledge",),
    "eval": ("commands_eval",),
    "gate": ("commands_gate",),
    "hooks": ("commands_hooks",),
    "ingest": ("commands_knowledge",),
    "init": ("commands_knowledge",),
    "mcp": ("commands_mcp",),
    "serve": ("commands_serve",),
    "setup": ("commands_setup",),
    "snapshot": ("commands_snapshot",),
    "memory": ("commands_memory",),
    "migrate": ("commands_knowledge",),
    "query": ("commands_knowledge",),
    "session": ("commands_assemble", "commands_session", "commands_window"),
    "status": ("commands_knowledge",),
    "verify": ("commands_verify",),
    "tune": ("commands_tune",),
    "why": ("commands_why",),
    "window": ("commands_assemble", "commands_window"),
}


def _register(command: str | None = None) -> None:
    """Import the ``ragit.cli.commands_*`` modules of ``command`` (all of them when None or
    unknown); each registers its commands on ``cli``."""
    import importlib

    from .. import cli as package

    names = COMMAND_MODULES.get(command) if command is not None else None
    if names is None:
        import pkgutil

        names = tuple(info.name for info in sorted(pkgutil.iter_modules(package.__path__), key=lambda m: m.name)
                      if info.name.startswith("commands_"))
    for name in names:
        importlib.import_module(f"{package.__name__}.{name}")


def failure_cwd(raw: list[str], command: str) -> str:
    """Git root of ``--cwd`` (or the process directory) when resolvable, else the absolute path."""
    requested = Path(argvmod.raw_option(raw, ("--cwd",)) or os.getcwd()).expanduser()
    absolute = Path(os.path.abspath(requested))
    if command == "describe":
        return os.getcwd()
    from ..gitsnap.git import find_root

    try:
        root = find_root(absolute) if absolute.is_dir() else None
    except Exception:
        root = None
    return str(root or absolute)


def _usage_error(exc: click.UsageError, command: str) -> RagitError:
    """Click's usage errors as typed failures (cli-contract §3.5), with a ``did you mean`` hint
    for a mistyped command, sub-command or option."""
    from ..errors import input_invalid
    from .helptext import did_you_mean, option_names

    message = exc.format_message()
    where = exc.ctx.command if exc.ctx is not None else None
    if "No such command" in message:
        name = message.split("'")[1] if "'" in message else message
        choices = where.list_commands(exc.ctx) if isinstance(where, click.Group) else []
        return RagitError("COMMAND_UNKNOWN", f"unknown command {name!r}{did_you_mean(name, choices)}",
                          {"command": name}, "ragit --help")
    if isinstance(exc, click.exceptions.NoArgsIsHelpError) and isinstance(where, click.Group):
        # a group without its sub-command: name the choices, not the whole help page
        choices = where.list_commands(exc.ctx)
        prog = " ".join(["ragit", *exc.ctx.command_path.split()[1:]])
        return RagitError("INPUT_INVALID", f"{prog} needs a command: {', '.join(choices)}",
                          {"field": "command", "reason": "required"}, f"{prog} --help")
    field = "usage"
    param = getattr(exc, "param", None)
    if param is not None and getattr(param, "opts", None):
        field = param.opts[0]
    elif isinstance(exc, click.NoSuchOption):
        field = exc.option_name
        hint = did_you_mean(exc.option_name, option_names(where) if where is not None else exc.possibilities or ())
        message = f"no such option: {exc.option_name}{hint}"
    return input_invalid(field, "usage", message, command=command or None)


def run(raw: list[str], on_internal_error: Callable[[BaseException], None] | None = None) -> int:
    """Run ``ragit <raw>`` in this process and return its exit code (output already printed).

    ``on_internal_error`` sees an unexpected exception before it is rendered as INTERNAL_ERROR
    (``ragit serve`` raises from it to let the client run the command itself).
    """
    words = argvmod.command_path(raw)
    command = " ".join(words)
    success_default, failure_default = argvmod.defaults_for(command, terminal=stdout_is_terminal())
    fmt_names = ("--format", "--output") if command == "init" else ("--format",)
    failure_fmt = normalize_format(argvmod.raw_option(raw, fmt_names)) or failure_default
    wants_help = any(a in ("--help", "-h") for a in raw)
    _register(words[0] if words and not wants_help else None)
    try:
        given = argvmod.raw_option(raw, fmt_names)
        if given is not None and normalize_format(given) is None:
            from ..errors import input_invalid

            raise input_invalid("--format", "not_one_of", f"--format must be text, json or both, got {given!r}",
                                command=command or None, value=given, allowed=["text", "json", "both"])
        out = cli.main(args=argvmod.reorder(raw), prog_name="ragit", standalone_mode=False)
    except RagitError as exc:
        return emit_failure(command, failure_cwd(raw, command), exc, failure_fmt)
    except click.exceptions.Exit as exc:
        return exc.exit_code
    except click.exceptions.Abort:
        return 130
    except click.UsageError as exc:
        err = _usage_error(exc, command)
        return emit_failure(command or "ragit", failure_cwd(raw, command), err, failure_fmt)
    except KeyboardInterrupt:
        return 130
    except BrokenPipeError:
        return 0
    except Exception as exc:  # noqa: BLE001 - the contract turns everything else into INTERNAL_ERROR
        if on_internal_error is not None:
            on_internal_error(exc)
        err = internal_error(exc)
        code = emit_failure(command, failure_cwd(raw, command), err, failure_fmt)
        if os.environ.get("RAGIT_DEBUG") == "1":
            import traceback

            traceback.print_exc()
        return code
    if out is None:  # --help of a group, or a command that printed nothing
        return 0
    if isinstance(out, int):
        return out
    fmt = out_format(raw, command, success_default)
    return emit(out, fmt, _success_cwd(out))


def out_format(raw: list[str], command: str, default: str) -> str:
    names = ("--format", "--output") if command == "init" else ("--format",)
    return normalize_format(argvmod.raw_option(raw, names)) or default


def _success_cwd(out) -> str:
    return out.cwd or os.getcwd()

