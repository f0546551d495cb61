"""Benchmark: secret masking recall, false masks and throughput (knowledge §10.1, issue 14).

* Recall on the leak corpus (tests/fixtures/secrets/corpus.jsonl: every format ragit masks,
  in six framings, plus near-miss negatives), per format family, per framing and overall.
* False masks per 10,000 lines on the ordinary-code corpus (tests/fixtures/ordinary_code:
  real Python, Go, TypeScript and YAML files), each one listed; masks KNOWN.json names as
  credentials the file really holds are listed apart.
* ``mask_text`` throughput (CPU, best of N) on the ordinary-code corpus; with
  ``--baseline-rev`` also that of security/masking.py at an older commit, for comparison.

Prints a table and writes ``bench/masking.json``. Targets: recall 100 %, at most 1 false
mask per 10,000 lines.

    python bench/masking.py [--repeats 7] [--baseline-rev bb387a5] [--out bench/masking.json]
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import os
import platform
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests" / "fixtures" / "secrets"))

from evaluate import evaluate_leaks, evaluate_ordinary, ordinary_files, text_mode_on_code, throughput  # noqa: E402

from ragit.security import rules  # noqa: E402
from ragit.security.masking import MASKING_VERSION, RULES, mask_text  # noqa: E402

TARGET_RECALL = 1.0
TARGET_FALSE_PER_10K = 1.0


def _baseline(rev: str):
    """``mask_text`` of security/masking.py as it was at ``rev`` (a stand-alone module)."""
    source = subprocess.run(["git", "-C", str(ROOT), "show", f"{rev}:src/ragit/security/masking.py"],
                            check=True, capture_output=True, text=True).stdout
    with tempfile.NamedTemporaryFile("w", suffix=".py", delete=False) as handle:
        handle.write(source)
    spec = importlib.util.spec_from_file_location("masking_baseline", handle.name)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules["masking_baseline"] = module
    spec.loader.exec_module(module)
    os.unlink(handle.name)
    return module.mask_text


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=7)
    parser.add_argument("--baseline-rev", default=None, help="commit whose masking.py to time for comparison")
    parser.add_argument("--out", type=Path, default=ROOT / "bench" / "masking.json")
    args = parser.parse_args()

    started = time.time()
    leaks = evaluate_leaks()
    ordinary = evaluate_ordinary()
    as_text = text_mode_on_code()
    files = ordinary_files()
    size_mb = sum(len(text.encode("utf-8")) for _, text in files) / 1e6
    speed = throughput(mask_text, files, args.repeats)
    base = throughput(_baseline(args.baseline_rev), files, args.repeats) if args.baseline_rev else None

    positives, negatives = leaks.positives(), leaks.negatives()
    by_family = leaks.by("family")
    by_framing = leaks.by("framing")
    false = ordinary.false_masks()
    result = {
        "benchmark": "masking",
        "date": time.strftime("%Y-%m-%dT%H:%M:%S%z"),
        "duration_s": round(time.time() - started, 1),
        "machine": {"platform": platform.platform(), "python": platform.python_version(),
                    "cpus": os.cpu_count(), "load_average": list(os.getloadavg())},
        "masking_version": MASKING_VERSION,
        "rule_rows": len(RULES),
        "formats": len(rules.all_format_ids()),
        "leak_corpus": {
            "cases": len(leaks.cases), "formats": len({c.format for c in leaks.cases}),
            "positives": len(positives), "negatives": len(negatives),
            "recall": leaks.recall(), "negatives_kept": leaks.recall(negatives) if negatives else 1.0,
            "by_family": by_family, "by_framing": by_framing,
            "failures": [vars(c) for c in leaks.failures()],
            "target": {"recall": TARGET_RECALL}, "met": leaks.recall() >= TARGET_RECALL,
        },
        "ordinary_corpus": {
            "files": ordinary.files, "lines": ordinary.lines, "total_lines": ordinary.total_lines,
            "false_masks": false, "false_per_10k_lines": round(ordinary.per_10k(), 3),
            "known_masks": ordinary.known_masks(),
            "target": {"false_per_10k_lines": TARGET_FALSE_PER_10K},
            "met": ordinary.per_10k() <= TARGET_FALSE_PER_10K,
            "code_files_in_text_mode": {
                "lines": as_text.total_lines, "false_masks": as_text.false_masks(),
                "false_per_10k_lines": round(as_text.per_10k(), 3), "known": len(as_text.known_masks()),
                "note": "informational: code masked without code mode, as a path-less output would",
            },
        },
        "throughput": {
            "corpus_mb": round(size_mb, 3), "repeats": args.repeats, "clock": "process_time, best of repeats",
            "mb_per_s": round(speed, 1),
            "baseline": {"rev": args.baseline_rev, "mb_per_s": round(base, 1)} if base else None,
        },
    }

    print(f"masking v{MASKING_VERSION}: {len(RULES)} rule rows, {result['formats']} formats")
    print(f"\nleak corpus: {len(leaks.cases)} cases ({len(positives)} positives, {len(negatives)} negatives), "
          f"{result['leak_corpus']['formats']} formats")
    print(f"{'family':<16}{'cases':>7}{'recall':>9}   {'family':<16}{'cases':>7}{'recall':>9}")
    items = list(by_family.items())
    half = (len(items) + 1) // 2
    for left, right in zip(items[:half], items[half:] + [None] * (2 * half - len(items))):
        row = f"{left[0]:<16}{left[1]['positives']:>7}{left[1]['recall']:>9.1%}"
        if right:
            row += f"   {right[0]:<16}{right[1]['positives']:>7}{right[1]['recall']:>9.1%}"
        print(row)
    print("by framing: " + ", ".join(f"{k} {v['recall']:.1%} ({v['positives']})" for k, v in by_framing.items()))
    print(f"overall recall: {leaks.recall():.2%}   negatives kept: {result['leak_corpus']['negatives_kept']:.2%}"
          f"   target {TARGET_RECALL:.0%}: {'met' if result['leak_corpus']['met'] else 'MISSED'}")
    for failure in leaks.failures():
        print(f"  FAIL {failure.id}: {failure.problem}")

    print(f"\nordinary corpus: {ordinary.files} files, {ordinary.total_lines} lines "
          + ", ".join(f"{k} {v}" for k, v in sorted(ordinary.lines.items())))
    print(f"false masks: {len(false)} = {ordinary.per_10k():.2f} per 10,000 lines "
          f"(target <= {TARGET_FALSE_PER_10K:g}: {'met' if result['ordinary_corpus']['met'] else 'MISSED'})")
    for mask in false:
        print(f"  FALSE {mask['file']}:{mask['line']} [{mask['rule']}, {mask['mode']}] {mask['match']!r}")
    print(f"code files in text mode (informational): {len(as_text.false_masks())} false masks in "
          f"{as_text.total_lines} lines = {as_text.per_10k():.2f} per 10,000 lines")
    for mask in as_text.false_masks():
        print(f"  text-mode {mask['file']}:{mask['line']} [{mask['rule']}] {mask['match']!r}")
    print(f"known credentials masked: {len(ordinary.known_masks())}")
    for mask in ordinary.known_masks():
        print(f"  known {mask['file']}:{mask['line']} [{mask['rule']}] {mask['reason']}")

    line = f"\nthroughput: {speed:.1f} MB/s on {size_mb:.2f} MB (CPU, best of {args.repeats})"
    if base:
        line += f"; baseline {args.baseline_rev}: {base:.1f} MB/s"
    print(line)

    args.out.write_text(json.dumps(result, indent=1) + "\n", encoding="utf-8")
    print(f"wrote {args.out.relative_to(ROOT) if args.out.is_relative_to(ROOT) else args.out}")


if __name__ == "__main__":
    main()
