"""Step 2 and 3 of init: scan the working tree, then pick the repository mode (knowledge §13).

The scan reads the working tree, not a commit: init runs before anything is committed or
indexed. Inside Git the file list is Git's own (tracked + untracked, not ignored) so ignored
trees such as virtualenvs never skew the counts; outside Git the tree is walked.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..config import Config
from ..ingest.globs import GlobSet
from .gitctx import list_worktree_files

CI_GLOBS = (".github/workflows/*.yml", ".github/workflows/*.yaml")
INFRA_GLOBS = (
    "Dockerfile", "Dockerfile.*", "docker-compose*.yml", "docker-compose*.yaml",
    "k8s/**/*.yml", "k8s/**/*.yaml", "infra/**/*.tf", "terraform/**/*.tf",
)
BUILD_CANDIDATES = (
    "package.json", "pnpm-workspace.yaml", "turbo.json", "nx.json", "lerna.json", "tsconfig.json",
    "Dockerfile", "docker-compose.yml", "docker-compose.yaml", "pyproject.toml",
)
WORKSPACE_FILES = ("pnpm-workspace.yaml", "turbo.json", "nx.json", "lerna.json")
_PACKAGE_MANAGER_PREFIXES = (("pnpm@", "pnpm"), ("npm@", "npm"), ("yarn@", "yarn"), ("bun@", "bun"))
_LOCKFILES = (
    ("pnpm-lock.yaml", "pnpm"), ("package-lock.json", "npm"), ("yarn.lock", "yarn"),
    ("bun.lock", "bun"), ("bun.lockb", "bun"),
    ("uv.lock", "uv"), ("poetry.lock", "poetry"), ("Pipfile.lock", "pipenv"),
)
_FRAMEWORKS = (
    ("next", "Next.js"), ("react", "React"), ("expo", "Expo"), ("turbo", "Turborepo"),
    ("nx", "Nx"), ("vitest", "Vitest"), ("typescript", "TypeScript"),
)
_LANGUAGES = {
    ".py": "Python", ".pyi": "Python",
    ".ts": "TypeScript", ".tsx": "TypeScript", ".cts": "TypeScript", ".mts": "TypeScript",
    ".js": "JavaScript", ".jsx": "JavaScript", ".mjs": "JavaScript", ".cjs": "JavaScript",
    ".rs": "Rust", ".go": "Go", ".java": "Java", ".kt": "Kotlin", ".swift": "Swift",
    ".rb": "Ruby", ".php": "PHP",
    ".c": "C/C++", ".cc": "C/C++", ".cpp": "C/C++", ".h": "C/C++", ".hpp": "C/C++",
}
EXISTING_DOCS_LIMIT = 20


@dataclass(frozen=True)
class Scan:
    """What the working tree holds; ``doc_paths`` is the full list behind ``docFileCount``."""

    git_detected: bool
    package_manager: str | None
    languages: list[str]
    frameworks: list[str]
    workspace_files: list[str]
    apps: list[str]
    packages: list[str]
    code_count: int
    doc_paths: list[str]
    ci_files: list[str]
    infra_files: list[str]
    build_files: list[str]

    @property
    def monorepo(self) -> bool:
        return bool(self.workspace_files or self.apps or self.packages)

    @property
    def doc_count(self) -> int:
        return len(self.doc_paths)

    def to_data(self) -> dict[str, Any]:
        """The ``scan`` object of the init JSON, in spec key order."""
        return {
            "gitDetected": self.git_detected,
            "packageManager": self.package_manager,
            "languages": self.languages,
            "frameworks": self.frameworks,
            "monorepo": self.monorepo,
            "workspaceFiles": self.workspace_files,
            "apps": self.apps,
            "packages": self.packages,
            "codeFileCount": self.code_count,
            "docFileCount": self.doc_count,
            "existingDocs": self.doc_paths[:EXISTING_DOCS_LIMIT],
            "ciFiles": self.ci_files,
            "infraFiles": self.infra_files,
            "buildFiles": self.build_files,
        }


def _walk_files(root: Path, exclude: GlobSet) -> list[str]:
    """Every regular file under ``root`` outside Git, pruning excluded and dot directories.

    ``.github`` is kept because CI workflows live there; other dot directories can hold
    neither candidates (dot segments never are) nor anything else the scan reports.
    """
    found: list[str] = []
    for current, dirs, files in os.walk(root):
        rel_dir = Path(current).relative_to(root).as_posix()
        prefix = "" if rel_dir == "." else rel_dir + "/"
        kept = []
        for name in dirs:
            rel = prefix + name
            if name.startswith(".") and rel != ".github" and not rel.startswith(".github/"):
                continue
            if exclude.matches(rel + "/x"):  # every file inside would be excluded
                continue
            kept.append(name)
        dirs[:] = kept
        found.extend(prefix + name for name in files)
    return sorted(found)


def _is_regular(root: Path, rel: str) -> bool:
    path = root / rel
    return path.is_file() and not path.is_symlink()


def _child_dirs(root: Path, parent: str) -> list[str]:
    base = root / parent
    if not base.is_dir():
        return []
    return sorted(
        f"{parent}/{entry.name}" for entry in base.iterdir()
        if entry.is_dir() and not entry.name.startswith(".")
    )


def _read_package_json(root: Path) -> dict[str, Any]:
    try:
        parsed = json.loads((root / "package.json").read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    return parsed if isinstance(parsed, dict) else {}


def _package_manager(root: Path, package_json: dict[str, Any]) -> str | None:
    declared = package_json.get("packageManager")
    if isinstance(declared, str):
        for prefix, name in _PACKAGE_MANAGER_PREFIXES:
            if declared.startswith(prefix):
                return name
    for lockfile, name in _LOCKFILES:
        if (root / lockfile).is_file():
            return name
    return None


def _frameworks(package_json: dict[str, Any]) -> list[str]:
    deps: set[str] = set()
    for key in ("dependencies", "devDependencies"):
        table = package_json.get(key)
        if isinstance(table, dict):
            deps.update(table)
    return [label for dep, label in _FRAMEWORKS if dep in deps]


def _languages(code_paths: list[str]) -> list[str]:
    extensions = {os.path.splitext(path)[1].lower() for path in code_paths}
    return sorted({_LANGUAGES[ext] for ext in extensions if ext in _LANGUAGES})


def scan_repository(root: Path, config: Config, git_detected: bool) -> Scan:
    """Classify the working tree's files with the configured globs and excludes."""
    from ..ingest.discovery import matches_filter
    from ..pathroles import is_source_path, path_role

    ingest = config["ingest"]
    exclude = GlobSet(ingest["exclude"])
    ci_globs, infra_globs = GlobSet(CI_GLOBS), GlobSet(INFRA_GLOBS)

    listed = list_worktree_files(root) if git_detected else None  # git's view: ignored trees stay out
    files = listed if listed is not None else _walk_files(root, exclude)

    docs: list[str] = []
    code: list[str] = []
    ci: list[str] = []
    infra: list[str] = []
    for rel in files:
        if exclude.matches(rel) or not _is_regular(root, rel):
            continue
        if ci_globs.matches(rel):
            ci.append(rel)
        if infra_globs.matches(rel):
            infra.append(rel)
        kind = matches_filter(rel, config)  # what ingest would make of it (dot paths, globs)
        if kind == "markdown":
            docs.append(rel)
        elif kind == "code" and (is_source_path(rel) or path_role(rel) == "test"):
            code.append(rel)  # source files (ingest also indexes configuration and data)

    package_json = _read_package_json(root)
    build_files = sorted(name for name in BUILD_CANDIDATES if (root / name).is_file())
    return Scan(
        git_detected=git_detected,
        package_manager=_package_manager(root, package_json),
        languages=_languages(code),
        frameworks=_frameworks(package_json),
        workspace_files=[name for name in build_files if name in WORKSPACE_FILES],
        apps=_child_dirs(root, "apps"),
        packages=_child_dirs(root, "packages"),
        code_count=len(code),
        doc_paths=docs,
        ci_files=ci,
        infra_files=infra,
        build_files=build_files,
    )


def detect_mode(scan: Scan) -> str:
    """Repository mode for ``--mode auto`` (knowledge §13 step 3)."""
    if scan.monorepo:
        return "monorepo"
    if scan.code_count == 0 and scan.doc_count <= 1 and len(scan.build_files) <= 1:
        return "empty"
    if scan.doc_count >= 8 and scan.doc_count >= max(4, (3 * scan.code_count) // 4):
        return "docs-heavy"
    return "existing"
