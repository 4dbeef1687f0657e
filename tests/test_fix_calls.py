"""Which definition a call reaches, per translation unit: overloads told apart by their number of parameters, and
a function template's width or offset judged with the template argument each call gives (an identifier the file
defines, or the parameter's default). A mask is refused only where a call that reaches its function is
lane-limited, and a second reduction stage in a template is fixed where every call keeps it in a 32-lane group."""
from __future__ import annotations

import pytest

from tests.conftest import write_tree
from tests.test_fix_rightness import _fix

pytestmark = pytest.mark.slow

OVERLOADS = """#include <cuda_runtime.h>
__device__ float warp_sum(float v) {
  return v + __shfl_down_sync(0xffffffff, v, 1);
}
__device__ float warp_sum(float v, int n, int step = 1) {
  for (int i = 0; i < n; ++i) v += __shfl_down_sync(0xffffffff, v, step);
  return v;
}
__global__ void k(float* out, int n) {
  out[threadIdx.x] = warp_sum(out[threadIdx.x]);
  if (threadIdx.x < 5) out[0] = warp_sum(out[0], n);
}
"""


def test_an_overload_with_another_parameter_count_is_judged_by_its_own_calls(tmp_path, capsys):
    root = write_tree(tmp_path / "repo", {"k.cu": OVERLOADS})
    _fix(root)
    fixed = (root / "k.cu").read_text().splitlines()
    out = capsys.readouterr().out
    assert fixed[fixed.index("__device__ float warp_sum(float v) {") + 1] == \
        "  return v + __shfl_down_sync(ROCM_AUDIT_FULL_MASK, v, 1);"          # every lane calls the one-argument one
    assert "  for (int i = 0; i < n; ++i) v += __shfl_down_sync(0xffffffff, v, step);" in fixed
    assert "k.cu:6: RA200 lane-limited code" in out and "k.cu:3: RA200" not in out


@pytest.mark.parametrize("call, fixed_one", [
    ("warp_sum(out[0], n)", True),           # two arguments: the overload with a default parameter is limited
    ("warp_sum(out[0], n, 2)", True),
    ("warp_sum(out[0])", False),             # the one-argument overload is limited, the other one is not
], ids=["two", "three", "one"])
def test_a_header_overload_is_refused_only_for_the_calls_that_reach_it(tmp_path, capsys, call, fixed_one):
    header = OVERLOADS.split("__global__")[0]
    unit = ('#include "reduce.cuh"\n__global__ void k(float* out, int n) {\n  out[threadIdx.x] = '
            'warp_sum(out[threadIdx.x]) + warp_sum(out[0], n);\n}\n')
    other = f'#include "reduce.cuh"\n__global__ void g(float* out, int n) {{\n  if (threadIdx.x < 5) out[0] = {call};\n}}\n'
    root = write_tree(tmp_path / "repo", {"reduce.cuh": header, "a.cu": unit, "b.cu": other})
    _fix(root)
    text = (root / "reduce.cuh").read_text()
    assert ("return v + __shfl_down_sync(ROCM_AUDIT_FULL_MASK, v, 1);" in text) is fixed_one
    assert ("v += __shfl_down_sync(ROCM_AUDIT_FULL_MASK, v, step);" in text) is not fixed_one


TEMPLATE_STAGES = """#include <cuda_runtime.h>
#define HALF_WARP 16
constexpr int kGroup = 8;
template <int W = HALF_WARP>
__device__ float group_sum(float v) {
  for (int offset = W / 2; offset > 0; offset >>= 1) v += __shfl_xor_sync(0xffffffff, v, offset);
  return v;
}
template <int W>
__device__ float group_max(float v) {
  return fmaxf(v, __shfl_down_sync(0xffffffff, v, 1, W));
}
__global__ void block_sum(const float* in, float* out) {
  __shared__ float shared[32];
  int warp_id = threadIdx.x / 32;
  float v = group_sum<HALF_WARP>(in[threadIdx.x]) + group_max<kGroup>(in[threadIdx.x]);
  if (threadIdx.x % 32 == 0) shared[warp_id] = v;
  __syncthreads();
  if (warp_id == 0) {
    v = group_sum(shared[threadIdx.x]) + group_sum<2 * kGroup>(v);
    v = group_max<CALL_WIDTH>(v);
  }
  out[threadIdx.x] = v;
}
"""


@pytest.mark.parametrize("width, fixed", [("32", True), ("HALF_WARP", True), ("64", False), ("n_lanes", False)])
def test_a_template_stage_is_judged_with_the_arguments_its_calls_give(tmp_path, capsys, width, fixed):
    """Under `if (warp_id == 0)` the exchange must stay in a 32-lane group at every call: `W / 2` with W = 16
    (an identifier the file defines, the default, `2 * kGroup`) starts from 8; a width of 64, or one this file
    does not define, leaves the mask for a person."""
    root = write_tree(tmp_path / "repo", {"k.cu": TEMPLATE_STAGES.replace("CALL_WIDTH", width)})
    _fix(root)
    text = (root / "k.cu").read_text()
    out = capsys.readouterr().out
    assert "v += __shfl_xor_sync(ROCM_AUDIT_FULL_MASK, v, offset)" in text
    assert ("__shfl_down_sync(ROCM_AUDIT_FULL_MASK, v, 1, W)" in text) is fixed
    assert ("k.cu:11: RA200 lane-limited code" in out) is not fixed


def test_a_template_stage_with_a_call_beyond_one_group_is_left(tmp_path, capsys):
    root = write_tree(tmp_path / "repo", {"k.cu": TEMPLATE_STAGES.replace("CALL_WIDTH", "32").replace(
        "group_sum<2 * kGroup>(v)", "group_sum<64>(v)")})
    _fix(root)
    assert "__shfl_xor_sync(0xffffffff, v, offset)" in (root / "k.cu").read_text()
    assert "k.cu:6: RA200 lane-limited code" in capsys.readouterr().out


def test_a_call_reaches_the_definition_in_its_own_file_not_another_programs(tmp_path, capsys):
    """A kernel collection: each program (.cu) defines its own `warpReduceSum`; one program calls its copy from
    lane-limited code. The others' copies are judged by their own calls; a file that only declares the helper
    (a prototype) still reaches another file's definition."""
    helper = "__device__ float warpReduceSum(float v) {\n  return v + __shfl_down_sync(0xffffffff, v, 1);\n}\n"
    limited = helper + "__global__ void a(float* o) {\n  if (threadIdx.x < 5) o[0] = warpReduceSum(o[0]);\n}\n"
    full = helper + "__global__ void b(float* o) { o[threadIdx.x] = warpReduceSum(o[threadIdx.x]); }\n"
    declared = ("__device__ float warpReduceSum(float v);\n"
                "__global__ void c(float* o) {\n  if (threadIdx.x < 5) o[0] = warpReduceSum(o[0]);\n}\n")
    root = write_tree(tmp_path / "repo", {"limited/main.cu": limited, "full/main.cu": full})
    _fix(root)
    assert "__shfl_down_sync(ROCM_AUDIT_FULL_MASK, v, 1)" in (root / "full/main.cu").read_text()
    assert "__shfl_down_sync(0xffffffff, v, 1)" in (root / "limited/main.cu").read_text()
    root2 = write_tree(tmp_path / "repo2", {"full/main.cu": full, "rdc/caller.cu": declared})
    _fix(root2)
    assert "__shfl_down_sync(0xffffffff, v, 1)" in (root2 / "full/main.cu").read_text()
    assert "warpReduceSum is called from lane-limited code (rdc/caller.cu" in capsys.readouterr().out


FIRST_LANE = """#include <cuda_runtime.h>
#define WARP_SIZE 32
template <unsigned int W>
__device__ float warpReduceSum(float sum) {
  if (W >= 32) sum += __shfl_down_sync(0xffffffff, sum, 16);
  if (W >= 16) sum += __shfl_down_sync(0xffffffff, sum, 8);
  if (W >= 8) sum += __shfl_down_sync(0xffffffff, sum, 4);
  if (W >= 4) sum += __shfl_down_sync(0xffffffff, sum, 2);
  if (W >= 2) sum += __shfl_down_sync(0xffffffff, sum, 1);
  return sum;
}
__global__ void gemv(const float* a, const float* x, float* y, int m, int n) {
  int tx = threadIdx.x;
  int laneId = tx % WARP_SIZE;
  int row = blockDim.y * blockIdx.x + threadIdx.y;
  if (row < m) {
    float res = 0;
    for (int i = laneId; i < n; i += WARP_SIZE) res += a[row * n + i] * x[i];
    res = warpReduceSum<WARP_SIZE>(res);
    if (READ) y[row] = res;
  }
}
__global__ void block_sum(const float* in, float* out) {
  __shared__ float partial[32];
  int tid = threadIdx.x;
  int lane = tid & 31, warp = tid / 32;
  float sum = in[blockIdx.x * blockDim.x + tid];
  sum = warpReduceSum<32>(sum);
  if (lane == 0) partial[warp] = sum;
  __syncthreads();
  sum = (tid < blockDim.x / 32) ? partial[lane] : 0.f;
  if (warp == 0) sum = warpReduceSum<32>(sum);
  if (tid == 0) out[blockIdx.x] = sum;
}
"""


@pytest.mark.parametrize("read, fixed", [("laneId == 0", True), ("tx % 64 == 0 && row < m", True),
                                         ("laneId % 16 == 0", False), ("true", False)],
                         ids=["lane-0", "conjunct", "half-warp-lanes", "every-lane"])
def test_a_down_shuffle_reduction_read_only_at_first_lanes_is_fixed_under_any_condition(tmp_path, capsys, read, fixed):
    """On NVIDIA a full mask means whole 32-lane warps run the call (a row condition, `warp == 0`); on AMD each is
    a half wavefront that `__activemask()` names, and lane 0's down-shuffle chain (16 + 8 + 4 + 2 + 1) reads only its
    own half. Read anywhere but at a first lane, the other lanes' values differ: left for a person."""
    root = write_tree(tmp_path / "repo", {"k.cu": FIRST_LANE.replace("READ", read)})
    _fix(root)
    text = (root / "k.cu").read_text()
    out = capsys.readouterr().out
    assert ("sum += __shfl_down_sync(ROCM_AUDIT_FULL_MASK, sum, 16);" in text) is fixed
    assert ("k.cu:5: RA200 lane-limited code" in out) is not fixed


@pytest.mark.parametrize("hip_value, fixed", [(None, True), ("64", False)], ids=["one-value", "hip-branch"])
def test_a_lane_id_counted_with_a_constant_of_the_projects_header_is_read(tmp_path, capsys, hip_value, fixed):
    """`lane = threadIdx.x % WARP_SIZE` with WARP_SIZE defined in an included header: the project's one value is
    used; a name the project defines differently elsewhere (64 in a HIP branch) is not known, and nothing is fixed."""
    header = "#pragma once\n#define WARP_SIZE 32\n"
    if hip_value:
        header = f"#pragma once\n#ifdef __HIP_PLATFORM_AMD__\n#define WARP_SIZE {hip_value}\n#else\n#define WARP_SIZE 32\n#endif\n"
    unit = '#include "common.cuh"\n' + FIRST_LANE.replace("#define WARP_SIZE 32\n", "").replace("READ", "laneId == 0")
    root = write_tree(tmp_path / "repo", {"common.cuh": header, "k.cu": unit.replace("warpReduceSum<32>",
                                                                                      "warpReduceSum<WARP_SIZE>")})
    _fix(root)
    assert ("sum += __shfl_down_sync(ROCM_AUDIT_FULL_MASK, sum, 16);" in (root / "k.cu").read_text()) is fixed
