"""The README's speed table: every issue-15 row from the JSON the bench scripts wrote, with the
machine load each was measured under.

Each script measures one thing and writes its own JSON (bench/README.md says how); this one only
reads them, so a row is always the figure its script printed. A row whose JSON is missing is
shown as "not measured". ``make bench`` runs the scripts, then this.

    python bench/speed_table.py [--json bench/speed_table.json]
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import Any, Callable

from ragit.store.vectorindex import APPROX_MIN_ROWS

BENCH = Path(__file__).resolve().parent


def _load(name: str) -> dict[str, Any] | None:
    path = BENCH / name
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None


def _load_text(values: Any) -> str:
    """The 1-minute load average(s) as 'a → b' (start → end) or 'a'."""
    if not values:
        return "not recorded"
    if isinstance(values[0], (list, tuple)):
        return " → ".join(f"{v[0]:.1f}" for v in values if v)
    return f"{values[0]:.1f}"


def _met(value: float | None, target: float | None) -> str:
    if value is None or target is None:
        return ""
    return "✅" if value <= target else "❌"


Row = dict[str, Any]


def _number(value: float) -> str:
    """Three significant figures, never in exponent form (6,500 rather than 6.5e+03)."""
    return f"{value:,.0f}" if abs(value) >= 100 else f"{value:.3g}"


def _row(metric: str, value: float | None, unit: str, target: float | None, load: Any, source: str,
         shown: str | None = None) -> Row:
    text = "not measured" if value is None else (shown or f"{_number(value)} {unit}".strip())
    return {"metric": metric, "value": value, "unit": unit, "shown": text,
            "target": None if target is None else f"≤ {target:g} {unit}".strip(), "met": _met(value, target),
            "load": _load_text(load), "source": source}


def _ingest_query(rows: list[Row]) -> None:
    data = _load("results.json")
    if data is None:
        return
    machine = data.get("machine", {})
    load = [machine.get("load_average_at_start") or machine.get("load_average"), machine.get("load_average_at_end")]
    load = [v for v in load if v]
    metrics = {m["key"]: m for m in data.get("metrics", [])}

    def pick(key: str, label: str, target: float | None = None, cpu: bool = False) -> None:
        m = metrics.get(key)
        if m is None:
            return
        value = m.get("cpu") if cpu and m.get("cpu") is not None else m["value"]
        rows.append(_row(label, value, m.get("unit", ""), target, load, "ingest_query.py"))

    # issue 15's target here is a ratio ("≥ 5× less CPU than today"), measured paired against
    # today's code by today_ratio.py (_today_ratio); until session 19 this row carried 0.95 s, the
    # filer's 4.73 s ÷ 5, but today's code takes about half that on this VM (2.2-2.5 s)
    pick("ingest_1k_cli_s", "1,000 docs (6k chunks): `ragit ingest --all` CPU", cpu=True)
    # since session 14 a large ingest forks workers (ragit.ingest.workers): more CPU, less wall
    pick("ingest_1k_cli_s", "1,000 docs (6k chunks): `ragit ingest --all` wall")
    pick("cold_cli_query_6k_s", "cold `ragit query` CPU, 6k chunks, in-process (ingest_query.py)", 0.15, cpu=True)
    pick("warm_api_query_p50_6k_ms", "warm `Repo.query` p50 wall, 6k chunks", 1.0)
    pick("ingest_10k_full_s", "10,000-file repo: full `ragit ingest --all` CPU", cpu=True)
    pick("reingest_since_warm_one_file_s", "10,000-file repo: one-file re-ingest, warm process")


def _today_ratio(rows: list[Row]) -> None:
    """Today's code (the commit issue 15 was filed against) ÷ this tree, CPU of the same full
    ingests in one run (``today_ratio.json``): the issue's "≥ 5× less CPU than today" as it asks
    targets to be compared, and sympy's ratio beside its absolute row."""
    data = _load("today_ratio.json")
    if data is None:
        return
    machine = data.get("machine", {})
    load = [v for v in (machine.get("load_average_at_start"), machine.get("load_average_at_end")) if v]
    for key, label, target in (("docs_1k", "1,000 docs (6k chunks)", data.get("target_ratio")),
                               ("sympy", "sympy (issue: 47.9 s → ≤ 10 s, 4.8×)", None)):
        s = data.get(key)
        if not s:
            continue
        ratio, cpu = s["cpu_ratio"], s["cpu_s"]
        rows.append({"metric": f"{label}: `ragit ingest --all` CPU, today's code ({data['today'][:8]}) ÷ this tree, "
                               f"paired in one run", "value": ratio, "unit": "×",
                     "shown": f"{ratio:.2f}× ({cpu['today']:.2f} s ÷ {cpu['now']:.2f} s)",
                     "target": None if target is None else f"≥ {target:g}×",
                     "met": "" if target is None else ("✅" if ratio >= target else "❌"),
                     "load": _load_text(load), "source": "today_ratio.py"})


def _index_speed(rows: list[Row]) -> None:
    data = _load("index_speed.json")
    if data is None:
        return
    s = data["summary"]
    load = [data["machine"].get("load_average_at_start"), data["machine"].get("load_average_at_end")]
    n = s.get("repositories")
    # the target is semble's published index time (wall); CPU is shown beside it, since ingest
    # workers (session 14) spend more CPU for less wall on a multi-core machine
    rows.append(_row(f"speed set ({n} repositories): mean index wall, in-process", s.get("api_wall_s"), "s",
                     s.get("target_mean_index_s"), load, "index_speed.py"))
    rows.append(_row(f"speed set: mean index CPU, in-process", s.get("api_cpu_s"), "s", None, load,
                     "index_speed.py"))
    rows.append(_row(f"speed set: mean `ragit ingest --all` CPU (fresh process)", s.get("cli_cpu_s"), "s", None,
                     load, "index_speed.py"))
    if s.get("warm_query_cpu_p50_ms_median") is not None:
        # every repository of the set has under 10k chunks, where the issue asks for p50 ≤ 1 ms: the
        # worst one is the figure held to the target (until session 20 the median was)
        target = s.get("target_warm_query_p50_ms")
        p50s = [r["warm_query_cpu_p50_ms"] for r in data.get("repositories", [])
                if r.get("warm_query_cpu_p50_ms") is not None]
        within = sum(v <= target for v in p50s) if target is not None else None
        rows.append(_row(f"speed set: warm `Repo.query` CPU p50, worst of the {len(p50s)} "
                         f"repositories (median {s['warm_query_cpu_p50_ms_median']:.2f} ms; "
                         f"{within} of {len(p50s)} within the target)",
                         s["warm_query_cpu_p50_ms_max"], "ms", target, load, "index_speed.py"))



def _semble_peer(rows: list[Row]) -> None:
    """ragit ÷ semble on the speed set, measured taking turns on this machine (``semble_peer.json``):
    issue 15 compares "in one run, as ratios where a peer exists", and semble is the peer whose
    published figures (0.23 s, about 1 ms) the absolute rows above are held to."""
    data = _load("semble_peer.json")
    if data is None or not data.get("summary"):
        return
    s, machine = data["summary"], data["machine"]
    load = [machine.get("load_average_at_start"), machine.get("load_average_at_end")]
    n, version = s["repositories"], data["semble"]["version"]

    def ratio_row(metric: str, ratio: float, ours: float, theirs: float, unit: str, target: bool) -> None:
        rows.append({"metric": metric, "value": ratio, "unit": "×",
                     "shown": f"{ratio:.2f}× ({ours:.3g} {unit} ÷ {theirs:.3g} {unit})",
                     "target": "≤ 1×" if target else None, "met": ("✅" if ratio <= 1 else "❌") if target else "",
                     "load": _load_text(load), "source": "semble_peer.py"})

    ratio_row(f"speed set ({n} repositories): mean index wall, in-process, ragit ÷ semble {version} paired in one "
              f"run (semble with a stand-in model of its kind)", s["wall_ratio"], s["ragit_wall_s"], s["semble_wall_s"],
              "s", True)
    ratio_row("speed set: mean index CPU, ragit ÷ semble, paired", s["cpu_ratio"], s["ragit_cpu_s"],
              s["semble_cpu_s"], "s", False)
    slower = len(s.get("query_slower_than_semble", []))
    ratio_row(f"speed set: warm query CPU p50 on the benchmark's questions, ragit ÷ semble, paired (medians of the "
              f"repositories; {n - slower} of {n} faster than semble)", s["query_ratio"],
              s["ragit_query_p50_ms_median"], s["semble_query_p50_ms_median"], "ms", True)

def _repo_ingest(rows: list[Row]) -> None:
    data = _load("repo_ingest.json")
    if data is None:
        return
    load = [data["machine"].get("load_average_at_start"), data["machine"].get("load_average_at_end")]
    name = data["repo"].split("/")[-1]
    rows.append(_row(f"{name} ({data['chunks']:,} chunks): full `ragit ingest --all` CPU", data.get("cli_cpu_s"), "s",
                     data.get("target_cpu_s"), load, "repo_ingest.py"))
    rows.append(_row(f"{name}: full `ragit ingest --all` wall", data.get("cli_wall_s"), "s", None, load,
                     "repo_ingest.py"))


def _serve(rows: list[Row]) -> None:
    """The 6k corpus's forwarded and in-process cold queries (``serve_query.json``), and the 1M
    store's forwarded one (``serve_query_1m.json``: ``serve_query.py --repo`` on vector_scale's
    store; its in-process figure is vector_scale's cold row)."""
    for name, label, target, with_inproc in (("serve_query.json", "6k", 0.15, True),
                                             ("serve_query_1m.json", "1M", 0.3, False)):
        data = _load(name)
        if data is None:
            continue
        by = {r["row"]: r for r in data.get("rows", [])}
        load = data.get("load_average")
        forwarded = by.get("ragit query (forwarded to ragit serve)")
        if forwarded:
            total = forwarded["cpu_s"] + forwarded.get("server_cpu_s", 0.0)
            rows.append(_row(f"cold `ragit query` CPU, {label} chunks, `ragit serve` running (client + server)",
                             total, "s", target, load, "serve_query.py",
                             f"{forwarded['cpu_s']:.3f} + {forwarded.get('server_cpu_s', 0.0):.3f} s"))
        inproc = by.get("ragit query (in-process)")
        if inproc and with_inproc:
            rows.append(_row(f"cold `ragit query` CPU, {label} chunks, in-process", inproc["cpu_s"], "s", target,
                             load, "serve_query.py"))


def _vector_scale(rows: list[Row]) -> None:
    data = _load("vector_scale.json")
    if data is None:
        return
    for size, sec in sorted(data.get("sizes", {}).items(), key=lambda kv: int(kv[0])):
        n = int(size)
        label = f"{n // 1000}k" if n < 1_000_000 else f"{n // 1_000_000}M"
        load = [sec.get("load_average_start"), sec.get("load_average_end")]
        target_warm = 5.0 if n <= 100_000 else 25.0
        # the target is the default configuration's: exact below APPROX_MIN_ROWS rows, IVF from there
        approx_default = n >= APPROX_MIN_ROWS
        exact, approx = sec.get("warm_exact") or {}, sec.get("warm_approx") or {}
        rows.append(_row(f"warm `Repo.query` p50 CPU, {label} chunks, exact" + ("" if approx_default else " (default)"),
                         exact.get("cpu_p50_ms"), "ms", None if approx_default else target_warm, load,
                         "vector_scale.py"))
        rows.append(_row(f"warm `Repo.query` p50 CPU, {label} chunks, IVF" + (" (default)" if approx_default else ""),
                         approx.get("cpu_p50_ms"), "ms", target_warm if approx_default else None, load,
                         "vector_scale.py"))
        recall = sec.get("recall_at_10")
        if recall is not None:
            rows.append({"metric": f"recall@10 of the IVF path vs exact, {label} chunks", "value": recall,
                         "unit": "", "shown": f"{recall:.3f}", "target": "≥ 0.98",
                         "met": "✅" if recall >= 0.98 else "❌", "load": _load_text(load),
                         "source": "vector_scale.py"})
        cold = sec.get("cold_cli_query") or {}
        if cold:
            big = n >= 1_000_000
            rows.append(_row(f"cold `ragit query` CPU, {label} chunks", cold.get("median_cpu_s"), "s",
                             0.3 if big else None, load, "vector_scale.py"))
            rows.append(_row(f"cold `ragit query` peak RSS, {label} chunks", cold.get("peak_rss_mb"), "MB",
                             300.0 if big else None, load, "vector_scale.py"))


def _ingest_memory(rows: list[Row]) -> None:
    """The newest result's peak at 1M chunks: measured when it has a point of 1M chunks or more,
    else projected from its points' slope; the whole process tree's summed PSS where the file has
    it (ingest workers, session 15), else the older single-process figure."""
    data = _load("ingest_memory.json")
    if data is None:
        return
    results = list(data.get("results", {}).values())
    if not results:
        return
    result = results[-1]
    points = result.get("points", [])
    big = [p for p in points if p.get("chunks", 0) >= 990_000]  # ≈1M (vector_scale's corpus: 999,996)
    if big:
        point = big[-1]
        value = point.get("tree_peak_pss_mb", point.get("peak_rss_mb"))
        metric = f"ingest peak memory, {point['chunks']:,} chunks, measured (whole process tree, summed PSS)"
    else:
        projections = result.get("projections") or {}
        pss = projections.get("tree_peak_pss_mb") or {}
        value = pss.get("projected_1m_mb", result.get("projected_1m_mb"))
        metric = "ingest peak memory, projected to 1M chunks (slope of the measured points)"
    rows.append(_row(metric, value, "MB", 4000.0, data.get("loadavg"), "ingest_memory.py"))


def _eval_speed(rows: list[Row]) -> None:
    data = _load("eval_swe_lite_dev.json")
    timing = ((data or {}).get("data") or {}).get("timing") if data else None
    if not timing:
        return
    rows.append(_row("`ragit eval run swe_lite_dev`: query CPU per task after ingest",
                     timing.get("queryCpuSecondsPerTask"), "s", 0.2, (data.get("data") or {}).get("loadAverage"),
                     "eval run → eval_swe_lite_dev.json"))


def _warm_gin(rows: list[Row]) -> None:
    data = _load("warm_query.json")
    if data is None:
        return
    rows.append(_row("warm `Repo.query` p50 wall, gin (1.9k chunks, 16 questions × rounds)", data.get("p50_ms"), "ms",
                     1.0, data.get("load_average"), "warm_query.py"))


SECTIONS: list[Callable[[list[Row]], None]] = [_ingest_query, _today_ratio, _index_speed, _semble_peer,
                                               _repo_ingest, _serve, _warm_gin,
                                               _vector_scale, _ingest_memory, _eval_speed]


def table() -> tuple[str, list[Row]]:
    rows: list[Row] = []
    for section in SECTIONS:
        section(rows)
    lines = ["| metric | value | target | load (1-min avg) | script |", "|---|---|---|---|---|"]
    for r in rows:
        target = f"{r['target']} {r['met']}".strip() if r["target"] else ""
        lines.append(f"| {r['metric']} | {r['shown']} | {target} | {r['load']} | `{r['source']}` |")
    return "\n".join(lines), rows


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--json", type=Path, default=BENCH / "speed_table.json")
    args = ap.parse_args()
    text, rows = table()
    print(text)
    args.json.write_text(json.dumps({"rows": rows}, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
