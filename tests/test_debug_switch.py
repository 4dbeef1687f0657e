"""A debug switch nothing defines (mmcv's spconv `tensorview.h`: `#if defined TV_DEBUG` around
`#if defined(__CUDA_ARCH__)` checks): the default build compiles neither branch on CUDA or ROCm, so what it guards
is an optional feature, not port work; a build that names the switch may define it, and then it is port work."""
from tests.conftest import write_tree

SETUP = """import torch
from setuptools import setup
from torch.utils.cpp_extension import BuildExtension, CUDAExtension

define_macros = []
if torch.version.hip is not None:
    define_macros += [("WITH_HIP", None)]
setup(name="ops", ext_modules=[CUDAExtension("ops._ext", ["csrc/ops.cu"], define_macros=define_macros{extra})],
      cmdclass={{"build_ext": BuildExtension}})
"""
HEADER = """#pragma once
template <typename T> struct View {
  T *ptr;
  __host__ __device__ T &at(int i) {
#if defined TV_DEBUG
#if defined(__CUDA_ARCH__)
    if (ptr == nullptr) asm("trap;");
#endif
#endif
    return ptr[i];
  }
  __host__ __device__ int lanes() {
#ifdef __CUDA_ARCH__
    return 32;
#else
    return 1;
#endif
  }
};
"""
KERNEL = """#include "view.h"
__global__ void scale(View<float> v) { v.at(threadIdx.x) *= 2.0f; }
#ifndef NDEBUG
#if defined(__CUDA_ARCH__)
__device__ int checked = 1;
#endif
#endif
"""


def _by_line(report: dict, path: str) -> dict[int, str]:
    return {f["line"]: f["disposition"] for f in report["findings"] if f["path"] == path and f["rule"] == "RA837"}


def test_cuda_arch_checks_behind_a_debug_switch_nothing_defines_are_optional(tmp_path, run_json):
    repo = write_tree(tmp_path, {"setup.py": SETUP.format(extra=""), "csrc/view.h": HEADER, "csrc/ops.cu": KERNEL})
    _, report = run_json(repo, "--no-cache", "--fail-on", "never")
    assert _by_line(report, "csrc/view.h") == {6: "optional feature", 13: "verify on hardware"}
    optional = next(f for f in report["findings"] if f["path"] == "csrc/view.h" and f["line"] == 6)
    assert optional["disposition_note"] == "behind a macro the default build leaves undefined (an opt-in or debug switch)"
    assert _by_line(report, "csrc/ops.cu") == {4: "verify on hardware"}     # NDEBUG is the release build's macro


def test_a_debug_switch_the_build_names_stays_port_work(tmp_path, run_json):
    setup = SETUP.format(extra=', extra_compile_args={"nvcc": ["-DTV_DEBUG"]}')
    repo = write_tree(tmp_path, {"setup.py": setup, "csrc/view.h": HEADER, "csrc/ops.cu": KERNEL})
    _, report = run_json(repo, "--no-cache", "--fail-on", "never")
    assert _by_line(report, "csrc/view.h") == {6: "verify on hardware", 13: "verify on hardware"}


def test_a_debug_switch_a_source_defines_stays_port_work(tmp_path, run_json):
    repo = write_tree(tmp_path, {"setup.py": SETUP.format(extra=""), "csrc/view.h": "#define TV_DEBUG 1\n" + HEADER,
                                 "csrc/ops.cu": KERNEL})
    _, report = run_json(repo, "--no-cache", "--fail-on", "never")
    assert _by_line(report, "csrc/view.h") == {7: "verify on hardware", 14: "verify on hardware"}
