"""What a snapshot bundle saves a fresh clone (knowledge §22.1, issue 16 item 3).

For one repository (default: this project's own checkout) and one revision:

1. two fresh ``git clone``s are made in a temporary directory;
2. clone A runs ``ragit ingest --all`` (the default embedder unless ``--config`` names a file),
   then ``ragit snapshot export <rev> -o bundle``;
3. clone B runs ``ragit snapshot import bundle``;
4. both answer the same questions with ``ragit query --format json``; the outputs must be
   byte-identical (the cwd replaced), else the script fails.

Each step runs as a fresh process; CPU time is user + system of that process and the git
children it waited for (``ingest_query.run_cmd``'s launcher, ``wait4`` of that process), wall time is shown for
reference only (the machine is shared). Prints a table and writes ``bench/snapshot_bundle.json``.

    python bench/snapshot_bundle.py [--repo PATH] [--rev REV] [--config FILE] [--out PATH]
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
from datetime import UTC, datetime
from pathlib import Path

HERE = Path(__file__).resolve().parent
PROJECT = HERE.parent
sys.path.insert(0, str(HERE))

import ingest_query as iq  # noqa: E402
QUESTIONS = ["where is the manifest published", "snapshot bundle checksum", "secret masking rules"]


def run(args: list[str], cwd: Path) -> dict:
    """One ``ragit`` process (``ingest_query.run_cmd``): its CPU and wall time, and its output."""
    env = {**os.environ, "PYTHONPATH": str(PROJECT / "src"), "RAGIT_NOW": "2026-03-08T10:00:00.000Z"}
    done = iq.run_cmd([sys.executable, "-m", "ragit", *args, "--format", "json"], cwd, check=False, env=env)
    if done.returncode != 0:
        raise SystemExit(f"ragit {' '.join(args)} failed ({done.returncode}): {done.stdout[-2000:]}{done.stderr[-2000:]}")
    return {"cpu_s": round(done.cpu_s, 3), "wall_s": round(done.wall_s, 3), "out": done.stdout}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repo", type=Path, default=PROJECT)
    ap.add_argument("--rev", default="HEAD")
    ap.add_argument("--config", type=Path, default=None, help=".ragit/config.toml for both clones")
    ap.add_argument("--out", type=Path, default=HERE / "snapshot_bundle.json")
    args = ap.parse_args()
    load = os.getloadavg()
    with tempfile.TemporaryDirectory(prefix="ragit-bundle-bench-") as tmp:
        tmp_path = Path(tmp)
        clones = []
        for name in ("a", "b"):
            target = tmp_path / name
            subprocess.run(["git", "clone", "-q", str(args.repo), str(target)], check=True)
            subprocess.run(["git", "-C", str(target), "checkout", "-q", "--detach", args.rev], check=True)
            if args.config is not None:
                (target / ".ragit").mkdir(exist_ok=True)
                (target / ".ragit" / "config.toml").write_bytes(args.config.read_bytes())
            clones.append(target)
        a, b = clones
        bundle = tmp_path / "snapshot.ragit"
        ingest = run(["ingest", "--all"], a)
        export = run(["snapshot", "export", "HEAD", "-o", str(bundle)], a)
        imported = run(["snapshot", "import", str(bundle)], b)
        data = json.loads(export["out"])["data"]
        same = all(run(["query", q], a)["out"].replace(str(a), "R") == run(["query", q], b)["out"].replace(str(b), "R")
                   for q in QUESTIONS)
    rows = [("ingest --all (clone A)", ingest), ("snapshot export (clone A)", export),
            ("snapshot import (clone B)", imported)]
    print(f"repository {args.repo} @ {data['commitSha'][:12]}: {data['documents']} documents, {data['chunks']} chunks, "
          f"embedder {data['embedderId']}, bundle {data['bytes'] / 1e6:.2f} MB")
    print(f"{'step':<28}{'cpu s':>10}{'wall s':>10}")
    for name, r in rows:
        print(f"{name:<28}{r['cpu_s']:>10.2f}{r['wall_s']:>10.2f}")
    print(f"import / ingest CPU: {imported['cpu_s'] / ingest['cpu_s']:.2%}; query answers identical: {same}")
    result = {
        "date": datetime.now(UTC).strftime("%Y-%m-%d %H:%M:%S"),
        "loadavg": list(load),
        "repository": str(args.repo),
        "commitSha": data["commitSha"],
        "documents": data["documents"],
        "chunks": data["chunks"],
        "embedderId": data["embedderId"],
        "bundleBytes": data["bytes"],
        "steps": {name: {k: v for k, v in r.items() if k != "out"} for name, r in rows},
        "queriesIdentical": same,
    }
    args.out.write_text(json.dumps(result, indent=2) + "\n", encoding="utf-8")
    if not same:
        raise SystemExit("query answers differ between the imported and the ingested clone")


if __name__ == "__main__":
    main()
