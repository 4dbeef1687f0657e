"""CI's guard against a slower scan: the CPU a scan spends on a fixed tree as a multiple of its floor (read the
file, one parse: scripts/floor.py), against the ratio recorded in benchmarks/ratio.json. A ratio, so the
machine's speed cancels out.

    .venv/bin/python -m scripts.floor_guard            # exit 1 when the ratio is over the recorded one by > LIMIT
    .venv/bin/python -m scripts.floor_guard --record   # record the ratio (median of 3 runs), after a deliberate change

Paired, so that a shared machine's load cancels out too: on a busy 2-core machine a whole scan and a whole floor,
timed one after the other, each saw a different share of the others' work, and their ratio moved by 20% from run
to run. Here one process scans the tree file by file and, right before each file, reads and parses that file as
the floor does: the two are timed a few milliseconds apart, file after file, so both see the same load. The
collector is off during the floor's parse, as good as in the floor's own process, where it has next to nothing to
visit. The scan is what a `-j 1` run does after start-up: the pre-pass (discovery, the build model, the macros),
every file through the runner's own scan of one file, and the analysis (reach model, dispositions, the
cross-language link, verdicts). Start-up (imports, the rulebook, compiling the queries) is left out: it is the same
for any tree, and the first round, which pays it, is not counted.

    ratio = (pre-pass + scans + analysis) / floors, in CPU seconds of this process, summed over ROUNDS rounds

The tree is this repository's `fixtures/` as of the git tree recorded with the ratio (a fixture added later does
not move it; the fixtures as checked out when this clone lacks that tree) copied COPIES times.
"""
from __future__ import annotations

import argparse
import gc
import json
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from scripts.bench_floor import extract  # noqa: E402

RECORD = REPO / "benchmarks" / "ratio.json"
COPIES = 6
ROUNDS = 6          # counted rounds (after one uncounted)
RECORD_RUNS = 3     # --record: the median of this many runs
LIMIT = 0.10        # fail above the recorded ratio by more than this: a 15% regression fails with room for noise


def fixtures_tree() -> str | None:
    """The git tree of fixtures/ at HEAD (None outside a git checkout)."""
    done = subprocess.run(["git", "-C", str(REPO), "rev-parse", "HEAD:fixtures"], capture_output=True, text=True)
    return done.stdout.strip() if done.returncode == 0 else None


def fixtures_copy(tree_hash: str | None, into: Path) -> tuple[Path, str]:
    """The fixtures as of `tree_hash` when this clone has that tree, else as checked out (and why)."""
    if tree_hash:
        git_dir = subprocess.run(["git", "-C", str(REPO), "rev-parse", "--absolute-git-dir"],
                                 capture_output=True, text=True).stdout.strip()
        known = subprocess.run(["git", f"--git-dir={git_dir}", "cat-file", "-e", f"{tree_hash}^{{tree}}"],
                               capture_output=True)
        if git_dir and known.returncode == 0:
            extract(Path(git_dir), tree_hash, into)
            return into, f"fixtures at tree {tree_hash[:12]}"
    shutil.copytree(REPO / "fixtures", into)
    return into, "fixtures as checked out (the recorded tree is not in this clone)"


def guard_tree(work: Path, tree_hash: str | None) -> tuple[Path, str]:
    source, described = fixtures_copy(tree_hash, work / "fixtures")
    tree = work / "tree"
    for copy in range(COPIES):
        shutil.copytree(source, tree / f"copy{copy}")
    return tree, described


class Floor:
    """scripts/floor.py's work on one file: read it, then its one parse."""

    def __init__(self) -> None:
        from scripts.floor import cuda_parser, parse_once

        self.parser, self.parse_once = cuda_parser(), parse_once

    def __call__(self, abspath: str, kind: str) -> None:
        try:
            data = Path(abspath).read_bytes()
        except OSError:
            return
        self.parse_once(self.parser, data, kind)


def one_round(tree: Path, rulebook, floor: Floor) -> tuple[float, float, int]:
    """(floor CPU, scan CPU, files) of one paired pass over the tree."""
    from auditor.run.pipeline import ScanOptions
    from auditor.run.pipeline.context import analyse, prepare
    from auditor.run.scan.file import scan_file

    clock = time.process_time
    start = clock()
    ctx = prepare([tree], rulebook, ScanOptions(jobs=1))
    scan = clock() - start
    floors = 0.0
    results = []
    for source in ctx.files:
        gc.disable()   # as in the floor's own small process, where the collector has next to nothing to visit
        start = clock()
        floor(str(source.abspath), source.kind)
        middle = clock()
        gc.enable()
        results.append(scan_file(source, ctx.scan))
        end = clock()
        floors += middle - start
        scan += end - middle
    start = clock()
    analyse(ctx, sorted(results, key=lambda r: r.path))
    return floors, scan + clock() - start, len(ctx.files)


def measure(rounds: int, tree_hash: str | None) -> dict[str, object]:
    from auditor.match.rulebook import load_rulebook

    try:
        from auditor.cli.app import fewer_collections
        fewer_collections()   # the collector as the command line sets it
    except ImportError:   # an installation from before it
        pass
    work = Path(tempfile.mkdtemp(prefix="rocm-audit-floor-guard-"))
    try:
        tree, described = guard_tree(work, tree_hash)
        rulebook = load_rulebook()
        floor = Floor()
        one_round(tree, rulebook, floor)   # start-up: the queries compiled, the memos and page cache warm
        rows = [one_round(tree, rulebook, floor) for _ in range(rounds)]
    finally:
        shutil.rmtree(work, ignore_errors=True)
    floors, scans = sum(r[0] for r in rows), sum(r[1] for r in rows)
    per_round = sorted(r[1] / r[0] for r in rows)
    return {"tree": f"{described}, x{COPIES} ({rows[0][2]} files)", "rounds": rounds,
            "floor_cpu": round(floors / rounds, 3), "scan_cpu": round(scans / rounds, 3),
            "ratio": round(scans / floors, 3), "least_round": round(per_round[0], 3),
            "most_round": round(per_round[-1], 3)}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--record", action="store_true", help=f"write the measured ratio to {RECORD.name}")
    parser.add_argument("-n", "--rounds", type=int, default=ROUNDS)
    args = parser.parse_args(argv)
    recorded = json.loads(RECORD.read_text(encoding="utf-8")) if RECORD.exists() else {}
    tree_hash = fixtures_tree() if args.record else recorded.get("fixtures_tree") or fixtures_tree()
    # a record is the median of RECORD_RUNS measurements: one run's luck would move every later verdict
    runs = sorted((measure(args.rounds, tree_hash) for _ in range(RECORD_RUNS if args.record else 1)),
                  key=lambda m: float(str(m["ratio"])))
    measured = runs[len(runs) // 2]
    if args.record:
        print("floor guard: runs " + ", ".join(f"{m['ratio']:.2f}x" for m in runs) + "; the median recorded")
    print(f"floor guard: {measured['tree']}: per round floor {measured['floor_cpu']:.2f} CPU s, scan "
          f"{measured['scan_cpu']:.2f} CPU s; ratio {measured['ratio']:.2f}x (rounds {measured['least_round']:.2f}x"
          f" to {measured['most_round']:.2f}x)")
    if args.record:
        RECORD.parent.mkdir(exist_ok=True)
        RECORD.write_text(json.dumps({"fixtures_tree": tree_hash, **measured}, indent=2) + "\n", encoding="utf-8")
        print(f"recorded in {RECORD.relative_to(REPO)}")
        return 0
    limit = recorded["ratio"] * (1 + LIMIT)
    if measured["ratio"] > limit:
        print(f"FAIL: ratio {measured['ratio']:.2f}x is over the recorded {recorded['ratio']:.2f}x by more than "
              f"{LIMIT:.0%} (limit {limit:.2f}x)")
        return 1
    print(f"ok: ratio {measured['ratio']:.2f}x, recorded {recorded['ratio']:.2f}x (limit {limit:.2f}x)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
