"""Reads at a commit are reproducible (issue 14 item 2; knowledge §11.4, cli-contract §9).

The same question at the same commit gives byte-identical ``query --at <sha> --format json``
and ``context pack --at <sha> --format json`` whatever else the store holds, and a snapshot
built incrementally (``ingest --at <sha> --since <base>``) answers exactly like one built by a
clean ``ingest --all`` into an empty store.

One small repository per test process, with commits whose word statistics differ sharply (a
rewrite, a document that repeats one term hundreds of times, a side branch, code); hypothesis
chooses the commit, the question, and which other commits are ingested, in which order and how
(full or incremental), before or after it. 200 cases in all (two tests of 100).
"""

from __future__ import annotations

import contextlib
import io
import os
import random
import shutil
import subprocess
import tempfile
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from conftest import GIT_ENV, PLACEHOLDER_CONFIG

WORDS = ["token", "rotation", "store", "backend", "plan", "session", "refresh", "auth", "context", "zebra",
         "glossary", "domain", "cache", "index", "query", "the", "of", "sendFile", "HTTPServer", "retry"]
FIXED_QUESTIONS = ["token rotation", "restore auth context", "zebra glossary domain", "the of",
                   "sendFile HTTPServer retry", "refresh token store backend plan"]


class Corpus:
    """The repository: ``chain`` are main's commits (oldest first), ``side`` a branch off the
    second; HEAD stays at main's tip, every read names its commit with ``--at``."""

    def __init__(self) -> None:
        self.base = Path(tempfile.mkdtemp(prefix="ragit-repro-"))
        self.root = self.base / "repo"
        self.env = {**os.environ, **GIT_ENV, "HOME": str(self.base), "GIT_CONFIG_GLOBAL": os.devnull,
                    "GIT_CONFIG_NOSYSTEM": "1"}
        self.root.mkdir()
        self.git("init", "-q", "-b", "main")
        (self.root / ".ragit").mkdir()
        (self.root / ".ragit" / "config.toml").write_text(PLACEHOLDER_CONFIG, encoding="utf-8")
        (self.root / ".git" / "info" / "exclude").write_text(".ragit/\n", encoding="utf-8")
        rng = random.Random(14)
        self.chain = [self.commit("c0", {**self.docs(rng, range(14)), "src/app.py": APP})]
        self.chain.append(self.commit("c1 edits", self.docs(rng, range(0, 14, 3))))
        self.git("checkout", "-q", "-b", "side")
        self.side = self.commit("side", {**self.docs(rng, range(20, 30)), "docs/d01.md": None})
        self.git("checkout", "-q", "main")
        self.chain.append(self.commit("c2 token flood", {"docs/flood.md": "# Flood\n\n" + "token " * 400 + "\n",
                                                         "docs/d02.md": None}))
        self.chain.append(self.commit("c3 rewrite", self.docs(rng, range(14), words=WORDS[8:])))
        self.commits = [*self.chain, self.side]
        self.parents = {self.chain[0]: [], self.side: self.chain[:2]}
        for i, sha in enumerate(self.chain[1:], start=1):
            self.parents[sha] = self.chain[:i]

    @staticmethod
    def docs(rng: random.Random, numbers, words=WORDS) -> dict[str, str]:
        out = {}
        for i in numbers:
            sections = "\n\n".join(f"## Part {j} {rng.choice(words)}\n\n" + " ".join(
                rng.choice(words) for _ in range(rng.randint(5, 60))) for j in range(rng.randint(1, 3)))
            out[f"docs/d{i:02d}.md"] = f"# Title {rng.choice(words)}\n\n{sections}\n"
        return out

    def git(self, *args: str) -> str:
        proc = subprocess.run(["git", *args], cwd=self.root, env=self.env, capture_output=True, text=True)
        assert proc.returncode == 0, proc.stderr
        return proc.stdout.strip()

    def commit(self, message: str, files: dict[str, str | None]) -> str:
        for path, text in files.items():
            target = self.root / path
            if text is None:
                target.unlink()
            else:
                target.parent.mkdir(parents=True, exist_ok=True)
                target.write_text(text, encoding="utf-8")
        self.git("add", "-A")
        self.git("commit", "-q", "-m", message)
        return self.git("rev-parse", "HEAD")

    # ---------------------------------------------------------------- ragit, in process

    def ragit(self, *args: str) -> str:
        from ragit.cli.main import main

        out = io.StringIO()
        with contextlib.redirect_stdout(out):
            try:
                main([*args, "--cwd", str(self.root), "--format", "json"])
            except SystemExit as exc:
                assert exc.code == 0, out.getvalue()
        return out.getvalue()

    def reset(self) -> None:
        """An empty store: no rows, no manifests."""
        for name in ("store", "manifest"):
            shutil.rmtree(self.root / ".ragit" / name, ignore_errors=True)

    def ingest(self, sha: str, since: str | None = None) -> None:
        self.ragit("ingest", "--at", sha, *(("--since", since) if since else ("--all",)))

    def reads(self, sha: str, question: str) -> tuple[str, str]:
        return (self.ragit("query", question, "--at", sha, "--explain", "--top-k", "8"),
                self.ragit("context", "pack", question, "--at", sha, "--budget", "120"))

    def clean_reads(self, sha: str, question: str) -> tuple[str, str]:
        """The reads of a store that holds ``sha`` alone, indexed by a full ingest."""
        self.reset()
        self.ingest(sha)
        return self.reads(sha, question)


_CORPUS: list[Corpus] = []
_REFERENCE: dict[tuple[str, str], tuple[str, str]] = {}


@pytest.fixture(scope="module")
def corpus():
    if not _CORPUS:
        _CORPUS.append(Corpus())
    yield _CORPUS[0]


def reference(corpus: Corpus, sha: str, question: str) -> tuple[str, str]:
    """The reads of a clean store holding ``sha`` alone (computed once per commit and question)."""
    if (sha, question) not in _REFERENCE:
        _REFERENCE[(sha, question)] = corpus.clean_reads(sha, question)
    return _REFERENCE[(sha, question)]


# mostly a fixed set (their clean references are computed once), sometimes a new question
QUESTIONS = st.one_of(st.sampled_from(FIXED_QUESTIONS), st.sampled_from(FIXED_QUESTIONS),
                      st.lists(st.sampled_from(WORDS), min_size=1, max_size=5).map(" ".join))
# other commits to ingest: (commit index, incrementally from an indexed ancestor when there is one)
OTHERS = st.lists(st.tuples(st.integers(0, 4), st.booleans()), max_size=3)


def ingest_others(corpus: Corpus, others: list[tuple[int, bool]], indexed: set[str]) -> None:
    for index, incremental in others:
        sha = corpus.commits[index]
        bases = [p for p in corpus.parents[sha] if p in indexed]
        corpus.ingest(sha, since=bases[-1] if incremental and bases else None)
        indexed.add(sha)


def check(corpus: Corpus, target: int, question: str, before: list, incremental: bool, after: list,
          base_pick: int = -1) -> None:
    """Ingest ``before``, then the target (from an ancestor when ``incremental``), then
    ``after``; the target's reads equal the clean store's right after its ingest and at the end."""
    sha = corpus.commits[target]
    expected = reference(corpus, sha, question)
    corpus.reset()
    indexed: set[str] = set()
    ingest_others(corpus, [(i, inc) for i, inc in before if corpus.commits[i] != sha], indexed)
    ancestors = corpus.parents[sha]
    if incremental and ancestors:
        base = ancestors[base_pick % len(ancestors)]
        if base not in indexed:
            corpus.ingest(base)
            indexed.add(base)
        corpus.ingest(sha, since=base)  # the snapshot carries the base's rows over
    else:
        corpus.ingest(sha)
    indexed.add(sha)
    assert corpus.reads(sha, question) == expected
    if after:
        ingest_others(corpus, after, indexed)
        assert corpus.reads(sha, question) == expected


@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(target=st.integers(0, 4), question=QUESTIONS, before=OTHERS, incremental=st.booleans(), after=OTHERS)
def test_reads_at_a_commit_ignore_what_else_the_store_holds(corpus, target, question, before, incremental, after):
    check(corpus, target, question, before, incremental, after)


@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(target=st.integers(1, 4), question=QUESTIONS, before=OTHERS, base_pick=st.integers(0, 3), after=OTHERS)
def test_incremental_ingest_answers_like_a_clean_one(corpus, target, question, before, base_pick, after):
    check(corpus, target, question, before, True, after, base_pick)


def teardown_module() -> None:
    for c in _CORPUS:
        shutil.rmtree(c.base, ignore_errors=True)
    _CORPUS.clear()


APP = '''"""A tiny service."""


def sendFile(path):
    """Send one file; retry once."""
    return open(path).read()


class HTTPServer:
    token = "rotation"

    def serve(self, session):
        return session.get("auth")
'''
