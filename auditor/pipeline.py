"""The whole audit of some paths: discover, the macro pre-pass, scan, build the report."""
from __future__ import annotations

import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from auditor.analysis import build_report
from auditor.cache import result_cache
from auditor.discover import common_root, discover
from auditor.macros import project_macros
from auditor.parsing.preproc import PreprocFacts
from auditor.effort import load_model
from auditor.policy import apply_path_policy
from auditor.rocmpath.reader import pulled_in_build_files, read_project
from auditor.rulebook import Rulebook
from auditor.progress import ScanProgress
from auditor.isolate import file_size
from auditor.runner import DEFAULT_TIME_BUDGET, scan_all
from auditor.scan import MAX_FILE_BYTES
from auditor.types import Report


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
    with _timed(timings, "discover"):
        found = discover(paths, root, options.exclude, options.force_exclude,
                         include_vendored=options.include_vendored)
    with _timed(timings, "build pre-pass"):
        pulled_in = pulled_in_build_files(found.files, root, found.vendored)
        project = read_project(found.files, load_model().optional_dirs, pulled_in,
                               PreprocFacts.from_guards(rulebook.guards))
        rulebook = rulebook.with_project_macros(project.rocm_macros, project.cuda_macros)
    with _timed(timings, "macro pre-pass"):
        facts = PreprocFacts.from_guards(rulebook.guards)
        cuda_only, derived = project_macros(found.files, facts, options.max_file_size)
        rulebook = rulebook.with_cuda_only_macros(cuda_only).with_rocm_values(derived)
    files = found.files if only is None else tuple(f for f in found.files if f.path in only)
    advance = progress(len(files), sum(file_size(f) for f in files)) if progress else None
    with _timed(timings, "scan"):
        cache = result_cache(options.cache_dir, rulebook, options.max_file_size) if options.cache_dir else None
        results = scan_all(files, rulebook, options.jobs, advance, options.max_file_size, options.time_budget, cache)
    results = apply_path_policy(results, rulebook, options.per_file_ignores, options.optional_dirs)
    if shown_root is None:
        shown_root = str(paths[0]) if len(paths) == 1 else str(root)
    with _timed(timings, "report"):
        return build_report(shown_root, results, rulebook, found.errors, found.vendored, project)
