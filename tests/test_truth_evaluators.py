"""One ROCm-truth evaluator per language (auditor/truth/), on real-looking conditions: true, false or unknown on
a ROCm build, with the switches of the shipped rules/guards.toml."""
from __future__ import annotations

import pytest

from auditor.match.rulebook import load_rulebook
from auditor.truth.cmake import CUDA, OTHER, ROCM, cmake_truth, configuration, evidence_rank, option_switch
from auditor.truth.cpp import condition, evaluate
from auditor.truth.make import compiles_cuda, compiles_for_rocm, make_truth
from auditor.truth.markers import rocm_build_file, rocm_ci, rocm_dispatch

GUARDS = load_rulebook().own_context.guards


@pytest.mark.parametrize(("text", "truth"), [
    ("defined(__HIP_PLATFORM_AMD__)", True),
    ("!defined(USE_ROCM)", False),
    ("defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800", False),
    ("__CUDA_ARCH__ >= CC_TURING", False),                  # an architecture: positive, whatever its value
    ("defined(USE_ROCM) || CUDART_VERSION >= 11000", True),
    ("CUDART_VERSION >= 11000", None),                      # a version check, not a ROCm path
    ("HIP_VERSION >= 50000000", None),                      # defined on ROCm, value unknown
    ("defined(GGML_USE_HIP)", None),                        # the project's own macro: known only from its build
    ("defined(__NVCC__) || defined(__CUDACC_RTC__)", None),
    ("0 /* disabled */", False),
])
def test_preprocessor_condition_on_rocm(text, truth):
    assert evaluate(text, GUARDS.preprocessor)[0] is truth


@pytest.mark.parametrize(("word", "rest", "truth"), [
    ("ifdef", "USE_ROCM", True), ("ifndef", "USE_ROCM", False), ("ifdef", "__CUDA_ARCH__", False),
    ("ifndef", "__HIPCC__", False), ("ifdef", "WITH_FP8", None),
])
def test_preprocessor_ifdef_on_rocm(word, rest, truth):
    assert condition(word, rest, GUARDS.preprocessor)[0] is truth


def test_a_literal_condition_is_told_apart_from_a_macro_test():
    assert evaluate("0", GUARDS.preprocessor) == (False, True)
    assert evaluate("defined(__CUDA_ARCH__)", GUARDS.preprocessor) == (False, False)


@pytest.mark.parametrize(("text", "truth"), [
    ("USE_ROCM", True), ("NOT USE_ROCM", False), ("ROCM_FOUND", True), ('GPU_BACKEND STREQUAL "hip"', True),
    ("USE_CUDA", None),                                      # a CUDA-only project has it too: proves nothing
    ("USE_ROCM AND BUILD_TESTS", None), ('GPU_BACKEND STREQUAL "cuda"', None),
    ("GGML_HIP", True),                                      # a backend option: the build reader's names too
])
def test_cmake_test_on_rocm_for_the_text_rules(text, truth):
    assert cmake_truth(text, GUARDS.build) is truth


@pytest.mark.parametrize(("text", "rocm_vars", "arm"), [
    ("GGML_HIP", {}, ROCM), ("NOT USE_ROCM", {}, CUDA), ("ROCM", {}, ROCM), ("GGML_CUDA", {}, CUDA), ("GGML_SYCL", {}, OTHER),
    ('VLLM_GPU_LANG STREQUAL "CUDA"', {"VLLM_GPU_LANG": "HIP"}, CUDA),
    ('VLLM_GPU_LANG STREQUAL "HIP"', {"VLLM_GPU_LANG": "HIP"}, ROCM),
    ("HAVE_HIPBLASLT", {"HAVE_HIPBLASLT": "ON"}, ROCM),     # set only on a ROCm arm
    ("NOT GGML_CUDA", {}, None), ("BUILD_TESTS", {}, None), ("USE_ROCM OR USE_CUDA", {}, None),
])
def test_cmake_arm_for_the_build_reader(text, rocm_vars, arm):
    assert configuration(text, rocm_vars) == arm


@pytest.mark.parametrize("text", ["USE_ROCM", "NOT USE_ROCM", "GGML_HIP", "ROCM", "HIP_FOUND", 'BACKEND STREQUAL "hip"',
                                  "USE_CUDA", "GGML_SYCL", "BUILD_TESTS"])
def test_the_text_rules_and_the_build_reader_agree_on_cmake_rocm_tests(text):
    """One ROCm test for both (they had diverged, `GGML_HIP` was a ROCm test to the build reader only):
    where the text rules call a test true or false on ROCm, the build reader's arm says the same."""
    truth = cmake_truth(text, GUARDS.build)
    arm = configuration(text, {})
    assert truth is None or arm == (ROCM if truth else CUDA)


def test_cmake_option_a_rocm_user_passes_and_the_evidence_quoted_first():
    assert option_switch('BACKEND STREQUAL "hip"') == "-DBACKEND=hip"
    assert option_switch("GGML_HIP") == "-DGGML_HIP=ON"
    assert option_switch("HIP_FOUND") == ""
    ranks = [evidence_rank(x) for x in ("enable_language(HIP)", "set(CMAKE_HIP_ARCHITECTURES gfx90a)",
                                        "target_link_libraries(x hip::host)")]
    assert ranks == [0, 3, 9]


@pytest.mark.parametrize(("word", "rest", "truth"), [
    ("ifdef", "USE_ROCM", True), ("ifndef", "USE_ROCM", False), ("ifeq", "($(USE_ROCM),1)", True),
    ("ifneq", "($(USE_ROCM),1)", False), ("ifeq", "($(USE_ROCM),)", False), ("ifneq", "($(USE_ROCM),)", True),
    ("ifeq", "($(BACKEND),hip)", True), ("ifeq", "($(USE_CUDA),1)", None), ("ifeq", "($(USE_ROCM),maybe)", None),
])
def test_make_conditional_on_rocm(word, rest, truth):
    assert make_truth(word, rest, GUARDS.build) is truth


def test_make_lines_and_markers():
    assert compiles_cuda("\tnvcc -O3 -c kernel.cu") and not compiles_cuda("\tg++ -c main.cpp")
    assert compiles_for_rocm("\thipcc --offload-arch=gfx942 -c k.hip") and not compiles_for_rocm("\tnvcc -c k.cu")
    assert rocm_build_file("if(USE_ROCM)\n  enable_language(HIP)\n") and not rocm_build_file("project(x CUDA)")
    assert rocm_ci("jobs:\n  test:\n    runs-on: [self-hosted, mi300]\n")
    assert not rocm_ci("jobs:\n  test:\n    runs-on: ubuntu-latest\n    name: label rocm issues\n")
    found = rocm_dispatch("if torch.version.hip:\n    pass\n")
    assert found is not None and found.group(0) == "torch.version.hip"


@pytest.mark.parametrize(("test", "truth"), [
    ('BUILD_TARGET == "rocm"', True), ('BUILD_TARGET != "ROCm"', False), ('BUILD_TARGET == "cuda"', False),
    ('"rocm" in torch.__version__', True), ('"cu" not in torch.__version__', True), ('MODE == "fast"', None),
    ("torch.version.hip is not None", True), ("IS_ROCM and WITH_FP8", None),
])
def test_python_build_test_on_rocm(test, truth):
    """The build reader's Python tests (auditor/model/rocmpath/pytruth.py): names and comparison values from [python]."""
    import ast

    from auditor.model.rocmpath.pytruth import Truth

    assert Truth(set()).of(ast.parse(test, mode="eval").body) is truth
