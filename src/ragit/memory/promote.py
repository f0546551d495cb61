"""``memory promote`` (memory §4): crystallise candidates into long-term Markdown documents.

Promoted documents live under ``memory.corpus_dir`` as ordinary repository files. Uncommitted
files cannot be bound to a commit, so they are never indexed as they are: without ``--commit``
the caller reviews and commits them; with ``--commit`` exactly the promoted paths are committed
(other staged changes stay staged) and the new HEAD is ingested.
"""

from __future__ import annotations

import difflib
import re
import unicodedata
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..contract.inputs import Validator, validate_repo_path
from ..errors import RagitError
from .payload import optional_text, required_text, string_list

if TYPE_CHECKING:  # pragma: no cover
    from ..config import Config
    from ..gitsnap.git import Git

COMMAND = "memory promote"
PAYLOAD_KEYS = ("promotionCandidates", "sourceSessionId", "sourceHeadSha", "sessionId")
CANDIDATE_KEYS = ("id", "kind", "title", "summary", "tags", "context", "decision", "consequences", "alternatives",
                  "term", "definition", "aliases", "milestones", "workBreakdown", "evidence", "supersedes")
_TEXT_KEYS = frozenset({"context", "decision", "term", "definition"})
_LIST_KEYS = frozenset({"tags", "consequences", "alternatives", "aliases", "milestones", "workBreakdown"})
# kind -> (directory under memory.corpus_dir, front matter type)
KINDS = {"decision": ("decisions", "adr"), "glossary": ("glossary", "glossary"), "plan": ("plans", "plan")}

EMPTY_WARNING = "promotionCandidates is empty; no documents were created"
NOT_INDEXED_WARNING = ("promoted documents are not indexed until committed: review and commit them, then run "
                       "ragit ingest (or use --commit)")

_HANDLE = re.compile(r"^(?P<path>.+)@(?P<sha>[0-9a-fA-F]{4,40}):L(?P<start>\d+)-L(?P<end>\d+)$")
_SHORT = re.compile(r"^(?P<path>[^@]+):L(?P<start>\d+)-L(?P<end>\d+)$")
_CITATION_ID = re.compile(r"^cite-[a-f0-9]{24}$")


# ---------------------------------------------------------------- candidates

def is_evidence_ref(text: str) -> bool:
    """A citation id (``cite-<24 hex>``), a handle ``path@sha:Lx-Ly`` (knowledge §9, §20) or
    ``path:Lx-Ly`` (bound at the source head, memory §10)."""
    if _CITATION_ID.match(text):
        return True
    m = _HANDLE.match(text) or _SHORT.match(text)
    if m is None:
        return False
    start, end = int(m["start"]), int(m["end"])
    path = m["path"].replace("\\", "/")
    return 1 <= start <= end and not path.startswith("/") and ".." not in path.split("/")


def _evidence(value: Any, v: Validator, field: str) -> list[str]:
    if not isinstance(value, list):
        raise v.fail(field, "invalid_format", f"{field} must be an array of citation handles or ids")
    out = []
    for i, item in enumerate(value):
        text = item.strip() if isinstance(item, str) else None
        if not text or not is_evidence_ref(text):
            raise v.fail(f"{field}[{i}]", "invalid_format",
                         f"{field}[{i}] must be a citation handle path@sha:Lx-Ly or a citation id cite-<24 hex>",
                         value=item if isinstance(item, str) else None)
        out.append(text)
    return out


def _supersedes(value: Any, v: Validator, field: str, root: Path) -> str:
    path = validate_repo_path(value, v, field)
    try:
        exists = (Path(root) / path).is_file()
    except OSError:  # a name too long for the file system (ENAMETOOLONG) names no file either
        exists = False
    if not exists:
        raise v.fail(field, "file_not_found", f"{field}: {path} does not exist", value=path)
    return path


def normalize_candidate(obj: Any, v: Validator, field: str, root: Path) -> dict[str, Any]:
    """Validate one candidate; keys keep the allow-list order, absent ones stay absent."""
    v.allowed_keys(obj, CANDIDATE_KEYS, field)
    if "kind" not in obj:
        raise v.fail(f"{field}.kind", "required", f"{field}.kind is required", allowed=list(KINDS))
    kind = v.choice(obj["kind"], f"{field}.kind", KINDS)
    title = required_text(obj, "title", v, field)
    summary = required_text(obj, "summary", v, field)
    out: dict[str, Any] = {}
    ident = optional_text(obj, "id", v, field)
    if ident is not None:
        out["id"] = ident
    out.update(kind=kind, title=title, summary=summary)
    for key in CANDIDATE_KEYS[4:]:
        if key not in obj:
            continue
        if key in _TEXT_KEYS:
            text = optional_text(obj, key, v, field)
            if text is not None:
                out[key] = text
        elif key in _LIST_KEYS:
            out[key] = string_list(obj[key], v, f"{field}.{key}")
        elif key == "evidence":
            out[key] = _evidence(obj[key], v, f"{field}.evidence")
        elif obj[key] is not None:  # supersedes
            out[key] = _supersedes(obj[key], v, f"{field}.supersedes", root)
    return out


@dataclass
class PromoteInput:
    candidates: list[dict[str, Any]]
    source_session_id: str | None
    source_head_sha: str | None
    field: str = "input"  # where the candidates sit in the payload (error fields)

    @classmethod
    def from_payload(cls, obj: Any, root: Path) -> PromoteInput:
        """An array of candidates, or ``{promotionCandidates, sourceSessionId, sourceHeadSha, sessionId}``."""
        v = Validator(COMMAND)
        if isinstance(obj, list):
            items, field, session, head = obj, "input", None, None
        else:
            v.allowed_keys(obj, PAYLOAD_KEYS)
            items = obj.get("promotionCandidates", [])
            if not isinstance(items, list):
                raise v.fail("input.promotionCandidates", "not_one_of", "input.promotionCandidates must be an array")
            field = "input.promotionCandidates"
            session_key = "sourceSessionId" if "sourceSessionId" in obj else "sessionId"
            session = optional_text(obj, session_key, v, "input")
            head = optional_text(obj, "sourceHeadSha", v, "input")
        candidates = [normalize_candidate(item, v, f"{field}[{i}]", root) for i, item in enumerate(items)]
        return cls(candidates, session, head, field)


# ---------------------------------------------------------------- documents

SLUG_BYTES = 100  # file systems cap a name at 255 bytes; room is left for "-<n>.md"


def slugify(text: str) -> str:
    """File-name slug: lower-case, NFKD without combining marks, word characters joined by ``-``,
    cut to :data:`SLUG_BYTES` of UTF-8 (a long title or id is valid input, an over-long file
    name is not a valid file)."""
    decomposed = unicodedata.normalize("NFKD", text.lower())
    plain = "".join(ch for ch in decomposed if not unicodedata.combining(ch))
    spaced = re.sub(r"[^\w\s-]", " ", plain)
    slug = re.sub(r"-{2,}", "-", re.sub(r"\s+", "-", spaced.strip())).strip("-")
    if len(slug.encode("utf-8")) > SLUG_BYTES:
        slug = slug.encode("utf-8")[:SLUG_BYTES].decode("utf-8", "ignore").rstrip("-")
    return slug or "memory-artifact"


def _flat(text: str) -> str:
    return " ".join(text.split())


def _quoted(text: str) -> str:
    """A double-quoted front matter value on one line, quotes and backslashes escaped."""
    return '"' + _flat(text).replace("\\", "\\\\").replace('"', '\\"') + '"'


def _bullets(items: list[str]) -> list[str]:
    return [f"- {_flat(item)}" for item in items]


def render_document(c: dict[str, Any], *, source_session: str | None, source_head: str | None,
                    promoted_at: str) -> str:
    """The Markdown of one candidate (unmasked; the caller masks before writing)."""
    kind = c["kind"]
    lines = ["---", f"type: {KINDS[kind][1]}", f"source_session: {_quoted(source_session or '')}",
             f"promoted_at: {_quoted(promoted_at)}", f"source_head: {_quoted(source_head or '')}"]
    if c.get("supersedes"):
        lines.append(f"supersedes: {_quoted(c['supersedes'])}")
    if c.get("tags"):
        lines.append(f"tags: {_quoted(', '.join(c['tags']))}")
    lines += ["---", ""]
    title = _flat(c["title"])
    if kind == "decision":
        consequences = list(dict.fromkeys(
            c.get("consequences", []) + [f"Alternative considered: {alt}" for alt in c.get("alternatives", [])]))
        lines += [f"# ADR: {title}", "", "## Context", "", c.get("context") or c["summary"], "",
                  "## Decision", "", c.get("decision") or c["summary"], "", "## Consequences", ""]
        lines += _bullets(consequences) or ["- No recorded consequences yet."]
    elif kind == "glossary":
        lines += [f"# Glossary: {title}", "", "## Terms", "",
                  f"- **{_flat(c.get('term') or c['title'])}**: {_flat(c.get('definition') or c['summary'])}"]
        if c.get("aliases"):
            lines.append(f"- **Aliases**: {', '.join(_flat(a) for a in c['aliases'])}")
    else:
        lines += [f"# Plan: {title}", "", "## Milestones", ""]
        lines += _bullets(c.get("milestones") or [c["summary"]])
        lines += ["", "## Work Breakdown", ""]
        lines += _bullets(c.get("workBreakdown") or [c["summary"]])
    if c.get("evidence"):
        lines += ["", "## Evidence", ""] + [f"- {ref}" for ref in c["evidence"]]
    return "\n".join(lines) + "\n"


def plan_documents(root: Path, config: Config, inp: PromoteInput, source_head: str | None,
                   promoted_at: str) -> list[tuple[str, str]]:
    """(repo-relative path, masked content) per candidate, in order; names never collide."""
    from ..security.masking import mask_text

    corpus = config["memory"]["corpus_dir"].strip("/")
    taken: set[str] = set()
    planned: list[tuple[str, str]] = []
    for c in inp.candidates:
        directory = f"{corpus}/{KINDS[c['kind']][0]}"
        slug = slugify(c.get("id") or c["title"])
        path, n = f"{directory}/{slug}.md", 1
        while path in taken or (Path(root) / path).exists():
            n += 1
            path = f"{directory}/{slug}-{n}.md"
        taken.add(path)
        text = render_document(c, source_session=inp.source_session_id, source_head=source_head,
                               promoted_at=promoted_at)
        planned.append((path, mask_text(text).text))
    return planned


def creation_diff(planned: list[tuple[str, str]]) -> str:
    """Unified diff of every planned file against its absence, in order."""
    out: list[str] = []
    for path, text in planned:
        out += difflib.unified_diff([], text.splitlines(), "/dev/null", f"b/{path}", lineterm="")
    return "\n".join(out) + "\n" if out else ""


# ---------------------------------------------------------------- commit and ingest

def commit_files(git: Git, paths: list[str]) -> str:
    """``git add`` + ``git commit -- <paths>`` (only these paths) with ragit's hooks muted; new HEAD."""
    from ..gitsnap.refs import head_sha

    message = f"ragit: promote {len(paths)} memory document(s)"
    for args in (("add", "--", *paths), ("commit", "-q", "-m", message, "--", *paths)):
        proc = git.call(*args, extra_env={"RAGIT_SKIP_HOOKS": "1"})
        if proc.returncode != 0:
            reason = proc.stderr.decode("utf-8", "replace").strip() or f"git {args[0]} exited {proc.returncode}"
            raise RagitError("GIT_COMMIT_FAILED", f"could not commit the promoted documents: {reason}",
                             {"paths": list(paths), "reason": reason}, "git status --short")
    sha = head_sha(git)
    assert sha is not None
    return sha


def ingest_after_commit(root: Path, git: Git, config: Config, previous_head: str | None) -> str | None:
    """Index the new HEAD: ``--since`` the previous HEAD when it has an exact manifest, else full.

    Returns None on success, else a warning naming the error code and its recovery command.
    """
    from ..ingest.manifest import manifest_relpath
    from ..ingest.pipeline import IngestRequest, run_ingest

    if previous_head and (Path(root) / manifest_relpath(config, previous_head)).is_file():
        request = IngestRequest(mode="since", since=previous_head)
    else:
        request = IngestRequest(mode="full")
    try:
        run_ingest(root, git, config, request)
    except RagitError as exc:
        return (f"promoted documents were committed but not indexed ({exc.code}: {exc.message}); "
                f"run {exc.recovery}")
    return None


# ---------------------------------------------------------------- promote

@dataclass
class PromoteResult:
    created_files: list[str]
    planned_files: list[str]
    source_head_sha: str | None
    committed: bool
    commit_sha: str | None
    ingested: bool
    snapshot_sha: str | None
    dry_run: bool
    diff: str | None
    warnings: list[str]

    def to_dict(self) -> dict[str, Any]:
        return {
            "createdFiles": list(self.created_files),
            "plannedFiles": list(self.planned_files),
            "sourceHeadSha": self.source_head_sha,
            "committed": self.committed,
            "commitSha": self.commit_sha,
            "ingested": self.ingested,
            "snapshotSha": self.snapshot_sha,
            "dryRun": self.dry_run,
            "diff": self.diff,
            "warnings": list(self.warnings),
        }

    def text(self) -> str:
        from ..contract.render import header

        lines = header(COMMAND, [
            ("dry_run", self.dry_run),
            ("planned_files", len(self.planned_files)),
            ("created_files", len(self.created_files)),
            ("committed", self.committed),
            ("ingested", self.ingested),
            ("source_head", self.source_head_sha),
        ], self.warnings)
        text = "\n".join(lines) + "\n"
        if self.dry_run and self.diff:
            text += "\n" + self.diff
        return text


def _bind_evidence(root: Path, git: Git | None, config: Config, inp: PromoteInput,
                   source_head: str | None) -> PromoteInput:
    """Every candidate's evidence as blob-bound handles ``path@<blob>:Lx-Ly`` (memory §10), resolved
    before anything is written (a handle that names nothing → ``CITATION_NOT_FOUND``)."""
    from dataclasses import replace

    from .evidence import bind_evidence

    out = []
    for i, c in enumerate(inp.candidates):
        if c.get("evidence"):
            bound = bind_evidence(root, git, config, c["evidence"], source_head, COMMAND, f"{inp.field}[{i}].evidence")
            c = dict(c, evidence=[b["handle"] for b in bound])
        out.append(c)
    return replace(inp, candidates=out)


def promote(root: Path, git: Git | None, config: Config, inp: PromoteInput, *, commit: bool = False,
            dry_run: bool = False) -> PromoteResult:
    """Write (and with ``commit`` commit and ingest) one document per candidate (memory §4)."""
    from ..clock import now_iso
    from ..gitsnap.refs import head_sha

    if commit and git is None:
        from ..gitsnap.location import git_required

        raise git_required(Path(root))
    head = head_sha(git) if git is not None else None
    source_head = inp.source_head_sha or head
    inp = _bind_evidence(root, git, config, inp, source_head)
    planned = plan_documents(root, config, inp, source_head, now_iso())
    paths = [p for p, _ in planned]
    warnings = [EMPTY_WARNING] if not planned else ([] if commit else [NOT_INDEXED_WARNING])
    result = PromoteResult([], paths, source_head, False, None, False, None, dry_run,
                           creation_diff(planned) if dry_run else None, warnings)
    if dry_run or not planned:
        return result

    from ..fsutil import atomic_write_text

    for path, text in planned:
        atomic_write_text(Path(root) / path, text)
    result.created_files = list(paths)
    if commit:
        assert git is not None
        result.commit_sha = commit_files(git, paths)
        result.committed = True
        failure = ingest_after_commit(root, git, config, head)
        if failure is None:
            result.ingested, result.snapshot_sha = True, result.commit_sha
        else:
            result.warnings.append(failure)
    return result
