"""CI's guard against a slower scan: a cold `-j 1` scan of a small fixed tree as a multiple of its floor
(scripts/floor.py), against the ratio recorded in benchmarks/ratio.json. A ratio, so the machine's speed cancels.

    .venv/bin/python -m scripts.floor_guard            # exit 1 when the ratio is over the recorded one by > 15%
    .venv/bin/python -m scripts.floor_guard --record   # measure and record the ratio (after a deliberate change)

The tree is this repository's `fixtures/` copied COPIES times into a temporary directory (each copy under a
directory of its own), so that the floor is long enough to measure and the tree never changes by itself. Each
figure is the least CPU of --times runs (a shared machine only ever adds time), the floor's of 5 passes a run.
"""
from __future__ import annotations

import argparse
import json
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from scripts.bench_floor import environment, floor_cpu, rocm_audit, run  # noqa: E402

RECORD = REPO / "benchmarks" / "ratio.json"
COPIES = 8
TOLERANCE = 0.15
FLOOR_REPEAT = 5   # the floor is short (0.3 s): the least of 5 passes in each run


def guard_tree(into: Path) -> Path:
    tree = into / "tree"
    for copy in range(COPIES):
        shutil.copytree(REPO / "fixtures", tree / f"copy{copy}")
    return tree


def measure(times: int) -> dict[str, float]:
    work = Path(tempfile.mkdtemp(prefix="rocm-audit-floor-guard-"))
    try:
        tree = guard_tree(work)
        env = environment(work / "pycache")
        subprocess.run([*rocm_audit(), "--version"], env=env, capture_output=True, check=True)   # bytecode
        check = [*rocm_audit(), "check", str(tree), "--format", "json", "--no-cache", "--no-progress", "-j", "1",
                 "-o", str(work / "report.json")]
        floors, scans = [], []
        for _ in range(times):
            floors.append(floor_cpu(tree, env, FLOOR_REPEAT)[0])
            scans.append(run(check, env).cpu)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    return {"floor_cpu": round(min(floors), 3), "scan_cpu": round(min(scans), 3),
            "ratio": round(min(scans) / min(floors), 3)}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--record", action="store_true", help=f"write the measured ratio to {RECORD.name}")
    parser.add_argument("-n", "--times", type=int, default=3)
    args = parser.parse_args(argv)
    measured = measure(args.times)
    print(f"floor guard: fixtures x{COPIES}: floor {measured['floor_cpu']:.2f} CPU s, scan -j 1 "
          f"{measured['scan_cpu']:.2f} CPU s, ratio {measured['ratio']:.2f}x")
    if args.record:
        RECORD.parent.mkdir(exist_ok=True)
        RECORD.write_text(json.dumps({"tree": f"fixtures x{COPIES}", **measured}, indent=2) + "\n", encoding="utf-8")
        print(f"recorded in {RECORD.relative_to(REPO)}")
        return 0
    recorded = json.loads(RECORD.read_text(encoding="utf-8"))["ratio"]
    limit = recorded * (1 + TOLERANCE)
    if measured["ratio"] > limit:
        print(f"FAIL: ratio {measured['ratio']:.2f}x is over the recorded {recorded:.2f}x by more than "
              f"{TOLERANCE:.0%} (limit {limit:.2f}x)")
        return 1
    print(f"ok: ratio {measured['ratio']:.2f}x, recorded {recorded:.2f}x (limit {limit:.2f}x)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
