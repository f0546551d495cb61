"""``ragit setup <client>`` (cli-contract §12) against real files in temporary directories.

Every written client file is checked against that client's documented schema
(``tests/fixtures/setup/*.schema.json``, each citing its source), re-runs are idempotent, a dry
run writes nothing and prints exactly what a real run writes, and ``--uninstall`` brings every
file back byte for byte (pre-existing files with other entries included). ``HOME`` is a temp
directory (tests/conftest.py), so user scope never touches the real home.
"""

from __future__ import annotations

import json
import os
import stat
import subprocess
import sys
import tomllib
from pathlib import Path

import jsonschema
import pytest
from conftest import write_placeholder_config

from ragit.setup.clients import CLAUDE_HOOKS, CLIENTS, vscode_user_dir
from ragit.setup.jsonedit import parse

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "setup"
SCOPES = ("project", "user")
MATRIX = [(c, s) for c in CLIENTS for s in SCOPES]


@pytest.fixture(autouse=True)
def _client_env(monkeypatch):
    for key in ("XDG_CONFIG_HOME", "CODEX_HOME", "APPDATA"):
        monkeypatch.delenv(key, raising=False)


@pytest.fixture
def home() -> Path:
    return Path(os.environ["HOME"])


def schema(name: str) -> dict:
    return json.loads((FIXTURES / f"{name}.schema.json").read_text(encoding="utf-8"))


def validate(document, name: str) -> None:
    jsonschema.validate(document, schema(name))


def jsonc(path: Path):
    """A JSON or JSONC file's value (VS Code and OpenCode accept comments and trailing commas)."""
    return parse(path.read_text(encoding="utf-8")).value


def snapshot(*dirs: Path) -> dict[str, bytes | None]:
    """Every file (bytes) and directory (None) under ``dirs``; the Git internals except ragit's."""
    out: dict[str, bytes | None] = {}
    for base in dirs:
        for dirpath, dirnames, filenames in os.walk(base):
            rel = Path(dirpath).relative_to(base)
            if rel.parts[:1] == (".git",) and rel.parts[1:2] != ("ragit",) and len(rel.parts) > 1:
                continue
            for name in dirnames:
                out[str(base / rel / name)] = None
            for name in filenames:
                path = Path(dirpath) / name
                if rel.parts[:1] == (".git",) and len(rel.parts) == 1:
                    continue
                out[str(path)] = path.read_bytes()
    return out


def run(cli, repo, *args: str):
    r = cli("setup", *args, "--cwd", str(repo.root), "--format", "json")
    return r


def paths_for(client: str, scope: str, root: Path, home: Path) -> dict[str, Path]:
    """Where each client documents its files (docs/clients/<client>.md)."""
    project = scope == "project"
    if client == "claude-code":
        return {"mcp": root / ".mcp.json" if project else home / ".claude.json",
                "settings": (root if project else home) / ".claude" / "settings.json",
                "md": root / "CLAUDE.md" if project else home / ".claude" / "CLAUDE.md"}
    if client == "codex":
        base = root / ".codex" if project else home / ".codex"
        return {"mcp": base / "config.toml", "md": root / "AGENTS.md" if project else base / "AGENTS.md"}
    if client == "cursor":
        return {"mcp": (root if project else home) / ".cursor" / "mcp.json"}
    if client == "opencode":
        base = root if project else home / ".config" / "opencode"
        return {"mcp": base / "opencode.json", "md": base / "AGENTS.md"}
    return {"mcp": root / ".vscode" / "mcp.json" if project else vscode_user_dir({}, home) / "mcp.json"}


def server_argv(client: str, path: Path) -> list[str]:
    """The command line each client would start for ragit's MCP server."""
    if client == "codex":
        entry = tomllib.loads(path.read_text(encoding="utf-8"))["mcp_servers"]["ragit"]
        return [entry["command"], *entry["args"]]
    doc = jsonc(path)
    if client == "opencode":
        return doc["mcp"]["ragit"]["command"]
    entry = (doc["servers"] if client == "vscode" else doc["mcpServers"])["ragit"]
    return [entry["command"], *entry["args"]]


# ------------------------------------------------------------------ schemas

@pytest.mark.parametrize("client,scope", MATRIX)
def test_written_files_follow_each_clients_documented_schema(cli, git_repo, home, client, scope):
    r = run(cli, git_repo, client, "--scope", scope)
    assert r.code == 0, r
    data = r.json["data"]
    assert data["client"] == client and data["scope"] == scope and data["dryRun"] is False
    assert r.json["warnings"] == data["warnings"]
    assert all(f["action"] == "create" for f in data["files"]), data["files"]
    where = paths_for(client, scope, git_repo.root, home)
    mcp = where["mcp"]
    if client == "claude-code":
        validate(jsonc(mcp), "claude-code-mcp")
        settings = jsonc(where["settings"])
        validate(settings, "claude-code-settings")
        for event, name, matcher, _ in CLAUDE_HOOKS:
            (group,) = settings["hooks"][event]
            assert group.get("matcher") == matcher
            expected = " gate --cwd " if name == "gate" else f" -m ragit.cli.hook {name} --cwd "
            assert expected in group["hooks"][0]["command"]
    elif client == "codex":
        validate(tomllib.loads(mcp.read_text(encoding="utf-8")), "codex-mcp")
    elif client == "cursor":
        validate(jsonc(mcp), "cursor-mcp")
    elif client == "opencode":
        doc = jsonc(mcp)
        validate(doc, "opencode-mcp")
        assert doc["$schema"] == "https://opencode.ai/config.json" and doc["mcp"]["ragit"]["enabled"] is True
    else:
        validate(jsonc(mcp), "vscode-mcp")
    argv = server_argv(client, mcp)
    assert argv[-3:] == ["mcp", "--cwd", str(git_repo.root)] and os.path.isabs(argv[0])
    if "md" in where:
        text = where["md"].read_text(encoding="utf-8")
        assert text.startswith("<!-- ragit:begin") and text.endswith("<!-- ragit:end -->\n")
        assert "`query`" in text and "`memory_recall`" in text and "`verify_citation`" in text
        assert (str(git_repo.root) in text) == (scope == "user")
    if client == "claude-code" and scope == "project":
        agents = (git_repo.root / "AGENTS.md").read_text(encoding="utf-8")
        assert agents == where["md"].read_text(encoding="utf-8")
    shown = {f["path"] for f in data["files"]}
    assert any(p.endswith(f"ragit/setup/{client}-{scope}.json") for p in shown)


def test_the_mcp_entry_starts_the_real_server(cli, git_repo, home):
    """The command Claude Code would start answers the MCP handshake for this repository."""
    assert run(cli, git_repo, "claude-code").code == 0
    argv = server_argv("claude-code", git_repo.root / ".mcp.json")
    hello = {"jsonrpc": "2.0", "id": 1, "method": "initialize",
             "params": {"protocolVersion": "2025-06-18", "capabilities": {},
                        "clientInfo": {"name": "test", "version": "0"}}}
    proc = subprocess.run(argv, input=json.dumps(hello) + "\n", capture_output=True, text=True, timeout=60)
    first = json.loads(proc.stdout.splitlines()[0])
    assert first["id"] == 1 and first["result"]["serverInfo"]["name"]


# ------------------------------------------------------------------ idempotence and dry run

@pytest.mark.parametrize("client,scope", MATRIX)
def test_rerun_is_idempotent(cli, git_repo, home, client, scope):
    assert run(cli, git_repo, client, "--scope", scope).code == 0
    before = snapshot(git_repo.root, home)
    again = run(cli, git_repo, client, "--scope", scope)
    assert again.code == 0, again
    assert {f["action"] for f in again.json["data"]["files"]} == {"unchanged"}
    assert snapshot(git_repo.root, home) == before


@pytest.mark.parametrize("client,scope", MATRIX)
def test_dry_run_writes_nothing_and_shows_exactly_what_a_run_writes(cli, git_repo, home, client, scope):
    (git_repo.root / "AGENTS.md").write_text("# Rules\n\nBe kind.\n", encoding="utf-8")
    before = snapshot(git_repo.root, home)
    dry = run(cli, git_repo, client, "--scope", scope, "--dry-run")
    assert dry.code == 0, dry
    assert dry.json["data"]["dryRun"] is True
    assert snapshot(git_repo.root, home) == before
    planned = {f["path"]: f for f in dry.json["data"]["files"]}
    real = run(cli, git_repo, client, "--scope", scope)
    assert real.code == 0
    assert [(f["path"], f["action"]) for f in real.json["data"]["files"]] == \
        [(p, f["action"]) for p, f in planned.items()]
    for shown, entry in planned.items():
        path = Path(shown) if os.path.isabs(shown) else git_repo.root / shown
        assert path.read_text(encoding="utf-8") == entry["content"], shown


def test_claude_code_dry_run_text_prints_every_file_it_would_write(cli, git_repo, home):
    r = cli("setup", "claude-code", "--dry-run", "--cwd", str(git_repo.root), "--format", "text")
    assert r.code == 0 and r.err == ""
    assert not (git_repo.root / ".mcp.json").exists() and not (git_repo.root / ".git" / "ragit").exists()
    assert r.out.startswith("# ragit setup\n- client: claude-code\n- scope: project\n- dry_run: true\n")
    data = run(cli, git_repo, "claude-code", "--dry-run").json["data"]
    for f in data["files"]:
        assert f"- create {f['path']}\n" in r.out
        assert f"## {f['path']} (create)\n{f['content']}" in r.out


# ------------------------------------------------------------------ uninstall

def _existing(root: Path, home: Path) -> None:
    """Client files with other entries, odd layouts, comments, CRLF, no final newline, a 0600 mode."""
    files = {
        root / ".mcp.json": '{\n    "mcpServers": {\n        "db": {"command": "db-mcp"}\n    }\n}',
        root / ".claude" / "settings.json": json.dumps(
            {"permissions": {"allow": ["Bash(ls:*)"]},
             "hooks": {"PostToolUse": [{"matcher": "Write", "hooks": [{"type": "command", "command": "fmt"}]}]}},
            indent=2) + "\n",
        root / "AGENTS.md": "# Rules\r\n\r\nUse tabs.\r\n",
        root / "CLAUDE.md": "Read AGENTS.md first.",
        root / ".codex" / "config.toml": 'model = "o3"  # fast\n\n[mcp_servers.docs]\ncommand = "docs"\nargs = []\n',
        root / ".cursor" / "mcp.json": '{"mcpServers": {}}\n',
        root / "opencode.jsonc": '{\n  // team config\n  "$schema": "https://opencode.ai/config.json",\n'
                                 '  "mcp": {\n    "search": {"type": "remote", "url": "https://x.test/mcp",},\n  },\n}\n',
        root / ".vscode" / "mcp.json": '{\r\n\t// servers\r\n\t"servers": {},\r\n\t"inputs": []\r\n}\r\n',
        home / ".claude.json": '{"numStartups": 3, "projects": {"/p": {"mcpServers": {}}}, "mcpServers": {"a": '
                               '{"command": "a"}}}',
        home / ".claude" / "settings.json": '{\n  "model": "opus"\n}\n',
        home / ".claude" / "CLAUDE.md": "# Me\n",
        home / ".codex" / "config.toml": '[projects."/p"]\ntrust_level = "trusted"\n',
        home / ".codex" / "AGENTS.md": "Always answer briefly.\n\n",
        home / ".cursor" / "mcp.json": '{\n  "mcpServers": {\n    "ragit": {"command": "old-ragit", "args": []}\n  }\n}\n',
        home / ".config" / "opencode" / "opencode.json": '{"theme": "dark"}\n',
        vscode_user_dir({}, home) / "mcp.json": '{\n  "servers": {\n    "gh": {"type": "http", "url": "https://gh.test"}\n  }\n}\n',
    }
    for path, text in files.items():
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(text.encode("utf-8"))
    os.chmod(home / ".claude.json", 0o600)


@pytest.mark.parametrize("client,scope", MATRIX)
def test_uninstall_restores_every_file_byte_for_byte(cli, git_repo, home, client, scope):
    _existing(git_repo.root, home)
    before = snapshot(git_repo.root, home)
    r = run(cli, git_repo, client, "--scope", scope)
    assert r.code == 0, r
    assert "update" in {f["action"] for f in r.json["data"]["files"]}
    where = paths_for(client, scope, git_repo.root, home)
    if client == "opencode" and scope == "project":
        where["mcp"] = git_repo.root / "opencode.jsonc"  # the existing JSONC file is edited, not shadowed
    assert server_argv(client, where["mcp"])[-3:] == ["mcp", "--cwd", str(git_repo.root)]
    if client == "claude-code" and scope == "user":
        doc = jsonc(home / ".claude.json")
        assert doc["mcpServers"]["a"] == {"command": "a"} and doc["numStartups"] == 3
        assert stat.S_IMODE((home / ".claude.json").stat().st_mode) == 0o600
    if client == "claude-code" and scope == "project":
        hooks = jsonc(git_repo.root / ".claude" / "settings.json")["hooks"]["PostToolUse"]
        assert hooks[0]["matcher"] == "Write" and hooks[1]["matcher"] == "*"
        assert (git_repo.root / "AGENTS.md").read_bytes().count(b"\r\n") == (git_repo.root / "AGENTS.md").read_bytes().count(b"\n")
    undo = run(cli, git_repo, client, "--scope", scope, "--uninstall")
    assert undo.code == 0, undo
    assert undo.json["data"]["files"][-1]["action"] == "remove"
    assert snapshot(git_repo.root, home) == before
    assert not (git_repo.root / ".git" / "ragit").exists()
    assert stat.S_IMODE((home / ".claude.json").stat().st_mode) == 0o600


@pytest.mark.parametrize("client,scope", MATRIX)
def test_uninstall_of_created_files_leaves_no_trace(cli, git_repo, home, client, scope):
    before = snapshot(git_repo.root, home)
    assert run(cli, git_repo, client, "--scope", scope).code == 0
    dry = run(cli, git_repo, client, "--scope", scope, "--uninstall", "--dry-run")
    assert {f["action"] for f in dry.json["data"]["files"]} == {"remove"}
    assert snapshot(git_repo.root, home) != before
    assert run(cli, git_repo, client, "--scope", scope, "--uninstall").code == 0
    assert snapshot(git_repo.root, home) == before


def test_every_client_shares_agents_md_and_the_last_uninstall_removes_the_section(cli, git_repo, home):
    _existing(git_repo.root, home)
    before = snapshot(git_repo.root, home)
    for client in CLIENTS:
        assert run(cli, git_repo, client).code == 0
    assert (git_repo.root / "AGENTS.md").read_text(encoding="utf-8").count("<!-- ragit:begin") == 1
    for client in ("codex", "claude-code", "vscode", "cursor"):
        r = run(cli, git_repo, client, "--uninstall")
        assert r.code == 0
        assert "ragit:begin" in (git_repo.root / "AGENTS.md").read_text(encoding="utf-8")
        assert any("AGENTS.md: ragit section kept" in w for w in r.json["data"]["warnings"])
    assert run(cli, git_repo, "opencode", "--uninstall").code == 0
    assert snapshot(git_repo.root, home) == before


def test_uninstall_keeps_edits_made_after_setup(cli, git_repo, home):
    _existing(git_repo.root, home)
    assert run(cli, git_repo, "cursor").code == 0
    mcp = git_repo.root / ".cursor" / "mcp.json"
    doc = jsonc(mcp)
    doc["mcpServers"]["later"] = {"command": "later-mcp"}
    mcp.write_text(json.dumps(doc, indent=2) + "\n", encoding="utf-8")
    agents = git_repo.root / "AGENTS.md"
    agents.write_text(agents.read_text(encoding="utf-8") + "\nAdded later.\n", encoding="utf-8")
    r = run(cli, git_repo, "cursor", "--uninstall")
    assert r.code == 0, r
    assert jsonc(mcp) == {"mcpServers": {"later": {"command": "later-mcp"}}}
    text = agents.read_text(encoding="utf-8")
    assert "ragit:begin" not in text and text.startswith("# Rules") and text.endswith("Added later.\n")


def test_a_replaced_entry_comes_back_on_uninstall(cli, git_repo, home):
    _existing(git_repo.root, home)
    original = (home / ".cursor" / "mcp.json").read_bytes()
    assert run(cli, git_repo, "cursor", "--scope", "user").code == 0
    entry = jsonc(home / ".cursor" / "mcp.json")["mcpServers"]["ragit"]
    assert entry["args"][-3:] == ["mcp", "--cwd", str(git_repo.root)]
    assert run(cli, git_repo, "cursor", "--scope", "user", "--uninstall").code == 0
    assert (home / ".cursor" / "mcp.json").read_bytes() == original


def test_rerun_updates_in_place_after_the_section_changed(cli, git_repo, home):
    agents = git_repo.root / "AGENTS.md"
    agents.write_text("# Rules\n", encoding="utf-8")
    assert run(cli, git_repo, "codex").code == 0
    text = agents.read_text(encoding="utf-8")
    agents.write_text(text.replace("call `query`", "call `query` (edited)") + "\n## After\n", encoding="utf-8")
    r = run(cli, git_repo, "codex")
    assert r.code == 0
    fixed = agents.read_text(encoding="utf-8")
    assert fixed == text + "\n## After\n"  # replaced where it was, the later heading kept after it


def test_uninstall_without_setup_changes_nothing(cli, git_repo, home):
    before = snapshot(git_repo.root, home)
    r = run(cli, git_repo, "vscode", "--uninstall")
    assert r.code == 0 and r.json["data"]["files"] == []
    assert "nothing to remove" in r.json["data"]["warnings"][0]
    assert snapshot(git_repo.root, home) == before


def test_setup_outside_git_keeps_its_record_under_dot_ragit(cli, tmp_path, home):
    plain = tmp_path / "plain"
    plain.mkdir()
    r = cli("setup", "cursor", "--cwd", str(plain), "--format", "json")
    assert r.code == 0, r
    assert (plain / ".ragit" / "setup" / "cursor-project.json").is_file()
    assert cli("setup", "cursor", "--uninstall", "--cwd", str(plain), "--format", "json").code == 0
    assert sorted(p.name for p in plain.iterdir()) == []


# ------------------------------------------------------------------ typed errors

@pytest.mark.parametrize("args,field,reason", [
    (("windsurf",), "client", "not_one_of"),
    ((), "client", "required"),
    (("cursor", "--scope", "global"), "--scope", "not_one_of"),
])
def test_bad_input_is_a_typed_error_and_writes_nothing(cli, git_repo, home, args, field, reason):
    before = snapshot(git_repo.root, home)
    r = run(cli, git_repo, *args)
    assert r.code == 2, r
    error = r.json["error"]
    assert error["code"] == "INPUT_INVALID" and error["details"]["field"] == field
    assert error["details"]["reason"] == reason
    assert snapshot(git_repo.root, home) == before


def test_client_names_are_case_insensitive_with_aliases(cli, git_repo, home):
    r = run(cli, git_repo, "Claude", "--dry-run")
    assert r.code == 0 and r.json["data"]["client"] == "claude-code"


@pytest.mark.parametrize("relpath,text,reason", [
    (".cursor/mcp.json", '{"mcpServers": {', "invalid_json"),
    (".cursor/mcp.json", '{"mcpServers": []}', "unexpected_type"),
    (".cursor/mcp.json", '["not", "an", "object"]', "not_an_object"),
    (".codex/config.toml", "model = \n", "invalid_toml"),
    (".codex/config.toml", "[mcp_servers]\nragit = { command = \"x\" }\n", "unsupported_layout"),
])
def test_an_unreadable_client_file_fails_before_anything_is_written(cli, git_repo, home, relpath, text, reason):
    (git_repo.root / "AGENTS.md").write_text("# Rules\n", encoding="utf-8")
    target = git_repo.root / relpath
    target.parent.mkdir(parents=True)
    target.write_text(text, encoding="utf-8")
    before = snapshot(git_repo.root, home)
    client = "cursor" if "cursor" in relpath else "codex"
    r = run(cli, git_repo, client)
    assert r.code == 4, r
    assert r.json["error"]["code"] == "CONFIG_INVALID"
    assert r.json["error"]["details"] == {"path": relpath, "reason": reason}
    assert snapshot(git_repo.root, home) == before


def test_describe_setup_matches_the_command(cli):
    spec = cli("describe", "setup").json["data"]["spec"]
    assert spec["mutating"] and spec["supportsDryRun"]
    assert [o["name"] for o in spec["options"]] == ["--scope", "--dry-run", "--uninstall", "--format", "--cwd"]
    assert spec["arguments"][0]["name"] == "client"


# ------------------------------------------------------------------ Claude Code hooks

def hook(root: Path, event: str, payload, home: Path) -> subprocess.CompletedProcess:
    """Run a hook exactly as Claude Code does: the command from settings.json, JSON on stdin."""
    settings = jsonc(root / ".claude" / "settings.json")
    name = {n: e for e, n, _, _ in CLAUDE_HOOKS}[event]
    command = settings["hooks"][name][0]["hooks"][0]["command"]
    env = {**os.environ, "HOME": str(home)}
    body = payload if isinstance(payload, str) else json.dumps(payload)
    return subprocess.run(command, shell=True, input=body, capture_output=True, text=True, env=env, timeout=120)


def _claude_transcript(path: Path, session: str) -> None:
    lines = [
        {"type": "user", "sessionId": session, "timestamp": "2026-03-08T10:00:00.000Z", "uuid": "u1",
         "message": {"role": "user", "content": "Finish the refresh-token migration"}},
        {"type": "assistant", "sessionId": session, "timestamp": "2026-03-08T10:00:05.000Z", "uuid": "a1",
         "message": {"id": "m1", "role": "assistant", "content": [{"type": "text", "text": "Reading auth.py."},
                                                                   {"type": "tool_use", "id": "toolu_1",
                                                                    "name": "Read", "input": {}}]}},
        {"type": "user", "sessionId": session, "timestamp": "2026-03-08T10:00:06.000Z", "uuid": "u2",
         "message": {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "toolu_1",
                                                  "content": "def refresh(): ..."}]}},
        {"type": "assistant", "sessionId": session, "timestamp": "2026-03-08T10:01:00.000Z", "uuid": "a2",
         "message": {"id": "m2", "role": "assistant",
                     "content": [{"type": "text", "text": "Migration done; tests for expiry still missing."}]}},
    ]
    path.write_text("".join(json.dumps(line) + "\n" for line in lines), encoding="utf-8")


@pytest.fixture
def hooked(cli, git_repo, home):
    write_placeholder_config(git_repo.root)
    git_repo.commit("init", {"README.md": "# Demo\n\nAuth uses refresh tokens.\n"})
    assert run(cli, git_repo, "claude-code").code == 0
    return git_repo


def test_stop_and_pre_compact_hooks_wrap_the_session(hooked, home, tmp_path):
    root = hooked.root
    working = root / ".ragit" / "memory" / "working"
    working.mkdir(parents=True)
    (working / "current.json").write_text(json.dumps({
        "goal": "g", "summary": "s", "constraints": ["keep the API"],
        "openLoops": [{"id": "l1", "title": "Write expiry tests", "status": "open", "nextAction": "add tests",
                       "blockingConditions": [], "relatedFiles": [], "sourceSessionId": "x"}],
        "decisions": [], "nextActions": ["run tests"]}), encoding="utf-8")
    transcript = tmp_path / "session.jsonl"
    _claude_transcript(transcript, "s-1")
    payload = {"session_id": "s-1", "transcript_path": str(transcript), "cwd": str(root),
               "hook_event_name": "Stop", "stop_hook_active": False}
    done = hook(root, "stop", payload, home)
    assert done.returncode == 0 and done.stdout == ""
    current = json.loads((working / "current.json").read_text(encoding="utf-8"))
    assert current["goal"] == "Finish the refresh-token migration"
    assert current["summary"].startswith("Migration done; tests for expiry still missing.")
    assert current["openLoops"][0]["title"] == "Write expiry tests" and current["constraints"] == ["keep the API"]
    sessions = sorted((root / ".ragit" / "memory" / "sessions").glob("*.json"))
    assert len(sessions) == 1
    payload["hook_event_name"] = "PreCompact"
    assert hook(root, "pre-compact", payload, home).returncode == 0
    assert sorted((root / ".ragit" / "memory" / "sessions").glob("*.json")) == sessions  # one record per session


def test_session_start_hook_injects_memory_recall(hooked, home, tmp_path):
    root = hooked.root
    transcript = tmp_path / "session.jsonl"
    _claude_transcript(transcript, "s-2")
    hook(root, "stop", {"session_id": "s-2", "transcript_path": str(transcript), "cwd": str(root)}, home)
    started = hook(root, "session-start", {"session_id": "s-3", "source": "startup", "cwd": str(root)}, home)
    assert started.returncode == 0, started.stderr
    out = json.loads(started.stdout)["hookSpecificOutput"]
    assert out["hookEventName"] == "SessionStart"
    assert out["additionalContext"].startswith("# ragit memory recall")
    assert "Finish the refresh-token migration" in out["additionalContext"]


def test_post_tool_use_hook_offloads_a_large_result_with_its_ref_id(hooked, home, cli):
    root = hooked.root
    big = {"stdout": "line of build output\n" * 4000, "stderr": "", "interrupted": False}
    payload = {"session_id": "sess-9", "cwd": str(root), "hook_event_name": "PostToolUse", "tool_name": "Bash",
               "tool_input": {"command": "make"}, "tool_response": big, "tool_use_id": "toolu_01ABC"}
    done = hook(root, "post-tool-use", payload, home)
    assert done.returncode == 0, done.stderr
    out = json.loads(done.stdout)["hookSpecificOutput"]
    stub = json.loads(out["updatedToolOutput"])
    assert stub["_offloaded"] is True and stub["_ref_id"] == "toolu_01ABC" and stub["_original_tokens"] > 15000
    assert "toolu_01ABC" in out["additionalContext"] and "sess-9" in out["additionalContext"]
    recalled = cli("window", "recall", "toolu_01ABC", "--session", "sess-9", "--cwd", str(root), "--format", "json")
    assert recalled.code == 0 and recalled.json["data"] == big
    small = dict(payload, tool_response={"stdout": "ok"}, tool_use_id="toolu_02")
    quiet = hook(root, "post-tool-use", small, home)
    assert quiet.returncode == 0 and quiet.stdout == ""
    assert not (root / ".ragit" / "cache" / "tool-offload" / "sess-9" / "toolu_02.json").exists()


@pytest.mark.parametrize("event,payload", [
    ("stop", "not json"),
    ("session-start", "[1, 2]"),
    ("post-tool-use", {"session_id": "../escape", "tool_use_id": "t", "tool_response": "x" * 100000}),
    ("stop", {"transcript_path": "/does/not/exist.jsonl"}),
    ("session-start", {"cwd": "/somewhere/else"}),
])
def test_a_hook_never_fails_the_session(hooked, home, event, payload):
    done = hook(hooked.root, event, payload, home)
    assert done.returncode == 0 and done.stdout == ""


def test_hook_entry_point_ignores_bad_arguments():
    for args in ([], ["nope", "--cwd", "/tmp"], ["stop"]):
        done = subprocess.run([sys.executable, "-m", "ragit.cli.hook", *args], input="{}", capture_output=True,
                              text=True, timeout=60)
        assert done.returncode == 0 and done.stdout == ""


# ------------------------------------------------------------------ edits keep any layout

LAYOUTS = [
    "{}", "{ }", "{\n}\n", '{"a":1}', '{\n  "a": 1\n}\n', '{\n    "mcpServers": {}\n}',
    '{\n\t"mcpServers": {\n\t\t"x": {"command": "y"}\n\t}\n}\n',
    '{\r\n  "a": 1,\r\n  "mcpServers": {\r\n    "x": 1\r\n  }\r\n}\r\n',
    '{\n  // team\n  "mcpServers": { /* none yet */ },\n}\n', '{"mcpServers": {"x": 1,}, }',
    '{"hooks": {"Stop": [ ]}, "z": null}', '{"hooks": { }}', '\ufeff{"a": "\\u00e9"}',
    '{"mcpServers": {"ragit": {"command": "old"}}}',
]


@pytest.mark.parametrize("text", LAYOUTS)
@pytest.mark.parametrize("edit,path", [("member", ["mcpServers", "ragit"]), ("element", ["hooks", "Stop"])])
def test_an_edit_is_undone_exactly_from_its_splice_and_from_its_op(text, edit, path):
    """The splice restores the bytes; removing by op (the path for files edited since) gives the
    same text too: spacing, comments and a replaced entry come back."""
    from ragit.setup import jsonedit

    value = {"command": "ragit", "args": ["mcp", "--cwd", "/repo"]}
    splice, op = (jsonedit.set_member if edit == "member" else jsonedit.append_element)(text, path, value)
    new = splice.apply(text)
    node = jsonedit.lookup(jsonedit.parse(new), path)
    assert node.value == value if edit == "member" else value in node.value
    if "\r\n" in text:
        assert new.count("\n") == new.count("\r\n")
    assert splice.invert(new) == text
    assert jsonedit.remove_op(new, op) == (text, None)
