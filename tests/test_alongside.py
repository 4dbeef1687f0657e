"""auditor/util/alongside.py: the build pre-pass runs in a forked child while this process compiles queries; the
value comes back, failures fall back to doing the work here, and no child is left behind."""
from __future__ import annotations

import os
import threading

import pytest

from auditor.util.alongside import alongside


@pytest.fixture
def forked(monkeypatch) -> list[int]:
    """The pids of the children alongside() forks."""
    pids: list[int] = []
    fork = os.fork

    def recording_fork() -> int:
        pid = fork()
        if pid:
            pids.append(pid)
        return pid
    monkeypatch.setattr(os, "fork", recording_fork)
    return pids


def _reaped(pids: list[int]) -> bool:
    for pid in pids:
        try:
            os.waitpid(pid, os.WNOHANG)
        except ChildProcessError:
            continue
        return False
    return bool(pids)


def test_the_work_runs_in_a_child_while_this_process_runs_the_other(forked):
    ran_here: list[str] = []

    def work() -> dict:
        ran_here.append("work")   # in the child: this list in the parent never sees it
        return {"pid": os.getpid(), "lines": frozenset({3, 4})}

    value = alongside(work, lambda: ran_here.append("meanwhile"))
    assert value["lines"] == frozenset({3, 4})
    assert value["pid"] != os.getpid()
    assert ran_here == ["meanwhile"]
    assert _reaped(forked)


def test_a_child_that_fails_leaves_the_work_to_this_process_and_its_error_is_raised_here(forked):
    calls: list[int] = []

    def work() -> int:
        calls.append(os.getpid())
        raise ValueError("unreadable build file")

    with pytest.raises(ValueError, match="unreadable build file"):
        alongside(work, lambda: None)
    assert calls == [os.getpid()]   # the child's attempt is not seen here; the retry here raised
    assert _reaped(forked)


def test_a_child_that_dies_leaves_the_work_to_this_process(forked):
    parent = os.getpid()

    def work() -> str:
        if os.getpid() != parent:
            os._exit(9)   # killed, in effect: no value comes back
        return "read here"

    assert alongside(work, lambda: None) == "read here"
    assert _reaped(forked)


def test_an_error_of_the_other_work_is_raised_and_the_child_is_reaped(forked):
    big = "x" * (1 << 20)   # more than a pipe holds: the child blocks writing until the parent gives up on it

    def meanwhile() -> None:
        raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        alongside(lambda: big, meanwhile)
    assert _reaped(forked)


def test_outside_the_main_thread_both_run_here_one_after_the_other():
    order: list[str] = []
    box: dict[str, int] = {}

    def run() -> None:
        box["value"] = alongside(lambda: order.append("work") or 7, lambda: order.append("meanwhile"))

    thread = threading.Thread(target=run)
    thread.start()
    thread.join()
    assert box["value"] == 7
    assert order == ["meanwhile", "work"]
