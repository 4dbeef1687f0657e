"""Two pieces of serial work at once, one in a forked child: the build pre-pass reads the project there while this
process compiles the tree-sitter queries its workers will inherit (tree-sitter holds the GIL while it compiles,
so a thread would not overlap them)."""
from __future__ import annotations

import os
import pickle
import threading
from collections.abc import Callable
from typing import TypeVar

T = TypeVar("T")


def alongside(work: Callable[[], T], meanwhile: Callable[[], object]) -> T:
    """`work()` run in a forked child while this process runs `meanwhile()`: work's value, as the child pickled
    it (our own objects, made by our own code). Should the child fail in any way (no fork here, an exception,
    killed), `work()` runs here after `meanwhile()`, so its errors are raised as they would be without a child."""
    if not hasattr(os, "fork") or threading.current_thread() is not threading.main_thread():
        meanwhile()
        return work()
    read_end, write_end = os.pipe()
    pid = os.fork()
    if pid == 0:   # the child never returns into the caller's code
        status = 1
        try:
            os.close(read_end)
            payload = pickle.dumps(work(), protocol=pickle.HIGHEST_PROTOCOL)
            with os.fdopen(write_end, "wb") as sink:
                sink.write(payload)
            status = 0
        except BaseException:   # noqa: BLE001 - whatever it was, the parent does the work itself
            pass
        finally:
            os._exit(status)
    os.close(write_end)
    source = os.fdopen(read_end, "rb")
    try:
        meanwhile()
        payload = source.read()
    finally:
        source.close()   # (if meanwhile() raised: the child's write fails and it exits)
        _, status = os.waitpid(pid, 0)
    if os.waitstatus_to_exitcode(status) == 0 and payload:
        return pickle.loads(payload)  # noqa: S301 - our own child's pickle of our own value
    return work()
