"""Knowledge-plane commands: ingest, query, status, doctor, migrate."""

from __future__ import annotations

import sys

import click

from .common import (
    check_mixed_input,
    check_view,
    common,
    dry_run_option,
    input_option,
    open_repo,
    progress_printer,
    resolve_root,
    view_option,
)
from .app import cli
from .output import Output


# ------------------------------------------------------------------ ingest

@cli.command("ingest")
@click.option("--all", "all_", is_flag=True, default=False, help="Evaluate every candidate at HEAD.")
@click.option("--since", default=None, metavar="REV",
              help="Evaluate paths changed since an indexed ancestor (any revision: HEAD~1, a branch, a tag).")
@click.option("--files", default=None, metavar="GLOBS", help="Comma-separated globs to re-evaluate.")
@click.option("--path", "paths", multiple=True, metavar="PATH", help="Repo path to re-evaluate (repeatable).")
@click.option("--at", default=None, metavar="REV", help="Index this commit instead of HEAD (any revision).")
@input_option
@dry_run_option
@common
def ingest_cmd(all_, since, files, paths, at, input_, dry_run, format_, cwd) -> Output:
    """Index HEAD's (or --at's) docs and code into a published snapshot."""
    from ..contract.inputs import Validator, load_json_input
    from ..contract.payloads import IngestInput

    place = resolve_root(cwd)
    root = place[0]
    v = Validator("ingest")
    if input_ is not None:
        v.mixed([n for n, on in (("--all", all_), ("--since", since is not None), ("--files", files is not None),
                                 ("--path", bool(paths)), ("--at", at is not None)) if on])
        inp = IngestInput.from_payload(load_json_input(input_, root, v))
    else:
        inp = IngestInput.from_cli(all_, since, files, paths, at)
    repo = open_repo(cwd, place)
    result = repo.ingest_input(inp, dry_run=dry_run, progress=progress_printer(format_, "json", "ingest"))
    data = result.to_dict()

    def text() -> str:
        from ..contract.render import header

        return "\n".join(header("ingest", [
            ("mode", data["mode"]),
            ("commit", data["commitSha"]),
            ("base", data["baseSha"]),
            ("manifest", data["manifestPath"] if data["mode"] == "apply" else None),
            ("processed", data["processed"]),
            ("reused", data["reused"]),
            ("skipped", data["skipped"]),
            ("masked", data["masked"]),
            ("full_snapshot", data["fullSnapshot"]),
            ("planned_files", len(data["plannedFiles"])),
            ("deleted_document_ids", len(data["deletedDocumentIds"])),
            ("dirty_candidates", ", ".join(data["dirtyCandidates"]) or None),
            ("would_fail", data["wouldFail"]),
        ], data["warnings"])) + "\n"

    return Output("ingest", data, text, data["warnings"], cwd=str(repo.root))


# ------------------------------------------------------------------ query

@cli.command("query")
@click.argument("question", required=False)
@input_option
@click.option("--top-k", "top_k", default=None, metavar="N", help="Number of hits (default retrieval.top_k).")
@click.option("--scope", default=None, metavar="durable|session|harness|evidence|all|history")
@click.option("--at", default=None, metavar="SHA", help="HEAD, a full SHA or a unique hex prefix.")
@click.option("--path", "paths", multiple=True, metavar="GLOB",
              help="Only files matching this glob are candidates (repeatable).")
@click.option("--exclude-tests", "exclude_tests", is_flag=True, default=False, help="Leave test files out.")
@click.option("--no-wait", "no_wait", is_flag=True, default=False,
              help="Fail at once instead of waiting for a running ingest of the selected commit.")
@view_option
@click.option("--explain", is_flag=True, default=False, help="Include the score breakdown.")
@common
def query_cmd(question, input_, top_k, scope, at, paths, exclude_tests, no_wait, view, explain, format_,
              cwd) -> Output:
    """Search the exact snapshot of HEAD (or --at) and return cited hits."""
    from ..config import load_config
    from ..contract.inputs import Validator, load_json_input
    from ..contract.payloads import QueryInput
    from ..errors import RagitError
    from ..gitsnap.git import Git
    from ..retrieve.selection import exact_command, with_exact_revision

    view = check_view(view, "query")
    place = resolve_root(cwd)
    root = place[0]
    v = Validator("query")
    config = load_config(root)
    default_k = config["retrieval"]["top_k"]
    if input_ is not None:
        check_mixed_input(v, [("question", question is not None), ("--top-k", top_k is not None),
                              ("--at", at is not None), ("--explain", explain), ("--path", bool(paths)),
                              ("--exclude-tests", exclude_tests)], scope)
        payload = load_json_input(input_, root, v)
    try:
        inp = (QueryInput.from_payload(payload, default_k) if input_ is not None
               else QueryInput.from_cli(question, top_k, scope, at, explain, default_k, paths, exclude_tests))
    except RagitError as exc:  # `--at main`: name its commit and the exact command (knowledge §5.1)
        raise with_exact_revision(exc, Git(root) if place[1] else None, None if input_ is not None else (
            lambda sha: exact_command(["query", question], [
                ("--top-k", top_k), ("--scope", scope), ("--at", sha), ("--path", paths),
                ("--exclude-tests", exclude_tests), ("--no-wait", no_wait),
                ("--view", None if view == "default" else view), ("--explain", explain), ("--format", format_),
                ("--cwd", cwd)]))) from None
    repo = open_repo(cwd, place, config)
    result = repo.query_input(inp, no_wait=no_wait)
    data = result.to_dict(view)

    def text() -> str:
        from ..contract.render import header, hit_list, snapshot_lines

        red = data["redactionSummary"]
        lines = header("query", [("question", data["query"]), ("scope", data["scope"])]
                       + snapshot_lines(data["snapshot"], data["snapshotSha"])
                       + [("hits", len(data["hits"])), ("warnings", len(data["warnings"])), ("view", view),
                          ("explain", inp.explain), ("redaction_applied", red["applied"]),
                          ("masked_count", red["maskedCount"])], data["warnings"])
        return "\n".join(lines + [""] + hit_list(result.hits, view, explain=inp.explain)) + "\n"

    return Output("query", data, text, data["warnings"], cwd=str(repo.root))


# ------------------------------------------------------------------ status / doctor

@cli.command("status")
@common
def status_cmd(format_, cwd) -> Output:
    """Report the snapshot of HEAD, the store and the configuration (always exits 0)."""
    from ..maintenance.status import status_data, status_text
    from .common import requested_dir

    root, data = status_data(requested_dir(cwd))
    return Output("status", data, lambda: status_text(data), cwd=str(root))


@cli.command("doctor")
@common
def doctor_cmd(format_, cwd) -> Output:
    """Check repository, config, embedder, store and manifests; name the repair for each failure."""
    from ..maintenance.doctor import doctor_text, run_doctor
    from .common import requested_dir

    root, data = run_doctor(requested_dir(cwd))
    return Output("doctor", data, lambda: doctor_text(data), ok=not data["hasFailure"],
                  exit_code=1 if data["hasFailure"] else 0, cwd=str(root))


# ------------------------------------------------------------------ migrate

@cli.group("migrate", invoke_without_command=True)
@dry_run_option
@common
@click.pass_context
def migrate_group(ctx, dry_run, format_, cwd) -> Output | None:
    """Apply the store's schema migrations (no sub-command), or rebuild or convert stores."""
    if ctx.invoked_subcommand is not None:
        return None
    from ..maintenance.schema import migrate_schema, migrate_text

    repo = open_repo(cwd)
    data, warnings = migrate_schema(repo.root, repo.config, dry_run=dry_run)
    return Output("migrate", data, lambda: migrate_text(data), warnings=warnings, cwd=str(repo.root))


@migrate_group.command("rebuild")
@click.option("--at", default=None, metavar="SHA", help="Rebuild only this snapshot.")
@dry_run_option
@common
def migrate_rebuild_cmd(at, dry_run, format_, cwd) -> Output:
    """Rebuild the store from git objects plus manifests."""
    from ..contract.payloads import check_at_syntax
    from ..maintenance.rebuild import rebuild, rebuild_text

    if at is not None:
        at = check_at_syntax(at.strip())
    repo = open_repo(cwd)
    data = rebuild(repo.root, repo.git, repo.config, at=at, dry_run=dry_run)
    return Output("migrate rebuild", data, lambda: rebuild_text(data), cwd=str(repo.root))


# ------------------------------------------------------------------ init

@cli.command("init")
@click.option("--yes", "--non-interactive", "yes", is_flag=True, default=False, help="Run without prompts.")
@click.option("--mode", default="auto", metavar="auto|empty|existing|monorepo|docs-heavy")
@click.option("--strategy", default="balanced", metavar="minimal|balanced|full")
@click.option("--merge-existing", is_flag=True, default=True, help="Reuse existing docs (always on).")
@click.option("--git-init", is_flag=True, default=False, help="Allow git init in non-interactive mode.")
@click.option("--output", "output_", default=None, hidden=True)
@dry_run_option
@common
def init_cmd(yes, mode, strategy, merge_existing, git_init, output_, dry_run, format_, cwd) -> Output:
    """Discover the repository, reuse its docs, write missing drafts, config and an empty store."""
    from ..bootstrap import render_init_text, run_init
    from .common import requested_dir
    from .output import normalize_format

    fmt = normalize_format(format_ or output_) or "text"

    def progress(line: str) -> None:
        if fmt != "json":
            sys.stderr.write(line + "\n")
            sys.stderr.flush()

    def create_store(store_dir) -> None:
        from ..store.sqlite import SqliteStore

        SqliteStore.open_write(store_dir).close()

    result = run_init(requested_dir(cwd), yes=yes, mode=mode, strategy=strategy, dry_run=dry_run,
                      git_init=git_init, progress=progress, create_store=create_store)
    data = result.data
    return Output("init", data, lambda: render_init_text(data), cwd=str(result.root))


def _migrate_legacy(kind: str, dry_run: bool, cwd) -> Output:
    from ..maintenance.migrate import migrate_from

    repo = open_repo(cwd)
    data = migrate_from(repo.root, repo.git, repo.config, kind, dry_run=dry_run)

    def text() -> str:
        lines = [f"# ragit migrate from-{kind}", f"- mode: {data['mode']}", f"- docs: {data['docs']}",
                 f"- chunks: {data['chunks']}", f"- snapshot: {data.get('snapshotSha', 'none')}",
                 f"- missing: {', '.join(data['missing']) or 'none'}"]
        return "\n".join(lines) + "\n"

    return Output(f"migrate from-{kind}", data, text, raw_json=True, cwd=str(repo.root))


@migrate_group.command("from-json-store")
@dry_run_option
@common
def migrate_json_store_cmd(dry_run, format_, cwd) -> Output:
    """Index HEAD for the documents of a reference-CLI JSON store (.ragit/store/index.json)."""
    return _migrate_legacy("json-store", dry_run, cwd)


@migrate_group.command("from-sqlitevss")
@dry_run_option
@common
def migrate_sqlitevss_cmd(dry_run, format_, cwd) -> Output:
    """Index HEAD for the documents of a reference-CLI sqlite-vss export."""
    return _migrate_legacy("sqlitevss", dry_run, cwd)
