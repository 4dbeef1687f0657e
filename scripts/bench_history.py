"""Benchmark `rocm-audit history` against one cold scan: 40 points of a real repository's
first-parent history should cost at most 3x one scan of its newest commit with an empty cache.

    .venv/bin/python scripts/bench_history.py PATH            # PATH: a full clone (not shallow) of a repository
    .venv/bin/python scripts/bench_history.py PATH --points 40 --jobs 2 --repeat 3
    .venv/bin/python scripts/bench_history.py PATH --since 2026-02-15     # a recent range: an ongoing port

Each run is the console script in a subprocess, as a user runs it, with an empty cache directory and database
of its own (in a temporary directory, deleted afterwards): the cold scan is `rocm-audit check PATH` of the
checkout; the history is `rocm-audit history PATH --max-points N`, which reads every point's tree from git
objects. A second history run shows the cost when every point is already recorded. A third, into a new database
but with the first history's result cache, scans nothing: what it costs is the per-point work besides scanning
(discovery, the build pre-pass, the report) plus reading the cached results; the first history's CPU time less
this is the scanning of each point's added or changed files (and of the files a change of the build's macros
makes depend on it) with the caching of their results, which no reuse across points can remove (the floor).
Wall times are medians; the CPU time (every process of the run) is printed too, since on a shared machine the
wall time follows the load.
"""
from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent


def rocm_audit() -> list[str]:
    script = Path(sys.executable).parent / "rocm-audit"
    return [str(script)] if script.exists() else [sys.executable, "-m", "auditor"]


def timed(args: list[str], env: dict[str, str]) -> tuple[float, float]:
    """(wall seconds, CPU seconds of the run and every process it started): on a shared machine the wall time
    follows the load, the CPU time much less."""
    started, before = time.perf_counter(), _children_cpu()
    done = subprocess.run([*rocm_audit(), *args], env=env, capture_output=True, check=False)
    elapsed = time.perf_counter() - started
    if done.returncode not in (0, 1):
        raise SystemExit(f"rocm-audit {' '.join(args)}: exit {done.returncode}\n{done.stderr.decode()}")
    return elapsed, _children_cpu() - before


def _children_cpu() -> float:
    import resource

    used = resource.getrusage(resource.RUSAGE_CHILDREN)
    return used.ru_utime + used.ru_stime


def run_once(path: Path, points: int, jobs: int, since: str | None) -> dict[str, float]:
    work = Path(tempfile.mkdtemp(prefix="rocm-audit-bench-history-"))
    try:
        env = {**os.environ, "ROCM_AUDIT_CACHE_DIR": str(work / "cache-cold")}
        common = ["--no-progress", "-j", str(jobs)]
        cold, cold_cpu = timed(["check", str(path), "--format", "json", "-o", str(work / "cold.json"), "--no-html",
                                *common], env)
        env["ROCM_AUDIT_CACHE_DIR"] = str(work / "cache-history")
        history_args = ["history", str(path), "--db", str(work / "h.db"), "--max-points", str(points),
                        "--format", "json", "-o", str(work / "history.json"), *common,
                        *(["--since", since] if since else [])]
        history, history_cpu = timed(history_args, env)
        reused, _ = timed(history_args, env)
        warm_args = [*history_args[:2], "--db", str(work / "warm.db"), *history_args[4:]]
        warm_args[warm_args.index("-o") + 1] = str(work / "warm.json")
        warm, warm_cpu = timed(warm_args, env)
        if json.loads((work / "warm.json").read_text())["points"] != json.loads(
                (work / "history.json").read_text())["points"]:
            raise SystemExit("the history from cached results differs from the first one")
        data = json.loads((work / "history.json").read_text())
        commits = [p["commit"] for p in data["points"]]
        return {"cold": cold, "history": history, "reused": reused, "points": len(commits),
                "cold_cpu": cold_cpu, "history_cpu": history_cpu, "warm": warm, "warm_cpu": warm_cpu,
                "partial": sum(1 for p in data["points"] if not p["complete"]), "changed": changed(path, commits)}
    finally:
        shutil.rmtree(work, ignore_errors=True)


def changed(path: Path, commits: list[str]) -> int:
    """Files added or modified from each point to the next: what the history has to scan besides the first."""
    total = 0
    for old, new in zip(commits, commits[1:]):
        out = subprocess.run(["git", "-C", str(path), "diff", "--name-only", "--diff-filter=AMR", old, new],
                             capture_output=True, text=True, check=False).stdout
        total += len(out.splitlines())
    return total


def tree_files(path: Path) -> int:
    out = subprocess.run(["git", "-C", str(path), "ls-tree", "-r", "--name-only", "HEAD"], capture_output=True,
                         text=True, check=True).stdout
    return len(out.splitlines())


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("path", type=Path)
    parser.add_argument("--points", type=int, default=40)
    parser.add_argument("--jobs", type=int, default=os.cpu_count() or 1)
    parser.add_argument("--repeat", type=int, default=1)
    parser.add_argument("--since", help="history --since DATE|REV (default: the whole history)")
    args = parser.parse_args()
    runs = [run_once(args.path, args.points, args.jobs, args.since) for _ in range(args.repeat)]
    median = {key: statistics.median(r[key] for r in runs) for key in runs[0]}
    commits = subprocess.run(["git", "-C", str(args.path), "rev-list", "--count", "--first-parent", "HEAD"],
                             capture_output=True, text=True, check=True).stdout.strip()
    print(f"{args.path.name}: {tree_files(args.path)} files at HEAD, {commits} first-parent commits"
          f"{f', since {args.since}' if args.since else ''}, -j {args.jobs}, median of {args.repeat}")
    print(f"  one cold scan of HEAD:           {median['cold']:7.1f} s   (CPU {median['cold_cpu']:.1f} s)")
    print(f"  history, {int(median['points'])} points (cold cache):  {median['history']:7.1f} s  "
          f"= {median['history'] / median['cold']:.2f}x the cold scan ({int(median['partial'])} partial)")
    print(f"    in CPU time:                   {median['history_cpu']:7.1f} s  "
          f"= {median['history_cpu'] / max(median['cold_cpu'], 1e-9):.2f}x the cold scan's")
    print(f"  history again (points reused):   {median['reused']:7.1f} s")
    floor = max(median["history_cpu"] - median["warm_cpu"], 0.0)
    print(f"  history, results cached (a new database): {median['warm']:.1f} s, CPU {median['warm_cpu']:.1f} s "
          f"= {median['warm_cpu'] / max(median['cold_cpu'], 1e-9):.2f}x the cold scan's: the work besides scanning")
    print(f"  raw scanning of the points' changed files (CPU, the floor): {floor:.1f} s "
          f"= {floor / max(median['cold_cpu'], 1e-9):.2f}x the cold scan's, "
          f"{floor / max(median['history_cpu'], 1e-9):.0%} of the history's CPU")
    print(f"  files added or changed between the points: {int(median['changed'])} "
          f"({median['changed'] / max(tree_files(args.path), 1):.1f}x the files at HEAD)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
