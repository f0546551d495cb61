"""The public Python API: :class:`Repo` keeps one repository's config, git handle, embedder and
snapshot matrices in memory, so repeated calls in one process are fast. The CLI and the MCP
server are thin shells over these methods."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable

from .config import Config, load_config
from .errors import RagitError
from .gitsnap.location import git_required  # re-exported: the CLI and the MCP server raise it too

if TYPE_CHECKING:  # pragma: no cover
    from .context.pack import PackSelection
    from .embed.base import Embedder
    from .gitsnap.git import Git
    from .gitsnap.watch import WorktreeWatch
    from .ingest.manifest import ManifestCache
    from .ingest.pipeline import IngestResult
    from .contract.views import QueryResult
    from .retrieve.query import Retrieval
    from .retrieve.search import VectorCache
    from .store.held import HeldStore


@dataclass
class PackResult:
    """A budgeted, cited context pack (context §1.4)."""

    retrieval: "Retrieval"
    budget: int
    selection: "PackSelection"
    counter_name: str
    model_tokens: int
    extra_warnings: tuple[str, ...] = ()
    budget_unit: str = "words"  # the unit of ``budget`` and ``usedTokens``: words or tokens

    @property
    def hits(self):
        return list(self.selection.hits)

    @property
    def warnings(self) -> list[str]:
        return list(self.retrieval.warnings) + list(self.selection.warnings) + list(self.extra_warnings)

    def to_dict(self, view: str = "default") -> dict[str, Any]:
        from .contract.views import project_hit

        r = self.retrieval
        return {
            "goal": r.text,
            "scope": r.scope,
            "snapshotSha": r.snapshot_sha,
            "snapshot": r.selection.block(),
            "budget": self.budget,
            "usedTokens": self.selection.used_tokens,
            "selectedHits": len(self.selection.hits),
            "selection": self.selection.summary(),
            "warnings": self.warnings,
            "redactionSummary": r.redaction(view, "goal", self.hits),
            "hits": [project_hit(h, view) for h in self.selection.hits],
            "modelTokens": {"counter": self.counter_name, "tokens": self.model_tokens},
            "budgetUnit": self.budget_unit,
        }


class Repo:
    """One git repository opened for ragit."""

    def __init__(self, root: Path, config: Config, git: "Git"):
        self.root = root
        self.config = config
        self.git = git
        self._embedder: "Embedder | None" = None
        self._lazy: "_LazyEmbedder | None" = None
        self._read_state: tuple | None = None

    @property
    def _cache(self) -> "VectorCache":
        return self._read_caches()[0]

    @property
    def _manifests(self) -> "ManifestCache":
        return self._read_caches()[1]

    @property
    def _watch(self) -> "WorktreeWatch":
        return self._read_caches()[2]

    @property
    def _held(self) -> "HeldStore":
        return self._read_caches()[3]

    def _read_caches(self) -> tuple:
        """What a warm process keeps between reads (vectors, manifests, worktree watch, the open
        read store); made on the first read, so a one-shot ingest does not import the retrieval
        modules."""
        if self._read_state is None:
            from .gitsnap.watch import WorktreeWatch
            from .ingest.manifest import ManifestCache
            from .retrieve.search import VectorCache
            from .store.held import HeldStore

            self._read_state = (VectorCache(), ManifestCache(), WorktreeWatch(self.root), HeldStore())
        return self._read_state

    def close(self) -> None:
        """Close the read connections this Repo keeps open between reads (the store and the
        keyword readers; the next read reopens them)."""
        if self._read_state is not None:
            self._held.close()
            readers = self._cache.readers
            for reader in readers.values():
                reader.close()
            readers.clear()

    @classmethod
    def open(cls, path: str | Path = ".") -> "Repo":
        """Open the repository containing ``path`` (GIT_REPOSITORY_REQUIRED outside git)."""
        from .gitsnap.git import Git, find_root

        cwd = Path(path).resolve()
        root = find_root(cwd)
        if root is None:
            raise git_required(cwd)
        return cls(root, load_config(root), Git(root))

    # ---------------------------------------------------------------- embedder

    @property
    def embedder(self) -> "Embedder":
        if self._embedder is None:
            from .embed import load_embedder

            self._embedder = load_embedder(self.config)
        return self._embedder

    # ---------------------------------------------------------------- knowledge

    def ingest(self, *, all: bool = False, since: str | None = None, files: str | None = None,
               paths: tuple[str, ...] | list[str] = (), dry_run: bool = False,
               progress: Callable[[str, int, int], None] | None = None, at: str | None = None) -> "IngestResult":
        """Index HEAD, or the commit ``at`` names (see knowledge §7); ``files`` is a
        comma-separated glob list; ``since`` and ``at`` take any revision (``HEAD~1``, a tag)."""
        from .contract.payloads import IngestInput

        inp = IngestInput.from_cli(all, since, files, tuple(paths), at)
        return self.ingest_input(inp, dry_run=dry_run, progress=progress)

    def ingest_input(self, inp, *, dry_run: bool = False, progress=None) -> "IngestResult":
        from .gcpause import paused
        from .ingest.pipeline import IngestRequest, run_ingest

        request = IngestRequest(inp.mode, inp.since, list(inp.files), list(inp.paths), dry_run, at=inp.at)
        retrieval = self.config["retrieval"]
        cochange = not dry_run and retrieval["rerank"] and retrieval["cochange"]
        ahead: list = []

        def mine_ahead(sha: str) -> None:
            # the commit to publish is known: git mines its co-change history on the other core
            # while this thread chunks and embeds (issue 15: overlap git reads with parsing)
            from .gitsnap.cochange import mine_ahead as start

            ahead.append(start(self.git, self.root, sha))

        # one paused block around the ingest and the mining thread: the collector switch is
        # process-global, so the thread must neither find it on nor turn it on mid-ingest
        with paused():
            try:
                result = run_ingest(self.root, self.git, self.config, request, embedder=self._embedder,
                                    progress=progress, on_commit=mine_ahead if cochange else None)
                if self._read_state is not None:
                    self._cache.entries.clear()
                if cochange and result.search_ready:
                    from .gitsnap.cochange import cochange_at
                    from .gitsnap.git import GitError

                    # the snapshot's co-change counts, kept for the queries that follow (they write
                    # nothing); as retrieve.cochange_boost.snapshot_cochange, without importing the
                    # ranking stage (~11 ms of an ingest process): history git cannot give leaves
                    # the cache unwritten
                    try:
                        cochange_at(self.git, self.root, result.commit_sha, keep_changes=True, keep_counts=True,
                                    ahead=ahead[0] if ahead else None)
                    except (GitError, OSError, ValueError):
                        pass
            finally:  # a failed ingest: the thread wrote nothing, its git processes are waited for
                for mining in ahead:
                    if mining is not None:
                        mining.result()
        if not dry_run and result.search_ready and self.config["history"]["index"]:
            self._index_history(result)
        return result

    def snapshot_export(self, rev: str, out: str | Path) -> dict[str, Any]:
        """Write the bundle of ``rev``'s exact indexed snapshot to ``out`` (knowledge §22.1);
        ``rev`` is any revision. Writes nothing else."""
        from .ingest.bundle import export_snapshot
        from .retrieve.selection import with_ancestor_hint

        try:
            return export_snapshot(self.root, self.git, self.config, rev, Path(out))
        except RagitError as exc:
            hinted = with_ancestor_hint(exc, self.git, self.root, self.config, explicit=True)
            if hinted is exc:
                raise
            raise hinted from None

    def snapshot_import(self, path: str | Path) -> dict[str, Any]:
        """Verify a bundle against this repository and installation, then publish its snapshot
        as ingest would; SNAPSHOT_BUNDLE_INVALID (nothing written) on any mismatch."""
        from .ingest.bundle import import_snapshot

        result = import_snapshot(self.root, self.git, self.config, Path(path))
        if self._read_state is not None:
            self._cache.entries.clear()
        return result

    def _index_history(self, result: "IngestResult") -> None:
        """Add the snapshot's new commits to the history index (``--scope history``; a cache: a
        failure to write it costs those hits, never the ingest, and says so)."""
        import sqlite3

        from .gitsnap.git import GitError
        from .history.index import update_index

        try:
            update_index(self.git, self.root, result.commit_sha)
        except (OSError, sqlite3.Error, GitError, UnicodeError) as exc:
            result.warnings.append(f"history index not updated ({exc}); --scope history may miss recent commits")

    def query(self, question: str, *, top_k: int | None = None, scope: str = "durable",
              at: str | None = None, explain: bool = False, paths: list[str] | None = None,
              exclude_tests: bool = False, no_wait: bool = False) -> "QueryResult":
        """Cited hits for ``question`` from the exact snapshot of HEAD (or ``at``); ``paths``
        (globs) and ``exclude_tests`` limit which files are candidates; ``no_wait`` fails at once
        (SNAPSHOT_INGEST_IN_PROGRESS) instead of waiting for a running ingest (knowledge §5.7)."""
        from .contract.payloads import QueryInput

        payload: dict[str, Any] = {"question": question, "scope": scope, "explain": explain}
        if top_k is not None:
            payload["topK"] = top_k
        if at is not None:
            payload["at"] = at
        if paths:
            payload["paths"] = list(paths)
        if exclude_tests:
            payload["excludeTests"] = True
        try:
            inp = QueryInput.from_payload(payload, self.config["retrieval"]["top_k"])
        except RagitError as exc:  # `at="main"`: name its commit and the exact command (knowledge §5.1)
            raise self._exact_revision(exc, ["query", question], [
                ("--top-k", top_k), ("--scope", None if scope == "durable" else scope), ("--path", paths),
                ("--exclude-tests", exclude_tests), ("--no-wait", no_wait), ("--explain", explain)]) from None
        return self.query_input(inp, no_wait=no_wait)

    def query_input(self, inp, *, no_wait: bool = False) -> "QueryResult":
        from .contract.views import QueryResult

        retrieval = self._retrieve(inp.question, inp.top_k, inp.scope, inp.at, inp.paths, inp.exclude_tests,
                                   ingest_wait=0.0 if no_wait else None)
        return QueryResult(retrieval, inp.explain)

    def _retrieve(self, text: str, top_k: int, scope: str, at: str | None, paths: tuple[str, ...] = (),
                  exclude_tests: bool = False, ingest_wait: float | None = None) -> "Retrieval":
        from .retrieve.query import retrieve
        from .retrieve.search import RowFilter

        overlay_source = None
        if scope == "history":  # commit messages and hunks, from the history index ingest keeps
            from .retrieve.history_overlay import HistoryOverlay

            overlay_source = HistoryOverlay(self.root, self.git)
        elif scope != "durable":  # artifacts reach retrieval only as the overlay of a non-durable scope
            from .memory.artifact_overlay import ArtifactOverlay

            overlay_source = ArtifactOverlay(self.root, self.config, self.git)
        return retrieve(self.root, self.git, self.config, text, top_k=top_k, scope=scope, at=at,
                        cache=self._cache, embedder=self._lazy_embedder(), manifests=self._manifests,
                        watch=self._watch, row_filter=RowFilter(tuple(paths), exclude_tests),
                        overlay_source=overlay_source, ingest_wait=ingest_wait, held=self._held)

    def _lazy_embedder(self) -> "_LazyEmbedder":
        """The embedder, loaded on first use; one object for every read of this ``Repo``, so what
        is kept per embedder (a warm process's question vectors) serves its later reads too."""
        if self._lazy is None:
            self._lazy = _LazyEmbedder(self)
        return self._lazy

    # ---------------------------------------------------------------- context

    def pack(self, goal: str, *, budget: int = 1200, scope: str = "durable", at: str | None = None,
             paths: list[str] | None = None, exclude_tests: bool = False,
             budget_unit: str = "words", no_wait: bool = False) -> PackResult:
        """A budgeted, citation-diverse context pack for ``goal`` (context §1); ``budget_unit``
        ``tokens`` budgets in the configured token counter's units instead of words."""
        from .contract.payloads import PackInput

        payload: dict[str, Any] = {"goal": goal, "budget": budget, "scope": scope, "budgetUnit": budget_unit}
        if at is not None:
            payload["at"] = at
        if paths:
            payload["paths"] = list(paths)
        if exclude_tests:
            payload["excludeTests"] = True
        try:
            inp = PackInput.from_payload(payload)
        except RagitError as exc:  # `at="main"`: name its commit and the exact command (knowledge §5.1)
            raise self._exact_revision(exc, ["context", "pack", goal], [
                ("--budget", None if budget == 1200 else budget), ("--scope", None if scope == "durable" else scope),
                ("--path", paths),
                ("--exclude-tests", exclude_tests), ("--budget-unit", None if budget_unit == "words" else budget_unit),
                ("--no-wait", no_wait)]) from None
        return self.pack_input(inp, no_wait=no_wait)

    def _exact_revision(self, error: "RagitError", words: list[str], options: list[tuple[str, Any]]) -> "RagitError":
        """A refused ``at`` that names a commit: the error names it and the CLI command with it."""
        from .retrieve.selection import exact_command, with_exact_revision

        return with_exact_revision(error, self.git, lambda sha: exact_command(words, [*options, ("--at", sha)]))

    def pack_input(self, inp, *, no_wait: bool = False) -> PackResult:
        from .context.pack import select_hits
        from .contract.payloads import PACK_TOP_K

        retrieval = self._retrieve(inp.goal, PACK_TOP_K, inp.scope, inp.at, inp.paths, inp.exclude_tests,
                                   ingest_wait=0.0 if no_wait else None)
        unit = inp.budget_unit
        if unit == "tokens":  # the budget is in the configured counter's tokens (context §1.3 step 1)
            from .context.pack import token_cost
            from .window.tokens import get_counter

            counter, warning = get_counter(self.config["window"]["token_counter"])
            selection = select_hits(retrieval.hits, inp.budget, token_cost(counter))
            counter_name, count = counter.id, selection.used_tokens
        else:
            selection = select_hits(retrieval.hits, inp.budget)
            counter_name, count, warning = _model_tokens(self.config, [h.text for h in selection.hits])
        return PackResult(retrieval, inp.budget, selection, counter_name, count, (warning,) if warning else (), unit)


    def why(self, target: str, *, at: str = "HEAD", limit: int | None = None, memory=None) -> dict[str, Any]:
        """The commits that introduced and last changed ``path[:Lx-Ly]`` at HEAD (or ``at``), newest
        first, with masked hunks (knowledge §22.3), and the memory items whose evidence cites the
        lines, with their ``stale`` state (``memory``, a ragit.retrieve.why.MemoryCitations; by
        default this repository's decisions, open loops and artifacts).
        Read-only; an absolute path inside the repository is taken relative to its root."""
        from .gitsnap.context import read_context
        from .retrieve.query import DIRTY_WARNING
        from .retrieve.why import DEFAULT_LIMIT, why

        text = target.strip()
        if text.startswith("/"):
            try:
                text = Path(text).relative_to(self.root).as_posix()
            except ValueError:
                pass  # outside the repository: why() names it
        if memory is None:
            from .memory.audit import MemoryCitationIndex

            memory = MemoryCitationIndex(self.root, self.git, self.config)
        try:
            data = why(self.git, text, at=at, limit=DEFAULT_LIMIT if limit is None else limit, memory=memory)
        except RagitError as exc:  # `at="main"`: name its commit and the exact command (knowledge §5.1)
            raise self._exact_revision(exc, ["why", target], [("--limit", limit)]) from None
        if at == "HEAD" and read_context(self.git).dirty:
            data["warnings"].append(DIRTY_WARNING)
        return data

    def recall(self, goal: str, *, no_wait: bool = False):
        """The resume packet for ``goal`` (memory §3): working state plus snapshot hits, degrading
        to artifacts only when no snapshot is usable. Reuses this Repo's embedder and cache;
        ``no_wait`` skips waiting for a running ingest of HEAD (knowledge §5.7)."""
        from .memory.recall import check_goal, recall

        return recall(self.root, self.git, self.config, check_goal(goal), embedder=self._lazy_embedder(),
                      cache=self._cache, ingest_wait=0.0 if no_wait else None)

    def packet(self, payload: Any, *, evidence: tuple[str, ...] | list[str] = (), evidence_outside: bool = True):
        """A context packet from a request payload (context §2.4): ``retrieve`` runs a pack,
        ``evidence`` names files given as direct evidence (outside the repository only when
        ``evidence_outside``)."""
        from .context.bridge import assemble_packet

        return assemble_packet(self.root, self.git, payload, tuple(evidence), pack=self.pack_input,
                               evidence_outside=evidence_outside)


class _LazyEmbedder:
    """Defers loading the model until a query really needs it (after all readiness checks)."""

    def __init__(self, repo: Repo):
        self._repo = repo

    @property
    def id(self) -> str:
        if self._repo._embedder is not None:
            return self._repo._embedder.id
        from .embed import embedder_id_for

        return embedder_id_for(self._repo.config)

    @property
    def dimensions(self) -> int:
        return self._repo.embedder.dimensions

    def embed(self, texts):
        return self._repo.embedder.embed(texts)


def _model_tokens(config: Config, texts: list[str]) -> tuple[str, int, str | None]:
    """Estimated model tokens of the packet with the configured counter (informational)."""
    name = config["window"]["token_counter"]
    if name == "heuristic":
        # HeuristicCounter.count_text (chars // 4) without importing ragit.window.tokens (≈12 ms)
        # on every cold `context pack`
        return name, sum(len(t) // 4 for t in texts), None
    from .window.tokens import get_counter

    counter, warning = get_counter(name)  # the heuristic, id "heuristic", when it fell back
    return counter.id, sum(counter.count_text(t) for t in texts), warning
