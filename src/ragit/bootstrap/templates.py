"""Built-in English texts that `ragit init` writes: guide templates, AGENTS.md, draft skeletons.

Kept as plain constants so a reviewer can read exactly what lands in a user's repository.
Guide templates and AGENTS.md are written verbatim; draft skeletons are ``str.format``
templates filled from the scan (so they contain no literal braces).
"""

from __future__ import annotations

from ..ingest.doctypes import MARKDOWN_TYPES

# Markdown document types that get a guide template, in template-map order (knowledge §13):
# every Markdown type of ingest.
TEMPLATE_DOC_TYPES: tuple[str, ...] = MARKDOWN_TYPES

# File name -> content of the 9 guide templates under .ragit/guide/templates/.
GUIDE_TEMPLATES: dict[str, str] = {
    "adr.template.md": """---
type: adr
---
# ADR-{N}: Decision Title

## Status
- proposed | accepted | superseded by ADR-{M}

## Context
- The problem and the forces that make a decision necessary.

## Decision
- The option chosen, stated in one or two sentences.

## Consequences
- What becomes easier.
- What becomes harder, and the risks accepted.
""",
    "prd.template.md": """---
type: prd
---
# PRD: Product Requirement

## Goal
- The outcome for users, and how success is measured.

## User Stories
- As a <role>, I want <capability> so that <benefit>.

## Acceptance Criteria
- [ ] Condition 1
""",
    "srs.template.md": """---
type: srs
---
# SRS: Software Requirements

## Functional Requirements
- FR-001: The system shall ...

## Non-Functional Requirements
- NFR-001: Performance, security or reliability target.
""",
    "spec.template.md": """---
type: spec
---
# SPEC: Implementation Specification

## Scope
- What this specification covers and what it leaves out.

## Functional Requirements
- Behaviour the implementation must provide.

## Interfaces and Contracts
- Inputs, outputs, error cases and their exact shapes.

## State and Flow
- State transitions and the order of operations.

## Acceptance Criteria
- [ ] A check that proves the behaviour.
""",
    "plan.template.md": """---
type: plan
---
# Plan

## Milestones
- M1: Outcome and target date.

## Work Breakdown
- Task 1: Owner, dependency, definition of done.

## Risks
- Risk and mitigation.
""",
    "ddd.template.md": """---
type: ddd
---
# Domain Model

## Bounded Context
- Context name and its responsibility.

## Aggregates
- Aggregate root, invariants it protects.

## Domain Events
- Event name and when it is raised.
""",
    "glossary.template.md": """---
type: glossary
---
# Glossary

## Terms
- **Term**: Definition, and where the term is used.
""",
    "pbd.template.md": """---
type: pbd
---
# PBD: Phase and Binding Documents

## Implementation Scope
- The components this document describes.

## Phase Topology
- The phases the system moves through.

## Binding Map
- Which components bind to which, and through what contract.

## Interaction Paths
- The paths a request takes across the bindings.

## Failure and Drift Points
- Where behaviour can fail or drift from this document.

## Observability Notes
- What to watch to notice a failure or drift.
""",
    "_common.template.md": """# Common Guide

## Naming
- Use one term for one concept, and the glossary's spelling of it.

## Evidence
- Every decision names its sources: a document path, a commit or an issue.

## Status
- Mark drafts `status: draft` in front matter until a human has reviewed them.
""",
}

# Written to AGENTS.md only when the file is missing. No persona: plain working rules.
# The [B<n>] and [Rule <n>] headings are what the guide index parser picks up.
AGENTS_TEMPLATE = """# AGENTS.md

Instructions for AI coding agents working in this repository. Humans maintain this file;
`ragit init` parses its `[B<n>]` and `Ground/Rule/Flow <n>` headings into
`.ragit/guide/guide-index.json`.

## [B1] Purpose
This file tells an agent where knowledge lives, how to retrieve it and which rules hold
for every change. Repository documents outrank this file; this file outranks defaults.

## [B2] Sources of truth
### [B2.a] Repository documents
Start from `RAGIT.md`, then the documents it lists. Generated drafts carry
`status: draft` in front matter: treat them as hints until a human has reviewed them.

### [B2.b] Retrieval with ragit
- `ragit query "<question>"` answers from the snapshot of the current commit, with citations.
- `ragit context pack "<goal>"` packs cited context under a budget.
- Quote the citation of every fact you rely on; never cite a file you have not retrieved.

## [B3] Working rules
### [B3.a] Changes
Keep changes small and focused. Run the tests that cover what you changed before you
report the work as done.

### [B3.b] Memory
Record decisions and open questions with `ragit memory wrap` at the end of a session, so
the next session starts from them.

## [B4] Document structure
Headings that carry an identifier (`## [B1]`, `### [B1.a]`, `## [Rule 1]`) mark boundaries.
A child identifier extends its parent (`[B1.a]` belongs to `[B1]`); Ground, Rule and Flow
headings that share a number belong together.

## [Rule 1] Heading depth follows identifier depth
A `[B<n>]` heading is level 2, `[B<n>.<x>]` level 3, and so on. Keep identifiers stable:
other documents and indexes refer to them.
"""

DRAFT_FRONT_MATTER = """---
status: draft
source: inferred-from-repository
confidence: {confidence}
last_generated_by: ragit init
---
"""

ENTRYPOINT_DRAFT = """# RAGIT

Entry point for agents and retrieval in this repository. Generated by `ragit init` from what
the repository already contains; replace inferred statements with validated ones over time.

## Repository Snapshot

- Repository mode: `{repository_mode}`
- Strategy: `{strategy}`
- Package manager: `{package_manager}`
- Languages: {languages}
- Frameworks: {frameworks}
- Monorepo: {monorepo}
- Code files: {code_count}
- Docs: {doc_count}

## Knowledge Sources

{knowledge_sources}

## Coverage

{coverage}

## Using ragit

- `ragit ingest --all` indexes the current commit (docs and code).
- `ragit query "<question>"` answers with citations from exactly that commit.
- `ragit status` shows whether HEAD is indexed.

## Operating Notes

- Prefer existing repository documents over generated drafts.
- Treat documents marked `status: draft` as inferred notes until a human validates them.
- Re-run `ragit init` when foundational documents move; it never overwrites existing files.
"""

WORKSPACE_MAP_DRAFT = """# Workspace Map

Layout of the repository as detected by `ragit init`. Validate ownership and
responsibilities before relying on this map.

## Topology

- Repository mode: `{repository_mode}`
- Package manager: `{package_manager}`
- Languages: {languages}
- Workspace files: {workspace_files}
- Build files: {build_files}

## Applications

{apps}

## Packages

{packages}

## Operations

{operations}
"""

INGESTION_POLICY_DRAFT = """# Ingestion Policy

What `ragit ingest` admits, as configured in `.ragit/config.toml` (`[ingest]`). Edit the
configuration, then update this page.

## Document Globs

{doc_globs}

## Code Globs

{code_globs}

## Include

{include}

## Exclude

{exclude}

## Rules

- Files whose path has a segment starting with `.` are never ingested.
- Tracked files that a `.gitignore` pattern matches are skipped too: {respect_gitignore} (git itself
  never ignores a tracked file; untracked files are never ingested).
- Files larger than {max_file_bytes} bytes, binary files and non-UTF-8 files are skipped.
- Content always comes from the committed snapshot, never from uncommitted edits.
- Secrets are masked before anything is stored or shown.
"""

KNOWN_GAPS_DRAFT = """# Known Gaps

Documentation gaps found by `ragit init`. Close a gap by writing or pointing to a validated
document, then remove its line.

## Coverage Gaps

{gaps}

## Follow-up

- Replace generated drafts with validated, human-authored documents over time.
- Re-run `ragit init --dry-run` to see the coverage after changes.
"""

ADR_README_DRAFT = """# Architecture Decision Records

## Purpose

Record durable architectural decisions with their context, the decision and its
consequences, so later readers know why the system looks the way it does.

## Naming

- One decision per file: `{adr_dir}/NNNN-short-title.md`, numbered in order.
- Keep titles short and stable; other documents refer to them.

## Structure

- Status, Context, Decision, Consequences.
- Template: `.ragit/guide/templates/adr.template.md`.

## Operating Rule

- Supersede a decision with a new ADR instead of rewriting history.

## Existing Records

{existing}
"""
