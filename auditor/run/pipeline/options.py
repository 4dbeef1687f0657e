"""The options of one audit that change what it reads or reports."""
from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from auditor.run.runner.workers import DEFAULT_TIME_BUDGET
from auditor.run.scan.file import MAX_FILE_BYTES
from auditor.match.suppress import SuppressionPolicy

# the build pre-pass (every build file read, vendored CMake walked) stops reading after this long; what it did not
# read is reported. Each file's reading is linear in its size, capped (auditor/model/rocmpath/reader.py), so the check
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
    cache_dir: Path | None = None               # where results are cached (auditor/run/runner/cache.py); None: no cache
    per_file_ignores: tuple[tuple[str, tuple[str, ...]], ...] = ()   # config policy (auditor/judge/analysis/policy.py)
    optional_dirs: tuple[str, ...] = ()
    scan_dirs: tuple[str, ...] = ()             # vendored-looking directories new in the change (--diff-base)
    suppressions: SuppressionPolicy = SuppressionPolicy()   # which inline suppressions are honoured
    worker_memory: int = 0                      # bytes each scanning process may take (0: runner.memory's default)
    across_macros: bool = False                 # also cache each result under a key that ignores the project's
                                                # macros the file does not name (cache.ResultCache.key_within)
    whole_run_cache: bool = True                # also cache the whole report by the stat of every file read
                                                # (`history` does not: each point's tree is new, its store reuses)
