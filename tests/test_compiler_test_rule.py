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


CHAINS = ("int pick() {\n"
          "  int alg;\n"
          "#if defined(CUDART_VERSION) && (CUDART_VERSION >= 11000)\n"     # line 3: CUDART_VERSION, never renamed
          "  alg = 2;\n"
          "#endif\n"
          "#if CUDA_VERSION >= 12000\n"                                     # line 6: HIPIFY makes it HIP_VERSION
          "  int extra = 1;\n"
          "#endif\n"
          "#if CUDA_VERSION >= 12000\n"                                     # line 9: has a fallback
          "  alg = 3;\n"
          "#else\n"
          "  alg = 1;\n"
          "#endif\n"
          "  return alg;\n"
          "}\n")


def test_version_chains_with_no_fallback_are_live_unless_hipify_renames_their_macro(tmp_path, run_json):
    cmake = write_tree(tmp_path / "cmake", {
        "CMakeLists.txt": "project(foo CXX CUDA)\nadd_library(foo src/k.cu)\n", "src/k.cu": CHAINS})
    _, data = run_json(cmake, "--no-cache")
    assert {f["line"]: f["disposition"] for f in data["findings"] if f["rule"] == "RA849"} == {3: "live", 6: "live"}
    ext = write_tree(tmp_path / "ext", {
        "setup.py": ("from setuptools import setup\n"
                     "from torch.utils.cpp_extension import CUDAExtension\n"
                     "setup(name='foo', ext_modules=[CUDAExtension('foo._C', ['src/k.cu'])])\n"),
        "src/k.cu": CHAINS})
    _, data = run_json(ext, "--no-cache")
    assert {f["line"]: f["disposition"] for f in data["findings"] if f["rule"] == "RA849"} == {3: "live", 6: "guarded"}
