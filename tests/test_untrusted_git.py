"""A scanned repository's own .git/config names programs git would run (fsmonitor, filter drivers, textconv,
external diff, hooks). rocm-audit runs git with all of them neutralised, reads the base with `git cat-file`,
and leaves the tree as it found it."""
from __future__ import annotations

import hashlib
import json
import os
import shutil
import subprocess
import tempfile
from pathlib import Path

import pytest

from auditor.cli.app import main
from auditor.util.vcs import TEMP_PREFIX
from tests.gitrepo import GitRepo

pytestmark = pytest.mark.slow   # git repositories with hostile configuration


def tree_digest(root: Path) -> dict[str, str]:
    """Every file under root (the .git directory included) with its content hash."""
    return {str(p.relative_to(root)): hashlib.sha256(p.read_bytes()).hexdigest()
            for p in sorted(root.rglob("*")) if p.is_file()}


def hostile_repo(tmp_path: Path) -> tuple[GitRepo, Path]:
    """A repository whose config runs a program at every chance git gives it; each leaves a marker file."""
    markers = tmp_path / "markers"
    markers.mkdir()
    program = tmp_path / "payload.sh"
    program.write_text(f'#!/bin/sh\ntouch "{markers}/$1"\ncat\n')
    program.chmod(0o755)
    repo = GitRepo(tmp_path / "victim", {
        "serve.py": "import pynvml\n",
        "kernels/ops.py": "import pynvml\nimport os\n" + "x = 1\n" * 20,
        ".gitattributes": "* filter=evil diff=evil\n",
    })
    repo.git("checkout", "-q", "-b", "feature")
    # a rename with a change: the base version is read and scanned, as a user's pull request would need
    repo.git("mv", "kernels/ops.py", "kernels/ops2.py")
    (repo.root / "kernels" / "ops2.py").write_text("import pynvml\nimport os\nimport tensorrt_llm\n" + "x = 1\n" * 20)
    hooks = repo.root / "hooks"
    hooks.mkdir()
    for hook in ("post-checkout", "post-index-change", "reference-transaction", "pre-auto-gc"):
        (hooks / hook).write_text(f"#!/bin/sh\ntouch {markers}/hook-{hook}\n")
        (hooks / hook).chmod(0o755)
    for key, value in {
        "core.fsmonitor": f"{program} fsmonitor",
        "core.hooksPath": str(hooks),
        "filter.evil.clean": f"{program} clean",
        "filter.evil.smudge": f"{program} smudge",
        "filter.evil.process": f"{program} process",
        "filter.evil.required": "true",
        "diff.evil.textconv": f"{program} textconv",
        "diff.evil.command": f"{program} diffcommand",
        "diff.external": f"{program} external",
    }.items():
        repo.git("config", key, value)
    return repo, markers


def test_diff_base_runs_no_program_the_repository_config_names(tmp_path, capsys):
    repo, markers = hostile_repo(tmp_path)
    before = tree_digest(repo.root)
    code = main([str(repo.root), "--diff-base", "main", "--format", "json", "--no-progress", "-j", "1"])
    report = json.loads(capsys.readouterr().out)
    assert sorted(p.name for p in markers.iterdir()) == []
    assert tree_digest(repo.root) == before            # nothing written in the scanned tree, .git included
    # and the gate still works: the renamed file's pynvml is known (read from the base blob), the new import new
    new = {(f["path"], f["rule"]) for f in report["findings"] if f.get("new")}
    assert ("kernels/ops2.py", "RA100") in new and ("kernels/ops2.py", "RA112") not in new
    assert code == 1


def test_plain_check_of_a_hostile_repository_runs_nothing(tmp_path, capsys):
    repo, markers = hostile_repo(tmp_path)
    before = tree_digest(repo.root)
    assert main([str(repo.root), "-q", "--no-progress", "--fail-on", "never"]) == 0
    assert list(markers.iterdir()) == []
    assert tree_digest(repo.root) == before


def test_stale_temporary_trees_of_a_killed_run_are_removed_and_the_repository_is_not_written(tmp_path, capsys):
    repo = GitRepo(tmp_path / "r", {"a.py": "import pynvml\n"})
    repo.git("checkout", "-q", "-b", "f")
    repo.commit({"b.py": "import os\n"})
    # what this version leaves when killed: a temporary directory named after a process that is gone
    finished = subprocess.Popen(["true"])
    finished.wait()
    dead = Path(tempfile.mkdtemp(prefix=f"{TEMP_PREFIX}{finished.pid}-"))
    (dead / "a.py").write_text("left over\n")
    # a worktree of the user's whose directory is gone (`git worktree prune` would drop its registration)
    gone = tmp_path / "elsewhere"
    repo.git("worktree", "add", "--detach", "--quiet", str(gone), "main")
    shutil.rmtree(gone)
    before = tree_digest(repo.root / ".git")
    assert main([str(repo.root), "--diff-base", "main", "-q", "--no-progress"]) == 0
    assert main(["history", str(repo.root), "--db", str(tmp_path / "h.db"), "-q"]) == 0
    assert not dead.exists()
    assert str(gone) in repo.git("worktree", "list")
    assert tree_digest(repo.root / ".git") == before


def test_gitignored_but_tracked_files_are_scanned(tmp_path, run_json):
    repo = GitRepo(tmp_path / "r", {".gitignore": "*.cuh\ngenerated/\n"})
    repo.write({"csrc/warp.cuh": "__device__ int f(int v) { return __shfl_sync(0xffffffff, v, 0); }\n",
                "generated/keep.py": "import pynvml\n"})
    repo.git("add", "-f", "csrc/warp.cuh", "generated/keep.py")
    repo.git("commit", "-q", "-m", "tracked though ignored")
    repo.write({"csrc/untracked.cuh": "__device__ int g(int v) { return __shfl_sync(0xffffffff, v, 0); }\n"})
    code, report = run_json(repo.root, "--fail-on", "never")
    paths = {r["path"] for r in report["files"]} if "files" in report else {f["path"] for f in report["findings"]}
    found = {(f["path"], f["line"]) for f in report["findings"]}
    assert ("csrc/warp.cuh", 1) in found and ("generated/keep.py", 1) in found
    assert "csrc/untracked.cuh" not in paths                   # ignored and untracked: still skipped


def test_staged_file_matched_by_gitignore_is_scanned_by_the_hook(tmp_path, run_json):
    """The pre-commit hook passes staged files with --force-exclude: a tracked one .gitignore matches is kept,
    an untracked one it matches is dropped."""
    repo = GitRepo(tmp_path / "r", {".gitignore": "*.cuh\n"})
    repo.write({"csrc/warp.cuh": "__device__ int f(int v) { return __shfl_sync(0xffffffff, v, 0); }\n",
                "csrc/scratch.cuh": "__device__ int g(int v) { return __shfl_sync(0xffffffff, v, 0); }\n"})
    repo.git("add", "-f", "csrc/warp.cuh")
    code, report = run_json(repo.root / "csrc" / "warp.cuh", repo.root / "csrc" / "scratch.cuh",
                            "--force-exclude", "--fail-on", "never")
    found = {(f["path"], f["line"]) for f in report["findings"]}
    assert any(path.endswith("warp.cuh") and line == 1 for path, line in found)
    assert not any(path.endswith("scratch.cuh") for path, _ in found)


def test_gitmodules_naming_an_ordinary_directory_hides_nothing(tmp_path, run_json):
    repo = GitRepo(tmp_path / "r", {
        ".gitmodules": '[submodule "x"]\n\tpath = src\n\turl = https://example.com/x.git\n',
        "src/gpu.py": "import pynvml\n",
    })
    code, report = run_json(repo.root, "--fail-on", "never")
    assert ("src/gpu.py", 1) in {(f["path"], f["line"]) for f in report["findings"]}
    assert "src" not in report.get("vendored", [])


@pytest.mark.skipif(not hasattr(os, "geteuid") or os.geteuid() != 0, reason="needs root to give a repo away")
def test_a_repository_owned_by_another_user_is_named_as_such(tmp_path, capsys, monkeypatch):
    repo = GitRepo(tmp_path / "r", {"a.py": "import os\n"})
    repo.git("checkout", "-q", "-b", "f")
    subprocess.run(["chown", "-R", "65534:65534", str(repo.root)], check=True)
    monkeypatch.setenv("GIT_CONFIG_GLOBAL", os.devnull)     # no safe.directory of the user's
    assert main([str(repo.root), "--diff-base", "main", "-q", "--no-progress"]) == 2
    err = capsys.readouterr().err
    assert "owned by another user" in err and "safe.directory" in err
    assert "not in one" not in err


def test_git_missing_is_named(tmp_path, capsys, monkeypatch):
    repo = GitRepo(tmp_path / "r", {"a.py": "import os\n"})
    monkeypatch.setenv("PATH", str(tmp_path / "nowhere"))
    assert main([str(repo.root), "--diff-base", "main", "-q", "--no-progress"]) == 2
    assert "git is not installed" in capsys.readouterr().err


def test_git_helper_runs_with_filters_blanked(tmp_path):
    repo, markers = hostile_repo(tmp_path)
    from auditor.util.vcs import _neutral_config

    overrides = _neutral_config(str(repo.root))
    for key in ("filter.evil.clean=", "filter.evil.smudge=", "filter.evil.process=", "diff.evil.textconv=",
                "diff.evil.command="):
        assert key in overrides
    subprocess.run(["git", "diff", "main"], cwd=repo.root, capture_output=True)   # plain git obeys the repository
    assert list(markers.iterdir())
