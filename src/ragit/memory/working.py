"""Working memory (memory §1–2): session records, the working state, the open-loop registry.

``wrap`` is the only writer. A session record keeps everything the agent reported; the working
state and the registry are replaced wholesale on every wrap (no merge with earlier sessions), so
``recall`` always restores the latest picture instead of replaying history. Every file is
secret-masked on write and published atomically.
"""

from __future__ import annotations

import hashlib
import json
import re
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..contract.inputs import Validator
from .evidence import bind_evidence, check_evidence_input
from .payload import optional_text, required_text, string_list

if TYPE_CHECKING:  # pragma: no cover
    from ..config import Config
    from ..gitsnap.git import Git

COMMAND = "memory wrap"
WRAP_KEYS = ("goal", "summary", "constraints", "decisions", "openLoops", "nextActions", "promotionCandidates",
             "sourceHeadSha", "createdAt")
DECISION_KEYS = ("id", "title", "summary", "rationale", "alternatives", "consequences", "relatedFiles", "evidence")
OPEN_LOOP_KEYS = ("id", "title", "status", "nextAction", "blockingConditions", "relatedFiles", "sourceSessionId",
                  "evidence")
LOOP_STATUSES = ("open", "blocked", "in_progress", "closed")
NO_HEAD_WARNING = "repository has no HEAD commit; sourceHeadSha stored as null"
_MILLIS_Z = re.compile(r"\.\d{3}Z$")


# ---------------------------------------------------------------- identities (memory §1)

def _sha1(text: str) -> str:
    return hashlib.sha1(text.encode("utf-8")).hexdigest()


def session_id(created_at: str, goal: str) -> str:
    """``2026-03-08T10:00:00.000Z`` + ``finish auth migration`` → ``20260308T100000Z-5c4669af``."""
    stamp = _MILLIS_Z.sub("Z", created_at.replace("-", "").replace(":", ""))
    return f"{stamp}-{_sha1(goal)[:8]}"


def decision_id(title: str, summary: str) -> str:
    return _sha1(f"{title}:{summary}")


def open_loop_id(title: str, next_action: str) -> str:
    return _sha1(f"{title}:{next_action}")


def loop_status(value: Any) -> str:
    """One of ``open``, ``blocked``, ``in_progress``, ``closed``; anything else is ``open``."""
    if isinstance(value, str) and value.strip().lower() in LOOP_STATUSES:
        return value.strip().lower()
    return "open"


# ---------------------------------------------------------------- payload normalisation

def normalize_decision(obj: Any, v: Validator, field: str) -> dict[str, Any]:
    v.allowed_keys(obj, DECISION_KEYS, field)
    title = required_text(obj, "title", v, field)
    summary = required_text(obj, "summary", v, field)
    out: dict[str, Any] = {"id": optional_text(obj, "id", v, field) or decision_id(title, summary),
                           "title": title, "summary": summary}
    rationale = optional_text(obj, "rationale", v, field)
    if rationale is not None:
        out["rationale"] = rationale
    out["alternatives"] = string_list(obj.get("alternatives"), v, f"{field}.alternatives")
    out["consequences"] = string_list(obj.get("consequences"), v, f"{field}.consequences")
    out["relatedFiles"] = string_list(obj.get("relatedFiles"), v, f"{field}.relatedFiles", repo_paths=True)
    if obj.get("evidence") is not None:  # bound to blobs by ``wrap`` (memory §10)
        out["evidence"] = check_evidence_input(obj.get("evidence"), v, f"{field}.evidence")
    return out


def normalize_open_loop(obj: Any, v: Validator, field: str) -> dict[str, Any]:
    v.allowed_keys(obj, OPEN_LOOP_KEYS, field)
    title = required_text(obj, "title", v, field)
    next_action = required_text(obj, "nextAction", v, field)
    out: dict[str, Any] = {
        "id": optional_text(obj, "id", v, field) or open_loop_id(title, next_action),
        "title": title,
        "status": loop_status(obj.get("status")),
        "nextAction": next_action,
        "blockingConditions": string_list(obj.get("blockingConditions"), v, f"{field}.blockingConditions"),
        "relatedFiles": string_list(obj.get("relatedFiles"), v, f"{field}.relatedFiles", repo_paths=True),
    }
    source = optional_text(obj, "sourceSessionId", v, field)
    if source is not None:
        out["sourceSessionId"] = source
    if obj.get("evidence") is not None:
        out["evidence"] = check_evidence_input(obj.get("evidence"), v, f"{field}.evidence")
    return out


def object_list(value: Any, v: Validator, field: str, normalize) -> list[dict[str, Any]]:
    """Non-arrays → ``[]``; every item must be an object (a string item is INPUT_INVALID)."""
    if not isinstance(value, list):
        return []
    return [normalize(item, v, f"{field}[{i}]") for i, item in enumerate(value)]


_ABSENT = object()


@dataclass
class WrapInput:
    """A validated ``memory wrap`` payload; ``source_head_sha`` is ``_ABSENT`` when not given."""

    goal: str
    summary: str
    constraints: list[str]
    decisions: list[dict[str, Any]]
    open_loops: list[dict[str, Any]]
    next_actions: list[str]
    promotion_candidates: list[dict[str, Any]]
    source_head_sha: Any
    created_at: str

    @classmethod
    def from_payload(cls, obj: Any, root: Path) -> WrapInput:
        """Validate ``obj``; ``root`` resolves candidate ``supersedes`` paths (memory §4)."""
        from ..clock import format_iso, now_iso, parse_iso
        from .promote import normalize_candidate

        v = Validator(COMMAND)
        v.allowed_keys(obj, WRAP_KEYS)
        goal = required_text(obj, "goal", v, "input")
        summary = required_text(obj, "summary", v, "input")
        head: Any = optional_text(obj, "sourceHeadSha", v, "input") if "sourceHeadSha" in obj else _ABSENT
        created_at = now_iso()
        if "createdAt" in obj:
            raw = v.text(obj["createdAt"], "input.createdAt")
            try:
                created_at = format_iso(parse_iso(raw))
            except ValueError:
                raise v.fail("input.createdAt", "invalid_format", "input.createdAt must be an ISO-8601 timestamp",
                             value=raw) from None
        return cls(
            goal=goal,
            summary=summary,
            constraints=string_list(obj.get("constraints"), v, "input.constraints"),
            decisions=object_list(obj.get("decisions"), v, "input.decisions", normalize_decision),
            open_loops=object_list(obj.get("openLoops"), v, "input.openLoops", normalize_open_loop),
            next_actions=string_list(obj.get("nextActions"), v, "input.nextActions"),
            promotion_candidates=object_list(
                obj.get("promotionCandidates"), v, "input.promotionCandidates",
                lambda item, val, field: normalize_candidate(item, val, field, root)),
            source_head_sha=head,
            created_at=created_at,
        )


# ---------------------------------------------------------------- files

def memory_relpath(config: Config, key: str, name: str) -> str:
    """Repository-relative path of ``name`` inside ``memory.<key>``."""
    return f"{config['memory'][key].strip('/')}/{name}"


def dump_json(value: Any) -> str:
    """Control-plane JSON: 2-space indent, UTF-8, trailing newline (memory §1)."""
    return json.dumps(value, ensure_ascii=False, indent=2) + "\n"


def write_masked_json(target: Path, value: Any) -> None:
    """Secret-mask every string, then publish atomically (knowledge §10.2)."""
    from ..fsutil import atomic_write_text
    from ..security.masking import mask_value

    masked, _, _ = mask_value(value)
    atomic_write_text(target, dump_json(masked))


def read_json_object(path: Path) -> dict[str, Any] | None:
    """A JSON object file, or None when absent; unreadable or non-object content raises ValueError."""
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        return None
    except (OSError, UnicodeDecodeError) as exc:
        raise ValueError(str(exc)) from None
    value = json.loads(text)
    if not isinstance(value, dict):
        raise ValueError("not a JSON object")  # noqa: TRY004 - callers treat every unusable file alike
    return value


# ---------------------------------------------------------------- wrap

@dataclass
class WrapResult:
    session_id: str
    session_path: str
    current_path: str
    open_loops_path: str
    source_head_sha: str | None
    dry_run: bool
    warnings: list[str]

    def to_dict(self) -> dict[str, Any]:
        return {
            "sessionId": self.session_id,
            "sessionPath": self.session_path,
            "currentPath": self.current_path,
            "openLoopsPath": self.open_loops_path,
            "sourceHeadSha": self.source_head_sha,
            "dryRun": self.dry_run,
            "warnings": list(self.warnings),
        }

    def text(self) -> str:
        from ..contract.render import header

        return "\n".join(header(COMMAND, [
            ("session_id", self.session_id),
            ("session_path", self.session_path),
            ("current_path", self.current_path),
            ("open_loops_path", self.open_loops_path),
            ("source_head", self.source_head_sha),
            ("dry_run", self.dry_run),
        ], self.warnings)) + "\n"


def wrap(root: Path, git: Git | None, config: Config, inp: WrapInput, *, dry_run: bool = False) -> WrapResult:
    """Record one session and replace the working state and open-loop registry (memory §2).

    ``git`` is None outside a repository. Nothing is indexed; dry-run writes nothing at all.
    """
    from ..gitsnap.refs import head_sha

    warnings: list[str] = []
    head = head_sha(git) if git is not None else None
    if head is None:
        source_head, warnings = None, [NO_HEAD_WARNING]
    else:
        source_head = head if inp.source_head_sha is _ABSENT else inp.source_head_sha

    # evidence binds before anything is written: a bad handle leaves every file as it was
    bind_at = source_head if isinstance(source_head, str) else head
    decisions = [_bound(root, git, config, d, bind_at, f"input.decisions[{i}]") for i, d in enumerate(inp.decisions)]
    open_loops = [_bound(root, git, config, loop, bind_at, f"input.openLoops[{i}]")
                  for i, loop in enumerate(inp.open_loops)]
    sid = session_id(inp.created_at, inp.goal)
    record = {
        "sessionId": sid,
        "goal": inp.goal,
        "summary": inp.summary,
        "constraints": inp.constraints,
        "decisions": decisions,
        "openLoops": open_loops,
        "nextActions": inp.next_actions,
        "promotionCandidates": inp.promotion_candidates,
        "sourceHeadSha": source_head,
        "createdAt": inp.created_at,
    }
    active = [dict(loop, sourceSessionId=loop.get("sourceSessionId") or sid)
              for loop in open_loops if loop["status"] != "closed"]
    current = {
        "goal": inp.goal,
        "summary": inp.summary,
        "constraints": inp.constraints,
        "decisions": decisions,
        "openLoops": active,
        "nextActions": inp.next_actions,
        "latestSessionId": sid,
        "sourceHeadSha": source_head,
        "updatedAt": inp.created_at,
    }
    registry = {"latestSessionId": sid, "updatedAt": inp.created_at, "items": active}

    result = WrapResult(
        session_id=sid,
        session_path=memory_relpath(config, "session_dir", f"{sid}.json"),
        current_path=memory_relpath(config, "working_dir", "current.json"),
        open_loops_path=memory_relpath(config, "working_dir", "open-loops.json"),
        source_head_sha=source_head,
        dry_run=dry_run,
        warnings=warnings,
    )
    if not dry_run:
        write_masked_json(root / result.session_path, record)
        write_masked_json(root / result.current_path, current)
        write_masked_json(root / result.open_loops_path, registry)
    return result


def _bound(root: Path, git: Git | None, config: Config, item: dict[str, Any], bind_at: str | None,
           field: str) -> dict[str, Any]:
    """``item`` with its evidence as blob-bound handles (memory §10)."""
    if "evidence" not in item:
        return item
    return dict(item, evidence=bind_evidence(root, git, config, item["evidence"], bind_at, COMMAND,
                                             f"{field}.evidence"))
