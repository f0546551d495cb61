"""`ragit tune` (knowledge §22.5) on real histories in temporary repositories.

The history of tests/integration/mined_history.py is one where keyword search finds the changed
module and placeholder vectors do not: with a vector-only configuration (alpha 1) a lower alpha
clearly helps and must be written, with the default alpha nothing beats it on R@5 and nothing may
be written.
"""

from __future__ import annotations

import hashlib

import pytest
from conftest import tree_snapshot
from mined_history import build_history

FIRST_KEYS = ["baseline", "best", "gain", "ci95", "written"]


def tune(cli, root, *args):
    r = cli("tune", *args, "--format", "json", "--cwd", str(root))
    assert r.code == 0, r
    assert r.json["ok"] is True and r.json["warnings"] == r.json["data"]["warnings"]
    return r.json["data"]


def test_a_setting_that_clearly_helps_is_written_and_round_trips(git_repo, cli):
    from ragit.config import load_config, render_config
    from ragit.retrieve.search import RetrievalParams

    root = build_history(git_repo, alpha=1.0).root
    data = tune(cli, root)
    assert list(data)[:5] == FIRST_KEYS
    assert data["decision"] == "written" and data["written"] is True and data["dryRun"] is False
    assert data["tasks"] == 32 and data["train"] + data["heldOut"] == 32 and min(data["train"], data["heldOut"]) >= 10
    assert data["baseline"]["settings"]["alpha"] == 1
    best = data["best"]
    assert best["changed"]["alpha"] < 1
    assert best["train"]["recallAt5"] > data["baseline"]["train"]["recallAt5"]
    assert data["gain"] == pytest.approx(best["heldOut"]["recallAt5"] - data["baseline"]["heldOut"]["recallAt5"])
    assert data["gain"] > 0 and 0 < data["ci95"][0] <= data["gain"] <= data["ci95"][1]
    cost = data["cost"]
    # 32 commits per chunker: the current one, and the other chunk size of stage 4
    assert cost["ingestedCommits"] == 64 and cost["settings"] == len(data["searched"]) >= 14
    stage4 = [row for row in data["searched"] if row["stage"] == 4]
    assert len(stage4) == 1 and stage4[0]["changed"]["chunker_version"] == "2"
    assert cost["chunkSizeCpuSeconds"] > 0
    assert cost["scoringPasses"] >= 3  # stage 1, stage 2, held-out: one scoring pass each, not one per setting

    config = load_config(root)  # valid: loads under the typed validation
    for key, value in best["settings"].items():
        assert config["ingest" if key == "chunker_version" else "retrieval"][key] == value
    text = (root / ".ragit" / "config.toml").read_text(encoding="utf-8")
    assert render_config(config) == text  # round-trips byte for byte
    assert config["embedding"]["provider"] == "placeholder"  # every other key kept
    assert RetrievalParams.from_config(config).alpha == best["settings"]["alpha"]

    # tuned, a second run finds nothing better to write and re-indexes nothing
    again = tune(cli, root)
    assert again["written"] is False and again["decision"] in ("no_better_setting", "ci_includes_zero")
    assert again["cost"]["ingestedCommits"] == 0
    assert (root / ".ragit" / "config.toml").read_text(encoding="utf-8") == text


def test_no_gain_declines_to_write(git_repo, cli):
    root = build_history(git_repo).root  # the default alpha already finds every changed module
    config_before = (root / ".ragit" / "config.toml").read_bytes()
    data = tune(cli, root)
    assert data["written"] is False
    assert data["decision"] in ("no_better_setting", "ci_includes_zero")
    assert data["baseline"]["heldOut"]["recallAt5"] == 1
    assert data["gain"] == 0 and data["ci95"] == [0, 0]
    assert (root / ".ragit" / "config.toml").read_bytes() == config_before
    text = cli("tune", "--format", "text", "--cwd", str(root))
    assert text.code == 0 and "not written" in text.out and "held-out R@5 gain" in text.out


def test_dry_run_writes_nothing_at_all(git_repo, cli):
    root = build_history(git_repo, alpha=1.0).root
    before = tree_snapshot(root)
    data = tune(cli, root, "--dry-run")
    assert data["dryRun"] is True and data["written"] is False and data["decision"] == "dry_run"
    assert data["ci95"][0] > 0  # the same history that is written without --dry-run
    assert tree_snapshot(root) == before  # no config, no evaluation cache


def test_too_few_tasks_searches_nothing(git_repo, cli):
    root = build_history(git_repo, files=6, commits=8).root
    before = tree_snapshot(root)
    data = tune(cli, root)
    assert data["decision"] == "too_few_tasks" and data["written"] is False and data["best"] is None
    assert data["warnings"] and data["cost"] is None
    assert tree_snapshot(root) == before


def test_given_task_file_and_bad_input(git_repo, cli, tmp_path, monkeypatch):
    root = build_history(git_repo, files=6, commits=8).root
    tasks = tmp_path / "tasks.jsonl"
    assert cli("eval", "mine", "--out", str(tasks), "--format", "json", "--cwd", str(root)).code == 0
    data = tune(cli, root, "--tasks", str(tasks), "--repo", str(root))
    assert data["tasksFile"] == str(tasks) and data["tasks"] == 8

    r = cli("tune", "--tasks", str(tmp_path / "missing.jsonl"), "--format", "json", "--cwd", str(root))
    assert r.code == 2 and r.json["error"]["code"] == "INPUT_INVALID"
    assert r.json["error"]["details"]["field"] == "--tasks"
    assert r.json["error"]["recovery"]["command"] == "ragit describe tune"
    outside = tmp_path / "plain"
    outside.mkdir()
    r = cli("tune", "--format", "json", "--cwd", str(outside))
    assert r.code == 3 and r.json["error"]["code"] == "GIT_REPOSITORY_REQUIRED"
    r = cli("tune", "--bogus", "--format", "json", "--cwd", str(root))
    assert r.code == 2 and r.json["error"]["details"]["reason"] == "usage"


def test_split_is_by_task_id_hash_and_stable():
    from ragit.evaluation.tasks import Task
    from ragit.evaluation.tune import split_tasks

    def task(i: int) -> Task:
        return Task(line=i, id=f"repo@{i:010x}", repo="repo", commit="0" * 40, query="q", gold=("a.py",))

    tasks = [task(i) for i in range(200)]
    train, held = split_tasks(tasks)
    assert len(train) + len(held) == 200 and 70 < len(held) < 130
    for t in held:
        assert int(hashlib.sha256(f"ragit-tune:{t.id}".encode()).hexdigest(), 16) % 2 == 1
    # a task's side depends on its id alone: another order, or more tasks, move no task
    train2, held2 = split_tasks(list(reversed(tasks)) + [task(i) for i in range(200, 260)])
    assert {t.id for t in held} <= {t.id for t in held2} and {t.id for t in train} <= {t.id for t in train2}


def test_rerank_keys_are_validated_and_reach_the_weights(git_repo, cli):
    from ragit.config import load_config
    from ragit.retrieve.rerank import RerankWeights
    from ragit.retrieve.search import RetrievalParams

    root = git_repo.root
    assert RetrievalParams.from_config(load_config(root)).rerank_weights == RerankWeights()
    r = cli("config", "set", "retrieval.rerank_role", "1.5", "--format", "json", "--cwd", str(root))
    assert r.code == 2 and r.json["error"]["details"]["reason"] == "out_of_range"
    r = cli("config", "set", "retrieval.rerank_path", "-1", "--format", "json", "--cwd", str(root))
    assert r.code == 2
    for key, value in (("rerank_path", "0"), ("rerank_definition", "2"), ("rerank_file", "0.4"),
                       ("rerank_role", "0.7")):
        r = cli("config", "set", f"retrieval.{key}", value, "--format", "json", "--cwd", str(root))
        assert r.code == 0, r
    weights = RetrievalParams.from_config(load_config(root)).rerank_weights
    assert (weights.path_name, weights.path_words, weights.definition, weights.file, weights.role) == (
        0.0, 0.0, 2.0, 0.4, 0.7)
    (root / ".ragit" / "config.toml").write_text('[retrieval]\nrerank_file = "x"\n', encoding="utf-8")
    r = cli("tune", "--format", "json", "--cwd", str(root))
    assert r.code == 4 and r.json["error"]["code"] == "CONFIG_INVALID"


def test_a_chunk_size_setting_goes_to_the_ingest_table(git_repo):
    from ragit.config import load_config
    from ragit.evaluation.tune import configured, current_setting, write_setting
    from ragit.retrieve.search import RetrievalParams

    root = build_history(git_repo, alpha=1.0).root
    config = load_config(root)
    current = current_setting(config)
    assert current["chunker_version"] == "1"
    sized = dict(current, alpha=0.5, chunker_version="2")
    copy = configured(config, sized)
    assert copy["ingest"]["chunker_version"] == "2" and "chunker_version" not in copy["retrieval"]
    assert RetrievalParams.from_config(copy).alpha == 0.5
    assert load_config(root)["ingest"]["chunker_version"] == "1"  # configured() copies
    write_setting(root, sized)
    written = load_config(root)
    assert written["ingest"]["chunker_version"] == "2" and written["retrieval"]["alpha"] == 0.5
    assert "chunker_version" not in written.data["retrieval"]
