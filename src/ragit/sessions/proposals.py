"""Promotion proposals from recurring dreams (memory §9, optional).

When dreams of several sessions keep saying the same thing, it is probably durable knowledge
worth a reviewed document. Dreams are clustered by token Jaccard similarity; a cluster that
spans enough sessions becomes a ``memory promote`` payload under ``.ragit/memory/proposals/``
for a human to review. Nothing is promoted automatically, and LLM-free fallback dreams (which
are boilerplate, not extracted facts) are left out.
"""

from __future__ import annotations

import hashlib
import json
import re
from pathlib import Path
from typing import Any

from ragit.sessions.dreaming import DREAM_KIND, HEADINGS

JACCARD_THRESHOLD = 0.6
MIN_SESSIONS = 3
PROPOSALS_DIR = ".ragit/memory/proposals"
MAX_DREAMS = 500
TITLE_CHARS = 80
SUMMARY_CHARS = 400
_WORD = re.compile(r"[^\W_]+")
_HEADING_WORDS = frozenset(word for heading in HEADINGS for word in _WORD.findall(heading.lower()))


def tokens(text: str) -> frozenset[str]:
    """Lower-cased words of ``text``, without the words of the six dream headings."""
    return frozenset(_WORD.findall(text.lower())) - _HEADING_WORDS


def jaccard(a: frozenset[str], b: frozenset[str]) -> float:
    union = a | b
    return len(a & b) / len(union) if union else 0.0


def cluster(dreams: list[dict[str, Any]], threshold: float = JACCARD_THRESHOLD) -> list[list[dict[str, Any]]]:
    """Single-link clusters: dreams joined whenever a pair's Jaccard similarity ≥ ``threshold``."""
    parent = list(range(len(dreams)))

    def root(i: int) -> int:
        while parent[i] != i:
            parent[i] = parent[parent[i]]
            i = parent[i]
        return i

    sets = [tokens(d["content"]) for d in dreams]
    for i in range(len(dreams)):
        for j in range(i + 1, len(dreams)):
            if jaccard(sets[i], sets[j]) >= threshold:
                parent[root(j)] = root(i)
    groups: dict[int, list[dict[str, Any]]] = {}
    for i, dream in enumerate(dreams):
        groups.setdefault(root(i), []).append(dream)
    return list(groups.values())


def _section(content: str, heading: str) -> list[str]:
    """Bullet texts under ``## heading`` (``- none`` excluded)."""
    items: list[str] = []
    inside = False
    for line in content.splitlines():
        if line.startswith("## "):
            inside = line[3:].strip().lower() == heading.lower()
            continue
        text = line.strip()
        if inside and text.startswith(("- ", "* ")) and text[2:].strip().lower() != "none":
            items.append(text[2:].strip())
    return items


def candidate_for(members: list[dict[str, Any]]) -> dict[str, Any]:
    """A ``memory promote`` decision candidate describing one recurring cluster."""
    newest = max(members, key=lambda d: d["updated_at"])
    items = _section(newest["content"], "Decisions") or _section(newest["content"], "Durable Facts")
    sessions = sorted({d["session_id"] for d in members})
    refs = ", ".join(
        f"session={d['session_id']} seq={d['source_start_seq']}-{d['source_end_seq']}"
        for d in sorted(members, key=lambda d: (d["session_id"], d["artifact_id"]))
    )
    title = items[0][:TITLE_CHARS] if items else f"Recurring topic across {len(sessions)} sessions"
    return {
        "kind": "decision",
        "title": title,
        "summary": ("; ".join(items) or newest["content"].strip())[:SUMMARY_CHARS],
        "context": f"Recurring in the dreams of {len(sessions)} sessions ({refs}). "
                   "Proposed by dreaming for human review; nothing was promoted.",
        "tags": ["dreaming"],
    }


def propose_promotions(
    store: Any,
    root: str | Path,
    *,
    threshold: float = JACCARD_THRESHOLD,
    min_sessions: int = MIN_SESSIONS,
) -> list[Path]:
    """Write one proposal file per recurring cluster; return the files written (stable names)."""
    from ragit.fsutil import atomic_write_text
    from ragit.security.masking import mask_value

    dreams = [
        d for d in store.list_context_artifacts(None, kinds=(DREAM_KIND,), limit=MAX_DREAMS)
        if d["metadata"].get("llm_used") is True
    ]
    written: list[Path] = []
    for members in cluster(dreams, threshold):
        if len({d["session_id"] for d in members}) < min_sessions:
            continue
        key = hashlib.sha1("\n".join(sorted(d["artifact_id"] for d in members)).encode()).hexdigest()[:12]
        target = Path(root) / PROPOSALS_DIR / f"dream-{key}.json"
        payload = mask_value({"promotionCandidates": [candidate_for(members)]})[0]
        atomic_write_text(target, json.dumps(payload, indent=2, ensure_ascii=False) + "\n")
        written.append(target)
    return sorted(written)
