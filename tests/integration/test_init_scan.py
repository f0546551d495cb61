"""Scan, mode detection, census roles, coverage and maturity of `ragit init`."""

from __future__ import annotations

import json
from dataclasses import replace

import pytest

from ragit.bootstrap import run_init
from ragit.bootstrap.census import roles_for
from ragit.bootstrap.knowledge import maturity
from ragit.bootstrap.scan import Scan, detect_mode
from ragit.errors import RagitError


def scan_of(**overrides) -> Scan:
    base = Scan(
        git_detected=True, package_manager=None, languages=[], frameworks=[], workspace_files=[],
        apps=[], packages=[], code_count=0, doc_paths=[], ci_files=[], infra_files=[], build_files=[],
    )
    return replace(base, **overrides)


def docs(n: int) -> list[str]:
    return [f"docs/d{i}.md" for i in range(n)]


@pytest.mark.parametrize("overrides,mode", [
    ({"apps": ["apps/web"]}, "monorepo"),
    ({"workspace_files": ["turbo.json"], "build_files": ["turbo.json"]}, "monorepo"),
    ({}, "empty"),
    ({"doc_paths": docs(1), "build_files": ["package.json"]}, "empty"),
    ({"doc_paths": docs(2)}, "existing"),
    ({"code_count": 1}, "existing"),
    ({"doc_paths": docs(8), "code_count": 10}, "docs-heavy"),
    ({"doc_paths": docs(8), "code_count": 11}, "docs-heavy"),  # floor(0.75 * 11) = 8
    ({"doc_paths": docs(8), "code_count": 12}, "existing"),  # floor(0.75 * 12) = 9
    ({"doc_paths": docs(7)}, "existing"),
])
def test_detect_mode(overrides, mode):
    assert detect_mode(scan_of(**overrides)) == mode


@pytest.mark.parametrize("path,doc_type,roles", [
    ("README.md", "doc", {"project", "product"}),
    ("docs/README.md", "doc", set()),
    ("CONTRIBUTING.md", "doc", {"rules"}),
    ("docs/getting-started.md", "doc", {"rules"}),
    ("docs/system-design.md", "doc", {"architecture"}),
    ("docs/workspace-map.md", "doc", {"workspace"}),
    ("packages/ui/README.md", "doc", {"workspace"}),
    ("docs/ragit/ingestion-policy.md", "doc", {"ingestion-policy"}),
    ("ops/deploy.md", "doc", {"operations"}),
    ("docs/x.md", "prd", {"product"}),
    ("docs/x.md", "adr", {"decisions"}),
    ("docs/x.md", "ddd", {"architecture", "glossary"}),
    ("docs/x.md", "glossary", {"glossary"}),
    ("docs/x.md", "spec", {"architecture"}),
    ("docs/x.md", "srs", {"architecture"}),
])
def test_roles(path, doc_type, roles):
    assert roles_for(path, doc_type) == roles


def signals(**statuses):
    names = [
        "projectOverview", "localDevelopmentGuide", "architectureRationale", "decisionRecords",
        "packageOwnershipMap", "ingestionPolicy",
    ]
    return {name: {"status": statuses.get(name, "missing"), "sources": []} for name in names}


def test_maturity_scores():
    scan = scan_of(doc_paths=docs(3), code_count=2, ci_files=["ci.yml"], package_manager="uv")
    coverage = signals(projectOverview="sufficient", localDevelopmentGuide="partial",
                       architectureRationale="sufficient", ingestionPolicy="sufficient")
    assert maturity(scan, coverage) == {
        "discoverability": 2 * 3 + 1 + 0 + 1,
        "architectureClarity": 2 * 3 + 0 + 1,
        "operationalReadiness": 10,  # 1 + 6 + 2 + 1
        "agentReadability": 10,  # 3 + 3 + 6 + 2, clamped
    }
    assert maturity(scan_of(), signals()) == {
        "discoverability": 0, "architectureClarity": 0, "operationalReadiness": 0, "agentReadability": 0,
    }


def test_scan_of_a_real_tree(git_repo):
    git_repo.commit("tree", {
        "package.json": json.dumps({
            "dependencies": {"next": "14", "react": "18"}, "devDependencies": {"vitest": "1"},
        }),
        "yarn.lock": "",
        "pyproject.toml": "[project]\nname='x'\n",
        "Dockerfile": "FROM scratch\n",
        "docker-compose.yml": "services: {}\n",
        "k8s/base/deploy.yaml": "kind: Deployment\n",
        "infra/main.tf": "",
        ".github/workflows/ci.yml": "on: push\n",
        ".github/workflows/notes.md": "# not a doc: dot directory\n",
        "web/app.tsx": "export {}\n",
        "tool/main.go": "package main\n",
        "lib/x.pyi": "",
        "node_modules/dep/index.js": "",
        "build/out.py": "",
        "docs/guide.md": "# Guide\n",
        "ignored/notes.md": "# ignored\n",
        ".gitignore": "ignored/\n",
    })
    git_repo.write("untracked.md", "# new\n")
    scan = run_init(git_repo.root, yes=True, dry_run=True).data["scan"]
    assert scan["packageManager"] == "yarn"
    assert scan["frameworks"] == ["Next.js", "React", "Vitest"]
    assert scan["languages"] == ["Go", "Python", "TypeScript"]
    assert scan["codeFileCount"] == 3
    assert scan["existingDocs"] == ["docs/guide.md", "untracked.md"]
    assert scan["ciFiles"] == [".github/workflows/ci.yml"]
    assert scan["infraFiles"] == ["Dockerfile", "docker-compose.yml", "infra/main.tf", "k8s/base/deploy.yaml"]
    assert scan["buildFiles"] == ["Dockerfile", "docker-compose.yml", "package.json", "pyproject.toml"]
    assert scan["monorepo"] is False


def test_package_manager_field_wins_over_lockfiles(git_repo):
    git_repo.write("package.json", json.dumps({"packageManager": "bun@1.1.0"}))
    git_repo.write("package-lock.json", "{}")
    assert run_init(git_repo.root, yes=True, dry_run=True).data["scan"]["packageManager"] == "bun"


@pytest.mark.parametrize("lockfile,manager", [("uv.lock", "uv"), ("poetry.lock", "poetry"), ("Pipfile.lock", "pipenv")])
def test_python_lockfiles(git_repo, lockfile, manager):
    git_repo.write(lockfile, "")
    assert run_init(git_repo.root, yes=True, dry_run=True).data["scan"]["packageManager"] == manager


def test_existing_docs_lists_the_first_twenty(git_repo):
    for i in range(25):
        git_repo.write(f"docs/n{i:02d}.md", f"# Note {i}\n")
    scan = run_init(git_repo.root, yes=True, dry_run=True).data["scan"]
    assert scan["docFileCount"] == 25
    assert scan["existingDocs"] == [f"docs/n{i:02d}.md" for i in range(20)]


def test_scan_outside_git_walks_the_tree(tmp_path, monkeypatch):
    monkeypatch.setenv("GIT_CEILING_DIRECTORIES", str(tmp_path))
    root = tmp_path / "plain"
    for rel in ["README.md", "src/a.py", "node_modules/x/y.js", ".hidden/z.md", ".github/workflows/ci.yaml"]:
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text("# x\n")
    scan = run_init(root, yes=True, git_init=True, dry_run=True).data["scan"]
    assert scan["existingDocs"] == ["README.md"]
    assert scan["codeFileCount"] == 1
    assert scan["ciFiles"] == [".github/workflows/ci.yaml"]


def test_census_types_drive_coverage(git_repo):
    git_repo.commit("docs", {
        "docs/decisions/0001.md": "# Use Postgres\n",
        "notes/domain.md": "---\ntype: ddd\n---\n# Orders\n",
    })
    data = run_init(git_repo.root, yes=True, dry_run=True).data
    assert data["coverage"]["decisionRecords"] == {"status": "sufficient", "sources": ["docs/decisions/0001.md"]}
    assert data["coverage"]["architectureRationale"] == {"status": "sufficient", "sources": ["notes/domain.md"]}
    assert data["coverage"]["projectOverview"] == {"status": "partial", "sources": []}
    kmap = {e["slot"]: e["sources"] for e in data["knowledgeMap"]}
    assert kmap["glossary"] == ["notes/domain.md"]
    assert kmap["ingestion-policy"] == [".ragit/config.toml"]


def test_ingestion_policy_partial_with_package_json(git_repo):
    git_repo.write("package.json", "{}")
    coverage = run_init(git_repo.root, yes=True, dry_run=True).data["coverage"]
    assert coverage["ingestionPolicy"] == {"status": "partial", "sources": [".ragit/config.toml"]}


def test_workspace_coverage_partial_for_monorepo(git_repo):
    git_repo.write("nx.json", "{}")
    git_repo.write("packages/core/index.ts", "export {}\n")
    coverage = run_init(git_repo.root, yes=True, dry_run=True).data["coverage"]
    assert coverage["packageOwnershipMap"] == {"status": "partial", "sources": ["nx.json", "packages/core"]}


@pytest.mark.parametrize("strategy,expected", [
    ("minimal", ["create", "reuse", "create", "skip", "skip"]),
    ("balanced", ["create", "reuse", "skip", "skip", "skip"]),
    ("full", ["create", "reuse", "skip", "create", "create"]),
])
def test_plan_strategies_on_complete_docs(git_repo, strategy, expected):
    git_repo.commit("complete docs", {
        "README.md": "# P\n", "CONTRIBUTING.md": "# C\n", "docs/architecture.md": "# A\n",
        "docs/adr/0001.md": "# ADR 1\n", "docs/workspace-map.md": "# W\n", "docs/ingestion-policy.md": "# I\n",
        "src/a.py": "", "src/b.py": "",
    })
    data = run_init(git_repo.root, yes=True, dry_run=True, strategy=strategy).data
    assert data["repositoryMode"] == "existing"
    assert all(signal["status"] == "sufficient" for signal in data["coverage"].values())
    assert [a["path"] for a in data["actions"]["planned"]] == [
        "RAGIT.md", "docs/workspace-map.md", "docs/ragit/ingestion-policy.md", "docs/known-gaps.md",
        "docs/adr/README.md",
    ]
    assert [a["type"] for a in data["actions"]["planned"]] == expected


def test_empty_mode_wants_every_draft(git_repo):
    data = run_init(git_repo.root, yes=True, dry_run=True).data
    assert data["repositoryMode"] == "empty"
    assert data["actions"]["skipped"] == []
    assert [a["type"] for a in data["actions"]["planned"]] == ["create"] * 5


def test_draft_paths_come_from_config(git_repo):
    git_repo.write(".ragit/config.toml", '[docs]\nentrypoint = "docs/START.md"\n')
    data = run_init(git_repo.root, yes=True).data
    assert data["actions"]["planned"][0]["path"] == "docs/START.md"
    assert (git_repo.root / "docs/START.md").is_file()
    assert not (git_repo.root / "RAGIT.md").exists()


def test_draft_path_outside_repository_is_config_invalid(git_repo):
    git_repo.write(".ragit/config.toml", '[docs]\nknown_gaps = "../gaps.md"\n')
    with pytest.raises(RagitError) as info:
        run_init(git_repo.root, yes=True)
    assert info.value.code == "CONFIG_INVALID"
    assert not (git_repo.root.parent / "gaps.md").exists()
