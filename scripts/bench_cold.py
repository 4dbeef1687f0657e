"""A cold scan of whole repositories (no result cache), measured repeatably, and compared between installations.

    .venv/bin/python -m scripts.bench_cold TREE... [-n 5] [--command OTHER/.venv/bin/rocm-audit ...] [-j N]

Each TREE is scanned as a user scans it (`rocm-audit check TREE --format json --no-cache`, the console script in
a subprocess with its bytecode compiled once) -n times; with --command, every installation given (this
environment's first) is run in turn within each round, so a busy spell of a shared machine falls on all of them
alike. Per tree and installation it prints the median wall time, the median CPU time (user + system of
rocm-audit and all its worker processes: the number to compare on a shared machine), and the peak memory (the
largest sum of the resident sizes of the process tree, sampled every 10 ms, over all runs). It also says whether
each other installation wrote the same JSON report as this one.
"""
from __future__ import annotations

import argparse
import json
import os
import shutil
import sys
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from scripts.bench import Run, child_environment, rocm_audit_command, run  # noqa: E402


def _median(values: list[float]) -> float:
    ordered = sorted(values)
    middle = len(ordered) // 2
    return ordered[middle] if len(ordered) % 2 else (ordered[middle - 1] + ordered[middle]) / 2


def measure(trees: list[Path], commands: list[list[str]], times: int, jobs: int | None,
            work: Path) -> dict[tuple[str, int], list[Run]]:
    env = child_environment(work / "pycache")
    for command in commands:   # compile each installation's bytecode once, as an install does
        run(["--version"], env, command=command)
    runs: dict[tuple[str, int], list[Run]] = {}
    for tree in trees:
        for _ in range(times):
            for index, command in enumerate(commands):
                out = work / f"{tree.name}-{index}.json"
                args = ["check", str(tree), "--format", "json", "--no-cache", "--no-progress", "-o", str(out)]
                runs.setdefault((str(tree), index), []).append(
                    run(args + (["-j", str(jobs)] if jobs else []), env, command=command))
    return runs


def same_reports(work: Path, tree: Path, count: int) -> list[bool]:
    """For each other installation: whether its report equals this one's."""
    reports = [json.loads((work / f"{tree.name}-{i}.json").read_text(encoding="utf-8")) for i in range(count)]
    return [report == reports[0] for report in reports[1:]]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("trees", type=Path, nargs="+")
    parser.add_argument("-n", "--times", type=int, default=5, help="runs per tree and installation")
    parser.add_argument("-j", "--jobs", type=int, help="worker processes (default: rocm-audit's own)")
    parser.add_argument("--command", type=Path, action="append", default=[],
                        help="another installation's rocm-audit, run in turn with this environment's")
    args = parser.parse_args(argv)
    commands = [rocm_audit_command(), *([str(c)] for c in args.command)]
    work = Path(tempfile.mkdtemp(prefix="rocm-audit-bench-cold-"))
    try:
        runs = measure(args.trees, commands, args.times, args.jobs, work)
        print(f"{os.cpu_count()} cores, load average {os.getloadavg()[0]:.2f} at the end, {args.times} runs each")
        print("| tree | rocm-audit | CPU (median, min-max) | wall (median) | peak RSS |")
        print("|---|---|---|---|---|")
        for tree in args.trees:
            for index, command in enumerate(commands):
                measured = runs[(str(tree), index)]
                cpu = [r.cpu_seconds for r in measured]
                print(f"| {tree.name} | {command[-1] if index else 'this one'} | {_median(cpu):.2f} s "
                      f"({min(cpu):.2f}-{max(cpu):.2f}) | {_median([r.seconds for r in measured]):.2f} s | "
                      f"{max(r.peak_kib for r in measured) / 1024:.0f} MiB |")
            if len(commands) > 1:
                same = same_reports(work, tree, len(commands))
                print(f"| {tree.name} | same report as this one's: "
                      + ", ".join(f"{c[-1]} {'yes' if ok else 'NO'}" for c, ok in zip(commands[1:], same)) + " | | | |")
    finally:
        shutil.rmtree(work, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
