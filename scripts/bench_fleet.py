"""Benchmark `rocm-audit fleet` against scanning the same repositories one by one.

    .venv/bin/python scripts/bench_fleet.py DIR [--jobs N] [--scheduler tcp://HOST:PORT] [--no-dask]

DIR holds one repository per subdirectory (git checkouts or unpacked sdists). Three measurements, each with
no result cache (--no-cache), on the same machine:

  1. single: `rocm-audit check REPO --format json --no-cache` for each repository in turn (what a script over
     the repositories would do; each check uses every core), the wall times summed;
  2. fleet, local executor: `rocm-audit fleet DIR --no-cache` (--jobs repositories at once);
  3. fleet, Dask: the same through `--executor dask`, on --scheduler, else on a LocalCluster started here
     (one single-threaded worker process per core) whose start-up is not counted.

It checks that every repository gets the same verdict and effort in all three, and prints a Markdown table.
"""
from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path


def _rocm_audit(*args: str) -> tuple[float, subprocess.CompletedProcess]:
    started = time.perf_counter()
    done = subprocess.run([sys.executable, "-m", "auditor", *args], capture_output=True, text=True, check=False)
    return time.perf_counter() - started, done


def single_scans(repos: list[Path], out: Path) -> tuple[float, dict[str, tuple]]:
    total, verdicts = 0.0, {}
    for repo in repos:
        target = out / f"{repo.name}.json"
        seconds, done = _rocm_audit("check", str(repo), "--format", "json", "-o", str(target), "--no-cache",
                                    "--no-html", "--no-progress")
        if done.returncode not in (0, 1):
            print(f"  {repo.name}: check failed: {done.stderr.strip()[-300:]}", file=sys.stderr)
            continue
        report = json.loads(target.read_text(encoding="utf-8"))
        verdicts[repo.name] = (report["summary"]["verdict"], report["effort"]["low_days"],
                               report["effort"]["high_days"])
        total += seconds
        print(f"  {repo.name}: {seconds:.1f} s, {report['summary']['files_scanned']} files, "
              f"{report['summary']['lines_scanned']} lines, {verdicts[repo.name][0]}", file=sys.stderr)
    return total, verdicts


def fleet(directory: Path, out: Path, *extra: str) -> tuple[float, dict[str, tuple]]:
    seconds, done = _rocm_audit("fleet", str(directory), "--out", str(out), "--no-cache", "--format", "json", "-q",
                                *extra)
    if done.returncode not in (0, 1):
        raise SystemExit(f"fleet failed ({done.returncode}): {done.stderr.strip()[-500:]}")
    portfolio = json.loads(done.stdout)
    for row in portfolio["repositories"]:
        if row["status"] == "failed":
            print(f"  {row['name']}: failed: {row['reason']}", file=sys.stderr)
    return seconds, {r["name"]: (r["verdict"], r["effort_low_days"], r["effort_high_days"])
                     for r in portfolio["repositories"] if r["status"] != "failed"}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("directory", type=Path)
    parser.add_argument("--jobs", type=int, default=len(os.sched_getaffinity(0)))
    parser.add_argument("--scheduler", help="an existing Dask scheduler (default: a LocalCluster started here)")
    parser.add_argument("--no-dask", action="store_true")
    args = parser.parse_args()
    repos = sorted(p for p in args.directory.iterdir() if p.is_dir() and not p.name.startswith("."))
    rows = []
    with tempfile.TemporaryDirectory(prefix="bench-fleet-") as scratch:
        work = Path(scratch)
        (work / "single").mkdir()
        print(f"single scans of {len(repos)} repositories:", file=sys.stderr)
        single, expected = single_scans(repos, work / "single")
        rows.append(("sum of single `check` runs", single, expected))
        print("fleet, local executor:", file=sys.stderr)
        local, got = fleet(args.directory, work / "local", "--jobs", str(args.jobs))
        rows.append((f"`fleet`, local executor (--jobs {args.jobs})", local, got))
        if not args.no_dask:
            cluster = None
            scheduler = args.scheduler
            if scheduler is None:
                from distributed import LocalCluster

                cluster = LocalCluster(n_workers=args.jobs, threads_per_worker=1, processes=True,
                                       dashboard_address=None, host="127.0.0.1")
                scheduler = cluster.scheduler_address
            print(f"fleet, Dask at {scheduler}:", file=sys.stderr)
            try:
                dask, got_dask = fleet(args.directory, work / "dask", "--executor", "dask", "--scheduler", scheduler)
            finally:
                if cluster is not None:
                    cluster.close()
            rows.append((f"`fleet`, Dask ({'LocalCluster, ' + str(args.jobs) + ' workers' if cluster else scheduler})",
                         dask, got_dask))
    print(f"\n{len(repos)} repositories, {os.cpu_count()} cores\n")
    print("| run | wall time | vs single scans | same verdicts and effort |")
    print("|---|---|---|---|")
    for label, seconds, found in rows:
        same = "yes" if found == expected else f"NO ({len(set(found.items()) ^ set(expected.items()))} differ)"
        print(f"| {label} | {seconds:.1f} s | {seconds / single:.2f}x | {same} |")


if __name__ == "__main__":
    main()
