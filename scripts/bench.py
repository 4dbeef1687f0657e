"""Benchmark rocm-audit on a large tree built from real CUDA projects, and check the speed goals.

    .venv/bin/python scripts/bench.py                  # downloads the sdists once, into the user cache
    .venv/bin/python scripts/bench.py --src DIR --offline   # sdists (*.tar.gz) or unpacked ones already in DIR
    .venv/bin/python scripts/bench.py --large --src DIR     # the scale goals (scripts/bench_large.py)
    .venv/bin/python scripts/bench.py --hipify-perl PATH --repos DIR...   # side by side (scripts/bench_hipify.py)

The tree mixes the sources of the PyPI sdists below: the 300 largest C/C++/CUDA files (the largest ones
twice, as a second copy of their package, until they total 6 MB), 450 Python files sampled with a fixed seed,
and the sdists' other files (manifests, build files, docs) to 1,000 files in all. Vendored directories are
left out, so every C/C++ and Python file is scanned. The tree is split into two halves (part-a/, part-b/) to
measure how time grows with size. It is built in a temporary directory and deleted afterwards (--keep keeps
it); downloads go to the user cache directory (or --src), never into this repository.

rocm-audit runs as a user runs it (the console script, in a subprocess, with compiled bytecode). Wall times
are medians; peak memory is the largest sum of the resident sizes of rocm-audit and its worker processes.
The tree's C/C++ row takes hipify-perl to spend 15 ms per source line with `-examine`; `--hipify-perl PATH
--repos DIR...` measures the real hipify-perl against rocm-audit on whole repositories, in one run.
"""
from __future__ import annotations

import argparse
import hashlib
import json
import os
import random
import re
import resource
import shutil
import subprocess
import sys
import tarfile
import tempfile
import threading
import time
import urllib.parse
import urllib.request
from dataclasses import dataclass
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from auditor.run.discover.files import ALWAYS_SKIPPED_DIRS, VENDORED_DIRS, classify  # noqa: E402

PACKAGES = (("deepspeed", "0.19.8"), ("xformers", "0.0.35"), ("flash-attn", "2.8.3.post2"),
            ("mamba-ssm", "2.3.2.post1"), ("causal-conv1d", "1.7.0"), ("bitsandbytes", "0.42.0"))
C_FILES, C_BYTES, PY_FILES, ALL_FILES = 300, 6_000_000, 450, 1000
PRE_COMMIT_C, PRE_COMMIT_OTHER = 9, 11
HIPIFY_SECONDS_PER_LINE = 0.015
SEED = 6


# --- sources --------------------------------------------------------------------------------------

def sdist_stem(name: str, version: str) -> str:
    return f"{name.replace('-', '_')}-{version}"


def find_source(src: Path, name: str, version: str) -> Path | None:
    """An unpacked sdist directory in `src` (unpacking its tarball when that is all there is)."""
    for stem in (sdist_stem(name, version), f"{name}-{version}"):
        if (src / stem).is_dir():
            return src / stem
        archive = src / f"{stem}.tar.gz"
        if archive.is_file():
            with tarfile.open(archive) as tar:
                tar.extractall(src, filter="data")
            if (src / stem).is_dir():
                return src / stem
    return None


def download(src: Path, name: str, version: str) -> None:
    """pip first. pip keeps nothing when preparing the sdist's metadata needs build dependencies it cannot get
    (torch, for most of these), so then the sdist is fetched from the page of the index pip reads (PEP 503) and
    checked against the sha256 the index gives."""
    src.mkdir(parents=True, exist_ok=True)
    subprocess.run([sys.executable, "-m", "pip", "download", "--no-deps", "--no-binary", ":all:", "--dest", str(src),
                    f"{name}=={version}"], capture_output=True, check=False)
    archive = f"{sdist_stem(name, version)}.tar.gz"
    if (src / archive).exists():
        return
    index = os.environ.get("PIP_INDEX_URL", "https://pypi.org/simple").rstrip("/")
    page_url = f"{index}/{name}/"
    with urllib.request.urlopen(page_url, timeout=60) as response:
        page = response.read().decode("utf-8", "replace")
    link = re.search(rf'href="([^"]*/{re.escape(archive)})#sha256=([0-9a-f]{{64}})"', page)
    if link is None:
        raise SystemExit(f"bench: {archive} is not on {page_url}; download it and pass --src DIR")
    with urllib.request.urlopen(urllib.parse.urljoin(page_url, link.group(1)), timeout=600) as response:
        data = response.read()
    if hashlib.sha256(data).hexdigest() != link.group(2):
        raise SystemExit(f"bench: {archive}: sha256 mismatch")
    (src / archive).write_bytes(data)


def sources(src: Path, offline: bool) -> dict[str, Path]:
    found: dict[str, Path] = {}
    for name, version in PACKAGES:
        path = find_source(src, name, version)
        if path is None and not offline:
            print(f"bench: downloading {name}=={version} into {src}", file=sys.stderr)
            download(src, name, version)
            path = find_source(src, name, version)
        if path is None:
            raise SystemExit(f"bench: {name} {version} is not in {src} (unpacked or .tar.gz); run without --offline")
        found[name] = path
    return found


# --- the tree -------------------------------------------------------------------------------------

@dataclass(frozen=True, slots=True)
class Pick:
    package: str
    relative: str
    origin: Path
    size: int
    copy: int = 1

    def target(self, tree: Path, part: str) -> Path:
        folder = self.package if self.copy == 1 else f"{self.package}-copy{self.copy}"
        return tree / part / folder / self.relative


@dataclass(frozen=True, slots=True)
class Tree:
    root: Path
    c_files: tuple[Path, ...]
    python_files: tuple[Path, ...]
    other_files: tuple[Path, ...]

    @property
    def files(self) -> tuple[Path, ...]:
        return self.c_files + self.python_files + self.other_files


def _pools(packages: dict[str, Path]) -> tuple[list[Pick], list[Pick], list[Pick]]:
    c_pool, py_pool, other_pool = [], [], []
    for package, top in packages.items():
        for folder, dirs, files in os.walk(top):
            dirs[:] = sorted(d for d in dirs if d not in VENDORED_DIRS and d not in ALWAYS_SKIPPED_DIRS
                             and not d.endswith(".egg-info"))
            for name in sorted(files):
                path = Path(folder) / name
                relative = path.relative_to(top).as_posix()
                head = path.read_bytes()[:8192]
                size = path.stat().st_size
                if b"\0" in head or size > 1_000_000:
                    continue   # binaries (.so) and data blobs
                kind = classify(relative)
                pool = c_pool if kind in ("cuda", "cpp") else py_pool if kind == "python" else other_pool
                pool.append(Pick(package, relative, path, size))
    return c_pool, py_pool, other_pool


def _c_picks(pool: list[Pick]) -> list[Pick]:
    """The C_FILES largest; then the smallest of them give way to second copies of the largest until the
    total reaches C_BYTES."""
    ordered = sorted(pool, key=lambda p: (-p.size, p.package, p.relative))
    originals, copies = ordered[:C_FILES], []
    while sum(p.size for p in originals + copies) < C_BYTES and len(copies) < len(ordered) and originals:
        originals.pop()
        largest = ordered[len(copies)]
        copies.append(Pick(largest.package, largest.relative, largest.origin, largest.size, copy=2))
    return originals + copies


def _cycled(pool: list[Pick], count: int, rng: random.Random) -> list[Pick]:
    """`count` picks from the pool: a sample, or every one of them and then copies."""
    if count <= len(pool):
        return rng.sample(pool, count)
    out = list(pool)
    copy = 2
    while len(out) < count:
        out += [Pick(p.package, p.relative, p.origin, p.size, copy) for p in pool[:count - len(out)]]
        copy += 1
    return out


def build_tree(packages: dict[str, Path], root: Path) -> Tree:
    rng = random.Random(SEED)
    c_pool, py_pool, other_pool = _pools(packages)
    c = _c_picks(c_pool)
    py = _cycled(sorted(py_pool, key=lambda p: (p.package, p.relative)), PY_FILES, rng)
    other = _cycled(sorted(other_pool, key=lambda p: (p.package, p.relative)), ALL_FILES - len(c) - len(py), rng)
    placed: list[list[Path]] = [[], [], []]
    for group, picks in enumerate((c, py, other)):
        for index, pick in enumerate(picks):
            target = pick.target(root, "part-a" if index % 2 == 0 else "part-b")
            target.parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(pick.origin, target)
            placed[group].append(target)
    return Tree(root, *(tuple(p) for p in placed))


def c_only_tree(tree: Tree, root: Path) -> Path:
    for path in tree.c_files:
        target = root / path.relative_to(tree.root)
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(path, target)
    return root


# --- running rocm-audit ---------------------------------------------------------------------------

COMMAND: list[str] = []   # --command: another installation's rocm-audit, to compare before and after a change


def rocm_audit_command() -> list[str]:
    if COMMAND:
        return COMMAND
    script = Path(sys.executable).parent / "rocm-audit"
    return [str(script)] if script.exists() else [sys.executable, "-m", "auditor"]


def child_environment(pycache: Path) -> dict[str, str]:
    """As installed: bytecode compiled once and reused (kept out of the source tree)."""
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONDONTWRITEBYTECODE", "ROCM_AUDIT_CACHE_DIR")}
    env["PYTHONPYCACHEPREFIX"] = str(pycache)
    return env


def _tree_rss_kib(pid: int) -> int:
    """Resident size of a process and all its descendants, from /proc (Linux)."""
    children: dict[int, list[int]] = {}
    rss: dict[int, int] = {}
    for entry in os.scandir("/proc"):
        if not entry.name.isdigit():
            continue
        try:
            with open(f"/proc/{entry.name}/stat", "rb") as handle:
                fields = handle.read().rsplit(b")", 1)[1].split()
            with open(f"/proc/{entry.name}/statm", "rb") as handle:
                pages = int(handle.read().split()[1])
        except (OSError, IndexError, ValueError):
            continue
        children.setdefault(int(fields[1]), []).append(int(entry.name))
        rss[int(entry.name)] = pages * os.sysconf("SC_PAGE_SIZE") // 1024
    total, todo = 0, [pid]
    while todo:
        current = todo.pop()
        total += rss.get(current, 0)
        todo.extend(children.get(current, ()))
    return total


@dataclass(frozen=True, slots=True)
class Run:
    seconds: float
    peak_kib: int        # largest sum over the process tree
    code: int
    stdout: str
    cpu_seconds: float = 0.0   # user + system time of rocm-audit and every process it waited for
    peak_pss_kib: int = 0      # largest summed PSS (shared pages counted once), when sampled (`pss=True`)


def _children_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def run(args: list[str], env: dict[str, str], cwd: Path | None = None, command: list[str] | None = None,
        pss: bool = False) -> Run:
    """`pss`: sample the summed PSS too (slower to read than the resident sizes)."""
    from scripts.bench_floor import tree_pss_kib

    peak = [0, 0]
    cpu_before = _children_cpu()
    start = time.perf_counter()
    process = subprocess.Popen((command or rocm_audit_command()) + args, env=env, cwd=cwd, stdout=subprocess.PIPE,
                               stderr=subprocess.PIPE, text=True)
    done = threading.Event()

    def sample() -> None:
        while not done.wait(0.01):
            peak[0] = max(peak[0], _tree_rss_kib(process.pid))
            if pss:
                peak[1] = max(peak[1], tree_pss_kib(process.pid))

    sampler = threading.Thread(target=sample, daemon=True)
    sampler.start()
    stdout, stderr = process.communicate()
    elapsed = time.perf_counter() - start
    done.set()
    sampler.join()
    if process.returncode not in (0, 1):
        raise SystemExit(f"bench: rocm-audit {' '.join(args)} exited {process.returncode}: {stderr}")
    return Run(elapsed, peak[0], process.returncode, stdout, _children_cpu() - cpu_before, peak[1])


def median(runs: list[Run]) -> Run:
    """The run of median time, with the highest peak memory of them all."""
    middle = sorted(runs, key=lambda r: r.seconds)[len(runs) // 2]
    cpu = sorted(r.cpu_seconds for r in runs)[len(runs) // 2]
    return Run(middle.seconds, max(r.peak_kib for r in runs), middle.code, middle.stdout, cpu)


def median_run(args: list[str], env: dict[str, str], times: int, before=None) -> Run:
    runs = []
    for _ in range(times):
        if before:
            before()
        runs.append(run(args, env))
    return median(runs)


def alternating(first: list[str], second: list[str], env: dict[str, str], pairs: int = 3) -> tuple[Run, Run]:
    """Both runs, alternately; the pair whose time ratio is the median (see scaling)."""
    measured = sorted(((run(first, env), run(second, env)) for _ in range(pairs)),
                      key=lambda pair: pair[1].seconds / pair[0].seconds)
    return measured[len(measured) // 2]


def stages(tree: Path, jobs: int, env: dict[str, str]) -> dict[str, float]:
    """Seconds per stage of a cold audit (no cache), in a fresh process."""
    done = subprocess.run([sys.executable, __file__, "--stages-of", str(tree), "-j", str(jobs)], env=env,
                          capture_output=True, text=True, check=True)
    return json.loads(done.stdout)


def scaling(tree: Path, jobs: int, env: dict[str, str], pairs: int = 3) -> tuple[dict, dict, float]:
    """Stage times at -j 1 and -j N, and how much faster the scan stage runs at -j N. The runs alternate, and
    the result is the median pair, so that a slower spell of a shared machine does not count for one side."""
    measured = []
    for _ in range(pairs):
        serial = stages(tree, 1, env)
        parallel = stages(tree, jobs, env)
        measured.append((serial, parallel, serial["scan"] / parallel["scan"]))
    measured.sort(key=lambda pair: pair[2])
    return measured[len(measured) // 2]


def measure_stages(tree: Path, jobs: int) -> dict[str, float]:
    from auditor.match.hipify.coverage import coverage
    from auditor.run.pipeline import ScanOptions, audit
    from auditor.report.json import render_json
    from auditor.match.rulebook import load_rulebook

    timings: dict[str, float] = {}
    start = time.perf_counter()
    rulebook = load_rulebook()
    timings["load rules"] = time.perf_counter() - start
    report = audit([tree], rulebook, ScanOptions(jobs=jobs), timings=timings)
    start = time.perf_counter()
    coverage(report.results)
    timings["coverage (within report)"] = time.perf_counter() - start
    start = time.perf_counter()
    render_json(report)
    timings["render json"] = time.perf_counter() - start
    return timings


# --- the benchmark --------------------------------------------------------------------------------

def lines_of(paths) -> int:
    total = 0
    for path in paths:
        data = path.read_bytes()
        total += data.count(b"\n") + (0 if data.endswith(b"\n") or not data else 1)
    return total


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--src", type=Path, help="directory with the sdists (default: the user cache directory)")
    parser.add_argument("--offline", action="store_true", help="never download; fail when a sdist is missing")
    parser.add_argument("-j", "--jobs", type=int, default=os.cpu_count() or 1, help="worker processes")
    parser.add_argument("--keep", action="store_true", help="keep the benchmark tree and print where it is")
    parser.add_argument("--large", action="store_true",
                        help="build the largest tree (the sdists and 20,000 generated .cu files) "
                             "and check the scale goals")
    parser.add_argument("--command", type=Path, help="the rocm-audit to measure (default: this environment's)")
    parser.add_argument("--hipify-perl", type=Path,
                        help="hipify-perl (bin/hipify-perl of ROCm/HIPIFY): measured side by side with rocm-audit")
    parser.add_argument("--repos", type=Path, nargs="+",
                        help="whole repositories to measure side by side with hipify-perl -examine "
                             "(scripts/bench_hipify.py)")
    parser.add_argument("--stages-of", type=Path, help=argparse.SUPPRESS)   # one audit's stage times, as JSON
    args = parser.parse_args(argv)
    if args.command:
        import scripts.bench as imported   # this file run as __main__ is not the module bench_large imports

        COMMAND[:] = imported.COMMAND[:] = [str(args.command)]
    if args.stages_of:
        print(json.dumps(measure_stages(args.stages_of, args.jobs)))
        return 0
    if args.repos:
        from scripts.bench_hipify import side_by_side

        work = Path(tempfile.mkdtemp(prefix="rocm-audit-bench-"))
        try:
            side_by_side(args.repos, args.hipify_perl, rocm_audit_command(), child_environment(work / "pycache"))
        finally:
            shutil.rmtree(work, ignore_errors=True)
        return 0
    if args.src is None:
        from platformdirs import user_cache_dir

        args.src = Path(user_cache_dir("rocm-audit-bench", appauthor=False)) / "sdists"
    packages = sources(args.src, args.offline)
    work = Path(tempfile.mkdtemp(prefix="rocm-audit-bench-"))
    try:
        if args.large:
            from scripts.bench_large import measure_large, print_large

            print(f"machine: {os.cpu_count()} cores, Python {sys.version.split()[0]}, -j {args.jobs}, "
                  f"load average {os.getloadavg()[0]:.2f} at the start", flush=True)
            return print_large(measure_large(packages, work, args.jobs, child_environment(work / "pycache")), args.jobs)
        return bench(packages, work, args.jobs)
    finally:
        if args.keep:
            print(f"kept: {work}")
        else:
            shutil.rmtree(work, ignore_errors=True)


@dataclass(frozen=True, slots=True)
class Measured:
    cold: Run                 # median of three, each with an empty cache
    warm: Run                 # median of three, nothing changed since the cold run
    identical: bool           # warm output == cold output
    files_scanned: int
    pre_commit: Run
    version: Run
    c_only: Run               # the C/C++/CUDA files alone, no cache
    c_lines: int
    half: Run                 # part-a/ alone, no cache } the median of three pairs
    full: Run                 # the whole tree, no cache }
    serial: dict[str, float]  # stage times at -j 1 and -j N: the median of three pairs
    parallel: dict[str, float]
    scan_speedup: float


def measure(tree: Tree, work: Path, jobs: int, env: dict[str, str]) -> Measured:
    run(["--no-cache", "--format", "json", "--no-progress"], env)   # compile the bytecode once, as an install does
    j = ["-j", str(jobs)]
    json_args = [str(tree.root), "--format", "json", "--no-progress", *j]
    cold = median([run([*json_args, "-o", str(work / "cold.json"), "--cache-dir", str(work / f"cache-{n}")], env)
                   for n in range(3)])
    warm = median_run([*json_args, "-o", str(work / "warm.json"), "--cache-dir", str(work / "cache-2")], env, 3)
    report = json.loads((work / "cold.json").read_text())

    pre_cache = work / "pre-commit-cache"
    run(["rules", "--cache-dir", str(pre_cache)], env)   # the rulebook is cached; the 20 files are not
    rng = random.Random(SEED)
    staged = rng.sample(tree.c_files, PRE_COMMIT_C) + rng.sample(tree.python_files + tree.other_files,
                                                                 PRE_COMMIT_OTHER)
    hook = ["check", "--force-exclude", "--quiet", "--no-progress", "--no-html", "--cache-dir", str(pre_cache),
            *map(str, staged)]
    no_cache = ["--format", "json", "--no-progress", "--no-cache", *j]
    half, full = alternating([str(tree.root / "part-a"), *no_cache, "-o", str(work / "half.json")],
                             [str(tree.root), *no_cache, "-o", str(work / "full.json")], env)
    serial, parallel, scan_speedup = scaling(tree.root, jobs, env)
    return Measured(
        cold=cold,
        warm=warm,
        identical=report == json.loads((work / "warm.json").read_text()),
        files_scanned=report["summary"]["files_scanned"],
        pre_commit=median_run(hook, env, 5, before=lambda: shutil.rmtree(pre_cache / "results", ignore_errors=True)),
        version=median_run(["--version"], env, 7),
        c_only=run([str(c_only_tree(tree, work / "c-only")), *no_cache, "-o", str(work / "c.json")], env),
        c_lines=lines_of(tree.c_files),
        half=half,
        full=full,
        serial=serial,
        parallel=parallel,
        scan_speedup=scan_speedup,
    )


def goals(m: Measured, jobs: int) -> list[tuple[bool, str]]:
    speedup = m.c_lines * HIPIFY_SECONDS_PER_LINE / m.c_only.seconds
    growth = m.full.seconds / m.half.seconds
    scan_speedup = m.scan_speedup
    out = [
        (speedup >= 100, f"≥100x faster than hipify-perl -examine on the CUDA files: {speedup:,.0f}x"),
        (m.cold.seconds <= 10, f"cold scan ≤ 10 s: {m.cold.seconds:.2f} s"),
        (m.warm.seconds <= 2 and m.identical, (f"warm re-run ≤ 2 s with identical output: {m.warm.seconds:.2f} s, "
                                               f"{'identical' if m.identical else 'different'}")),
        (m.pre_commit.seconds <= 1, f"pre-commit run on 20 files ≤ 1 s: {m.pre_commit.seconds:.2f} s"),
        (m.version.seconds <= 0.2, f"--version ≤ 0.2 s: {m.version.seconds:.2f} s"),
        (m.cold.peak_kib / 1024 <= 1024, f"peak memory ≤ 1 GiB: {m.cold.peak_kib / 1024:.0f} MiB"),
        (growth <= 2.2, f"time linear in size: twice the files took x{growth:.2f}"),
    ]
    if jobs >= 2:
        out.append((scan_speedup >= 1.6, (f"-j {jobs} divides the parse-bound part (the scan stage): "
                                          f"x{scan_speedup:.2f} faster than -j 1")))
    return out


def print_results(tree: Tree, m: Measured, jobs: int) -> None:
    all_mb = sum(p.stat().st_size for p in tree.files) / 1e6
    hipify_seconds = m.c_lines * HIPIFY_SECONDS_PER_LINE
    print()
    print(f"cold scan      {m.cold.seconds:6.2f} s   {m.files_scanned / m.cold.seconds:6.0f} files/s   "
          f"{all_mb / m.cold.seconds:5.2f} MB/s   peak {m.cold.peak_kib / 1024:.0f} MiB (all processes)")
    print(f"warm re-run    {m.warm.seconds:6.2f} s   output {'identical' if m.identical else 'DIFFERENT'} "
          "to the cold run")
    print(f"pre-commit     {m.pre_commit.seconds:6.2f} s   20 files ({PRE_COMMIT_C} C/C++/CUDA), rules cached, "
          "results not")
    print(f"--version      {m.version.seconds:6.2f} s")
    print(f"C/C++/CUDA     {m.c_only.seconds:6.2f} s   {m.c_lines:,} lines; hipify-perl -examine at 15 ms/line: "
          f"{hipify_seconds:,.0f} s, {hipify_seconds / m.c_only.seconds:,.0f}x slower")
    print(f"half tree      {m.half.seconds:6.2f} s   full tree {m.full.seconds:.2f} s "
          f"(x{m.full.seconds / m.half.seconds:.2f} for twice the files; no cache)")
    print(f"stages of a cold audit (no cache)   -j 1    -j {jobs}")
    for name in m.parallel:
        print(f"  {name:<30} {m.serial[name]:6.2f} s {m.parallel[name]:6.2f} s")
    print(f"load average {os.getloadavg()[0]:.2f} at the end")
    print()


def bench(packages: dict[str, Path], work: Path, jobs: int) -> int:
    tree = build_tree(packages, work / "tree")
    c_mb = sum(p.stat().st_size for p in tree.c_files) / 1e6
    print(f"tree: {len(tree.files)} files, {sum(p.stat().st_size for p in tree.files) / 1e6:.1f} MB: "
          f"{len(tree.c_files)} C/C++/CUDA ({c_mb:.2f} MB, {lines_of(tree.c_files):,} lines), "
          f"{len(tree.python_files)} Python, {len(tree.other_files)} other (manifests, build files, docs)")
    print(f"from: {', '.join(p.name for p in packages.values())}")
    print(f"machine: {os.cpu_count()} cores, Python {sys.version.split()[0]}, -j {jobs}, "
          f"load average {os.getloadavg()[0]:.2f} at the start")
    measured = measure(tree, work, jobs, child_environment(work / "pycache"))
    print_results(tree, measured, jobs)
    checked = goals(measured, jobs)
    for met, text in checked:
        print(f"{'MET    ' if met else 'NOT MET'}  {text}")
    return 0 if all(met for met, _ in checked) else 1


if __name__ == "__main__":
    sys.exit(main())
