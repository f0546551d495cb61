"""`ragit eval mine | run` end to end on a small synthetic history (knowledge §21 checks)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

CONFIG = '[embedding]\nprovider = "placeholder"\ndimensions = 64\n'

AUTH_V1 = '''"""Authentication: login and session tokens."""


def login(user, password):
    """Check the password and open a session."""
    return check_password(user, password) and open_session(user)


def check_password(user, password):
    return user.password_hash == hash_password(password)


def issue_token(user):
    """Issue a signed session token for the user."""
    return sign(user.id)
'''

STORAGE_V1 = '''"""Storage: save and load records in the database."""


def save_record(db, record):
    """Write one record to the database table."""
    db.insert(record.table, record.values)


def load_record(db, table, key):
    return db.select(table, key)
'''

GUIDE_V1 = "# Guide\n\n## Sessions\n\nUsers log in and receive a session token.\n\n## Storage\n\nRecords live in the database.\n"


def ragit(*args: str, cwd: Path) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "ragit", *args], cwd=cwd, capture_output=True, text=True,
                          check=False)


def envelope(proc: subprocess.CompletedProcess) -> dict:
    return json.loads(proc.stdout)


@pytest.fixture
def history(git_repo):
    """Commits touching code, docs and tests, plus commits every filter must drop."""
    r = git_repo
    (r.root / ".ragit").mkdir()
    (r.root / ".ragit" / "config.toml").write_text(CONFIG)
    r.commit("Initial layout", {
        ".gitignore": ".ragit/\n", "src/app/auth.py": AUTH_V1, "src/app/storage.py": STORAGE_V1,
        "docs/guide.md": GUIDE_V1, "tests/test_auth.py": "def test_login():\n    assert True\n",
        "README.md": "# App\n\nA small app.\n",
    })
    r.commit("Add token refresh to the login flow", {
        "src/app/auth.py": AUTH_V1 + '\n\ndef refresh_token(token):\n    """Refresh an expiring token."""\n    return sign(token.user_id)\n',
        "tests/test_auth.py": "def test_login():\n    assert True\n\n\ndef test_refresh():\n    assert True\n",
    })
    r.commit("Fix typo in the guide", {"docs/guide.md": GUIDE_V1.replace("receive", "recieve")})
    r.commit("Release 1.0", {"src/app/__init__.py": '__version__ = "1.0"\n'})
    r.commit("Store sessions in the database (#12)\n\nSessions survive a restart now.\n\n"
             "Co-authored-by: Someone <someone@example.com>\nSigned-off-by: Test <test@example.com>", {
                 "src/app/storage.py": STORAGE_V1 + "\n\ndef save_session(db, session):\n    save_record(db, session)\n",
                 "docs/guide.md": GUIDE_V1 + "\nSessions are stored in the database too.\n",
             })
    r.git("checkout", "-q", "-b", "feature")
    r.commit("Load sessions lazily from storage", {
        "src/app/storage.py": STORAGE_V1 + "\n\ndef load_session(db, key):\n    return load_record(db, 'sessions', key)\n",
    })
    r.git("checkout", "-q", "main")
    r.git("merge", "-q", "--no-ff", "-m", "Merge branch 'feature'", "feature")
    r.commit("Add a changelog", {"CHANGELOG.md": "# Changes\n"})
    return r


def test_mine_then_run_is_deterministic_and_reuses_the_store(history, tmp_path):
    root = history.root
    out = tmp_path / "tasks.jsonl"
    mined = ragit("eval", "mine", "--out", str(out), "--format", "json", cwd=root)
    assert mined.returncode == 0, mined.stderr
    data = envelope(mined)["data"]
    assert list(data) == ["out", "tasks", "scanned", "skipped", "seed", "warnings"]
    assert data["out"] == str(out)
    assert data["tasks"] == 3
    assert data["skipped"]["merge"] == 1 and data["skipped"]["release"] == 1
    assert data["skipped"]["typo_or_format"] == 1 and data["skipped"]["root_commit"] == 1
    assert data["scanned"] == data["tasks"] + sum(data["skipped"].values())
    first_bytes = out.read_bytes()
    tasks = [json.loads(line) for line in first_bytes.decode().splitlines()]
    assert all(list(t) == ["id", "repo", "commit", "fix_commit", "query", "gold", "mentions_gold_name"]
               for t in tasks)
    by_query = {t["query"]: t for t in tasks}
    assert by_query["Add token refresh to the login flow"]["gold"] == ["src/app/auth.py"]
    stored = by_query["Store sessions in the database Sessions survive a restart now."]
    assert stored["gold"] == ["src/app/storage.py"]  # docs are never gold for a code task
    assert stored["commit"] == history.git("rev-parse", f"{stored['fix_commit']}^")
    assert stored["id"] == f"{root.name}@{stored['fix_commit'][:10]}"

    again = ragit("eval", "mine", "--out", str(out), "--format", "json", cwd=root)
    assert again.returncode == 0 and out.read_bytes() == first_bytes

    before_manifests = sorted((root / ".ragit").rglob("manifest/*.json"))
    run1 = ragit("eval", "run", str(out), "--format", "json", cwd=root)
    assert run1.returncode == 0, run1.stdout + run1.stderr
    result = envelope(run1)["data"]
    assert list(result) == ["tasksFile", "tasks", "evaluated", "skipped", "embedderId", "modes", "comparisons",
                            "timing", "warnings"]
    timing = result["timing"]
    assert timing["ingestedCommits"] == 3 and timing["ingestSeconds"] > 0 and timing["querySeconds"] > 0
    assert [t["id"] for t in timing["perTask"]] == [t["id"] for t in tasks]
    for t in timing["perTask"]:
        parts = t["load"] + t["vector"] + t["keyword"] + t["rank"]
        assert abs(t["seconds"] - parts) < 1e-5 and min(t["load"], t["rank"]) > 0
    assert result["evaluated"] == 3 and result["skipped"] == []
    assert [m["mode"] for m in result["modes"]] == ["keyword", "vector", "hybrid"]
    for m in result["modes"]:
        values = [m[k] for k in ("recallAt1", "recallAt5", "recallAt10", "accAt5", "accAt10", "mrr", "ndcgAt10")]
        values += list(m["packRecall"].values())
        assert all(0 <= v <= 1 for v in values), m
        assert list(m["packRecall"]) == ["600", "1200", "2400"]
        assert all(0 < t <= int(b) for b, t in m["tokensPerTask"].items())
    assert len(result["comparisons"]) == 12
    for c in result["comparisons"]:
        assert c["ci95"][0] <= c["diff"] <= c["ci95"][1]
    assert not (root / ".ragit" / "manifest").exists() and before_manifests == []
    assert (root / ".ragit" / "cache" / "eval").is_dir()

    from ragit.config import load_config
    from ragit.contract.jsonout import normalize_numbers
    from ragit.evaluation.run import EvalRequest, open_repository, run_eval
    from ragit.evaluation.tasks import load_tasks

    request = EvalRequest(str(out), load_tasks(out, str(out)), [open_repository(root, str(root))],
                          ["keyword", "vector", "hybrid"], [600, 1200, 2400])
    second = run_eval(root, load_config(root), request)
    assert second.ingested == 0 and second.embedded_chunks == 0

    def without_seconds(data: dict) -> dict:
        data = json.loads(json.dumps(normalize_numbers(data)))
        for m in data["modes"]:
            m.pop("secondsPerTask")
        data.pop("timing")
        return data

    assert without_seconds(second.data) == without_seconds(result)
    run3 = ragit("eval", "run", str(out), "--format", "json", cwd=root)
    assert without_seconds(envelope(run3)["data"]) == without_seconds(result)
    def strip(text: str) -> list[str]:
        data = json.loads(text)
        data["data"] = without_seconds(data["data"])
        return json.dumps(data, indent=2).splitlines()

    assert strip(run3.stdout) == strip(run1.stdout)

    text = ragit("eval", "run", str(out), "--mode", "hybrid", "--budget", "800", "--format", "text", cwd=root)
    assert text.returncode == 0
    lines = text.stdout.splitlines()
    assert lines[:4] == ["# ragit eval run", "- tasks: 3", "- evaluated: 3", "- skipped: 0"]
    assert lines[5].startswith("| mode | R@1 | R@5 | R@10 | Acc@5 | Acc@10 | MRR | NDCG@10 | pack@800 | tokens@800 | s/task |")
    assert lines[7].startswith("| hybrid | ")
    assert lines[-1].startswith("timing: ingest ") and "(0 commit(s) indexed); queries " in lines[-1]
    assert lines[-1].endswith(" s CPU per task)")


def test_per_task_file_holds_each_tasks_ranking_and_agrees_with_the_means(history, tmp_path):
    root = history.root
    tasks_file = tmp_path / "tasks.jsonl"
    assert ragit("eval", "mine", "--out", str(tasks_file), "--format", "json", cwd=root).returncode == 0
    tasks = [json.loads(line) for line in tasks_file.read_text().splitlines()]
    per = tmp_path / "per.jsonl"
    proc = ragit("eval", "run", str(tasks_file), "--per-task", str(per), "--format", "json", cwd=root)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    data = envelope(proc)["data"]
    assert list(data)[-2:] == ["perTask", "warnings"] and data["perTask"] == str(per)
    rows = [json.loads(line) for line in per.read_text().splitlines()]
    assert [(r["id"], r["mode"]) for r in rows] == [(t["id"], m) for t in tasks for m in ("keyword", "vector", "hybrid")]
    for r in rows:
        task = next(t for t in tasks if t["id"] == r["id"])
        assert list(r) == ["id", "mode", "query", "gold", "files", "recallAt5", "recallAt10", "mrr", "ndcgAt10"]
        assert r["query"] == task["query"] and list(r["gold"]) == task["gold"] and len(r["files"]) <= 10
        ranks = [k for k in r["gold"].values() if k is not None]
        # each gold file's rank is its place among the files, and the metrics follow from the ranks
        assert all(r["files"][k - 1] == path for path, k in r["gold"].items() if k is not None and k <= 10)
        assert r["recallAt10"] == sum(k <= 10 for k in ranks) / len(r["gold"])
        assert r["mrr"] == (1 / min(ranks) if ranks else 0.0)
    for m in data["modes"]:
        mine = [r for r in rows if r["mode"] == m["mode"]]
        assert abs(sum(r["recallAt5"] for r in mine) / len(mine) - m["recallAt5"]) < 1e-6
        assert abs(sum(r["mrr"] for r in mine) / len(mine) - m["mrr"]) < 1e-6

    # a file in a directory that does not exist: INPUT_INVALID before any work, nothing written
    missing = tmp_path / "nope" / "per.jsonl"
    bad = ragit("eval", "run", str(tasks_file), "--per-task", str(missing), "--format", "json", cwd=root)
    error = envelope(bad)["error"]
    assert bad.returncode == 2 and error["code"] == "INPUT_INVALID" and error["details"]["field"] == "--per-task"
    assert not missing.parent.exists()


def test_run_skips_tasks_whose_commit_no_repository_holds(history, tmp_path):
    head = history.head()
    tasks = tmp_path / "tasks.jsonl"
    tasks.write_text(
        json.dumps({"id": "a", "repo": "x/y", "commit": head, "query": "session token", "gold": ["src/app/auth.py"]})
        + "\n\n"
        + json.dumps({"id": "b", "repo": "x/y", "commit": "0" * 40, "query": "q", "gold": ["a.py"], "extra": 1}) + "\n"
    )
    proc = ragit("eval", "run", str(tasks), "--repo", str(history.root), "--mode", "keyword", "--format", "json",
                 cwd=history.root)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    data = envelope(proc)["data"]
    assert data["tasks"] == 2 and data["evaluated"] == 1
    assert data["skipped"] == [{"id": "b", "reason": "commit_not_found"}]
    assert [m["mode"] for m in data["modes"]] == ["keyword"] and data["comparisons"] == []


@pytest.mark.parametrize(("line", "field", "reason"), [
    ("not json", "tasks[2]", "invalid_json"),
    ('["a"]', "tasks[2]", "not_object"),
    ('{"repo": "x/y", "commit": "%s", "query": "q", "gold": ["a.py"]}', "tasks[2].id", "required"),
    ('{"id": "z", "repo": "x/y", "commit": "abc", "query": "q", "gold": ["a.py"]}', "tasks[2].commit", "invalid_format"),
    ('{"id": "z", "repo": "x/y", "commit": "%s", "query": " ", "gold": ["a.py"]}', "tasks[2].query", "empty"),
    ('{"id": "z", "repo": "x/y", "commit": "%s", "query": "q", "gold": []}', "tasks[2].gold", "empty"),
    ('{"id": "z", "repo": "x/y", "commit": "%s", "query": "q", "gold": "a.py"}', "tasks[2].gold", "not_array"),
    ('{"id": "a", "repo": "x/y", "commit": "%s", "query": "q", "gold": ["a.py"]}', "tasks[2].id", "duplicate"),
])
def test_malformed_task_lines_are_input_invalid_before_any_work(history, tmp_path, line, field, reason):
    head = history.head()
    good = json.dumps({"id": "a", "repo": "x/y", "commit": head, "query": "q", "gold": ["a.py"]})
    tasks = tmp_path / "tasks.jsonl"
    tasks.write_text(good + "\n\n" + (line % head if "%s" in line else line) + "\n")
    proc = ragit("eval", "run", str(tasks), "--format", "json", cwd=history.root)
    assert proc.returncode == 2
    error = envelope(proc)["error"]
    assert error["code"] == "INPUT_INVALID"
    assert (error["details"]["field"], error["details"]["reason"]) == (field, reason)
    assert not (history.root / ".ragit" / "cache").exists()


@pytest.mark.parametrize(("args", "field"), [
    (["--mode", "fuzzy"], "--mode"),
    (["--budget", "0"], "--budget"),
    (["--budget", "600,abc"], "--budget"),
    (["--budget", ","], "--budget"),
    (["--seed", "-1"], "--seed"),
])
def test_bad_run_options_are_input_invalid(history, tmp_path, args, field):
    tasks = tmp_path / "tasks.jsonl"
    tasks.write_text(json.dumps({"id": "a", "repo": "x/y", "commit": history.head(), "query": "q", "gold": ["a.py"]}))
    proc = ragit("eval", "run", str(tasks), *args, "--format", "json", cwd=history.root)
    assert proc.returncode == 2
    error = envelope(proc)["error"]
    assert error["code"] == "INPUT_INVALID" and error["details"]["field"] == field


def test_missing_task_file_is_input_invalid(history, tmp_path):
    proc = ragit("eval", "run", str(tmp_path / "nope.jsonl"), "--format", "json", cwd=history.root)
    error = envelope(proc)["error"]
    assert proc.returncode == 2 and error["code"] == "INPUT_INVALID"
    assert error["details"]["field"] == "tasksFile"


def test_repo_that_is_not_git_is_rejected(history, tmp_path, monkeypatch):
    monkeypatch.setenv("GIT_CEILING_DIRECTORIES", str(tmp_path))
    plain = tmp_path / "plain"
    plain.mkdir()
    tasks = tmp_path / "tasks.jsonl"
    tasks.write_text(json.dumps({"id": "a", "repo": "x/y", "commit": history.head(), "query": "q", "gold": ["a.py"]}))
    proc = ragit("eval", "run", str(tasks), "--repo", str(plain), "--format", "json", cwd=history.root)
    assert proc.returncode == 3
    assert envelope(proc)["error"]["code"] == "GIT_REPOSITORY_REQUIRED"


def test_mine_options_and_outside_git(history, tmp_path, monkeypatch):
    out = tmp_path / "t.jsonl"
    for args, field in ((["--count", "0"], "--count"), (["--ext", ","], "--ext"), (["--seed", "x"], "--seed"),
                        ([], "--out")):
        extra = [] if field == "--out" else ["--out", str(out)]
        proc = ragit("eval", "mine", *extra, *args, "--format", "json", cwd=history.root)
        assert proc.returncode == 2 and envelope(proc)["error"]["details"]["field"] == field
    assert not out.exists()

    monkeypatch.setenv("GIT_CEILING_DIRECTORIES", str(tmp_path))
    plain = tmp_path / "plain"
    plain.mkdir()
    proc = ragit("eval", "mine", "--out", str(out), "--format", "json", cwd=plain)
    assert proc.returncode == 3 and envelope(proc)["error"]["code"] == "GIT_REPOSITORY_REQUIRED"


def test_mine_count_and_seed_select_by_hash(history, tmp_path):
    out = tmp_path / "t.jsonl"
    proc = ragit("eval", "mine", "--out", str(out), "--count", "2", "--ext", "py", "--format", "json",
                 cwd=history.root)
    data = envelope(proc)["data"]
    assert data["tasks"] == 2 and data["skipped"]["not_sampled"] == 1
    from ragit.evaluation.mine import sample_key

    fixes = [json.loads(line)["fix_commit"] for line in out.read_text().splitlines()]
    assert fixes == sorted(fixes, key=lambda sha: sample_key(0, sha))
    assert all(not g.endswith(".md") for line in out.read_text().splitlines() for g in json.loads(line)["gold"])


def test_describe_lists_eval_commands(history):
    for path in ("eval mine", "eval run"):
        proc = ragit("describe", *path.split(), "--format", "json", cwd=history.root)
        assert proc.returncode == 0
        spec = envelope(proc)["data"]["spec"]
        assert spec["path"] == path and spec["group"] == "eval"


def test_cached_ranking_across_alphas_equals_a_fresh_search(history, tmp_path):
    """eval ranks one set of scores under several alphas with a shared row cache; every ranking
    must equal what a fresh query at that alpha returns."""
    from ragit.config import load_config
    from ragit.embed import load_embedder
    from ragit.evaluation.run import EvalRequest, eval_config, open_repository, run_eval
    from ragit.evaluation.tasks import Task
    from ragit.ingest.manifest import load_manifest
    from ragit.retrieve.readiness import open_checked_store
    from ragit.retrieve.search import RetrievalParams, rank_hits, score_snapshot, search_snapshot

    root, head = history.root, history.head()
    config = load_config(root)
    task = Task(0, "t", "x/y", head, "database session token", ("src/app/storage.py",))
    run_eval(root, config, EvalRequest("t", [task], [open_repository(root, "r")], ["hybrid"], [600]))
    embedder = load_embedder(config)
    econfig = eval_config(config, embedder.id)
    store = open_checked_store(root, econfig, load_manifest(root, econfig, head), embedder.id)
    try:
        scores = score_snapshot(store, head, embedder, task.query, RetrievalParams())
        rows: dict = {}
        for alpha in (0.0, 0.7, 1.0):
            for top_k in (3, 100):
                ours = rank_hits(store, head, scores, (), RetrievalParams(alpha), top_k, task.query, rows_cache=rows)
                theirs = search_snapshot(store, head, embedder, task.query, RetrievalParams(alpha), top_k)
                assert [(h.chunk_id, h.path, h.score_final, h.breakdown) for h in ours] == \
                       [(h.chunk_id, h.path, h.score_final, h.breakdown) for h in theirs]
    finally:
        store.close()


def _task(i: int, commit: str, query: str, gold, **extra) -> str:
    return json.dumps({"id": f"t{i}", "repo": "x/y", "commit": commit, "query": query, "gold": gold, **extra})


def test_code_search_tasks_roots_spans_categories_and_languages(history, tmp_path):
    """The code-search benchmark's task form: a root (only files under it are indexed), span gold,
    secondary files, categories and languages, with the benchmark's NDCG@10 per table."""
    head = history.head()
    tasks = tmp_path / "cs.jsonl"
    tasks.write_text("\n".join([
        _task(1, head, "save a record to the database", [{"path": "src/app/storage.py", "startLine": 1, "endLine": 6}],
              root="src/app", category="semantic", language="python", secondary=["src/app/auth.py"]),
        _task(2, head, "login", ["src/app/auth.py"], root="src", category="symbol", language="python"),
        _task(3, head, "session token", ["docs/guide.md"], category="semantic", language="markdown"),
    ]) + "\n")
    proc = ragit("eval", "run", str(tasks), "--mode", "keyword", "--format", "json", cwd=history.root)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    mode = envelope(proc)["data"]["modes"][0]
    assert list(mode["byCategory"]) == ["semantic", "symbol"] and mode["byCategory"]["symbol"]["tasks"] == 1
    assert list(mode["byLanguage"]) == ["markdown", "python"] and mode["byLanguage"]["python"]["tasks"] == 2
    for row in [mode, *mode["byCategory"].values(), *mode["byLanguage"].values()]:
        assert 0 <= row["ndcgAt10"] <= 1
    text = ragit("eval", "run", str(tasks), "--mode", "keyword", "--format", "text", cwd=history.root).stdout
    assert "NDCG@10 by category:" in text and "NDCG@10 by language:" in text

    # a root limits the index: the root "src/app" store holds nothing else
    from ragit.config import load_config
    from ragit.embed import load_embedder
    from ragit.evaluation.run import eval_config
    from ragit.ingest.manifest import load_manifest

    config = load_config(history.root)
    scoped = eval_config(config, load_embedder(config).id, "src/app")
    paths = [d.path for d in load_manifest(history.root, scoped, head).manifest.docs]
    assert paths and all(p.startswith("src/app/") for p in paths)


def test_ndcg_counts_each_target_once_at_its_first_covering_hit():
    import math

    from ragit.evaluation.metrics import ndcg_at_k
    from ragit.evaluation.tasks import GoldEntry

    class H:
        def __init__(self, path, a=1, b=10):
            self.path, self.start_line, self.end_line = path, a, b

    gold = (GoldEntry("a.py"), GoldEntry("b.py", 20, 30))
    assert ndcg_at_k([H("a.py"), H("b.py", 21, 25)], gold) == 1.0
    assert ndcg_at_k([H("a.py"), H("a.py"), H("b.py", 1, 19)], gold) == 1 / (1 + 1 / math.log2(3))  # span missed
    got = ndcg_at_k([H("c.py"), H("a.py"), H("b.py", 25, 40)], gold)
    assert math.isclose(got, (1 / math.log2(3) + 1 / math.log2(4)) / (1 + 1 / math.log2(3)))
    assert ndcg_at_k([H("x.py")] * 10 + [H("a.py")], gold) == 0.0  # only the top 10 count


def test_a_changed_task_set_indexes_only_its_new_commits(history, tmp_path):
    """The evaluation store is not keyed by the task set: per-snapshot statistics make a
    snapshot's scores independent of what else the store holds."""
    from ragit.config import load_config
    from ragit.evaluation.run import EvalRequest, open_repository, run_eval
    from ragit.evaluation.tasks import load_tasks

    commits = history.git("rev-list", "--first-parent", "main").split()
    first = tmp_path / "a.jsonl"
    first.write_text(_task(1, commits[1], "session token database", ["src/app/storage.py"]) + "\n"
                     + _task(2, commits[2], "login token", ["src/app/auth.py"]) + "\n")
    grown = tmp_path / "b.jsonl"
    grown.write_text(first.read_text() + _task(3, commits[3], "refresh token", ["src/app/auth.py"]) + "\n")
    config = load_config(history.root)
    repos = [open_repository(history.root, "r")]

    def run(path):
        return run_eval(history.root, config, EvalRequest(str(path), load_tasks(path, str(path)), repos,
                                                          ["hybrid"], [600]))

    a = run(first)
    assert a.ingested == 2
    b = run(grown)
    assert b.ingested == 1  # only the new task's commit
    again = run(first)
    assert again.ingested == 0

    def metrics(r):
        m = dict(r.data["modes"][0])
        m.pop("secondsPerTask")
        return m

    assert metrics(again) == metrics(a)  # the extra snapshot in the store changed nothing
    assert again.data["timing"]["ingestedCommits"] == 0


def test_keyword_reads_shared_by_a_batch_change_no_score(history, tmp_path, monkeypatch):
    """Tasks are keyword-scored in batches that read each term once: batches of one task, one
    batch, and keyword_raw's own reading per task give the same scores and the same report."""
    import numpy as np

    from ragit.config import load_config
    from ragit.embed import load_embedder
    from ragit.evaluation import measure
    from ragit.evaluation.run import EvalRequest, eval_config, open_repository, run_eval
    from ragit.evaluation.tasks import load_tasks
    from ragit.ingest.manifest import load_manifest
    from ragit.retrieve.readiness import open_checked_store
    from ragit.retrieve.search import RetrievalParams, keyword_raw, load_matrix

    commits = history.git("rev-list", "--first-parent", "main").split()
    path = tmp_path / "tasks.jsonl"
    path.write_text("".join(_task(i, sha, q, ["src/app/auth.py"]) + "\n" for i, (sha, q) in enumerate([
        (commits[0], "session token login"), (commits[1], "database record session"),
        (commits[3], "login token refresh"), (commits[1], "token token token sign"), (commits[2], "zebra quantum"),
    ])))
    config = load_config(history.root)
    request = EvalRequest(str(path), load_tasks(path, str(path)), [open_repository(history.root, "r")],
                          ["keyword", "vector", "hybrid"], [600])
    seen: list[tuple[str, bytes]] = []
    from ragit.store import bm25  # measure imports snapshot_scores when it runs: spy on the module

    real = bm25.snapshot_scores

    def spy(postings, terms, rowids, lengths, extra=()):
        out = real(postings, terms, rowids, lengths, extra)
        seen.append((" ".join(terms), out[0].tobytes()))
        return out

    monkeypatch.setattr(bm25, "snapshot_scores", spy)
    one_batch = run_eval(history.root, config, request).data
    batched_scores = list(seen)
    monkeypatch.setattr(measure, "BATCH_ROWS", 1)  # every task its own batch
    seen.clear()
    singles = run_eval(history.root, config, request).data
    assert seen == batched_scores and len(seen) == 5

    for data in (one_batch, singles):
        data.pop("timing")
        for m in data["modes"]:
            m.pop("secondsPerTask")
    assert one_batch == singles

    monkeypatch.setattr(bm25, "snapshot_scores", real)
    embedder = load_embedder(config)
    econfig = eval_config(config, embedder.id)
    params = RetrievalParams.from_config(config)
    for task, (_, got) in zip(request.tasks, batched_scores):
        store = open_checked_store(history.root, econfig, load_manifest(history.root, econfig, task.commit),
                                   embedder.id)
        try:
            snap = load_matrix(store, task.commit, embedder.id)
            raw = keyword_raw(store, snap, task.query, term_repeats=params.term_repeats)[0]
        finally:
            store.close()
        assert raw.tobytes() == got and (np.count_nonzero(raw) > 0) == (task.id != "t4")


def test_missing_git_objects_are_skipped_with_a_warning(history, tmp_path):
    """A partial clone lists blobs it does not hold (`git ls-tree -l` prints BAD): eval and
    ingest skip those files with a warning and go on."""
    import shutil

    clone = tmp_path / "partial"
    shutil.copytree(history.root, clone)
    head = history.head()
    blob = subprocess.run(["git", "rev-parse", f"{head}:docs/guide.md"], cwd=clone, capture_output=True,
                          text=True, check=True).stdout.strip()
    subprocess.run(["git", "repack", "-a", "-d", "-q"], cwd=clone, check=True)  # loose objects -> one pack
    subprocess.run(["git", "prune-packed"], cwd=clone, check=True)
    # rebuild the pack without the blob, as a partial clone would lack it
    objects = subprocess.run(["git", "cat-file", "--batch-all-objects", "--batch-check=%(objectname)"], cwd=clone,
                             capture_output=True, text=True, check=True).stdout.split()
    keep = "\n".join(o for o in objects if o != blob) + "\n"
    packdir = clone / ".git" / "objects" / "pack"
    old = list(packdir.iterdir())
    subprocess.run(["git", "pack-objects", "-q", str(packdir / "pack")], cwd=clone, input=keep, text=True,
                   check=True, capture_output=True)
    for f in old:
        f.unlink()
    listing = subprocess.run(["git", "ls-tree", "-r", "-l", head], cwd=clone, capture_output=True, text=True).stdout
    assert "BAD\tdocs/guide.md" in listing
    tasks = tmp_path / "t.jsonl"
    tasks.write_text(_task(1, head, "session token", ["src/app/auth.py"]) + "\n")
    proc = ragit("eval", "run", str(tasks), "--repo", str(clone), "--mode", "keyword", "--format", "json",
                 cwd=history.root)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    data = envelope(proc)["data"]
    assert data["evaluated"] == 1
    assert any("missing from the clone" in w for w in data["warnings"])



def test_mined_queries_are_masked(history, tmp_path):
    """A secret pasted into a commit message does not reach the task file (knowledge §10)."""
    r = history
    r.commit("Rotate the deploy token ghp_ABCDEFGHIJKLMNOPQRSTUVWXYZ12 used by issue_token",
             {"src/app/auth.py": AUTH_V1 + '\n\ndef rotate(token):\n    """Rotate the deploy token."""\n    return token\n'})
    out = tmp_path / "t.jsonl"
    proc = ragit("eval", "mine", "--out", str(out), "--count", "50", "--format", "json", cwd=r.root)
    assert proc.returncode == 0, proc.stderr
    text = out.read_text(encoding="utf-8")
    assert "ghp_ABCDEFGHIJKLMNOPQRSTUVWXYZ12" not in text
    queries = [json.loads(line)["query"] for line in text.splitlines()]
    assert any(q.startswith("Rotate the deploy token ghp_AB***") for q in queries)


def test_the_evaluation_store_refreshes_its_packed_postings_once_per_run(history, tmp_path, monkeypatch):
    """Each commit's publish would read the index's postings of its new rows' terms, a cost that
    grows with the whole store; ``eval run`` defers that refresh and does it once after the last
    commit, and the file then matches the index (answers as fts5vocab does)."""
    from ragit.config import load_config
    from ragit.evaluation.run import EvalRequest, open_repository, run_eval
    from ragit.evaluation.tasks import load_tasks
    from ragit.store import packedpostings
    from ragit.store.bm25 import PostingsReader
    from ragit.store.sqlite import SqliteStore

    monkeypatch.setattr(packedpostings, "MIN_ROWS", 1)  # every store keeps the file
    calls = []
    real = packedpostings.refresh
    monkeypatch.setattr(packedpostings, "refresh", lambda *a: calls.append(real(*a)) or calls[-1])
    commits = history.git("rev-list", "--first-parent", "main").split()
    tasks = tmp_path / "t.jsonl"
    tasks.write_text("".join(_task(i, c, "session token", ["src/app/auth.py"]) + "\n"
                             for i, c in enumerate(commits[:4], 1)))
    request = EvalRequest(str(tasks), load_tasks(tasks, str(tasks)), [open_repository(history.root, "r")],
                          ["hybrid"], [600])
    result = run_eval(history.root, load_config(history.root), request)
    assert result.ingested == 4 and calls == ["built"]  # one refresh, not one per commit
    [db] = (history.root / ".ragit").rglob("postings.db")
    store = SqliteStore.open_read(db.parent)
    try:
        assert packedpostings.refresh(db.parent, store.conn) == "kept"  # it matches the index
        packed, plain = store.postings(), PostingsReader(store.conn, "chunks_vocab", "chunks_fts_data")
        for (term,) in store.conn.execute("SELECT DISTINCT term FROM chunks_vocab"):
            assert [a.tobytes() for a in packed(term)] == [b.tobytes() for b in plain(term)], term
    finally:
        store.close()
