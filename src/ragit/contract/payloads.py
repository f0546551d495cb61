"""Input models shared by the CLI, the Python API and the MCP server.

Each model validates either an ``--input`` payload (allow-listed keys, JSON types) or the
equivalent command-line values, and raises typed ``INPUT_INVALID`` (or ``SNAPSHOT_REF_INVALID``
for a malformed ``at``) before any git, store or embedder work.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

from ..errors import RagitError
from .inputs import Validator, validate_glob_list, validate_repo_path

SCOPES = ("durable", "session", "harness", "evidence", "all", "history")
QUERY_KEYS = ("question", "topK", "at", "scope", "explain", "paths", "excludeTests")
PACK_KEYS = ("goal", "budget", "at", "scope", "paths", "excludeTests", "budgetUnit")
INGEST_KEYS = ("all", "since", "files", "paths", "at")
DEFAULT_BUDGET = 1200
BUDGET_UNITS = ("words", "tokens")  # context §1.1: words are the seed's content units
PACK_TOP_K = 30
_AT_RE = re.compile(r"^[0-9a-fA-F]{4,40}$")


def check_at_syntax(ref: str) -> str:
    """``HEAD``, a full SHA or a 4–40 hex prefix; anything else is SNAPSHOT_REF_INVALID (exit 2)."""
    if ref == "HEAD" or _AT_RE.match(ref):
        return ref
    raise RagitError(
        "SNAPSHOT_REF_INVALID",
        f"{ref!r} is not HEAD, a commit SHA or a unique hex prefix (branch names, tags and expressions are not accepted)",
        {"ref": ref},
        "git rev-parse --verify HEAD",
    )


def _at(value: Any, v: Validator, field_name: str) -> str:
    if not isinstance(value, str) or not value.strip():
        raise v.fail(field_name, "empty" if isinstance(value, str) else "not_string", f"{field_name} must be a non-empty string")
    return check_at_syntax(value.strip())


def _path_globs(value: Any, v: Validator, field_name: str) -> tuple[str, ...]:
    """``paths``: an array of globs (knowledge §8.1 semantics), none leaving the repository."""
    if not isinstance(value, list):
        raise v.fail(field_name, "not_array", f"{field_name} must be an array of glob strings")
    out: list[str] = []
    for i, item in enumerate(value):
        at = f"{field_name}[{i}]"
        if not isinstance(item, str):
            raise v.fail(at, "not_string", f"{at} must be a glob string")
        if "," in item:
            raise v.fail(at, "invalid_value", f"{at} must be one glob (give several as separate items)", value=item)
        out.extend(validate_glob_list(item, v, at))
    return tuple(dict.fromkeys(out))


def _cli_globs(values: tuple[str, ...] | None, v: Validator) -> tuple[str, ...]:
    out: list[str] = []
    for value in values or ():
        if "," in value:
            raise v.fail("--path", "invalid_value", "--path takes one glob; repeat --path for several", value=value)
        out.extend(validate_glob_list(value, v, "--path"))
    return tuple(dict.fromkeys(out))


@dataclass
class QueryInput:
    question: str
    top_k: int
    scope: str = "durable"
    at: str | None = None
    explain: bool = False
    paths: tuple[str, ...] = ()  # only chunks of files matching one glob are candidates
    exclude_tests: bool = False

    @classmethod
    def from_payload(cls, obj: Any, default_top_k: int) -> "QueryInput":
        v = Validator("query")
        v.allowed_keys(obj, QUERY_KEYS)
        if "question" not in obj:
            raise v.fail("input.question", "required", "input.question is required")
        question = v.text(obj["question"], "input.question")
        top_k = v.json_positive_int(obj["topK"], "input.topK") if "topK" in obj else default_top_k
        scope = v.choice(obj["scope"], "input.scope", SCOPES) if "scope" in obj else "durable"
        at = _at(obj["at"], v, "input.at") if "at" in obj else None
        explain = v.boolean(obj["explain"], "input.explain") if "explain" in obj else False
        paths = _path_globs(obj["paths"], v, "input.paths") if "paths" in obj else ()
        exclude = v.boolean(obj["excludeTests"], "input.excludeTests") if "excludeTests" in obj else False
        return cls(question, top_k, scope, at, explain, paths, exclude)

    @classmethod
    def from_cli(cls, question: str | None, top_k: str | None, scope: str | None, at: str | None,
                 explain: bool, default_top_k: int, paths: tuple[str, ...] = (),
                 exclude_tests: bool = False) -> "QueryInput":
        v = Validator("query")
        if question is None:
            raise v.fail("question", "required", "a question is required (positional or --input)")
        q = v.text(question, "question")
        k = v.cli_positive_int(top_k, "--top-k") if top_k is not None else default_top_k
        s = v.choice(scope, "--scope", SCOPES) if scope is not None else "durable"
        a = check_at_syntax(at.strip()) if at is not None else None
        return cls(q, k, s, a, explain, _cli_globs(paths, v), exclude_tests)


@dataclass
class PackInput:
    goal: str
    budget: int = DEFAULT_BUDGET
    scope: str = "durable"
    at: str | None = None
    paths: tuple[str, ...] = ()
    exclude_tests: bool = False
    budget_unit: str = "words"  # or "tokens": the configured token counter (context §1.1)

    @classmethod
    def from_payload(cls, obj: Any, command: str = "context pack", field_prefix: str = "input") -> "PackInput":
        v = Validator(command)
        v.allowed_keys(obj, PACK_KEYS, field_prefix)
        if "goal" not in obj:
            raise v.fail(f"{field_prefix}.goal", "required", f"{field_prefix}.goal is required")
        goal = v.text(obj["goal"], f"{field_prefix}.goal")
        budget = v.json_positive_int(obj["budget"], f"{field_prefix}.budget") if "budget" in obj else DEFAULT_BUDGET
        scope = v.choice(obj["scope"], f"{field_prefix}.scope", SCOPES) if "scope" in obj else "durable"
        at = _at(obj["at"], v, f"{field_prefix}.at") if "at" in obj else None
        paths = _path_globs(obj["paths"], v, f"{field_prefix}.paths") if "paths" in obj else ()
        exclude = v.boolean(obj["excludeTests"], f"{field_prefix}.excludeTests") if "excludeTests" in obj else False
        unit = (v.choice(obj["budgetUnit"], f"{field_prefix}.budgetUnit", BUDGET_UNITS)
                if "budgetUnit" in obj else "words")
        return cls(goal, budget, scope, at, paths, exclude, unit)

    @classmethod
    def from_cli(cls, goal: str | None, budget: str | None, scope: str | None, at: str | None,
                 paths: tuple[str, ...] = (), exclude_tests: bool = False,
                 budget_unit: str | None = None) -> "PackInput":
        v = Validator("context pack")
        if goal is None:
            raise v.fail("goal", "required", "a goal is required (positional or --input)")
        g = v.text(goal, "goal")
        b = v.cli_positive_int(budget, "--budget") if budget is not None else DEFAULT_BUDGET
        s = v.choice(scope, "--scope", SCOPES) if scope is not None else "durable"
        a = check_at_syntax(at.strip()) if at is not None else None
        u = v.choice(budget_unit, "--budget-unit", BUDGET_UNITS) if budget_unit is not None else "words"
        return cls(g, b, s, a, _cli_globs(paths, v), exclude_tests, u)


def check_revision_syntax(rev: str) -> str:
    """An ingest ``--since``/``--at`` revision (knowledge §7.1): anything git may resolve to a
    commit, except a leading ``-`` (git would read an option); resolved later, once."""
    if rev.startswith("-"):
        raise RagitError("SNAPSHOT_REF_INVALID", f"{rev!r} is not a revision", {"ref": rev},
                         "git rev-parse --verify HEAD")
    return rev


def _revision(value: Any, v: Validator, field_name: str) -> str:
    if not isinstance(value, str):
        raise v.fail(field_name, "not_string", f"{field_name} must be a non-empty string")
    return check_revision_syntax(v.text(value, field_name))


@dataclass
class IngestInput:
    mode: str = "full"
    since: str | None = None
    files: list[str] = field(default_factory=list)
    paths: list[str] = field(default_factory=list)
    at: str | None = None  # index this revision instead of HEAD; combines with every selector

    @classmethod
    def from_payload(cls, obj: Any) -> "IngestInput":
        v = Validator("ingest")
        v.allowed_keys(obj, INGEST_KEYS)
        all_ = v.boolean(obj["all"], "input.all") if "all" in obj else False
        since = _revision(obj["since"], v, "input.since") if "since" in obj else None
        at = _revision(obj["at"], v, "input.at") if "at" in obj else None
        files: list[str] = []
        if "files" in obj:
            files = validate_glob_list(v.text(obj["files"], "input.files"), v, "input.files")
        paths: list[str] = []
        if "paths" in obj:
            if not isinstance(obj["paths"], list):
                raise v.fail("input.paths", "not_string", "input.paths must be an array of strings")
            paths = [validate_repo_path(p, v, f"input.paths[{i}]") for i, p in enumerate(obj["paths"])]
        inp = cls._combine(v, all_, since, files, paths, ("input.all", "input.since", "input.files", "input.paths"))
        inp.at = at
        return inp

    @classmethod
    def from_cli(cls, all_: bool, since: str | None, files: str | None, paths: tuple[str, ...],
                 at: str | None = None) -> "IngestInput":
        v = Validator("ingest")
        s = check_revision_syntax(v.text(since, "--since")) if since is not None else None
        a = check_revision_syntax(v.text(at, "--at")) if at is not None else None
        f = validate_glob_list(files, v, "--files") if files is not None else []
        p = [validate_repo_path(x, v, "--path") for x in paths]
        inp = cls._combine(v, all_, s, f, p, ("--all", "--since", "--files", "--path"))
        inp.at = a
        return inp

    @classmethod
    def _combine(cls, v: Validator, all_: bool, since, files, paths, names) -> "IngestInput":
        chosen = [n for n, on in zip(names, (all_, since is not None, bool(files), bool(paths))) if on]
        groups = {"all" if all_ else None, "since" if since is not None else None,
                  "selectors" if (files or paths) else None} - {None}
        if len(groups) > 1:
            raise v.fail(chosen[0], "mixed_input", f"{' and '.join(chosen)} cannot be combined", conflicts=chosen)
        if since is not None:
            return cls("since", since=since)
        if files and not paths:
            return cls("files", files=files)
        if files or paths:
            return cls("files" if files else "paths", files=files, paths=paths)
        return cls("full")
