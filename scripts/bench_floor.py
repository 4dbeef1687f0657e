"""A cold scan against the floor (scripts/floor.py: reading the tree and parsing each source file once), on fixed
real trees, in CPU seconds: the ratio that says whether the scan does more than it must, whatever the machine.

    .venv/bin/python -m scripts.bench_floor                       # the pinned trees (fetched once, see --git)
    .venv/bin/python -m scripts.bench_floor --tree DIR ...        # any trees
    .venv/bin/python -m scripts.bench_floor --git DeepSpeed=/path/to/DeepSpeed.git ...   # a local clone to read
    .venv/bin/python -m scripts.bench_floor --json out.json --reports DIR   # also the figures and the reports

Per tree, each measurement the best (least CPU) of --times runs: the floor; `rocm-audit check TREE --format json
--no-cache -j 1` (the console script, as a user runs it) in CPU seconds of the whole process tree (user + system,
start-up and report included) and as a multiple of the floor; the same at the default -j, its wall time and its
CPU over the -j 1 CPU; the peak summed PSS of the process tree (/proc/PID/smaps_rollup, sampled while it runs);
and the CPU of each stage at -j 1 in one process (discovery, build model, parse, match, judge, report, other:
start-up, the rulebook, the pieces between). Sources are never kept in this repository: a tree is extracted from
a git commit into the user's cache directory (rocm-audit-bench/trees) once.
"""
from __future__ import annotations

import argparse
import json
import os
import resource
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import asdict, dataclass
import tomllib
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent

# name, GitHub repository, commit: fixed, so that every run and every machine scans the same bytes
PINNED = tuple((t["name"], t["repository"], t["commit"])
               for t in tomllib.loads((REPO / "benchmarks" / "trees.toml").read_text())["tree"])
STAGES = ("discovery", "build model", "parse", "match", "judge", "report", "other")


# --- the trees -----------------------------------------------------------------------------------------------

def cache_root() -> Path:
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "rocm-audit-bench" / "trees"


def extract(git_dir: Path, commit: str, into: Path) -> None:
    """Every blob of `commit` written under `into` (blobs a partial clone lacks are left out: they are the large
    binaries no scan reads past its size limit)."""
    listing = subprocess.run(["git", f"--git-dir={git_dir}", "ls-tree", "-r", "-z", commit],
                             capture_output=True, check=True).stdout.split(b"\0")
    entries = [(line.split(b"\t", 1)[1].decode(), line.split()[2].decode()) for line in listing
               if line and line.split()[1] == b"blob" and not line.startswith(b"120000")]
    part = into.with_name(into.name + ".part")
    shutil.rmtree(part, ignore_errors=True)
    batch = subprocess.Popen(["git", f"--git-dir={git_dir}", "cat-file", "--batch"], stdin=subprocess.PIPE,
                             stdout=subprocess.PIPE)
    assert batch.stdin and batch.stdout
    for path, sha in entries:
        batch.stdin.write(sha.encode() + b"\n")
        batch.stdin.flush()
        header = batch.stdout.readline().split()
        if header[-1] == b"missing":
            continue
        data = batch.stdout.read(int(header[2]))
        batch.stdout.read(1)
        target = part / path
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(data)
    batch.stdin.close()
    batch.wait()
    part.rename(into)


def pinned_tree(name: str, repo: str, commit: str, git_dirs: dict[str, Path]) -> Path:
    into = cache_root() / f"{name}-{commit[:12]}"
    if into.is_dir():
        return into
    into.parent.mkdir(parents=True, exist_ok=True)
    git_dir = git_dirs.get(name)
    if git_dir is None:
        git_dir = cache_root() / f"{name}.git"
        if not git_dir.is_dir():
            subprocess.run(["git", "clone", "--bare", "--filter=blob:limit=4m", f"https://github.com/{repo}",
                            str(git_dir)], check=True)
    extract(git_dir, commit, into)
    return into


# --- running and sampling ----------------------------------------------------------------------------------

def _descendants(pid: int) -> list[int]:
    found, todo = [], [pid]
    while todo:
        current = todo.pop()
        found.append(current)
        try:
            for task in os.listdir(f"/proc/{current}/task"):
                with open(f"/proc/{current}/task/{task}/children", encoding="ascii") as handle:
                    todo.extend(int(child) for child in handle.read().split())
        except OSError:
            continue
    return found


def tree_pss_kib(pid: int) -> int:
    """The summed proportional set size of a process and its descendants: shared pages counted once overall."""
    total = 0
    for each in _descendants(pid):
        try:
            with open(f"/proc/{each}/smaps_rollup", encoding="ascii") as handle:
                for line in handle:
                    if line.startswith("Pss:"):
                        total += int(line.split()[1])
                        break
        except OSError:
            continue
    return total


@dataclass(frozen=True)
class Run:
    cpu: float          # user + system seconds of the command and every process it waited for
    wall: float
    pss_kib: int        # peak summed PSS of the process tree


def _children_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def run(command: list[str], env: dict[str, str]) -> Run:
    peak = [0]
    before = _children_cpu()
    start = time.perf_counter()
    process = subprocess.Popen(command, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    done = threading.Event()

    def sample() -> None:
        while not done.wait(0.05):
            peak[0] = max(peak[0], tree_pss_kib(process.pid))

    sampler = threading.Thread(target=sample, daemon=True)
    sampler.start()
    _, stderr = process.communicate()
    wall = time.perf_counter() - start
    done.set()
    sampler.join()
    if process.returncode not in (0, 1):
        raise SystemExit(f"bench_floor: {' '.join(command)} exited {process.returncode}: {stderr.decode()[-2000:]}")
    return Run(_children_cpu() - before, wall, peak[0])


def best(runs: list[Run]) -> Run:
    """The least CPU, the least wall, the largest peak of the runs: each figure as the machine allows it."""
    return Run(min(r.cpu for r in runs), min(r.wall for r in runs), max(r.pss_kib for r in runs))


def environment(pycache: Path) -> dict[str, str]:
    """As installed: bytecode compiled once and reused, no cache directory from the caller's environment."""
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONDONTWRITEBYTECODE", "ROCM_AUDIT_CACHE_DIR")}
    env["PYTHONPYCACHEPREFIX"] = str(pycache)
    return env


COMMAND: list[Path] = []   # --command: another installation's rocm-audit (its interpreter runs the floor too)


def rocm_audit() -> list[str]:
    script = COMMAND[0] if COMMAND else Path(sys.executable).parent / "rocm-audit"
    return [str(script)] if script.exists() else [sys.executable, "-m", "auditor"]


def python() -> str:
    """The interpreter of the installation measured: its `auditor` is the one the floor and the stages import."""
    return str(COMMAND[0].parent / "python") if COMMAND else sys.executable


def floor_cpu(tree: Path, env: dict[str, str], repeat: int = 1) -> tuple[float, int]:
    done = subprocess.run([python(), str(REPO / "scripts" / "floor.py"), "--json", "--repeat", str(repeat),
                           str(tree)], env=env,
                          capture_output=True, text=True, check=True)
    measured = json.loads(done.stdout)
    return measured["cpu_seconds"], measured["files"]


def stage_cpu(tree: Path, env: dict[str, str]) -> dict[str, float]:
    done = subprocess.run([python(), str(REPO / "scripts" / "stagecpu.py"), str(tree)], env=env,
                          capture_output=True, text=True, check=True)
    return json.loads(done.stdout)


# --- the benchmark ----------------------------------------------------------------------------------------------

@dataclass(frozen=True)
class Measured:
    tree: str
    files: int
    floor_cpu: float
    j1_cpu: float
    ratio: float              # j1_cpu / floor_cpu
    default_cpu: float
    default_wall: float
    parallel_ratio: float     # default_cpu / j1_cpu
    pss_mib: float            # peak summed PSS, the larger of the two settings
    stages: dict[str, float]  # CPU seconds of each stage at -j 1, in one process


def measure(tree: Path, times: int, env: dict[str, str], reports: Path | None, work: Path,
            with_stages: bool = True) -> Measured:
    out = work / f"{tree.name}.json"
    check = [*rocm_audit(), "check", str(tree), "--format", "json", "--no-cache", "--no-progress", "-o", str(out)]
    floors, serial, parallel = [], [], []
    files = 0
    for _ in range(times):   # interleaved, so that a busy spell of a shared machine falls on all of them alike
        seconds, files = floor_cpu(tree, env)
        floors.append(seconds)
        serial.append(run([*check, "-j", "1"], env))
        parallel.append(run(check, env))
    if reports is not None:
        reports.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(out, reports / f"{tree.name}.json")
    one, many = best(serial), best(parallel)
    stages = stage_cpu(tree, env) if with_stages else {}
    return Measured(tree.name, files, min(floors), one.cpu, one.cpu / min(floors), many.cpu, many.wall,
                    many.cpu / one.cpu, max(one.pss_kib, many.pss_kib) / 1024, stages)


def table(rows: list[Measured]) -> str:
    header = "| tree | files | floor CPU s | -j 1 CPU s | ratio | default -j CPU s | wall s | CPU default/-j 1 " \
        "| peak PSS MiB |"
    lines = [header, "|---|---|---|---|---|---|---|---|---|"]
    for m in rows:
        lines.append(f"| {m.tree} | {m.files:,} | {m.floor_cpu:.2f} | {m.j1_cpu:.2f} | {m.ratio:.2f}x | "
                     f"{m.default_cpu:.2f} | {m.default_wall:.2f} | {m.parallel_ratio:.2f}x | {m.pss_mib:.0f} |")
    if any(m.stages for m in rows):
        lines += ["", "CPU s of each stage at -j 1 (one process):", "",
                  "| tree | " + " | ".join(STAGES) + " |", "|---|" + "---|" * len(STAGES)]
        for m in rows:
            lines.append(f"| {m.tree} | " + " | ".join(f"{m.stages.get(s, 0.0):.2f}" for s in STAGES) + " |")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--tree", type=Path, action="append", default=[], help="a tree to measure (default: the "
                        "pinned ones)")
    parser.add_argument("--only", action="append", default=[], help="of the pinned trees, only this one")
    parser.add_argument("--git", action="append", default=[], metavar="NAME=GITDIR",
                        help="read a pinned tree's commit from this local clone instead of cloning it")
    parser.add_argument("--command", type=Path, help="measure this installation's rocm-audit (for before/after)")
    parser.add_argument("-n", "--times", type=int, default=3, help="runs of each measurement (the best is kept)")
    parser.add_argument("--no-stages", action="store_true", help="skip the per-stage run")
    parser.add_argument("--json", type=Path, help="also write the figures here")
    parser.add_argument("--reports", type=Path, help="keep each tree's JSON report here (to compare before/after)")
    args = parser.parse_args(argv)
    COMMAND[:] = [args.command.absolute()] if args.command else []
    git_dirs = {name: Path(path) for name, _, path in (g.partition("=") for g in args.git)}
    trees = list(args.tree) or [pinned_tree(name, repo, commit, git_dirs) for name, repo, commit in PINNED
                                if not args.only or name in args.only]
    work = Path(tempfile.mkdtemp(prefix="rocm-audit-bench-floor-"))
    try:
        env = environment(work / "pycache")
        subprocess.run([*rocm_audit(), "--version"], env=env, capture_output=True, check=True)   # bytecode
        rows: list[Measured] = []
        for tree in trees:   # each tree's figures as soon as they are measured: a long run interrupted keeps them
            rows.append(measure(tree, args.times, env, args.reports, work, not args.no_stages))
            print(json.dumps(asdict(rows[-1])), flush=True)
            if args.json:
                args.json.write_text(json.dumps([asdict(m) for m in rows], indent=2) + "\n", encoding="utf-8")
    finally:
        shutil.rmtree(work, ignore_errors=True)
    print(f"{os.cpu_count()} cores, load average {os.getloadavg()[0]:.2f} at the end; best of {args.times} runs")
    print(table(rows))
    return 0


if __name__ == "__main__":
    sys.exit(main())
