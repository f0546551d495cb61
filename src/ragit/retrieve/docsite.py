"""Docs-site configuration: a stage after the code re-rank and co-change (ragit.retrieve.rerank,
ragit.retrieve.cochange_boost).

A docs page is never edited alone when the change is to the site: adding, removing or moving a
page registers it in the site's navigation (Docusaurus ``sidebars.js``), and links, footers and
edit buttons live in the site's configuration (``docusaurus.config.js``, ``mkdocs.yml``, Sphinx's
``docs/conf.py``). Those files share few words with the question ("Add "History of Redux" page"),
so they rank far down (redux's ``website/sidebars.js``: fused file rank 91–184). A user who asks
for docs work expects them next to the pages.

Rule: when the question is about the docs — its first line asks for docs (``doc``, ``docs``,
``documentation`` …), or the best file of the ranking is a docs page, or the first line asks for a
site's pages (``page``, ``pages``, ``sidebar``: the ``site`` ask of
:func:`ragit.retrieve.rerank.read_question`) and a docs page ranks among the first ten files — each
docs-site configuration file of the snapshot (:func:`is_site_config`) that is not already among
the first ``after`` files is raised to just below the ``after``-th file. A raise only: a file
already above stays where it is, and the first ``after`` files never move. The candidate that
stands for a file is its best-scored chunk; a file outside the re-rank pool is brought in by
the caller (on a snapshot large enough for the approximate path, only where its rows were
scored). ``--explain`` shows the raise as the additive factor ``docsite``. Measured on every
development set in docs/evaluation.md ("Session 12").
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache
from operator import indexOf
from typing import TYPE_CHECKING, Callable, Iterable, Mapping, Sequence

from ..arrays import members
from ..pathroles import path_role
from .rerank import asked_roles, read_question

if TYPE_CHECKING:  # pragma: no cover
    import numpy as np

    from ..store.base import Store

# File names that configure a docs site whatever directory holds them: Docusaurus (v2 and v1's
# ``siteConfig.js``), MkDocs, Jupyter Book, mdBook, Antora.
SITE_FILES = frozenset({
    "sidebars.js", "sidebars.ts", "sidebars.json", "sidebars.cjs", "sidebars.mjs",
    "docusaurus.config.js", "docusaurus.config.ts", "docusaurus.config.mjs", "docusaurus.config.cjs",
    "siteConfig.js", "mkdocs.yml", "mkdocs.yaml", "_toc.yml", "_toc.yaml", "book.toml", "antora.yml",
    "antora-playbook.yml",
})
# Sphinx's configuration counts in a docs directory only (``docs/conf.py``, ``doc/source/conf.py``).
SPHINX_CONF = "conf.py"
_DOC_DIRS = frozenset({"doc", "docs", "documentation"})

# A test's or an example's site (sphinx's ``tests/roots/test-setup/doc/conf.py``) is not the project's.
_NOT_THE_SITE = frozenset({"test", "fixture", "example", "benchmark"})

# Every file name a site configuration can have (what a store is asked for).
SITE_NAMES = tuple(sorted(SITE_FILES | {SPHINX_CONF}))

# "page" asks for a site's pages only when a docs page ranks among this many first files.
PAGES_WITHIN = 10

# A raised file stays this fraction below the file it ranks after (the engine breaks ties of
# final scores by path, which must not put it above that file).
CAP_GAP = 1e-6


@dataclass(frozen=True)
class DocsiteWeights:
    """The stage's constant (measured on the development sets, then fixed)."""

    after: int = 3  # the site configuration ranks right below the first ``after`` files (0: off)


@lru_cache(maxsize=4096)
def is_site_config(path: str) -> bool:
    """``path`` configures the project's docs site: a name of :data:`SITE_FILES`, or ``conf.py``
    under a ``doc``/``docs``/``documentation`` directory (directly or in its ``source/``); never
    under a test, fixture, example or benchmark directory."""
    parts = path.split("/")
    name = parts[-1]
    if (name not in SITE_FILES and name != SPHINX_CONF) or path_role(path) in _NOT_THE_SITE:
        return False
    if name in SITE_FILES:
        return True
    if len(parts) < 2:
        return False
    parent = parts[-2].lower()
    return parent in _DOC_DIRS or (parent == "source" and len(parts) >= 3 and parts[-3].lower() in _DOC_DIRS)


def asks_for_site(question: str, first_paths: Sequence[str], candidates: Iterable[str] = ()) -> bool:
    """The question is docs work: its first line asks for docs, or the best file of the ranking
    (``first_paths[0]``; the ranking's first files, best first) is a docs page, or the first line
    asks for a site's pages and a docs page ranks among the first :data:`PAGES_WITHIN` files ("page"
    alone also names pagination or memory pages: a code-only index never holds a docs page). A
    word that names a source directory of the ``candidates`` (``pages/`` of a web app) asks for
    nothing (:func:`ragit.retrieve.rerank.asked_roles`)."""
    asks = asked_roles(read_question(question), candidates)
    if "doc" in asks or (first_paths and path_role(first_paths[0]) == "doc"):
        return True
    return "site" in asks and any(path_role(p) == "doc" for p in first_paths[:PAGES_WITHIN])


def _may_ask(question: str, paths: Sequence[str], scores: Sequence[float]) -> bool:
    """False when :func:`asks_for_site` is certainly false for a pool (``paths`` and ``scores`` by
    candidate): a first line that asks neither for docs nor for pages leaves only "the best file
    is a docs page", and the best file is that of the first best-scored candidate, found without
    ranking the pool (sorting ~200 candidates cost most of the stage on a question that is no
    docs work). Scores with a NaN (whose order a sort does not define) always go the long way."""
    asks = asked_roles(read_question(question), paths)
    if "doc" in asks or "site" in asks:
        return True
    total = sum(scores)
    if total != total:
        return True
    return path_role(paths[indexOf(scores, max(scores))]) == "doc"  # (the first best, as a stable sort has it)


def _first_files(order: Sequence[int], paths: Sequence[str], count: int) -> list[str]:
    """The first ``count`` distinct files of a ranking (``order`` indexes ``paths``, best first)."""
    out: list[str] = []
    for i in order:
        if paths[i] not in out:
            out.append(paths[i])
            if len(out) == count:
                break
    return out


def site_raises(question: str, order: Sequence[int], scores: "Sequence[float] | Mapping[int, float]",
                paths: Sequence[str], site: Mapping[str, int],
                weights: DocsiteWeights = DocsiteWeights()) -> dict[int, float]:
    """The stage's raises: the new score of each candidate it raises. ``order`` ranks the
    candidates (indices into ``paths`` and ``scores``), best first; ``site`` gives each docs-site
    configuration file of the snapshot the candidate that stands for it (ranked or not: an index
    ``order`` lacks is a candidate the ranking left out, whose score is taken as ``-inf``)."""
    after = weights.after
    if after <= 0 or not site or not order or not asks_for_site(question, _first_files(order, paths, PAGES_WITHIN), paths):
        return {}
    first: list[str] = []  # the first ``after`` files of the ranking
    ceiling = 0.0
    seen: set[str] = set()
    for i in order:
        p = paths[i]
        if p not in seen:
            seen.add(p)
            first.append(p)
            ceiling = scores[i]
            if len(first) == after:
                break
    ceiling -= CAP_GAP * abs(ceiling)
    ranked = set(order)
    raised: dict[int, float] = {}
    for p in sorted(site):
        if p in first:
            continue
        i = site[p]
        own = scores[i] if i in ranked else float("-inf")
        if own < ceiling:
            raised[i] = ceiling
    return raised


def site_rows(store: "Store", sha: str) -> dict[int, str]:
    """Row id → path of the snapshot's rows of docs-site configuration files (the store lists
    the rows of files named like one, :func:`is_site_config` keeps the real ones)."""
    return {rowid: path for rowid, path in store.rows_named(sha, SITE_NAMES).items() if is_site_config(path)}


def pool_site_raises(question: str, paths: Sequence[str], adjusted: Sequence[float], store: "Store", sha: str,
                     rowids: "np.ndarray", retrieval: "np.ndarray", weights: DocsiteWeights = DocsiteWeights(),
                     kept: "Callable[[], dict[int, str]] | None" = None) -> tuple[list[int], list[str], dict[int, float]]:
    """The stage on a ranked pool (``paths`` and ``adjusted`` scores of its candidates, by pool
    index): (snapshot positions of the rows to add to the pool, their paths, the new score of each
    raised candidate, by pool index, the added rows numbered after the pool's). A configuration
    file already in the pool stands by its best candidate; one outside by its best-scored row of
    the snapshot (``rowids`` ascending, fused ``retrieval`` per position, ``-inf`` where a filter
    rejects the row), appended. The store is read only for a question about the docs (and once by
    a warm process, whose ``kept`` gives :func:`site_rows` of the snapshot as read before)."""
    import numpy as np

    n = len(paths)
    if weights.after <= 0 or not n or not _may_ask(question, paths, adjusted):
        return [], [], {}
    order = sorted(range(n), key=adjusted.__getitem__, reverse=True)  # stable: ties keep pool order
    if not asks_for_site(question, _first_files(order, paths, PAGES_WITHIN), paths):
        return [], [], {}
    found = kept() if kept is not None else site_rows(store, sha)
    if not found:
        return [], [], {}
    best: dict[str, int] = {}  # each file outside the pool → the snapshot position of its best row
    pooled = set(paths)
    ids = np.fromiter(sorted(found), dtype=np.int64, count=len(found))
    covered, at = members(ids, rowids)
    for rowid, position, scored in zip(ids.tolist(), at.tolist(), covered.tolist()):
        path = found[rowid]
        if path in pooled or not scored:
            continue  # in the pool already, or a row the scores do not cover
        if retrieval[position] == -np.inf:
            continue  # a filter rejects it
        held = best.get(path)
        if held is None or retrieval[position] > retrieval[held]:
            best[path] = position
    configs = set(found.values())
    site: dict[str, int] = {}
    for j in order:  # a file in the pool: its best candidate
        if paths[j] in configs and paths[j] not in site:
            site[paths[j]] = j
    added = sorted(best.values())
    added_paths = [found[int(rowids[p])] for p in added]
    for k, path in enumerate(added_paths):  # a file outside: an unranked candidate, always raised
        site[path] = n + k
    raised = site_raises(question, order, adjusted, list(paths) + added_paths, site, weights)
    return added, added_paths, raised
