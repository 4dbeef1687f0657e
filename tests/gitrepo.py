"""Real git repositories in a temporary directory, for the CI-gate and pre-commit tests."""
from __future__ import annotations

import os
import subprocess
from pathlib import Path

from tests.conftest import write_tree

GIT_ENV = {
    **os.environ,
    "GIT_AUTHOR_NAME": "Test Author", "GIT_AUTHOR_EMAIL": "author@example.com",
    "GIT_COMMITTER_NAME": "Test Author", "GIT_COMMITTER_EMAIL": "author@example.com",
    "GIT_CONFIG_GLOBAL": os.devnull, "GIT_CONFIG_NOSYSTEM": "1",
}


def git(cwd: Path, *args: str) -> str:
    done = subprocess.run(["git", *args], cwd=cwd, env=GIT_ENV, capture_output=True, text=True, check=False)
    assert done.returncode == 0, f"git {' '.join(args)}: {done.stderr}"
    return done.stdout


class GitRepo:
    def __init__(self, root: Path, files: dict[str, str] | None = None):
        self.root = root
        root.mkdir(parents=True, exist_ok=True)
        git(root, "init", "-q", "-b", "main")
        if files:
            self.commit(files, "first")

    def git(self, *args: str) -> str:
        return git(self.root, *args)

    def write(self, files: dict[str, str]) -> None:
        write_tree(self.root, files)

    def commit(self, files: dict[str, str] | None = None, message: str = "change") -> None:
        if files:
            self.write(files)
        self.git("add", "-A")
        self.git("commit", "-q", "-m", message)
