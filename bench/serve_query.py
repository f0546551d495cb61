"""Cold CLI cost with and without ``ragit serve`` (issue 15: cold CLI query <= 0.15 s CPU at 6k chunks).

Builds the 1,000-document corpus of ``bench/ingest_query.py`` (same seed, ~6,000 chunks) or uses
``--repo``, indexes it, and times fresh ``ragit`` processes:

- floors: ``python -c pass``, ``python -c "import numpy"``, ``ragit --version``;
- ``ragit query "<q>" --format json`` and ``ragit context pack "<q>" --format json`` in-process
  (``RAGIT_NO_SERVE=1``) and forwarded to a running ``ragit serve`` (client process only), plus the
  server's own CPU per forwarded request (``/proc/<pid>/stat``, children included; Linux only).

Each row is the median of ``--runs`` runs after one warm-up (children cache their bytecode in the work
directory, as an installed ragit has it); CPU is user + system of the child
(``os.wait4``), so machine load inflates wall time far more than CPU. It prints a Markdown table and
writes JSON (default ``bench/serve_query.json``) with the load average.

    python bench/serve_query.py [--repo PATH] [--runs 9] [--out PATH]
"""

from __future__ import annotations

import argparse
import json
import os
import random
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

import ingest_query as iq  # noqa: E402  (the corpus generator, the children's bytecode cache)

QUESTION = "how does the australia species handle russian?"


def ragit_bin() -> str:
    candidate = Path(sys.executable).with_name("ragit")
    return str(candidate) if candidate.exists() else shutil.which("ragit") or "ragit"


def timed(argv: list[str], env: dict[str, str], cwd: Path) -> tuple[float, float]:
    """(cpu seconds, wall seconds) of one child process."""
    start = time.perf_counter()
    proc = subprocess.Popen(argv, cwd=cwd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    _, status, usage = os.wait4(proc.pid, 0)
    wall = time.perf_counter() - start
    proc.returncode = os.waitstatus_to_exitcode(status)
    if proc.returncode != 0:
        raise RuntimeError(f"{argv} exited {proc.returncode}")
    return usage.ru_utime + usage.ru_stime, wall


def median_run(argv: list[str], env: dict[str, str], cwd: Path, runs: int) -> dict[str, float]:
    timed(argv, env, cwd)  # warm-up: page cache, bytecode
    samples = [timed(argv, env, cwd) for _ in range(runs)]
    return {"cpu_s": statistics.median(s[0] for s in samples), "wall_s": statistics.median(s[1] for s in samples)}


def proc_cpu(pid: int) -> float | None:
    """utime + stime + cutime + cstime of ``pid`` in seconds (Linux)."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except OSError:
        return None
    return sum(int(f) for f in fields[11:15]) / os.sysconf("SC_CLK_TCK")


def build_corpus(work: Path) -> Path:
    words, _ = iq.load_vocabulary()
    repo = work / "corpus-docs"
    iq.init_repo(repo)
    iq.write_typed_docs(repo, 1000, iq.WordSampler(words, random.Random(iq.SEED)))
    iq.commit_all(repo, "typed docs corpus")
    # as ingest_query's cold rows: a user's git index is settled, not "racily clean" (files
    # committed in the index's own second, which git status hashes again on every query)
    iq.settle_index(repo)
    return repo


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--repo", type=Path, help="an indexed repository (default: build the 1,000-doc corpus)")
    p.add_argument("--runs", type=int, default=9)
    p.add_argument("--out", type=Path, default=HERE / "serve_query.json")
    args = p.parse_args(argv)
    ragit = ragit_bin()
    work = Path(tempfile.mkdtemp(prefix="ragit-serve-bench-"))
    iq.cache_bytecode(work / "pycache")  # as an installed ragit: no in-process row compiles ragit
    env = {k: v for k, v in iq.CHILD_ENV.items() if k != "RAGIT_NO_SERVE"}
    cold_env = dict(env, RAGIT_NO_SERVE="1")
    rows: list[dict] = []
    try:
        repo = args.repo.resolve() if args.repo else build_corpus(work)
        if not args.repo:
            subprocess.run([ragit, "ingest", "--all", "--format", "json"], cwd=repo, env=cold_env, check=True,
                           stdout=subprocess.DEVNULL)
        commands = {
            "python -c pass": [sys.executable, "-c", "pass"],
            "python -c 'import numpy'": [sys.executable, "-c", "import numpy"],
            "ragit --version": [ragit, "--version"],
        }
        for label, cmd in commands.items():
            rows.append({"row": label, **median_run(cmd, cold_env, repo, args.runs)})
        reads = {"query": [ragit, "query", QUESTION, "--format", "json"],
                 "context pack": [ragit, "context", "pack", QUESTION, "--format", "json"]}
        for label, cmd in reads.items():
            rows.append({"row": f"ragit {label} (in-process)", **median_run(cmd, cold_env, repo, args.runs)})
        started = subprocess.run([ragit, "serve", "--detach", "--idle-timeout", "600", "--format", "json"], cwd=repo,
                                 env=env, check=True, capture_output=True, text=True)
        pid = json.loads(started.stdout)["data"]["pid"]
        try:
            for label, cmd in reads.items():
                before = proc_cpu(pid)
                row = median_run(cmd, env, repo, args.runs)
                after = proc_cpu(pid)
                server = None if before is None or after is None else (after - before) / (args.runs + 1)
                rows.append({"row": f"ragit {label} (forwarded to ragit serve)", **row, "server_cpu_s": server})
            status = json.loads(subprocess.run([ragit, "serve", "--status", "--format", "json"], cwd=repo, env=env,
                                               check=True, capture_output=True, text=True).stdout)["data"]
        finally:
            subprocess.run([ragit, "serve", "--stop", "--format", "json"], cwd=repo, env=env,
                           stdout=subprocess.DEVNULL, check=False)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    print("| row | CPU s (median) | wall s (median) | server CPU s per request |")
    print("| --- | --- | --- | --- |")
    for r in rows:
        server = r.get("server_cpu_s")
        print(f"| {r['row']} | {r['cpu_s']:.3f} | {r['wall_s']:.3f} | {'' if server is None else f'{server:.3f}'} |")
    result = {"date": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()), "load_average": list(os.getloadavg()),
              "runs": args.runs, "question": QUESTION, "server_requests": status.get("requests"),
              "server_fallbacks": status.get("fallbacks"), "rows": rows}
    args.out.write_text(json.dumps(result, indent=2) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
