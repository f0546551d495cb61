"""Where and how each agent client reads its configuration (the documented formats; the doc
of each is cited in ``docs/clients/<client>.md``).

Each client and scope maps to a list of :class:`FileSpec`: one file, its format and the edits
setup makes in it. Nothing here touches the disk.
"""

from __future__ import annotations

import os
import shlex
import shutil
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..gate.check import EDIT_TOOLS
from .guidance import section

CLIENTS = ("claude-code", "codex", "cursor", "opencode", "vscode")
CLIENT_ALIASES = {"claude": "claude-code", "codex-cli": "codex", "vs-code": "vscode", "code": "vscode"}
SCOPES = ("project", "user")
SERVER_NAME = "ragit"
OPENCODE_SCHEMA = "https://opencode.ai/config.json"

# Claude Code hook events and the `ragit.cli.hook` event each one runs (docs/clients/claude-code.md).
CLAUDE_HOOKS = (
    ("SessionStart", "session-start", None, 60),
    ("PreToolUse", "gate", "|".join(EDIT_TOOLS), 10),  # ragit gate (knowledge §22.4)
    ("PostToolUse", "post-tool-use", "*", 30),
    ("PreCompact", "pre-compact", None, 60),
    ("Stop", "stop", None, 60),
)


@dataclass(frozen=True)
class FileSpec:
    """One file setup edits: ``kind`` json | toml | md; ``ops`` what to put in it;
    ``skeleton`` the text a missing file starts from."""

    path: Path
    kind: str
    ops: tuple[tuple[Any, ...], ...]
    skeleton: str = ""


@dataclass
class ClientPlan:
    files: list[FileSpec]
    warnings: list[str] = field(default_factory=list)


def ragit_command() -> list[str]:
    """How a client should start ragit: the ``ragit`` launcher next to this interpreter (a venv
    or pipx install), else the one on PATH, else ``python -m ragit``. Absolute, because GUI
    clients do not see the shell's PATH."""
    python = Path(os.path.abspath(sys.executable))
    launcher = python.parent / ("ragit.exe" if os.name == "nt" else "ragit")
    if launcher.is_file():
        return [str(launcher)]
    found = shutil.which("ragit")
    if found:
        return [os.path.abspath(found)]
    return [str(python), "-m", "ragit"]


def hook_command(event: str, root: Path) -> str:
    """The shell command of one Claude Code hook: this interpreter running ``ragit.cli.hook``, or
    ``ragit gate`` (reached without click, so the check before every edit stays fast)."""
    python = os.path.abspath(sys.executable)
    if event == "gate":  # the console launcher when there is one: no runpy, no ragit.cli.hook
        command = " ".join(shlex.quote(part) for part in ragit_command())
        return f"{command} gate --cwd {shlex.quote(str(root))}"
    return f"{shlex.quote(python)} -m ragit.cli.hook {event} --cwd {shlex.quote(str(root))}"


def config_home(env: dict[str, str], home: Path) -> Path:
    """``$XDG_CONFIG_HOME`` when set (absolute), else ``~/.config`` (OpenCode, VS Code on Linux)."""
    xdg = env.get("XDG_CONFIG_HOME", "")
    return Path(xdg) if xdg and os.path.isabs(xdg) else home / ".config"


def vscode_user_dir(env: dict[str, str], home: Path) -> Path:
    """VS Code's default-profile ``User`` folder, where its user ``mcp.json`` lives."""
    if sys.platform == "darwin":
        return home / "Library" / "Application Support" / "Code" / "User"
    if os.name == "nt":
        appdata = env.get("APPDATA")
        return (Path(appdata) if appdata else home / "AppData" / "Roaming") / "Code" / "User"
    return config_home(env, home) / "Code" / "User"


def _opencode_file(directory: Path) -> Path:
    """``opencode.json``, or an existing ``opencode.jsonc`` when there is no ``.json``."""
    plain, jsonc = directory / "opencode.json", directory / "opencode.jsonc"
    return jsonc if jsonc.exists() and not plain.exists() else plain


def _json(path: Path, *ops: tuple[Any, ...], skeleton: dict[str, Any] | None = None) -> FileSpec:
    import json

    start = json.dumps(skeleton or {}, indent=2) + "\n"
    return FileSpec(path, "json", tuple(ops), start)


def _md(path: Path, root: Path, scope: str) -> FileSpec:
    return FileSpec(path, "md", (("section", section(root, scope)),))


def client_files(client: str, scope: str, root: Path, home: Path, env: dict[str, str]) -> ClientPlan:
    """The files ``ragit setup <client> --scope <scope>`` writes for the repository at ``root``."""
    command = ragit_command()
    args = [*command[1:], "mcp", "--cwd", str(root)]
    stdio = {"command": command[0], "args": args}
    project = scope == "project"
    warnings: list[str] = []
    files: list[FileSpec]
    if client == "claude-code":
        entry = {"type": "stdio", **stdio, "env": {}}
        settings_ops = []
        for event, name, matcher, timeout in CLAUDE_HOOKS:
            group: dict[str, Any] = {} if matcher is None else {"matcher": matcher}
            group["hooks"] = [{"type": "command", "command": hook_command(name, root), "timeout": timeout}]
            settings_ops.append(("element", ["hooks", event], group))
        if project:
            files = [_json(root / ".mcp.json", ("member", ["mcpServers", SERVER_NAME], entry)),
                     _json(root / ".claude" / "settings.json", *settings_ops),
                     _md(root / "AGENTS.md", root, scope), _md(root / "CLAUDE.md", root, scope)]
        else:
            files = [_json(home / ".claude.json", ("member", ["mcpServers", SERVER_NAME], entry)),
                     _json(home / ".claude" / "settings.json", *settings_ops),
                     _md(home / ".claude" / "CLAUDE.md", root, scope)]
    elif client == "codex":
        codex_home = Path(env["CODEX_HOME"]) if env.get("CODEX_HOME") else home / ".codex"
        base = root / ".codex" if project else codex_home
        table = ("table", ["mcp_servers", SERVER_NAME], stdio)
        files = [FileSpec(base / "config.toml", "toml", (table,)),
                 _md(root / "AGENTS.md" if project else codex_home / "AGENTS.md", root, scope)]
        if project:
            warnings.append(f"Codex reads .codex/config.toml only in a trusted project (it asks on first start; "
                            f"or set [projects.\"{root}\"] trust_level = \"trusted\" in ~/.codex/config.toml)")
    elif client == "cursor":
        base = root / ".cursor" if project else home / ".cursor"
        files = [_json(base / "mcp.json", ("member", ["mcpServers", SERVER_NAME], stdio))]
        if project:
            files.append(_md(root / "AGENTS.md", root, scope))
        else:
            warnings.append("Cursor keeps user rules in its settings, not in a file: no usage section written "
                            "(run `ragit setup cursor` for the project's AGENTS.md)")
    elif client == "opencode":
        base = root if project else config_home(env, home) / "opencode"
        entry = {"type": "local", "command": [command[0], *args], "enabled": True}
        files = [_json(_opencode_file(base), ("member", ["mcp", SERVER_NAME], entry),
                       skeleton={"$schema": OPENCODE_SCHEMA}),
                 _md(base / "AGENTS.md", root, scope)]
    elif client == "vscode":
        base = root / ".vscode" if project else vscode_user_dir(env, home)
        files = [_json(base / "mcp.json", ("member", ["servers", SERVER_NAME], {"type": "stdio", **stdio}))]
        if project:
            files.append(_md(root / "AGENTS.md", root, scope))
        else:
            warnings.append("VS Code reads AGENTS.md from the workspace only: no usage section written "
                            "(run `ragit setup vscode` for the project's AGENTS.md)")
    else:  # pragma: no cover - the command validates the name first
        raise ValueError(client)
    return ClientPlan(files, warnings)
