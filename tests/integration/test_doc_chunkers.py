"""reStructuredText and AsciiDoc docs on a real repository (knowledge §8.4–8.5, §9): their own
headings title their chunks (chunkers ``rst`` and ``asciidoc``), Markdown keeps its chunker and
ids, and a store whose ``.rst`` records were cut as Markdown (every ragit before session 33)
keeps them for its snapshots while ``ingest --all`` cuts those blobs again, exactly as a fresh
store does."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest
from conftest import ingest_data, manifest_docs, older_store, write_pg_config, write_placeholder_config

from ragit import Repo

GUIDE = """\
Nesting Schemas
===============

Schemas can be nested to represent relationships between objects.

Specifying Which Fields to Nest
-------------------------------

You can explicitly specify which attributes of the nested objects you want with ``only``.
"""
MANUAL = """\
= Manual

== Retries

Failed uploads are retried with exponential backoff.
"""
FILES = {
    "docs/nesting.rst": GUIDE,
    "docs/manual.adoc": MANUAL,
    "README.md": "# Demo\n\nA small project.\n",
    "src/app.py": "def nest(schema):\n    return schema\n",
}


def _titles(root: Path, question: str, path: str, at: str | None = None) -> list[str]:
    hits = Repo.open(root).query(question, top_k=10, paths=[path], at=at).hits
    return sorted({h.section_title for h in hits})


def _as_markdown(m: pytest.MonkeyPatch) -> None:
    """ragit before session 33: every doc cut as Markdown."""
    for module in ("ragit.ingest.blobwork", "ragit.ingest.pipeline"):
        m.setattr(f"{module}.doc_chunker", lambda path: "markdown")


@pytest.fixture
def old_store(git_repo, cli, monkeypatch):
    """The repository indexed by a ragit that cut every doc as Markdown."""
    return older_store(git_repo, cli, monkeypatch, FILES, _as_markdown)


def test_rst_and_asciidoc_sections_title_their_chunks(git_repo, cli):
    write_placeholder_config(git_repo.root)
    git_repo.commit("initial", FILES)
    ingest_data(cli, git_repo.root, "--all")
    docs = manifest_docs(git_repo.root, git_repo.head())
    assert {p: d["chunker"] for p, d in docs.items() if not p.endswith(".py")} == {
        "docs/nesting.rst": "rst", "docs/manual.adoc": "asciidoc", "README.md": "markdown"}
    assert docs["docs/nesting.rst"]["chunks"] == [[4, 4], [9, 9]]  # the title lines are no content
    assert _titles(git_repo.root, "which fields of nested objects", "docs/*.rst") == [
        "Nesting Schemas", "Specifying Which Fields to Nest"]
    assert _titles(git_repo.root, "retried uploads", "docs/*.adoc") == ["Retries"]
    top = Repo.open(git_repo.root).query("Specifying Which Fields to Nest", top_k=1).hits[0]
    assert (top.path, top.start_line, top.section_title) == ("docs/nesting.rst", 9, "Specifying Which Fields to Nest")
    languages = {row["language"] for row in cli("status", "--cwd", str(git_repo.root)).json["data"]["languages"]}
    assert {"restructuredtext", "asciidoc", "markdown", "python"} <= languages


def test_an_old_store_keeps_its_markdown_cut_until_ingest_all_cuts_the_docs_again(old_store, cli, tmp_path):
    root, base = old_store.root, old_store.head()
    old = manifest_docs(root, base)
    assert old["docs/nesting.rst"]["chunker"] == old["docs/manual.adoc"]["chunker"] == "markdown"
    assert _titles(root, "which fields of nested objects", "docs/*.rst") == ["Introduction"]

    # an incremental ingest evaluates the changed file only: the other docs keep their records
    old_store.commit("edit", {"src/app.py": "def nest(schema, only=None):\n    return schema\n"})
    ingest_data(cli, root, "--since", base)
    assert manifest_docs(root, old_store.head())["docs/nesting.rst"] == old["docs/nesting.rst"]

    # ``ingest --all`` evaluates every blob: the two docs are cut again, Markdown and code are reused
    data = ingest_data(cli, root, "--all")
    assert data["chunked"] == 2
    new = manifest_docs(root, old_store.head())
    assert (new["docs/nesting.rst"]["chunker"], new["docs/manual.adoc"]["chunker"]) == ("rst", "asciidoc")
    assert not set(new["docs/nesting.rst"]["ids"]) & set(old["docs/nesting.rst"]["ids"])
    assert new["README.md"] == old["README.md"]
    assert _titles(root, "which fields of nested objects", "docs/*.rst") == [
        "Nesting Schemas", "Specifying Which Fields to Nest"]
    assert ingest_data(cli, root, "--all")["chunked"] == 0
    # the snapshot made before still answers from its own chunks
    assert _titles(root, "which fields of nested objects", "docs/*.rst", at=base) == ["Introduction"]

    # a fresh store cuts the same
    fresh = tmp_path / "fresh"
    subprocess.run(["git", "clone", "-q", str(root), str(fresh)], check=True)
    write_placeholder_config(fresh)
    ingest_data(cli, fresh, "--all")
    assert manifest_docs(fresh, old_store.head()) == new

    # and a bundle of the older snapshot carries its Markdown cut into that store
    bundle = tmp_path / "old.ragit"
    r = cli("snapshot", "export", base, "-o", str(bundle), "--cwd", str(root), "--format", "json")
    assert r.code == 0, r
    r = cli("snapshot", "import", str(bundle), "--cwd", str(fresh), "--format", "json")
    assert r.code == 0 and r.json["data"]["imported"] is True, r
    assert _titles(fresh, "which fields of nested objects", "docs/*.rst", at=base) == ["Introduction"]
    assert ingest_data(cli, fresh, "--all")["chunked"] == 0


def test_a_postgres_store_cuts_the_docs_again_and_keeps_the_older_snapshot(git_repo, cli, pg_dsn, monkeypatch):
    """The same on the PostgreSQL store: the docs' new records sit beside the Markdown ones
    (another profile), and the older snapshot keeps its chunks."""
    monkeypatch.setenv("RAGIT_DATABASE_URL", pg_dsn)
    root = older_store(git_repo, cli, monkeypatch, FILES, _as_markdown, config=write_pg_config).root
    base = git_repo.head()
    git_repo.commit("edit", {"src/app.py": "def nest(schema, only=None):\n    return schema\n"})
    assert ingest_data(cli, root, "--all")["chunked"] == 3  # both docs and the edited file
    new = manifest_docs(root, git_repo.head())
    assert (new["docs/nesting.rst"]["chunker"], new["docs/manual.adoc"]["chunker"]) == ("rst", "asciidoc")
    assert ingest_data(cli, root, "--all")["chunked"] == 0
    assert _titles(root, "which fields of nested objects", "docs/*.rst") == [
        "Nesting Schemas", "Specifying Which Fields to Nest"]
    assert _titles(root, "which fields of nested objects", "docs/*.rst", at=base) == ["Introduction"]
