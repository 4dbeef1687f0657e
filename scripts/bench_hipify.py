"""`scripts/bench.py --hipify-perl PATH --repos DIR...`: rocm-audit and hipify-perl `-examine`, side by side in one
run, on the same whole repositories.

rocm-audit scans the whole repository as a user runs it (the console script, `--no-cache`, `-j 1`: one process,
as hipify-perl is); hipify-perl examines the repository's C/C++/CUDA files (those rocm-audit's discovery
classifies as such, vendored directories left out), all in one invocation. Both are timed in CPU seconds of
the child processes (user + system), which a busy shared machine inflates far less than wall time; wall time is
printed too. The ratio is hipify-perl's CPU time over rocm-audit's.
"""
from __future__ import annotations

import os
import resource
import subprocess
import time
from dataclasses import dataclass
from pathlib import Path

ARGUMENT_BYTES = 100_000     # a command line of at most this many bytes of file names per hipify-perl run


@dataclass(frozen=True, slots=True)
class Timed:
    cpu: float
    wall: float


def timed(commands: list[list[str]], env: dict[str, str] | None = None) -> Timed:
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    for command in commands:
        subprocess.run(command, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=False)
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return Timed(after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime, wall)


def c_files(repo: Path) -> list[Path]:
    from auditor.run.discover.files import discover

    found = discover([repo], repo, (), False)
    return [Path(f.abspath) for f in found.files if f.kind in ("cuda", "cpp")]


def batches(perl: Path, files: list[Path]) -> list[list[str]]:
    out: list[list[str]] = []
    current: list[str] = []
    size = 0
    for path in files:
        if current and size + len(str(path)) > ARGUMENT_BYTES:
            out.append([str(perl), "-examine", *current])
            current, size = [], 0
        current.append(str(path))
        size += len(str(path)) + 1
    if current:
        out.append([str(perl), "-examine", *current])
    return out


def side_by_side(repos: list[Path], perl: Path | None, audit_command: list[str], env: dict[str, str]) -> None:
    if perl is None or not perl.is_file():
        print(f"hipify-perl: {'not given' if perl is None else f'{perl} not found'}; its column is skipped "
              "(fetch bin/hipify-perl from ROCm/HIPIFY and pass --hipify-perl PATH)")
    print(f"{'repository':34} {'C/C++ files':>11} {'lines':>9} {'rocm-audit CPU s':>17} {'wall s':>7} "
          f"{'hipify-perl CPU s':>18} {'wall s':>7} {'ratio':>7}")
    ratios = []
    # compile rocm-audit's bytecode once, as an install does, before anything is timed
    timed([[*audit_command, str(repos[0]), "--no-cache", "--no-html", "--no-progress", "--format", "json",
            "-o", os.devnull, "--fail-on", "never"]], env)
    for repo in repos:
        files = c_files(repo)
        lines = sum(p.read_bytes().count(b"\n") for p in files)
        ours = timed([[*audit_command, str(repo), "--no-cache", "--no-html", "--no-progress", "-j", "1",
                       "--format", "json", "-o", os.devnull, "--fail-on", "never"]], env)
        row = f"{repo.name[:34]:34} {len(files):>11,} {lines:>9,} {ours.cpu:>17.2f} {ours.wall:>7.1f}"
        if perl is not None and perl.is_file() and files:
            theirs = timed(batches(perl, files))
            ratios.append(theirs.cpu / ours.cpu)
            row += f" {theirs.cpu:>18.2f} {theirs.wall:>7.1f} {theirs.cpu / ours.cpu:>6.0f}x"
        else:
            row += f" {'skipped' if files else 'no C/C++ files':>18} {'':>7} {'':>7}"
        print(row, flush=True)
    if ratios:
        ratios.sort()
        print(f"median ratio {ratios[len(ratios) // 2]:.0f}x (goal: 300x); load average {os.getloadavg()[0]:.2f}")
