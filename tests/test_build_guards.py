"""CMake and Makefile branches behind a ROCm switch are ROCm paths that already exist."""
from auditor.parsing.buildblocks import excluded_lines
from auditor.rulebook import load_rulebook
from auditor.scan import scan_text_as

PATTERN = load_rulebook().guards["build"]["rocm_condition_pattern"]

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
