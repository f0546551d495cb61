"""Help pages and typo hints (cli-contract §1, §6).

Every ``--help`` ends with example invocations taken from the ``describe`` registry
(:mod:`ragit.contract.describe`), so help and ``describe`` can never disagree and a newly
registered command gets its examples without touching this module. A mistyped command or option
gets a ``did you mean`` hint from :func:`difflib.get_close_matches`.
"""

from __future__ import annotations

import difflib
from collections.abc import Iterable

import click

# The commands whose first example ``ragit --help`` shows: the path a new user walks.
ROOT_EXAMPLE_COMMANDS = ("init", "ingest", "query", "context pack", "memory recall", "status")


def command_path(ctx: click.Context) -> str:
    """The command path without the program name (``context pack``; ``""`` for the root)."""
    return " ".join(ctx.command_path.split()[1:])


def examples_for(path: str) -> list[str]:
    """The example invocations of ``path``: its own registry examples for a leaf; for a group,
    its own (when it runs bare) then the first example of each leaf under it; for the root, the
    first example of the commands of :data:`ROOT_EXAMPLE_COMMANDS`."""
    from ..contract.describe import REGISTRY, available_commands

    if not path:
        return [REGISTRY[p]["examples"][0] for p in ROOT_EXAMPLE_COMMANDS if REGISTRY.get(p, {}).get("examples")]
    own = list(REGISTRY[path]["examples"]) if path in REGISTRY else []
    children = [REGISTRY[p]["examples"][0] for p in available_commands()
                if p.startswith(path + " ") and REGISTRY[p]["examples"]]
    return own + [e for e in children if e not in own]


def write_examples(ctx: click.Context, formatter: click.HelpFormatter) -> None:
    """Append an ``Examples:`` section; lines are written verbatim (never re-wrapped), so each
    one can be copied and run."""
    examples = examples_for(command_path(ctx))
    if not examples:
        return
    formatter.write_paragraph()
    formatter.write_text("Examples:")
    for example in examples:
        formatter.write(f"{'':>{formatter.current_indent + 2}}{example}\n")


def did_you_mean(word: str, choices: Iterable[str]) -> str:
    """``; did you mean "query"?`` for the closest choice (or two), ``""`` when none is close."""
    close = difflib.get_close_matches(word, sorted(set(choices)), n=2, cutoff=0.6)
    if not close:
        return ""
    return "; did you mean " + " or ".join(f'"{c}"' for c in close) + "?"


def option_names(command: click.Command) -> list[str]:
    """Every long and short spelling of ``command``'s options, ``--help`` included."""
    names: list[str] = []
    for param in command.params:
        if isinstance(param, click.Option):
            names += [*param.opts, *param.secondary_opts]
    return names + ["--help"]
