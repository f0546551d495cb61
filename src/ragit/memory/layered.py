"""Layered memory assembly (memory §6): one dict merged from five tiers, plus enrichments.

An explicit facade: it runs only when a caller asks and is never wired into prompt assembly.
Tiers merge in a fixed order (identity, user profile, organization, project, session), later
ones overriding earlier ones, except that the project tier only overrides with non-empty
values. Each tier and enrichment is a loader callable; one that raises is logged, its
``_*_loaded`` flag set false, and assembly goes on: ``assemble`` never raises.

Loader contract: return a dict (a string for identity; a list of events for run history), or
``None`` when there is nothing to load (the tier's flag is then false, with no warning). A tier
with no loader at all gets no flag. The default loaders read the repository (``AGENTS.md``,
``.ragit/memory/working/current.json``, the session records) and take its root as parameter.
"""

from __future__ import annotations

import functools
import json
import logging
import time
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

from ragit import clock

log = logging.getLogger(__name__)

Loader = Callable[[], Any]

LONG_CONTEXT_KINDS = ("compaction_summary", "dream")
LONG_CONTEXT_LIMIT = 3
LONG_CONTEXT_CHARS = 500
RUN_HISTORY_LIMIT = 3
JOURNAL_RUNS = 3
JOURNAL_LEARNED = 5
PREVIOUS_RESULTS = 3
# _llm_summary: 280 characters of content shared 10 % / 25 % / 25 % / rest [ref].
MISSION_CHARS = 28
PROFILE_CHARS = 28
ORG_CHARS = 70
PROJECT_CHARS = 70
SESSION_CHARS = 112
PREV_ENTRY_OVERHEAD = 8
PREV_MIN_CUT = 20
DEFAULT_MAX_AGE_S = 3600.0


def _one_line(value: Any) -> str:
    return " ".join(value.split()) if isinstance(value, str) else ""


def _non_empty(value: Any) -> bool:
    return value is not None and value != "" and not (isinstance(value, (list, dict, tuple, set)) and not value)


# ------------------------------------------------------------------ tiers


def _apply_identity(context: dict[str, Any], loaded: Any) -> None:
    text = loaded.get("soul", loaded.get("text")) if isinstance(loaded, Mapping) else loaded
    if isinstance(text, str) and text.strip():
        context["_soul"] = text
        context["_soul_loaded"] = True
    else:
        context["_soul_loaded"] = False


def _apply_profile(context: dict[str, Any], loaded: Any) -> None:
    if not loaded:
        return  # no profile: the tier leaves no trace
    profile = {"summary": loaded} if isinstance(loaded, str) else _require_mapping(loaded)
    context["_user_profile_summary"] = str(profile.get("summary") or "")
    if profile.get("career_summary"):
        context["_career_summary"] = str(profile["career_summary"])
    context["_user_preferences"] = profile.get("preferences") or {}
    context["_user_profile_loaded"] = True


def _require_mapping(loaded: Any) -> Mapping[str, Any]:
    if not isinstance(loaded, Mapping):
        raise TypeError(f"tier loader returned {type(loaded).__name__}, expected a dict")
    return loaded


def _merge(flag: str, non_empty_only: bool) -> Callable[[dict[str, Any], Any], None]:
    def apply(context: dict[str, Any], loaded: Any) -> None:
        if loaded is None:
            context[flag] = False
            return
        for key, value in _require_mapping(loaded).items():
            if not non_empty_only or _non_empty(value):
                context[key] = value
        context[flag] = True

    return apply


_TIERS: tuple[tuple[str, str, Callable[[dict[str, Any], Any], None]], ...] = (
    ("identity", "_soul_loaded", _apply_identity),
    ("user_profile", "_user_profile_loaded", _apply_profile),
    ("organization", "_org_loaded", _merge("_org_loaded", non_empty_only=False)),
    ("project", "_project_loaded", _merge("_project_loaded", non_empty_only=True)),
    ("session", "_session_loaded", _merge("_session_loaded", non_empty_only=False)),
)


# ------------------------------------------------------------------ enrichments


def _age(at: Any) -> str:
    try:
        seconds = max(0, int((clock.now() - clock.parse_iso(str(at))).total_seconds()))
    except (TypeError, ValueError):
        return "unknown age"
    for unit, size in (("d", 86400), ("h", 3600), ("m", 60)):
        if seconds >= size:
            return f"{seconds // size}{unit} ago"
    return f"{seconds}s ago"


def render_event(event: Any) -> str:
    """``<name> completed|failed (<age>)``; a record's own ``status`` wins over ``success``."""
    if isinstance(event, str):
        return event
    event = _require_mapping(event)
    status = event.get("status") or ("completed" if event.get("success", True) else "failed")
    at = event.get("at") or event.get("ended_at") or event.get("timestamp")
    return f"{event.get('name', 'session')} {status} ({_age(at)})"


def _apply_environment(context: dict[str, Any], loaded: Any) -> None:
    if loaded is None:
        return
    env = _require_mapping(loaded)
    for source, target in (("project_type", "_project_type"), ("pkg_mgr", "_project_pkg_mgr"),
                           ("harnesses", "_harnesses"), ("harness_summary", "_harness_summary")):
        if env.get(source) is not None:
            context[target] = env[source]


def _apply_run_history(context: dict[str, Any], loaded: Any) -> None:
    """Events in chronological order; the last three are rendered newest first."""
    events = list(loaded or [])[-RUN_HISTORY_LIMIT:]
    if events:
        context["_run_history"] = " | ".join(render_event(e) for e in reversed(events))


def _apply_journal(context: dict[str, Any], loaded: Any) -> None:
    if loaded is None:
        return
    journal = _require_mapping(loaded)
    runs = list(journal.get("runs") or [])[-JOURNAL_RUNS:]
    if runs:
        context["_journal_summary"] = " | ".join(
            str(r.get("summary", "")) if isinstance(r, Mapping) else str(r) for r in runs
        )
    learned = list(journal.get("learned") or [])[-JOURNAL_LEARNED:]
    if learned:
        context["_journal_learned"] = learned


def _apply_vault(context: dict[str, Any], loaded: Any) -> None:
    summary = loaded.get("summary") if isinstance(loaded, Mapping) else loaded
    if isinstance(summary, str) and summary:
        context["_vault_summary"] = summary


_ENRICHMENTS: tuple[tuple[str, Callable[[dict[str, Any], Any], None]], ...] = (
    ("environment", _apply_environment),
    ("run_history", _apply_run_history),
    ("journal", _apply_journal),
    ("vault", _apply_vault),
)


def long_context_summary(artifacts: Any, session_id: str) -> str | None:
    """§6.1: this session's newest 3 compaction summaries / dreams, one line each, ``|``-joined."""
    rows = artifacts.list_context_artifacts(session_id, kinds=LONG_CONTEXT_KINDS, limit=LONG_CONTEXT_LIMIT)
    lines = []
    for row in rows[:LONG_CONTEXT_LIMIT]:
        content = str(row.get("content") or "").strip()
        content = content.replace("\r\n", " ").replace("\n", " ").replace("\r", " ")[:LONG_CONTEXT_CHARS]
        start, end = row.get("source_start_seq"), row.get("source_end_seq")
        seqs = f" seq={start}-{end}" if start is not None and end is not None else ""
        lines.append(f"{row.get('kind')}{seqs}: {content}")
    return " | ".join(lines) or None


# ------------------------------------------------------------------ summary


def _mission(soul: Any) -> str:
    for line in soul.splitlines() if isinstance(soul, str) else []:
        text = line.strip()
        if text and not text.startswith(("#", ">")):
            return text
    return ""


def _previous(entries: Any) -> str:
    """Previous results within the session share; a cut entry ends with ``…``.

    ``previous_results`` is newest first (as the session loader builds it), so the first three
    are the latest three.
    """
    remaining = SESSION_CHARS
    kept: list[str] = []
    for entry in list(entries)[:PREVIOUS_RESULTS] if isinstance(entries, (list, tuple)) else []:
        text = _one_line(entry.get("summary") if isinstance(entry, Mapping) else entry)
        if not text:
            continue
        cost = len(text) + PREV_ENTRY_OVERHEAD
        if cost <= remaining:
            kept.append(text)
            remaining -= cost
            continue
        if remaining > PREV_MIN_CUT:
            kept.append(text[: remaining - PREV_ENTRY_OVERHEAD - 1] + "…")
        break
    return "; ".join(kept)


def llm_summary(context: Mapping[str, Any]) -> str:
    """The ≤ 280-character briefing (``_llm_summary``): mission, profile, org, project, prev, long context."""
    parts = [
        ("Mission", _one_line(_mission(context.get("_soul")))[:MISSION_CHARS]),
        ("Profile", _one_line(context.get("_user_profile_summary"))[:PROFILE_CHARS]),
        ("Org", _one_line(context.get("organization_strategy"))[:ORG_CHARS]),
        ("Project", _one_line(context.get("project_goal"))[:PROJECT_CHARS]),
        ("Prev", _previous(context.get("previous_results"))),
        ("Long context", _one_line(context.get("_long_context_summary"))[:SESSION_CHARS]),
    ]
    return " | ".join(f"{label}: {text}" for label, text in parts if text)


# ------------------------------------------------------------------ assembly


def _guarded(label: str, apply: Callable[[dict[str, Any], Any], None], context: dict[str, Any], loader: Loader) -> bool:
    """Run ``apply(context, loader())``; log and report False instead of raising."""
    try:
        apply(context, loader())
    except Exception as exc:
        log.warning("layered memory: %s failed: %s", label, exc)
        return False
    return True


def _apply_long_context(context: dict[str, Any], summary: Any) -> None:
    if summary:
        context["_long_context_summary"] = summary


def _long_context_loader(artifacts: Any, root: str | Path | None, session_id: str) -> Loader:
    """Read long-context artifacts from ``artifacts``, or from the repository's store (closed after)."""
    def load() -> str | None:
        store = artifacts if artifacts is not None else _default_artifacts(root)
        try:
            return long_context_summary(store, session_id)
        finally:
            if store is not artifacts:
                store.close()

    return load


class ContextAssembler:
    """Builds layered-memory dicts and remembers when the caller last used one (freshness)."""

    def __init__(self) -> None:
        self._assembled_at: float | None = None

    def assemble(
        self,
        session_id: str,
        subject_id: str,
        tiers: Mapping[str, Loader] | None = None,
        artifacts: Any = None,
        *,
        enrichments: Mapping[str, Loader] | None = None,
        root: str | Path | None = None,
    ) -> dict[str, Any]:
        """Merge the tiers, enrich, inject long-context artifacts and stamp; never raises.

        ``tiers`` keys: identity, user_profile, organization, project, session;
        ``enrichments`` keys: environment, run_history, journal, vault; ``artifacts``: a session
        store. With ``root``, whatever is not supplied comes from the repository's defaults.
        """
        if root is not None:
            tiers = {**default_tiers(root), **(tiers or {})}
            enrichments = {**default_enrichments(root), **(enrichments or {})}
        tiers, enrichments = tiers or {}, enrichments or {}
        context: dict[str, Any] = {}
        for name, flag, apply in _TIERS:
            loader = tiers.get(name)
            if loader is not None and not _guarded(f"tier {name}", apply, context, loader):
                context[flag] = False
        for name, apply in _ENRICHMENTS:
            loader = enrichments.get(name)
            if loader is not None:
                _guarded(f"enrichment {name}", apply, context, loader)
        if artifacts is not None or root is not None:
            loader = _long_context_loader(artifacts, root, session_id)
            _guarded("long-context artifacts", _apply_long_context, context, loader)
        context["_assembled_at"] = clock.now_iso()
        context["_session_id"] = session_id
        context["_subject_id"] = subject_id
        context["_llm_summary"] = llm_summary(context)
        return context

    def mark_assembled(self, ts: float | None = None) -> None:
        """Record that the caller used an assembly at ``ts`` (epoch seconds; default now)."""
        self._assembled_at = time.time() if ts is None else float(ts)

    def is_fresh(self, max_age_s: float = DEFAULT_MAX_AGE_S) -> bool:
        """False before the first mark; true while the mark is younger than ``max_age_s``."""
        return self._assembled_at is not None and time.time() - self._assembled_at < max_age_s


def assemble(
    session_id: str,
    subject_id: str,
    tiers: Mapping[str, Loader] | None = None,
    artifacts: Any = None,
    *,
    enrichments: Mapping[str, Loader] | None = None,
    root: str | Path | None = None,
) -> dict[str, Any]:
    """One-shot :meth:`ContextAssembler.assemble`."""
    return ContextAssembler().assemble(
        session_id, subject_id, tiers, artifacts, enrichments=enrichments, root=root
    )


# ------------------------------------------------------------------ default loaders


def _config(root: str | Path) -> Any:
    """The root's configuration, parsed once per version of its file (each loader needs it)."""
    from ragit.config import CONFIG_RELPATH

    try:
        st = (Path(root) / CONFIG_RELPATH).stat()
        version: tuple[int, int] | None = (st.st_mtime_ns, st.st_size)
    except OSError:
        version = None
    return _parsed_config(str(Path(root)), version)


@functools.lru_cache(maxsize=8)
def _parsed_config(root: str, version: tuple[int, int] | None) -> Any:
    from ragit.config import load_config

    return load_config(Path(root))


def _read_json(path: Path) -> Any:
    return json.loads(path.read_text(encoding="utf-8"))


def load_identity(root: str | Path) -> str | None:
    """The repository's ``AGENTS.md`` (secret-masked), or None."""
    from ragit.security.masking import mask_text

    path = Path(root) / "AGENTS.md"
    return mask_text(path.read_text(encoding="utf-8")).text if path.is_file() else None


def load_project(root: str | Path) -> dict[str, Any] | None:
    """``current.json`` as ``{project_goal, constraints, open_loops, next_actions}``, or None."""
    path = Path(root) / _config(root).get("memory.working_dir") / "current.json"
    if not path.is_file():
        return None
    current = _read_json(path)
    return {
        "project_goal": current.get("goal"),
        "constraints": current.get("constraints") or [],
        "open_loops": current.get("openLoops") or [],
        "next_actions": current.get("nextActions") or [],
    }


def recent_session_records(root: str | Path, limit: int = PREVIOUS_RESULTS) -> list[dict[str, Any]]:
    """The newest ``limit`` session records (file names sorted descending); unreadable ones skipped."""
    directory = Path(root) / _config(root).get("memory.session_dir")
    if not directory.is_dir():
        return []
    records: list[dict[str, Any]] = []
    for path in sorted(directory.glob("*.json"), key=lambda p: p.name, reverse=True):
        try:
            record = _read_json(path)
        except (OSError, ValueError) as exc:
            log.warning("layered memory: skipping session record %s: %s", path.name, exc)
            continue
        if isinstance(record, dict):
            records.append(record)
        if len(records) == limit:
            break
    return records


def load_session(root: str | Path) -> dict[str, Any] | None:
    """``{previous_results: [summaries, newest first], session_goal}`` from the session records."""
    records = recent_session_records(root)
    if not records:
        return None
    return {
        "previous_results": [r.get("summary") for r in records if isinstance(r.get("summary"), str)],
        "session_goal": records[0].get("goal"),
    }


def load_run_history(root: str | Path) -> list[dict[str, Any]]:
    """The last three session records as events (oldest first): ``completed`` or ``open``."""
    events = []
    for record in reversed(recent_session_records(root, RUN_HISTORY_LIMIT)):
        loops = record.get("openLoops") or []
        still_open = any(isinstance(loop, dict) and loop.get("status") != "closed" for loop in loops)
        events.append({"name": record.get("goal") or record.get("sessionId"),
                       "status": "open" if still_open else "completed", "at": record.get("createdAt")})
    return events


# Lock files that identify a package manager, most specific first.
_LOCKFILES = (
    ("uv.lock", "uv"), ("poetry.lock", "poetry"), ("pdm.lock", "pdm"), ("Pipfile.lock", "pipenv"),
    ("pnpm-lock.yaml", "pnpm"), ("yarn.lock", "yarn"), ("bun.lockb", "bun"), ("bun.lock", "bun"),
    ("package-lock.json", "npm"), ("Cargo.lock", "cargo"), ("go.mod", "go"), ("Gemfile.lock", "bundler"),
    ("composer.lock", "composer"), ("requirements.txt", "pip"), ("pyproject.toml", "pip"),
    ("package.json", "npm"),
)


def load_environment(root: str | Path) -> dict[str, Any]:
    """``{project_type: project.mode, pkg_mgr}`` with the package manager read from lock files."""
    base = Path(root)
    pkg_mgr = next((name for lockfile, name in _LOCKFILES if (base / lockfile).is_file()), None)
    return {"project_type": _config(root).get("project.mode"), "pkg_mgr": pkg_mgr}


def default_tiers(root: str | Path) -> dict[str, Loader]:
    """ragit's tier loaders: identity ← AGENTS.md, project ← current.json, session ← records."""
    return {
        "identity": lambda: load_identity(root),
        "project": lambda: load_project(root),
        "session": lambda: load_session(root),
    }


def default_enrichments(root: str | Path) -> dict[str, Loader]:
    """ragit's enrichments: project environment and run history (no journal, no vault)."""
    return {"environment": lambda: load_environment(root), "run_history": lambda: load_run_history(root)}


def _default_artifacts(root: str | Path) -> Any:
    from ragit.sessions.store import SessionStore, session_db_path

    return SessionStore(session_db_path(root, _config(root)))
