"""`.ragit/config.toml`: defaults, typed loading, deterministic writing, the config hash.

Reads never create the file; a missing file means "all defaults" (knowledge §3). Unknown
sections and keys are preserved on rewrite.
"""

from __future__ import annotations

import copy
import hashlib
import json
import math
from pathlib import Path
from typing import Any

from .errors import RagitError, input_invalid

CONFIG_RELPATH = ".ragit/config.toml"

# Every language by default (knowledge §3, §8.1): any candidate that is not a doc is code, chunked
# by its grammar or in line windows; generated, vendored and minified files are skipped
# (ragit.ingest.skips).
CODE_GLOBS = ["**"]
DOC_GLOBS = ["**/*.md", "**/*.mdx", "**/*.rst", "**/*.adoc", "**/*.txt"]

DEFAULTS: dict[str, dict[str, Any]] = {
    "project": {"name": "ragit-project", "default_branch": "main", "mode": "auto"},
    "init": {"strategy": "balanced", "merge_existing": True},
    "docs": {
        "entrypoint": "RAGIT.md",
        "workspace_map": "docs/workspace-map.md",
        "ingestion_policy": "docs/ragit/ingestion-policy.md",
        "known_gaps": "docs/known-gaps.md",
        "adr_dir": "docs/adr",
    },
    # knowledge §2.2, §3: the backend and, for postgres, the DSN (RAGIT_DATABASE_URL wins) and the
    # key of this repository in the shared database (empty: its root commit, ragit.store)
    "store": {"backend": "sqlite", "dsn": "", "repository_id": ""},
    "storage": {"backend": "sqlite", "manifest_dir": ".ragit/manifest", "store_dir": ".ragit/store"},
    "embedding": {"provider": "code-static", "model": "code-static-256", "dimensions": 256, "model_path": ""},
    "ingest": {
        "supported_types": ["adr", "prd", "srs", "spec", "plan", "ddd", "glossary", "pbd", "doc", "code"],
        "type_detection": "frontmatter-first",
        "doc_globs": list(DOC_GLOBS),
        "code_globs": list(CODE_GLOBS),
        "include": ["**"],
        "exclude": [
            "**/.git/**", "**/.ragit/**", "**/node_modules/**", "**/dist/**", "**/coverage/**",
            "**/.next/**", "**/build/**", "**/vendor/**", "**/*.min.js",
        ],
        "respect_gitignore": False,
        "max_file_bytes": 1048576,
        "chunker_version": "1",
        # worker processes of a large ingest (ragit.ingest.workers): -1 one per core, 0 or 1 none
        "workers": -1,
    },
    "hooks": {"post_commit": True, "post_merge": True, "post_checkout": True},
    # --scope history: ingest keeps the history index (commit messages, masked hunks) only when on;
    # its first build reads the last 1,000 commits, about as much CPU as a full ingest
    "history": {"index": False},
    "retrieval": {
        "alpha": 0.7,
        "top_k": 5,
        "keyword_enabled": True,
        "keyword_normalization": "max",
        "vector_normalization": "file_blend",
        "passage_words": 32,
        "query_term_repeats": 3,
        "rerank": True,
        "cochange": True,
        # the code re-rank's per-repository knobs (ragit.retrieve.rerank.weights_from_config; `ragit tune`)
        "rerank_definition": 1.0,
        "rerank_path": 1.0,
        "rerank_file": 0.2,
        "rerank_role": 0.5,
        "ingest_wait_seconds": 10,  # commit-then-read (knowledge §5.7); 0 = never wait
    },
    "memory": {
        "corpus_dir": "docs/memory",
        "session_dir": ".ragit/memory/sessions",
        "working_dir": ".ragit/memory/working",
        "artifacts_dir": ".ragit/artifacts",
        "recall_top_k": 8,
    },
    "security": {"secret_masking": True},
    "output": {"format": "both", "language": "en"},
    "window": {
        "tool_offload_threshold": 15000,
        "tool_offload_ttl_hours": 4.0,
        "max_tool_result_tokens": 25000,
        "observation_mask_keep_rounds": 3,
        "offload_dir": ".ragit/cache/tool-offload",
        "token_counter": "heuristic",
        "recall_tool_name": "tool_result_recall",  # the MCP tool (context D.5)
    },
    "sessions": {"db_path": ".ragit/sessions/sessions.db", "dreaming": True},
    "gate": {"mode": "warn"},  # the edit-time evidence gate (knowledge §22.4): warn | block
}

# Enumerated string values; a value outside its set is rejected on load and on set.
ENUMS: dict[str, tuple[str, ...]] = {
    "project.mode": ("auto", "empty", "existing", "monorepo", "docs-heavy"),
    "init.strategy": ("minimal", "balanced", "full"),
    "store.backend": ("sqlite", "postgres"),
    "storage.backend": ("sqlite", "postgres"),  # the older key, read as an alias of store.backend
    "embedding.provider": ("wordllama", "minilm-static", "code-static", "placeholder"),
    "ingest.type_detection": ("frontmatter-first",),
    "ingest.chunker_version": ("1", "2"),
    "retrieval.keyword_normalization": ("max",),
    "retrieval.vector_normalization": ("file_blend", "none"),
    "output.format": ("text", "json", "both"),
    "output.language": ("en",),
    "window.token_counter": ("heuristic", "o200k_base", "cl100k_base"),
    "gate.mode": ("warn", "block"),
}

FORMAT_ALIASES = {"markdown": "text", "table": "text"}

_POSITIVE_INTS = {"retrieval.top_k", "retrieval.query_term_repeats", "memory.recall_top_k", "embedding.dimensions", "ingest.max_file_bytes"}


_UNHASHED_INGEST = frozenset({"chunker_version", "workers"})


class Config:
    """Loaded configuration: ``cfg["retrieval"]["alpha"]`` or ``cfg.get("retrieval.alpha")``."""

    def __init__(self, data: dict[str, dict[str, Any]], path: Path | None = None, exists: bool = False):
        self.data = data
        self.path = path
        self.exists = exists

    def __getitem__(self, section: str) -> dict[str, Any]:
        return self.data[section]

    def get(self, dotted: str) -> Any:
        section, key = dotted.split(".", 1)
        return self.data[section][key]

    def config_hash(self) -> str:
        """``sha256:`` + hex of the canonical JSON of ingest settings and the masking switch.

        ``ingest.chunker_version`` is left out: manifests carry it as a parameter of its own;
        ``ingest.workers`` too: it changes how an ingest runs, never what it stores.
        """
        ingest = {k: v for k, v in self.data["ingest"].items() if k not in _UNHASHED_INGEST}
        obj = {"ingest": ingest, "security": {"secret_masking": self.data["security"]["secret_masking"]}}
        canonical = json.dumps(obj, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
        return "sha256:" + hashlib.sha256(canonical.encode("utf-8")).hexdigest()


def defaults() -> Config:
    return Config(copy.deepcopy(DEFAULTS))


def _check_type(dotted: str, default: Any, value: Any) -> str | None:
    """Return a reason string when ``value`` does not have the type of ``default``."""
    if isinstance(default, bool):
        return None if isinstance(value, bool) else "expected boolean"
    if isinstance(default, int):
        return None if isinstance(value, int) and not isinstance(value, bool) else "expected integer"
    if isinstance(default, float):
        ok = isinstance(value, (int, float)) and not isinstance(value, bool)
        return None if ok else "expected number"
    if isinstance(default, str):
        if not isinstance(value, str):
            return "expected string"
        allowed = ENUMS.get(dotted)
        if allowed and value not in allowed:
            return f"expected one of {', '.join(allowed)}"
        return None
    if isinstance(default, list):
        if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
            return "expected list of strings"
        return None
    return None


def load_config(root: Path) -> Config:
    """Load ``<root>/.ragit/config.toml`` over the defaults; never creates anything."""
    path = Path(root) / CONFIG_RELPATH
    data = copy.deepcopy(DEFAULTS)
    if not path.is_file():
        return Config(data, path, exists=False)
    import tomllib  # only when there is a file to parse

    try:
        raw = tomllib.loads(path.read_text(encoding="utf-8"))
    except (tomllib.TOMLDecodeError, UnicodeDecodeError) as exc:
        raise RagitError(
            "CONFIG_INVALID", f"{CONFIG_RELPATH} is not valid TOML: {exc}",
            {"path": CONFIG_RELPATH, "reason": "invalid_toml"}, "ragit doctor",
        ) from exc
    for section, table in raw.items():
        if not isinstance(table, dict):
            data[section] = table  # preserved as-is (unknown top-level value)
            continue
        target = data.setdefault(section, {})
        for key, value in table.items():
            dotted = f"{section}.{key}"
            if section in DEFAULTS and key in DEFAULTS[section]:
                reason = _check_type(dotted, DEFAULTS[section][key], value)
                if reason:
                    raise RagitError(
                        "CONFIG_INVALID", f"{dotted}: {reason}",
                        {"path": CONFIG_RELPATH, "reason": f"{dotted}: {reason}"}, "ragit doctor",
                    )
                if isinstance(DEFAULTS[section][key], float):
                    value = float(value)
            target[key] = value
    stated = raw.get("store") if isinstance(raw.get("store"), dict) else {}
    older = raw.get("storage") if isinstance(raw.get("storage"), dict) else {}
    if "backend" not in stated and "backend" in older:  # storage.backend is an alias (knowledge §3)
        data["store"]["backend"] = older["backend"]
    return Config(data, path, exists=True)


def store_backend(config: Config) -> str:
    """``store.backend`` (``storage.backend`` is read as its alias when only it is set)."""
    store = config.data.get("store")
    if isinstance(store, dict) and store.get("backend"):
        return str(store["backend"])
    return str(config.data.get("storage", {}).get("backend", "sqlite"))


# ---------------------------------------------------------------- writing

def _toml_string(value: str) -> str:
    return json.dumps(value, ensure_ascii=False).replace("\x7f", "\\u007f")


def _toml_value(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        return repr(value) if math.isfinite(value) else ("nan" if math.isnan(value) else ("inf" if value > 0 else "-inf"))
    if isinstance(value, str):
        return _toml_string(value)
    if isinstance(value, list):
        return "[" + ", ".join(_toml_value(v) for v in value) + "]"
    if isinstance(value, dict):
        return "{ " + ", ".join(f"{_toml_key(k)} = {_toml_value(v)}" for k, v in value.items()) + " }"
    raise TypeError(f"cannot write {type(value).__name__} to TOML")


def _toml_key(key: str) -> str:
    if key and all(c.isalnum() and c.isascii() or c in "-_" for c in key):
        return key
    return _toml_string(key)


def render_config(config: Config) -> str:
    """Deterministic TOML: known sections in default order, then unknown ones."""
    sections = list(DEFAULTS) + [s for s in config.data if s not in DEFAULTS]
    blocks = []
    for section in sections:
        table = config.data.get(section)
        if not isinstance(table, dict):
            continue
        keys = list(DEFAULTS.get(section, {})) + [k for k in table if k not in DEFAULTS.get(section, {})]
        lines = [f"[{_toml_key(section)}]"]
        lines += [f"{_toml_key(k)} = {_toml_value(table[k])}" for k in keys if k in table]
        blocks.append("\n".join(lines))
    return "\n\n".join(blocks) + "\n"


def write_config(root: Path, config: Config) -> None:
    from .fsutil import atomic_write_text

    atomic_write_text(Path(root) / CONFIG_RELPATH, render_config(config))


# ---------------------------------------------------------------- set / get

def parse_key(key: str, command: str) -> tuple[str, str]:
    parts = key.strip().split(".")
    if len(parts) != 2 or not all(parts):
        raise input_invalid("key", "invalid_format", f"config key must be section.key, got {key!r}", command=command)
    return parts[0], parts[1]


def lookup(config: Config, key: str, command: str) -> tuple[str, str]:
    section, name = parse_key(key, command)
    table = config.data.get(section)
    if not isinstance(table, dict) or name not in table:
        raise RagitError("CONFIG_KEY_UNKNOWN", f"unknown config key {key!r}", {"key": key}, "ragit describe config set")
    return section, name


def coerce_value(dotted: str, current: Any, raw: str) -> Any:
    """Parse the CLI string ``raw`` into the type of ``current``, with range checks."""
    cmd = "config set"

    def bad(reason: str, msg: str, **extra: Any) -> RagitError:
        return input_invalid("value", reason, f"{dotted}: {msg}", command=cmd, value=raw, **extra)

    if isinstance(current, bool):
        if raw.strip() not in ("true", "false"):
            raise bad("not_boolean", "expected true or false")
        return raw.strip() == "true"
    if isinstance(current, list):
        text = raw.strip()
        if text.startswith("["):
            try:
                parsed = json.loads(text)
            except json.JSONDecodeError:
                raise bad("invalid_json", "expected a JSON array of strings") from None
            if not isinstance(parsed, list) or not all(isinstance(v, str) for v in parsed):
                raise bad("not_string", "expected a JSON array of strings")
            items = [v.strip() for v in parsed]
        else:
            items = [v.strip() for v in text.split(",")]
        return [v for v in items if v]
    if isinstance(current, (int, float)):
        text = raw.strip()
        try:
            number: int | float = int(text) if isinstance(current, int) else float(text)
        except ValueError:
            try:
                number = float(text)
            except ValueError:
                raise bad("not_integer" if isinstance(current, int) else "invalid_format", "expected a number") from None
            if isinstance(current, int):
                if not number.is_integer():
                    raise bad("not_integer", "expected an integer")
                number = int(number)
        if isinstance(number, float) and not math.isfinite(number):
            raise bad("out_of_range", "expected a finite number")
        if dotted in ("retrieval.alpha", "retrieval.rerank_role") and not 0 <= number <= 1:
            raise bad("out_of_range", "must be within [0, 1]")
        if dotted in _POSITIVE_INTS and number <= 0:
            raise bad("out_of_range", "must be a positive integer")
        if number < 0:
            raise bad("out_of_range", "must be >= 0")
        return number
    value = raw
    if dotted == "output.format":
        value = FORMAT_ALIASES.get(raw.strip().lower(), raw.strip().lower())
    allowed = ENUMS.get(dotted)
    if allowed and value not in allowed:
        raise bad("not_one_of", f"expected one of {', '.join(allowed)}", allowed=list(allowed))
    return value
