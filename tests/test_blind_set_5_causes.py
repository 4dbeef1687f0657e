"""The general causes behind the fifth blind set's misses (session 11), each on a small tree built from what a real
project does: a nested CMake project whose sources the root setup.py compiles (EETQ's csrc/, with a `project()` of
its own, and csrc/cutlass_kernels/*.cu in the root extension's sources), and a CUDA version formatted into the message
of a raised exception (NATTEN's setup.py)."""
from tests.conftest import write_tree

CUTLASS_KERNEL = '#include "cutlass/numeric_types.h"\n__global__ void gemm(float* x) { x[threadIdx.x] = 0.f; }\n'


def _setup(sources: str) -> str:
    return ("from setuptools import setup\n"
            "from torch.utils.cpp_extension import BuildExtension, CUDAExtension\n"
            f"setup(name='q', ext_modules=[CUDAExtension('q_ext', sources=[{sources}])],\n"
            "      cmdclass={'build_ext': BuildExtension})\n")


def test_a_nested_cmake_project_the_root_setup_compiles_is_the_main_path(tmp_path, run_json):
    """csrc/ has its own CMakeLists.txt with project(), but setup.py builds csrc/kernels/gemm.cu into the one
    extension: the CUTLASS include there is on the default install and blocks it."""
    root = write_tree(tmp_path / "q", {
        "setup.py": _setup("'csrc/bind.cpp', 'csrc/kernels/gemm.cu'"),
        "csrc/CMakeLists.txt": "project(FasterTransformer LANGUAGES CXX CUDA)\nadd_subdirectory(kernels)\n",
        "csrc/bind.cpp": "int bind() { return 0; }\n",
        "csrc/kernels/CMakeLists.txt": "add_library(k gemm.cu)\n",
        "csrc/kernels/gemm.cu": CUTLASS_KERNEL})
    _, data = run_json(root, "--no-cache")
    cutlass = [(f["path"], f["line"], f["disposition"]) for f in data["findings"] if f["rule"] == "RA404"]
    assert cutlass == [("csrc/kernels/gemm.cu", 1, "live")]
    assert data["summary"]["verdict"] == "blocked"
    assert {c["path"]: c["kind"] for c in data["components"]} == {".": "primary", "csrc": "primary"}


def test_a_nested_cmake_project_the_root_setup_does_not_compile_stays_separate(tmp_path, run_json):
    """The same tree whose setup.py builds only its own bindings: csrc/ is a separate build and does not decide."""
    root = write_tree(tmp_path / "q", {
        "setup.py": _setup("'q/bind.cpp'"),
        "q/bind.cpp": "int bind() { return 0; }\n",
        "csrc/CMakeLists.txt": "project(FasterTransformer LANGUAGES CXX CUDA)\nadd_library(k kernels/gemm.cu)\n",
        "csrc/kernels/gemm.cu": CUTLASS_KERNEL})
    _, data = run_json(root, "--no-cache")
    assert [f["disposition"] for f in data["findings"] if f["rule"] == "RA404"] == ["optional"]
    assert data["summary"]["verdict"] != "blocked"
    assert {c["path"]: c["kind"] for c in data["components"]} == {".": "primary", "csrc": "secondary"}


def test_a_cuda_version_in_a_raised_message_is_a_message(tmp_path, run_json):
    """`raise ValueError(f"... {torch.version.cuda=}")` shows the value; parsing it on the next line is still
    reported."""
    script = ("import torch\n"
              "def cuda_tag():\n"
              "    if torch.version.cuda is None:\n"
              "        raise ValueError(f'needs a CUDA build of PyTorch, got {torch.version.cuda=}')\n"
              "    return 'cu' + torch.version.cuda.replace('.', '')\n")
    root = write_tree(tmp_path / "p", {
        "pyproject.toml": "[project]\nname = 'p'\nversion = '1'\n", "p/__init__.py": "", "p/tag.py": script})
    _, data = run_json(root, "--no-cache")
    assert [(f["path"], f["line"]) for f in data["findings"] if f["rule"] == "RA501"] == [("p/tag.py", 5)]
