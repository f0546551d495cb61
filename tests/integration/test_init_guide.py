"""Guide parser, guide index and guide templates of `ragit init` (knowledge §13 checks)."""

from __future__ import annotations

import json

from ragit.bootstrap import run_init
from ragit.bootstrap.guide_index import build_index, parse_guide

GUIDE = """# Agents

## [B1] Definitions
text
### [B1.a] Detail
text
## [B2] Structure
### [B2.a] Regex
#### [B2.a.1] Deeper
## [Rule 1] Protocol
rule text
"""


def by_id(items, key="id"):
    return {item[key]: item for item in items}


def test_bracket_boundaries_and_parents():
    boundaries, _ = parse_guide(GUIDE)
    found = by_id(boundaries)
    assert list(found) == ["[B1]", "[B1.a]", "[B2]", "[B2.a]", "[B2.a.1]", "Rule 1"]
    assert found["[B1]"]["parentId"] is None
    assert found["[B1.a]"]["parentId"] == "[B1]"
    assert found["[B2.a.1]"]["parentId"] == "[B2.a]"
    assert found["[B1]"] == {
        "id": "[B1]", "title": "Definitions", "level": 2, "startLine": 3, "endLine": 4, "parentId": None,
    }
    assert found["[B2.a.1]"]["level"] == 4
    assert found["Rule 1"]["endLine"] == 11


def test_sections_group_descendants_under_roots():
    _, sections = parse_guide(GUIDE)
    found = by_id(sections, "rootId")
    assert list(found) == ["[B1]", "[B2]", "Rule 1"]
    assert found["[B2]"]["childIds"] == ["[B2.a]", "[B2.a.1]"]
    assert found["[B1]"] == {"rootId": "[B1]", "blockStartLine": 3, "blockEndLine": 6, "childIds": ["[B1.a]"]}
    assert found["Rule 1"]["blockStartLine"] > 0


def test_bare_identifier_headings_count():
    text = "## [B1]\n### [B1.a]\n## [B2]\n### [B2.a]\n#### [B2.a.1]\n## [Rule 1]\n"
    boundaries, sections = parse_guide(text)
    found = by_id(boundaries)
    assert found["[B1.a]"]["parentId"] == "[B1]"
    assert found["[B1]"]["parentId"] is None
    assert "[B2.a]" in by_id(sections, "rootId")["[B2]"]["childIds"]
    assert by_id(sections, "rootId")["Rule 1"]["blockStartLine"] == 6
    assert found["[B1]"]["title"] == ""


def test_grf_headings_and_sub_numbers():
    text = (
        "## Ground 1 Facts\n## Ground 1a More facts\n### [Flow 2] Steps\n"
        "## Failure Trajectory 3 Outage\n## Rule 4b Orphan\n# [B9] level one is not a boundary\n"
    )
    boundaries, _ = parse_guide(text)
    found = by_id(boundaries)
    assert list(found) == ["Ground 1", "Ground 1a", "Flow 2", "Failure Trajectory 3", "Rule 4b"]
    assert found["Ground 1a"]["parentId"] == "Ground 1"
    assert found["Rule 4b"]["parentId"] is None  # no `Rule 4` to belong to
    assert found["Flow 2"]["title"] == "Steps"
    assert found["Failure Trajectory 3"]["title"] == "Outage"


def test_headings_inside_fences_are_ignored():
    text = "## [B1] Real\n```md\n## [B2] Example only\n```\n## [B3] Also real\n"
    assert [b["id"] for b in parse_guide(text)[0]] == ["[B1]", "[B3]"]


def test_crlf_text_keeps_line_numbers():
    boundaries, _ = parse_guide("intro\r\n## [B1] One\r\nbody\r\n")
    assert boundaries[0]["startLine"] == 2 and boundaries[0]["endLine"] == 3


def test_index_shape_and_defaults():
    index = build_index(GUIDE, "loaded", "abc", "2026-01-01T00:00:00.000Z")
    assert list(index) == [
        "version", "generatedAt", "source", "parser", "boundaries", "sections", "templateMap", "defaults",
    ]
    assert index["source"] == {"path": "AGENTS.md", "mode": "loaded", "sha256": "abc"}
    assert list(index["parser"]) == ["boundaryRegex", "grfRegex"]
    assert index["defaults"]["language"] == "en"
    assert index["defaults"]["profile"] == "topological"
    assert "spec" in index["defaults"]["docTypes"] and "pbd" in index["defaults"]["docTypes"]
    for doc_type, path in index["templateMap"].items():
        assert path == f".ragit/guide/templates/{doc_type}.template.md"
    assert set(index["templateMap"]) == {"adr", "prd", "srs", "spec", "plan", "ddd", "glossary", "pbd"}


def test_templates_are_created_once_and_never_overwritten(git_repo, monkeypatch):
    monkeypatch.setenv("RAGIT_NOW", "2026-03-08T10:00:00.000Z")
    first = run_init(git_repo.root, yes=True).data["bootstrap"]["guide"]
    assert len(first["createdFiles"]) == 9 and first["skippedFiles"] == []
    assert first["templates"] == [
        f".ragit/guide/templates/{name}.template.md"
        for name in ["adr", "prd", "srs", "spec", "plan", "ddd", "glossary", "pbd", "_common"]
    ]
    custom = git_repo.root / ".ragit/guide/templates/adr.template.md"
    custom.write_text("# our ADR format\n")
    (git_repo.root / ".ragit/guide/templates/pbd.template.md").unlink()
    second = run_init(git_repo.root, yes=True).data["bootstrap"]["guide"]
    assert second["createdFiles"] == [".ragit/guide/templates/pbd.template.md"]
    assert custom.read_text() == "# our ADR format\n"
    third = run_init(git_repo.root, yes=True).data["bootstrap"]["guide"]
    assert third["createdFiles"] == [] and len(third["skippedFiles"]) == 9
    index = json.loads((git_repo.root / third["indexPath"]).read_text())
    assert index["generatedAt"] == "2026-03-08T10:00:00.000Z"
    assert "spec" in index["defaults"]["docTypes"] and "pbd" in index["defaults"]["docTypes"]


def test_index_is_rewritten_when_agents_md_changes(git_repo):
    run_init(git_repo.root, yes=True)
    (git_repo.root / "AGENTS.md").write_text("## [B7] Only this\n")
    run_init(git_repo.root, yes=True)
    index = json.loads((git_repo.root / ".ragit/guide/guide-index.json").read_text())
    assert [b["id"] for b in index["boundaries"]] == ["[B7]"]
    assert index["source"]["mode"] == "loaded"
