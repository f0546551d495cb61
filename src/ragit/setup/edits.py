"""Apply setup's edits to one file and undo them, from what was recorded when they were made.

A file's record says whether setup created it, the splices it made (exactly invertible), the
hash of the text it left, and the ops (the entries it added, by value). Undoing uses the
splices when the file is still exactly as setup left it (so the file comes back byte for
byte) and the ops otherwise (so edits made since are kept and only ragit's entries go).
"""

from __future__ import annotations

import hashlib
import tomllib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from . import jsonedit, textedit
from .clients import FileSpec
from .jsonedit import JsonEditError, Splice

Anchor = tuple[int, str]


class SetupEditError(ValueError):
    """A client file setup cannot edit safely (not parseable, or an unexpected layout)."""

    def __init__(self, path: Path, reason: str, message: str):
        super().__init__(message)
        self.path = path
        self.reason = reason


def sha256(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


@dataclass
class Restored:
    """A file's text without setup's entries (None: setup created it, so no file), where a
    Markdown/TOML block was (to put it back in place), and what could not be undone."""

    text: str | None
    anchor: Anchor | None = None
    warnings: list[str] = field(default_factory=list)


def _describe(op: dict[str, Any]) -> str:
    if op["kind"] == "md-section":
        return "section"
    return ("[" + ".".join(op["path"]) + "]") if op["kind"] == "toml-table" else ".".join(op["path"])


def _remove_op(kind: str, text: str, op: dict[str, Any]) -> tuple[str, str | None, Anchor | None]:
    if kind == "json":
        new, why = jsonedit.remove_op(text, op)
        return new, why, None
    if kind == "toml":
        return textedit.remove_table(text, op)
    return textedit.remove_section(text, op)


def _is_empty(kind: str, text: str) -> bool:
    return jsonedit.is_empty_object(text) if kind == "json" else not text.strip()


def restore(current: str | None, record: dict[str, Any], display: str) -> Restored:
    """``current`` with everything ``record`` added taken out."""
    if current is None:
        return Restored(None)
    kind = record["kind"]
    splices = [Splice.from_dict(s) for s in record.get("splices", [])]
    if record.get("after") == sha256(current) and not record.get("shared"):
        if record.get("created"):
            return Restored(None)
        text = current
        for splice in reversed(splices):
            text = splice.invert(text)
        anchor = None
        ops = record.get("ops", [])
        if kind != "json" and len(splices) == 1 and ops and "previous" not in ops[0]:
            anchor = (splices[0].at, ops[0].get("separator", ""))
        return Restored(text, anchor)
    text, anchor, warnings = current, None, []
    try:
        for op in reversed(record.get("ops", [])):
            text, why, where = _remove_op(kind, text, op)
            anchor = where or anchor
            if why == "changed":
                warnings.append(f"{display}: ragit's {_describe(op)} was edited since setup; left as it is")
    except JsonEditError as exc:
        raise SetupEditError(Path(record["path"]), exc.reason, f"{display}: {exc}") from None
    if record.get("created") and _is_empty(kind, text):
        return Restored(None, None, warnings)
    return Restored(text, anchor, warnings)


def _apply_op(kind: str, text: str, op: tuple[Any, ...], anchor: Anchor | None) -> tuple[Splice | None, dict[str, Any]]:
    name = op[0]
    if name == "member":
        return jsonedit.set_member(text, op[1], op[2])
    if name == "element":
        return jsonedit.append_element(text, op[1], op[2])
    if name == "table":
        return textedit.set_table(text, op[1], textedit.toml_table(op[1], op[2]), anchor)
    return textedit.set_section(text, op[1], anchor)


def _check(spec: FileSpec, text: str) -> None:
    """The edited text parses in the client's format and holds every entry setup wants there."""
    if spec.kind == "json":
        root = jsonedit.parse_object(text)
        for op in spec.ops:
            node = jsonedit.lookup(root, op[1])
            present = node is not None and (node.value == op[2] if op[0] == "member" else op[2] in node.value)
            if not present:
                raise JsonEditError("unsupported_layout", f"{'.'.join(op[1])} did not take the new value")
    elif spec.kind == "toml":
        try:
            doc = tomllib.loads(text)
        except tomllib.TOMLDecodeError as exc:
            raise JsonEditError("unsupported_layout", f"the edited file is not valid TOML ({exc})") from None
        for op in spec.ops:
            node: Any = doc
            for key in op[1]:
                node = node.get(key) if isinstance(node, dict) else None
            if node != op[2]:
                raise JsonEditError("unsupported_layout", f"{'.'.join(op[1])} is defined outside its own table")
    elif textedit.count_sections(text) != 1:
        raise JsonEditError("unsupported_layout", "more than one ragit section")


def shared(record: dict[str, Any], text: str) -> dict[str, Any]:
    """This setup's claim on a section another setup wrote (a shared AGENTS.md): the same origin
    (created, separator, replaced text), no splices, so whichever setup is removed last removes
    the section exactly."""
    return {"path": record["path"], "kind": record["kind"], "created": record.get("created", False),
            "createdDirs": record.get("createdDirs", []), "shared": True, "after": sha256(text),
            "splices": [], "ops": record.get("ops", [])}


def _check_base(spec: FileSpec, text: str) -> None:
    if spec.kind == "json":
        jsonedit.parse_object(text)
    elif spec.kind == "toml":
        try:
            tomllib.loads(text)
        except tomllib.TOMLDecodeError as exc:
            raise JsonEditError("invalid_toml", f"not valid TOML ({exc})") from None
    elif textedit.count_sections(text) > 1:
        raise JsonEditError("unsupported_layout", "more than one ragit section")


@dataclass
class Installed:
    """The file's new text (equal to the current one when nothing changes) and its record
    (None when setup added nothing to it)."""

    text: str
    record: dict[str, Any] | None
    warnings: list[str]


def install(spec: FileSpec, current: str | None, old: dict[str, Any] | None, display: str,
            created_dirs: list[str]) -> Installed:
    """Put ``spec``'s entries into the file: first take out what an earlier run added (so a
    changed entry is replaced, not duplicated, and the record stays relative to the original),
    then apply every op. Raises SetupEditError, touching nothing, when the file cannot be
    edited safely."""
    try:
        restored = restore(current, old, display) if old else Restored(current)
        created = restored.text is None
        text = spec.skeleton if created else restored.text
        _check_base(spec, text)
        splices: list[Splice] = []
        ops: list[dict[str, Any]] = []
        for op in spec.ops:
            splice, recorded = _apply_op(spec.kind, text, op, restored.anchor)
            if splice is not None:
                text = splice.apply(text)
                splices.append(splice)
                ops.append(recorded)
        _check(spec, text)
    except JsonEditError as exc:
        raise SetupEditError(spec.path, exc.reason, f"{display}: {exc}") from None
    if not created and not ops:
        return Installed(text, None, restored.warnings)
    record = {
        "path": str(spec.path),
        "kind": spec.kind,
        "created": created,
        "createdDirs": created_dirs if created else [],
        "after": sha256(text),
        "splices": [] if created else [s.to_dict() for s in splices],  # a created file is undone by deleting it
        "ops": ops,
    }
    return Installed(text, record, restored.warnings)
