"""`work(item)` for many items, shared among forked children: the analysis's per-file work after the scan (the
cross-language link parses and scans each Python file that calls an extension's ops) runs on every core, as the
scan did. Each child inherits `work` (a closure is fine: nothing is pickled but the values coming back)."""
from __future__ import annotations

import os
import pickle
import threading
from collections.abc import Callable, Sequence
from typing import TypeVar

T = TypeVar("T")
R = TypeVar("R")


def map_in_children(work: Callable[[T], R], items: Sequence[T], jobs: int) -> list[R]:
    """[work(item) for item in items], in order. With `jobs` > 1 and more than one item, the items are dealt to up
    to `jobs` forked children, each returning its values pickled (our own values, made by our own code); the
    items of a child that fails in any way are worked here, so errors are raised as they would be without one."""
    jobs = min(jobs, len(items))
    if jobs < 2 or not hasattr(os, "fork") or threading.current_thread() is not threading.main_thread():
        return [work(item) for item in items]
    shares = [list(range(i, len(items), jobs)) for i in range(jobs)]
    children: list[tuple[int, int, list[int]]] = []
    open_ends: set[int] = set()
    running: set[int] = set()
    try:
        for share in shares:
            read_end, write_end = os.pipe()
            pid = os.fork()
            if pid == 0:   # the child never returns into the caller's code
                _child(work, [items[i] for i in share], read_end, write_end)
            os.close(write_end)
            open_ends.add(read_end)
            running.add(pid)
            children.append((pid, read_end, share))
        done: dict[int, R] = {}
        for pid, read_end, share in children:
            with os.fdopen(read_end, "rb") as source:
                open_ends.discard(read_end)
                payload = source.read()
            _, status = os.waitpid(pid, 0)
            running.discard(pid)
            if os.waitstatus_to_exitcode(status) == 0 and payload:
                done.update(zip(share, pickle.loads(payload)))  # noqa: S301 - our own child's pickle
        return [done[i] if i in done else work(items[i]) for i in range(len(items))]
    finally:   # (an error here, or an interrupt: no child is left behind)
        for read_end in open_ends:
            os.close(read_end)   # a child still writing fails and exits
        for pid in running:
            os.waitpid(pid, 0)


def _child(work: Callable[[T], R], items: list[T], read_end: int, write_end: int) -> None:
    status = 1
    try:
        os.close(read_end)
        payload = pickle.dumps([work(item) for item in items], protocol=pickle.HIGHEST_PROTOCOL)
        with os.fdopen(write_end, "wb") as sink:
            sink.write(payload)
        status = 0
    except BaseException:   # noqa: BLE001 - whatever it was, the parent does the work itself
        pass
    finally:
        os._exit(status)
