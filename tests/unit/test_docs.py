"""The user documentation cannot silently fall behind the CLI.

Every leaf command of the describe registry has its page at ``docs/<docSlug>.md``
(``docs/commands/<path>.md``), the page names every option, argument and error code the
registry advertises for it, and the command index links every page.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from ragit.cli.main import _register
from ragit.contract.describe import REGISTRY, available_commands
from ragit.errors import ERROR_CODES

DOCS = Path(__file__).resolve().parents[2] / "docs"
COMMANDS_DIR = DOCS / "commands"

_register()
COMMANDS = available_commands()


def page_path(command: str) -> Path:
    """``docs/commands/<docSlug minus 'commands/'>.md``."""
    slug = REGISTRY[command]["docSlug"]
    assert slug.startswith("commands/"), (command, slug)
    return COMMANDS_DIR / f"{slug[len('commands/'):]}.md"


def page_text(command: str) -> str:
    path = page_path(command)
    assert path.is_file(), f"ragit {command}: missing documentation page {path.relative_to(DOCS.parent)}"
    return path.read_text(encoding="utf-8")


def mentions(text: str, word: str) -> bool:
    """``word`` appears as a whole token (``--at`` must not be satisfied by ``--attach``)."""
    return re.search(rf"(?<![\w-]){re.escape(word)}(?![\w-])", text) is not None


def test_registry_is_not_empty():
    assert "query" in COMMANDS and "context pack" in COMMANDS and "mcp" in COMMANDS


@pytest.mark.parametrize("command", COMMANDS)
def test_every_command_has_a_page(command):
    text = page_text(command)
    assert text.startswith(f"# `ragit {command}`"), f"{page_path(command)} must start with its title"


@pytest.mark.parametrize("command", COMMANDS)
def test_every_option_is_documented(command):
    text = page_text(command)
    missing = [o["name"] for o in REGISTRY[command]["options"] if not mentions(text, o["name"])]
    assert not missing, f"ragit {command}: options missing from {page_path(command).name}: {missing}"


@pytest.mark.parametrize("command", COMMANDS)
def test_every_argument_is_documented(command):
    text = page_text(command)
    missing = [a["name"] for a in REGISTRY[command]["arguments"] if f"`{a['name']}`" not in text]
    assert not missing, f"ragit {command}: arguments missing from {page_path(command).name}: {missing}"


@pytest.mark.parametrize("command", COMMANDS)
def test_every_error_code_is_documented(command):
    text = page_text(command)
    missing = [c for c in REGISTRY[command]["errorCodes"] if f"`{c}`" not in text]
    assert not missing, f"ragit {command}: error codes missing from {page_path(command).name}: {missing}"


def test_index_links_every_page():
    index = (COMMANDS_DIR / "README.md").read_text(encoding="utf-8")
    missing = [c for c in COMMANDS
               if f"({page_path(c).relative_to(COMMANDS_DIR).as_posix()})" not in index]
    assert not missing, f"docs/commands/README.md does not link: {missing}"


def test_index_lists_every_error_code():
    index = (COMMANDS_DIR / "README.md").read_text(encoding="utf-8")
    missing = [c for c in ERROR_CODES if f"`{c}`" not in index]
    assert not missing, f"docs/commands/README.md does not list: {missing}"


def test_no_page_without_a_command():
    """A page for a removed or renamed command would document something that does not exist."""
    expected = {page_path(c) for c in COMMANDS} | {COMMANDS_DIR / "README.md"}
    stray = sorted(str(p.relative_to(DOCS)) for p in COMMANDS_DIR.rglob("*.md") if p not in expected)
    assert not stray, f"pages without a command in the describe registry: {stray}"


def test_relative_links_resolve():
    """Links between the documentation pages point at files that exist."""
    pages = [*COMMANDS_DIR.rglob("*.md"), DOCS / "api.md", DOCS / "mcp.md"]
    broken = []
    for page in pages:
        if not page.is_file():
            broken.append(f"{page.relative_to(DOCS)} (missing)")
            continue
        for target in re.findall(r"\]\(([^)#\s]+)(?:#[^)]*)?\)", page.read_text(encoding="utf-8")):
            if "://" in target:
                continue
            if not (page.parent / target).resolve().exists():
                broken.append(f"{page.relative_to(DOCS)} -> {target}")
    assert not broken, broken
