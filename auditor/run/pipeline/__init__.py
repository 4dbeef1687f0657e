"""The whole audit of some paths: `prepare -> scan_all(ctx) -> analyse(ctx, results)` (auditor/run/pipeline/context.py),
with the whole-run cache around it."""
from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from pathlib import Path

from auditor.run.runner.cache import EntryStore, scan_context
from auditor.run.discover.files import common_root
from auditor.run.pipeline.context import Discovered, RunContext, analyse, discover_run, prepare, scan_all
from auditor.run.pipeline.options import PREPASS_SECONDS, ScanOptions
from auditor.run.runner.progress import ScanProgress
from auditor.match.rulebook import Rulebook
from auditor.run.runner.runcache import FileIndex, file_stat, load_report, run_key, save_report
from auditor.types import Report

__all__ = ["PREPASS_SECONDS", "Discovered", "RunContext", "ScanOptions", "analyse", "audit", "prepare", "scan_all"]

INCLUDED = re.compile(rb"(?:^|\s)(?:-r|-c|--requirement|--constraint)(?:\s+|=)(\S+)")
MAX_INCLUDE_DEPTH = 4


def audit(
    paths: Sequence[Path],
    rulebook: Rulebook,
    options: ScanOptions = ScanOptions(),
    shown_root: str | None = None,
    progress: Callable[[int, int], ScanProgress | None] | None = None,
    root: Path | None = None,
    only: frozenset[str] | None = None,
    timings: dict[str, float] | None = None,
    discovered: Discovered | None = None,
    phase: Callable[[str], None] | None = None,
) -> Report:
    """`progress(total files, total bytes)` may return a ScanProgress that is told how the scan goes. `root`
    (default: the paths' common directory) is what finding paths are relative to; `only` limits the scan to these paths
    while the cross-file pre-pass still sees every file discovered. `timings`, when given, receives the
    seconds each stage took. `discovered`: the run's files when the caller found them (history, from a commit's
    listing), else they are discovered here. `phase`, when given, is told each step before and after the scan as
    it starts (PHASES), for a progress display."""
    say = phase or _silent
    root = root or common_root(paths)
    store = EntryStore(options.cache_dir) if options.cache_dir else None
    if discovered is None:
        say(DISCOVERING)
        discovered = discover_run(paths, root, options, timings)
    if shown_root is None:
        shown_root = str(paths[0]) if len(paths) == 1 else str(root)
    key = _run_key(scan_context(rulebook, options.max_file_size), discovered, options, shown_root, paths, root, only) \
        if store and options.whole_run_cache else None
    if store and key and (reused := load_report(store, key, rulebook.by_id())) is not None:
        return reused
    index = FileIndex.open(store, str(root.resolve())) if store else None
    say(BUILD_MODEL)
    ctx = prepare(paths, rulebook, options, root=root, shown_root=shown_root, only=only, store=store, index=index,
                  discovered=discovered, timings=timings)
    results = scan_all(ctx, progress, timings)
    say(ANALYSIS)
    report = analyse(ctx, results, timings)
    if store and index:
        index.save()
        if key:
            save_report(store, key, report)
    return report


# the steps of one audit a progress display names, besides the scan's own bar (and the caller's "report")
DISCOVERING, BUILD_MODEL, ANALYSIS, REPORT = "discovering", "build model", "analysis", "report"
PHASES = (DISCOVERING, BUILD_MODEL, ANALYSIS, REPORT)


def _silent(_phase: str) -> None:
    return None


def _run_key(context, discovered: Discovered, options: ScanOptions, shown_root, paths, root, only) -> str | None:
    """Everything the report depends on: rocm-audit and the rules (context), the options that change results,
    and every file the audit reads, by its stat."""
    found, pulled_in = discovered.found, discovered.pulled_in
    listing = [(f.path, f.kind, file_stat(f.abspath)) for f in (*found.files, *pulled_in)]
    for source in found.files:
        if source.kind == "manifest":
            listing += _includes(Path(source.abspath), root.resolve(), options.max_file_size, depth=0)
    settings = {name: getattr(options, name) for name in ScanOptions.__dataclass_fields__
                if name not in ("jobs", "cache_dir", "whole_run_cache", "across_macros")}
    extra = [settings, shown_root, [str(p.absolute()) for p in paths], str(root.absolute()),
             sorted(only) if only is not None else None, found.errors, found.vendored]
    return run_key(context, listing, extra)


def _includes(manifest: Path, root: Path, max_bytes: int, depth: int) -> list[tuple[str, str, tuple]]:
    """The files a requirements file includes (-r/-c), followed a few levels, by stat: its findings depend on
    them, and its own stat does not show their changes. A missing one counts as such; one outside the scanned
    root is not read (the scan does not read it either)."""
    try:
        data = manifest.read_bytes()[:max_bytes] if manifest.stat().st_size <= max_bytes else b""
    except OSError:
        return []
    out = []
    for match in INCLUDED.finditer(data):
        target = manifest.parent / match.group(1).decode("utf-8", "surrogateescape")
        try:
            inside = target.resolve().is_relative_to(root)
        except (OSError, RuntimeError, ValueError):
            inside = False
        if not inside:    # not read by the scan either: not even its stat is taken
            continue
        out.append((f"include:{target}", "", file_stat(str(target)) or (0, 0, 0, 0)))
        if depth < MAX_INCLUDE_DEPTH and target.is_file():
            out += _includes(target, root, max_bytes, depth + 1)
    return out
