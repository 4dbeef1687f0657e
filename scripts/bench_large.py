"""`scripts/bench.py --large`: the largest tree we can build here, and its scale goals.

The tree: the six CUDA sdists of the benchmark together (vendored directories left out), plus 20,000 `.cu`
files generated from their own `.cu` sources, as kernel libraries generate instantiations: each generated file
is a real kernel source with its tile sizes and head dimensions renumbered, 400 to a directory. One cold run
(`--no-cache`, JSON and HTML from the same run) measures wall time and the peak resident memory of rocm-audit
and its workers together; the reports' sizes and the findings (groups and sites) are read back; the HTML page is
opened in headless Chromium when it is installed; and generated `.cu` files of 1, 5 and 10 MB show whether the
time per file grows faster than its size.
"""
from __future__ import annotations

import json
import re
import shutil
import time
from dataclasses import dataclass
from pathlib import Path

GENERATED_FILES = 20_000
PER_DIRECTORY = 400
TEMPLATE_MAX_BYTES = 200_000
BIG_FILE_MB = (1, 5, 10)
GiB = 1024 ** 3
PSS_GOAL_BYTES = 512 * 1024 ** 2
HTML_GOAL_BYTES = 20_000_000
HTML_OPEN_GOAL_S = 5.0
JSON_GOAL_BYTES = 20_000_000
CHROMIUM = ("chromium", "chromium-browser", "google-chrome")
OPEN_TIMEOUT_S = 120
_NUMBER = re.compile(r"(?<![\w.])(32|64|96|128|160|192|224|256)(?![\w.])")


@dataclass(frozen=True, slots=True)
class LargeTree:
    root: Path
    files: int
    generated: int
    megabytes: float


def _instance(text: str, n: int) -> str:
    """A template's n-th instantiation: its tile and head sizes renumbered, as a generator would write it."""
    sizes = (32, 64, 96, 128, 160, 192, 224, 256)
    shift = n % len(sizes)
    renumbered = _NUMBER.sub(lambda m: str(sizes[(sizes.index(int(m.group(1))) + shift) % len(sizes)]), text)
    return f"// Generated instantiation {n}; do not edit.\n{renumbered}"


def build_large_tree(packages: dict[str, Path], root: Path) -> LargeTree:
    from scripts.bench import _pools

    c_pool, py_pool, other_pool = _pools(packages)
    files = 0
    for pick in c_pool + py_pool + other_pool:
        target = root / "sdists" / pick.package / pick.relative
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(pick.origin, target)
        files += 1
    templates = sorted((p for p in c_pool if p.relative.endswith(".cu") and p.size <= TEMPLATE_MAX_BYTES),
                       key=lambda p: (p.package, p.relative))
    texts = [p.origin.read_text(encoding="utf-8", errors="replace") for p in templates]
    for n in range(GENERATED_FILES):
        template = templates[n % len(templates)]
        folder = root / "generated" / f"{template.package}-{n // PER_DIRECTORY:03}"
        folder.mkdir(parents=True, exist_ok=True)
        stem = Path(template.relative).stem
        (folder / f"{stem}_{n}.cu").write_text(_instance(texts[n % len(texts)], n), encoding="utf-8")
    total = sum(p.stat().st_size for p in root.rglob("*") if p.is_file())
    return LargeTree(root, files + GENERATED_FILES, GENERATED_FILES, total / 1e6)


def big_file(packages: dict[str, Path], path: Path, megabytes: int) -> Path:
    """A generated `.cu` of about this size: the largest real CUDA/C++ source that has findings (warp
    shuffles or inline PTX) repeated, each copy renumbered."""
    from scripts.bench import _pools

    c_pool = _pools(packages)[0]
    with_findings = (p for p in c_pool if re.search(rb"__shfl_\w*sync|\basm\b", p.origin.read_bytes()))
    largest = max(with_findings, key=lambda p: p.size)
    text = largest.origin.read_text(encoding="utf-8", errors="replace")
    parts, size, n = [], 0, 0
    while size < megabytes * 1_000_000:
        part = _instance(text, n)
        parts.append(part)
        size += len(part.encode())
        n += 1
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(parts), encoding="utf-8")
    return path


def chromium_open_seconds(html: Path) -> float | str:
    """Seconds from navigating headless Chromium (through Playwright, as scripts/screenshot.py does) to the
    page's load event, its scripts run; or why it could not be measured."""
    binary = next((shutil.which(name) for name in CHROMIUM if shutil.which(name)), None)
    if binary is None:
        return "no Chromium installed"
    try:
        from playwright.sync_api import Error as PlaywrightError, sync_playwright
    except ImportError:
        return "Playwright not installed"
    try:
        from scripts.screenshot import CHROMIUM_ARGS

        with sync_playwright() as playwright:
            browser = playwright.chromium.launch(executable_path=binary, args=CHROMIUM_ARGS)
            page = browser.new_page(viewport={"width": 1366, "height": 900})
            page.goto("about:blank")
            start = time.perf_counter()
            page.goto(html.resolve().as_uri(), wait_until="load", timeout=OPEN_TIMEOUT_S * 1000)
            seconds = time.perf_counter() - start
            browser.close()
        return seconds
    except PlaywrightError as err:   # a page that does not open in time is a result, not a crash of the benchmark
        return f"did not open: {type(err).__name__}: {str(err).splitlines()[0][:120]}"


@dataclass(frozen=True, slots=True)
class LargeResult:
    tree: LargeTree
    seconds: float
    peak_bytes: int
    peak_pss_bytes: int                         # summed PSS: pages the workers share with rocm-audit counted once
    files_scanned: int
    findings: int
    groups: int
    findings_listed: int
    json_bytes: int
    html_bytes: int
    html_open: float | str                      # seconds, or why it could not be measured
    big: tuple[tuple[int, float, str], ...]     # (MB, seconds, what happened)


def measure_large(packages: dict[str, Path], work: Path, jobs: int, env: dict[str, str]) -> LargeResult:
    from scripts.bench import run

    tree = build_large_tree(packages, work / "large")
    print(f"large tree: {tree.files:,} files ({tree.generated:,} generated .cu), {tree.megabytes:.0f} MB",
          flush=True)
    run(["--no-cache", "--format", "json", "--no-progress"], env)   # compile the bytecode once, as an install does
    report_json, report_html = work / "large.json", work / "large.html"
    cold = run([str(tree.root), "--format", "json", "-o", str(report_json), "--html", str(report_html),
                "--no-cache", "--no-progress", "-j", str(jobs)], env, pss=True)
    data = json.loads(report_json.read_text(encoding="utf-8"))
    summary = data["summary"]
    big = []
    for megabytes in BIG_FILE_MB:
        path = big_file(packages, work / f"big-{megabytes}" / f"generated_{megabytes}mb.cu", megabytes)
        one = run([str(path.parent), "--format", "json", "--no-cache", "--no-progress", "-j", "1"], env)
        result = json.loads(one.stdout)
        errors = result.get("errors", [])
        outcome = errors[0]["message"] if errors else f"{result['summary']['findings']:,} findings"
        big.append((megabytes, one.seconds, outcome))
    return LargeResult(
        tree=tree,
        seconds=cold.seconds,
        peak_bytes=cold.peak_kib * 1024,
        peak_pss_bytes=cold.peak_pss_kib * 1024,
        files_scanned=summary["files_scanned"],
        findings=summary["findings"],
        groups=summary.get("groups", 0),
        findings_listed=summary.get("findings_listed", len(data["findings"])),
        json_bytes=report_json.stat().st_size,
        html_bytes=report_html.stat().st_size if report_html.exists() else 0,
        html_open=chromium_open_seconds(report_html) if report_html.exists() else "no HTML written",
        big=tuple(big),
    )


def large_goals(r: LargeResult) -> list[tuple[bool | None, str]]:
    """(met, text); met None: could not be measured here."""
    smallest_mb, smallest_s, _ = r.big[0]
    largest_mb, largest_s, largest_outcome = r.big[-1]
    growth = (largest_s / smallest_s) / (largest_mb / smallest_mb)
    skipped = largest_outcome.startswith("skipped")
    return [
        (r.peak_bytes <= GiB, f"peak memory of all processes ≤ 1 GiB: {r.peak_bytes / 2**20:,.0f} MiB"),
        (r.peak_pss_bytes <= PSS_GOAL_BYTES,
         f"peak summed PSS of all processes ≤ 512 MiB: {r.peak_pss_bytes / 2**20:,.0f} MiB"),
        (r.html_bytes <= HTML_GOAL_BYTES, f"HTML report ≤ 20 MB: {r.html_bytes / 1e6:,.1f} MB"),
        (None if r.html_open == "no Chromium installed" else
         isinstance(r.html_open, float) and r.html_open <= HTML_OPEN_GOAL_S,
         "HTML opens in headless Chromium in < 5 s: "
         + (f"{r.html_open:.1f} s" if isinstance(r.html_open, float) else r.html_open)),
        (r.json_bytes <= JSON_GOAL_BYTES,
         f"JSON report ≤ 20 MB (our goal; counts exact): {r.json_bytes / 1e6:,.1f} MB"),
        (growth <= 1.5 and (skipped or largest_s <= 60),
         (f"per-file time not superlinear: {largest_mb} MB in {largest_s:.1f} s ({largest_outcome}), "
          f"{growth:.2f}x the time per MB of {smallest_mb} MB")),
    ]


def print_large(r: LargeResult, jobs: int) -> int:
    import os

    print()
    print(f"cold run, -j {jobs}  {r.seconds:8.1f} s   {r.files_scanned:,} files scanned, "
          f"{r.tree.megabytes / r.seconds:.2f} MB/s, {r.files_scanned / r.seconds:.0f} files/s")
    print(f"peak memory      {r.peak_bytes / 2**20:8.0f} MiB (rocm-audit and its workers together; "
          f"summed PSS {r.peak_pss_bytes / 2**20:.0f} MiB)")
    print(f"findings         {r.findings:8,} sites in {r.groups:,} groups; the JSON lists {r.findings_listed:,} "
          "sites and counts all")
    print(f"JSON report      {r.json_bytes / 1e6:8.1f} MB")
    print(f"HTML report      {r.html_bytes / 1e6:8.1f} MB; "
          + (f"opens in {r.html_open:.1f} s in headless Chromium" if isinstance(r.html_open, float) else r.html_open))
    for megabytes, seconds, outcome in r.big:
        print(f"one {megabytes:>2} MB .cu    {seconds:8.1f} s   {outcome}")
    print(f"load average {os.getloadavg()[0]:.2f} at the end")
    print()
    checked = large_goals(r)
    for met, text in checked:
        print(f"{'MET    ' if met else 'NOT MET' if met is False else 'UNKNOWN'}  {text}")
    return 0 if all(met is not False for met, _ in checked) else 1
