"""Meta commands: describe, config set / get."""

from __future__ import annotations

import os

import click

from .common import common, format_option, resolve_root
from .app import cli
from .output import Output


@cli.command("describe")
@click.argument("words", nargs=-1)
@format_option
def describe_cmd(words, format_) -> Output:
    """Print the machine-readable contract of a command."""
    from ..contract.describe import describe, describe_text

    data = describe(words)
    return Output("describe", data, lambda: describe_text(data), cwd=os.getcwd())


@cli.group("config")
def config_group() -> None:
    """Read and change .ragit/config.toml."""


@config_group.command("set")
@click.argument("key", required=False)
@click.argument("value", required=False)
@common
def config_set_cmd(key, value, format_, cwd) -> Output:
    """Set one configuration value (typed by its current value)."""
    from ..config import coerce_value, load_config, lookup, write_config
    from ..errors import input_invalid

    if key is None:
        raise input_invalid("key", "required", "config set needs a key", command="config set")
    if value is None:
        raise input_invalid("value", "required", "config set needs a value", command="config set")
    root, _ = resolve_root(cwd)
    config = load_config(root)
    section, name = lookup(config, key, "config set")
    dotted = f"{section}.{name}"
    previous = config.data[section][name]
    new = coerce_value(dotted, previous, value)
    config.data[section][name] = new
    write_config(root, config)
    data = {"key": dotted, "value": new, "previous": previous}
    if dotted == "store.dsn":  # cli-contract §10: a DSN is never printed with its password
        from ..store.pg_connect import redact_dsn

        data = {"key": dotted, "value": redact_dsn(new), "previous": redact_dsn(previous)}
        new = data["value"]

    def text() -> str:
        shown = ",".join(new) if isinstance(new, list) else ("true" if new is True else "false" if new is False else new)
        return f"config updated: {dotted}={shown}\n"

    return Output("config set", data, text, cwd=str(root))


@config_group.command("get")
@click.argument("key", required=False)
@common
def config_get_cmd(key, format_, cwd) -> Output:
    """Print one configuration value."""
    from ..config import load_config, lookup
    from ..contract.jsonout import dumps
    from ..errors import input_invalid

    if key is None:
        raise input_invalid("key", "required", "config get needs a key", command="config get")
    root, _ = resolve_root(cwd)
    config = load_config(root)
    section, name = lookup(config, key, "config get")
    value = config.data[section][name]
    if f"{section}.{name}" == "store.dsn":  # never printed with its password (cli-contract §10)
        from ..store.pg_connect import redact_dsn

        value = redact_dsn(value)
    data = {"key": f"{section}.{name}", "value": value}

    def text() -> str:
        if isinstance(value, (list, dict)):
            return dumps(value)
        if isinstance(value, bool):
            return ("true" if value else "false") + "\n"
        return f"{value}\n"

    return Output("config get", data, text, cwd=str(root))
