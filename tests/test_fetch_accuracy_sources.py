"""scripts/fetch_accuracy_sources.py restores a blind set's trees at the recorded commit or sdist version, as
`git archive` would lay them out, from a local snapshot, never writing outside the destination."""
from __future__ import annotations

import json
import subprocess
import sys
import tarfile
from pathlib import Path

from scripts.fetch_accuracy_sources import export_tree, sdist_of

REPO = Path(__file__).resolve().parent.parent


def _git(cwd: Path, *args: str) -> str:
    env = {"GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@e", "GIT_COMMITTER_NAME": "t", "GIT_COMMITTER_EMAIL": "t@e",
           "PATH": "/usr/bin:/bin", "HOME": str(cwd)}
    return subprocess.run(["git", "-c", "core.hooksPath=/dev/null", *args], cwd=cwd, env=env, check=True,
                          capture_output=True, text=True).stdout.strip()


def _snapshot(tmp: Path) -> tuple[Path, str]:
    """A bare snapshot under tmp/mirror/owner+proj/repo with two commits; returns it and the first commit."""
    work = tmp / "work"
    (work / "ops/csrc").mkdir(parents=True)
    (work / "ops/setup.py").write_text("from setuptools import setup\nsetup()\n")
    (work / "ops/csrc/kernel.cu").write_text("__global__ void k() {}\n")
    (work / "README.md").write_text("first\n")
    (work / "ops/link.cu").symlink_to("csrc/kernel.cu")
    _git(work, "init", "-q")
    _git(work, "add", "-A")
    _git(work, "commit", "-q", "-m", "one")
    first = _git(work, "rev-parse", "HEAD")
    (work / "README.md").write_text("second\n")
    _git(work, "commit", "-q", "-am", "two")
    mirror = tmp / "mirror/owner+proj/repo"
    _git(tmp, "clone", "-q", "--bare", str(work), str(mirror))
    return mirror, first


def test_export_writes_the_recorded_commit_with_its_symlinks(tmp_path):
    mirror, first = _snapshot(tmp_path)
    dest = tmp_path / "out"
    dest.mkdir()
    written, skipped = export_tree(mirror, first[:7], "", dest)
    assert (dest / "README.md").read_text() == "first\n"
    assert (dest / "ops/link.cu").is_symlink() and (dest / "ops/link.cu").read_text() == "__global__ void k() {}\n"
    assert (written, skipped) == (4, ())


def test_export_of_a_folder_roots_the_tree_at_it(tmp_path):
    mirror, first = _snapshot(tmp_path)
    dest = tmp_path / "out"
    dest.mkdir()
    export_tree(mirror, first, "ops", dest)
    assert sorted(p.relative_to(dest).as_posix() for p in dest.rglob("*")) == [
        "csrc", "csrc/kernel.cu", "link.cu", "setup.py"]


def test_a_symlink_is_never_written_through(tmp_path):
    """A crafted tree naming `a` both a symlink to a folder outside and a folder holding a file: the file lands
    in the destination and the symlink is left out, so nothing is written outside it."""
    outside = tmp_path / "outside"
    outside.mkdir()
    work = tmp_path / "work"
    work.mkdir()
    _git(work, "init", "-q")
    blob = subprocess.run(["git", "hash-object", "-w", "--stdin"], cwd=work, input="x", text=True,
                          capture_output=True, check=True).stdout.strip()
    link = subprocess.run(["git", "hash-object", "-w", "--stdin"], cwd=work, input=str(outside), text=True,
                          capture_output=True, check=True).stdout.strip()
    sub = subprocess.run(["git", "mktree"], cwd=work, input=f"100644 blob {blob}\tescape.txt\n", text=True,
                         capture_output=True, check=True).stdout.strip()
    both = subprocess.run(["git", "mktree"], cwd=work, input=f"120000 blob {link}\ta\n040000 tree {sub}\ta\n",
                          text=True, capture_output=True, check=True).stdout.strip()
    commit = _git(work, "commit-tree", both, "-m", "both")
    dest = tmp_path / "out"
    dest.mkdir()
    written, skipped = export_tree(work / ".git", commit, "", dest)
    assert (dest / "a/escape.txt").read_text() == "x" and not (dest / "a").is_symlink()
    assert list(outside.iterdir()) == [] and (written, skipped) == (1, ("a",))


def test_sdist_is_matched_on_the_normalised_project_name(tmp_path):
    (tmp_path / "torch_fidelity-0.4.0.tar.gz").write_bytes(b"")
    (tmp_path / "torch_fidelity-0.4.1.tar.gz").write_bytes(b"")
    assert sdist_of(tmp_path, "torch-fidelity", "0.4.0") == tmp_path / "torch_fidelity-0.4.0.tar.gz"
    assert sdist_of(tmp_path, "torch-fidelity", "0.5") is None


def test_command_restores_each_project_and_reports_a_missing_commit(tmp_path):
    mirror, first = _snapshot(tmp_path)
    cache = tmp_path / "dest/.sdists"
    cache.mkdir(parents=True)
    package = tmp_path / "pkg-1.0"
    package.mkdir()
    (package / "setup.py").write_text("print('never run')\n")
    with tarfile.open(cache / "pkg-1.0.tar.gz", "w:gz") as tar:
        tar.add(package, arcname="pkg-1.0")
    blind = tmp_path / "set.toml"
    blind.write_text(f'''
[[project]]
name = "proj"
source = "github:owner/proj (the ops/ folder)"
commit = "{first[:8]}"
[[project]]
name = "pkg"
source = "pypi:pkg==1.0 (sdist)"
[[project]]
name = "gone"
source = "github:owner/proj"
commit = "0123456789abcdef"
''')
    run = subprocess.run([sys.executable, "scripts/fetch_accuracy_sources.py", "--set", str(blind), "--dest",
                          str(tmp_path / "dest"), "--mirror", str(tmp_path / "mirror")], cwd=REPO,
                         capture_output=True, text=True)
    assert run.returncode == 1
    assert (tmp_path / "dest/proj/setup.py").is_file() and (tmp_path / "dest/pkg/setup.py").is_file()
    manifest = {r["name"]: r for r in json.loads((tmp_path / "dest/manifest.json").read_text())}
    assert manifest["proj"]["version"] == f"{first}:ops"
    assert manifest["pkg"]["version"] == "pkg-1.0.tar.gz"
    assert "0123456789abcdef is not in the snapshot" in manifest["gone"]["error"]
