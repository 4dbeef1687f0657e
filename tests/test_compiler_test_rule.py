"""RA848: `#ifdef __CUDACC__` / `#if defined(__NVCC__)` tests HIP-Clang never passes (it defines `__HIPCC__`). A
ROCm build that compiles the CUDA sources as HIP drops the branch; where the component's ROCm build runs HIPIFY
(a CUDAExtension, which ROCm PyTorch hipifies) `__CUDACC__` is renamed to `__HIPCC__` and the finding is guarded,
while `__NVCC__`, which no HIPIFY renames, stays live."""
from __future__ import annotations

from tests.conftest import write_tree

HEADER = ("#pragma once\n"
          "#ifdef __CUDACC__\n"                                    # line 2
          "#define HD __host__ __device__\n"
          "#else\n"
          "#define HD\n"
          "#endif\n"
          "#if defined(__NVCC__)\n"                                # line 7
          "#define FORCE __forceinline__\n"
          "#endif\n"
          "#if defined(__CUDACC__) || defined(__HIPCC__)\n"        # line 10: already ported
          "HD inline int twice(int x) { return 2 * x; }\n"
          "#endif\n")
KERNEL = '#include "common.h"\n__global__ void k(int* x) { x[0] = 1; }\n'


def _tests(data: dict) -> dict[int, tuple[str, str]]:
    return {f["line"]: (f["disposition"], f["severity"]) for f in data["findings"] if f["rule"] == "RA848"}


def test_a_cmake_cuda_project_gets_a_low_live_finding_per_compiler_test(tmp_path, run_json):
    root = write_tree(tmp_path / "p", {
        "CMakeLists.txt": "project(foo CXX CUDA)\nadd_library(foo src/k.cu)\n",
        "src/common.h": HEADER, "src/k.cu": KERNEL,
    })
    code, data = run_json(root, "--no-cache")
    assert _tests(data) == {2: ("live", "low"), 7: ("live", "low")}
    assert code in (0, 1) and data["summary"]["verdict"] != "blocked"


def test_a_hipified_extension_has_its_cudacc_renamed_but_not_its_nvcc(tmp_path, run_json):
    root = write_tree(tmp_path / "p", {
        "setup.py": ("from setuptools import setup\n"
                     "from torch.utils.cpp_extension import BuildExtension, CUDAExtension\n"
                     "setup(name='foo', ext_modules=[CUDAExtension('foo._C', ['src/k.cu'])],\n"
                     "      cmdclass={'build_ext': BuildExtension})\n"),
        "src/common.h": HEADER, "src/k.cu": KERNEL,
    })
    _, data = run_json(root, "--no-cache")
    assert _tests(data) == {2: ("guarded", "low"), 7: ("live", "low")}
    note = next(f["disposition_note"] for f in data["findings"] if f["rule"] == "RA848" and f["line"] == 2)
    assert "HIPIFY" in note and "__HIPCC__" in note
