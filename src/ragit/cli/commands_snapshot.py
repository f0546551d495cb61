"""``snapshot export | import``: move one commit's indexed snapshot between clones (knowledge §22.1)."""

from __future__ import annotations

from typing import Any

import click

from ..contract.describe import _CWD, _FMT, _spec, register
from .app import cli
from .common import common, open_repo, output_file, user_path
from .output import Output


@cli.group("snapshot")
def snapshot_group() -> None:
    """Export an indexed snapshot to one file, or import one."""



@snapshot_group.command("export")
@click.argument("rev", required=False)
@click.option("-o", "--out", "out", default=None, metavar="FILE", help="Bundle file to write.")
@common
def export_cmd(rev: str | None, out: str | None, format_: str | None, cwd: str | None) -> Output:
    """Write the exact indexed snapshot of REV (any revision) to one bundle file."""
    from ..contract.inputs import Validator

    v = Validator("snapshot export")
    if rev is None or not rev.strip():
        raise v.fail("rev", "required", "a revision to export is required (e.g. HEAD)")
    if out is None or not out.strip():
        raise v.fail("--out", "required", "-o <file> (--out) is required")
    target = output_file(v, out)
    repo = open_repo(cwd)
    data = repo.snapshot_export(rev.strip(), target)
    return Output("snapshot export", data, lambda: export_text(data), data["warnings"], cwd=str(repo.root))


@snapshot_group.command("import")
@click.argument("file", required=False)
@common
def import_cmd(file: str | None, format_: str | None, cwd: str | None) -> Output:
    """Verify a bundle against this repository and publish its snapshot."""
    from ..contract.inputs import Validator

    v = Validator("snapshot import")
    if file is None or not file.strip():
        raise v.fail("file", "required", "a bundle file to import is required")
    source = user_path(file)
    if not source.is_file():
        raise v.fail("file", "file_not_found", f"{file} is not a file", value=file)
    repo = open_repo(cwd)
    data = repo.snapshot_import(source)
    return Output("snapshot import", data, lambda: import_text(data), data["warnings"], cwd=str(repo.root))


def export_text(data: dict[str, Any]) -> str:
    from ..contract.render import header

    return "\n".join(header("snapshot export", [
        ("commit", data["commitSha"]),
        ("file", data["path"]),
        ("bytes", data["bytes"]),
        ("sha256", data["sha256"]),
        ("embedder", data["embedderId"]),
        ("documents", data["documents"]),
        ("chunks", data["chunks"]),
    ], data["warnings"])) + "\n"


def import_text(data: dict[str, Any]) -> str:
    from ..contract.render import header

    return "\n".join(header("snapshot import", [
        ("commit", data["commitSha"]),
        ("file", data["path"]),
        ("imported", data["imported"]),
        ("manifest", data["manifestPath"]),
        ("embedder", data["embedderId"]),
        ("documents", data["documents"]),
        ("chunks", data["chunks"]),
        ("new_chunks", data["newChunks"]),
        ("new_vectors", data["newVectors"]),
    ], data["warnings"])) + "\n"


register(_spec(
    "snapshot export", "Write the exact indexed snapshot of a revision (manifest, masked chunks, vectors) to one "
                       "checksummed bundle file; writes nothing else.",
    related=["snapshot import", "ingest", "status"], mutating=True,
    outputs=["commitSha", "path", "formatVersion", "bytes", "sha256", "manifestSha256", "embedderId", "dims",
             "documents", "chunks", "warnings"],
    arguments=[{"name": "rev", "type": "string", "required": True,
                "description": "Any revision (HEAD, a SHA or prefix, a branch, a tag), resolved once."}],
    options=[{"name": "--out", "type": "path", "required": True,
              "description": "Bundle file to write (short form -o); replaced atomically."}, _FMT, _CWD],
    examples=["ragit snapshot export HEAD -o snapshot.ragit", "ragit snapshot export v1.2.0 -o /tmp/v1.2.0.ragit"],
    errors=["INPUT_INVALID", "SNAPSHOT_REF_INVALID", "SNAPSHOT_REF_AMBIGUOUS", "SNAPSHOT_NOT_INDEXED",
            "SNAPSHOT_STORE_UNAVAILABLE", "SNAPSHOT_MANIFEST_INVALID", "SNAPSHOT_SCHEMA_UNSUPPORTED",
            "STORE_WRITE_FAILED", "GIT_REPOSITORY_REQUIRED", "CONFIG_INVALID"],
    formats=("json", "json"),
))
register(_spec(
    "snapshot import", "Verify a snapshot bundle (checksum, format, parameters, every blob id against local git) "
                       "and publish its snapshot as ingest would; nothing is written when a check fails.",
    related=["snapshot export", "query", "ingest"], mutating=True,
    outputs=["commitSha", "path", "formatVersion", "manifestPath", "embedderId", "documents", "chunks", "imported",
             "newChunks", "newVectors", "warnings"],
    arguments=[{"name": "file", "type": "path", "required": True, "description": "The bundle file to import."}],
    options=[_FMT, _CWD],
    examples=["ragit snapshot import snapshot.ragit", "ragit snapshot import /tmp/v1.2.0.ragit --format text"],
    errors=["INPUT_INVALID", "SNAPSHOT_BUNDLE_INVALID", "EMBEDDER_UNAVAILABLE", "STORE_WRITE_BUSY",
            "STORE_WRITE_FAILED", "GIT_REPOSITORY_REQUIRED", "CONFIG_INVALID"],
    formats=("json", "json"),
))
