"""Memory commands: ``memory wrap | recall | promote`` (memory §2–4).

All three work outside a Git repository (the root is then the absolute ``--cwd``), except
``promote --commit``. Input is validated before any Git work and before any write.
"""

from __future__ import annotations

import click

from ..contract.describe import _CWD, _DRY, _FMT, _INPUT, _NO_WAIT, _VIEW, _spec, register
from .common import (
    check_view,
    common,
    dry_run_option,
    input_option,
    resolve_root,
    view_option,
)
from .app import cli
from .output import Output


@cli.group("memory")
def memory_group() -> None:
    """Working memory across calls and sessions."""


def _git(root, in_git: bool):
    from ..gitsnap.git import Git

    return Git(root) if in_git else None


def _payload(command: str, input_: str | None, root):
    from ..contract.inputs import Validator, load_json_input

    v = Validator(command)
    if input_ is None:
        raise v.fail("--input", "required", "--input is required")
    return load_json_input(input_, root, v)


@memory_group.command("wrap")
@input_option
@dry_run_option
@common
def wrap_cmd(input_, dry_run, format_, cwd) -> Output:
    """Record a session and replace the working state and open-loop registry."""
    from ..config import load_config
    from ..memory.working import COMMAND, WrapInput, wrap

    root, in_git = resolve_root(cwd)
    inp = WrapInput.from_payload(_payload(COMMAND, input_, root), root)
    result = wrap(root, _git(root, in_git), load_config(root), inp, dry_run=dry_run)
    data = result.to_dict()
    return Output(COMMAND, data, result.text, data["warnings"], cwd=str(root))


@memory_group.command("recall")
@click.argument("goal", required=False)
@click.option("--no-wait", "no_wait", is_flag=True, default=False,
              help="Do not wait for a running ingest of HEAD (knowledge §5.7).")
@view_option
@common
def recall_cmd(goal, no_wait, view, format_, cwd) -> Output:
    """Restore working state, open loops, decisions and cited hits for a goal (read-only)."""
    from ..config import load_config
    from ..memory.recall import COMMAND, check_goal, recall, recall_text

    view = check_view(view, COMMAND)
    goal = check_goal(goal)
    root, in_git = resolve_root(cwd)
    packet = recall(root, _git(root, in_git), load_config(root), goal, ingest_wait=0.0 if no_wait else None)
    data = packet.to_dict(view)
    return Output(COMMAND, data, lambda: recall_text(data, packet.hits, view), data["warnings"], cwd=str(root))


@memory_group.command("promote")
@input_option
@click.option("--commit", is_flag=True, default=False, help="Commit exactly the promoted files, then ingest.")
@dry_run_option
@common
def promote_cmd(input_, commit, dry_run, format_, cwd) -> Output:
    """Write promotion candidates as long-term memory documents under memory.corpus_dir."""
    from ..config import load_config
    from ..memory.promote import COMMAND, PromoteInput, promote

    root, in_git = resolve_root(cwd)
    inp = PromoteInput.from_payload(_payload(COMMAND, input_, root), root)
    result = promote(root, _git(root, in_git), load_config(root), inp, commit=commit, dry_run=dry_run)
    data = result.to_dict()
    return Output(COMMAND, data, result.text, data["warnings"], cwd=str(root))


@memory_group.command("verify")
@click.option("--at", "at", default=None, help="Check against this commit instead of HEAD.")
@common
def verify_cmd(at, format_, cwd) -> Output:
    """List memory items whose evidence no longer matches the code (exit 3 when any is stale)."""
    from ..memory.audit import COMMAND, verify_memory
    from .common import open_repo

    repo = open_repo(cwd)
    result = verify_memory(repo.root, repo.git, repo.config, at)
    data = result.to_dict()
    ok = result.stale == 0
    return Output(COMMAND, data, result.text, data["warnings"], ok=ok, exit_code=0 if ok else 3,
                  cwd=str(repo.root))


_REQUIRED_INPUT = dict(_INPUT, required=True)

register(_spec(
    "memory wrap", "Record a session: session record, working state and open-loop registry under .ragit/memory/.",
    related=["memory recall", "memory promote"], mutating=True, dry_run=True, raw_json=True,
    outputs=["sessionId", "sessionPath", "currentPath", "openLoopsPath", "sourceHeadSha", "dryRun", "warnings"],
    options=[_REQUIRED_INPUT, _DRY, _FMT, _CWD],
    examples=["ragit memory wrap --input session.json", "ragit memory wrap --input - --dry-run"],
    errors=["INPUT_INVALID", "CONFIG_INVALID"], formats=("json", "text"),
))
register(_spec(
    "memory recall", "Resume packet: working state, open loops, decisions and cited hits of HEAD's snapshot; "
    "degrades to working memory and reviewed artifacts when the snapshot is unavailable.",
    related=["memory wrap", "query", "context pack"], mutating=False,
    outputs=["goal", "constraints", "openLoops", "relatedDecisions", "retrievedHits", "retrievedHits[].citation",
             "nextActions", "latestSessionId", "previousSession", "sourceHeadSha", "snapshotSha", "snapshot",
             "createdAt", "warnings", "redactionSummary"],
    arguments=[{"name": "goal", "type": "string", "required": True, "description": "What the agent resumes."}],
    options=[dict(_NO_WAIT, description="Degrade at once instead of waiting up to retrieval.ingest_wait_seconds "
                                        "for a running ingest of HEAD."),
             _VIEW, dict(_FMT, defaultValue="both"), _CWD],
    examples=['ragit memory recall "finish auth migration"',
              'ragit memory recall "finish auth migration" --view minimal --format json'],
    errors=["INPUT_INVALID", "CONFIG_INVALID"], formats=("both", "both"),
))
register(_spec(
    "memory promote", "Write promotion candidates as decision, glossary or plan documents under memory.corpus_dir; "
    "--commit commits exactly those files and ingests the new HEAD.",
    related=["memory wrap", "ingest", "query"], mutating=True, dry_run=True, raw_json=True,
    outputs=["createdFiles", "plannedFiles", "sourceHeadSha", "committed", "commitSha", "ingested", "snapshotSha",
             "dryRun", "diff", "warnings"],
    options=[_REQUIRED_INPUT,
             {"name": "--commit", "type": "boolean",
              "description": "Commit exactly the promoted files (hooks muted), then ingest the new HEAD."},
             _DRY, _FMT, _CWD],
    examples=["ragit memory promote --input promote.json", "ragit memory promote --input promote.json --commit",
              "ragit memory promote --input promote.json --dry-run --format text"],
    errors=["INPUT_INVALID", "GIT_REPOSITORY_REQUIRED", "GIT_COMMIT_FAILED", "CONFIG_INVALID"],
    formats=("json", "text"),
))
register(_spec(
    "memory verify", "Check every decision, open loop and artifact's evidence (path@blob:Lx-Ly) against HEAD or "
    "--at: current, stale (evidence moved; exit 3) or no_evidence.",
    related=["verify", "memory recall", "memory wrap"], mutating=False,
    outputs=["commit", "items", "items[].kind", "items[].id", "items[].title", "items[].status",
             "items[].provenance", "items[].evidence", "stale", "warnings"],
    options=[{"name": "--at", "type": "string", "description": "Commit to check against (default HEAD)."},
             _FMT, _CWD],
    examples=["ragit memory verify", "ragit memory verify --at v1.2 --format text"],
    errors=["SNAPSHOT_REF_INVALID", "GIT_REPOSITORY_REQUIRED", "CONFIG_INVALID"], formats=("json", "text"),
))
