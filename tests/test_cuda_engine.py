"""The CUDA engine on real-looking kernels: one finding per asm statement, at the statement, showing its
instruction's line; subjects."""
from auditor.match.rulebook import load_rulebook
from auditor.run.scan.file import scan_text_as

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


def test_each_asm_statement_is_one_finding_at_the_statement_showing_the_instruction_it_classifies():
    """A port wraps or replaces the whole statement, so it spans the statement (torchsparse's global_load<16>:
    `asm volatile(` then the PTX lines); the snippet is the instruction that made it PTX."""
    result = scan_text_as("csrc/load.cuh", "cuda", KERNEL, RULEBOOK)
    asm = [(f.span.line, f.span.end_line, f.rule_id, f.subject, f.snippet.strip())
           for f in result.findings if f.rule_id.startswith("RA30")]
    assert asm == [(6, 14, "RA300", "setp.ne.b32", r'"\tsetp.ne.b32 p, %2, 0;\n"'),
                   (20, 20, "RA302", "%laneid", 'asm("mov.u32 %0, %%laneid;" : "=r"(lane));')]


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


def test_hmax2_on_bf16_pairs_compiles_on_hip_and_on_half2_does_not():
    """HIP declares __hmax2/__hmin2 for __hip_bfloat162 only (vLLM's activation_kernels.cu clip())."""
    code = (
        "#include <cuda_bf16.h>\n"                                                            # 1
        "#include <cuda_fp16.h>\n"                                                            # 2
        "__device__ __forceinline__ __nv_bfloat162 clip(__nv_bfloat162 v,\n"                  # 3
        "                                               __nv_bfloat162 mmin,\n"               # 4
        "                                               __nv_bfloat162 mmax) {\n"             # 5
        "  return __hmin2(mmax, __hmax2(v, mmin));\n"                                         # 6
        "}\n"                                                                                 # 7
        "__device__ __forceinline__ __half2 clip(__half2 v, __half2 mmin, __half2 mmax) {\n"  # 8
        "  return __hmin2(mmax, __hmax2(v, mmin));\n"                                         # 9
        "}\n"                                                                                 # 10
        "__global__ void act(const __half2* in, float* out) {\n"                              # 11
        "  __nv_bfloat162 res[2];\n"                                                          # 12
        "  __half2 h = in[0];\n"                                                              # 13
        "  auto m = __hmax2(__habs2(res[0]), __habs2(res[1]));\n"                             # 14
        "  auto n = __hmax2(h, h);\n"                                                         # 15
        "}\n"                                                                                 # 16
    )
    result = scan_text_as("csrc/clip.cu", "cuda", code, RULEBOOK)
    hits = sorted((f.span.line, f.subject) for f in result.findings if f.subject in ("__hmax2", "__hmin2"))
    assert hits == [(9, "__hmax2"), (9, "__hmin2"), (15, "__hmax2")]
