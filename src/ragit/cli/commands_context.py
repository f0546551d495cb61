"""Context-plane commands: context pack (and, as they land, packet and assemble)."""

from __future__ import annotations

import click

from ..errors import RagitError
from .common import check_mixed_input, check_view, common, input_option, open_repo, resolve_root, view_option
from .app import cli
from .output import Output


@cli.group("context")
def context_group() -> None:
    """Budgeted context for one agent call."""


@context_group.command("pack")
@click.argument("goal", required=False)
@input_option
@click.option("--budget", default=None, metavar="UNITS", help="Content-unit budget (default 1200).")
@click.option("--scope", default=None, metavar="durable|session|harness|evidence|all|history")
@click.option("--at", default=None, metavar="SHA", help="HEAD, a full SHA or a unique hex prefix.")
@click.option("--path", "paths", multiple=True, metavar="GLOB",
              help="Only files matching this glob are candidates (repeatable).")
@click.option("--exclude-tests", "exclude_tests", is_flag=True, default=False, help="Leave test files out.")
@click.option("--budget-unit", "budget_unit", default=None, metavar="words|tokens",
              help="Unit of --budget: words (default) or tokens of the configured token counter.")
@click.option("--no-wait", "no_wait", is_flag=True, default=False,
              help="Fail at once instead of waiting for a running ingest of the selected commit.")
@view_option
@common
def pack_cmd(goal, input_, budget, scope, at, paths, exclude_tests, budget_unit, no_wait, view, format_,
             cwd) -> Output:
    """Pack cited hits for a goal under a strict content-unit budget (citation-diverse-v2)."""
    from ..contract.inputs import Validator, load_json_input
    from ..contract.payloads import PackInput
    from ..gitsnap.git import Git
    from ..retrieve.selection import exact_command, with_exact_revision

    view = check_view(view, "context pack")
    place = resolve_root(cwd)
    v = Validator("context pack")
    if input_ is not None:
        check_mixed_input(v, [("goal", goal is not None), ("--budget", budget is not None),
                              ("--at", at is not None), ("--path", bool(paths)),
                              ("--exclude-tests", exclude_tests), ("--budget-unit", budget_unit is not None)], scope)
        payload = load_json_input(input_, place[0], v)
    try:
        inp = (PackInput.from_payload(payload) if input_ is not None
               else PackInput.from_cli(goal, budget, scope, at, paths, exclude_tests, budget_unit))
    except RagitError as exc:  # `--at main`: name its commit and the exact command (knowledge §5.1)
        raise with_exact_revision(exc, Git(place[0]) if place[1] else None, None if input_ is not None else (
            lambda sha: exact_command(["context", "pack", goal], [
                ("--budget", budget), ("--scope", scope), ("--at", sha), ("--path", paths),
                ("--exclude-tests", exclude_tests), ("--budget-unit", budget_unit), ("--no-wait", no_wait),
                ("--view", None if view == "default" else view), ("--format", format_), ("--cwd", cwd)]))) from None
    repo = open_repo(cwd, place)
    result = repo.pack_input(inp, no_wait=no_wait)
    data = result.to_dict(view)

    def text() -> str:
        from ..contract.render import header, hit_list, snapshot_lines

        sel = data["selection"]
        red = data["redactionSummary"]
        mt = data["modelTokens"]
        lines = header("context pack", [("goal", data["goal"])]
                       + snapshot_lines(data["snapshot"], data["snapshotSha"])
                       + [("budget", data["budget"]), ("budget_unit", data["budgetUnit"]),
                          ("used_tokens", data["usedTokens"]),
                          ("model_tokens", f"{mt['tokens']} ({mt['counter']})"),
                          ("selected_hits", data["selectedHits"]), ("selection_strategy", sel["strategy"]),
                          ("candidate_hits", sel["candidateHits"]), ("unique_citations", sel["uniqueCitations"]),
                          ("selected_sources", sel["selectedSources"]),
                          ("duplicate_citations_skipped", sel["duplicateCitationsSkipped"]),
                          ("budget_rejected_hits", sel["budgetRejectedHits"]),
                          ("warnings", len(data["warnings"])), ("view", view),
                          ("redaction_applied", red["applied"]), ("masked_count", red["maskedCount"])],
                       data["warnings"])
        return "\n".join(lines + [""] + hit_list(result.hits, view)) + "\n"

    return Output("context pack", data, text, data["warnings"], cwd=str(repo.root))


@context_group.command("packet")
@input_option
@click.option("--evidence", "evidence", multiple=True, metavar="PATH[:kind]",
              help="A file given as direct evidence (repeatable); may lie outside the repository.")
@common
def packet_cmd(input_, evidence, format_, cwd) -> Output:
    """Assemble an inspectable context packet: selected, pointers, excluded, unknowns, refresh."""
    from ..context.bridge import check_request, packet_text
    from ..contract.inputs import Validator, load_json_input

    v = Validator("context packet")
    if input_ is None:
        raise v.fail("--input", "required", "context packet needs --input <path|->")
    place = resolve_root(cwd)
    payload = load_json_input(input_, place[0], v)
    check_request(payload, evidence)  # the whole request is validated before any Git work (§3.3)
    repo = open_repo(cwd, place)
    outcome = repo.packet(payload, evidence=evidence)
    data = outcome.to_dict()
    warnings = data.get("warnings", [])
    return Output("context packet", data, lambda: packet_text(data), warnings, ok=outcome.ready,
                  exit_code=0 if outcome.ready else 3, cwd=str(repo.root))
