"""auditor/util/forked.py: the build pre-pass in a forked child while this process compiles queries, and the
per-file work after the scan shared among forked children; values come back in order, any child's failure is made
good here, errors are raised as without children, and no child is left behind."""
from __future__ import annotations

import os
import threading

import pytest

from auditor.util.forked import alongside, map_in_children


@pytest.fixture
def forked(monkeypatch) -> list[int]:
    """The pids of the children forked meanwhile."""
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


@pytest.mark.slow
def test_the_pre_pass_in_a_child_gives_the_report_the_serial_one_gives(tmp_path, capsys, monkeypatch):
    """`prepare` reads the build files in a child while it compiles the scan's queries (with -j 2), and in one
    process with -j 1: the same report either way."""
    import json

    import auditor.run.pipeline.context as context
    from auditor.cli.app import main
    from auditor.match.rulebook import shipped_rulebook
    from tests.conftest import write_tree

    root = write_tree(tmp_path / "p", {
        "setup.py": ("import os\nfrom setuptools import setup\n"
                     "from torch.utils.cpp_extension import BuildExtension, CUDAExtension\n"
                     "flags = ['-DP_FAST'] if os.environ.get('P_FAST', '0') == '1' else []\n"
                     "setup(name='p', ext_modules=[CUDAExtension('p._C', ['csrc/k.cu'],\n"
                     "      extra_compile_args={'nvcc': ['-gencode=arch=compute_80,code=sm_80', *flags]})],\n"
                     "      cmdclass={'build_ext': BuildExtension})\n"),
        "csrc/k.cu": ("#include <cuda_runtime.h>\n"
                      "__global__ void k(float* x) {\n"
                      "  float v = __shfl_down_sync(0xffffffff, x[threadIdx.x], 16);\n"
                      "  x[threadIdx.x] = v;\n}\n"),
        "p/__init__.py": "import torch\nif torch.cuda.get_device_capability()[0] >= 9:\n    pass\n",
    })
    overlapped: list[bool] = []
    real = context.alongside

    def recording(work, meanwhile):
        overlapped.append(True)
        return real(work, meanwhile)
    monkeypatch.setattr(context, "alongside", recording)
    monkeypatch.setattr("auditor.cli.settings.default_jobs", lambda: 2)   # -j 2 even on one core
    reports = []
    for jobs in ("1", "2"):
        shipped_rulebook.cache_clear()   # as in a new process: no query compiled yet
        main([str(root), "--format", "json", "--no-progress", "--no-cache", "-j", jobs])
        report = json.loads(capsys.readouterr().out)
        reports.append((report["summary"], [(f["rule"], f["path"], f["line"], f["disposition"])
                                            for f in report["findings"]]))
    assert overlapped == [True]   # the -j 2 run only
    assert reports[0] == reports[1]
    assert any(rule == "RA651" and path == "setup.py" for rule, path, _, _ in reports[0][1])
