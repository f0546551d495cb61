"""Overhead of ``ragit gate``, the Claude Code PreToolUse hook run before every edit (target: p95 ≤ 50 ms).

    python bench/gate_latency.py                     # 60 runs per scenario, JSON to bench/gate_latency.json
    python bench/gate_latency.py --runs 100 --files 400 --json out.json

Builds a real repository (``--files`` Python modules, committed and indexed with the test
embedder), serves a real ``context_pack`` through the MCP tool (recorded for this process, the
gate's parent, as Claude Code's MCP server records it for Claude), records 20 memory decisions
citing the edited file, then runs the real command ``ragit gate --cwd <repo>`` (the console launcher next to this
interpreter, as ``ragit setup`` installs it; ``-m`` rows: ``python -m ragit gate``) with a real
PreToolUse payload on stdin, once per run, in these scenarios:

* ``other tool``: a ``Bash`` payload (passes at once);
* ``edit, unchanged``: an ``Edit``, every cited file unchanged (hash the cited files, silence);
* ``edit, drifted (block)``: the cited files changed in the working tree (``cat-file`` of the
  cited blobs, line search, a deny);
* ``python -c pass``: the interpreter's own start, for scale.

Per run: wall time of the process and its CPU time (user + system of the child, from
``RUSAGE_CHILDREN``). The machine is shared, so CPU is the figure to compare; p50 and p95 of both.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

SRC = Path(__file__).resolve().parents[1] / "src"
sys.path.insert(0, str(SRC))


def _children_cpu() -> float:
    r = resource.getrusage(resource.RUSAGE_CHILDREN)
    return r.ru_utime + r.ru_stime


def _git(root: Path, *args: str) -> None:
    subprocess.run(["git", *args], cwd=root, check=True, capture_output=True)


def build_repo(root: Path, files: int) -> None:
    _git(root, "init", "-q", "-b", "main")
    _git(root, "config", "user.email", "bench@example.com")
    _git(root, "config", "user.name", "bench")
    for i in range(files):
        body = "".join(f"def handler_{i}_{j}(request):\n    \"\"\"Handle request kind {j} of module {i}.\"\"\"\n"
                       f"    token = request.get('token_{j}')\n    return token and token[::-1]\n\n\n"
                       for j in range(12))
        path = root / "app" / f"mod_{i:04d}.py"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(body, encoding="utf-8")
    (root / ".ragit").mkdir(exist_ok=True)
    (root / ".ragit" / "config.toml").write_text(
        '[embedding]\nprovider = "placeholder"\nmodel = "sha1"\ndimensions = 64\n', encoding="utf-8")
    _git(root, "add", "-A")
    _git(root, "commit", "-q", "-m", "modules")


def run_cli(args: list[str], stdin: str | None = None) -> None:
    env = dict(os.environ, PYTHONPATH=str(SRC))
    subprocess.run([sys.executable, "-m", "ragit", *args], input=stdin, text=True, env=env, check=True,
                   capture_output=True)


def prepare(root: Path, files: int) -> str:
    """Index, serve a pack (recorded for this process) and wrap 20 decisions citing the edited file."""
    build_repo(root, files)
    run_cli(["ingest", "--all", "--cwd", str(root), "--format", "json"])
    from ragit.gate.served import record_with_git
    from ragit.gitsnap.git import Git
    from ragit.mcp.tools import Workspace, call_tool

    outcome = call_tool(Workspace(root, True), "context_pack", {"goal": "handle request token kind 3", "budget": 4000})
    assert not outcome.is_error, outcome.text
    # what the MCP server recorded for its client, recorded again for this process (the gate's parent)
    record_with_git(root, Git(root), "context_pack", outcome.structured, pid=os.getpid())
    from ragit.gate.served import record_path

    cited = json.loads(Path(record_path(root, f"pid-{os.getpid()}")).read_text())["citations"]
    edited = cited[0]["path"]
    decisions = [{"title": f"decision {k}", "summary": "s", "evidence": [f"{edited}:L{6 * k + 1}-L{6 * k + 4}"]}
                 for k in range(12)]
    decisions += [{"title": f"late decision {k}", "summary": "s", "evidence": [f"{edited}:L1-L4"]} for k in range(8)]
    payload = root / ".ragit" / "wrap.json"
    payload.write_text(json.dumps({"goal": "bench", "summary": "s", "decisions": decisions}), encoding="utf-8")
    run_cli(["memory", "wrap", "--input", str(payload), "--cwd", str(root), "--format", "json"])
    print(f"repository: {files} files; pack served {len(cited)} citations over "
          f"{len({c['path'] for c in cited})} files; 20 decisions cite {edited}", file=sys.stderr)
    return edited


def child_env(pycache: str) -> dict[str, str]:
    """The hook's environment as installed: bytecode cached (a private prefix keeps the tree clean;
    with PYTHONDONTWRITEBYTECODE every run would recompile ragit's sources)."""
    env = dict(os.environ, PYTHONPATH=str(SRC), PYTHONPYCACHEPREFIX=pycache)
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    return env


def measure(cmd: list[str], stdin: str, runs: int, env: dict[str, str]) -> dict[str, float]:
    subprocess.run(cmd, input=stdin, text=True, env=env, capture_output=True, check=True)  # warm the bytecode
    walls, cpus = [], []
    for _ in range(runs):
        cpu, wall = _children_cpu(), time.perf_counter()
        subprocess.run(cmd, input=stdin, text=True, env=env, capture_output=True, check=True)
        walls.append((time.perf_counter() - wall) * 1000)
        cpus.append((_children_cpu() - cpu) * 1000)

    def pct(values: list[float], q: float) -> float:
        ordered = sorted(values)
        return ordered[min(len(ordered) - 1, int(round(q * (len(ordered) - 1))))]

    return {"runs": runs, "cpu_p50_ms": round(statistics.median(cpus), 1), "cpu_p95_ms": round(pct(cpus, 0.95), 1),
            "wall_p50_ms": round(statistics.median(walls), 1), "wall_p95_ms": round(pct(walls, 0.95), 1)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=60)
    parser.add_argument("--files", type=int, default=200)
    parser.add_argument("--json", default=str(Path(__file__).with_suffix(".json")))
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="ragit-gate-bench-") as tmp:
        root = Path(tmp) / "repo"
        root.mkdir()
        runtime = Path(tmp) / "runtime"  # the gate's records: a private runtime directory of our own
        runtime.mkdir(mode=0o700)
        os.environ["XDG_RUNTIME_DIR"] = str(runtime)
        edited = prepare(root, args.files)
        gate = [sys.executable, "-m", "ragit", "gate", "--cwd", str(root)]
        launcher = Path(sys.executable).with_name("ragit")  # what `ragit setup` installs when present
        hook = [sys.executable, str(launcher), "gate", "--cwd", str(root)] if launcher.is_file() else gate

        def payload(tool: str) -> str:
            key = {"Bash": "command"}.get(tool, "file_path")
            value = "ls" if tool == "Bash" else str(root / edited)
            return json.dumps({"session_id": "bench", "hook_event_name": "PreToolUse", "tool_name": tool,
                               "cwd": str(root), "tool_input": {key: value, "old_string": "a", "new_string": "b"}})

        env = child_env(str(Path(tmp) / "pycache"))
        rows: dict[str, dict[str, float]] = {}
        rows["python -c pass"] = measure([sys.executable, "-c", "pass"], "", args.runs, env)
        rows["other tool (Bash)"] = measure(hook, payload("Bash"), args.runs, env)
        rows["edit, unchanged"] = measure(hook, payload("Edit"), args.runs, env)
        rows["edit, unchanged, -m"] = measure(gate, payload("Edit"), args.runs, env)
        from ragit.gate.served import record_path

        cited = json.loads(Path(record_path(root, f"pid-{os.getpid()}")).read_text())["citations"]
        for path in sorted({c["path"] for c in cited}):  # every cited file drifts
            target = root / path
            target.write_text(target.read_text().replace("token[::-1]", "token"), encoding="utf-8")
        (root / ".ragit" / "config.toml").write_text(
            (root / ".ragit" / "config.toml").read_text() + '\n[gate]\nmode = "block"\n', encoding="utf-8")
        out = subprocess.run(gate, input=payload("Edit"), text=True, capture_output=True,
                             env=dict(os.environ, PYTHONPATH=str(SRC)), check=True).stdout
        assert '"deny"' in out, out
        rows["edit, drifted (block)"] = measure(hook, payload("Edit"), args.runs, env)
    header = f"{'scenario':<24} {'runs':>5} {'cpu p50':>9} {'cpu p95':>9} {'wall p50':>9} {'wall p95':>9}"
    print(header)
    print("-" * len(header))
    for name, r in rows.items():
        print(f"{name:<24} {r['runs']:>5} {r['cpu_p50_ms']:>8.1f}ms {r['cpu_p95_ms']:>8.1f}ms "
              f"{r['wall_p50_ms']:>8.1f}ms {r['wall_p95_ms']:>8.1f}ms")
    Path(args.json).write_text(json.dumps({"files": args.files, "python": sys.version.split()[0], "rows": rows},
                                          indent=2) + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
