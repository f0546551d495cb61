"""Text rendering rules shared by commands (cli-contract §8, knowledge §12.7)."""

from __future__ import annotations

from typing import Any, Iterable, Sequence

from ..retrieve.hits import Hit
from .jsonout import format_score
from .views import EXCERPT_CHARS, excerpt


def value(v: Any, *, null: str = "none") -> str:
    """Booleans as true/false, absent as ``none`` (or ``null`` where a command says so)."""
    if v is None:
        return null
    if isinstance(v, bool):
        return "true" if v else "false"
    return str(v)


def header(command: str, lines: Iterable[tuple[str, Any]], warnings: Sequence[str] = ()) -> list[str]:
    out = [f"# ragit {command}"]
    out += [f"- {k}: {value(v)}" for k, v in lines]
    out += [f"- warning: {w}" for w in warnings]
    return out


def _explanation(b: dict[str, Any]) -> str:
    r = b["retrieval"]
    v = r["inputs"]["vector"]
    k = r["inputs"]["keyword"]
    a = b["authority"]
    t = b["recency"]
    f = format_score
    return (
        f"   - explanation: mode={b['mode']} retrieval={f(r['score'])}×{f(r['weight'])}→{f(r['contribution'])}"
        f" vector={f(v['score'])}×{f(v['weight'])}→{f(v['contribution'])}"
        f" keyword={f(k['score'])}×{f(k['weight'])}→{f(k['contribution'])}"
        f"{_rerank(r.get('rerank'))}"
        f" authority={f(a['score'])}×{f(a['weight'])}→{f(a['contribution'])}"
        f" recency={f(t['score'])}×{f(t['weight'])}→{f(t['contribution'])}"
        f" final={f(b['final'])}"
    )


def _rerank(block: dict[str, Any] | None) -> str:
    """`` rerank=<contribution> (<factor>=<value> ...)`` when the code re-rank changed the score:
    boosts (definition, path, file) are added, role and diversity multiply."""
    if not block:
        return ""
    factors = " ".join(f"{name}={format_score(value)}" for name, value in block["factors"].items())
    return f" rerank={format_score(block['contribution'])}" + (f" ({factors})" if factors else "")


def hit_list(hits: Sequence[Hit], view: str, *, explain: bool = False) -> list[str]:
    """The numbered hit list; ``- none`` when empty."""
    if not hits:
        return ["- none"]
    out: list[str] = []
    for n, hit in enumerate(hits, 1):
        first = f"{n}. [{hit.citation_id}] {hit.location()} · {hit.section_title} · score={format_score(hit.score_final)}"
        if hit.flags:
            first += f" · flags={','.join(hit.flags)}"
        out.append(first)
        if explain:
            out.append(_explanation(hit.breakdown))
        body = hit.text if view == "full" else excerpt(hit.text, EXCERPT_CHARS[view])
        lines = body.split("\n")
        out.append(f"   - {lines[0]}")
        out += [f"     {line}" if line else "" for line in lines[1:]]
    return out


def snapshot_lines(snapshot: dict[str, Any], snapshot_sha: str | None) -> list[tuple[str, Any]]:
    """The snapshot header block of query / context pack text output."""
    return [
        ("snapshot", snapshot_sha),
        ("requested_ref", snapshot["requestedRef"]),
        ("resolved_sha", snapshot["resolvedSha"] if snapshot["resolvedSha"] is not None else "null"),
        ("selection", snapshot["selection"]),
        ("status", snapshot["status"]),
        ("branch", snapshot["branch"] if snapshot["branch"] is not None else "null"),
        ("detached", snapshot["detached"]),
        ("worktree_dirty", snapshot["worktreeDirty"]),
    ]
