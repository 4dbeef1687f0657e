"""Restore the source trees a blind set names, at the versions it records, for scripts/score_accuracy.py.

    .venv/bin/python scripts/fetch_accuracy_sources.py --set tests/data/accuracy/blind_set_2.toml --dest DIR \
        [--set ...] [--mirror DIR] [--clone] [--only NAMES]

Each project's `source` says where its code comes from:

- `github:OWNER/NAME` with `commit`: the tree at that commit (a short hash is enough), read from a bare git
  directory under --mirror (`OWNER+NAME/repo`, `OWNER+NAME.git` or `OWNER/NAME.git`); with --clone a missing one
  is first cloned bare from GitHub into --mirror. A `path` key (or a "(the DIR/ folder)" note in `source`) keeps
  that folder only, as the set's file:line references are relative to it.
- `pypi:NAME==VERSION`: that version's sdist, by `pip download --no-deps --no-binary :all:`, unpacked.

DIR/<name> receives the tree, named as the set names the project, so `score_accuracy.py --src DIR` finds it. Blobs
a partial snapshot lacks (large data files) are skipped and counted. git runs with hooks, filters and fsmonitor
off; nothing from the trees is executed. DIR/manifest.json records, per project, the source, the resolved commit
or sdist file, and the files written and skipped. The exit code is 1 when a project could not be restored.
"""
from __future__ import annotations

import argparse
import json
import re
import shutil
import subprocess
import sys
import tarfile
import tempfile
import tomllib
import zipfile
from dataclasses import asdict, dataclass
from pathlib import Path

GIT_SAFE = ["-c", "core.hooksPath=/dev/null", "-c", "core.fsmonitor=false", "-c", "protocol.allow=user",
            "-c", "protocol.https.allow=always"]
GITHUB = re.compile(r"^github:(?P<owner>[\w.-]+)/(?P<name>[\w.-]+)(?:\s*\(the (?P<folder>[^)\s]+?)/? folder\))?")
PYPI = re.compile(r"^pypi:(?P<name>[\w.-]+)==(?P<version>[\w.!+-]+)")


@dataclass(frozen=True)
class Restored:
    name: str
    source: str
    version: str
    written: int
    skipped: tuple[str, ...]
    error: str = ""


def git(gitdir: Path, *args: str, data: bytes | None = None) -> bytes:
    return subprocess.run(["git", *GIT_SAFE, "--git-dir", str(gitdir), *args], input=data, capture_output=True,
                          check=True).stdout


def find_gitdir(mirror: Path, owner: str, name: str) -> Path | None:
    for candidate in (mirror / f"{owner}+{name}" / "repo", mirror / f"{owner}+{name}.git",
                      mirror / owner / f"{name}.git"):
        if (candidate / "objects").is_dir():
            return candidate
    return None


def clone(mirror: Path, owner: str, name: str) -> Path:
    target = mirror / f"{owner}+{name}.git"
    subprocess.run(["git", *GIT_SAFE, "clone", "-q", "--bare", f"https://github.com/{owner}/{name}.git",
                    str(target)], check=True, capture_output=True)
    return target


def export_tree(gitdir: Path, commit: str, folder: str, dest: Path) -> tuple[int, tuple[str, ...]]:
    """Write the tree of `commit` (only `folder` when given) to `dest` as `git archive` would: files, then symlinks
    (never written through), submodules as empty folders; blobs the snapshot lacks are skipped and returned."""
    rev = git(gitdir, "rev-parse", "--verify", f"{commit}^{{commit}}").decode().strip()
    listing = git(gitdir, "ls-tree", "-r", "-z", "--full-tree", rev)
    prefix = folder.strip("/") + "/" if folder else ""
    files: list[tuple[str, str]] = []
    links: list[tuple[str, str]] = []
    root = dest.resolve()
    for entry in filter(None, listing.split(b"\0")):
        meta, raw = entry.split(b"\t", 1)
        mode, kind, sha = meta.decode().split()
        path = raw.decode("utf-8", "surrogateescape")
        if not path.startswith(prefix):
            continue
        rel = path[len(prefix):]
        if kind == "commit":
            (root / rel).mkdir(parents=True, exist_ok=True)
        elif kind == "blob":
            (links if mode == "120000" else files).append((sha, rel))
    written = 0
    skipped: list[str] = []
    with subprocess.Popen(["git", *GIT_SAFE, "--git-dir", str(gitdir), "cat-file", "--batch"],
                          stdin=subprocess.PIPE, stdout=subprocess.PIPE) as batch:
        assert batch.stdin is not None and batch.stdout is not None
        for number, (sha, rel) in enumerate(files + links):
            batch.stdin.write(sha.encode() + b"\n")
            batch.stdin.flush()
            header = batch.stdout.readline().split()
            if len(header) < 3:
                skipped.append(rel)
                continue
            content = batch.stdout.read(int(header[2]))
            batch.stdout.read(1)
            target = root / rel
            if not target.parent.resolve().is_relative_to(root) or target.is_symlink() or target.exists():
                skipped.append(rel)
                continue
            target.parent.mkdir(parents=True, exist_ok=True)
            if number < len(files):
                target.write_bytes(content)
            else:
                target.symlink_to(content.decode("utf-8", "surrogateescape"))
            written += 1
        batch.stdin.close()
    return written, tuple(skipped)


def restore_github(project: dict, match: re.Match[str], mirror: Path, allow_clone: bool, dest: Path) -> Restored:
    owner, repo = match["owner"], match["name"]
    folder = project.get("path") or match["folder"] or ""
    commit = str(project.get("commit") or "HEAD")
    gitdir = find_gitdir(mirror, owner, repo)
    if gitdir is None and allow_clone:
        gitdir = clone(mirror, owner, repo)
    if gitdir is None:
        return Restored(project["name"], project["source"], commit, 0, (), f"no snapshot of {owner}/{repo}")
    try:
        full = git(gitdir, "rev-parse", "--verify", f"{commit}^{{commit}}").decode().strip()
    except subprocess.CalledProcessError:
        return Restored(project["name"], project["source"], commit, 0, (),
                        f"commit {commit} is not in the snapshot {gitdir}")
    written, skipped = export_tree(gitdir, full, folder, dest)
    return Restored(project["name"], project["source"], full + (f":{folder}" if folder else ""), written, skipped)


def unpack_sdist(archive: Path, dest: Path) -> int:
    """Unpack an sdist into `dest`, dropping its single top-level folder."""
    with tempfile.TemporaryDirectory() as tmp:
        if archive.suffix == ".zip":
            with zipfile.ZipFile(archive) as zipped:
                for member in zipped.namelist():
                    if not (Path(tmp) / member).resolve().is_relative_to(Path(tmp).resolve()):
                        raise SystemExit(f"{archive}: member outside the archive root: {member}")
                zipped.extractall(tmp)
        else:
            with tarfile.open(archive) as tarred:
                tarred.extractall(tmp, filter="data")
        tops = list(Path(tmp).iterdir())
        top = tops[0] if len(tops) == 1 and tops[0].is_dir() else Path(tmp)
        shutil.copytree(top, dest, symlinks=False, dirs_exist_ok=True)
    return sum(1 for p in dest.rglob("*") if p.is_file())


def sdist_of(cache: Path, name: str, version: str) -> Path | None:
    """The sdist of name==version in `cache`, matched on PyPI's normalised project name."""
    def norm(text: str) -> str:
        return re.sub(r"[-_.]+", "-", text).lower()
    for archive in sorted(cache.iterdir()) if cache.is_dir() else []:
        stem = re.sub(r"\.(tar\.gz|tar\.bz2|zip)$", "", archive.name)
        project, _, found = stem.rpartition("-")
        if stem != archive.name and norm(project) == norm(name) and found == version:
            return archive
    return None


def restore_pypi(project: dict, match: re.Match[str], cache: Path, dest: Path) -> Restored:
    name, version = match["name"], match["version"]
    archive = sdist_of(cache, name, version)
    if archive is None:
        run = subprocess.run([sys.executable, "-m", "pip", "download", "-q", "--no-deps", "--no-binary", ":all:",
                              "-d", str(cache), f"{name}=={version}"], capture_output=True, text=True)
        archive = sdist_of(cache, name, version)
        if archive is None:
            return Restored(project["name"], project["source"], version, 0, (),
                            f"pip download {name}=={version} gave no sdist: {run.stderr.strip()[-300:]}")
    return Restored(project["name"], project["source"], archive.name, unpack_sdist(archive, dest), ())


def restore(project: dict, args: argparse.Namespace) -> Restored:
    dest = args.dest / project["name"]
    shutil.rmtree(dest, ignore_errors=True)
    dest.mkdir(parents=True)
    source = project.get("source", "")
    if match := GITHUB.match(source):
        return restore_github(project, match, args.mirror, args.clone, dest)
    if match := PYPI.match(source):
        return restore_pypi(project, match, args.dest / ".sdists", dest)
    return Restored(project["name"], source, "", 0, (), "unrecognised source")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--set", type=Path, action="append", required=True, help="a blind set TOML (repeatable)")
    parser.add_argument("--dest", type=Path, required=True, help="directory that receives one tree per project")
    parser.add_argument("--mirror", type=Path, default=Path("/work/.mirror"),
                        help="directory of bare git snapshots (OWNER+NAME/repo, OWNER+NAME.git or OWNER/NAME.git)")
    parser.add_argument("--clone", action="store_true", help="clone a missing snapshot from GitHub into --mirror")
    parser.add_argument("--only", help="comma-separated project names")
    args = parser.parse_args()
    args.dest.mkdir(parents=True, exist_ok=True)
    projects = [p for s in args.set for p in tomllib.loads(s.read_text())["project"]]
    if args.only:
        projects = [p for p in projects if p["name"] in args.only.split(",")]
    results = []
    for project in projects:
        result = restore(project, args)
        results.append(result)
        absent = f"{len(result.skipped)} absent from the snapshot"
        state = f"ERROR {result.error}" if result.error else f"{result.written} files, {absent}"
        print(f"{result.name:32} {result.version[:52]:52} {state}")
    (args.dest / "manifest.json").write_text(json.dumps([asdict(r) for r in results], indent=1))
    if any(r.error for r in results):
        sys.exit(1)


if __name__ == "__main__":
    main()
