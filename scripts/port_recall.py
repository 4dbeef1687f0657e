"""Port recall: in how many of the files an AMD fork changed for ROCm does rocm-audit report something?

    .venv/bin/python scripts/port_recall.py --work DIR FORK_GITDIR[@BRANCH]:UPSTREAM_GITDIR [...] [--json OUT]

Each argument pairs two bare git directories (for example snapshots of ROCm/apex and NVIDIA/apex; BRANCH picks
the fork's ROCm branch when its default branch only mirrors the upstream). For each
pair: the merge-base of the fork's HEAD and the upstream's HEAD (found in a scratch repository under DIR that
borrows both object stores, so neither snapshot is written to), the files the fork changed since it, and their
classification:

- port work: a C/C++/CUDA/Python source or a build file (setup.py, CMake, Make, pyproject, requirements) that
  existed at the merge-base, outside docs/, tests and CI and not already ROCm code (a `hip/` or `hip_*`
  directory, a `*_hip` or `*_rocm` file), whose diff (ignoring whitespace and comment lines) adds a line
  naming ROCm, HIP, AMD, a gfx target, wavefronts or a ROCm library;
- not port work: docs, CI, tests, files the fork added (nothing to report on upstream), and changes that name
  none of those (upstream merges, unrelated fixes).

rocm-audit then scans the upstream tree at the merge-base (written to DIR, skipping blobs a snapshot lacks) as
a user runs it, and port recall is the share of port-work files in which it reports any finding. git runs
with hooks, filters and fsmonitor off; nothing is executed from the trees.
"""
from __future__ import annotations

import argparse
import json
import re
import shutil
import subprocess
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path, PurePosixPath

GIT_SAFE = ["-c", "core.hooksPath=/dev/null", "-c", "core.fsmonitor=false", "-c", "protocol.allow=never"]
SOURCE = {".cu", ".cuh", ".h", ".hpp", ".hh", ".cpp", ".cc", ".cxx", ".c", ".py", ".pyx", ".pxd", ".inl"}
BUILD_NAMES = re.compile(r"(?i)^(setup\.py|CMakeLists\.txt|Makefile|.*\.cmake|.*\.mk|pyproject\.toml|setup\.cfg|"
                         r"requirements[^/]*\.txt|build\.sh|install\.sh)$")
NOT_PORT_DIRS = re.compile(r"(?i)^(docs?|\.github|\.ci|\.circleci|ci|tests?|unit_tests?|benchmarks?|examples?)$")
ROCM_PATH = re.compile(r"(?i)^(hip|rocm|amd)$|^hip_|_hip(\.|$)|(^|_)rocm(_|\.|$)|\.hip$")
COMMENT = re.compile(r"^\s*(?://|/\*|\*|#(?!\s*(?:if|ifdef|ifndef|elif|else|endif|define|include|undef|pragma)\b))")
ROCM_WORDS = re.compile(r"(?i)rocm|\bhip|hip[A-Z_]|__HIP|_hip\b|\bamd|gfx\d|wavefront|warp_?size|rocblas|hipblas|"
                        r"miopen|rccl|hipcub|rocprim|rocwmma|\bck\b|composable_kernel|mfma")


@dataclass(frozen=True)
class PairResult:
    name: str
    merge_base: str
    changed: int
    port_work: tuple[str, ...]
    reported: tuple[str, ...]
    missed: tuple[str, ...]

    @property
    def recall(self) -> float:
        return len(self.reported) / max(len(self.port_work), 1)


def git(gitdir: Path, *args: str) -> bytes:
    return subprocess.run(["git", *GIT_SAFE, "--git-dir", str(gitdir), *args], capture_output=True,
                          check=True).stdout


def joined_repo(work: Path, fork: Path, upstream: Path) -> Path:
    """A bare repository that sees both snapshots' objects through alternates, writing to neither."""
    repo = work / "pair.git"
    shutil.rmtree(repo, ignore_errors=True)
    subprocess.run(["git", *GIT_SAFE, "init", "-q", "--bare", str(repo)], check=True)
    alternates = [str((g / "objects").resolve()) for g in (fork, upstream)]
    (repo / "objects/info/alternates").write_text("\n".join(alternates) + "\n")
    return repo


def extract(repo: Path, rev: str, dest: Path) -> None:
    """Write the tree of `rev` to `dest`, skipping symlinks, submodules and blobs the snapshot lacks."""
    listing = git(repo, "ls-tree", "-r", "-z", rev)
    blobs = []
    for entry in filter(None, listing.split(b"\0")):
        meta, path = entry.split(b"\t", 1)
        mode, kind, sha = meta.split()
        if kind == b"blob" and mode != b"120000":
            blobs.append((sha, path.decode(errors="replace")))
    with subprocess.Popen(["git", *GIT_SAFE, "--git-dir", str(repo), "cat-file", "--batch"], stdin=subprocess.PIPE,
                          stdout=subprocess.PIPE) as cat:
        assert cat.stdin and cat.stdout
        for sha, path in blobs:
            cat.stdin.write(sha + b"\n")
            cat.stdin.flush()
            header = cat.stdout.readline().split()
            if header[-1] == b"missing":
                continue
            data = cat.stdout.read(int(header[2]))
            cat.stdout.read(1)
            target = dest / path
            if ".." in PurePosixPath(path).parts:
                continue
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_bytes(data)
        cat.stdin.close()


def is_port_candidate(path: str) -> bool:
    p = PurePosixPath(path)
    if any(NOT_PORT_DIRS.match(part) for part in p.parts[:-1]) or p.name.startswith("test_"):
        return False
    if any(ROCM_PATH.search(part) for part in p.parts):   # ROCm code already: maintenance, not a port of CUDA
        return False
    return p.suffix in SOURCE or bool(BUILD_NAMES.match(p.name))


def port_work(repo: Path, base: str, head: str) -> tuple[int, list[str]]:
    status = git(repo, "diff", "--no-renames", "--name-status", "-z", base, head).split(b"\0")
    entries = list(zip(status[0::2], status[1::2]))
    work = []
    for code, raw in entries:
        path = raw.decode(errors="replace")
        if code != b"M" or not is_port_candidate(path):
            continue
        # whitespace-only edits and comments are not port work, even where a comment says "wavefront"
        diff = git(repo, "diff", "--no-renames", "-w", "-U0", base, head, "--", path).decode(errors="replace")
        added = [line for line in diff.splitlines() if line.startswith("+") and not line.startswith("+++")
                 and not COMMENT.match(line[1:])]
        if any(ROCM_WORDS.search(line) for line in added):
            work.append(path)
    return len(entries), sorted(work)


def reported_files(tree: Path) -> set[str]:
    out = tree.parent / "report.json"
    run = subprocess.run([sys.executable, "-m", "auditor", "--format", "json", "--no-progress", "--no-cache",
                          "--no-html", "-o", str(out), str(tree)], capture_output=True, text=True)
    if run.returncode not in (0, 1):
        raise SystemExit(f"rocm-audit failed on {tree} (exit {run.returncode}): {run.stderr[-2000:]}")
    return {f["path"] for f in json.loads(out.read_text())["findings"]}


def measure(work: Path, fork: Path, upstream: Path, ref: str = "HEAD") -> PairResult:
    repo = joined_repo(work, fork, upstream)
    head = git(fork, "rev-parse", ref).decode().strip()
    up = git(upstream, "rev-parse", "HEAD").decode().strip()
    base = git(repo, "merge-base", head, up).decode().strip()
    changed, files = port_work(repo, base, head)
    tree = work / "upstream-at-merge-base"
    shutil.rmtree(tree, ignore_errors=True)
    extract(repo, base, tree)
    seen = reported_files(tree)
    name = f"{fork.parent.name} vs {upstream.parent.name}"
    return PairResult(name, base[:10], changed, tuple(files), tuple(f for f in files if f in seen),
                      tuple(f for f in files if f not in seen))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("pairs", nargs="+", help="FORK_GITDIR[@BRANCH]:UPSTREAM_GITDIR")
    parser.add_argument("--work", type=Path, help="scratch directory (default: a temporary one)")
    parser.add_argument("--json", type=Path, help="also write the results here")
    parser.add_argument("--keep", action="store_true",
                        help="keep each pair's extracted tree and report.json under --work/<fork>")
    args = parser.parse_args()
    results = []
    for pair in args.pairs:
        fork, _, upstream = pair.partition(":")
        fork, _, ref = fork.partition("@")
        if args.keep and args.work:
            kept = args.work / Path(fork).parent.name
            kept.mkdir(parents=True, exist_ok=True)
            r = measure(kept, Path(fork), Path(upstream), ref or "HEAD")
        else:
            with tempfile.TemporaryDirectory(dir=args.work) as tmp:
                r = measure(Path(tmp), Path(fork), Path(upstream), ref or "HEAD")
        results.append(r)
        print(f"{r.name}: merge-base {r.merge_base}, {r.changed} files changed, {len(r.port_work)} port work, "
              f"reported in {len(r.reported)} ({r.recall:.2f})")
        for path in r.missed:
            print(f"    missed {path}")
    work_total = sum(len(r.port_work) for r in results)
    hit = sum(len(r.reported) for r in results)
    print(f"port recall {hit}/{work_total} = {hit / max(work_total, 1):.3f}")
    if args.json:
        args.json.write_text(json.dumps([{**r.__dict__, "recall": r.recall} for r in results], indent=1))


if __name__ == "__main__":
    main()
