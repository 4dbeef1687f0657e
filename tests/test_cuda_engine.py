"""The CUDA engine on real-looking kernels: one finding per asm statement at its instruction's line, subjects."""
from auditor.rulebook import load_rulebook
from auditor.scan import scan_text_as

RULEBOOK = load_rulebook()

KERNEL = r'''
#include <cstdint>

__device__ __forceinline__ uint32_t load_predicated(const uint32_t* src, bool pred) {
  uint32_t value;
  asm volatile(
      "{\n"
      "\t.reg .pred p;\n"
      "\tsetp.ne.b32 p, %2, 0;\n"
      "\tmov.b32 %0, 0;\n"
      "\t@p ld.global.nc.u32 %0, [%1];\n"
      "}\n"
      : "=r"(value)
      : "l"(src), "r"((int)pred));
  return value;
}

__device__ __forceinline__ unsigned lane_id() {
  unsigned lane;
  asm("mov.u32 %0, %%laneid;" : "=r"(lane));
  return lane;
}
'''


def test_each_asm_statement_is_one_finding_at_the_line_of_the_instruction_it_classifies():
    result = scan_text_as("csrc/load.cuh", "cuda", KERNEL, RULEBOOK)
    asm = [(f.span.line, f.rule_id, f.subject) for f in result.findings if f.rule_id.startswith("RA30")]
    assert asm == [(9, "RA300", "setp.ne.b32"), (20, "RA302", "%laneid")]


def test_embedded_cuda_in_python_strings_is_scanned_at_the_string_line():
    code = (
        "import cupy as cp\n"                                   # 1
        "\n"                                                    # 2
        "_SRC = r'''\n"                                         # 3
        "extern \"C\" __global__ void warp_sum(const float* x, float* out) {\n"  # 4
        "  float v = x[threadIdx.x];\n"                         # 5
        "  for (int o = 16; o > 0; o /= 2) v += __shfl_down_sync(0xffffffff, v, o);\n"  # 6
        "  if ((threadIdx.x & 31) == 0) out[threadIdx.x >> 5] = v;\n"  # 7
        "}\n"                                                   # 8
        "'''\n"                                                 # 9
        "warp_sum = cp.RawKernel(_SRC, 'warp_sum')\n"           # 10
    )
    result = scan_text_as("ops/reduce.py", "python", code, RULEBOOK)
    lines = {(f.span.line, f.rule_id) for f in result.findings}
    assert (6, "RA200") in lines and (7, "RA203") in lines
