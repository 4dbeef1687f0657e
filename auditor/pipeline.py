"""The whole audit of some paths: discover, the macro pre-pass, scan, build the report."""
from __future__ import annotations

import re
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from auditor.analysis import build_report
from auditor.cache import EntryStore, ResultCache, scan_context
from auditor.discover import common_root, discover
from auditor.macros import project_macros
from auditor.parsing.preproc import PreprocFacts
from auditor.effort import load_model
from auditor.policy import apply_path_policy
from auditor.rocmpath.disposition import own_package_rules
from auditor.rocmpath.pulled import pulled_in_build_files
from auditor.rocmpath.reader import read_project
from auditor.rulebook import Rulebook
from auditor.progress import ScanProgress
from auditor.isolate import file_size
from auditor.runcache import FileIndex, file_stat, load_report, run_key, save_report
from auditor.runner import DEFAULT_TIME_BUDGET, scan_all
from auditor.scan import MAX_FILE_BYTES
from auditor.types import Report


INCLUDED = re.compile(rb"(?:^|\s)(?:-r|-c|--requirement|--constraint)(?:\s+|=)(\S+)")
MAX_INCLUDE_DEPTH = 4
# the build pre-pass (every build file read, vendored CMake walked) stops reading after this long; what it did not
# read is reported. Each file's reading is linear in its size, capped (auditor/rocmpath/reader.py), so the check
# between files bounds the whole. --max-run-time still bounds the whole run.
PREPASS_SECONDS = 120.0


@dataclass(frozen=True, slots=True)
class ScanOptions:
    exclude: tuple[str, ...] = ()
    force_exclude: bool = False
    include_vendored: bool = False
    jobs: int = 1
    max_file_size: int = MAX_FILE_BYTES
    time_budget: float = DEFAULT_TIME_BUDGET    # seconds per file
    cache_dir: Path | None = None               # where results are cached (auditor/cache.py); None: no cache
    per_file_ignores: tuple[tuple[str, tuple[str, ...]], ...] = ()   # config policy (auditor/policy.py)
    optional_dirs: tuple[str, ...] = ()
    scan_dirs: tuple[str, ...] = ()             # vendored-looking directories new in the change (--diff-base)
    whole_run_cache: bool = True                # also cache the whole report by the stat of every file read
                                                # (`history` does not: each point's tree is new, its store reuses)
    across_macros: bool = False                 # also cache each result under a key that ignores the project's
                                                # macros the file does not name (cache.ResultCache.key_within)


@contextmanager
def _timed(timings: dict[str, float] | None, stage: str) -> Iterator[None]:
    start = time.perf_counter()
    try:
        yield
    finally:
        if timings is not None:
            timings[stage] = timings.get(stage, 0.0) + time.perf_counter() - start


def audit(
    paths: Sequence[Path],
    rulebook: Rulebook,
    options: ScanOptions = ScanOptions(),
    shown_root: str | None = None,
    progress: Callable[[int, int], ScanProgress | None] | None = None,
    root: Path | None = None,
    only: frozenset[str] | None = None,
    timings: dict[str, float] | None = None,
) -> Report:
    """`progress(total files, total bytes)` may return a ScanProgress that is told how the scan goes. `root`
    (default: the paths' common directory) is what finding paths are relative to; `only` limits the scan to these paths
    while the cross-file pre-pass still sees every file discovered. `timings`, when given, receives the
    seconds each stage took."""
    root = root or common_root(paths)
    store = EntryStore(options.cache_dir) if options.cache_dir else None
    with _timed(timings, "discover"):
        found = discover(paths, root, options.exclude, options.force_exclude,
                         include_vendored=options.include_vendored, scan_dirs=options.scan_dirs)
    if shown_root is None:
        shown_root = str(paths[0]) if len(paths) == 1 else str(root)
    prepass_deadline = time.monotonic() + PREPASS_SECONDS
    with _timed(timings, "build pre-pass"):
        pulled_in = pulled_in_build_files(found.files, root, found.vendored, prepass_deadline)
    context = scan_context(rulebook, options.max_file_size) if store else ""
    key = _run_key(context, found, pulled_in, options, shown_root, paths, root, only) \
        if store and options.whole_run_cache else None
    if store and key and (reused := load_report(store, key, rulebook.by_id())) is not None:
        return reused
    index = FileIndex.open(store, str(root.resolve())) if store else None
    with _timed(timings, "build pre-pass"):
        project = read_project(found.files, load_model().optional_dirs, pulled_in,
                               PreprocFacts.from_guards(rulebook.guards), prepass_deadline)
        rulebook = rulebook.with_project_macros(project.rocm_macros, project.cuda_macros) \
            .without(own_package_rules(rulebook.rules, project.own_packages))
    with _timed(timings, "macro pre-pass"):
        facts = PreprocFacts.from_guards(rulebook.guards)
        cuda_only, derived = project_macros(found.files, facts, options.max_file_size, store, index, rulebook.guards)
        rulebook = rulebook.with_cuda_only_macros(cuda_only).with_rocm_values(derived)
    files = found.files if only is None else tuple(f for f in found.files if f.path in only)
    advance = progress(len(files), sum(file_size(f) for f in files)) if progress else None
    with _timed(timings, "scan"):
        cache = ResultCache.of(store, rulebook, options.max_file_size, options.across_macros) if store else None
        results = scan_all(files, rulebook, options.jobs, advance, options.max_file_size, options.time_budget, cache,
                           index)
    results = apply_path_policy(results, rulebook, options.per_file_ignores, options.optional_dirs)
    with _timed(timings, "report"):
        errors = (*found.errors, *sorted(project.unread.items()))   # build files the pre-pass could not read fully
        report = build_report(shown_root, results, rulebook, errors, found.vendored, project, options.scan_dirs)
    if store and index:
        index.save()
        if key:
            save_report(store, key, report)
    return report


def _run_key(context, found, pulled_in, options: ScanOptions, shown_root, paths, root, only) -> str | None:
    """Everything the report depends on: rocm-audit and the rules (context), the options that change results,
    and every file the audit reads, by its stat."""
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
