"""Raw-argv handling (cli-contract §1, §5.1): options may appear anywhere before ``--``.

The command path is found from the positionals (skipping option values), moved to the front
for click, and used — together with a raw ``--format`` scan — to render failures that happen
before or during parsing.
"""

from __future__ import annotations

GROUPS = ("config", "context", "hooks", "memory", "migrate", "artifact", "window", "session", "eval", "snapshot")

# Options that take a value as the next token (when not written as --opt=value).
VALUE_OPTIONS = frozenset({
    "--format", "--output", "--cwd", "--input", "--view", "--top-k", "--scope", "--at", "--budget",
    "--since", "--files", "--path", "--mode", "--strategy", "--evidence", "--window", "--model",
    "--keep-recent", "--session", "--from", "--limit", "--artifact-kind", "--count", "--ext", "--out",
    "--repo", "--seed", "--limit-messages", "--by", "--status", "--kind", "--budget-unit", "--idle-timeout",
    "-o",
})

# command path -> (success default format, failure default format); cli-contract §1.1
DEFAULT_FORMATS: dict[str, tuple[str, str]] = {
    "init": ("text", "text"),
    "describe": ("json", "text"),
    "config set": ("text", "text"),
    "config get": ("text", "text"),
    "hooks install": ("text", "text"),
    "hooks uninstall": ("text", "text"),
    "hooks status": ("json", "text"),
    "ingest": ("json", "json"),
    "query": ("both", "both"),
    "context pack": ("both", "both"),
    "memory wrap": ("json", "text"),
    "memory recall": ("both", "both"),
    "memory promote": ("json", "text"),
    "migrate from-json-store": ("json", "text"),
    "migrate from-sqlitevss": ("json", "text"),
    "status": ("json", "text"),
    "doctor": ("text", "text"),
    "session search": ("both", "both"),
    "eval run": ("both", "both"),
    # the MCP server owns stdout for protocol messages: start-up failures go to stderr
    "mcp": ("json", "text"),
}


def defaults_for(command: str, *, terminal: bool = False) -> tuple[str, str]:
    """(success, failure) format when no ``--format`` is given (cli-contract §1.1).

    On a terminal every command renders ``text``, so a person sees one rendering and an error
    prints once; piped or redirected (agents, scripts) the table's defaults apply, and every
    [ours] extension command defaults to json for success and failure.
    """
    if terminal:
        return ("text", "text")
    return DEFAULT_FORMATS.get(command, ("json", "json"))


def _positionals(argv: list[str]) -> list[int]:
    """Indices of positional tokens before ``--``."""
    out: list[int] = []
    i = 0
    while i < len(argv):
        tok = argv[i]
        if tok == "--":
            break
        if tok.startswith("-") and tok != "-":
            if "=" not in tok and tok in VALUE_OPTIONS:
                i += 1
        else:
            out.append(i)
        i += 1
    return out


def command_path(argv: list[str]) -> list[str]:
    """The command words: the first positional, plus the second when the first is a group."""
    pos = _positionals(argv)
    if not pos:
        return []
    words = [argv[pos[0]]]
    if words[0] in GROUPS and len(pos) > 1:
        words.append(argv[pos[1]])
    return words


def reorder(argv: list[str]) -> list[str]:
    """Move the command words to the front so click sees ``<group> <command> <options...>``."""
    pos = _positionals(argv)
    if not pos:
        return list(argv)
    take = [pos[0]]
    if argv[pos[0]] in GROUPS and len(pos) > 1:
        take.append(pos[1])
    return [argv[i] for i in take] + [tok for i, tok in enumerate(argv) if i not in take]


def raw_option(argv: list[str], names: tuple[str, ...]) -> str | None:
    """The last value of an option (``--x v`` or ``--x=v``) before ``--``."""
    found: str | None = None
    i = 0
    while i < len(argv):
        tok = argv[i]
        if tok == "--":
            break
        for name in names:
            if tok == name and i + 1 < len(argv):
                found = argv[i + 1]
                i += 1
                break
            if tok.startswith(name + "="):
                found = tok[len(name) + 1 :]
                break
        i += 1
    return found
