"""auditor/util/forkmap.py: per-file work after the scan shared among forked children; values in order, any
child's failure made good here, errors raised as without children, no child left behind."""
from __future__ import annotations

import os

import pytest

from auditor.util.forkmap import map_in_children


@pytest.fixture
def forked(monkeypatch) -> list[int]:
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
    return True


def test_values_come_back_in_order_from_the_children(forked):
    here = os.getpid()
    values = map_in_children(lambda n: (n * n, os.getpid() != here), list(range(7)), jobs=3)
    assert [v for v, _ in values] == [n * n for n in range(7)]
    assert all(in_child for _, in_child in values)
    assert len(forked) == 3 and _reaped(forked)


def test_one_job_or_one_item_runs_here(forked):
    here = os.getpid()
    assert map_in_children(lambda n: os.getpid(), [1, 2, 3], jobs=1) == [here] * 3
    assert map_in_children(lambda n: os.getpid(), [1], jobs=4) == [here]
    assert forked == []


def test_the_items_of_a_child_that_dies_are_worked_here(forked):
    here = os.getpid()

    def work(n: int) -> int:
        if n == 2 and os.getpid() != here:
            os._exit(9)
        return n + 100

    assert map_in_children(work, [0, 1, 2, 3], jobs=2) == [100, 101, 102, 103]
    assert _reaped(forked)


def test_an_error_is_raised_here_as_without_children(forked):
    def work(n: int) -> int:
        if n == 3:
            raise ValueError("bad file 3")
        return n

    with pytest.raises(ValueError, match="bad file 3"):
        map_in_children(work, [1, 2, 3, 4], jobs=2)
    assert _reaped(forked)


def test_large_values_pass_through_the_pipes(forked):
    values = map_in_children(lambda n: "x" * (1 << 20) + str(n), [0, 1, 2], jobs=3)
    assert [v[-1] for v in values] == ["0", "1", "2"] and all(len(v) == (1 << 20) + 1 for v in values)
    assert _reaped(forked)
