"""`ragit eval run --baseline <file> --max-drop <x>`: the CI gate of knowledge §21.2.

A real history (tests/integration/mined_history.py), tasks mined by `eval mine`, a baseline saved
from `eval run --format json`, then the same run after a configuration change that hurts hybrid
retrieval. Golden envelopes (clock-dependent fields removed, temporary paths replaced) pin the
contract of the passing and the failing gate. Regenerate with ``RAGIT_UPDATE_GOLDENS=1``.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from conftest import check_golden, tree_snapshot
from mined_history import build_history, set_alpha


def _stable(text: str, root: Path, tmp: Path) -> str:
    """The envelope without its clock-dependent fields, temporary paths replaced."""
    envelope = json.loads(text)
    data = envelope["data"]
    if data is not None:
        data.pop("timing", None)
        for row in data.get("modes", []):
            row.pop("secondsPerTask", None)
    out = json.dumps(envelope, indent=2, ensure_ascii=False) + "\n"
    return out.replace(str(root), "<ROOT>").replace(str(tmp), "<TMP>")


@pytest.fixture
def mined(git_repo, cli, tmp_path):
    """The history, its mined task file and a baseline saved with the default configuration."""
    build_history(git_repo, files=12, commits=12)
    tasks = tmp_path / "tasks.jsonl"
    r = cli("eval", "mine", "--out", str(tasks), "--format", "json", "--cwd", str(git_repo.root))
    assert r.code == 0 and r.json["data"]["tasks"] == 12, r
    base = cli("eval", "run", str(tasks), "--format", "json", "--cwd", str(git_repo.root))
    assert base.code == 0, base
    baseline = tmp_path / "baseline.json"
    baseline.write_text(base.out, encoding="utf-8")
    return git_repo.root, tasks, baseline


def test_an_unchanged_run_passes_the_gate(mined, cli, tmp_path):
    root, tasks, baseline = mined
    r = cli("eval", "run", str(tasks), "--baseline", str(baseline), "--format", "json", "--cwd", str(root))
    assert r.code == 0, r
    env = r.json
    assert env["ok"] is True
    data = env["data"]
    assert list(data)[-3:] == ["baseline", "regressions", "warnings"]
    assert data["baseline"] == {"file": str(baseline), "maxDrop": 0} and data["regressions"] == []
    check_golden("eval_run_baseline_pass.json", _stable(r.out, root, tmp_path))


def test_a_drop_beyond_max_drop_fails_with_exit_3_and_the_report(mined, cli, tmp_path):
    root, tasks, baseline = mined
    set_alpha(root, 1.0)  # hybrid becomes vector-only: placeholder vectors know nothing of these words
    r = cli("eval", "run", str(tasks), "--baseline", str(baseline), "--max-drop", "0.05", "--format", "json",
            "--cwd", str(root))
    assert r.code == 3, r
    env = r.json
    assert env["ok"] is False and "error" not in env
    data = env["data"]
    before = {m["mode"]: m for m in json.loads(baseline.read_text())["data"]["modes"]}
    assert data["regressions"], data
    for reg in data["regressions"]:
        assert reg["mode"] == "hybrid"  # keyword and vector modes fix alpha: unchanged
        assert reg["baseline"] == before["hybrid"][reg["metric"]]
        assert reg["baseline"] - reg["value"] > 0.05
    hybrid = next(m for m in data["modes"] if m["mode"] == "hybrid")
    assert hybrid["recallAt5"] < before["hybrid"]["recallAt5"] - 0.05
    check_golden("eval_run_baseline_fail.json", _stable(r.out, root, tmp_path))

    # the text report is printed too, with the regressions table
    text = cli("eval", "run", str(tasks), "--baseline", str(baseline), "--max-drop", "0.05", "--format", "text",
               "--cwd", str(root))
    assert text.code == 3 and "regressions against" in text.out and "| hybrid | R@5 |" in text.out

    # a larger allowance passes the same run
    loose = cli("eval", "run", str(tasks), "--baseline", str(baseline), "--max-drop", "1", "--format", "json",
                "--cwd", str(root))
    assert loose.code == 0 and loose.json["data"]["regressions"] == []


def _fails(cli, root, *args) -> dict:
    before = tree_snapshot(root)
    r = cli("eval", "run", *args, "--format", "json", "--cwd", str(root))
    assert r.code == 2, r
    assert tree_snapshot(root) == before  # checked before any work: nothing indexed
    err = r.json["error"]
    assert err["code"] == "INPUT_INVALID" and err["recovery"]["command"] == "ragit describe eval run"
    return err


def test_bad_or_mismatched_baselines_are_input_invalid(git_repo, cli, tmp_path):
    build_history(git_repo, files=12, commits=12)
    root = git_repo.root
    tasks = tmp_path / "tasks.jsonl"
    assert cli("eval", "mine", "--out", str(tasks), "--format", "json", "--cwd", str(root)).code == 0

    missing = _fails(cli, root, str(tasks), "--baseline", str(tmp_path / "none.json"))
    assert missing["details"]["reason"] == "file_not_found"

    bad = tmp_path / "bad.json"
    bad.write_text("{not json", encoding="utf-8")
    assert _fails(cli, root, str(tasks), "--baseline", str(bad))["details"]["reason"] == "invalid_json"

    other = tmp_path / "other.json"
    other.write_text(json.dumps({"command": "query", "ok": True, "data": {"hits": []}}), encoding="utf-8")
    err = _fails(cli, root, str(tasks), "--baseline", str(other))
    assert err["details"]["reason"] == "invalid_format" and "eval run" in err["message"]
    assert "--format json > baseline.json" in err["message"]  # the hint: how to save one

    # a real baseline of another task set (bench/eval_hist_flask.json: 150 flask tasks)
    flask = Path(__file__).resolve().parents[2] / "bench" / "eval_hist_flask.json"
    err = _fails(cli, root, str(tasks), "--baseline", str(flask))
    assert err["details"]["conflicts"] == ["tasksFile"]

    # same number of tasks, other ids
    lines = tasks.read_text().splitlines()
    renamed = tmp_path / "renamed.jsonl"
    renamed.write_text("".join(json.dumps(dict(json.loads(x), id=f"x{i}")) + "\n" for i, x in enumerate(lines)))
    saved = cli("eval", "run", str(renamed), "--mode", "keyword", "--format", "json", "--cwd", str(root))
    assert saved.code == 0
    other_ids = tmp_path / "other_ids.json"
    other_ids.write_text(saved.out, encoding="utf-8")
    err = _fails(cli, root, str(tasks), "--mode", "keyword", "--baseline", str(other_ids))
    assert err["details"]["conflicts"] == ["tasksFile"]
    # a baseline without a mode this run measures
    err = _fails(cli, root, str(renamed), "--baseline", str(other_ids))
    assert err["details"]["conflicts"] == ["--mode"]

    # --max-drop needs --baseline and a number in [0, 1]
    assert _fails(cli, root, str(tasks), "--max-drop", "0.1")["details"]["field"] == "--baseline"
    err = _fails(cli, root, str(renamed), "--mode", "keyword", "--baseline", str(other_ids), "--max-drop", "2")
    assert (err["details"]["field"], err["details"]["reason"]) == ("--max-drop", "out_of_range")
    err = _fails(cli, root, str(renamed), "--mode", "keyword", "--baseline", str(other_ids), "--max-drop", "x")
    assert (err["details"]["field"], err["details"]["reason"]) == ("--max-drop", "invalid_format")
