"""A constant's definition is as guarded as its uses: mmcv's `carafe_cuda_kernel.cuh` defines `FULL_MASK
0xffffffff` and uses it only in the `#else` of `#ifdef MMCV_WITH_HIP` (a macro its setup.py defines on ROCm), so a
ROCm build never reads it; `WARP_SIZE 32`, used in an unguarded loop too, stays port work."""
from tests.conftest import write_tree

SETUP = """import torch
from setuptools import setup
from torch.utils.cpp_extension import BuildExtension, CUDAExtension

define_macros = []
if torch.version.hip is not None:
    define_macros += [("MMCV_WITH_HIP", None)]
setup(name="ops", ext_modules=[CUDAExtension("ops._ext", ["csrc/ops.cu"], define_macros=define_macros)],
      cmdclass={"build_ext": BuildExtension})
"""
HEADER = """#pragma once
#define WARP_SIZE 32
#define FULL_MASK 0xffffffff

__device__ float warp_sum(float val, int channels, const float* x) {
  for (int c = threadIdx.x; c < channels; c += WARP_SIZE) val += x[c];
  for (int offset = 16; offset > 0; offset /= 2)
#ifdef MMCV_WITH_HIP
    val += __shfl_down(val, offset);
#else
    val += __shfl_down_sync(FULL_MASK, val, offset);
#endif
  return val;
}
"""
KERNEL = '#include "reduce.cuh"\n__global__ void k(float* out, const float* x, int n) { out[0] = warp_sum(0, n, x); }\n'


def _definitions(report: dict) -> dict[tuple[str, int], tuple[str, bool]]:
    return {(f["rule"], f["line"]): (f["disposition"], f["guarded"]) for f in report["findings"]
            if f["path"] == "csrc/reduce.cuh" and f["rule"] in ("RA201", "RA205")}


def test_a_mask_used_only_on_the_cuda_branch_is_guarded_and_a_warp_size_used_elsewhere_is_not(tmp_path, run_json):
    repo = write_tree(tmp_path, {"setup.py": SETUP, "csrc/reduce.cuh": HEADER, "csrc/ops.cu": KERNEL})
    _, report = run_json(repo, "--no-cache", "--fail-on", "never")
    found = _definitions(report)
    assert found[("RA201", 3)] == ("guarded", True)
    assert found[("RA205", 2)][1] is False


def test_a_mask_also_used_outside_the_guard_stays_port_work(tmp_path, run_json):
    header = HEADER.replace("  return val;", "  val += __shfl_xor_sync(FULL_MASK, val, 1);\n  return val;")
    repo = write_tree(tmp_path, {"setup.py": SETUP, "csrc/reduce.cuh": header, "csrc/ops.cu": KERNEL})
    _, report = run_json(repo, "--no-cache", "--fail-on", "never")
    assert _definitions(report)[("RA201", 3)][1] is False


def test_a_mask_the_file_never_uses_keeps_its_finding(tmp_path, run_json):
    header = "#pragma once\n#define FULL_MASK 0xffffffff\n"
    repo = write_tree(tmp_path, {"setup.py": SETUP, "csrc/reduce.cuh": header, "csrc/ops.cu": KERNEL})
    _, report = run_json(repo, "--no-cache", "--fail-on", "never")
    assert _definitions(report)[("RA201", 2)][1] is False
