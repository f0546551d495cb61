"""Text renderings of ``eval mine`` and ``eval run`` (knowledge §21, cli-contract §8)."""

from __future__ import annotations

from typing import Any

from ..contract.jsonout import format_score
from ..contract.render import header

_METRIC_LABELS = {"recallAt5": "R@5", "recallAt10": "R@10", "mrr": "MRR", "ndcgAt10": "NDCG@10"}


def _num(value: float | None) -> str:
    return "none" if value is None else format_score(value)


def _table(head: list[str], rows: list[list[str]]) -> list[str]:
    lines = ["| " + " | ".join(head) + " |", "|" + "|".join("---" for _ in head) + "|"]
    return lines + ["| " + " | ".join(r) + " |" for r in rows]


def mine_text(data: dict[str, Any]) -> str:
    skipped = ", ".join(f"{reason}={n}" for reason, n in data["skipped"].items() if n) or "none"
    lines = header("eval mine", [("out", data["out"]), ("tasks", data["tasks"]), ("scanned", data["scanned"]),
                                 ("skipped", skipped), ("seed", data["seed"])], data["warnings"])
    return "\n".join(lines) + "\n"


def run_text(data: dict[str, Any]) -> str:
    """Header lines, the per-mode table and the paired comparisons, numbers with 4 decimals."""
    lines = header("eval run", [("tasks", data["tasks"]), ("evaluated", data["evaluated"]),
                                ("skipped", len(data["skipped"]))], data["warnings"])
    budgets = list(data["modes"][0]["packRecall"]) if data["modes"] else []
    head = ["mode", "R@1", "R@5", "R@10", "Acc@5", "Acc@10", "MRR", "NDCG@10"]
    for b in budgets:
        head += [f"pack@{b}", f"tokens@{b}"]
    rows = []
    for m in data["modes"]:
        keys = ("recallAt1", "recallAt5", "recallAt10", "accAt5", "accAt10", "mrr", "ndcgAt10")
        row = [m["mode"]] + [_num(m[k]) for k in keys]
        for b in budgets:
            row += [_num(m["packRecall"][b]), _num(m["tokensPerTask"][b])]
        rows.append(row + [_num(m["secondsPerTask"])])
    lines += [""] + _table(head + ["s/task"], rows)
    for field, label in (("byCategory", "category"), ("byLanguage", "language")):
        names = list(dict.fromkeys(name for m in data["modes"] for name in m.get(field, {})))
        if names:
            modes = [m["mode"] for m in data["modes"]]
            table = [[name, str(next(m[field][name]["tasks"] for m in data["modes"] if name in m[field]))]
                     + [_num(m[field][name]["ndcgAt10"]) if name in m[field] else "none" for m in data["modes"]]
                     for name in names]
            lines += ["", f"NDCG@10 by {label}:", ""] + _table([label, "tasks"] + modes, table)
    if data["comparisons"]:
        comp = [[c["a"], c["b"], _METRIC_LABELS[c["metric"]], _num(c["diff"]),
                 "none" if c["ci95"] is None else f"[{_num(c['ci95'][0])}, {_num(c['ci95'][1])}]"]
                for c in data["comparisons"]]
        lines += [""] + _table(["a", "b", "metric", "diff (b − a)", "95% CI"], comp)
    if "regressions" in data:
        gate = data["baseline"]
        if data["regressions"]:
            rows = [[r["mode"], _METRIC_LABELS[r["metric"]], _num(r["baseline"]), _num(r["value"])]
                    for r in data["regressions"]]
            lines += ["", f"regressions against {gate['file']} (max drop {_num(gate['maxDrop'])}):", ""]
            lines += _table(["mode", "metric", "baseline", "value"], rows)
        else:
            lines += ["", f"regressions against {gate['file']} (max drop {_num(gate['maxDrop'])}): none"]
    timing = data.get("timing")
    if timing:
        lines += ["", timing_text(timing)]
    return "\n".join(lines) + "\n"


def timing_text(t: dict[str, Any]) -> str:
    """One line: indexing, then the queries in wall and CPU seconds, in total and per task."""
    ingest = (f"ingest {_num(t['ingestSeconds'])} s wall, {_num(t['ingestCpuSeconds'])} s CPU"
              f" ({t['ingestedCommits']} commit(s) indexed)")
    query = f"queries {_num(t['querySeconds'])} s wall, {_num(t['queryCpuSeconds'])} s CPU"
    if t["querySecondsPerTask"] is not None:
        query += (f" ({_num(t['querySecondsPerTask'])} s wall, {_num(t['queryCpuSecondsPerTask'])} s CPU"
                  " per task)")
    return f"timing: {ingest}; {query}"


_DECISIONS = {
    "written": "written to {path}",
    "dry_run": "not written (--dry-run); without it the setting would be written",
    "no_better_setting": "not written: no setting beat the current configuration on the training half",
    "ci_includes_zero": "not written: the held-out gain's 95% interval does not lie above zero",
    "too_few_tasks": "not written: too few tasks to split",
}


def _setting(values: dict[str, Any] | None) -> str:
    if not values:
        return "(the current configuration)"
    return ", ".join(f"{k} = {str(v).lower() if isinstance(v, bool) else _num(v)}" for k, v in values.items())


def tune_text(data: dict[str, Any]) -> str:
    """Header, the baseline and best rows (train and held-out), the gain and the decision."""
    best = data["best"]
    lines = header("tune", [("tasks", data["tasks"]), ("train", data["train"]), ("held-out", data["heldOut"]),
                            ("best", _setting(best["changed"]) if best else "none"),
                            ("decision", _DECISIONS[data["decision"]].format(path=data["configPath"]))],
                   data["warnings"])
    if best is not None:
        rows = []
        for name, row in (("current", data["baseline"]), ("best", best)):
            for split, label in (("train", "train"), ("heldOut", "held-out")):
                m = row[split] or {}
                rows.append([name, label] + [_num(m.get(k)) for k in ("recallAt5", "recallAt10", "mrr", "ndcgAt10")])
        lines += [""] + _table(["setting", "split", "R@5", "R@10", "MRR", "NDCG@10"], rows)
        ci = data["ci95"]
        lines += ["", f"held-out R@5 gain: {_num(data['gain'])}"
                      + ("" if ci is None else f" [95% CI {_num(ci[0])}, {_num(ci[1])}]")]
        cost = data["cost"]
        lines += [f"cost: {cost['settings']} setting(s), {cost['rankings']} ranking(s) in {cost['scoringPasses']} "
                  f"scoring pass(es); ingest {_num(cost['ingestCpuSeconds'])} s CPU "
                  f"({cost['ingestedCommits']} commit(s)), search {_num(cost['searchCpuSeconds'])} s CPU, "
                  f"held-out {_num(cost['heldOutCpuSeconds'])} s CPU"]
    return "\n".join(lines) + "\n"
