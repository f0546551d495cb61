"""No planted secret survives anywhere ragit writes or prints (knowledge §10.2; issue 14).

Every positive case of the leak corpus (tests/fixtures/secrets/corpus.jsonl) is committed into
a repository in its framing (code, JSON, YAML, .env, Markdown, transcript lines), and a sample
of them is also fed through every other way in: questions and goals, packets, memory wrap and
promote, artifact capture, a mirrored transcript, an offloaded tool result, window compact, MCP
tool calls and invalid inputs whose errors echo the value. Then every file under ``.ragit/``,
the promoted documents and every captured output (stdout, stderr, MCP text) are searched for
each secret: whole, and lower-cased pieces (full-text indexes lower-case and split tokens).
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from conftest import write_placeholder_config

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "secrets"
CORPUS = [json.loads(line) for line in (FIXTURES / "corpus.jsonl").read_text(encoding="utf-8").splitlines()]
POSITIVES = [r for r in CORPUS if r["expect"] == "masked"]
SESSION = "leak-session-1"
NOW = "2026-03-08T10:00:00.000Z"

# Where each framing goes in the repository (the file's type decides the masking mode).
PLACES = {"code": "src/leaks/mod_{n}.py", "json": "config/leaks_{n}.json", "yaml": "deploy/leaks_{n}.yaml",
          "env": "config/leaks_{n}.env", "prose": "docs/leaks_{n}.md", "transcript": "logs/leaks_{n}.jsonl"}
PER_FILE = 40


def _needles(secret: str) -> tuple[list[str], list[str]]:
    """(exact strings, lower-case pieces): the secret itself (8 characters or more: a shorter
    random part, such as a GitLab job token's shard, is no secret on its own), and the first 12
    characters of each alphanumeric run of 12 or more (what a lower-casing, splitting index
    would keep)."""
    runs = [run.lower()[:12] for run in re.findall(r"[A-Za-z0-9]{12,}", secret)]
    return ([secret] if len(secret) >= 8 else []), runs


def _sample(step: int) -> list[dict]:
    """Every ``step``-th positive case, one per format at least."""
    seen: set[str] = set()
    out = []
    for i, record in enumerate(POSITIVES):
        if i % step == 0 or record["format"] not in seen:
            out.append(record)
            seen.add(record["format"])
    return out


def _secret_lines(records: list[dict]) -> str:
    """The records' texts on one line each (JSON-escaped newlines stay escaped)."""
    return "\n".join(r["text"].replace("\n", " \\n ").replace("\r", "") for r in records)


@pytest.fixture
def planted(git_repo, cli, monkeypatch):
    monkeypatch.setenv("RAGIT_NOW", NOW)
    root = git_repo.root
    write_placeholder_config(root)
    files: dict[str, str] = {}
    by_framing: dict[str, list[dict]] = {}
    for record in POSITIVES:
        by_framing.setdefault(record["framing"], []).append(record)
    for framing, records in by_framing.items():
        for n in range(0, len(records), PER_FILE):
            chunk = records[n:n + PER_FILE]
            path = PLACES[framing].format(n=n // PER_FILE)
            joiner = "\n" if framing == "transcript" else "\n\n"
            files[path] = joiner.join(r["text"] for r in chunk) + "\n"
    files["README.md"] = "# Leak test\n\nA repository full of planted fake secrets.\n"
    git_repo.commit("plant", files)
    # commit messages are kept too (their terms, for the precedent stage): paste secrets into one
    prose = [r for r in POSITIVES if r["framing"] == "prose"]
    git_repo.commit("Rotate the leaked credentials\n\n" + "\n".join(r["text"] for r in prose),
                    {"README.md": files["README.md"] + "\nRotated.\n"})
    result = cli("ingest", "--all", "--cwd", str(root), "--format", "json")
    assert result.code == 0, result
    return git_repo


def _transcript(records: list[dict]) -> str:
    lines = []
    for i, record in enumerate(records):
        lines.append({"type": "user", "sessionId": SESSION, "timestamp": NOW, "uuid": f"u{i}",
                      "message": {"role": "user", "content": f"please check {record['text']}"}})
        lines.append({"type": "assistant", "sessionId": SESSION, "timestamp": NOW, "uuid": f"a{i}",
                      "message": {"id": f"m{i}", "role": "assistant", "content": [
                          {"type": "text", "text": "Running the tool."},
                          {"type": "tool_use", "id": f"toolu_{i:04d}", "name": "Bash", "input": {"command": "cat .env"}}]}})
        lines.append({"type": "user", "sessionId": SESSION, "timestamp": NOW, "uuid": f"r{i}",
                      "message": {"role": "user", "content": [
                          {"type": "tool_result", "tool_use_id": f"toolu_{i:04d}", "content": record["text"]}]}})
    return "".join(json.dumps(line) + "\n" for line in lines)


def test_no_planted_secret_is_stored_or_printed(planted, cli, tmp_path):
    from ragit.cli.hook import post_tool_use
    from ragit.mcp.tools import Workspace, call_tool

    root = planted.root
    outputs: list[str] = []

    def run(*args: str, stdin: str | None = None, ok: bool = True):
        result = cli(*args, "--cwd", str(root), stdin=stdin)
        outputs.extend((result.out, result.err))
        if ok:
            assert result.code == 0, result
        return result

    sample = _sample(9)
    texts = [r["text"] for r in sample]
    inline = [r["text"] for r in sample if r["framing"] in ("prose", "env", "transcript")][:90]

    # 1. retrieval: every view and format, questions and goals that carry secrets
    questions = ["token", "password secret key", "api key", "private key", "webhook", "connection string",
                 "authorization bearer", "aws secret access key", f"why does {inline[0]} fail"]
    for question in questions:
        for view in ("minimal", "default", "full"):
            run("query", question, "--top-k", "50", "--view", view, "--format", "json")
        run("query", question, "--top-k", "20", "--explain", "--format", "both")
    run("query", "--input", "-", "--format", "json",
        stdin=json.dumps({"question": f"rotate {inline[1]}", "topK": 30, "explain": True}))
    for goal in ("rotate every leaked credential", f"replace {inline[2]} and {inline[3]}"):
        run("context", "pack", goal, "--budget", "4000", "--format", "both")
    anchor = {"goal": f"remove {inline[4]}", "stopCondition": "all keys rotated",
              "verificationTarget": "no key in the logs"}
    candidates = [{"id": f"c{i}", "kind": "direct-evidence", "source": "injected:log", "capturedAt": "2026-07-15",
                   "relevance": "current", "freshness": "fresh", "sizeUnits": 2, "content": text}
                  for i, text in enumerate(inline[5:25])]
    run("context", "packet", "--input", "-", "--format", "json",
        stdin=json.dumps({"taskAnchor": anchor, "budgetUnits": 100, "candidates": candidates}))

    prompt = {"static": {"base": "You are a coding agent.", "rules": inline[60]},
              "dynamic": {"projectMemory": inline[61], "userContext": inline[62], "learnedPatterns": [inline[63]]},
              "messages": [{"role": "user", "content": inline[64], "original_user_input": True},
                           {"role": "assistant", "content": [{"type": "tool_use", "id": "c1", "name": "read",
                                                              "input": {"path": "a.env"}}]},
                           {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "c1",
                                                         "content": inline[65]}]}]}
    run("context", "assemble", "--input", "-", "--format", "both", stdin=json.dumps(prompt))

    # 2. memory: wrap, recall, promote
    wrap = {"goal": f"rotate {inline[25]}", "summary": " ".join(inline[26:30]),
            "constraints": inline[30:33],
            "decisions": [{"title": "Rotate keys", "summary": inline[33], "rationale": inline[34],
                           "alternatives": [inline[35]]}],
            "openLoops": [{"title": "Revoke old key", "status": "open", "nextAction": inline[36],
                           "blockingConditions": [inline[37]]}],
            "nextActions": inline[38:40], "createdAt": NOW}
    run("memory", "wrap", "--input", "-", "--format", "json", stdin=json.dumps(wrap))
    run("memory", "recall", f"rotate {inline[40]}", "--format", "both")
    candidates_promote = [{"kind": "decision", "title": "Rotate leaked keys", "summary": inline[41],
                           "alternatives": [inline[42]]},
                          {"kind": "glossary", "title": "Deploy key", "summary": inline[43], "aliases": ["dk"]}]
    run("memory", "promote", "--input", "-", "--format", "json",
        stdin=json.dumps({"sessionId": "20260308T100000Z-5c4669af", "promotionCandidates": candidates_promote}))

    # 3. artifacts
    for i, text in enumerate(inline[44:52]):
        payload = {"scope": "session", "kind": "finding", "title": f"leak {i}", "text": text,
                   "confidence": 0.6, "sessionId": "20260308T100000Z-5c4669af",
                   "evidence": [{"path": "src/leaks/mod_0.py", "startLine": 1, "endLine": 2, "excerpt": text}]}
        result = run("artifact", "capture", "--input", "-", "--format", "json", stdin=json.dumps(payload), ok=False)
        assert result.code in (0, 2), result
    run("artifact", "list", "--format", "both")

    # 4. sessions: mirror a transcript full of secrets, search it, dream it
    transcript = tmp_path / "session.jsonl"
    transcript.write_text(_transcript(sample[:80]), encoding="utf-8")
    run("session", "mirror", "--input", str(transcript), "--format", "json")
    for term in ("token", "password", "key", "secret"):
        run("session", "search", term, "--format", "both")
    run("session", "dream", SESSION, "--no-llm", "--format", "json", ok=False)

    # 5. window: an offloaded tool result, its recall, compaction of the transcript
    big = {"stdout": ("\n".join(texts) + "\n") * 3, "stderr": inline[52]}
    hook_out = post_tool_use(root, {"session_id": SESSION, "cwd": str(root), "hook_event_name": "PostToolUse",
                                    "tool_name": "Bash", "tool_input": {"command": "env"}, "tool_response": big,
                                    "tool_use_id": "toolu_leak"})
    outputs.append(hook_out)
    assert hook_out, "the large result was not offloaded"
    run("window", "recall", "toolu_leak", "--session", SESSION, "--format", "json")
    run("window", "compact", "--input", str(transcript), "--window", "20000", "--format", "json", ok=False)
    run("window", "check", "--input", str(transcript), "--format", "both", ok=False)

    # 6. MCP tool results
    ws = Workspace(root, True)
    calls = [
        ("query", {"question": f"where is {inline[53]}", "topK": 30, "view": "full", "explain": True}),
        ("context_pack", {"goal": f"rotate {inline[54]}", "budget": 3000}),
        ("context_packet", {"taskAnchor": anchor, "budgetUnits": 100, "candidates": candidates}),
        ("memory_recall", {"goal": f"rotate {inline[55]}"}),
        ("memory_wrap", dict(wrap, summary=inline[56])),
        ("artifact_capture", {"scope": "session", "kind": "finding", "title": "mcp leak", "text": inline[57],
                              "confidence": 0.5, "sessionId": "20260308T100000Z-5c4669af"}),
        ("tool_result_recall", {"refId": "toolu_leak", "sessionId": SESSION}),
        ("session_search", {"query": "token"}),
        ("verify_citation", {"citation": f"src/leaks/mod_0.py@{inline[58][:40]}:L1-L2"}),
    ]
    for name, arguments in calls:
        outcome = call_tool(ws, name, arguments)
        outputs.extend((outcome.text, json.dumps(outcome.structured), json.dumps(outcome.error)))

    # 7. errors that echo what was typed
    secret_value = next(r["secrets"][0] for r in sample if r["format"] == "github-pat")
    token = "ghp_" + secret_value
    run("query", "x", "--view", token, ok=False)
    run("query", "x", "--scope", token, "--format", "json", ok=False)
    run("verify", token, "--format", "json", ok=False)
    run("artifact", "show", f"art-{token}", "--format", "json", ok=False)
    run("memory", "wrap", "--input", "-", "--format", "json", ok=False,
        stdin=json.dumps({"goal": token, "summary": 5, "constraints": inline[59]}))
    run("window", "recall", token, "--session", SESSION, "--format", "json", ok=False)
    run("context", "packet", "--input", "-", "--format", "json", ok=False,
        stdin=json.dumps({"taskAnchor": anchor, "budgetUnits": 0, "candidates": [{"id": token}]}))
    outputs.append(call_tool(ws, "query", {"question": token, "view": token}).text)
    outputs.append(call_tool(ws, "memory_wrap", {"goal": token, "summary": 7}).text)
    run("status", "--format", "json")
    run("doctor", "--format", "json", ok=False)

    # --- search everything
    stored: dict[str, bytes] = {}
    for base in (root / ".ragit", root / "docs" / "memory"):
        for path in base.rglob("*"):
            if path.is_file():
                stored[path.relative_to(root).as_posix()] = path.read_bytes()
    assert any(name.endswith(".db") for name in stored), sorted(stored)
    lowered_files = {name: data.lower() for name, data in stored.items()}
    printed = "\n".join(outputs)
    printed_lower = printed.lower()

    leaks = []
    for record in POSITIVES:
        for secret in record["secrets"]:
            exact, pieces = _needles(secret)
            for needle in exact:
                if needle in printed:
                    leaks.append((record["id"], "output", needle))
                raw = needle.encode("utf-8")
                leaks += [(record["id"], name, needle) for name, data in stored.items() if raw in data]
            for piece in pieces:
                if piece in printed_lower:
                    leaks.append((record["id"], "output (lower-case)", piece))
                raw = piece.encode("ascii")
                leaks += [(record["id"], name + " (lower-case)", piece)
                          for name, data in lowered_files.items() if raw in data]
    where: dict[str, list[str]] = {}
    for case, place, needle in leaks:
        where.setdefault(place, []).append(f"{case}: {needle}")
    assert where == {}, {place: (len(items), items[:5]) for place, items in where.items()}
    assert "***" in printed  # masking did run on the way out
