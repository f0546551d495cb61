"""``ingest.chunker_version``: a second way to cut code, never mixed with the first (knowledge §9)."""

from __future__ import annotations

import json

from conftest import write_placeholder_config
from ragit import Repo

BODY = "\n".join(f"    total = total + {i}  # step {i}" for i in range(50))
FILES = {
    "src/calc.py": f"def accumulate(total):\n{BODY}\n    return total\n",
    "docs/a.md": "# Alpha\n\naccumulate the running total\n",
}


def _set_version(root, version: str) -> None:
    cfg = root / ".ragit" / "config.toml"
    text = cfg.read_text(encoding="utf-8")
    if "[ingest]" in text:
        text = text.replace(text[text.index("[ingest]"):], "")
    cfg.write_text(text + f'\n[ingest]\nchunker_version = "{version}"\n', encoding="utf-8")


def _manifest(root, sha: str) -> dict:
    return json.loads((root / ".ragit" / "manifest" / f"{sha}.json").read_text(encoding="utf-8"))


def test_version_2_cuts_code_smaller_and_keeps_its_own_chunk_ids(git_repo):
    write_placeholder_config(git_repo.root)
    git_repo.commit("c", FILES)
    head = git_repo.head()
    repo = Repo.open(git_repo.root)
    repo.ingest(all=True)
    v1 = _manifest(git_repo.root, head)
    v1_hits = {h.chunk_id for h in repo.query("accumulate total step", top_k=20).hits}

    _set_version(git_repo.root, "2")
    repo = Repo.open(git_repo.root)
    repo.ingest(all=True)
    v2 = _manifest(git_repo.root, head)
    assert v1["params"]["chunkerVersion"] == "1" and v2["params"]["chunkerVersion"] == "2"
    assert v1["params"]["configHash"] == v2["params"]["configHash"]  # the version is its own parameter
    code = {d["path"]: d["chunks"] for d in v2["docs"]}["src/calc.py"]
    assert code == [[1, 30], [26, 52]] and {d["path"]: d["chunks"] for d in v1["docs"]}["src/calc.py"] == [[1, 52]]
    hits = repo.query("accumulate total step", top_k=20).hits
    assert hits and not ({h.chunk_id for h in hits} & v1_hits)  # every chunk id names its version
    assert all(h.end_line - h.start_line + 1 <= 40 for h in hits if h.path == "src/calc.py")

    # an incremental ingest over a base cut by the other version starts over (params differ)
    _set_version(git_repo.root, "1")
    git_repo.commit("d", {"docs/b.md": "# Beta\n\nmore\n"})
    result = Repo.open(git_repo.root).ingest(since=head)
    assert result.full_snapshot and any("parameters" in w for w in result.warnings)
    assert _manifest(git_repo.root, git_repo.head())["params"]["chunkerVersion"] == "1"
