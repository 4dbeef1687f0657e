"""Scan many files: in this process for a handful, across processes otherwise; order is always by path."""
from __future__ import annotations

import os
import signal
import threading
from collections.abc import Callable, Sequence
from concurrent.futures import ProcessPoolExecutor

from auditor.rulebook import Rulebook
from auditor.scan import MAX_FILE_BYTES, scan_file
from auditor.types import FileResult, SourceFile

_WORKER_RULEBOOK: Rulebook | None = None
_WORKER_MAX_BYTES = MAX_FILE_BYTES
_WORKER_BUDGET = 0.0
IN_PROCESS_BELOW = 24  # files; below this, starting workers costs more than it saves
DEFAULT_TIME_BUDGET = 60.0  # seconds per file


class _OverBudget(BaseException):  # not an Exception: scan_file's own error handling must not catch it
    pass


def _on_alarm(signum, frame):
    raise _OverBudget


def scan_with_budget(source: SourceFile, rulebook: Rulebook, max_bytes: int, budget: float) -> FileResult:
    """scan_file, stopped after `budget` seconds (a pathological file must not stall the whole scan)."""
    if budget <= 0 or threading.current_thread() is not threading.main_thread():
        return scan_file(source, rulebook, max_bytes)
    previous = signal.signal(signal.SIGALRM, _on_alarm)
    signal.setitimer(signal.ITIMER_REAL, budget)
    try:
        return scan_file(source, rulebook, max_bytes)
    except _OverBudget:
        message = f"skipped: scanning took over the {budget:g} s per-file time budget"
        return FileResult(source.path, source.kind, error=message)
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)


def _init_worker(rulebook: Rulebook, max_bytes: int, budget: float) -> None:
    global _WORKER_RULEBOOK, _WORKER_MAX_BYTES, _WORKER_BUDGET
    _WORKER_RULEBOOK = rulebook
    _WORKER_MAX_BYTES = max_bytes
    _WORKER_BUDGET = budget


def _scan_chunk(chunk: list[SourceFile]) -> list[FileResult]:
    assert _WORKER_RULEBOOK is not None
    return [scan_with_budget(source, _WORKER_RULEBOOK, _WORKER_MAX_BYTES, _WORKER_BUDGET) for source in chunk]


def default_jobs() -> int:
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except AttributeError:
        return max(1, os.cpu_count() or 1)


def _chunks(sources: Sequence[SourceFile], jobs: int) -> list[list[SourceFile]]:
    """Small chunks, biggest files first, so one huge file does not leave the other workers idle."""
    def size(source: SourceFile) -> int:
        try:
            return os.stat(source.abspath).st_size
        except OSError:
            return 0

    ordered = sorted(sources, key=size, reverse=True)
    per_chunk = max(1, min(16, len(ordered) // (jobs * 8) or 1))
    return [ordered[i:i + per_chunk] for i in range(0, len(ordered), per_chunk)]


def scan_all(
    sources: Sequence[SourceFile],
    rulebook: Rulebook,
    jobs: int,
    progress: Callable[[int], None] | None = None,
    max_bytes: int = MAX_FILE_BYTES,
    time_budget: float = DEFAULT_TIME_BUDGET,
) -> list[FileResult]:
    results: list[FileResult] = []
    if jobs <= 1 or len(sources) < IN_PROCESS_BELOW:
        for source in sources:
            results.append(scan_with_budget(source, rulebook, max_bytes, time_budget))
            if progress:
                progress(1)
    else:
        initargs = (rulebook, max_bytes, time_budget)
        with ProcessPoolExecutor(max_workers=jobs, initializer=_init_worker, initargs=initargs) as pool:
            futures = [pool.submit(_scan_chunk, chunk) for chunk in _chunks(sources, jobs)]
            for future in futures:
                chunk_results = future.result()
                results.extend(chunk_results)
                if progress:
                    progress(len(chunk_results))
    return sorted(results, key=lambda r: r.path)
