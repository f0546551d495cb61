"""status, doctor, config, describe and migrate rebuild (knowledge §15–18, cli-contract §7)."""

from __future__ import annotations

import shutil

import pytest

from conftest import tree_snapshot


def test_status_indexed(indexed_repo, cli):
    r = cli("status", "--cwd", str(indexed_repo.root))
    assert r.code == 0
    d = r.json["data"]
    assert list(d) == ["branch", "head", "snapshot", "backend", "store", "supported_types", "manifests",
                       "embedding", "format", "languages"]
    assert d["branch"] == "main" and d["head"] == indexed_repo.head()
    assert d["snapshot"]["status"] == "indexed" and d["store"]["searchReady"] is True
    assert d["store"]["status"] == "loaded" and d["store"]["stats"]["snapshots"] == 1
    assert d["embedding"]["embedderId"] == "placeholder:sha1:64:v1"


def test_status_counts_documents_and_chunks_per_language(git_repo, cli):
    from conftest import write_placeholder_config

    write_placeholder_config(git_repo.root)
    git_repo.commit("c", {
        "src/a.py": "def a():\n    return 1\n\n\ndef b():\n    return 2\n",
        "cmd/main.go": "package main\n\nfunc main() {}\n",
        "lib/x.ex": "defmodule X do\n  def y, do: 1\nend\n",
        "docs/guide.md": "# Guide\n\nText.\n", "docs/api.rst": "API\n===\n\nText.\n",
        "config.yaml": "a: 1\n", "Makefile": "all:\n\ttrue\n", "empty.py": "",
    })
    assert cli("ingest", "--all", "--cwd", str(git_repo.root), "--format", "json").code == 0
    r = cli("status", "--cwd", str(git_repo.root))
    rows = {row["language"]: (row["documents"], row["chunks"]) for row in r.json["data"]["languages"]}
    assert rows == {"python": (2, 2), "go": (1, 2), "elixir": (1, 1), "markdown": (1, 1),
                    "restructuredtext": (1, 1), "yaml": (1, 1), "other": (1, 1)}
    text = cli("status", "--cwd", str(git_repo.root), "--format", "text").out
    assert "- language python: 2 documents, 2 chunks" in text
    git_repo.commit("d", {"src/b.py": "x = 1\n"})  # HEAD not indexed: no counts
    assert cli("status", "--cwd", str(git_repo.root)).json["data"]["languages"] == []


def test_status_older_manifest_but_head_missing(indexed_repo, cli):
    indexed_repo.commit("new", {"docs/x.md": "# X\n\nx\n"})
    d = cli("status", "--cwd", str(indexed_repo.root)).json["data"]
    assert d["snapshot"]["status"] == "missing" and d["store"]["searchReady"] is False


def test_status_detached_and_unborn_text(indexed_repo, git_repo, cli, tmp_path):
    indexed_repo.git("checkout", "-q", "--detach")
    t = cli("status", "--cwd", str(indexed_repo.root), "--format", "text").out
    assert "- branch: none" in t
    other = tmp_path / "unborn"
    other.mkdir()
    import subprocess

    subprocess.run(["git", "init", "-q", str(other)], check=True)
    t = cli("status", "--cwd", str(other), "--format", "text")
    assert t.code == 0 and "- head: none" in t.out


def test_status_outside_git(tmp_path, cli):
    r = cli("status", "--cwd", str(tmp_path), "--format", "json")
    assert r.code == 0 and r.json["cwd"] == str(tmp_path)
    assert r.json["data"]["head"] is None


def test_doctor_healthy_and_broken(indexed_repo, cli):
    r = cli("doctor", "--cwd", str(indexed_repo.root), "--format", "json")
    assert r.code == 0, r
    names = [c["name"] for c in r.json["data"]["checks"]]
    assert names == ["git.repository", "ragit.structure", "ragit.config", "embedder.runtime", "store.runtime",
                     "store.schema", "store.embedding", "ragit.manifests", "ragit.manifest-consistency",
                     "store.hygiene", "ragit.legacy-json-store", "git.hooks"]
    head = indexed_repo.head()
    (indexed_repo.root / ".ragit" / "manifest" / f"{head}.json").write_text("{broken")
    r = cli("doctor", "--cwd", str(indexed_repo.root), "--format", "json")
    assert r.code == 1 and r.json["ok"] is False and r.json["data"]["hasFailure"] is True
    check = {c["name"]: c for c in r.json["data"]["checks"]}["ragit.manifests"]
    assert check["ok"] is False and "SNAPSHOT_MANIFEST_INVALID" in check["detail"] and "repair:" in check["detail"]
    text = cli("doctor", "--cwd", str(indexed_repo.root)).out
    assert text.startswith("# ragit doctor\n- has_failure: true\n\n") and "FAIL ragit.manifests" in text


def test_rebuild_restores_deleted_store(indexed_repo, cli):
    before = cli("query", "refresh tokens", "--cwd", str(indexed_repo.root), "--format", "json").out
    shutil.rmtree(indexed_repo.root / ".ragit" / "store")
    r = cli("doctor", "--cwd", str(indexed_repo.root), "--format", "json")
    consistency = {c["name"]: c for c in r.json["data"]["checks"]}["ragit.manifest-consistency"]
    assert consistency["ok"] is False and "migrate rebuild" in consistency["detail"]
    r = cli("migrate", "rebuild", "--cwd", str(indexed_repo.root))
    assert r.code == 0, r
    d = r.json["data"]
    assert d["rebuilt"] == 1 and d["failed"] == 0 and d["snapshots"][0]["status"] == "rebuilt"
    after = cli("query", "refresh tokens", "--cwd", str(indexed_repo.root), "--format", "json").out
    assert after == before
    again = cli("migrate", "rebuild", "--cwd", str(indexed_repo.root)).json["data"]
    assert again["snapshots"][0]["status"] == "skipped"


def test_rebuild_incompatible_embedder(indexed_repo, cli):
    shutil.rmtree(indexed_repo.root / ".ragit" / "store")
    (indexed_repo.root / ".ragit" / "config.toml").write_text('[embedding]\nprovider = "placeholder"\ndimensions = 64\n'
                                                               '[security]\nsecret_masking = false\n')
    d = cli("migrate", "rebuild", "--cwd", str(indexed_repo.root)).json["data"]
    assert d["snapshots"][0]["status"] == "incompatible" and d["failed"] == 1
    r = cli("migrate", "rebuild", "--at", indexed_repo.head(), "--cwd", str(indexed_repo.root))
    assert r.code == 3 and r.json["error"]["details"]["reason"] == "incompatible"


def test_rebuild_dry_run_writes_nothing(indexed_repo, cli):
    shutil.rmtree(indexed_repo.root / ".ragit" / "store")
    before = tree_snapshot(indexed_repo.root)
    d = cli("migrate", "rebuild", "--dry-run", "--cwd", str(indexed_repo.root)).json["data"]
    assert d["mode"] == "dry-run" and d["snapshots"][0]["status"] == "rebuilt"
    assert tree_snapshot(indexed_repo.root) == before


# ---------------------------------------------------------------- config

def test_config_set_get_roundtrip(git_repo, cli):
    root = str(git_repo.root)
    r = cli("config", "set", "retrieval.top_k", "8", "--cwd", root)
    assert r.code == 0 and r.out == "config updated: retrieval.top_k=8\n"
    r = cli("config", "get", "retrieval.top_k", "--cwd", root, "--format", "json")
    assert r.json["data"] == {"key": "retrieval.top_k", "value": 8}
    r = cli("config", "set", "ingest.doc_globs", '["**/*.md","docs/**/*.txt"]', "--cwd", root, "--format", "json")
    assert r.json["data"]["value"] == ["**/*.md", "docs/**/*.txt"]
    r = cli("config", "set", "ingest.exclude", " a/** , b/** ", "--cwd", root, "--format", "json")
    assert r.json["data"]["value"] == ["a/**", "b/**"]
    r = cli("config", "set", "output.format", "markdown", "--cwd", root, "--format", "json")
    assert r.json["data"]["value"] == "text"
    r = cli("config", "set", "retrieval.passage_words", "0", "--cwd", root, "--format", "json")
    assert r.json["data"]["value"] == 0  # 0 = embed the whole question


@pytest.mark.parametrize(
    "key,value,code,reason",
    [
        ("retrieval.alpha", "1.5", "INPUT_INVALID", "out_of_range"),
        ("retrieval.top_k", "0", "INPUT_INVALID", "out_of_range"),
        ("retrieval.query_term_repeats", "0", "INPUT_INVALID", "out_of_range"),
        ("retrieval.keyword_enabled", "yes", "INPUT_INVALID", "not_boolean"),
        ("window.token_counter", "gpt2", "INPUT_INVALID", "not_one_of"),
        ("nosection", "1", "INPUT_INVALID", "invalid_format"),
        ("retrieval.nope", "1", "CONFIG_KEY_UNKNOWN", None),
    ],
)
def test_config_set_rejects(git_repo, cli, key, value, code, reason):
    before = tree_snapshot(git_repo.root)
    r = cli("config", "set", key, value, "--cwd", str(git_repo.root), "--format", "json")
    assert r.code == 2 and r.json["error"]["code"] == code
    if reason:
        assert r.json["error"]["details"]["reason"] == reason
    assert tree_snapshot(git_repo.root) == before


def test_config_parses_typed_values_and_invalid_toml(git_repo, cli):
    from ragit.config import defaults, load_config, render_config

    cfg = git_repo.root / ".ragit" / "config.toml"
    cfg.parent.mkdir(parents=True)
    cfg.write_text('[memory]\ncorpus_dir = "knowledge/memory" # comment\nrecall_top_k = 12\n')
    loaded = load_config(git_repo.root)
    assert loaded["memory"]["corpus_dir"] == "knowledge/memory" and loaded["memory"]["recall_top_k"] == 12
    text = render_config(defaults())
    cfg.write_text(text)
    assert render_config(load_config(git_repo.root)) == text
    cfg.write_text("[retrieval\nalpha = ")
    r = cli("status", "--cwd", str(git_repo.root), "--format", "json")
    assert r.code == 0  # status always answers (knowledge §15); doctor names the problem
    r = cli("doctor", "--cwd", str(git_repo.root), "--format", "json")
    assert r.code == 1 and not {c["name"]: c for c in r.json["data"]["checks"]}["ragit.config"]["ok"]
    cfg.write_text('[retrieval]\nalpha = "high"\n')
    r = cli("query", "x", "--cwd", str(git_repo.root), "--format", "json")
    assert r.code == 4 and r.json["error"]["code"] == "CONFIG_INVALID"


def test_config_preserves_unknown_keys(git_repo, cli):
    cfg = git_repo.root / ".ragit" / "config.toml"
    cfg.parent.mkdir(parents=True)
    cfg.write_text('[custom]\nflag = true\n\n[retrieval]\nextra = "kept"\n')
    cli("config", "set", "retrieval.top_k", "7", "--cwd", str(git_repo.root))
    text = cfg.read_text()
    assert 'extra = "kept"' in text and "[custom]\nflag = true" in text and "top_k = 7" in text


# ---------------------------------------------------------------- describe

def test_describe_query_contract(cli):
    r = cli("describe", "query")
    assert r.code == 0
    d = r.json["data"]
    assert d["command"] == "query" and d["availableCommands"][:2] == ["init", "describe"]
    spec = d["spec"]
    assert spec["outputSchemaSummary"] == ["query", "snapshotSha", "snapshot", "explain", "hits", "hits[].citation",
                                           "hits[].scoreBreakdown", "warnings", "redactionSummary"]
    top_k = {o["name"]: o for o in spec["options"]}["--top-k"]
    assert top_k["defaultValue"] == 5
    assert spec["supportsRawJsonInput"] is True and spec["mutating"] is False


def test_describe_unknown_and_group(cli):
    r = cli("describe", "memory", "--format", "json")
    assert r.code == 2 and r.json["error"]["code"] == "COMMAND_UNKNOWN"
    r = cli("describe", "nope")
    assert r.code == 2 and "COMMAND_UNKNOWN" in r.err


def test_describe_text(cli):
    t = cli("describe", "context", "pack", "--format", "text").out
    assert t.startswith("# ragit describe\n- command: context pack\n- group: context\n- docs: commands/context/pack\n")
    assert "## Options" in t and "- --budget (number): Content-unit budget. default=1200" in t


def test_describe_matches_click_options(cli):
    """Every option a command accepts is described, and every described option exists."""
    import click

    from ragit.cli.main import _register, cli as group
    from ragit.contract.describe import REGISTRY

    _register()
    ctx = click.Context(group)
    for path, spec in REGISTRY.items():
        cmd = group
        for word in path.split():
            cmd = cmd.get_command(ctx, word)
            assert cmd is not None, path
        declared = {opt for p in cmd.params if isinstance(p, click.Option) and not p.hidden for opt in p.opts
                    if opt.startswith("--")}
        described = {o["name"] for o in spec["options"]}
        assert described <= declared | {"--output"}, (path, described - declared)
        assert {d for d in declared if d not in ("--help", "--non-interactive")} <= described, (path, declared - described)


def test_version_and_help(cli):
    r = cli("--version")
    assert r.code == 0 and r.out.startswith("ragit 0.1.0")
    assert cli("--help").code == 0
    r = cli("frobnicate", "--format", "json")
    assert r.code == 2 and r.json["error"]["code"] == "COMMAND_UNKNOWN"


def test_truncated_vector_heap_is_reported_and_repaired(indexed_repo, cli):
    """A heap file that lost rows: the query's recovery (ingest --all) repairs HEAD, doctor
    names the lost vectors, and migrate rebuild repairs every snapshot."""
    root = indexed_repo.root
    old = indexed_repo.head()
    indexed_repo.commit("more", {"docs/more.md": "# More\n\nrefresh tokens rotate hourly\n"})
    assert cli("ingest", "--all", "--cwd", str(root)).code == 0
    q = ("query", "refresh tokens", "--cwd", str(root), "--format", "json")
    before, before_old = cli(*q).out, cli(*q, "--at", old).out
    (heap,) = (root / ".ragit" / "store").glob("vectors-*.f32")

    def truncate() -> None:
        with heap.open("r+b") as fh:
            fh.truncate(64 * 4 + 10)  # the first row and a torn piece of the second

    truncate()
    r = cli(*q)
    assert r.code == 3 and r.json["error"]["code"] == "SNAPSHOT_STORE_UNAVAILABLE"
    assert r.json["error"]["recovery"]["command"] == "ragit ingest --all"
    doctor = cli("doctor", "--cwd", str(root), "--format", "json").json["data"]
    consistency = {c["name"]: c for c in doctor["checks"]}["ragit.manifest-consistency"]
    assert consistency["ok"] is False and "missingChunkIds=0" not in consistency["detail"]
    assert cli("ingest", "--all", "--cwd", str(root)).code == 0
    assert cli(*q).out == before  # HEAD re-embedded what the heap lost
    doctor = cli("doctor", "--cwd", str(root), "--format", "json").json["data"]
    consistency = {c["name"]: c for c in doctor["checks"]}["ragit.manifest-consistency"]
    assert consistency["ok"] is False  # the older snapshot's rows still name the lost slots

    truncate()
    rebuilt = cli("migrate", "rebuild", "--cwd", str(root), "--format", "json").json["data"]
    assert rebuilt["failed"] == 0 and {s["status"] for s in rebuilt["snapshots"]} == {"rebuilt"}
    assert cli(*q).out == before and cli(*q, "--at", old).out == before_old
    doctor = cli("doctor", "--cwd", str(root), "--format", "json").json["data"]
    assert doctor["hasFailure"] is False


@pytest.mark.parametrize("table", ["chunks", "snapshot_docs"])
def test_lost_store_rows_fail_the_query_and_ingest_all_restores_them(indexed_repo, cli, table):
    """A store that lost chunk or document rows never answers with silently fewer hits; doctor
    reports it; ingest --all re-chunks the blobs instead of publishing documents without chunks."""
    import sqlite3

    root = indexed_repo.root
    q = ("query", "refresh tokens", "--cwd", str(root), "--format", "json")
    before = cli(*q).out
    manifest = root / ".ragit" / "manifest" / f"{indexed_repo.head()}.json"
    published = manifest.read_bytes()
    conn = sqlite3.connect(root / ".ragit" / "store" / "ragit.db")
    conn.execute(f"DELETE FROM {table}")
    conn.commit()
    conn.close()
    r = cli(*q)
    assert r.code == 3 and r.json["error"]["code"] == "SNAPSHOT_STORE_UNAVAILABLE"
    assert "chunks are missing" in r.json["error"]["message"]
    assert r.json["error"]["recovery"]["command"] == "ragit ingest --all"
    doctor = cli("doctor", "--cwd", str(root), "--format", "json").json["data"]
    assert {c["name"]: c for c in doctor["checks"]}["ragit.manifest-consistency"]["ok"] is False
    assert cli("ingest", "--all", "--cwd", str(root)).code == 0
    assert manifest.read_bytes() == published
    assert cli(*q).out == before


@pytest.mark.parametrize("damage", ["other_schema", "not_a_database"])
def test_an_unusable_store_is_replaced_by_ingest_all_and_rebuild(indexed_repo, cli, damage):
    """The recovery the query names works: ingest --all (and migrate rebuild) create a store
    this version can use in place of one of another schema or a damaged file."""
    import sqlite3

    root = indexed_repo.root
    store = root / ".ragit" / "store"
    q = ("query", "refresh tokens", "--cwd", str(root), "--format", "json")
    before = cli(*q).out

    def break_store() -> None:
        if damage == "other_schema":
            conn = sqlite3.connect(store / "ragit.db")
            conn.execute("UPDATE meta SET value = '3' WHERE key = 'schema_version'")
            conn.commit()
            conn.close()
        else:
            for extra in store.glob("ragit.db-*"):
                extra.unlink()
            (store / "ragit.db").write_bytes(b"not a database" * 100)

    break_store()
    r = cli(*q)
    assert r.code == 3 and r.json["error"]["code"] == "SNAPSHOT_STORE_UNAVAILABLE"
    assert r.json["error"]["details"]["reason"] == (
        "store_schema_mismatch" if damage == "other_schema" else "store_unreadable")
    assert r.json["error"]["recovery"]["command"] == "ragit ingest --all"
    r = cli("ingest", "--all", "--cwd", str(root), "--format", "json")
    assert r.code == 0 and any("created afresh" in w for w in r.json["data"]["warnings"]), r
    assert cli(*q).out == before

    break_store()
    r = cli("migrate", "rebuild", "--cwd", str(root), "--format", "json")
    assert r.code == 0 and r.json["data"]["failed"] == 0 and r.json["data"]["rebuilt"] == 1, r
    assert cli(*q).out == before
