"""Turn retrieval and evidence files into ordinary packet candidates (context §2.4).

``build_packet`` stays pure; this module does the I/O around it: it asks the caller's pack runner
for a ``retrieve`` block (the Python API that runs ``context pack`` lives above this module),
reads ``--evidence`` files (masked on the way in), labels every candidate with ``trust`` and
``flags``, and keeps the candidate order payload → evidence → retrieved.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable, Protocol, Sequence

from ..errors import RagitError, input_invalid
from .packet import KINDS, REQUEST_FIELDS, PacketInputError, PacketRequest, PacketResult, build_packet

if TYPE_CHECKING:  # pragma: no cover
    from ..contract.payloads import PackInput
    from ..gitsnap.git import Git
    from ..retrieve.hits import Hit
    from ..retrieve.query import Retrieval

COMMAND = "context packet"
RETRIEVE_KEYS = ("goal", "budget", "at", "scope", "paths", "excludeTests", "kind")  # a context pack's keys + kind
RETRIEVE_KINDS = ("reference", "direct-evidence")


class PackOutput(Protocol):
    """What a packet reads from the ``context pack`` of its ``retrieve`` block (the Python API's
    ``PackResult`` is one)."""

    @property
    def retrieval(self) -> "Retrieval": ...

    @property
    def hits(self) -> list["Hit"]: ...


# Runs ``context pack`` for a validated ``retrieve`` block (the Python API's ``Repo.pack_input``).
PackRunner = Callable[["PackInput"], PackOutput]


@dataclass
class PacketOutcome:
    result: PacketResult
    pack: PackOutput | None

    @property
    def ready(self) -> bool:
        return self.result.state == "ready"

    def to_dict(self) -> dict[str, Any]:
        from ..security.masking import mask_value

        data = self.result.to_dict()
        if self.pack is not None:
            r = self.pack.retrieval
            data["snapshotSha"] = r.snapshot_sha
            data["snapshot"] = r.selection.block()
            data["warnings"] = list(r.warnings)
        masked, _, _ = mask_value(data)
        return masked


def _input_error(exc: PacketInputError) -> RagitError:
    extra = {k: v for k, v in exc.details.items() if k not in ("field", "reason")}
    return input_invalid(exc.field, exc.reason, exc.message, command=COMMAND, **extra)


def _units(text: str) -> int:
    return max(1, len(text.split()))


def _label(candidate: dict[str, Any], default_trust: str) -> dict[str, Any]:
    """Caller candidates keep their trust (default ``evidence``); flags = given ∪ computed."""
    from ..security.labels import flags_for
    from ..security.masking import mask_text

    out = dict(candidate)
    out.setdefault("trust", default_trust)
    content = out.get("content")
    computed: list[str] = []
    if isinstance(content, str) and content:
        out["content"] = mask_text(content).text
        computed = flags_for(out["content"])
    given = list(out.get("flags") or [])
    out["flags"] = given + [f for f in computed if f not in given]
    return out


def parse_evidence_spec(spec: str) -> tuple[str, str]:
    """``PATH[:kind]``: the suffix after the last ``:`` is a kind only when it names one."""
    head, sep, tail = spec.rpartition(":")
    if sep and tail in KINDS and head:
        return head, tail
    return spec, "direct-evidence"


def evidence_candidate(spec: str, root: Path, allow_outside: bool = True) -> dict[str, Any]:
    """A file given as evidence; on the command line it may lie outside the repository (agent
    harnesses keep test output elsewhere), over MCP it may not."""
    from ..contract.inputs import Validator, read_text_input, resolve_input_path
    from ..ingest.text import normalize_newlines
    from ..security.labels import flags_for
    from ..security.masking import mask_text

    path_text, kind = parse_evidence_spec(spec)
    v = Validator(COMMAND)
    text = read_text_input(path_text, root, v, field="--evidence", allow_outside=allow_outside)
    resolved = resolve_input_path(path_text, root, v, field="--evidence", allow_outside=allow_outside)
    mtime = datetime.fromtimestamp(os.stat(resolved).st_mtime, tz=timezone.utc)
    from ..clock import format_iso

    content = mask_text(normalize_newlines(text)).text
    return {
        "id": f"file:{path_text}",
        "kind": kind,
        "source": f"file:{path_text}",
        "capturedAt": format_iso(mtime),
        "relevance": "current",
        "freshness": "fresh",
        "sizeUnits": _units(content),
        "content": content,
        "reference": path_text,
        "trust": "evidence",
        "flags": flags_for(content),
    }


def retrieved_candidates(pack: PackOutput, commit_time: str, kind: str | None) -> list[dict[str, Any]]:
    """Selected pack hits as candidates: snapshot time as capture time, and the handle
    ``path@sha12:Lx-Ly`` as ``source`` (context §2.4), because a selected item drops its
    ``reference`` and the citation id alone names no file and no lines."""
    out = []
    for hit in pack.hits:
        hit_kind = kind or ("direct-evidence" if hit.citation.get("sourceType") == "evidence" else "reference")
        handle = hit.handle()
        out.append({
            "id": hit.citation_id,
            "kind": hit_kind,
            "source": handle,
            "capturedAt": commit_time,
            "relevance": "current",
            "freshness": "fresh",
            "sizeUnits": _units(hit.text),
            "content": hit.text,
            "reference": handle,
            "trust": hit.trust,
            "flags": list(hit.flags),
        })
    return out


def check_request(payload: Any, evidence: Sequence[str] = ()) -> tuple[dict[str, Any], "PackInput | None", str | None]:
    """Validate a packet request without any I/O (cli-contract §3.3: before Git or store work):
    the caller's part, the ``retrieve`` block as a pack input, and its forced kind."""
    from ..contract.inputs import Validator
    from ..contract.payloads import PackInput

    v = Validator(COMMAND)
    v.allowed_keys(payload, REQUEST_FIELDS + ("retrieve",))
    retrieve = payload.get("retrieve")
    pack_input = None
    forced_kind = None
    if retrieve is not None:
        v.allowed_keys(retrieve, RETRIEVE_KEYS, "input.retrieve")
        if "kind" in retrieve:
            forced_kind = v.choice(retrieve["kind"], "input.retrieve.kind", RETRIEVE_KINDS)
        pack_input = PackInput.from_payload({k: x for k, x in retrieve.items() if k != "kind"},
                                            command=COMMAND, field_prefix="input.retrieve")
    base = {k: payload[k] for k in REQUEST_FIELDS if k in payload}
    if "candidates" not in base and (retrieve is not None or evidence):
        base["candidates"] = []
    try:
        PacketRequest.from_dict(base)  # validates the caller's part with its own field paths
    except PacketInputError as exc:
        raise _input_error(exc) from None
    return base, pack_input, forced_kind


def assemble_packet(root: Path, git: "Git", payload: Any, evidence: Sequence[str] = (), *, pack: PackRunner,
                    evidence_outside: bool = True) -> PacketOutcome:
    """Validate the request, gather candidates, and run the pure ``build_packet``; ``pack`` is
    called only when the request has a ``retrieve`` block, after the evidence files are read."""
    base, pack_input, forced_kind = check_request(payload, evidence)
    candidates = [_label(c, "evidence") for c in base["candidates"]]
    candidates += [evidence_candidate(spec, root, evidence_outside) for spec in evidence]
    packed = None
    if pack_input is not None:
        from ..gitsnap.history import commit_time

        packed = pack(pack_input)
        captured = commit_time(git, packed.retrieval.snapshot_sha)
        candidates += retrieved_candidates(packed, captured, forced_kind)
    request = dict(base, candidates=candidates)
    try:
        result = build_packet(PacketRequest.from_dict(request))
    except PacketInputError as exc:
        raise _input_error(exc) from None
    return PacketOutcome(result, packed)


def packet_text(data: dict[str, Any]) -> str:
    packet = data.get("packet")
    used = f"{packet['usedBudgetUnits']}/{packet['budgetUnits']}" if packet else "none"
    lines = ["# ragit context packet", f"- state: {data['state']}", f"- phase: {data['phase']}",
             f"- used_budget_units: {used}"]
    for w in data.get("warnings", []):
        lines.append(f"- warning: {w}")

    def section(title: str, items: list[str]) -> None:
        lines.extend(["", f"## {title}"] + (items or ["- none"]))

    section("Selected", [f"- {s['id']}: {s['kind']}, {s['sizeUnits']} units, source {s['source']}"
                         for s in (packet["selected"] if packet else [])])
    section("Pointers", [f"- {p['id']}: {p['reference']} (load {p['loadWhen']})" for p in (packet["pointers"] if packet else [])])
    section("Excluded", [f"- {e['id']}: {e['reason']}" for e in data["excluded"]])
    section("Unknowns", [f"- {u['id']}: missing {', '.join(u['missing'])}" for u in data["unknowns"]])
    section("Refresh", [f"- {r['id']}: {r['reason']}" for r in data["refresh"]])
    return "\n".join(lines) + "\n"
