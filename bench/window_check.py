"""Benchmark: window health check + usage breakdown over a 2,000-message transcript (context D.4, D.18).

Builds a realistic coding-agent transcript (user requests, assistant replies with tool
calls in both wire shapes, tool results with code, logs and test output, a few large
results), then times ``check_context`` + ``breakdown`` warm (after warm-up runs) and reports
p50/p95 over 50 runs, for the total and for each part. Prints a table and writes
``bench/window_check.json``. Target: p50 and p95 of the total <= 50 ms wall time. CPU time
(``time.process_time``) is reported next to it, with the load average, because on a busy
2-core machine wall time mostly measures the wait for a core.

    python bench/window_check.py [--messages 2000] [--runs 50] [--window 200000]
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import random
import statistics
import sys
import time
from pathlib import Path

from ragit.window.budget import resolve_budget
from ragit.window.health import check_context
from ragit.window.tokens import HeuristicCounter
from ragit.window.usage import breakdown

TARGET_MS = 50.0
WORDS = ("the", "we", "should", "check", "update", "handle", "return", "value", "request", "response", "error",
         "test", "result", "output", "path", "token", "cache", "query", "commit", "branch", "patch", "build", "log")
TOOLS = ("run_bash", "read_file", "edit_file", "grep", "web_fetch")


def _sentence(rng: random.Random, n: int) -> str:
    return " ".join(rng.choice(WORDS) for _ in range(n)).capitalize() + "."


def _code(rng: random.Random, lines: int) -> str:
    body = [f"    x{i} = value.{rng.choice(WORDS)}_{rng.choice(WORDS)}({i})  # {_sentence(rng, 4)}"
            for i in range(lines)]
    return "def handler(self, value):\n" + "\n".join(body) + "\n    return x0\n"


def _result_text(rng: random.Random, tool: str) -> str:
    size = rng.choice((8, 20, 40, 80, 160, 600))  # a few large results, most small
    if tool == "run_bash":
        lines = [f"tests/test_{rng.choice(WORDS)}.py::test_{i} {'PASSED' if rng.random() > 0.1 else 'FAILED'}"
                 for i in range(size)]
        return "\n".join(lines) + f"\nexit_code: {rng.choice((0, 0, 1))}\n"
    if tool in ("read_file", "edit_file"):
        return _code(rng, size)
    return "\n".join(f"src/{rng.choice(WORDS)}.py:{i}: {_sentence(rng, 6)}" for i in range(size))


def make_transcript(n: int, seed: int = 7) -> list[dict]:
    """``n`` messages: requests, replies, and tool rounds (block shape, every third round OpenAI shape)."""
    rng = random.Random(seed)
    messages: list[dict] = [{"role": "user", "content": _sentence(rng, 40), "seq": 0, "original_user_input": True}]
    call = 0
    while len(messages) < n:
        roll = rng.random()
        if roll < 0.1:
            messages.append({"role": "user", "content": _sentence(rng, rng.randint(10, 120))})
            continue
        if roll < 0.25:
            messages.append({"role": "assistant", "content": _sentence(rng, rng.randint(20, 200))})
            continue
        call += 1
        tool = rng.choice(TOOLS)
        call_id = f"call_{call:05d}"
        args = {"path": f"src/{rng.choice(WORDS)}.py"} if tool != "run_bash" else {"command": "pytest -q -x"}
        text = _result_text(rng, tool)
        if call % 3:
            messages.append({"role": "assistant", "content": [
                {"type": "text", "text": _sentence(rng, rng.randint(5, 30))},
                {"type": "tool_use", "id": call_id, "name": tool, "input": args}]})
            block = {"type": "tool_result", "tool_use_id": call_id, "content": text}
            messages.append({"role": "user", "content": [block]})
        else:
            messages.append({"role": "assistant", "content": _sentence(rng, 10), "tool_calls": [
                {"id": call_id, "type": "function", "function": {"name": tool, "arguments": json.dumps(args)}}]})
            messages.append({"role": "tool", "tool_call_id": call_id, "name": tool, "content": text})
    for seq, message in enumerate(messages[:n]):
        message["seq"] = seq
    return messages[:n]


def _pct(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(q * (len(ordered) - 1)))]


def run(messages: int, runs: int, window: int) -> dict:
    transcript = make_transcript(messages)
    policy = resolve_budget(window=window)
    counter = HeuristicCounter()
    system_static, system_dynamic = "You are a coding agent. " * 200, "<current_date>2026-03-08</current_date>\n" * 20
    system = system_static + system_dynamic
    for _ in range(3):  # warm-up
        check_context(transcript, policy, system, 4_000, counter=counter)
        breakdown(transcript, system_static, system_dynamic, 4_000, policy, counter=counter)
    timings: dict[str, list[float]] = {"check_context": [], "breakdown": [], "total": [], "total_cpu": []}
    for _ in range(runs):
        c0, t0 = time.process_time(), time.perf_counter()
        metrics = check_context(transcript, policy, system, 4_000, counter=counter)
        t1 = time.perf_counter()
        usage = breakdown(transcript, system_static, system_dynamic, 4_000, policy, counter=counter)
        t2, c2 = time.perf_counter(), time.process_time()
        timings["check_context"].append((t1 - t0) * 1000)
        timings["breakdown"].append((t2 - t1) * 1000)
        timings["total"].append((t2 - t0) * 1000)
        timings["total_cpu"].append((c2 - c0) * 1000)
    chars = sum(len(json.dumps(m, ensure_ascii=False)) for m in transcript)
    return {
        "python": platform.python_version(),
        "cpus": os.cpu_count(),
        "load_average": [round(x, 2) for x in os.getloadavg()],
        "messages": len(transcript),
        "transcript_json_chars": chars,
        "window": window,
        "estimate_tokens": metrics.estimate,
        "raw_tokens": metrics.raw,
        "breakdown_messages": usage["messages"],
        "runs": runs,
        "target_ms": TARGET_MS,
        "results": {
            name: {"p50_ms": round(statistics.median(values), 2), "p95_ms": round(_pct(values, 0.95), 2),
                   "min_ms": round(min(values), 2)}
            for name, values in timings.items()
        },
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--messages", type=int, default=2_000)
    parser.add_argument("--runs", type=int, default=50)
    parser.add_argument("--window", type=int, default=200_000)
    args = parser.parse_args()
    report = run(args.messages, args.runs, args.window)
    print(f"window check bench: {report['messages']} messages, {report['transcript_json_chars']:,} JSON chars, "
          f"estimate {report['estimate_tokens']:,} tokens, {report['runs']} warm runs, "
          f"load average {report['load_average'][0]:.2f} on {report['cpus']} CPUs")
    print(f"{'operation':<16} {'p50 ms':>8} {'p95 ms':>8} {'min ms':>8}")
    for name, row in report["results"].items():
        print(f"{name:<16} {row['p50_ms']:>8.2f} {row['p95_ms']:>8.2f} {row['min_ms']:>8.2f}")
    total = report["results"]["total"]
    ok = total["p50_ms"] <= TARGET_MS and total["p95_ms"] <= TARGET_MS
    print(f"target <= {TARGET_MS:.0f} ms warm: {'met' if ok else 'MISSED'}")
    out = Path(__file__).with_name("window_check.json")
    out.write_text(json.dumps(report, indent=2) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
