"""The ragit section setup writes into AGENTS.md / CLAUDE.md: when an agent should use which tool.

Delimited by HTML comments so a re-run replaces it in place and an uninstall removes it; the
text is fixed (no dates, no machine paths in project scope) so re-runs are byte-identical.
"""

from __future__ import annotations

from pathlib import Path

BEGIN = "<!-- ragit:begin (written by `ragit setup`; replaced on re-run, removed by `ragit setup --uninstall`) -->"
END = "<!-- ragit:end -->"

_BODY = """\
## ragit: commit-bound context for this repository

The `ragit` MCP server answers from the indexed snapshot of the exact HEAD commit and cites every
hit as `path@sha:Lx-Ly`.

- Where is X, how does Y work, why was Z decided: call `query` before opening files one by one;
  for a task, `context_pack` with the goal returns cited context under a budget.
- Quote or build on a citation only after `verify_citation` reports it `ok`.
- At the start of a task call `memory_recall` with the goal; at the end call `memory_wrap` with the
  goal, a summary, decisions and open loops, so the next session can resume.
- A tool result replaced by `_offloaded` and a ref id: `tool_result_recall` with that `refId` and
  the `sessionId` returns the full result.
- Earlier sessions: `session_search`.
- `SNAPSHOT_NOT_INDEXED` or `SNAPSHOT_INGEST_IN_PROGRESS`: run `ragit ingest` (or retry), then call
  again.

Without MCP the same commands exist on the CLI: `ragit query`, `ragit context pack`,
`ragit verify`, `ragit memory recall|wrap`, `ragit window recall`, `ragit session search`.
"""


def section(root: Path, scope: str) -> str:
    """The delimited section; user-level files also name the repository the server serves."""
    body = _BODY
    if scope == "user":
        body = body.replace(
            "for this repository\n",
            f"for {root}\n\nThe `ragit` server is bound to `{root}`: use it only when working there.\n", 1)
    return f"{BEGIN}\n{body}{END}\n"
