"""``verify``: check a citation against the HEAD commit (knowledge §20).

A drifted citation is a result, not a failure: the report is printed with ``ok: false`` and
exit 3, so an agent can tell "your evidence moved" apart from "your input was wrong" (exit 2).
"""

from __future__ import annotations

from typing import Any

import click

from ..contract.describe import _CWD, _FMT, _spec, register
from .common import common, open_repo
from .app import cli
from .output import Output


@cli.command("verify")
@click.argument("citation")
@common
def verify_cmd(citation: str, format_: str | None, cwd: str | None) -> Output:
    """Check a citation id or path@sha:Lx-Ly handle against the HEAD commit."""
    from ..retrieve.verify import verify_citation

    from ..contract.inputs import check_citation

    repo = open_repo(cwd)
    check_citation(citation)
    data = verify_citation(repo.root, repo.git, repo.config, citation)
    ok = data["status"] == "ok"
    return Output("verify", data, lambda: verify_text(data), data["warnings"], ok=ok, exit_code=0 if ok else 3,
                  cwd=str(repo.root))


def verify_text(data: dict[str, Any]) -> str:
    """Header lines, warnings, then the diff when there is one."""
    from ..contract.render import header
    from ..retrieve.verify import display_handle

    cited, current = data["cited"], data["current"]
    where = "none"
    if current is not None:
        sha = data["head"] if current["blobId"] is not None else None
        where = display_handle(current["path"], sha, current["startLine"], current["endLine"])
    lines = header("verify", [
        ("citation", data["citation"]),
        ("status", data["status"]),
        ("cited", display_handle(cited["path"], cited["sha"], cited["startLine"], cited["endLine"])),
        ("current", where),
        ("head", data["head"]),
    ], data["warnings"])
    text = "\n".join(lines) + "\n"
    return text + "\n" + data["diff"] if data["diff"] else text


register(_spec(
    "verify", "Check a citation (id or path@sha:Lx-Ly) against the HEAD commit: ok, shifted, changed, moved, "
              "deleted or withdrawn.",
    related=["query", "context pack", "artifact show"], mutating=False,
    outputs=["citation", "cited", "head", "status", "current", "diff", "warnings"],
    arguments=[{"name": "citation", "type": "string", "required": True,
                "description": "A citation id (cite-<24 hex>) or a handle path@<sha>:L<start>-L<end>."}],
    options=[_FMT, _CWD],
    examples=["ragit verify cite-891adb60f18f7563478d6062", "ragit verify docs/auth.md@3f2a1b4c5d6e:L10-L24"],
    errors=["INPUT_INVALID", "CITATION_NOT_FOUND", "SNAPSHOT_REF_INVALID", "SNAPSHOT_REF_AMBIGUOUS",
            "GIT_REPOSITORY_REQUIRED", "CONFIG_INVALID"],
    formats=("json", "json"),
))
