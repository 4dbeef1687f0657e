"""Imports of modules that cannot be imported on ROCm (RA920, auditor/match/xlang/importchain.py), on a package shaped
like flashinfer's (a `comm/__init__.py` that re-exports a vLLM-style ctypes wrapper of libcudart, a `utils.py`
that imports pynvml at module level), and CUDA source held in Python strings for a JIT compile."""
import pytest

from auditor.run.pipeline import audit
from auditor.match.rulebook import load_rulebook
from auditor.types import Severity
from auditor.match.xlang.importchain import MAX_DEPTH, module_names
from tests.conftest import write_tree

CUDA_IPC = """\
import ctypes


class CudaRTLibrary:
    def __init__(self, so_file=None):
        if so_file is None:
            so_file = find_loaded_library("libcudart")
        self.lib = ctypes.CDLL(so_file)


cudart = CudaRTLibrary()
"""
TREE = {
    "kern/__init__.py": "from .norm import rmsnorm\nfrom . import comm\n",
    "kern/comm/__init__.py": "from .cuda_ipc import cudart\nfrom .mapping import Mapping\n",
    "kern/comm/cuda_ipc.py": CUDA_IPC,
    "kern/comm/mapping.py": "class Mapping:\n    pass\n",
    "kern/utils.py": "import torch\nimport pynvml\n\n\ndef device_name():\n    return 'gpu'\n",
    "kern/norm.py": "import torch\n\nfrom .utils import device_name\n\n\ndef rmsnorm(x):\n    return x\n",
    "kern/optional.py": ("try:\n    from .comm import cudart\nexcept ImportError:\n    cudart = None\n\n\n"
                         "def later():\n    from .utils import device_name\n    return device_name()\n"),
    "kern/dispatch.py": ("import torch\n\nif not torch.version.hip:\n    from .comm import cudart\n"
                         "    from .utils import device_name\n"
                         "PYDOC = \"\"\"\nfrom .utils import device_name\n\"\"\"\n"),
    # an import cycle through a failing module ends: a imports b, b imports a and utils
    "kern/a.py": "from . import b\n",
    "kern/b.py": "from . import a\nfrom .utils import device_name\n",
}


@pytest.fixture(scope="module")
def report(tmp_path_factory):
    return audit([write_tree(tmp_path_factory.mktemp("kern"), TREE)], load_rulebook(), shown_root="repo")


def _chained(report):
    return {(f.path, f.span.line): f for f in report.findings if f.rule_id == "RA920"}


def test_an_unconditional_import_of_a_module_that_fails_on_rocm_is_reported_at_its_line_with_the_chain(report):
    chained = _chained(report)
    comm = chained[("kern/comm/__init__.py", 1)]
    assert "imports kern.comm.cuda_ipc" in comm.detail
    assert "kern/comm/__init__.py -> kern/comm/cuda_ipc.py" in comm.detail
    assert "RA505 at kern/comm/cuda_ipc.py:7" in comm.detail     # the libcudart look-up CudaRTLibrary() runs
    norm = chained[("kern/norm.py", 3)]
    assert "RA112 at kern/utils.py:2" in norm.detail
    # one more hop: the package's __init__ imports norm (line 1) and comm (line 2)
    top = chained[("kern/__init__.py", 1)]
    assert "kern/__init__.py -> kern/norm.py -> kern/utils.py" in top.detail
    assert ("kern/__init__.py", 2) in chained


def test_guarded_lazy_and_unrelated_imports_stay_quiet(report):
    paths = {path for path, _ in _chained(report)}
    assert "kern/optional.py" not in paths       # try/except ImportError, and an import inside a function
    assert "kern/dispatch.py" not in paths       # an import in a branch, and import text inside a string
    assert "kern/comm/mapping.py" not in paths
    assert not {"kern/comm/cuda_ipc.py", "kern/utils.py"} & paths   # the roots are reported by their own rules


def test_an_import_cycle_ends_and_each_importer_is_reported_once_per_import_line(report):
    chained = _chained(report)
    assert ("kern/b.py", 2) in chained
    assert ("kern/a.py", 1) in chained and "kern/a.py -> kern/b.py -> kern/utils.py" in chained[("kern/a.py", 1)].detail
    assert ("kern/b.py", 1) not in chained      # a is reached through b: b already fails, the cycle is not walked
    assert len(chained) == len({(f.path, f.span.line) for f in report.findings if f.rule_id == "RA920"})
    assert MAX_DEPTH >= 2


def test_the_symptoms_do_not_count_again_in_the_verdict_or_the_effort(report):
    chained = _chained(report).values()
    assert {f.severity for f in chained} == {Severity.INFO}
    assert all(f.hours == (0.0, 0.0) for f in chained)
    assert "import-of-module-failing-on-rocm" not in report.verdict_reason
    assert "pynvml" in report.verdict_reason or "cuda-shared-library-load" in report.verdict_reason


def test_module_names_start_at_the_outermost_package():
    names = module_names(["src/kern/__init__.py", "src/kern/comm/__init__.py", "src/kern/comm/x.py", "tool.py"])
    assert names == {"src/kern/__init__.py": "kern", "src/kern/comm/__init__.py": "kern.comm",
                     "src/kern/comm/x.py": "kern.comm.x", "tool.py": "tool"}


JIT = '''\
import jinja2

activation_templ = r"""
#include <cuda_runtime.h>

void act(int d, cudaStream_t stream) {
  cudaLaunchAttribute attrs[1];
  attrs[0].id = cudaLaunchAttributeProgrammaticStreamSerialization;
}
"""

HELP = "write the kernel as __global__ void f()"


def documented():
    """Renders a template like

    #include <cuda_runtime.h>
    __global__ void kernel() {}
    """
'''


def test_cuda_source_held_in_a_python_string_is_read_by_the_cuda_rules(tmp_path):
    report = audit([write_tree(tmp_path, {"jit/activation.py": JIT})], load_rulebook(), shown_root="repo")
    lines = {(f.rule_id, f.span.line) for f in report.findings if f.path == "jit/activation.py"}
    assert ("RA310", 8) in lines           # programmatic dependent launch, on its line inside the string
    assert all(line <= 9 for _, line in lines)   # the one-line message and the docstring are not code


def test_a_file_the_scan_could_not_parse_is_not_parsed_again_to_link_imports():
    from dataclasses import replace

    from auditor.match.xlang.importchain import link_imports
    from auditor.run.scan.file import scan_text_as

    rulebook = load_rulebook()
    results = [scan_text_as(path, "python", text, rulebook) for path, text in TREE.items()]
    findings = [f for r in results for f in r.findings]
    read_paths: list[str] = []

    def read(path):
        read_paths.append(path)
        return TREE[path]

    linked = link_imports(results, findings, rulebook, read)
    assert any(f.path == "kern/norm.py" for f in linked)
    # the scan failed on norm.py (a memory ceiling, say): it stays unread, and so does its chain through it
    failed = [replace(r, error="could not parse: out of memory") if r.path == "kern/norm.py" else r for r in results]
    read_paths.clear()
    linked = link_imports(failed, findings, rulebook, read)
    assert "kern/norm.py" not in read_paths
    assert not any(f.path == "kern/norm.py" for f in linked)
