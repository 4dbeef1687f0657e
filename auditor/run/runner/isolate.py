"""The per-file time budget, enforced even inside C code.

The budget's SIGALRM (runner.scan_with_budget) stops Python code, but a regex or a tree-sitter parse runs in C
and does not see it until it returns. So files are scanned in child processes that a watchdog ends when a file
overruns its budget by GRACE_SECONDS: the parent records that file as skipped and goes on with the next one in
a new child. Results come back one file at a time, so a file is never scanned twice.
"""
from __future__ import annotations

import multiprocessing
import os
import threading
import time
from collections.abc import Callable, Sequence

from auditor.run.runner.memory import limit_this_process
from auditor.types import FileResult, SourceFile

GRACE_SECONDS = 2.0
HARD_EXIT = 86     # a child's exit status when its watchdog ended it


class Watchdog:
    """In a child or worker process: ends the process when the file being scanned overruns its deadline."""

    deadline: float | None = None
    started = False

    @classmethod
    def start(cls) -> None:
        if cls.started:
            return
        cls.started = True
        threading.Thread(target=cls._watch, name="rocm-audit-watchdog", daemon=True).start()

    @classmethod
    def arm(cls, seconds: float) -> None:
        if cls.started and seconds > 0:
            cls.deadline = time.monotonic() + seconds + GRACE_SECONDS

    @classmethod
    def disarm(cls) -> None:
        cls.deadline = None

    @classmethod
    def _watch(cls) -> None:
        while True:
            time.sleep(0.25)
            deadline = cls.deadline
            if deadline is not None and time.monotonic() > deadline:
                os._exit(HARD_EXIT)


def over_budget(source: SourceFile, budget: float) -> FileResult:
    return FileResult(source.path, source.kind,
                      error=f"skipped: scanning took over the {budget:g} s per-file time budget")


def died(source: SourceFile, status: int | None) -> FileResult:
    return FileResult(source.path, source.kind,
                      error=f"not scanned: the process scanning it died (exit status {status})")


def file_size(source: SourceFile) -> int:
    try:
        return os.stat(source.abspath).st_size
    except OSError:
        return 0


def fork_available() -> bool:
    return "fork" in multiprocessing.get_all_start_methods()


def scan_in_children(
    sources: Sequence[SourceFile],
    scan_one: Callable[[SourceFile], FileResult],
    budget: float,
    progress=None,                   # a progress.ScanProgress
    prepare: Callable[[Sequence[SourceFile]], None] | None = None,
    memory: int = 0,
) -> list[FileResult]:
    """`scan_one` over `sources` in forked children (the rulebook and everything else inherited, nothing
    pickled but the results); a child that dies takes only the file it was scanning with it. `memory`: each
    child's memory ceiling in bytes (auditor/run/runner/memory.py; 0: none)."""
    context = multiprocessing.get_context("fork")
    results: list[FileResult] = []
    remaining = list(sources)
    while remaining:
        receiver, sender = context.Pipe(duplex=False)
        child = context.Process(target=_child, args=(remaining, scan_one, budget, prepare, sender, memory), daemon=True)
        child.start()
        sender.close()
        done = 0
        try:
            while done < len(remaining):
                try:
                    result = receiver.recv()
                except EOFError:
                    break
                results.append(result)
                if progress:
                    progress.done(1, file_size(remaining[done]))
                done += 1
        finally:
            receiver.close()
            child.join(GRACE_SECONDS * 4)
            if child.is_alive():
                child.kill()
                child.join()
        if done < len(remaining):   # the child died on remaining[done]: its watchdog (over budget), or a crash
            results.append(over_budget(remaining[done], budget) if child.exitcode in (HARD_EXIT, -9)
                           else died(remaining[done], child.exitcode))
            if progress:
                progress.done(1, file_size(remaining[done]))
            done += 1
        remaining = remaining[done:]
    return results


def _child(sources, scan_one, budget, prepare, sender, memory) -> None:
    """Never lets an exception out: a traceback from a forked child would land on the user's stderr. A file
    whose scan raised anyway (a budget alarm that slipped past its handler) is reported as not scanned."""
    limit_this_process(memory)
    Watchdog.start()
    try:
        if prepare is not None:
            prepare(sources)
        for source in sources:
            try:
                result = scan_one(source)
            except BaseException as err:  # noqa: BLE001 - the child's isolation boundary
                result = FileResult(source.path, source.kind, error=f"not scanned: {type(err).__name__.lstrip('_')}")
            sender.send(result)
    except BaseException:  # noqa: BLE001 - a broken pipe or a failed prepare: the parent reports the file
        pass
    finally:
        try:
            sender.close()
        except BaseException:  # noqa: BLE001
            pass
