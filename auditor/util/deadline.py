"""`--max-run-time`: the whole run ends after so many seconds, with exit 2.

A watchdog thread interrupts the main thread (so `with` blocks close worker pools and remove temporary
directories); if the main thread is stuck inside C code (a regex, a parser) and does not answer within a grace
period, the process ends at once with exit 2. SIGALRM is not used: the per-file budget owns it.
"""
from __future__ import annotations

import _thread
import os
import signal
import sys
import threading
from dataclasses import dataclass, field

GRACE_SECONDS = 5.0
EXIT_ERROR = 2


@dataclass(slots=True)
class Deadline:
    seconds: float
    expired: bool = False
    _done: threading.Event = field(default_factory=threading.Event)

    def start(self) -> "Deadline":
        threading.Thread(target=self._watch, name="rocm-audit-deadline", daemon=True).start()
        return self

    def cancel(self) -> None:
        self._done.set()

    def message(self) -> str:
        return f"the run took longer than --max-run-time {self.seconds:g} s; stopped (no report)"

    def _watch(self) -> None:
        if self._done.wait(self.seconds):
            return
        self.expired = True
        _thread.interrupt_main()
        if self._done.wait(GRACE_SECONDS):
            return
        sys.stderr.write(f"rocm-audit: error: {self.message()}\n")
        sys.stderr.flush()
        _end_children()
        os._exit(EXIT_ERROR)


def _end_children() -> None:
    """Scan workers and children would outlive an abrupt exit (and keep its pipes open): end them first."""
    me = str(os.getpid())
    try:
        entries = os.listdir("/proc")
    except OSError:
        return
    for entry in entries:
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat", encoding="ascii", errors="replace") as handle:
                fields = handle.read().rsplit(")", 1)[1].split()
        except OSError:
            continue
        if len(fields) > 1 and fields[1] == me:
            try:
                os.kill(int(entry), signal.SIGKILL)
            except OSError:
                pass
