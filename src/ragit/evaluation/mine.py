"""``eval mine``: file-localisation tasks from the history of HEAD (knowledge §21.1).

A commit whose message says what changed and whose diff modified a few source files is a
ready-made question with a known answer: index the parent, ask with the message, expect the
modified files. The filters below keep commits where that answer is meaningful (no merges,
releases or mechanical clean-ups; 1–3 non-test gold files), and the seeded hash selection makes
the same repository, options and seed give a byte-identical task file.
"""

from __future__ import annotations

import hashlib
import json
import posixpath
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..gitsnap.git import Git
from ..pathroles import SOURCE_EXTENSIONS, is_test_path  # tests are never gold, in any language
from .history import CommitInfo, candidates_at, log_commits, name_status, repo_name

DEFAULT_COUNT = 150
MAX_CHANGED_FILES = 8
MAX_GOLD = 3

# Subjects (first message line, case-insensitive) that mark a release or version bump.
RELEASE_PATTERNS = tuple(re.compile(p, re.IGNORECASE) for p in (
    r"^\s*(?:release[ds]?|releasing)\b",                       # "Release 2.0.1", "release version 1.0"
    r"^\s*(?:prepare|preparing)\b.*\b(?:release|v?\d+\.\d+)",  # "Prepare for 1.1 release"
    r"^\s*bump\b",                                           # "Bump version", "Bump werkzeug from 2 to 3"
    r"\bversion\s+bump\b",
    r"^\s*(?:set|update|change|increment)\s+(?:the\s+)?version\b",
    r"^\s*v?\d+(?:\.\d+)+\S*\s*$",                            # the subject is just a version
    r"^\s*(?:start|begin|back\s+to)\s+(?:version\s+)?v?\d+(?:\.\d+)+",
    r"^\s*(?:tag|tagged|tagging)\s+(?:version\s+|release\s+)?v?\d",
    r"^\s*chore\(release\)",
))

# Subjects that mark a typo, format, lint or whitespace-only change. Tool names only count next
# to a lint word or an "apply" verb, so the history of pylint, ruff or black themselves survives.
MECHANICAL_PATTERNS = tuple(re.compile(p, re.IGNORECASE) for p in (
    r"\btypos?\b", r"\bspelling\b", r"\bmisspell",
    r"^\s*(?:re)?format(?:ted|ting)?\s+(?:the\s+)?(?:code|files?|sources?|with|using)\b", r"\breformat",
    r"\bformatting\b", r"\bcode\s+style\b",
    r"\b(?:apply|applied|run|ran|with)\s+(?:black|isort|ruff|autopep8|yapf|prettier)\b",
    r"\b(?:flake8|pylint|ruff|pep\s?8|mypy)\s+(?:\w+\s+)?(?:warnings?|errors?|issues?|findings?|fix(?:es)?)\b",
    r"^\s*(?:fix(?:es|ed)?\s+)?lint(?:ing)?\b", r"\blint(?:ing)?\s+(?:fix(?:es)?|errors?|warnings?|issues?)\b",
    r"\bpre-commit(?:\.ci)?\b",
    r"\bwhite\s?space", r"\btrailing\s+(?:spaces?|newlines?)\b", r"\b(?:fix|fixed|fixes)\s+indent",
))

SKIP_REASONS = ("merge", "root_commit", "release", "typo_or_format", "too_many_files", "no_gold",
                "too_many_gold", "empty_query", "not_sampled")

_TRAILER = re.compile(r"^[A-Za-z0-9][A-Za-z0-9-]*(?: [A-Za-z0-9][A-Za-z0-9-]*){0,2}:\s")
_MERGE_LINE = re.compile(
    r"^\s*(?:Merge (?:pull request|branch|branches|remote-tracking branch|tag|commit)\b.*"
    r"|\(cherry picked from commit [0-9a-f]+\))\s*$", re.IGNORECASE | re.MULTILINE)
_REF_PAREN = re.compile(r"\(\s*(?:#|GH-)\d+\s*\)", re.IGNORECASE)
_REF = re.compile(r"(?<!&)(?:#|\bGH-)\d+\b", re.IGNORECASE)


def is_release(subject: str) -> bool:
    return any(p.search(subject) for p in RELEASE_PATTERNS)


def is_mechanical(subject: str) -> bool:
    return any(p.search(subject) for p in MECHANICAL_PATTERNS)


def clean_query(message: str) -> str:
    """The message without trailers, PR/issue references and merge boilerplate, one line."""
    text = message.replace("\r\n", "\n").replace("\r", "\n").strip()
    paragraphs = re.split(r"\n[ \t]*\n", text)
    if len(paragraphs) > 1:
        kept: list[str] = []
        in_trailer = False
        for line in paragraphs[-1].split("\n"):
            if _TRAILER.match(line):
                in_trailer = True
                continue
            if in_trailer and line[:1] in (" ", "\t"):
                continue  # continuation of a folded trailer value
            in_trailer = False
            kept.append(line)
        paragraphs[-1] = "\n".join(kept)
    text = "\n\n".join(paragraphs)
    text = _MERGE_LINE.sub(" ", text)
    text = _REF_PAREN.sub("", text)
    text = _REF.sub("", text)
    return " ".join(text.split())


def mentions_gold_name(query: str, gold: list[str]) -> bool:
    """The query names a gold file: its base name without extension as a whole word."""
    lowered = query.lower()
    for path in gold:
        stem = posixpath.splitext(posixpath.basename(path))[0].lower()
        if stem and re.search(rf"(?<!\w){re.escape(stem)}(?!\w)", lowered):
            return True
    return False


def default_extensions(config) -> list[str]:
    """Source-code extensions of every language ragit knows (:data:`ragit.pathroles.SOURCE_EXTENSIONS`).

    Docs (Markdown, reStructuredText, text) and data files are never gold for a code task, even
    though every text file is indexed by default. ``--ext`` chooses otherwise.
    """
    return sorted(SOURCE_EXTENSIONS)


def sample_key(seed: int, fix_commit: str) -> str:
    return hashlib.sha256(f"{seed}:{fix_commit}".encode()).hexdigest()


@dataclass
class MineResult:
    tasks: list[dict[str, Any]]
    scanned: int
    skipped: dict[str, int]
    warnings: list[str] = field(default_factory=list)


@dataclass(frozen=True)
class _Qualified:
    commit: CommitInfo
    gold: tuple[str, ...]
    query: str


def mine_tasks(root: Path, git: Git, config, *, count: int = DEFAULT_COUNT, extensions: list[str] | None = None,
               seed: int = 0) -> MineResult:
    """Scan every commit reachable from HEAD and keep at most ``count`` tasks (seeded)."""
    from ..gitsnap.blobs import BlobReader
    from ..gitsnap.refs import head_sha
    from ..ingest.discovery import matches_filter
    from ..security.masking import mask_text

    exts = set(extensions if extensions is not None else default_extensions(config))
    skipped = dict.fromkeys(SKIP_REASONS, 0)
    head = head_sha(git)
    commits = log_commits(git, head) if head else []

    pending: list[tuple[CommitInfo, str]] = []  # (commit, cleaned query)
    for c in commits:
        subject = c.message.strip().split("\n", 1)[0]
        if len(c.parents) > 1:
            reason = "merge"
        elif not c.parents:
            reason = "root_commit"
        elif is_release(subject):
            reason = "release"
        elif is_mechanical(subject):
            reason = "typo_or_format"
        else:
            # a commit message is repository text like any other: secrets in it are masked
            # before the task file is written (knowledge §10)
            pending.append((c, mask_text(clean_query(c.message)).text))
            continue
        skipped[reason] += 1

    diffs = name_status(git, [c.sha for c, _ in pending])
    qualified: list[_Qualified] = []
    with BlobReader(git) as reader:
        for c, query in pending:
            changes = diffs[c.sha]
            if len(changes) > MAX_CHANGED_FILES:
                reason = "too_many_files"
            else:
                maybe = [p for status, p in changes if status == "M" and not is_test_path(p)
                         and posixpath.splitext(p)[1] in exts and matches_filter(p, config) is not None]
                gold = sorted(candidates_at(git, c.parents[0], maybe, config, reader.read))
                if not gold:
                    reason = "no_gold"
                elif len(gold) > MAX_GOLD:
                    reason = "too_many_gold"
                elif not query:
                    reason = "empty_query"
                else:
                    qualified.append(_Qualified(c, tuple(gold), query))
                    continue
            skipped[reason] += 1

    qualified.sort(key=lambda q: sample_key(seed, q.commit.sha))
    skipped["not_sampled"] = max(0, len(qualified) - count)
    name = repo_name(git, root)
    tasks = [{
        "id": f"{name}@{q.commit.sha[:10]}",
        "repo": name,
        "commit": q.commit.parents[0],
        "fix_commit": q.commit.sha,
        "query": q.query,
        "gold": list(q.gold),
        "mentions_gold_name": mentions_gold_name(q.query, list(q.gold)),
    } for q in qualified[:count]]
    warnings = [] if tasks else ["no commit qualified as a task; the task file is empty"]
    return MineResult(tasks, len(commits), skipped, warnings)


def render_tasks(tasks: list[dict[str, Any]]) -> bytes:
    """JSON Lines, keys in task order, UTF-8 without escapes, one trailing newline per line."""
    return "".join(json.dumps(t, ensure_ascii=False) + "\n" for t in tasks).encode("utf-8")
