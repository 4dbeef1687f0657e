"""Files that tree-sitter-cuda read only in part: each macro shape that made real trees (apex, flash-attention,
DeepSpeed) parse in part is read now, with every position kept; code that is really broken is still partial,
and says which lines were not scanned."""

import pytest

from auditor.parse import cuda
from auditor.parse.macroshapes import blank_macro_shapes
from tests.conftest import write_tree

SHUFFLE = "__shfl_xor_sync(0xffffffff, v, 1)"   # RA200 flags the 32-bit mask: the finding must survive the shape

SHAPES = {
    "statement macro without a semicolon": (
        "#define DEFINE_KERNEL(N) __global__ void k##N(float *p) { p[0] = N; }\n"
        "DEFINE_KERNEL(10)\nDEFINE_KERNEL(20)\n"
        f"__device__ float f(float v) {{ return {SHUFFLE}; }}\n"),
    "dispatch macro whose arguments are statements": (
        "void launch(at::Tensor t, float v) {\n"
        "  DISPATCH_FLOAT_AND_HALF(t.scalar_type(), 0, \"adam\",\n"
        "    using acc_t = at::acc_type<scalar_t_0, true>;\n"
        f"    float w = {SHUFFLE};\n"
        "    kernel<scalar_t_0, acc_t><<<1, 32>>>(t.data_ptr<scalar_t_0>(), w););\n}\n"),
    "nested dispatch macros with template arguments": (
        "void launch(at::Tensor t, float v) {\n"
        "  DISPATCH_OUTER(t.scalar_type(), \"outer\", DISPATCH_INNER(t.scalar_type(), \"inner\",\n"
        f"    run<scalar_t, float, int>(t, {SHUFFLE});));\n}}\n"),
    "specifier macro before a declaration": (
        "#define DEVICE_FUNCTION static inline __device__\n"
        "template <int N>\nDEVICE_FUNCTION void to_float(float (&dst)[N], float (&src)[N]) { dst[0] = src[0]; }\n"
        f"DEVICE_FUNCTION float g(float v) {{ return {SHUFFLE}; }}\n"),
    "launch-bounds macro between the type and the name": (
        f"__global__ void C10_LAUNCH_BOUNDS_1(256) kernel(float *p, float v) {{ p[0] = {SHUFFLE}; }}\n"),
    "specifier or pragma macro alone on its line": (
        "struct It {\n  CUTLASS_HOST_DEVICE\n  void add(int i) {\n    CUTLASS_PRAGMA_UNROLL\n"
        "    for (int c = 0; c < 4; ++c) { i += c; }\n  }\n};\n"
        f"CUTLASS_DEVICE\nfloat h(float v) {{ return {SHUFFLE}; }}\n"),
    "qualifier macro in a declarator": (
        "float dot(int n, const float * GGML_RESTRICT x, float v) {\n"
        f"  const float * GGML_RESTRICT y = x; return y[0] + {SHUFFLE};\n}}\n"),
    "statement macro whose first argument is a type": (
        f"float locals(float v) {{\n  GGML_TENSOR_LOCALS(int32_t, ne0, op->src[0], ne);\n  return {SHUFFLE};\n}}\n"),
    "comma expression in a parenthesized argument": (
        f"float cl(float v) {{\n  CL_CHECK((k = clCreateKernel(p, \"k\", &err), err));\n  return {SHUFFLE};\n}}\n"),
    "words of other toolchains (SYCL's dpct, AltiVec, extern before a declaring macro)": (
        "extern DECL_FATTN_CASE(512, 8);\nstatic __dpct_inline__ float q(float v) { return v; }\n"
        f"static NOINLINE float r(float v) {{ return {SHUFFLE}; }}\n"),
    # the shapes below made 45 of ggml's 971 files parse in part
    "format macros joined to string literals (ggml-rpc, gguf, ggml-opencl)": (
        "float report(float v, int64_t n) {\n"
        "  GGML_LOG_ERROR(\"%s: size %\" PRIu64 \" too big for \" GGML_CUDA_NAME \"\\n\", __func__, n);\n"
        f"  printf(\"%\" PRId64, n);\n  return {SHUFFLE};\n}}\n"),
    "export macros before struct and enum, in a class head, a member macro (ggml.h, OpenVINO)": (
        "extern \"C\" GGML_API void ggml_free(void * p);\n"
        "GGML_API struct ggml_tensor * ggml_new_i32(struct ggml_context * ctx, int32_t value);\n"
        "GGML_API enum ggml_status     ggml_compute(struct ggml_cgraph * g);\n"
        "class OPENVINO_API GatedDeltaNet : public ov::op::Op {\npublic:\n"
        "    OPENVINO_OP(\"GatedDeltaNet\")\n    GatedDeltaNet();\n};\n"
        f"__device__ float g(float v) {{ return {SHUFFLE}; }}\n"),
    "attributes after an array declarator, as a vector alias's type, after struct (Hexagon, wasm, mma.cuh)": (
        "using halfx8_t = __attribute__((ext_vector_type(8))) _Float16;\n"
        "struct __builtin_align__(32) float8 { float x[8]; };\n"
        "float sum(float v) {\n  float local[32] __attribute__((aligned(128)));\n"
        "  static const float ones[8]\n      __attribute__((aligned(32))) = { 1.f };\n"
        f"  return local[0] + ones[0] + {SHUFFLE};\n}}\n"),
    "__has_include of an angle-bracket header (SYCL, ggml-et)": (
        "#if defined(__INTEL_LLVM_COMPILER) && __has_include(<sycl/ext/oneapi/bfloat16.hpp>)\n"
        "#include <sycl/ext/oneapi/bfloat16.hpp>\n#endif\n"
        f"__device__ float g(float v) {{ return {SHUFFLE}; }}\n"),
    "alignment macro in a field, extended device lambda, locals macro before a comment (ggml-cpu, fattn)": (
        "struct state {\n    atomic_int GGML_CACHE_ALIGN n_barrier;\n    SPINE_CACHE_ALIGN std::atomic<int64_t> p;\n};\n"
        "__device__ float g(float *p, float v) {\n    GGML_TENSOR_UNARY_OP_LOCALS\n\n    // per row\n"
        f"    auto load = [&] __device__ (int n) {{ p[n] = {SHUFFLE}; }};\n    load(0);\n    return p[0];\n}}\n"),
}


@pytest.mark.slow
@pytest.mark.parametrize("shape", sorted(SHAPES))
def test_each_macro_shape_parses_whole_and_keeps_its_findings(shape, tmp_path, run_json):
    source = SHAPES[shape]
    assert cuda.parse(source.encode()).partial is False
    write_tree(tmp_path, {"k.cu": source})
    data = run_json(tmp_path)[1]
    assert data["summary"]["files_partial"] == 0 and data["partial"] == []
    line = next(n for n, text in enumerate(source.splitlines(), 1) if SHUFFLE in text)
    assert ("RA200", "k.cu", line) in {(f["rule"], f["path"], f["line"]) for f in data["findings"]}


@pytest.mark.parametrize("source", sorted(SHAPES.values()))
def test_blanking_keeps_every_byte_position_and_line(source):
    data = source.encode()
    blanked = blank_macro_shapes(data)
    assert len(blanked) == len(data)
    assert [i for i, b in enumerate(blanked) if b == 0x0A] == [i for i, b in enumerate(data) if b == 0x0A]
    assert b"__shfl_xor_sync(0xffffffff" in blanked          # what the rules match on is never blanked
    assert blanked.count(b"__global__") == data.count(b"__global__")


def test_macro_definitions_and_plain_calls_are_left_alone():
    source = (b'#define CHECK_CUDA(x) TORCH_CHECK(x.is_cuda(), #x " must be a CUDA tensor")\n'
              b"DTYPE f(int x);\nvoid g() { CHECK_CUDA(t); TORCH_CHECK(a, \"b; c\"); }\n"
              b'DTYPE value;\nextern "C" int h(void);\nvoid k() { printf("%s", STRINGIFY(x)); CHECK(f(\"s\")) }\n')
    assert blank_macro_shapes(source) == source


def test_really_broken_code_is_still_partial_and_says_which_lines(tmp_path, run_json):
    source = "__device__ int ok() { return 1; }\nint broken( { ;;; }}}\n__device__ int w() { return warpSize; }\n"
    tree = cuda.parse(source.encode())
    assert tree.partial and tree.lost_lines()[0][0] == 2
    write_tree(tmp_path, {"k.cu": source})
    data = run_json(tmp_path)[1]
    assert data["summary"]["files_partial"] == 1
    assert data["partial"][0]["reason"].startswith("syntax errors on line")
    assert " 2" in data["partial"][0]["reason"] and "not scanned" in data["partial"][0]["reason"]
