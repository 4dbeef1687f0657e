"""Causes found reading findings on code nobody had tuned for (pytorch3d, issue 25): a build gate that admits ROCm
through an `or` (`(is_available() and gpu_home_available) or force_cuda`, with `gpu_home_available = CUDA_HOME is
not None or (is_rocm and ROCM_HOME is not None)`) is the branch a ROCm install takes, so the switch it defines
(`WITH_CUDA`) is defined on ROCm too."""
from tests.conftest import write_tree

KERNEL = "__global__ void k(float* x) { x[threadIdx.x] += 1.0f; }\n"
HEADER = ("#pragma once\n"
          "#ifdef WITH_CUDA\n"                       # line 2: the switch the GPU branch defines
          "void k_cuda(float* x);\n"
          "#endif\n")


def _setup(gate: str) -> str:
    return ("import os\n"
            "import torch\n"
            "from setuptools import setup\n"
            "from torch.utils.cpp_extension import BuildExtension, CppExtension, CUDAExtension, CUDA_HOME, ROCM_HOME\n"
            "is_rocm = torch.version.hip is not None\n"
            "force_cuda = os.getenv('FORCE_CUDA', '0') == '1'\n"
            "gpu_home_available = CUDA_HOME is not None or (is_rocm and ROCM_HOME is not None)\n"
            "extension, sources, macros = CppExtension, ['p/b.cpp'], []\n"
            f"if {gate}:\n"
            "    extension = CUDAExtension\n"
            "    sources += ['p/k.cu']\n"
            "    macros += [('WITH_CUDA', None)]\n"
            "setup(name='p', packages=['p'], ext_modules=[extension('p._C', sources, define_macros=macros)],\n"
            "      cmdclass={'build_ext': BuildExtension})\n")


def _tree(tmp_path, name: str, gate: str):
    return write_tree(tmp_path / name, {"setup.py": _setup(gate), "p/__init__.py": "", "p/k.cu": KERNEL,
                                        "p/k.h": HEADER, "p/b.cpp": '#include "k.h"\n'})


def test_a_gate_that_admits_rocm_through_an_or_is_the_rocm_build(tmp_path, run_json):
    root = _tree(tmp_path, "p", "(torch.cuda.is_available() and gpu_home_available) or force_cuda")
    _, data = run_json(root, "--no-cache")
    summary = data["summary"]
    assert summary["verdict"] == "ready", summary["verdict_reason"]
    assert "setup.py:9 switches to a ROCm build" in summary["verdict_reason"]
    gates = {(f["path"], f["line"]): f["disposition"] for f in data["findings"] if f["rule"] == "RA846"}
    assert gates == {("p/k.h", 2): "guarded"}, gates


def test_a_gate_rocm_fails_is_no_rocm_build_even_inside_an_or(tmp_path, run_json):
    """`(is_available() and CUDA_HOME is not None) or force_cuda`: ROCm passes only with FORCE_CUDA set."""
    root = _tree(tmp_path, "q", "(torch.cuda.is_available() and CUDA_HOME is not None) or force_cuda")
    _, data = run_json(root, "--no-cache")
    summary = data["summary"]
    assert "switches to a ROCm build" not in summary["verdict_reason"]
    assert summary["verdict"] == "needs-port", summary["verdict_reason"]
