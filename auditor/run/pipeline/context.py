"""One run's context, made once: `prepare -> scan_all(ctx) -> analyse(ctx, results)` is the whole audit.

`prepare` discovers the files, reads the build files once into the project build model, and puts the project's
facts (macros its build defines on ROCm or only for CUDA, macro values its sources derive on ROCm, rules its own
packages turn off) into the run's ScanContext beside the rulebook, which is never rebuilt. Scanning and the
analysis read everything from the context; nothing is written into it afterwards.
"""
from __future__ import annotations

import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path

from auditor.judge.analysis.assemble import build_report
from auditor.judge.analysis import assemble
from auditor.run.runner.cache import EntryStore, ResultCache
from auditor.run.discover.files import Discovery, common_root, discover
from auditor.judge.analysis.effort import load_model
from auditor.run.runner.isolate import file_size
from auditor.run.runner.macros import project_macros
from auditor.run.pipeline.options import PREPASS_SECONDS, ScanOptions
from auditor.judge.analysis.policy import apply_path_policy
from auditor.run.runner.progress import ScanProgress
from auditor.model.ownpackages import own_package_rules
from auditor.model.project import ReachModel
from auditor.model.rocmpath.model import ProjectBuild
from auditor.model.rocmpath.pulled import pulled_in_build_files
from auditor.model.rocmpath.reader import read_project
from auditor.match.rulebook import Rulebook
from auditor.match.rulebook.context import ScanContext
from auditor.run.runner.runcache import FileIndex
from auditor.run.runner import workers as runner
from auditor.run.scan.file import InputError, read_source
from auditor.match.suppress import honoured
from auditor.types import FileResult, Report, SourceFile
from auditor.util.forked import alongside


@contextmanager
def timed(timings: dict[str, float] | None, stage: str) -> Iterator[None]:
    start = time.perf_counter()
    try:
        yield
    finally:
        if timings is not None:
            timings[stage] = timings.get(stage, 0.0) + time.perf_counter() - start


@dataclass(frozen=True)
class Discovered:
    """The files of a run and the vendored build files its build pulls in, found before anything is read."""

    found: Discovery
    pulled_in: tuple[SourceFile, ...]
    deadline: float                 # time.monotonic() after which the build pre-pass reads nothing more


def discover_run(paths: Sequence[Path], root: Path, options: ScanOptions,
                 timings: dict[str, float] | None = None) -> Discovered:
    with timed(timings, "discover"):
        found = discover(paths, root, options.exclude, options.force_exclude,
                         include_vendored=options.include_vendored, scan_dirs=options.scan_dirs)
    deadline = time.monotonic() + PREPASS_SECONDS
    with timed(timings, "build pre-pass"):
        pulled_in = tuple(pulled_in_build_files(found.files, root, found.vendored, deadline))
    return Discovered(found, pulled_in, deadline)


@dataclass(frozen=True)
class RunContext:
    """Everything one audit knows before it scans a file."""

    paths: tuple[Path, ...]
    root: Path                      # what finding paths are relative to
    shown_root: str
    options: ScanOptions
    discovered: Discovered
    project: ProjectBuild           # what the build files say, read once by the build pre-pass
    scan: ScanContext               # the rulebook as loaded, typed guards with the project's facts, the indexes
    only: frozenset[str] | None = None   # scan only these paths (the pre-pass still saw every file)
    store: EntryStore | None = field(default=None, compare=False, repr=False)   # the result cache, if any
    index: FileIndex | None = field(default=None, compare=False, repr=False)    # its per-file stat index

    @property
    def rulebook(self) -> Rulebook:
        return self.scan.rulebook

    @property
    def files(self) -> tuple[SourceFile, ...]:
        """The files this run scans."""
        every = self.discovered.found.files
        return every if self.only is None else tuple(f for f in every if f.path in self.only)


def prepare(
    paths: Sequence[Path], rulebook: Rulebook, options: ScanOptions = ScanOptions(), *,
    root: Path | None = None, shown_root: str | None = None, only: frozenset[str] | None = None,
    store: EntryStore | None = None, index: FileIndex | None = None, discovered: Discovered | None = None,
    timings: dict[str, float] | None = None,
) -> RunContext:
    """The run's context: the files (discovered here unless given), the project build model, and the scan context
    with the project's facts. `root` defaults to the paths' common directory; `store` and `index` cache the macro
    pre-pass per file (and, in scan_all, the results)."""
    root = root or common_root(paths)
    discovered = discovered or discover_run(paths, root, options, timings)
    found = discovered.found
    if shown_root is None:
        shown_root = str(paths[0]) if len(paths) == 1 else str(root)
    own = rulebook.own_context

    def read() -> ProjectBuild:
        return read_project(found.files, load_model().optional_dirs, discovered.pulled_in, own.guards.preprocessor,
                            discovered.deadline, own.guards.python)

    # the files without a result to reuse (by the stat index), likely: the queries their scan needs compile here
    # while a child reads the build files, and every worker inherits them (with -j 1, one process does both)
    fresh = [f for f in runner.c_sources(found.files)
             if (only is None or f.path in only) and (index is None or index.digest(f) is None)]
    with timed(timings, "build pre-pass"):
        project = (alongside(read, partial(runner.compile_queries, fresh, own, options.max_file_size))
                   if options.jobs > 1 and runner.queries_to_compile(fresh, own) else read()).sealed()
        guards = own.guards.with_project_macros(project.rocm_macros, project.cuda_macros)
        dropped = own_package_rules(rulebook.rules, project.own_packages)
    with timed(timings, "macro pre-pass"):
        cuda_only, derived = project_macros(found.files, guards.preprocessor, options.max_file_size, store, index,
                                            guards.as_data())
        guards = guards.with_cuda_only_macros(cuda_only | project.undefined_on_rocm).with_rocm_values(derived)
    scan = ScanContext(rulebook, guards, dropped)
    return RunContext(tuple(paths), root, shown_root, options, discovered, project, scan, only, store, index)


def scan_all(ctx: RunContext, progress: Callable[[int, int], ScanProgress | None] | None = None,
             timings: dict[str, float] | None = None) -> list[FileResult]:
    """Every file of the run scanned with the run's scan context (cached results reused), in path order.
    `progress(total files, total bytes)` may return a ScanProgress that is told how the scan goes."""
    files = ctx.files
    options = ctx.options
    advance = progress(len(files), sum(file_size(f) for f in files)) if progress else None
    with timed(timings, "scan"):
        cache = ResultCache.of(ctx.store, ctx.scan, options.max_file_size, options.across_macros) \
            if ctx.store else None
        return runner.scan_all(files, ctx.scan, options.jobs, advance, options.max_file_size, options.time_budget,
                               cache, ctx.index, options.worker_memory)


def analyse(ctx: RunContext, results: Sequence[FileResult], timings: dict[str, float] | None = None) -> Report:
    """The report of these results: the config's path policy, then dispositions against the project build model,
    components, verdicts, effort, coverage, groups (auditor/judge/analysis/assemble.py)."""
    options = ctx.options
    results = [honoured(r, options.suppressions) for r in results]
    results = apply_path_policy(results, ctx.scan, options.per_file_ignores, options.optional_dirs)
    with timed(timings, "report"):
        found = ctx.discovered.found
        errors = (*found.errors, *sorted(ctx.project.unread.items()))   # build files the pre-pass could not read
        return build_report(ctx.shown_root, results, ctx.scan, errors, found.vendored, ctx.project,
                            options.scan_dirs, _reader(ctx.files, options.max_file_size), options.jobs)


def reach_model(ctx: RunContext, results: Sequence[FileResult]) -> ReachModel:
    """The reach model `analyse` judges these results with: what the default ROCm install reaches of each line."""
    options = ctx.options
    results = apply_path_policy(results, ctx.scan, options.per_file_ignores, options.optional_dirs)
    return assemble.reach_model(results, ctx.scan, ctx.project, options.scan_dirs)


def _reader(files: Sequence[SourceFile], max_bytes: int) -> Callable[[str], str | None]:
    """A scanned file's text by its path, read as the scan read it (bounded, never outside the tree): the
    cross-language link reads the Python files that spell an op's module."""
    by_path = {f.path: f for f in files}

    def read(path: str) -> str | None:
        source = by_path.get(path)
        try:
            return read_source(source, max_bytes)[0] if source else None
        except InputError:
            return None
    return read
