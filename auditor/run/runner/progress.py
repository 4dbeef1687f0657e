"""Progress of a long scan, told truthfully: files done of the total, bytes done (for MB/s), and the file a
worker has been on for more than a few seconds. Workers report each file as they start and finish it."""
from __future__ import annotations

import queue
import threading
import time
from typing import Protocol

SLOW_FILE_SECONDS = 3.0
POLL_SECONDS = 0.25


class ScanProgress(Protocol):
    def done(self, files: int, nbytes: int) -> None:
        """`files` more files scanned (or taken from the cache), `nbytes` of them."""

    def slow(self, path: str | None, seconds: float) -> None:
        """The file scanned for longest, when that is over SLOW_FILE_SECONDS; None when no file is."""


class Watcher:
    """In the parent: reads the workers' events (pid, path or None, size) from a multiprocessing queue and
    tells `sink`. A path starts a file in that worker; None finishes the worker's file."""

    def __init__(self, events, sink: ScanProgress):
        self._events, self._sink = events, sink
        self._current: dict[int, tuple[str, float]] = {}
        self._shown: str | None = None
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name="rocm-audit-progress", daemon=True)

    def __enter__(self) -> "Watcher":
        self._thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self._stop.set()
        self._thread.join()
        self._drain(block=False)
        self._sink.slow(None, 0.0)

    def _run(self) -> None:
        while not self._stop.is_set():
            self._drain(block=True)
            self._tell_slow()

    def _drain(self, block: bool) -> None:
        try:
            event = self._events.get(timeout=POLL_SECONDS) if block else self._events.get_nowait()
            while True:
                self._take(*event)
                event = self._events.get_nowait()
        except (queue.Empty, EOFError, OSError):
            return

    def _take(self, pid: int, path: str | None, size: int) -> None:
        if path is not None:
            self._current[pid] = (path, time.monotonic())
        elif self._current.pop(pid, None) is not None:
            self._sink.done(1, size)

    def _tell_slow(self) -> None:
        now = time.monotonic()
        oldest = min(self._current.values(), key=lambda item: item[1], default=None)
        if oldest is not None and now - oldest[1] >= SLOW_FILE_SECONDS:
            self._shown = oldest[0]
            self._sink.slow(oldest[0], now - oldest[1])
        elif self._shown is not None:
            self._shown = None
            self._sink.slow(None, 0.0)
