"""CMake and Makefile branches behind a ROCm switch are ROCm paths that already exist."""
from auditor.parse.buildblocks import excluded_lines
from auditor.match.rulebook import load_rulebook
from auditor.run.scan.file import scan_text_as

PATTERN = load_rulebook().own_context.guards.build   # the text rules' [build] tests

CMAKE = """cmake_minimum_required(VERSION 3.24)
project(kernels LANGUAGES CXX)
option(USE_ROCM "Build for AMD GPUs" OFF)
if(USE_ROCM)
  enable_language(HIP)
  find_package(hip REQUIRED)
else()
  enable_language(CUDA)
  find_package(CUDAToolkit REQUIRED)
  set(CMAKE_CUDA_ARCHITECTURES 80 90)
endif()
if(NOT USE_ROCM)
  target_link_libraries(kernels PRIVATE CUDA::cublasLt)
endif()
if(BUILD_TESTS)
  enable_language(CUDA)
endif()
"""


def test_cmake_cuda_side_of_use_rocm_is_excluded():
    assert excluded_lines("CMakeLists.txt", CMAKE, PATTERN) == {8, 9, 10, 13}


def test_cmake_findings_on_the_cuda_side_are_guarded():
    result = scan_text_as("CMakeLists.txt", "build", CMAKE, load_rulebook())
    by_line = {(f.span.line, f.guarded) for f in result.findings}
    assert (8, True) in by_line and (9, True) in by_line and (13, True) in by_line
    assert (16, False) in by_line  # an unrelated switch proves nothing


def test_makefile_ifdef_and_ifeq():
    make = (
        "ifdef USE_ROCM\n"                 # 1
        "CC = hipcc\n"                     # 2
        "else\n"                           # 3
        "CC = nvcc\n"                      # 4
        "endif\n"                          # 5
        "ifeq ($(USE_ROCM),1)\n"           # 6
        "FLAGS = --offload-arch=gfx942\n"  # 7
        "else\n"                           # 8
        "FLAGS = -gencode arch=compute_90a,code=sm_90a\n"  # 9
        "endif\n"
    )
    assert excluded_lines("Makefile", make, PATTERN) == {4, 9}


def test_the_first_arm_of_if_build_cuda_elseif_build_hip_is_the_cuda_branch(tmp_path, run_json):
    """Issue 13 item 18: `if(BUILD_CUDA) … elseif(BUILD_HIP)`: BUILD_CUDA names no ROCm switch, yet the arm
    before a ROCm arm is what the CUDA configuration runs; `if(NOT BUILD_HIP)` is guarded outright."""
    (tmp_path / "CMakeLists.txt").write_text(
        "cmake_minimum_required(VERSION 3.22)\n"
        "project(kern LANGUAGES CXX)\n"
        "if(BUILD_CUDA)\n"
        "  enable_language(CUDA)\n"                                  # 4
        "  set(CMAKE_CUDA_ARCHITECTURES 80 90)\n"                    # 5
        "elseif(BUILD_HIP)\n"
        "  enable_language(HIP)\n"
        "endif()\n"
        "if(NOT BUILD_HIP)\n"
        "  set(CMAKE_CUDA_ARCHITECTURES 75)\n"                       # 10
        "endif()\n"
        "set(CMAKE_CUDA_ARCHITECTURES 86)\n")                        # 12: both configurations
    _, report = run_json(tmp_path, "--fail-on", "never")
    by_line = {f["line"]: (f["disposition"], f["guarded"]) for f in report["findings"] if f["rule"] == "RA603"}
    assert by_line[5] == ("CUDA branch of a build script", False)
    assert by_line[10] == ("guarded", True)
    assert by_line[12][1] is False and by_line[12][0] != "guarded"


def test_a_cuda_version_check_is_not_a_rocm_path_and_an_arch_macro_comparison_is():
    """`#if CUDART_VERSION >= 12000` is compiled by a ROCm build that defines it (hipify maps it), so what it
    guards stays unguarded; `#if __CUDA_ARCH__ >= CC_TURING` is never true on ROCm."""
    code = (
        "#if CUDART_VERSION >= 12000\n"
        "__device__ float f(float v) { return __shfl_xor_sync(0xffffffff, v, 1); }\n"   # 2
        "#endif\n"
        "#if __CUDACC_VER_MAJOR__ >= 12\n"
        "__device__ float g(float v) { return __shfl_xor_sync(0xffffffff, v, 1); }\n"   # 5
        "#endif\n"
        "#if __CUDA_ARCH__ >= CC_TURING\n"
        "__device__ float h(float v) { return __shfl_xor_sync(0xffffffff, v, 1); }\n"   # 8
        "#endif\n"
    )
    result = scan_text_as("k.cu", "cuda", code, load_rulebook())
    assert [(f.span.line, f.guarded) for f in result.findings if f.rule_id == "RA200"] == \
        [(2, False), (5, False), (8, True)]
