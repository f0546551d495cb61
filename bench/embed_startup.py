"""Embedder start-up and throughput: what a cold `ragit query` pays to embed its question.

Every "fresh" figure is the wall time of a new interpreter (`python -c ...`, median of N runs
after one warm-up run that writes bytecode and the encoder-table cache), so imports are counted
the way the CLI pays them. Throughput embeds 2,000 chunk-sized (2,400-char) texts cut from the
standard library's sources. Prints a table and writes bench/embed_startup.json.

    python bench/embed_startup.py [--runs 5] [--texts 2000] 
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import sysconfig
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
QUERY = "how does ingest reuse unchanged blobs across branches?"

LOAD_AND_EMBED = (
    "from ragit.config import defaults\n"
    "from ragit.embed import load_embedder\n"
    f"load_embedder(defaults()).embed([{QUERY!r}])\n"
)

# In one fresh interpreter: where the time of LOAD_AND_EMBED goes.
BREAKDOWN = (
    "import json, time\n"
    "t0 = time.perf_counter()\n"
    "import numpy\n"
    "t1 = time.perf_counter()\n"
    "from ragit.config import defaults\n"
    "from ragit.embed import load_embedder\n"
    "t2 = time.perf_counter()\n"
    "embedder = load_embedder(defaults())\n"
    "t3 = time.perf_counter()\n"
    f"embedder.embed([{QUERY!r}])\n"
    "t4 = time.perf_counter()\n"
    "print(json.dumps({'import_numpy_ms': (t1 - t0) * 1e3,\n"
    "                  'import_ragit_embed_config_ms': (t2 - t1) * 1e3,\n"
    "                  'load_embedder_ms': (t3 - t2) * 1e3,\n"
    "                  'embed_one_query_ms': (t4 - t3) * 1e3}))\n"
)

TOKENIZER_JSON_LOAD = (
    "import json, time\n"
    "from ragit.embed import MINILM_DIR\n"
    "path = MINILM_DIR / 'tokenizer.json'\n"
    "t0 = time.perf_counter()\n"
    "from tokenizers import Tokenizer\n"
    "t1 = time.perf_counter()\n"
    "Tokenizer.from_file(str(path))\n"
    "t2 = time.perf_counter()\n"
    "print(json.dumps({'import_tokenizers_ms': (t1 - t0) * 1e3,\n"
    "                  'tokenizer_from_file_ms': (t2 - t1) * 1e3}))\n"
)

SNIPPETS = {
    "python -c pass": "pass",
    "import numpy": "import numpy",
    "import tokenizers": "import tokenizers",
    "import ragit.embed": "import ragit.embed",
    "embedder_id_for(defaults())": (
        "from ragit.config import defaults\n"
        "from ragit.embed import embedder_id_for\n"
        "embedder_id_for(defaults())"
    ),
    "load + embed one query": LOAD_AND_EMBED,
}


def child_env() -> dict[str, str]:
    env = dict(os.environ)
    env.pop("PYTHONDONTWRITEBYTECODE", None)  # an installed ragit has its bytecode cached
    return env


def fresh(code: str, env: dict[str, str]) -> tuple[float, str]:
    start = time.perf_counter()
    proc = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True)
    return (time.perf_counter() - start) * 1e3, proc.stdout


def median_fresh(code: str, env: dict[str, str], runs: int) -> dict[str, float]:
    fresh(code, env)  # warm-up: bytecode, encoder tables, page cache
    times = [fresh(code, env)[0] for _ in range(runs)]
    return {"median_ms": round(statistics.median(times), 1), "min_ms": round(min(times), 1)}


def median_json(code: str, env: dict[str, str], runs: int) -> dict[str, float]:
    fresh(code, env)
    samples = [json.loads(fresh(code, env)[1]) for _ in range(runs)]
    return {key: round(statistics.median(s[key] for s in samples), 2) for key in samples[0]}


def chunk_texts(count: int, size: int = 2400) -> list[str]:
    """Deterministic chunk-sized texts from the standard library's Python sources."""
    texts: list[str] = []
    for path in sorted(Path(sysconfig.get_paths()["stdlib"]).rglob("*.py")):
        try:
            source = path.read_text(encoding="utf-8")
        except (UnicodeDecodeError, OSError):
            continue
        texts += [source[i:i + size] for i in range(0, len(source) - size + 1, size)]
        if len(texts) >= count:
            return texts[:count]
    return texts


def throughput(texts: list[str]) -> dict[str, float]:
    """Texts/s of the default embedder on chunk-sized texts (first call includes loading)."""
    from ragit.config import defaults
    from ragit.embed import load_embedder

    result: dict[str, float] = {"texts": len(texts), "mean_chars": round(sum(map(len, texts)) / len(texts))}
    start = time.perf_counter()
    embedder = load_embedder(defaults())
    embedder.embed(texts)
    first = time.perf_counter() - start
    start = time.perf_counter()
    embedder.embed(texts)
    steady = time.perf_counter() - start
    result.update({
        "embedder": embedder.id,
        "first_call_texts_per_s": round(len(texts) / first),
        "steady_texts_per_s": round(len(texts) / steady),
    })
    return result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--texts", type=int, default=2000)
    args = parser.parse_args()

    env = child_env()
    fresh_runs = {label: median_fresh(code, env, args.runs) for label, code in SNIPPETS.items()}
    breakdown = median_json(BREAKDOWN, env, args.runs)
    tokenizer_json = median_json(TOKENIZER_JSON_LOAD, env, args.runs)
    results = {
        "python": sys.version.split()[0],
        "cpus": os.cpu_count(),
        "load_average": [round(x, 2) for x in os.getloadavg()],
        "runs": args.runs,
        "fresh_interpreter": fresh_runs,
        "in_process_breakdown_ms": breakdown,
        "tokenizers_alternative_ms": tokenizer_json,
        "throughput": throughput(chunk_texts(args.texts)),
    }

    load = results["load_average"]
    print(f"# embedder start-up (fresh interpreter, median of {args.runs}; load average {load})")
    print(f"{'command':<32} {'median ms':>10} {'min ms':>8}")
    for label, stats in fresh_runs.items():
        print(f"{label:<32} {stats['median_ms']:>10.1f} {stats['min_ms']:>8.1f}")
    print("\n# inside one fresh interpreter (ms)")
    for key, value in {**breakdown, **tokenizer_json}.items():
        print(f"{key:<32} {value:>10.2f}")
    print("\n# throughput")
    for key, value in results["throughput"].items():
        print(f"{key:<32} {value:>10}")
    (HERE / "embed_startup.json").write_text(json.dumps(results, indent=2) + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
