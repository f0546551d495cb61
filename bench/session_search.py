"""Benchmark: transcript search latency over 100,000 mirrored messages (memory §8.2).

Builds a temporary ``sessions.db`` with realistic coding-agent transcripts (user requests,
assistant replies with tool calls, tool results with code, logs and test output), then times
``SessionStore.search_messages`` for 50 queries (a mix of common words, rare identifiers,
punctuated terms, phrases and session-filtered searches). Prints a table and writes
``bench/session_search.json``. Target: p50 <= 20 ms.

    python bench/session_search.py [--messages 100000] [--sessions 250] [--repeat 3]
"""

from __future__ import annotations

import argparse
import json
import platform
import random
import sqlite3
import statistics
import sys
import tempfile
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path

from ragit.sessions.store import SessionStore

MODULES = ["auth", "billing", "search", "ingest", "cache", "router", "session", "tokens", "export", "scheduler"]
FILES = ["service.py", "models.py", "handlers.ts", "client.go", "store.rs", "utils.py", "config.yaml", "README.md"]
VERBS = ["fix", "refactor", "add tests for", "document", "speed up", "investigate", "migrate", "clean up"]
PROBLEMS = [
    "the file-not-found error when the config is missing",
    "a race condition in the refresh-token rotation",
    "flaky timeouts in the integration suite",
    "the N+1 query on the dashboard endpoint",
    "memory growth in the background worker",
    "the off-by-one in pagination cursors",
    "stale cache entries after a deploy",
    "unicode handling in slug generation",
]
IDENTIFIERS = ["rotate_refresh_token", "PaginationCursor", "load_config", "retry_with_backoff", "SlugBuilder",
               "flush_stale_entries", "QueryPlanner", "emit_metrics", "parse_manifest", "WorkerPool"]
ERRORS = ["FileNotFoundError: [Errno 2] No such file or directory: 'config.toml'",
          "AssertionError: expected 200, got 500", "TimeoutError: operation timed out after 30s",
          "KeyError: 'refresh_token'", "TypeError: unsupported operand type(s) for +: 'int' and 'str'"]
WORDS = [
    "the", "a", "we", "should", "then", "check", "verify", "update", "handle", "return", "value", "request",
    "response", "user", "data", "function", "module", "error", "test", "case", "result", "output", "input", "path",
    "field", "token", "cache", "query", "index", "commit", "branch", "review", "change", "patch", "build", "deploy",
    "log", "warning", "debug", "trace", "step", "plan",
]


def _sentence(rng: random.Random, n: int) -> str:
    return " ".join(rng.choice(WORDS) for _ in range(n)).capitalize() + "."


def _code(rng: random.Random) -> str:
    ident = rng.choice(IDENTIFIERS)
    lines = [f"def {ident}(self, value):", f"    # {_sentence(rng, 8)}"]
    lines += [f"    x{i} = value.{rng.choice(WORDS)}_{rng.choice(WORDS)}({i})" for i in range(rng.randint(3, 12))]
    lines.append("    return x0")
    return "\n".join(lines)


def _tool_args(rng: random.Random, tool: str, module: str, path: str) -> dict:
    if tool in ("read_file", "edit_file"):
        return {"path": path}
    if tool == "grep":
        return {"pattern": rng.choice(IDENTIFIERS)}
    return {"command": f"pytest tests/{module} -x -q"}


def make_session(rng: random.Random, n: int, start: datetime | None = None) -> list[dict]:
    """One realistic transcript of ``n`` messages: request, then tool rounds and replies.

    With ``start``, messages carry timestamps a few seconds apart (as imported transcripts do).
    """
    module = rng.choice(MODULES)
    problem = rng.choice(PROBLEMS)
    request = f"Please {rng.choice(VERBS)} {module}: {problem}. {_sentence(rng, 12)}"
    messages: list[dict] = [{"role": "user", "content": request}]
    call = 0
    while len(messages) < n:
        kind = rng.random()
        path = f"src/{module}/{rng.choice(FILES)}"
        if kind < 0.45:
            call += 1
            tool = rng.choice(["read_file", "grep", "bash", "edit_file"])
            use = {"type": "tool_use", "id": f"toolu_{call:05d}", "name": tool,
                   "input": _tool_args(rng, tool, module, path)}
            text = {"type": "text", "text": _sentence(rng, rng.randint(6, 20))}
            messages.append({"role": "assistant", "content": [text, use]})
            body = _code(rng) if tool == "read_file" else f"{rng.choice(ERRORS)}\n{_sentence(rng, 30)}"
            result = {"type": "tool_result", "tool_use_id": use["id"], "content": body}
            messages.append({"role": "user", "content": [result]})
        elif kind < 0.8:
            change = f"The {rng.choice(IDENTIFIERS)} change in {path} handles {problem}."
            reply = f"{_sentence(rng, rng.randint(15, 60))} {change}"
            messages.append({"role": "assistant", "content": reply})
        else:
            note = f"{_sentence(rng, rng.randint(5, 25))} Also check {rng.choice(IDENTIFIERS)}."
            messages.append({"role": "user", "content": note})
    messages = messages[:n]
    if start is not None:
        moment = start
        for message in messages:
            moment += timedelta(seconds=rng.randint(1, 90))
            message["timestamp"] = moment.isoformat().replace("+00:00", "Z")
    return messages


QUERIES = [
    "refresh token", "file-not-found", "rotate_refresh_token", "PaginationCursor", "pytest", "TimeoutError",
    "config.toml", "race condition", "stale cache", "slug", "N+1 query", "dashboard endpoint", "memory growth",
    "background worker", "off-by-one", "load_config", "retry_with_backoff", "WorkerPool", "KeyError refresh_token",
    "expected 200", "unicode", "deploy", "integration suite", "flaky timeouts", "emit_metrics", "QueryPlanner",
    "parse_manifest", "src/auth/service.py", "handlers.ts", "client.go", "store.rs", "edit_file", "grep",
    "bash", "Errno 2", "verify update", "commit branch", "review change", "warning debug", "trace step plan",
    "no-such-term-anywhere", "flush_stale_entries", "SlugBuilder", "x0", "operation timed out",
    "unsupported operand", "billing", "scheduler", "export", "index query",
]


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    rank = max(0, min(len(ordered) - 1, round(q * (len(ordered) - 1))))
    return ordered[rank]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--messages", type=int, default=100_000)
    parser.add_argument("--sessions", type=int, default=250)
    parser.add_argument("--repeat", type=int, default=3, help="timed runs per query (the median is kept)")
    parser.add_argument("--output", type=Path, default=Path(__file__).with_suffix(".json"))
    args = parser.parse_args(argv)

    rng = random.Random(20260308)
    per_session = max(1, args.messages // args.sessions)
    with tempfile.TemporaryDirectory() as tmp:
        store = SessionStore(Path(tmp) / "sessions.db")
        started = time.perf_counter()
        session_ids = []
        for index in range(args.sessions):
            session_id = f"20260308T{index:06d}Z-bench{index:03d}"
            session_ids.append(session_id)
            # Sessions arrive out of time order, as when older transcripts are imported later.
            start = datetime(2026, 1, 1, tzinfo=UTC) + timedelta(hours=rng.randint(0, 24 * 60))
            store.mirror(session_id, make_session(rng, per_session, start))
        mirror_s = time.perf_counter() - started
        total = args.sessions * per_session

        rows = []
        for index, query in enumerate(QUERIES):
            session_id = session_ids[index % len(session_ids)] if index % 5 == 4 else None
            timings = []
            for _ in range(max(1, args.repeat)):
                t0 = time.perf_counter()
                hits = store.search_messages(query, session_id=session_id, limit=20)
                timings.append((time.perf_counter() - t0) * 1000)
            rows.append({"query": query, "session_filter": session_id is not None, "hits": len(hits),
                         "ms": round(statistics.median(timings), 3)})
        store.close()
        db_mb = sum(f.stat().st_size for f in Path(tmp).iterdir()) / 1e6

    latencies = [row["ms"] for row in rows]
    result = {
        "benchmark": "session_search",
        "messages": total,
        "sessions": args.sessions,
        "queries": len(rows),
        "mirror_seconds": round(mirror_s, 2),
        "db_megabytes": round(db_mb, 1),
        "p50_ms": round(percentile(latencies, 0.50), 3),
        "p95_ms": round(percentile(latencies, 0.95), 3),
        "max_ms": round(max(latencies), 3),
        "target_p50_ms": 20,
        "python": platform.python_version(),
        "sqlite": sqlite3.sqlite_version,
        "per_query": rows,
    }
    print(f"session search: {total:,} messages in {args.sessions} sessions "
          f"(mirrored in {mirror_s:.1f} s, {db_mb:.1f} MB), {len(rows)} queries, limit 20")
    print()
    print("| metric | value |")
    print("| --- | --- |")
    for key in ("p50_ms", "p95_ms", "max_ms", "target_p50_ms"):
        print(f"| {key} | {result[key]} |")
    print()
    print("| query | session filter | hits | ms |")
    print("| --- | --- | --- | --- |")
    for row in rows:
        print(f"| {row['query']} | {'yes' if row['session_filter'] else 'no'} | {row['hits']} | {row['ms']} |")
    args.output.write_text(json.dumps(result, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
