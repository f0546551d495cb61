"""Golden `ragit snapshot export` / `snapshot import` envelopes, and the SNAPSHOT_BUNDLE_INVALID
failure envelope (cli-contract §4, §6; knowledge §22.1).

Commit dates and RAGIT_NOW are fixed and the placeholder embedder is deterministic, so the bundle
(its size and sha256 included) is reproducible; temporary paths are replaced by ``<ROOT>`` and
``<TMP>``. Regenerate after an intended change with
``RAGIT_UPDATE_GOLDENS=1 pytest tests/contract/test_snapshot_goldens.py``.
"""

from __future__ import annotations

import subprocess

from conftest import SAMPLE_FILES, check_golden, write_placeholder_config


def _clean(text: str, root, tmp) -> str:
    return text.replace(str(root), "<ROOT>").replace(str(tmp), "<TMP>")


def test_snapshot_envelopes_golden(git_repo, cli, tmp_path, monkeypatch):
    monkeypatch.setenv("RAGIT_NOW", "2026-03-08T10:00:00.000Z")
    write_placeholder_config(git_repo.root)
    git_repo.commit("initial", SAMPLE_FILES)
    assert cli("ingest", "--all", "--cwd", str(git_repo.root), "--format", "json").code == 0
    out = tmp_path / "snap.ragit"
    r = cli("snapshot", "export", "HEAD", "-o", str(out), "--cwd", str(git_repo.root), "--format", "json")
    assert r.code == 0, r
    check_golden("snapshot_export.json", _clean(r.out, git_repo.root, tmp_path))

    target = tmp_path / "clone"
    subprocess.run(["git", "clone", "-q", str(git_repo.root), str(target)], check=True)
    write_placeholder_config(target)
    r = cli("snapshot", "import", str(out), "--cwd", str(target), "--format", "json")
    assert r.code == 0, r
    check_golden("snapshot_import.json", _clean(r.out, target, tmp_path))

    tampered = tmp_path / "tampered.ragit"
    raw = bytearray(out.read_bytes())
    raw[-1] ^= 0x80
    tampered.write_bytes(bytes(raw))
    r = cli("snapshot", "import", str(tampered), "--cwd", str(target), "--format", "json")
    assert r.code == 4, r
    check_golden("snapshot_import_invalid.json", _clean(r.out, target, tmp_path))
