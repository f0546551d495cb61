"""Revisions (knowledge §5.1, §5.4, §7.1): ``ingest --since`` and ``ingest --at`` take any
revision, resolved once; reads keep the exact-snapshot rule but name the commit a refused
revision resolves to, and their "not indexed" recovery indexes exactly the requested commit."""

from __future__ import annotations

import json
import shlex

import pytest

from conftest import write_placeholder_config


def ingest(cli, repo, *args, **kw):
    return cli("ingest", *args, "--cwd", str(repo.root), "--format", "json", **kw)


def manifest(repo, sha):
    return json.loads((repo.root / ".ragit" / "manifest" / f"{sha}.json").read_text())


def has_manifest(repo, sha) -> bool:
    return (repo.root / ".ragit" / "manifest" / f"{sha}.json").is_file()


@pytest.fixture
def history(git_repo):
    """Three commits on main (first one indexed), a tag on the second: ``(repo, [c1, c2, c3])``."""
    write_placeholder_config(git_repo.root)
    c1 = git_repo.commit("one", {"docs/a.md": "# A\n\nalpha one\n"})
    c2 = git_repo.commit("two", {"docs/b.md": "# B\n\nbeta two\n"})
    git_repo.git("tag", "-a", "v2", "-m", "release two")  # annotated: must be peeled to the commit
    c3 = git_repo.commit("three", {"docs/c.md": "# C\n\ngamma three\n"})
    return git_repo, [c1, c2, c3]


@pytest.mark.parametrize("rev", ["HEAD~2", "main~2", "SHORT", "v2~1"])
def test_since_takes_any_revision_resolved_once(history, cli, rev):
    repo, (c1, _, c3) = history
    assert ingest(cli, repo, "--at", c1).code == 0
    rev = c1[:7] if rev == "SHORT" else rev
    r = ingest(cli, repo, "--since", rev)
    assert r.code == 0, r
    d = r.json["data"]
    assert d["commitSha"] == c3 and d["plannedFiles"] == ["docs/b.md", "docs/c.md"]
    assert manifest(repo, c3)["ingest"] == {"mode": "since", "baseSha": c1}  # the exact commit, recorded


def test_since_with_a_tag_and_a_branch(history, cli):
    repo, (_, c2, c3) = history
    assert ingest(cli, repo, "--at", "v2").code == 0  # an annotated tag indexes its commit
    assert has_manifest(repo, c2)
    repo.git("branch", "release", c2)
    r = ingest(cli, repo, "--since", "release")
    assert r.code == 0, r
    assert manifest(repo, c3)["ingest"] == {"mode": "since", "baseSha": c2}


@pytest.mark.parametrize("option", ["--since", "--at"])
@pytest.mark.parametrize("rev", ["no-such-branch", "HEAD~9", "deadbeef"])
def test_an_unresolvable_revision_is_ref_invalid(history, cli, option, rev):
    repo, _ = history
    r = ingest(cli, repo, option, rev)
    assert r.code == 2, r
    err = r.json["error"]
    assert err["code"] == "SNAPSHOT_REF_INVALID" and err["details"] == {"ref": rev}
    assert not (repo.root / ".ragit" / "manifest").exists()


def test_a_revision_that_looks_like_an_option_is_refused(history, cli):
    repo, _ = history
    r = ingest(cli, repo, "--at=--output=x")
    assert r.code == 2 and r.json["error"]["code"] == "SNAPSHOT_REF_INVALID"
    assert not (repo.root / "x").exists()


def test_at_indexes_an_older_commit_without_touching_head(history, cli):
    repo, (c1, c2, c3) = history
    r = ingest(cli, repo, "--at", "HEAD~1")
    assert r.code == 0, r
    d = r.json["data"]
    assert d["commitSha"] == c2 and d["manifestPath"] == f".ragit/manifest/{c2}.json"
    assert d["plannedFiles"] == ["docs/a.md", "docs/b.md"]  # c2's tree, not HEAD's
    assert has_manifest(repo, c2) and not has_manifest(repo, c3)
    q = cli("query", "beta", "--at", c2[:10], "--cwd", str(repo.root), "--format", "json")
    assert q.code == 0 and q.json["data"]["snapshotSha"] == c2
    assert all(h["path"] != "docs/c.md" for h in q.json["data"]["hits"])


def test_at_combines_with_since_and_files(history, cli):
    repo, (c1, c2, c3) = history
    assert ingest(cli, repo, "--at", c1).code == 0
    r = ingest(cli, repo, "--since", c1, "--at", "v2")
    assert r.code == 0, r
    assert r.json["data"]["commitSha"] == c2 and r.json["data"]["plannedFiles"] == ["docs/b.md"]
    assert r.json["data"]["baseSha"] == c1  # the revision, resolved once and reported
    assert manifest(repo, c2)["ingest"] == {"mode": "since", "baseSha": c1}
    # --files with --at: the base is the --at commit's own manifest (here c2's)
    r = ingest(cli, repo, "--files", "docs/b.md", "--at", c2)
    assert r.code == 0 and r.json["data"]["plannedFiles"] == ["docs/b.md"]
    assert manifest(repo, c2)["ingest"] == {"mode": "files", "baseSha": c2}
    assert [doc["path"] for doc in manifest(repo, c2)["docs"]] == ["docs/a.md", "docs/b.md"]
    # --since must be an ancestor of the --at commit, not of HEAD
    r = ingest(cli, repo, "--since", c3, "--at", c2)
    assert r.code == 2 and r.json["error"]["code"] == "INGEST_BASE_NOT_ANCESTOR"
    assert r.json["error"]["details"] == {"since": c3, "resolvedSha": c3, "head": c2}
    assert r.json["error"]["recovery"] == {"command": f"ragit ingest --all --at {c2}"}


def test_at_another_commit_ignores_the_dirty_worktree(history, cli):
    repo, (_, c2, c3) = history
    repo.write("docs/a.md", "# A\n\nuncommitted edit\n")  # a blocking dirty Markdown candidate
    r = ingest(cli, repo, "--at", "HEAD")
    assert r.code == 3 and r.json["error"]["code"] == "INGEST_CANDIDATES_DIRTY"
    r = ingest(cli, repo, "--at", "HEAD~1")
    assert r.code == 0, r
    assert r.json["data"]["commitSha"] == c2 and r.json["data"]["dirtyCandidates"] == []
    assert "uncommitted" not in json.dumps(manifest(repo, c2))


def test_at_in_json_input_and_the_mixed_input_guard(history, cli):
    repo, (_, c2, _) = history
    (repo.root / ".ragit" / "ingest.json").write_text('{"all": true, "at": "v2"}')
    r = ingest(cli, repo, "--input", ".ragit/ingest.json")
    assert r.code == 0 and r.json["data"]["commitSha"] == c2
    r = ingest(cli, repo, "--input", ".ragit/ingest.json", "--at", "HEAD")
    assert r.code == 2
    err = r.json["error"]
    assert err["details"]["reason"] == "mixed_input" and err["details"]["conflicts"] == ["--at"]
    (repo.root / ".ragit" / "bad.json").write_text('{"at": ""}')
    r = ingest(cli, repo, "--input", ".ragit/bad.json")
    assert r.code == 2 and r.json["error"]["details"]["field"] == "input.at"


# ---------------------------------------------------------------- reads keep the exact rule


@pytest.mark.parametrize("command", [["query", "beta"], ["context", "pack", "beta"]])
def test_read_refuses_a_revision_but_names_its_commit_and_the_exact_command(history, cli, command):
    repo, (c1, c2, _) = history
    assert ingest(cli, repo, "--at", c2).code == 0
    r = cli(*command, "--at", "HEAD~1", "--view", "minimal", "--cwd", str(repo.root), "--format", "json")
    assert r.code == 2, r
    err = r.json["error"]
    assert err["code"] == "SNAPSHOT_REF_INVALID" and err["details"] == {"ref": "HEAD~1", "resolvedSha": c2}
    exact = [*command, "--at", c2, "--view", "minimal", "--format", "json", "--cwd", str(repo.root)]
    assert err["recovery"] == {"command": "ragit " + shlex.join(exact)}
    again = cli(*exact)  # the recovery, run as given, answers from that exact snapshot
    assert again.code == 0, again
    assert again.json["data"]["snapshotSha"] == c2


def test_read_refuses_a_revision_in_json_input_naming_its_commit(history, cli):
    repo, (_, c2, _) = history
    (repo.root / ".ragit" / "q.json").write_text('{"question": "beta", "at": "v2"}')
    r = cli("query", "--input", ".ragit/q.json", "--cwd", str(repo.root), "--format", "json")
    assert r.code == 2
    err = r.json["error"]
    assert err["code"] == "SNAPSHOT_REF_INVALID" and err["details"] == {"ref": "v2", "resolvedSha": c2}
    assert c2 in err["message"]


def test_unknown_revision_keeps_the_plain_ref_error(history, cli):
    repo, _ = history
    r = cli("query", "beta", "--at", "nope", "--cwd", str(repo.root), "--format", "json")
    assert r.code == 2
    assert r.json["error"]["details"] == {"ref": "nope"}
    assert r.json["error"]["recovery"] == {"command": "git rev-parse --verify HEAD"}


def test_missing_explicit_snapshot_recovery_indexes_exactly_that_commit(history, cli):
    repo, (c1, c2, c3) = history
    r = cli("query", "beta", "--at", c2, "--cwd", str(repo.root), "--format", "json")
    assert r.code == 3 and r.json["error"]["code"] == "SNAPSHOT_NOT_INDEXED"
    assert r.json["error"]["recovery"] == {"command": f"ragit ingest --at {c2}"}  # not `--all`: that is HEAD
    assert ingest(cli, repo, "--at", c1).code == 0
    r = cli("query", "beta", "--at", c2, "--cwd", str(repo.root), "--format", "json")
    err = r.json["error"]
    assert err["details"] == {"resolvedSha": c2, "nearestIndexedAncestor": c1}
    assert err["recovery"] == {"command": f"ragit ingest --since {c1} --at {c2}"}
    recovery = shlex.split(err["recovery"]["command"])[1:]
    assert ingest(cli, repo, *recovery[1:]).code == 0  # run the recovery as given
    r = cli("query", "beta", "--at", c2, "--cwd", str(repo.root), "--format", "json")
    assert r.code == 0 and r.json["data"]["snapshotSha"] == c2
    assert not has_manifest(repo, c3)


def test_api_names_the_commit_of_a_refused_revision(history):
    import ragit

    repo, (_, _, c3) = history
    api = ragit.Repo.open(repo.root)
    assert api.ingest(since=None, at="HEAD").commit_sha == c3
    with pytest.raises(ragit.RagitError) as info:
        api.query("beta", at="main", top_k=3)
    assert info.value.details == {"ref": "main", "resolvedSha": c3}
    assert info.value.recovery == f"ragit query beta --top-k 3 --at {c3}"
    with pytest.raises(ragit.RagitError) as info:
        api.pack("beta", at="v2")
    assert info.value.details["resolvedSha"] == repo.git("rev-parse", "v2^{commit}")
