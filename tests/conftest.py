"""Shared fixtures: real git repositories in temporary directories."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

GIT_ENV = {
    "GIT_AUTHOR_NAME": "Test",
    "GIT_AUTHOR_EMAIL": "test@example.com",
    "GIT_COMMITTER_NAME": "Test",
    "GIT_COMMITTER_EMAIL": "test@example.com",
    "GIT_CONFIG_NOSYSTEM": "1",
}


@pytest.fixture(autouse=True)
def _isolated_env(monkeypatch, tmp_path_factory):
    """Keep tests away from the user's git config and ragit environment switches."""
    home = tmp_path_factory.mktemp("home")
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setenv("GIT_CONFIG_GLOBAL", str(home / ".gitconfig"))
    for key, value in GIT_ENV.items():
        monkeypatch.setenv(key, value)
    for key in ("RAGIT_NOW", "RAGIT_DEBUG", "RAGIT_SKIP_HOOKS", "RAGIT_EMBEDDER"):
        monkeypatch.delenv(key, raising=False)


class GitRepo:
    """A real git repository in a temp dir, with small helpers to write and commit files."""

    def __init__(self, root: Path):
        self.root = root

    def git(self, *args: str, check: bool = True, input: str | None = None) -> str:
        proc = subprocess.run(
            ["git", *args], cwd=self.root, capture_output=True, text=True, check=False, input=input,
        )
        if check and proc.returncode != 0:
            raise AssertionError(f"git {' '.join(args)} failed: {proc.stderr}")
        return proc.stdout.strip()

    def write(self, path: str, text: str) -> Path:
        target = self.root / path
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(text, encoding="utf-8")
        return target

    def commit(self, message: str = "commit", files: dict[str, str] | None = None) -> str:
        for path, text in (files or {}).items():
            self.write(path, text)
        self.git("add", "-A")
        self.git("commit", "-q", "--allow-empty", "-m", message)
        return self.head()

    def head(self) -> str:
        return self.git("rev-parse", "HEAD")


@pytest.fixture
def git_repo(tmp_path) -> GitRepo:
    """An empty repository (unborn HEAD) on branch ``main``."""
    root = tmp_path / "repo"
    root.mkdir()
    subprocess.run(["git", "init", "-q", "-b", "main", str(root)], check=True)
    return GitRepo(root)
