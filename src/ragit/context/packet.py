"""The context packet (context.md §2): the book's rules as one pure, deterministic function.

``build_packet`` turns caller-supplied candidates into an inspectable packet — what is in full
text, what is only a pointer, what was excluded and why, what is unknown and what needs a
refresh — instead of a silently concatenated string. It reads nothing (no files, environment or
clock) and never mutates its input, so the CLI, the ``Repo`` API and tests all get the same
answer for the same objects.

Input decisions where the spec is silent:

* JSON ``null`` for any field counts as absent (a ``null`` ``source`` is a provenance gap; a
  ``null`` required field is ``required``), because many JSON producers write ``null`` for
  "not given".
* ``budgetUnits``/``sizeUnits`` accept integral JSON numbers (``2`` and ``2.0``, normalised to
  the integer ``2``, as JSON Schema's ``integer`` does); ``2.5``, NaN, infinities, strings and
  booleans are ``not_integer``.
* A value of the wrong JSON container type (an object or array expected) is ``invalid_format``;
  ``loadWhen: ""`` counts as absent like ``content``/``reference`` (the default applies).
* Ids need not be unique; every candidate is decided on its own. A refresh entry's
  ``conflictsWith`` lists each matching id once, in the summary's own order.
* The first error is reported deterministically: unknown keys first (sorted), then required
  fields, then optional ones, each object in §2.1 order and candidates by index.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

REQUEST_FIELDS: tuple[str, ...] = ("taskAnchor", "budgetUnits", "candidates", "conflictsIncludePointers")
TASK_ANCHOR_FIELDS: tuple[str, ...] = ("goal", "stopCondition", "verificationTarget")
CANDIDATE_FIELDS: tuple[str, ...] = (
    "id", "kind", "source", "capturedAt", "relevance", "freshness", "sizeUnits", "content",
    "reference", "loadWhen", "conflictsWith", "trust", "flags",
)

KIND_PRIORITY: dict[str, int] = {
    "constraint": 0, "direct-evidence": 1, "history-summary": 2, "reference": 3,
}
KINDS: tuple[str, ...] = tuple(KIND_PRIORITY)
RELEVANCES: tuple[str, ...] = ("current", "background")
FRESHNESSES: tuple[str, ...] = ("fresh", "expired")
TRUSTS: tuple[str, ...] = ("repository", "artifact", "evidence")

DEFAULT_LOAD_WHEN = "when the packet needs full content"
READY_EVIDENCE: tuple[str, ...] = (
    "candidate provenance and kind order are explicit",
    "budget decisions are recorded as selected, pointers and exclusions",
)
BLOCKED_EVIDENCE: tuple[str, ...] = ("candidate provenance is incomplete",)


class PacketInputError(ValueError):
    """Invalid packet input; ``field``/``reason`` map one-to-one onto ``INPUT_INVALID`` details."""

    def __init__(
        self,
        field: str,
        reason: str,
        message: str,
        *,
        value: Any = None,
        allowed: Sequence[str] | None = None,
    ) -> None:
        super().__init__(message)
        self.field = field
        self.reason = reason
        self.message = message
        self.value = value
        self.allowed = tuple(allowed) if allowed is not None else None

    @property
    def details(self) -> dict[str, Any]:
        """``INPUT_INVALID`` details: ``field``, ``reason``, then ``value``/``allowed`` when known."""
        out: dict[str, Any] = {"field": self.field, "reason": self.reason}
        if self.value is not None:
            out["value"] = self.value
        if self.allowed is not None:
            out["allowed"] = list(self.allowed)
        return out


# ---------------------------------------------------------------- validation helpers


def _object(value: Any, path: str) -> Mapping[str, Any]:
    if not isinstance(value, Mapping):
        raise PacketInputError(path, "invalid_format", f"{path} must be an object")
    return value


def _array(value: Any, path: str) -> Sequence[Any]:
    if isinstance(value, (str, bytes)) or not isinstance(value, Sequence):
        raise PacketInputError(path, "invalid_format", f"{path} must be an array")
    return value


def _no_unknown(obj: Mapping[str, Any], allowed: Sequence[str], path: str) -> None:
    unknown = sorted(str(key) for key in obj if key not in allowed)
    if unknown:
        raise PacketInputError(
            f"{path}.{unknown[0]}", "unknown_field", f"{path}.{unknown[0]} is not a known field",
            allowed=allowed,
        )


def _required(obj: Mapping[str, Any], key: str, path: str) -> Any:
    value = obj.get(key)
    if value is None:
        raise PacketInputError(f"{path}.{key}", "required", f"{path}.{key} is required")
    return value


def _string(value: Any, path: str, *, non_empty: bool = False) -> str:
    if not isinstance(value, str):
        raise PacketInputError(path, "not_string", f"{path} must be a string")
    if non_empty and value == "":
        raise PacketInputError(path, "empty", f"{path} must not be empty")
    return value


def _optional_string(obj: Mapping[str, Any], key: str, path: str) -> str | None:
    value = obj.get(key)
    return None if value is None else _string(value, f"{path}.{key}")


def _one_of(value: Any, allowed: Sequence[str], path: str) -> str:
    text = _string(value, path)
    if text not in allowed:
        raise PacketInputError(
            path, "not_one_of", f"{path} must be one of {', '.join(allowed)}",
            value=text, allowed=allowed,
        )
    return text


def _positive_int(value: Any, path: str) -> int:
    """An integer > 0; integral floats (``2.0``) are accepted, booleans never."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise PacketInputError(path, "not_integer", f"{path} must be an integer")
    if isinstance(value, float):
        if not math.isfinite(value) or not value.is_integer():
            raise PacketInputError(path, "not_integer", f"{path} must be an integer")
        value = int(value)
    if value <= 0:
        raise PacketInputError(path, "out_of_range", f"{path} must be > 0", value=value)
    return value


def _strings(value: Any, path: str, *, non_empty: bool) -> tuple[str, ...]:
    items = _array(value, path)
    return tuple(_string(item, f"{path}[{i}]", non_empty=non_empty) for i, item in enumerate(items))


# ---------------------------------------------------------------- request types


@dataclass(frozen=True)
class TaskAnchor:
    """What the call is for, when to stop and what proves it; echoed verbatim into the packet."""

    goal: str
    stop_condition: str
    verification_target: str

    @classmethod
    def from_dict(cls, obj: Any, path: str = "input.taskAnchor") -> TaskAnchor:
        """Validate a ``taskAnchor`` object: exactly the three non-empty strings."""
        anchor = _object(obj, path)
        _no_unknown(anchor, TASK_ANCHOR_FIELDS, path)
        goal, stop, target = (
            _string(_required(anchor, key, path), f"{path}.{key}", non_empty=True)
            for key in TASK_ANCHOR_FIELDS
        )
        return cls(goal, stop, target)

    def to_dict(self) -> dict[str, str]:
        return {
            "goal": self.goal,
            "stopCondition": self.stop_condition,
            "verificationTarget": self.verification_target,
        }


@dataclass(frozen=True)
class Candidate:
    """One caller-supplied piece of context; ``trust``/``flags`` are ``None`` when not carried."""

    id: str
    kind: str
    relevance: str
    freshness: str
    size_units: int
    source: str | None = None
    captured_at: str | None = None
    content: str | None = None
    reference: str | None = None
    load_when: str | None = None
    conflicts_with: tuple[str, ...] = ()
    trust: str | None = None
    flags: tuple[str, ...] | None = None

    @classmethod
    def from_dict(cls, obj: Any, path: str) -> Candidate:
        """Validate one candidate object found at JSON path ``path``."""
        cand = _object(obj, path)
        _no_unknown(cand, CANDIDATE_FIELDS, path)
        conflicts = cand.get("conflictsWith")
        flags = cand.get("flags")
        trust = cand.get("trust")
        return cls(
            id=_string(_required(cand, "id", path), f"{path}.id", non_empty=True),
            kind=_one_of(_required(cand, "kind", path), KINDS, f"{path}.kind"),
            relevance=_one_of(_required(cand, "relevance", path), RELEVANCES, f"{path}.relevance"),
            freshness=_one_of(_required(cand, "freshness", path), FRESHNESSES, f"{path}.freshness"),
            size_units=_positive_int(_required(cand, "sizeUnits", path), f"{path}.sizeUnits"),
            source=_optional_string(cand, "source", path),
            captured_at=_optional_string(cand, "capturedAt", path),
            content=_optional_string(cand, "content", path),
            reference=_optional_string(cand, "reference", path),
            load_when=_optional_string(cand, "loadWhen", path),
            conflicts_with=(
                () if conflicts is None
                else _strings(conflicts, f"{path}.conflictsWith", non_empty=True)
            ),
            trust=None if trust is None else _one_of(trust, TRUSTS, f"{path}.trust"),
            flags=None if flags is None else _strings(flags, f"{path}.flags", non_empty=False),
        )

    def missing_provenance(self) -> list[str]:
        """Which of ``source``, ``capturedAt`` are absent or empty, in that order."""
        return [
            name for name, value in (("source", self.source), ("capturedAt", self.captured_at))
            if not value
        ]


@dataclass(frozen=True)
class PacketRequest:
    """A validated packet request (context.md §2.1)."""

    task_anchor: TaskAnchor
    budget_units: int
    candidates: tuple[Candidate, ...]
    conflicts_include_pointers: bool = False

    @classmethod
    def from_dict(cls, obj: Any) -> PacketRequest:
        """Validate a request object; raises :class:`PacketInputError` naming the first bad field."""
        request = _object(obj, "input")
        _no_unknown(request, REQUEST_FIELDS, "input")
        anchor = TaskAnchor.from_dict(_required(request, "taskAnchor", "input"))
        budget = _positive_int(_required(request, "budgetUnits", "input"), "input.budgetUnits")
        items = _array(_required(request, "candidates", "input"), "input.candidates")
        candidates = tuple(
            Candidate.from_dict(item, f"input.candidates[{i}]") for i, item in enumerate(items)
        )
        include_pointers = request.get("conflictsIncludePointers")
        if include_pointers is None:
            include_pointers = False
        elif not isinstance(include_pointers, bool):
            raise PacketInputError(
                "input.conflictsIncludePointers", "not_boolean",
                "input.conflictsIncludePointers must be a boolean",
            )
        return cls(anchor, budget, candidates, include_pointers)


# ---------------------------------------------------------------- result types


@dataclass(frozen=True)
class Pointer:
    """A resolvable reference with its load condition; costs no budget and is never read."""

    id: str
    reference: str
    load_when: str
    trust: str | None = None
    flags: tuple[str, ...] | None = None

    def to_dict(self) -> dict[str, Any]:
        return {
            "id": self.id, "reference": self.reference, "loadWhen": self.load_when,
            **_labels(self.trust, self.flags),
        }


@dataclass(frozen=True)
class Exclusion:
    """A candidate left out, with the rule that left it out."""

    id: str
    reason: str

    def to_dict(self) -> dict[str, Any]:
        return {"id": self.id, "reason": self.reason}


@dataclass(frozen=True)
class Unknown:
    """A candidate whose provenance gap blocks the packet."""

    id: str
    missing: tuple[str, ...]

    def to_dict(self) -> dict[str, Any]:
        return {"id": self.id, "missing": list(self.missing)}


@dataclass(frozen=True)
class RefreshRequest:
    """Why a candidate must be fetched again: ``source`` for expired evidence, ``conflicts_with``
    for a summary contradicting current direct evidence."""

    id: str
    reason: str
    source: str | None = None
    conflicts_with: tuple[str, ...] | None = None

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {"id": self.id, "reason": self.reason}
        if self.source is not None:
            out["source"] = self.source
        if self.conflicts_with is not None:
            out["conflictsWith"] = list(self.conflicts_with)
        return out


@dataclass(frozen=True)
class Packet:
    """What the call gets: the anchor, full-text items, pointers and the budget arithmetic."""

    task_anchor: TaskAnchor
    selected: tuple[Candidate, ...]
    pointers: tuple[Pointer, ...]
    used_budget_units: int
    budget_units: int

    def to_dict(self) -> dict[str, Any]:
        return {
            "taskAnchor": self.task_anchor.to_dict(),
            "selected": [_selected_dict(c) for c in self.selected],
            "pointers": [p.to_dict() for p in self.pointers],
            "usedBudgetUnits": self.used_budget_units,
            "budgetUnits": self.budget_units,
        }


def _selected_dict(cand: Candidate) -> dict[str, Any]:
    return {
        "id": cand.id,
        "kind": cand.kind,
        "source": cand.source,
        "capturedAt": cand.captured_at,
        "relevance": cand.relevance,
        "freshness": cand.freshness,
        "sizeUnits": cand.size_units,
        "content": cand.content,
        **_labels(cand.trust, cand.flags),
    }


def _labels(trust: str | None, flags: tuple[str, ...] | None) -> dict[str, Any]:
    """The §10.4 labels, emitted only when the candidate carried them."""
    out: dict[str, Any] = {}
    if trust is not None:
        out["trust"] = trust
    if flags is not None:
        out["flags"] = list(flags)
    return out


@dataclass(frozen=True)
class PacketResult:
    """The packet decision; ``to_dict()`` is the wire object with the spec's key order."""

    state: str
    phase: str
    packet: Packet | None
    excluded: tuple[Exclusion, ...]
    unknowns: tuple[Unknown, ...]
    refresh: tuple[RefreshRequest, ...]
    evidence: tuple[str, ...]

    def to_dict(self) -> dict[str, Any]:
        return {
            "state": self.state,
            "phase": self.phase,
            "packet": None if self.packet is None else self.packet.to_dict(),
            "excluded": [e.to_dict() for e in self.excluded],
            "unknowns": [u.to_dict() for u in self.unknowns],
            "refresh": [r.to_dict() for r in self.refresh],
            "evidence": list(self.evidence),
        }


# ---------------------------------------------------------------- the algorithm (§2.2)


def build_packet(request: PacketRequest | Mapping[str, Any]) -> PacketResult:
    """Assemble the packet by the book's rules; raises :class:`PacketInputError` on bad input."""
    req = request if isinstance(request, PacketRequest) else PacketRequest.from_dict(request)

    unknowns = tuple(
        Unknown(c.id, tuple(missing)) for c in req.candidates if (missing := c.missing_provenance())
    )
    if unknowns:
        return PacketResult("blocked", "missing_provenance", None, (), unknowns, (), BLOCKED_EVIDENCE)

    selected: list[Candidate] = []
    pointers: list[Pointer] = []
    excluded: list[Exclusion] = []
    refresh: list[RefreshRequest] = []
    direct_ids: set[str] = set()
    used = 0
    for cand in sorted(req.candidates, key=lambda c: KIND_PRIORITY[c.kind]):
        if cand.freshness == "expired":
            excluded.append(Exclusion(cand.id, "expired"))
            if cand.kind == "direct-evidence":
                refresh.append(RefreshRequest(cand.id, "direct_evidence_expired", source=cand.source))
            continue
        if cand.kind == "history-summary":
            clashes = tuple(dict.fromkeys(i for i in cand.conflicts_with if i in direct_ids))
            if clashes:
                excluded.append(Exclusion(cand.id, "conflicting_history_summary"))
                refresh.append(RefreshRequest(
                    cand.id, "conflicts_with_current_direct_evidence", conflicts_with=clashes,
                ))
                continue
        if cand.content and cand.kind != "reference" and used + cand.size_units <= req.budget_units:
            selected.append(cand)
            used += cand.size_units
            if cand.kind == "direct-evidence":
                direct_ids.add(cand.id)
        elif cand.reference:
            pointers.append(Pointer(
                cand.id, cand.reference, cand.load_when or DEFAULT_LOAD_WHEN, cand.trust, cand.flags,
            ))
            if req.conflicts_include_pointers and cand.kind == "direct-evidence":
                direct_ids.add(cand.id)
        else:
            reason = "over_budget_without_reference" if cand.content else "missing_content_and_reference"
            excluded.append(Exclusion(cand.id, reason))

    packet = Packet(req.task_anchor, tuple(selected), tuple(pointers), used, req.budget_units)
    if refresh:
        state, phase = "refresh_required", "refresh_context"
    else:
        state, phase = "ready", "assembled"
    return PacketResult(state, phase, packet, tuple(excluded), (), tuple(refresh), READY_EVIDENCE)
