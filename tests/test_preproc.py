"""Which lines a ROCm build compiles: the guard logic behind `guarded: true`."""
import pytest

from auditor.parse.preproc import line_states
from auditor.truth.cpp import PreprocFacts, evaluate
from auditor.match.rulebook import load_rulebook

FACTS = PreprocFacts.from_guards(load_rulebook().guards)


def excluded_lines(code: str) -> set[int]:
    return set(line_states(code, FACTS).excluded)


@pytest.mark.parametrize(
    ("condition", "truth"),
    [
        ("defined(USE_ROCM)", True),
        ("!defined(USE_ROCM)", False),
        ("defined(__HIP_PLATFORM_AMD__) || defined(USE_ROCM)", True),
        ("defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900", False),
        ("__CUDA_ARCH__ >= 800", False),
        ("!defined(__CUDA_ARCH__) || __CUDA_ARCH__ >= 800", True),
        ("defined(MY_FEATURE)", None),
        ("defined(MY_FEATURE) && !defined(USE_ROCM)", False),
        ("CUDA_VERSION >= 12000 && !defined(USE_ROCM)", False),
        ("HIP_VERSION >= 60000000", None),
        ("TORCH_CHECK_VERSION(2, 1)", None),
    ],
)
def test_condition_truth_on_rocm(condition, truth):
    assert evaluate(condition, FACTS)[0] is truth


def test_cuda_side_of_hip_else_is_excluded():
    code = (
        "#if defined(__HIP_PLATFORM_AMD__)\n"   # 1
        "  int lane = __lane_id();\n"            # 2
        "#else\n"                                # 3
        "  asm(\"mov.u32 %0, %%laneid;\");\n"    # 4
        "#endif\n"                               # 5
        "int after = 0;\n"                       # 6
    )
    assert excluded_lines(code) == {4}


def test_ifndef_use_rocm_and_elif_chain():
    code = (
        "#ifndef USE_ROCM\n"                          # 1
        "  cuda_only();\n"                             # 2
        "#endif\n"                                     # 3
        "#if __CUDA_ARCH__ >= 900\n"                   # 4
        "  hopper();\n"                                # 5
        "#elif defined(__HIPCC__)\n"                   # 6
        "  rocm();\n"                                  # 7
        "#else\n"                                      # 8
        "  fallback();\n"                              # 9
        "#endif\n"                                     # 10
    )
    assert excluded_lines(code) == {2, 5, 9}


def test_unknown_conditions_exclude_nothing_and_if0_is_dead():
    code = "#ifndef MY_HEADER_H\n#define MY_HEADER_H\nint x;\n#endif\n#if 0\nold();\n#else\nnew_();\n#endif\n"
    states = line_states(code, FACTS)
    assert states.excluded == frozenset()
    assert states.dead == {6}


def test_macro_defined_only_on_the_cuda_side_guards_its_users():
    code = (
        "#if __CUDA_ARCH__ >= 800\n"        # 1
        "#define PTX_AVAILABLE\n"            # 2
        "#endif\n"                           # 3
        "#ifdef PTX_AVAILABLE\n"             # 4
        "  asm volatile(\"cp.async.cg.shared.global [%0], [%1], 16;\" :: \"r\"(d), \"l\"(s));\n"  # 5
        "#else\n"                            # 6
        "  fallback();\n"                    # 7
        "#endif\n"                           # 8
    )
    states = line_states(code, FACTS)
    assert 5 in states.excluded and 7 not in states.excluded
    assert dict(states.defines) == {"PTX_AVAILABLE": True}


def test_macro_defined_on_both_sides_stays_unknown():
    code = (
        "#ifdef USE_ROCM\n#define WARP 64\n#else\n#define WARP 32\n#endif\n"
        "#ifdef WARP\nint x;\n#endif\n"
    )
    states = line_states(code, FACTS)
    assert 7 not in states.excluded
    assert dict(states.defines) == {"WARP": False}


def test_arithmetic_edge_cases_are_unknown_not_errors():
    assert evaluate("FOO / 0 > 1", FACTS)[0] is None
    assert evaluate("1 / 0", FACTS)[0] is None
    assert evaluate("(1 << 70) > 0", FACTS)[0] is True
    assert evaluate("defined(", FACTS)[0] is None


@pytest.mark.parametrize(
    ("condition", "truth"),
    [
        ("__CUDA_ARCH__ >= CC_TURING", False),          # a CUDA-arch guard whatever the macro's value
        ("defined(__CUDA_ARCH__) && __CUDA_ARCH__ > SM_VOLTA", False),
        ("CUDART_VERSION >= 11000", None),               # a version check, not a ROCm path
        ("__CUDACC_VER_MAJOR__ >= 12", None),
    ],
)
def test_arch_guards_and_version_checks(condition, truth):
    assert evaluate(condition, FACTS)[0] is truth


def test_lines_only_a_rocm_build_compiles_are_written_for_rocm():
    code = (
        "#ifndef USE_ROCM\n"              # 1
        "  a = __shfl_xor_sync(0xffffffff, a, 1);\n"
        "#else\n"
        "  a = __shfl_xor(a, 1);\n"       # 4: the ROCm branch
        "#endif\n"
        "#if defined(__HIP_PLATFORM_AMD__)\n"
        "  b = 64;\n"                     # 7
        "#endif\n"
        "#if !defined(__CUDA_ARCH__)\n"
        "  c = 1;\n"                      # 10: host code of both builds
        "#endif\n"
    )
    states = line_states(code, FACTS)
    assert states.rocm_only == {4, 7}
    assert states.excluded == {2}


def test_a_branch_cuda_never_compiles_is_rocm_code_even_when_rocm_may_skip_it():
    code = (
        "#if defined(USE_ROCM) && defined(__gfx942__)\n"     # 1: ROCm maybe, CUDA never
        "  a = __shfl_xor(a, 1);\n"                           # 2
        "#elif defined(USE_ROCM) || defined(FAST)\n"
        "  b = __shfl_xor(b, 1);\n"                           # 4: a CUDA build with FAST compiles it
        "#endif\n"
    )
    states = line_states(code, FACTS)
    assert states.rocm_only == {2}
    assert states.excluded == set() and states.dead == set()


def test_warp_size_rules_drop_on_a_rocm_only_branch_and_a_64_bit_mask_is_not_32_bit():
    from auditor.run.scan.file import scan_text_as

    code = (
        "__device__ float f(float v) {\n"
        "#ifndef USE_ROCM\n"
        "  v += __shfl_xor_sync(0xffffffff, v, 1);\n"    # 3: CUDA side, guarded
        "#else\n"
        "  v += __shfl_xor(v, 1);\n"                     # 5: legacy shuffle on the HIP branch is HIP code
        "  int lane = threadIdx.x % 32;\n"               # 6
        "#endif\n"
        "  v += __shfl_xor_sync(0xffffffffffffffffull, v, 1);\n"   # 8: a 64-bit mask
        "  return v;\n"
        "}\n"
    )
    result = scan_text_as("k.cu", "cuda", code, load_rulebook())
    assert [(f.span.line, f.rule_id, f.guarded) for f in result.findings] == [(3, "RA200", True)]


def test_a_define_too_long_to_be_a_number_is_no_value_and_no_crash():
    """A ROCm-side `#define` of thousands of digits (over Python's int-conversion limit) is not taken as a value;
    it used to raise ValueError, an internal error for the file."""
    code = "#ifdef USE_ROCM\n#define WIDE " + "1" * 5000 + "\n#define WARP 64\n#endif\n#if WARP == 64\nint a;\n#endif\n"
    states = line_states(code, FACTS)
    assert dict(states.rocm_values) == {"WARP": 64}
    assert 6 not in states.excluded


# torchsparse's implicit-GEMM kernels: the tensor-core PTX sits under __CUDA_ARCH__ tests whose #else only
# prints a notice, so a ROCm build compiles nothing there
HOLLOW_ELSE = """__device__ void step(unsigned* a, float* c) {
#if __CUDA_ARCH__ >= 800
  asm volatile("mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {%0}, {%1};" : "=f"(c[0]) : "r"(a[0]));
#elif __CUDA_ARCH__ >= 750
  asm volatile("mma.sync.aligned.m16n8k8.row.col.f32.f16.f16.f32 {%0}, {%1};" : "=f"(c[0]) : "r"(a[0]));
#else
  #pragma message("FP16 kernels will not be compiled for SM75-.")
#endif
}
"""


def test_a_cuda_arch_branch_whose_else_only_prints_a_notice_is_not_guarded():
    assert excluded_lines(HOLLOW_ELSE) == set()


def test_a_cuda_arch_branch_with_real_code_or_no_else_stays_guarded():
    with_fallback = HOLLOW_ELSE.replace('  #pragma message("FP16 kernels will not be compiled for SM75-.")',
                                        "  c[0] = __half2float(a[0]);")
    assert excluded_lines(with_fallback) == {3, 5}
    no_else = "#if __CUDA_ARCH__ >= 800\n  asm volatile(\"mma.sync\");\n#endif\n"
    assert excluded_lines(no_else) == {2}


def test_a_notice_else_after_a_branch_a_rocm_build_takes_leaves_the_cuda_branch_guarded():
    # `#if CUDA ... #elif <unknown, the HIP build's macro> ... #else #error`: the ROCm build takes the #elif
    chooser = ("#if defined(__CUDA_ARCH__)\n#include \"cuda/config.hpp\"\n#elif defined(COMPILING_HIP)\n"
               "#include \"hip/config.hpp\"\n#else\n#error \"no device\"\n#endif\n")
    assert excluded_lines(chooser) == {2}


def test_a_switch_defined_with_no_value_on_a_branch_rocm_takes_is_defined_there():
    """`#define LIB_DEVICE_HIP` under `#if defined(__HIP_PLATFORM_AMD__)`, inside an include guard: the ROCm build
    sees the switch defined, so the header's own `#if !defined(LIB_DEVICE_HIP)` branch is CUDA's."""
    code = ("#ifndef LIB_DEVICE_HPP_\n#define LIB_DEVICE_HPP_\n"
            "#if defined(__HIP_PLATFORM_AMD__)\n#define LIB_DEVICE_HIP\n#endif\n"
            "#if !defined(LIB_DEVICE_HIP)\nint cuda_only;\n#else\n#define FEATURE_AVAILABLE 0\n#endif\n"
            "#define LIB_VERSION 3\n"
            "#endif\n")
    states = line_states(code, FACTS)
    assert dict(states.rocm_values) == {"LIB_DEVICE_HIP": 1, "FEATURE_AVAILABLE": 0}
    assert 7 in states.excluded
    # a value every build defines the same (only the include guard around it) says nothing about ROCm
    assert "LIB_VERSION" not in dict(states.rocm_values)


def test_an_unknown_switch_is_no_include_guard_unless_it_defines_itself():
    code = "#ifndef MY_FEATURE\n#define OTHER 1\n#endif\n"
    assert dict(line_states(code, FACTS).rocm_values) == {}
