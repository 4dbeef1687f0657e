"""Each process that scans files has a memory ceiling (auditor/run/runner/memory.py): a file whose parse needs more
(CPython's parser keeps about 1 KB per element of a list literal) is a file that could not be scanned, which fails
the gate closed, never a crash or a machine out of memory."""
import re
import resource

import pytest

from tests.conftest import write_tree
from auditor.cli.app import main
from auditor.run.runner.memory import limit_this_process


def data_now() -> int:
    return int(re.search(r"VmData:\s+(\d+) kB", open("/proc/self/status").read()).group(1)) * 1024


def check(tmp_path, capfd, *extra):
    code = main([str(tmp_path), "--format", "github", "--no-progress", "-j", "1", "--no-cache", *extra])
    out, err = capfd.readouterr()
    assert "Traceback" not in out + err
    return code, out


def _large(tmp_path):
    write_tree(tmp_path, {"app/table.py": "import tensorrt_llm\nX = [" + "0," * 400_000 + "]\n",
                          "app/serve.py": "import os\nimport pynvml\n"})


@pytest.mark.slow   # an 800 KB file parsed up to a ceiling 150 MB over this process's memory; the fast run has the
# ceiling (the last test) and a parse out of memory failing closed the same way (the next test)
def test_a_file_over_the_memory_ceiling_is_not_scanned_and_fails_closed(tmp_path, capfd):
    _large(tmp_path)
    ceiling = f"{(data_now() + (150 << 20)) >> 20}M"   # what this process holds, inherited, plus 150 MB
    code, out = check(tmp_path, capfd, "--max-worker-memory", ceiling)
    assert code == 1
    assert "::error file=app/table.py,title=rocm-audit%3A fails closed::app/table.py: not scanned completely " \
           "(cannot parse: too deep or too large to parse within the memory a scanning process may take" in out
    assert "::error file=app/table.py,line=1,col=1,title=rocm-audit RA100" in out   # its imports are still read
    assert "file=app/serve.py,line=2" in out     # the other file is scanned in full


def test_a_parse_out_of_memory_is_not_scanned_and_fails_closed(tmp_path, capfd):
    """CPython's parser runs out of memory on a long enough chain of unary operators, whatever the ceiling: the
    file that the ceiling stops takes the same way."""
    write_tree(tmp_path, {"app/table.py": "import tensorrt_llm\nX = " + "-" * 100_000 + "1\n",
                          "app/serve.py": "import os\nimport pynvml\n"})
    code, out = check(tmp_path, capfd)
    assert code == 1
    assert "::error file=app/table.py,title=rocm-audit%3A fails closed::app/table.py: not scanned completely " \
           "(cannot parse: too deep or too large to parse within the memory a scanning process may take" in out
    assert "::error file=app/table.py,line=1,col=1,title=rocm-audit RA100" in out   # its imports are still read
    assert "file=app/serve.py,line=2" in out     # the other file is scanned in full


@pytest.mark.slow
def test_the_default_ceiling_holds_the_same_file(tmp_path, capfd):
    _large(tmp_path)
    code, out = check(tmp_path, capfd)
    assert "fails closed" not in out


def test_the_ceiling_only_ever_lowers_the_limit(tmp_path):
    import os

    pid = os.fork()
    if pid == 0:   # in a child, so the test process keeps its limit
        soft, hard = resource.getrlimit(resource.RLIMIT_DATA)
        limit_this_process(3 << 30)
        first = resource.getrlimit(resource.RLIMIT_DATA)[0]
        limit_this_process(5 << 30)
        expected = 3 << 30 if soft == resource.RLIM_INFINITY else min(soft, 3 << 30)
        os._exit(0 if first == expected and resource.getrlimit(resource.RLIMIT_DATA)[0] == first else 1)
    _, status = os.waitpid(pid, 0)
    assert os.waitstatus_to_exitcode(status) == 0
