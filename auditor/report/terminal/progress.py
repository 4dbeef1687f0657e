"""The scan's progress bar on standard error, for an interactive run (a ScanProgress, run/runner/progress.py)."""
from __future__ import annotations

import time
from typing import Any


class ProgressBar:
    """The scan's progress bar (a ScanProgress): files done of the total, MB/s, and a file that takes long."""

    def __init__(self, total: int, total_bytes: int):
        from rich.console import Console
        from rich.progress import (BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn,
                                   TimeRemainingColumn)

        self._progress = Progress(
            TextColumn("scanning"), BarColumn(), MofNCompleteColumn(), TextColumn("{task.fields[rate]}"),
            TimeElapsedColumn(), TextColumn("ETA"), TimeRemainingColumn(), TextColumn("{task.fields[slow]}"),
            console=Console(stderr=True), transient=True,
        )
        self._task = self._progress.add_task("scan", total=total, rate="", slow="")
        self._bytes, self._total_bytes, self._start = 0, total_bytes, time.monotonic()
        self._progress.start()

    def done(self, files: int, nbytes: int) -> None:
        self._bytes += nbytes
        elapsed = max(time.monotonic() - self._start, 1e-3)
        rate = f"{self._bytes / 1e6:.1f}/{self._total_bytes / 1e6:.1f} MB, {self._bytes / 1e6 / elapsed:.1f} MB/s"
        self._progress.update(self._task, advance=files, rate=rate)

    def slow(self, path: str | None, seconds: float) -> None:
        from auditor.report.terminal.lines import markup_safe

        shown = "" if path is None else f"slow: {markup_safe(path)} ({seconds:.0f} s)"   # the column reads markup
        self._progress.update(self._task, slow=shown)

    def stop(self) -> None:
        self._progress.stop()


class PhaseStatus:
    """The steps before and after the scan's bar (discovering, build model, analysis, report), each named on one
    transient status line on standard error, so a long run never goes quiet between and after the bar. Off (every
    call does nothing) unless the run shows progress on a terminal: never in -q, a hook or a pipe."""

    def __init__(self, console=None, on: bool = True):
        self._console, self._on = console, on
        self._status: Any = None

    def __call__(self, phase: str) -> None:
        if not self._on:
            return
        label = f"rocm-audit: {phase} …"
        if self._status is None:
            if self._console is None:
                from rich.console import Console

                self._console = Console(stderr=True)
            status = self._console.status(label)
            status.start()
            self._status = status
        else:
            self._status.update(label)

    def after(self, bars: list):
        """The phase callback for the pipeline: a step after the scan first clears its bar from the line."""
        def say(phase: str) -> None:
            for bar in bars:
                bar.stop()
            bars.clear()
            self(phase)
        return say

    def pause(self) -> None:
        """The scan's bar takes the line."""
        if self._status is not None:
            self._status.stop()
            self._status = None

    def stop(self) -> None:
        self.pause()


def phase_status(progress: bool) -> PhaseStatus:
    """The run's step display: on when it shows progress and standard error is a terminal."""
    import sys

    return PhaseStatus(on=progress and sys.stderr.isatty())
