"""``why``: the commits that introduced and last changed some lines (knowledge §22.3). Read-only."""

from __future__ import annotations

from typing import Any

import click

from ..contract.describe import _CWD, _FMT, _spec, register
from .app import cli
from .common import common, open_repo
from .output import Output


@cli.command("why")
@click.argument("target")
@click.option("--at", default=None, metavar="SHA", help="Commit to read (HEAD, a full SHA or a 4+ hex prefix).")
@click.option("--limit", default=None, metavar="N", help="Commits to report (default 10; the introducing one is kept).")
@common
def why_cmd(target: str, at: str | None, limit: str | None, format_: str | None, cwd: str | None) -> Output:
    """Show the commits that introduced and last changed path[:Lx-Ly], with their masked hunks."""
    from ..contract.inputs import Validator, check_text

    v = Validator("why")
    check_text(target, v, "path")  # size limit and lone surrogates (cli-contract §3.3)
    count = v.cli_positive_int(limit, "--limit") if limit is not None else None
    repo = open_repo(cwd)
    data = repo.why(target, at="HEAD" if at is None else at.strip(), limit=count)
    return Output("why", data, lambda: why_text(data), data["warnings"], cwd=str(repo.root))


def why_text(data: dict[str, Any]) -> str:
    """Header lines, then each commit newest first with its hunk, then the memory items."""
    from ..contract.render import header

    where = data["path"] if data["startLine"] is None else f"{data['path']}:L{data['startLine']}-L{data['endLine']}"
    short = lambda sha: sha[:12] if sha else None  # noqa: E731
    lines = header("why", [
        ("path", where),
        ("sha", data["sha"]),
        ("commits", len(data["commits"])),
        ("last_changed", short(data["lastChanged"])),
        ("introduced", short(data["introduced"])),
        ("omitted", data["omitted"]),
        ("memory_items", len(data["memoryItems"])),
        ("masked_count", data["redactionSummary"]["maskedCount"]),
    ], data["warnings"])
    lines.append("")
    if not data["commits"]:
        lines.append("- none")
    for n, c in enumerate(data["commits"], 1):
        lines.append(f"{n}. {c['sha'][:12]} · {c['committedAt']} · {c['subject']} · `{c['path']}`")
        body = c["message"].split("\n", 1)[1].strip("\n") if "\n" in c["message"] else ""
        lines += [f"   > {row}".rstrip() for row in body.split("\n")] if body else []
        lines += [f"   {row}" for row in c["hunk"].split("\n")] if c["hunk"] else []
    for item in data["memoryItems"]:
        state = "stale" if item.get("stale") else "current"
        lines.append(f"- memory {item.get('id')} ({state}): {item.get('title') or item.get('summary') or ''}".rstrip())
    return "\n".join(lines) + "\n"


register(_spec(
    "why", "The commits that introduced and last changed path[:Lx-Ly] (line history, renames followed), "
           "newest first, with masked hunks, plus the memory items whose evidence cites the lines.",
    related=["verify", "query"], mutating=False,
    outputs=["path", "startLine", "endLine", "sha", "commits", "commits[].message", "commits[].hunk", "lastChanged", "introduced",
             "omitted", "memoryItems", "warnings", "redactionSummary"],
    arguments=[{"name": "target", "type": "string", "required": True,
                "description": "A repository path, optionally with lines: path:L<start>-L<end> or path:L<n>."}],
    options=[{"name": "--at", "type": "string", "description": "Commit to read (HEAD, a full SHA or a 4+ hex prefix).",
              "defaultValue": "HEAD"},
             {"name": "--limit", "type": "number", "description": "Commits to report; when cut, the newest "
              "limit-1 plus the one that introduced the lines.", "defaultValue": 10},
             _FMT, _CWD],
    examples=["ragit why src/app.py:L10-L24", "ragit why src/app.py --limit 5 --format text"],
    errors=["INPUT_INVALID", "CITATION_NOT_FOUND", "SNAPSHOT_REF_INVALID", "SNAPSHOT_REF_AMBIGUOUS",
            "GIT_REPOSITORY_REQUIRED", "CONFIG_INVALID"],
    formats=("json", "json"),
))
