"""Serial work spread over forked children, each returning its value pickled (our own values, made by our own
code; a closure is fine, nothing is pickled on the way in). Should a child fail in any way (no fork here, an
exception, killed), its work runs in this process, so errors are raised as they would be without children, and no
child is ever left behind.

- `alongside`: the build pre-pass reads the project in a child while this process compiles the tree-sitter
  queries its workers will inherit (tree-sitter holds the GIL while it compiles, so a thread would not overlap).
- `map_in_children`: the analysis's per-file work after the scan (the cross-language link parses and scans each
  Python file that calls an extension's ops) on every core, as the scan did."""
from __future__ import annotations

import os
import pickle
import threading
from collections.abc import Callable, Sequence
from functools import partial
from typing import Any, TypeVar

T = TypeVar("T")
R = TypeVar("R")


def _can_fork() -> bool:
    return hasattr(os, "fork") and threading.current_thread() is threading.main_thread()


def _child(work: Callable[[], Any], read_end: int, write_end: int, siblings: Sequence[int]) -> None:
    """In a forked child: work's value down the pipe, then exit (never back into the caller's code). The read ends
    of earlier children's pipes it inherited are closed first: only the parent holds them."""
    status = 1
    try:
        for fd in (read_end, *siblings):
            os.close(fd)
        payload = pickle.dumps(work(), protocol=pickle.HIGHEST_PROTOCOL)
        with os.fdopen(write_end, "wb") as sink:
            sink.write(payload)
        status = 0
    except BaseException:   # noqa: BLE001 - whatever it was, the parent does the work itself
        pass
    finally:
        os._exit(status)


def _fork(work: Callable[[], Any], siblings: Sequence[int] = ()) -> tuple[int, int]:
    """(pid, the read end of its pipe) of a child running `work`."""
    read_end, write_end = os.pipe()
    pid = os.fork()
    if pid == 0:
        _child(work, read_end, write_end, siblings)
    os.close(write_end)
    return pid, read_end


def _collect(pid: int, read_end: int) -> tuple[bool, Any]:
    """(whether the child delivered, its value)."""
    try:
        with os.fdopen(read_end, "rb") as source:
            payload = source.read()
    finally:   # (the read end is closed: a child still writing fails and exits)
        _, status = os.waitpid(pid, 0)
    if os.waitstatus_to_exitcode(status) == 0 and payload:
        return True, pickle.loads(payload)  # noqa: S301 - our own child's pickle of our own value
    return False, None


def _work_share(work: Callable[[T], R], items: Sequence[T], share: list[int]) -> list[R]:
    return [work(items[i]) for i in share]


def alongside(work: Callable[[], T], meanwhile: Callable[[], object]) -> T:
    """`work()` run in a forked child while this process runs `meanwhile()`: work's value."""
    if not _can_fork():
        meanwhile()
        return work()
    pid, read_end = _fork(work)
    try:
        meanwhile()
    except BaseException:
        os.close(read_end)   # a child still writing fails and exits
        os.waitpid(pid, 0)
        raise
    delivered, value = _collect(pid, read_end)
    return value if delivered else work()


def map_in_children(work: Callable[[T], R], items: Sequence[T], jobs: int) -> list[R]:
    """[work(item) for item in items], in order, the items dealt to up to `jobs` forked children."""
    jobs = min(jobs, len(items))
    if jobs < 2 or not _can_fork():
        return [work(item) for item in items]
    shares = [list(range(i, len(items), jobs)) for i in range(jobs)]
    children: list[tuple[int, int]] = []
    try:
        for share in shares:
            children.append(_fork(partial(_work_share, work, items, share), [read_end for _, read_end in children]))
        done: dict[int, R] = {}
        for share in shares:
            delivered, values = _collect(*children.pop(0))
            if delivered:
                done.update(zip(share, values))
        return [done[i] if i in done else work(items[i]) for i in range(len(items))]
    finally:   # (an error or an interrupt while collecting: no child is left behind)
        for pid, read_end in children:
            os.close(read_end)
            os.waitpid(pid, 0)
