"""Where a cold scan's CPU time goes: one `check TREE --no-cache` in this process, with one worker (-j 1).

    .venv/bin/python -m scripts.profile_cold TREE [--top 15] [--save FILE.prof]

Prints the CPU seconds of the scan's main stages (each counted once however deeply it recurses), then the
cProfile top entries by cumulative and by own time. Stage times come from a run without the profiler (cProfile
inflates pure-Python code several times over); the profile is a second run in the same process (what the first
loaded once per process, it reuses). Compare installations with
scripts/bench_cold.py; this script says what to look at.
"""
from __future__ import annotations

import argparse
import cProfile
import functools
import importlib
import pstats
import sys
import time
from collections import Counter
from collections.abc import Callable
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

# (module, function): looked up on the module at call time by their callers, so wrapping them here counts them
STAGES = (
    ("auditor.parse.cuda", "parse"), ("auditor.parse.cuda", "blank_macro_shapes"),
    ("auditor.parse.cuda", "read_across"), ("auditor.parse.cuda", "inventory"),
    ("auditor.match.engines.cuda", "scan_cuda"), ("auditor.parse.preproc", "line_states"),
    ("auditor.match.hipify.references", "find_references"), ("auditor.match.xlang.exports", "defined_functions"),
    ("auditor.match.engines.python", "scan_python"),
)


def _timed(function: Callable, key: str, totals: Counter, calls: Counter, active: set[str]) -> Callable:
    @functools.wraps(function)
    def wrapper(*args, **kwargs):
        if key in active:   # a recursive or nested call: counted by the outer one
            return function(*args, **kwargs)
        active.add(key)
        start = time.process_time()
        try:
            return function(*args, **kwargs)
        finally:
            totals[key] += time.process_time() - start
            calls[key] += 1
            active.discard(key)
    return wrapper


def _check(tree: Path) -> int:
    import auditor.run.runner.workers as workers
    from auditor.cli.app import main

    workers.fork_available = lambda: False  # type: ignore[attr-defined]  # every file in this process, profiled
    return main(["check", str(tree), "--format", "json", "--no-cache", "--no-progress", "-j", "1",
                 "-o", "/dev/null"])


def stage_times(tree: Path) -> tuple[float, Counter, Counter]:
    totals: Counter = Counter()
    calls: Counter = Counter()
    active: set[str] = set()
    originals = {(module, name): getattr(module, name)
                 for module, name in ((importlib.import_module(m), n) for m, n in STAGES)}
    for (module, name), function in originals.items():
        setattr(module, name, _timed(function, f"{module.__name__}.{name}", totals, calls, active))
    try:
        start = time.process_time()
        _check(tree)
        return time.process_time() - start, totals, calls
    finally:   # the profiled run sees the functions as they are
        for (module, name), function in originals.items():
            setattr(module, name, function)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("tree", type=Path)
    parser.add_argument("--top", type=int, default=15)
    parser.add_argument("--save", type=Path, help="also write the cProfile data here")
    args = parser.parse_args(argv)
    total, totals, calls = stage_times(args.tree)
    print(f"{args.tree.name}: {total:.2f} s CPU in all (-j 1, no profiler)")
    for key, seconds in totals.most_common():
        print(f"  {seconds:7.2f} s {seconds / total * 100:5.1f}%  {calls[key]:6} calls  {key}")
    profiler = cProfile.Profile()
    profiler.runcall(_check, args.tree)
    if args.save:
        profiler.dump_stats(str(args.save))
    stats = pstats.Stats(profiler)
    stats.strip_dirs().sort_stats("cumulative").print_stats(args.top)
    stats.sort_stats("tottime").print_stats(args.top)
    return 0


if __name__ == "__main__":
    sys.exit(main())
