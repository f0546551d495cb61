"""``artifact capture | list | show | review | promote | supersede | retract | archive`` (memory §5).

Artifact commands work outside a Git repository too (``boundSha`` is then null); ``list`` and
``show`` are read-only, and every mutating command writes nothing with ``--dry-run``.
"""

from __future__ import annotations

from typing import Any

import click

from ..contract.describe import _CWD, _DRY, _FMT, _INPUT, _spec, register
from .common import common, dry_run_option, existing_root, input_option
from .app import cli
from .output import Output

_SCOPES = ["session", "harness", "evidence"]
_STATUSES = ["captured", "reviewed", "promoted", "superseded", "retracted", "archived"]


@cli.group("artifact")
def artifact_group() -> None:
    """Knowledge artifacts: capture findings and evidence, review and promote them."""


def _root(cwd: str | None, command: str):
    """The git root of ``--cwd``, else its absolute path (artifacts work outside git); it must exist."""
    return existing_root(cwd, command)[0]


def _config(root):
    from ..config import load_config

    return load_config(root)


def _record_text(command: str, record: dict[str, Any], warnings: list[str], dry_run: bool | None) -> str:
    from ..contract.render import header

    lines = [("artifact_id", record["artifactId"]), ("scope", record["scope"]), ("kind", record["kind"]),
             ("status", record["status"]), ("authority", record["authority"]),
             ("confidence", record["confidence"]), ("title", record["title"]),
             ("bound_sha", record["boundSha"]), ("evidence", len(record["evidence"])),
             ("superseded_by", record["supersededBy"]), ("updated_at", record["updatedAt"])]
    if dry_run is not None:
        lines.append(("dry_run", dry_run))
    out = header(command, lines, warnings) + ["", record["text"]]
    for ev in record["evidence"]:
        where = ev["path"] if ev["startLine"] is None else f"{ev['path']}:L{ev['startLine']}-L{ev['endLine']}"
        out.append(f"- {ev['evidenceId']}: {where}")
    return "\n".join(out) + "\n"


def _record_output(command: str, result: dict[str, Any], root, dry_run: bool | None) -> Output:
    record, warnings = result["artifact"], result["warnings"]
    return Output(command, record, lambda: _record_text(command, record, warnings, dry_run), warnings, cwd=str(root))


# ------------------------------------------------------------------ capture / list / show

@artifact_group.command("capture")
@input_option
@dry_run_option
@common
def capture_cmd(input_, dry_run, format_, cwd) -> Output:
    """Record a finding, harness fact or evidence as a new artifact (status captured)."""
    from ..contract.inputs import Validator, load_json_input
    from ..memory.artifacts import capture

    root = _root(cwd, "artifact capture")
    v = Validator("artifact capture")
    if input_ is None:
        raise v.fail("--input", "required", "artifact capture needs --input <path|->")
    payload = load_json_input(input_, root, v)
    result = capture(root, _config(root), payload, dry_run=dry_run)
    return _record_output("artifact capture", result, root, dry_run)


@artifact_group.command("list")
@click.option("--scope", default=None, metavar="session|harness|evidence")
@click.option("--status", default=None, metavar="|".join(_STATUSES))
@common
def list_cmd(scope, status, format_, cwd) -> Output:
    """List artifacts, newest update first."""
    from ..contract.render import header
    from ..memory.artifacts import list_artifacts

    root = _root(cwd, "artifact list")
    data = list_artifacts(root, _config(root), scope=scope, status=status)

    def text() -> str:
        rows = data["artifacts"]
        lines = header("artifact list", [("scope", scope or "all"), ("status", status or "all"),
                                         ("artifacts", len(rows))], data["warnings"]) + [""]
        lines += [f"{n}. {a['artifactId']} · {a['scope']}/{a['kind']} · {a['status']} · {a['title']}"
                  for n, a in enumerate(rows, 1)] or ["- none"]
        return "\n".join(lines) + "\n"

    return Output("artifact list", data, text, data["warnings"], cwd=str(root))


@artifact_group.command("show")
@click.argument("artifact_id", required=False)
@common
def show_cmd(artifact_id, format_, cwd) -> Output:
    """Print one artifact record."""
    from ..memory.artifacts import show

    art_id = _id_argument(artifact_id, "artifact show")
    root = _root(cwd, "artifact show")
    return _record_output("artifact show", show(root, _config(root), art_id), root, None)


def _id_argument(value: str | None, command: str) -> str:
    from ..contract.inputs import Validator

    v = Validator(command)
    if value is None:
        raise v.fail("artifactId", "required", "the artifact id argument is required")
    return v.text(value, "artifactId")


# ------------------------------------------------------------------ lifecycle

def _transition(command: str, target: str, artifact_id: str | None, dry_run: bool, cwd: str | None,
                by: str | None = None) -> Output:
    from ..memory.artifacts import transition

    art_id = _id_argument(artifact_id, command)
    root = _root(cwd, command)
    result = transition(root, _config(root), art_id, target, by=by, dry_run=dry_run)
    return _record_output(command, result, root, dry_run)


@artifact_group.command("review")
@click.argument("artifact_id", required=False)
@dry_run_option
@common
def review_cmd(artifact_id, dry_run, format_, cwd) -> Output:
    """Mark a captured artifact as reviewed (it then joins the session/harness overlay)."""
    return _transition("artifact review", "reviewed", artifact_id, dry_run, cwd)


@artifact_group.command("promote")
@click.argument("artifact_id", required=False)
@dry_run_option
@common
def promote_cmd(artifact_id, dry_run, format_, cwd) -> Output:
    """Mark a reviewed artifact as promoted (status only; documents come from memory promote)."""
    return _transition("artifact promote", "promoted", artifact_id, dry_run, cwd)


@artifact_group.command("supersede")
@click.argument("artifact_id", required=False)
@click.option("--by", default=None, metavar="ID", help="The replacing artifact.")
@dry_run_option
@common
def supersede_cmd(artifact_id, by, dry_run, format_, cwd) -> Output:
    """Mark an artifact as superseded by another one."""
    return _transition("artifact supersede", "superseded", artifact_id, dry_run, cwd, by=by)


@artifact_group.command("retract")
@click.argument("artifact_id", required=False)
@dry_run_option
@common
def retract_cmd(artifact_id, dry_run, format_, cwd) -> Output:
    """Withdraw an artifact that turned out wrong."""
    return _transition("artifact retract", "retracted", artifact_id, dry_run, cwd)


@artifact_group.command("archive")
@click.argument("artifact_id", required=False)
@dry_run_option
@common
def archive_cmd(artifact_id, dry_run, format_, cwd) -> Output:
    """Archive an artifact: it leaves every overlay for good."""
    return _transition("artifact archive", "archived", artifact_id, dry_run, cwd)


# ------------------------------------------------------------------ describe

_ID_ARG = [{"name": "artifactId", "type": "string", "required": True, "description": "art-<24 hex>"}]
_RECORD = ["artifactId", "scope", "kind", "title", "text", "status", "authority", "confidence", "sessionId",
           "boundSha", "contentHash", "evidence", "supersededBy", "createdAt", "updatedAt", "history"]
_LIFECYCLE_ERRORS = ["INPUT_INVALID", "ARTIFACT_NOT_FOUND", "ARTIFACT_TRANSITION_INVALID", "CONFIG_INVALID"]
_RELATED = ["artifact capture", "artifact list", "artifact show", "artifact review", "artifact promote",
            "artifact supersede", "artifact retract", "artifact archive"]


def _related(path: str) -> list[str]:
    return [p for p in _RELATED if p != path] + ["query"]


register(_spec(
    "artifact capture", "Record a knowledge artifact (finding, harness fact or evidence) with status captured.",
    related=_related("artifact capture"), mutating=True, dry_run=True, raw_json=True, outputs=_RECORD,
    options=[dict(_INPUT, required=True), _DRY, _FMT, _CWD],
    examples=["ragit artifact capture --input finding.json", "ragit artifact capture --input - --dry-run"],
    errors=["INPUT_INVALID", "CONFIG_INVALID"], formats=("json", "json"),
))
register(_spec(
    "artifact list", "List knowledge artifacts, newest update first (read-only).",
    related=_related("artifact list"), mutating=False, outputs=["artifacts", "warnings"],
    options=[{"name": "--scope", "type": "enum", "description": "Only this scope.", "enum": _SCOPES},
             {"name": "--status", "type": "enum", "description": "Only this status.", "enum": _STATUSES},
             _FMT, _CWD],
    examples=["ragit artifact list", "ragit artifact list --scope harness --status reviewed"],
    errors=["INPUT_INVALID", "CONFIG_INVALID"], formats=("json", "json"),
))
register(_spec(
    "artifact show", "Print one knowledge artifact record (read-only).",
    related=_related("artifact show"), mutating=False, outputs=_RECORD, arguments=_ID_ARG, options=[_FMT, _CWD],
    examples=["ragit artifact show art-0123456789abcdef01234567"],
    errors=["INPUT_INVALID", "ARTIFACT_NOT_FOUND", "CONFIG_INVALID"], formats=("json", "json"),
))
_BY = {"name": "--by", "type": "string", "required": True, "description": "The replacing artifact id."}
for _path, _desc in (
    ("artifact review", "Move a captured artifact to reviewed."),
    ("artifact promote", "Move a reviewed artifact to promoted (status only; see memory promote)."),
    ("artifact supersede", "Mark an artifact as superseded by another artifact (--by)."),
    ("artifact retract", "Retract a captured or reviewed artifact."),
    ("artifact archive", "Archive an artifact; it never returns to an overlay."),
):
    _extra = " --by art-89abcdef0123456789abcdef" if _path == "artifact supersede" else ""
    register(_spec(
        _path, _desc, related=_related(_path), mutating=True, dry_run=True, outputs=_RECORD, arguments=_ID_ARG,
        options=([_BY] if _extra else []) + [_DRY, _FMT, _CWD],
        examples=[f"ragit {_path} art-0123456789abcdef01234567{_extra}",
                  f"ragit {_path} art-0123456789abcdef01234567{_extra} --dry-run"],
        errors=_LIFECYCLE_ERRORS, formats=("json", "json"),
    ))
